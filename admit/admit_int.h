/* admit_int.h - inside the admission layer (admit.h): the store interface that
 * the state file (file.c) and Redis (redis.c) implement, choosing a store
 * (store.c), and the arithmetic they share (common.c).  Only admit/ and its unit
 * test include it.
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
 * except `msg` from sga_limit_message, which is the caller's buffer.  Nothing here
 * prints: errors come back as text in caller-supplied buffers. */
#ifndef SGA_ADMIT_INT_H
#define SGA_ADMIT_INT_H
#include <stddef.h>
#include <stdint.h>
#include "admit/admit.h"

/* One limit as admission sees it: a copy of the table's sgt_limit without code. */
typedef struct sga_limit {
    const char *name;
    uint32_t nwindows;
    uint32_t count[SGT_MAX_WINDOWS];
    uint32_t seconds[SGT_MAX_WINDOWS];
    uint32_t per_team;                 /* kept per team (sgt_limit.key), not per agent */
} sga_limit;

typedef struct sga_req {
    int64_t now_ns;                    /* the caller's clock (sga_opts.clock) */
    /* now_ns came from an untrusted test hook (SHELLGATE_TEST_NOW): the backend uses
     * it only for a store created under that hook, else real_ns (docs/admission.md) */
    int clock_injected;
    int64_t real_ns;
    const char *agent;                 /* rate-limit key: --agent, "default" */
    const char *team;                  /* the key of a per-team limit: --team, "default" */
    const char *session;               /* approval session: SHELLGATE_SESSION or agent */
    const char *pack;                  /* limits are kept per pack name and limit name */
    int ask;                           /* the policy said ask: admit only if approved */
    uint8_t approval[SGA_APPROVAL_LEN];/* when ask: the command's approval id */
    /* when ask and not approved, remember the command so `approve ID` can show it and
     * `approve --always` can check it; all optional */
    const char *cmd, *cwd;
    const char *progs;                 /* every segment's program, NUL-separated */
    uint32_t progs_len;
    int risky;                         /* a segment runs an interpreter, shell or wrapper */
    const sga_limit *limits;     /* only those whose `when` holds */
    uint32_t nlimits;
} sga_req;

typedef struct sga_res {
    int admitted;                      /* the command may run; its slot is taken */
    int approved;                      /* SGA_APPROVE_* that let an ask through */
    int rate_limited;
    uint32_t limit, window;            /* the refusing limit (index in req) and window */
    int64_t wait_ns;                   /* until every refusing window has a free slot */
    int64_t now_ns;                    /* the time admission used (never behind) */
} sga_res;

/* A command waiting for an answer (recorded by an unapproved ask). */
typedef struct sga_pending {
    char cmd[4096];
    char cwd[1024];
    char agent[256];                   /* the session it was asked from */
    char progs[1024];                  /* NUL-separated */
    uint32_t progs_len;
    int risky;
    int64_t when_ns;
} sga_pending;

typedef struct sga_store sga_store;

/* The backend interface: every operation is atomic with respect to every other
 * process using the same store.  Each returns 0, or -1 with a message in err (a
 * corrupt store, an I/O error); on -1 the caller must refuse the command. */
typedef struct sga_backend {
    const char *name;
    int (*check_and_record)(sga_store *a, const sga_req *req, sga_res *res,
                            char *err, size_t errlen);
    /* Record an answer for a pending approval id; fills *p with what was approved.
     * 1 when the id is not pending (nothing recorded). */
    int (*approve)(sga_store *a, const uint8_t id[SGA_APPROVAL_LEN], int scope, const char *session,
                   int64_t now_ns, sga_pending *p, char *err, size_t errlen);
    /* Forget everything: limits, approvals, pending commands; a corrupt store is
     * replaced by an empty one. */
    int (*reset)(sga_store *a, char *err, size_t errlen);
    void (*close)(sga_store *a);
    /* Every pending ask and granted approval, to fn (NULL: the backend cannot
     * list them).  0, or -1 with err. */
    int (*list)(sga_store *a, sga_entry_fn fn, void *ud, char *err, size_t errlen);
    /* Forget the pending ask and every approval with this id: 0, 1 none was
     * there, -1 with err (NULL: the backend cannot). */
    int (*revoke)(sga_store *a, const uint8_t id[SGA_APPROVAL_LEN], char *err, size_t errlen);
} sga_backend;

struct sga_store {
    const sga_backend *be;
};

/* The file backend (file.c).  path NULL: $XDG_STATE_HOME/shellgate/state or
 * ~/.local/state/shellgate/state.  Opening creates nothing; the first write creates
 * the directory (0700) and files (0600).  NULL with err on OOM or no usable path. */
sga_store *sga_file_open(const char *path, char *err, size_t errlen);
/* The state file's path (for messages). */
const char *sga_file_path(const sga_store *a);
/* Default state path into buf; -1 when neither XDG_STATE_HOME nor HOME is set. */
int sga_default_path(char *buf, size_t n);

static inline int sga_store_check(sga_store *a, const sga_req *q, sga_res *r, char *e, size_t n)
{
    return a->be->check_and_record(a, q, r, e, n);
}
static inline void sga_store_close(sga_store *a)
{
    if (a)
        a->be->close(a);
}

/* CLOCK_REALTIME in nanoseconds. */
int64_t sga_wall_ns(void);

/* The exact sliding-window check over one key's ring of timestamps: n of them,
 * the i-th oldest at ring[(head + i) % cap], non-decreasing.  Returns the wait in
 * ns before a command at now_ns fits every window of l (0: it fits now) and the
 * window that needs the longest wait in *window.  O(windows). */
int64_t sga_window_wait(const sga_limit *l, const int64_t *ring, uint32_t cap, uint32_t head,
                        uint32_t n, int64_t now_ns, uint32_t *window);

/* Test hook for the file backend: die by SIGKILL at a point of the next write
 * (1: half the new state written to the temporary file; 2: all of it written and
 * synced, before the rename).  0 disables.  Used by tests/admission.sh only. */
void sga_file_test_crash(int point);

/* Fill a limit's message into out: {count} {window} (seconds) {per} ("10 seconds",
 * "minute", "2 hours") {wait} (seconds, one decimal) {name}; tmpl NULL or "" gives
 * "Rate limit: max {count} commands per {window} seconds".  Returns out. */
char *sga_limit_message(char *out, size_t n, const char *tmpl, const sga_limit *l, uint32_t window,
                       int64_t wait_ns);

/* The approval material: a canonical, length-prefixed serialisation of the decided
 * command's normalised segments (argv after quote removal, assignments,
 * redirections, nesting) and the cwd.  The caller hashes it (SHA-256) into an
 * approval id.  Returns the length written (it never exceeds n), or 0 when the
 * buffer is too small; call with n == 0 to learn the size. */
size_t sga_approval_material(const sgr_result *r, const char *cwd, uint8_t *out, size_t n);

/* Would approving this command for good approve far more than the command?  True
 * when a segment is dynamic, or its program is a shell, an interpreter, or a
 * wrapper (built-in list, plus every wrapper the table declares).  Also lists every
 * segment's program into progs (NUL-separated, truncated at n) and sets *len. */
int sga_risky(const sgr_table *t, const sgr_result *r, char *progs, size_t n, uint32_t *len,
              const char **which);

/* ---- choosing a store: the local state file (file.c) or a Redis server shared by
 * a fleet (redis.c), with what to do when the shared store cannot be reached.
 * Every verb that admits commands opens its store through sga_open (admit.h), so
 * they all read `--rate-store` alike (docs/fleet.md).  The options' strings are
 * copied; the store owns its connection and is closed with sga_store_close. */

#define SGA_STORE_TIMEOUT_MS 250u      /* connect, and each command, by default */

typedef struct sga_store_opts {
    const char *url;                   /* NULL or "": the local state file alone;
                                        * "redis://HOST[:PORT][/DB]" */
    const char *state;                 /* the local state file; NULL: the default path */
    int down;                          /* SGA_STORE_DOWN_* */
    uint32_t timeout_ms;               /* 0: SGA_STORE_TIMEOUT_MS */
    const char *prefix;                /* Redis key prefix; NULL: "shellgate" */
    sga_warn_fn warn;                  /* may be NULL */
    void *warn_ud;
} sga_store_opts;

/* Open the store the options name.  Opening connects to nothing yet (the first
 * operation does, within the timeout) and creates no file.  NULL with err for a
 * malformed URL, no usable state path, or no memory. */
sga_store *sga_store_open(const sga_store_opts *o, char *err, size_t errlen);

/* Where the store keeps its state, for messages: the state file's path, or the
 * Redis URL in canonical form ("redis://127.0.0.1:6379/0"). */
const char *sga_store_where(const sga_store *a);

/* "deny" / "local" -> SGA_STORE_DOWN_*, -1 otherwise. */
int sga_store_down_parse(const char *s);

/* The Redis backend itself (redis.c): see sga_store_open.  url must be
 * a redis:// URL; NULL with err otherwise. */
sga_store *sga_redis_open(const sga_store_opts *o, char *err, size_t errlen);
/* The canonical URL of a Redis store, NULL for any other backend. */
const char *sga_redis_url(const sga_store *a);

#endif
