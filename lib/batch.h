/* batch.h - the JSON face of `shellgate check --batch` and `check --json`
 * (docs/library.md "The API" lists its keys): one input line to a request, one decision to the
 * object printed for it -- written here and nowhere else (sg_batch_write; the
 * face's sg_result_json is this writer too) -- and the block reader/writer the
 * batch loop runs on.  Shared by the face (lib/check.c) and fuzz/fuzz_batch.c, so
 * the fuzzer runs the code users run.
 *
 * Two ways to read, one answer: a request in the common shape (an object of "cmd"
 * and "cwd" strings without \u escapes) is read in place, without a tree; any
 * other line goes to cJSON, which also words every error.  Answers are written
 * straight into a byte buffer, byte for byte as cJSON would print the object
 * (tests/test_batch.c holds the writer to a cJSON tree built on its own).
 *
 * Ownership: a request's strings live in the line it was parsed from (the fast
 * path decodes them in place) or in its JSON tree, until sg_batch_req_free and
 * as long as the line. */
#ifndef SG_BATCH_H
#define SG_BATCH_H
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "runtime/eval.h"

#define SG_BATCH_MAX_ROOTS 64

typedef struct sg_batch_req {
    cJSON *json;                            /* owns the strings below; NULL when the
                                             * fast path read them in the line */
    const char *cmd;
    size_t cmd_len;                         /* strlen(cmd) */
    const char *cwd;                        /* NULL: not given */
    const char *roots[SG_BATCH_MAX_ROOTS];
    size_t nroots;                          /* 0: not given */
    int fast;                               /* 1: read without cJSON */
} sg_batch_req;

/* Parse line[0..n) (no line ending); the bytes of line may be rewritten (strings
 * decoded in place).  Returns NULL with *req filled, or the message for the deny
 * line to print instead (nothing to free then). */
const char *sg_batch_parse(char *line, size_t n, sg_batch_req *req);
/* The same through cJSON alone, line untouched: the reference for the fast path. */
const char *sg_batch_parse_cjson(const char *line, size_t n, sg_batch_req *req);
void sg_batch_req_free(sg_batch_req *req);

/* The verdict as printed: the decision after admission, and what admission added. */
typedef struct sg_batch_out {
    uint32_t decision;
    const char *rule, *message, *hint;
    int rate_limited;
    double wait_s;
    const char *approval_id;                /* NULL or "": none */
    const char *approved;                   /* scope name, or NULL */
    const char *error;                      /* NULL: none */
} sg_batch_out;

/* A growing byte buffer (sg_malloc'd). */
typedef struct sg_batch_buf {
    char *s;
    size_t len, cap;
} sg_batch_buf;

/* What is printed for a line when memory runs out, line ending included. */
#define SG_BATCH_OOM_LINE "{\"decision\":\"deny\",\"error\":\"out of memory\"}\n"

/* Append the answer to a line -- {"decision", "rule", "message", "hint",
 * "segments": [{"argv", "decision", "rule", "nested"?, "dynamic"?}...],
 * "rate_limited", "wait_time_seconds", "approval_id"?, "approved"?, "error"?}, as
 * cJSON_PrintUnformatted prints it -- and "\n" to b, for the verdict v on the
 * command r decided under table t.  0, or -1 when memory runs out (b as it was). */
int sg_batch_write(sg_batch_buf *b, const sgr_table *t, const sgr_result *r, const sg_batch_out *v);
/* The same for {"decision": "deny", "error": err}. */
int sg_batch_write_error(sg_batch_buf *b, const char *err);

/* The batch's input and output: read in large blocks from in_fd, answers
 * gathered in out and written to out_fd in large blocks, and always before the
 * reader could wait for input (a client that sends one line and waits for its
 * answer gets it). */
typedef struct sg_batch_io {
    int in_fd, out_fd;
    char *in;
    size_t cap, have, pos;                  /* in[pos..have) not yet handed out */
    int eof, err;                           /* err: a read or write failed */
    sg_batch_buf out;
} sg_batch_io;

void sg_batch_io_init(sg_batch_io *io, int in_fd, int out_fd);
/* The next non-empty line, its ending ("\n", and any "\r" or "\n" before it)
 * removed: 1 with *line and *n set (the bytes are the caller's to rewrite until the
 * next call), 0 at the end of input, -1 when memory runs out or a read fails. */
int sg_batch_next_line(sg_batch_io *io, char **line, size_t *n);
/* Write out what is gathered.  0, or -1 when a write fails (io->err set). */
int sg_batch_flush(sg_batch_io *io);
/* Flush and release. */
int sg_batch_io_close(sg_batch_io *io);

/* The answer for one line (its bytes the function's to rewrite), appended to out:
 * 0, or -1 when memory runs out (out as it was). */
typedef int (*sg_batch_fn)(void *ud, sgr_ctx *ctx, char *line, size_t n, sg_batch_buf *out);

/* Every line of io answered by fn, the answers in input order, then io flushed.
 * With threads > 1, runs of many lines read at once are shared among that many
 * threads (at most 17), each with a context of its own over t, so fn must change
 * nothing but its ctx and out (a pure check: no admission, no log); the calling
 * thread answers on ctx, and alone whenever few lines are waiting (a client that
 * sends a line and waits).  An answer that cannot be written is the out-of-memory
 * line.  0, or -1 when a read, a write or memory failed. */
int sg_batch_run(sg_batch_io *io, const sgr_table *t, sgr_ctx *ctx, int threads, sg_batch_fn fn, void *ud);

#endif
