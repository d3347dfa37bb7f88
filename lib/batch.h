/* batch.h - the JSON face of `shellgate check --batch` and `check --json`
 * (../shared/DESIGN.md "JSON"): one input line to a request, one decision to the
 * object printed for it.  Shared by the CLI and fuzz/fuzz_batch.c, so the fuzzer
 * runs the code users run.
 *
 * Ownership: a request's strings live in its JSON tree until sg_batch_req_free;
 * the objects returned are the caller's to cJSON_Delete. */
#ifndef SG_BATCH_H
#define SG_BATCH_H
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "runtime/eval.h"

#define SG_BATCH_MAX_ROOTS 64

typedef struct sg_batch_req {
    cJSON *json;                            /* owns the strings below */
    const char *cmd;
    const char *cwd;                        /* NULL: not given */
    const char *roots[SG_BATCH_MAX_ROOTS];
    size_t nroots;                          /* 0: not given */
} sg_batch_req;

/* Parse line[0..n) (no line ending).  Returns NULL with *req filled, or the
 * message for the deny line to print instead (nothing to free then). */
const char *sg_batch_parse(const char *line, size_t n, sg_batch_req *req);
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

/* The verdict v on the command r decided under table t, with r's segments; NULL
 * when memory runs out. */
cJSON *sg_batch_result_json(const sgr_table *t, const sgr_result *r, const sg_batch_out *v);
/* {"decision": "deny", "error": err}; NULL when memory runs out. */
cJSON *sg_batch_error_json(const char *err);

#endif
