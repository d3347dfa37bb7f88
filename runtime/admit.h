/* admit.h - admission control: rate limits and approvals, behind a backend
 * interface (a state file today; a shared store such as Redis later).
 *
 * Admission runs after the decision (eval.h) and only for commands that are about
 * to run: an `allow`, or an `ask` someone approved.  One call is one transaction
 * in the backend: it looks up an approval, checks every applicable limit, and, if
 * the command is admitted, records its timestamp and consumes a one-time approval
 * -- all or nothing, so concurrent processes never admit more than a limit.
 *
 * Sliding windows are exact: a limit `N per W` refuses a command at time now when
 * the N-th most recent admitted command of its key is later than now - W; the wait
 * is that timestamp + W - now.  Each key keeps only the last max(N) timestamps
 * (a ring), so the work and the memory per key are bounded by the limit itself.
 * Times are nanoseconds since the epoch; the backend never lets time go backwards
 * (it keeps the largest time it has seen and uses it when the clock is behind), so
 * a clock stepped back cannot unlock slots.
 *
 * Ownership: the caller owns every string in a request; results hold no pointers
 * except `msg` from sgr_admit_message, which is the caller's buffer.  Nothing here
 * prints: errors come back as text in caller-supplied buffers. */
#ifndef SGR_ADMIT_H
#define SGR_ADMIT_H
#include <stddef.h>
#include <stdint.h>
#include "sgt.h"
#include "eval.h"

#define SGR_APPROVAL_LEN 16            /* bytes of an approval id (32 hex digits) */

/* Approval scopes (ORDER SGR_APPROVE): once is consumed by the command it admits;
 * session lasts while the session id is the same; always lives in the overlay file
 * (the caller's concern, never the backend's). */
#define SGR_APPROVE_SCOPES(X) \
    X(NONE,    "none")    \
    X(ONCE,    "once")    \
    X(SESSION, "session") \
    X(ALWAYS,  "always")

enum {
#define X(id, name) SGR_APPROVE_##id,
    SGR_APPROVE_SCOPES(X)
#undef X
};
const char *sgr_approve_scope_name(int scope);

/* One limit as admission sees it: a copy of the table's sgt_limit without code. */
typedef struct sgr_admit_limit {
    const char *name;
    uint32_t nwindows;
    uint32_t count[SGT_MAX_WINDOWS];
    uint32_t seconds[SGT_MAX_WINDOWS];
} sgr_admit_limit;

typedef struct sgr_admit_req {
    int64_t now_ns;                    /* the caller's clock (see sgr_admit_now) */
    /* now_ns came from an untrusted test hook (SHELLGATE_TEST_NOW): the backend uses
     * it only for a store created under that hook, else real_ns (docs/admission.md) */
    int clock_injected;
    int64_t real_ns;
    const char *agent;                 /* rate-limit key: --agent, "default" */
    const char *session;               /* approval session: SHELLGATE_SESSION or agent */
    const char *pack;                  /* limits are kept per pack name and limit name */
    int ask;                           /* the policy said ask: admit only if approved */
    uint8_t approval[SGR_APPROVAL_LEN];/* when ask: the command's approval id */
    /* when ask and not approved, remember the command so `approve ID` can show it and
     * `approve --always` can check it; all optional */
    const char *cmd, *cwd;
    const char *progs;                 /* every segment's program, NUL-separated */
    uint32_t progs_len;
    int risky;                         /* a segment runs an interpreter, shell or wrapper */
    const sgr_admit_limit *limits;     /* only those whose `when` holds */
    uint32_t nlimits;
} sgr_admit_req;

typedef struct sgr_admit_res {
    int admitted;                      /* the command may run; its slot is taken */
    int approved;                      /* SGR_APPROVE_* that let an ask through */
    int rate_limited;
    uint32_t limit, window;            /* the refusing limit (index in req) and window */
    int64_t wait_ns;                   /* until every refusing window has a free slot */
    int64_t now_ns;                    /* the time admission used (never behind) */
} sgr_admit_res;

/* A command waiting for an answer (recorded by an unapproved ask). */
typedef struct sgr_admit_pending {
    char cmd[4096];
    char cwd[1024];
    char agent[256];                   /* the session it was asked from */
    char progs[1024];                  /* NUL-separated */
    uint32_t progs_len;
    int risky;
    int64_t when_ns;
} sgr_admit_pending;

typedef struct sgr_admit sgr_admit;

/* The backend interface: every operation is atomic with respect to every other
 * process using the same store.  Each returns 0, or -1 with a message in err (a
 * corrupt store, an I/O error); on -1 the caller must refuse the command. */
typedef struct sgr_admit_backend {
    const char *name;
    int (*check_and_record)(sgr_admit *a, const sgr_admit_req *req, sgr_admit_res *res,
                            char *err, size_t errlen);
    /* Record an answer for a pending approval id; fills *p with what was approved.
     * 1 when the id is not pending (nothing recorded). */
    int (*approve)(sgr_admit *a, const uint8_t id[SGR_APPROVAL_LEN], int scope, const char *session,
                   int64_t now_ns, sgr_admit_pending *p, char *err, size_t errlen);
    /* Forget everything: limits, approvals, pending commands; a corrupt store is
     * replaced by an empty one. */
    int (*reset)(sgr_admit *a, char *err, size_t errlen);
    void (*close)(sgr_admit *a);
} sgr_admit_backend;

struct sgr_admit {
    const sgr_admit_backend *be;
};

/* The file backend (admit_file.c).  path NULL: $XDG_STATE_HOME/shellgate/state or
 * ~/.local/state/shellgate/state.  Opening creates nothing; the first write creates
 * the directory (0700) and files (0600).  NULL with err on OOM or no usable path. */
sgr_admit *sgr_admit_file_open(const char *path, char *err, size_t errlen);
/* The state file's path (for messages). */
const char *sgr_admit_file_path(const sgr_admit *a);
/* Default state path into buf; -1 when neither XDG_STATE_HOME nor HOME is set. */
int sgr_admit_default_path(char *buf, size_t n);

static inline int sgr_admit_check(sgr_admit *a, const sgr_admit_req *q, sgr_admit_res *r, char *e, size_t n)
{
    return a->be->check_and_record(a, q, r, e, n);
}
static inline void sgr_admit_close(sgr_admit *a)
{
    if (a)
        a->be->close(a);
}

/* The clock.  sgr_admit_now returns the injected clock when one is set (tests),
 * else CLOCK_REALTIME.  Stepping this clock backwards cannot unlock slots (the
 * backend keeps the largest time seen), so an injected clock can only make limits
 * stricter, never looser. */
typedef int64_t (*sgr_clock_fn)(void *ud);
void sgr_admit_set_clock(sgr_clock_fn fn, void *ud);
int64_t sgr_admit_now(void);
/* CLOCK_REALTIME, whatever is injected. */
int64_t sgr_admit_wall_ns(void);

/* The exact sliding-window check over one key's ring of timestamps: n of them,
 * the i-th oldest at ring[(head + i) % cap], non-decreasing.  Returns the wait in
 * ns before a command at now_ns fits every window of l (0: it fits now) and the
 * window that needs the longest wait in *window.  O(windows). */
int64_t sgr_admit_window_wait(const sgr_admit_limit *l, const int64_t *ring, uint32_t cap, uint32_t head,
                              uint32_t n, int64_t now_ns, uint32_t *window);

/* Test hook for the file backend: die by SIGKILL at a point of the next write
 * (1: half the new state written to the temporary file; 2: all of it written and
 * synced, before the rename).  0 disables.  Used by tests/admission.sh only. */
void sgr_admit_file_test_crash(int point);

/* Fill a limit's message into out: {count} {window} (seconds) {per} ("10 seconds",
 * "minute", "2 hours") {wait} (seconds, one decimal) {name}; tmpl NULL or "" gives
 * "Rate limit: max {count} commands per {window} seconds".  Returns out. */
char *sgr_admit_message(char *out, size_t n, const char *tmpl, const sgr_admit_limit *l, uint32_t window,
                        int64_t wait_ns);

/* The approval material: a canonical, length-prefixed serialisation of the decided
 * command's normalised segments (argv after quote removal, assignments,
 * redirections, nesting) and the cwd.  The caller hashes it (SHA-256) into an
 * approval id.  Returns the length written (it never exceeds n), or 0 when the
 * buffer is too small; call with n == 0 to learn the size. */
size_t sgr_admit_approval_material(const sgr_result *r, const char *cwd, uint8_t *out, size_t n);

/* Would approving this command for good approve far more than the command?  True
 * when a segment is dynamic, or its program is a shell, an interpreter, or a
 * wrapper (built-in list, plus every wrapper the table declares).  Also lists every
 * segment's program into progs (NUL-separated, truncated at n) and sets *len. */
int sgr_admit_risky(const sgr_table *t, const sgr_result *r, char *progs, size_t n, uint32_t *len,
                    const char **which);

#endif
