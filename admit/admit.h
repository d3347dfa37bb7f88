/* admit.h - admission: what becomes of a decided command line before it may run.
 *
 * The evaluator (runtime/eval.h) says what the policy says; admission turns that
 * into what is admitted, in this order:
 *   approval id -> overlay -> store (approval, limits, record) -> verdict -> log
 * An `ask` gets its approval id (a hash of the normalised segments and the cwd)
 * and is looked up among the approvals: `always` in the overlay file, `once` and
 * `session` in the store.  A command about to run takes a slot of every limit that
 * applies -- the evaluation lists them (sgr_result.limits), so admission never
 * calls back into the evaluator -- or is refused by one.  `non_interactive` makes
 * an unanswered ask a deny.  The decision log records the outcome.  Any error of
 * the store refuses the command (fail closed); a log that cannot be written only
 * warns.  docs/admission.md is the manual, docs/fleet.md the Redis store.
 *
 * An sga without a store is a pure check: approval ids and non_interactive only
 * (and the log, when one is given).  sga_admit(NULL, ...) is the same without
 * either.
 *
 * Ownership and threads: an sga belongs to one thread at a time (it holds a store
 * connection and a log descriptor); any number of processes may share one state
 * file or Redis store, and every store operation is atomic among them.  The
 * options' strings are copied or read during sga_open only.  A verdict's strings
 * point into the verdict, the result it was made from or the table, and live as
 * long as the shortest of them.  Nothing here prints: warnings reach the caller's
 * callback, errors come back as text in caller-supplied buffers. */
#ifndef SGA_ADMIT_H
#define SGA_ADMIT_H
#include <stddef.h>
#include <stdint.h>
#include "runtime/eval.h"

#define SGA_APPROVAL_LEN 16            /* bytes of an approval id */
#define SGA_ID_HEX (2 * SGA_APPROVAL_LEN + 1)   /* its hex digits and a NUL */

/* Approval scopes (ORDER SGA_APPROVE): once is consumed by the command it admits;
 * session lasts while the session id is the same; always lives in the overlay file
 * (the admission layer's concern, never the store's). */
#define SGA_APPROVE_SCOPES(X) \
    X(NONE,    "none")    \
    X(ONCE,    "once")    \
    X(SESSION, "session") \
    X(ALWAYS,  "always")

enum {
#define X(id, name) SGA_APPROVE_##id,
    SGA_APPROVE_SCOPES(X)
#undef X
};
const char *sga_scope_name(int scope);

/* What admission does when the shared store is down or slow (ORDER SGA_STORE_DOWN).
 * DENY refuses the command with a message that says why (fail closed, the
 * default); LOCAL admits it against the local state file and warns: limits then
 * hold per host, and approvals granted elsewhere are not seen, until it is back. */
#define SGA_STORE_DOWN(X) \
    X(DENY,  "deny")  \
    X(LOCAL, "local")

enum {
#define X(id, name) SGA_STORE_DOWN_##id,
    SGA_STORE_DOWN(X)
#undef X
};
/* "deny" / "local" -> SGA_STORE_DOWN_*, -1 otherwise. */
int sga_store_down_parse(const char *s);

/* A warning for the operator (a log that cannot be written, a fallback to the
 * local store): one complete sentence, no newline. */
typedef void (*sga_warn_fn)(void *ud, const char *msg);
/* The admission clock in nanoseconds since the epoch. */
typedef int64_t (*sga_clock_fn)(void *ud);

typedef struct sga_opts {
    int store;                         /* admit against a store; 0: a pure check */
    const char *state;                 /* the state file; NULL: the default path */
    const char *url;                   /* NULL: the state file; "redis://HOST[:PORT][/DB]" */
    int down;                          /* SGA_STORE_DOWN_* */
    uint32_t timeout_ms;               /* the Redis store's; 0: its default */
    /* Open the store when a command first needs it (an ask, or a policy with
     * limits); a command that needs none never touches it, and an error opening
     * it refuses the command instead of failing sga_open. */
    int lazy;
    const char *log;                   /* the decision log; NULL: none */
    uint64_t log_max;                  /* its cap in bytes; 0: none */
    int non_interactive;               /* an unanswered ask is a deny */
    sga_warn_fn warn;                  /* may be NULL */
    void *warn_ud;
    /* An injected clock (NULL: CLOCK_REALTIME).  A store obeys it only when it
     * was created under one (docs/admission.md), so a clock stepped forward frees
     * no slot of a real state file. */
    sga_clock_fn clock;
    void *clock_ud;
    int crash_point;                   /* test hook of the file store (tests/admission.sh);
                                        * 0: none */
} sga_opts;

typedef struct sga sga;

/* Open admission as the options say.  NULL with err: a malformed store URL, no
 * usable state path (unless lazy), no memory.  A log that cannot be opened is a
 * warning: decisions are then not logged. */
sga *sga_open(const sga_opts *o, char *err, size_t errlen);
void sga_close(sga *a);
/* Admission keeps no state and writes nothing: no store and no log (a NULL a
 * too).  A pure sga is never written after sga_open, so any number of threads
 * may admit through it at once. */
int sga_is_pure(const sga *a);
/* Where the store keeps its state (the state file, or the Redis URL), for
 * messages; "" without a store. */
const char *sga_where(sga *a);

/* Who a command is admitted for. */
typedef struct sga_who {
    const char *agent;                 /* the rate-limit key and the log's agent; NULL: "default" */
    const char *session;               /* the approval session; NULL: the agent */
    const char *team;                  /* the key of a `per team` limit; NULL: "default" */
} sga_who;

/* The decision as admitted: the policy's answer changed by approvals, rate limits
 * and non_interactive. */
typedef struct sga_verdict {
    uint32_t decision;                 /* sgt_decision */
    const char *rule, *message, *hint; /* hint "" when none */
    int rate_limited;
    double wait_s;                     /* until the refusing limit has room */
    char approval_id[SGA_ID_HEX];      /* "" unless the policy said ask */
    const char *approved;              /* the scope that let an ask through, or NULL */
    int admission;                     /* -1 pure, 0 refused (or asks), 1 admitted */
    const char *error;                 /* the store's error, or NULL */
    char msg[1024], rule_buf[300], err[1200];
} sga_verdict;

/* Admit r, the decision of t on cmd in cwd (absolute), into *v.  A deny stays one
 * and takes no slot; an allow takes a slot of every limit r lists (or is refused
 * by one: rule "limit:NAME"); an ask is admitted only when approved, and otherwise
 * stays an ask, recorded as pending so `approve` can answer it.  a NULL: a pure
 * check without non_interactive. */
void sga_admit(sga *a, const sgr_table *t, const sgr_result *r, const char *cmd, const char *cwd,
               const sga_who *who, sga_verdict *v);
/* Append v to the decision log, if there is one (errors warn). */
void sga_log(sga *a, const sgr_table *t, const sgr_result *r, const char *cmd, size_t len, const char *cwd,
             const sga_who *who, const sga_verdict *v);

/* The approval id of r in cwd: SHA-256 of sga_approval_material, the first
 * SGA_APPROVAL_LEN bytes in hex ("" when memory runs out). */
void sga_approval_id(const sgr_result *r, const char *cwd, char out[SGA_ID_HEX]);
/* 2 * SGA_APPROVAL_LEN hex digits to bytes: 0, or -1 when hex is no approval id. */
int sga_parse_id(const char *hex, uint8_t id[SGA_APPROVAL_LEN]);

/* What `approve` answered. */
typedef struct sga_approval {
    char cmd[4096], cwd[1024];         /* the command approved, where it was asked */
    char overlay[4096];                /* scope always: the file it was saved to */
} sga_approval;

/* Answer the ask with approval id hex for scope (SGA_APPROVE_ONCE, SESSION,
 * ALWAYS).  session NULL for SESSION: the session the command was asked from.
 * ALWAYS writes the overlay, and refuses a command that runs a shell, an
 * interpreter, a wrapper or a part that cannot be checked (approving it for good
 * would approve code that is not on the line).  0 approved, 1 no such ask is
 * pending in the store, -1 with err. */
int sga_approve(sga *a, const char *hex, int scope, const char *session, sga_approval *out, char *err,
                size_t errlen);
/* Forget every limit, approval and pending ask of the store: 0, or -1 with err. */
int sga_reset(sga *a, char *err, size_t errlen);

/* A pending ask or a granted approval (sga_list).  kind 0: pending (cmd, cwd and
 * session: the command, where and from which session it was asked); else
 * SGA_APPROVE_ONCE or SESSION (session: the session it holds for; "" for once)
 * from the store, or ALWAYS from the overlay (cmd, cwd as saved). */
typedef struct sga_entry {
    char id[SGA_ID_HEX];
    int kind;
    const char *cmd, *cwd, *session;
    int64_t created_ns;                /* 0 when not recorded (the overlay) */
} sga_entry;
typedef void (*sga_entry_fn)(void *ud, const sga_entry *e);
/* Every pending ask and approval of the store, then the overlay's, to fn: 0, or -1
 * with err (a store that cannot list them: the Redis rate store). */
int sga_list(sga *a, sga_entry_fn fn, void *ud, char *err, size_t errlen);
/* Forget the ask and every approval with id hex, the overlay's included: 0
 * revoked, 1 nothing had that id, -1 with err. */
int sga_revoke(sga *a, const char *hex, char *err, size_t errlen);
/* The overlay of approvals for good ("" when neither XDG_CONFIG_HOME nor HOME). */
const char *sga_overlay(sga *a);

#endif
