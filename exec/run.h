/* run.h - running a command line exactly as the policy saw it.
 *
 * sgx_prepare reads the line (runtime/shparse.h), refuses what the executor does
 * not run (plan.h), expands every word of every top-level command as bash would
 * at that point -- variables, the session's among them, ~, globs against the
 * directory the command will run in, assuming each earlier command succeeded --
 * and renders the line again with each expanded word as a single-quoted literal
 * (a $(...) stands as the empty string it would be if it printed nothing).  That
 * literal line is what the policy decides on (sgr_eval), and the argv, assignments
 * and redirections the evaluator found in it are what will run.  Before anything
 * runs, each $(...)'s text is decided too, as a line of its own, and the line as
 * check reads it (words known only once a $(...) ran left as written); the
 * stricter verdict wins.  A program or an export/unset name known only once a
 * $(...) ran is refused, and so is a command using a $(...)'s output after a
 * command of the line may have started a program or opened a file: a decision
 * taken again with that output then could leave the line half run.
 *
 * sgx_execute walks the plan: lists, && ||, pipelines, ( ) on a copy of the
 * state, { }, with the builtins cd, export, unset and : done here and every other
 * program fork/exec'd by path lookup -- no shell ever reads any of it.  Just before
 * each command runs its words are expanded again with the real state; where that
 * gives anything else (a $(...)'s output -- run through this same path, its own
 * line validated first -- a $?, a directory a failed cd did not reach) the line is
 * rendered with the real words and decided again, and a decision other than allow
 * stops the run there.
 *
 * A run changes the calling process: it becomes a child subreaper and blocks
 * SIGCHLD while executing (proc.h).  Ownership: everything the result points to
 * lives until sgx_run_free. */
#ifndef SGX_RUN_H
#define SGX_RUN_H
#include <stddef.h>
#include <stdint.h>
#include "runtime/eval.h"
#include "capture.h"
#include "env.h"
#include "proc.h"
#include "rlimits.h"

#define SGX_TIMEOUT_DEFAULT 30.0         /* seconds */
#define SGX_TIMEOUT_MAX     600.0
#define SGX_GRACE_DEFAULT   2.0          /* SIGTERM to SIGKILL */
#define SGX_CMDSUB_MAX      (1u << 20)   /* bytes of one $(...)'s output */

/* Exit statuses of a run that did not finish on its own. */
#define SGX_RC_TIMEOUT  124
#define SGX_RC_FAILED   125              /* the executor (or its sandbox) failed */
#define SGX_RC_REFUSED  126

/* Find the program file for name under the PATH value path (NULL: unset),
 * relative to cwd: 0 and out, or -1 when there is none.  The default searches
 * PATH as execvp does; tests map every name to a stand-in. */
typedef int (*sgx_lookup_fn)(void *ud, const char *name, const char *path, const char *cwd, char *out, size_t n);

typedef struct sgx_opts {
    const sgr_table *t;
    sgr_ctx *ctx;                     /* evaluates the line; not used by children */
    const char *cwd;                  /* absolute: where the line starts */
    const char *const *roots;         /* workspace roots (none: the cwd) */
    size_t nroots;
    const sgx_vars *vars;             /* the variables it starts with (copied) */
    double timeout_s;                 /* 0: SGX_TIMEOUT_DEFAULT; at most SGX_TIMEOUT_MAX */
    double grace_s;                   /* 0: SGX_GRACE_DEFAULT */
    size_t max_output;                /* per stream (capture.h); 0: SGX_CAP_DEFAULT */
    int trunc;                        /* SGX_TRUNC_* */
    int stream;                       /* forward output to fds 1 and 2 as it comes */
    sgx_rlimits rl;
    sgx_lookup_fn lookup;             /* NULL: PATH search */
    sgx_open_check_fn open_check;     /* NULL: open anything the policy allowed */
    void *hook_ud;
} sgx_opts;

enum { SGX_ST_SUCCESS, SGX_ST_REFUSED, SGX_ST_TIMEOUT, SGX_ST_ERROR };

#define SGX_MAX_WARNINGS 32

typedef struct sgx_result {
    int state;                        /* SGX_ST_* */
    int return_code;                  /* the line's status, or SGX_RC_* */
    uint32_t decision;                /* the policy's (sgt_decision) */
    const char *rule, *message, *hint;
    const char *expanded;             /* the line the policy decided on */
    const char *warnings[SGX_MAX_WARNINGS];
    uint32_t nwarnings;
    uint32_t nexec;                   /* programs started (their execve succeeded) */
    uint32_t nfailed;                 /* children whose program did not start (a
                                       * redirection or execve failed) */
    uint32_t nrevalidated;            /* decisions taken again at run time */
    uint32_t leftovers;               /* processes still running at the end, ended */
    int timed_out;
    double duration_s;
    sgx_cap out, err;                 /* stdout and stderr as kept */
} sgx_result;

typedef struct sgx_run sgx_run;

/* NULL on OOM.  The options (and what they point to) must outlive the run. */
sgx_run *sgx_run_new(const sgx_opts *o);
void sgx_run_free(sgx_run *r);

/* Read, expand and decide line[0..len) (it must stay unchanged until the run is
 * freed).  0: decided (the result's decision says what; nothing ran); -1: the
 * executor refuses the line itself (the result says why; nothing ran). */
int sgx_prepare(sgx_run *r, const char *line, size_t len);
/* The evaluation sgx_prepare decided on, for admission (limits, approvals): valid
 * until the next evaluation on the options' context. */
const sgr_result *sgx_prepared(const sgx_run *r);
/* Run the prepared line.  0 (the result says how it went), -1 the run could not
 * start (errno). */
int sgx_execute(sgx_run *r);
/* Mark the prepared line refused by the caller (rate limit, an unapproved ask)
 * with this verdict; nothing runs. */
void sgx_refuse(sgx_run *r, uint32_t decision, const char *rule, const char *message);
void sgx_warn(sgx_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The names a line or a session may not set, export or unset: the table's set
 * run_refused_vars (std/sets: code_vars and interpreters' module paths), else its
 * code_vars, else none (-1: every name is refused).  sgx_refused_var answers for
 * one name of that set (PWD always). */
int sgx_refused_vars_set(const sgr_table *t);
int sgx_refused_var(const sgr_table *t, int set, const char *name, size_t len);

const sgx_result *sgx_result_of(const sgx_run *r);
/* The directory and variables the top-level list ended with. */
const char *sgx_final_cwd(const sgx_run *r);
const sgx_vars *sgx_final_vars(const sgx_run *r);
/* Every line decided on, in order: the prepared ones (each $(...)'s, check's
 * reading, the line), then each re-decision. */
const char *const *sgx_decided_lines(const sgx_run *r, uint32_t *n);

#endif
