/* declog.h - the decision log: one JSON object a line, secrets masked, appended
 * atomically by any number of processes, size-capped with rotation.
 *
 * A line is formatted in memory (sga_declog_format), then appended with one
 * write() to a file opened O_APPEND while holding flock on it, so lines of
 * concurrent writers never interleave or tear, however long they are.  Before the
 * write, a writer that finds the file at or over its cap renames it to FILE.1
 * (replacing an older FILE.1) and starts a new FILE; the lock plus a check that the
 * open file is still the one at FILE (same inode) keep two writers from rotating
 * twice.  Errors (a full disk, a read-only file system) come back as text; the
 * caller reports them and keeps its decision.
 *
 * Masking (sga_mask_*): values of secret-looking assignments and options
 * (TOKEN=, *_KEY=, PASSWORD=, --password, --token, mysql -p), HTTP credentials
 * (Authorization:, Cookie:, X-Api-Key:), URL passwords (https://u:PW@host) and
 * known key formats (AKIA..., ghp_..., github_pat_..., sk-..., xox?-..., glpat-...,
 * AIza..., PEM private keys) become "***".  Masking errs toward hiding: a log
 * is for auditing decisions, not for replaying commands.
 *
 * Ownership: sga_declog_format returns an sg_malloc'd line the caller frees.
 * Nothing here prints. */
#ifndef SGA_DECLOG_H
#define SGA_DECLOG_H
#include <stddef.h>
#include <stdint.h>
#include "runtime/eval.h"

/* Mask a raw command line (or any text) into out (cap bytes, NUL-terminated).
 * Returns the length written; out is truncated (never overflowed) when cap is short:
 * 3 * n + 16 bytes always suffice. */
size_t sga_mask_line(const char *in, size_t n, char *out, size_t cap);

/* Mask argv words (already unquoted) in place of copies: out[i] points into buf
 * (cap bytes; 3 * total + 16 * argc suffices).  Context matters (`mysql -p X`,
 * `--token X`), so the whole argv is masked at once.  Returns 0, -1 when buf is short. */
int sga_mask_argv(const sgr_word *argv, uint32_t argc, char *buf, size_t cap, const char **out);

typedef struct sga_declog_entry {
    int64_t now_ns;
    const char *agent;                 /* NULL: "default" */
    const char *cwd;
    const char *cmd;
    size_t cmdlen;
    const sgr_table *t;
    const sgr_result *r;               /* segments and their decisions */
    uint32_t decision;                 /* the final decision (after admission) */
    const char *rule_id, *message;     /* the final rule and message */
    int admission;                     /* -1 pure check, 0 refused, 1 admitted */
    int rate_limited;
    double wait_s;
    const char *approval_id;           /* hex, or NULL */
    const char *approved;              /* scope name that let an ask through, or NULL */
    const char *error;                 /* admission or state error, or NULL */
    const char *team;                  /* the team its per-team limits counted in; NULL: none given */
} sga_declog_entry;

/* Format one entry as a JSON line ending in '\n'.  0, or -1 on OOM. */
int sga_declog_format(const sga_declog_entry *e, char **line, size_t *len);

typedef struct sga_declog sga_declog;

/* Open (creating 0600) path for appending; max_bytes 0: no cap.  NULL with err. */
sga_declog *sga_declog_open(const char *path, uint64_t max_bytes, char *err, size_t errlen);
/* Append one line atomically, rotating first when the file is at its cap.
 * 0, or -1 with err ("decision log FILE: No space left on device"). */
int sga_declog_append(sga_declog *l, const char *line, size_t len, char *err, size_t errlen);
void sga_declog_close(sga_declog *l);

#endif
