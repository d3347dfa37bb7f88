/* report.h - the JSON object of one run (`shellgate run --json`), the reference
 * tools' result fields plus the decision (docs/executor.md).
 *
 * Every string goes through sgx_json_string, so the object is valid JSON (and
 * valid UTF-8) whatever a command printed.  The same writer produces the report
 * a sandboxed run hands back to the process that started the sandbox, with the
 * final state added.
 *
 * Ownership: the caller owns every string in a sgx_report; sgx_report_json hands
 * back one sg_malloc'd string. */
#ifndef SGX_REPORT_H
#define SGX_REPORT_H
#include <stddef.h>
#include <stdint.h>
#include "env.h"

typedef struct sgx_report {
    const char *status;               /* "success" or "error" */
    const char *command;              /* the line as given */
    const char *out, *err;            /* the kept text of each stream */
    size_t outlen, errlen;
    uint64_t out_bytes, err_bytes;    /* every byte the command wrote */
    int out_trunc, err_trunc;
    int return_code;
    int has_errors;
    double duration_s, timeout_s;
    const char *cwd;                  /* where the command ran (started) */
    int timed_out, rate_limited;
    double wait_s;
    int sandboxed;
    const char *const *warnings;
    uint32_t nwarnings;
    const char *decision, *rule, *message, *hint;
    const char *expanded;             /* the line the policy decided on, or NULL */
    const char *approval_id;          /* an ask's id, or NULL */
    const char *session;              /* or NULL */
    const char *session_cwd;          /* where the session now is, or NULL */
    uint32_t programs;                /* programs started */
    /* a sandboxed run's report to its starter only */
    const char *final_cwd;
    const sgx_vars *final_env;
} sgx_report;

/* The object, one line, no newline; NULL on OOM. */
char *sgx_report_json(const sgx_report *r, size_t *len);

#endif
