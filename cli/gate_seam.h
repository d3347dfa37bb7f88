/* gate_seam.h - the one place where the hook adapters (cli/hook.c) and the
 * server (cli/serve.c) get a decision: a gate holds a loaded policy and the
 * admission the options name (rate limits, approvals, the decision log), and
 * decides a command line in a working directory for an agent and its session,
 * handing back the verdict and the JSON line `check --batch` prints for it.
 *
 * Everything the adapters and the server know of shellgate goes through these
 * few functions, so the protocol code never changes when the library under them
 * does (cli/gate_seam.c is a thin body over the library face).
 *
 * Ownership: a gate owns its policy, its admission and every string a verdict
 * hands out; those strings stay valid until the gate's next call.  A gate belongs
 * to one thread at a time.  Nothing here prints: errors reach the options' diag
 * callback, one complete message a call. */
#ifndef SG_GATE_SEAM_H
#define SG_GATE_SEAM_H
#include <stddef.h>

typedef void (*sg_gate_diag_fn)(void *ud, const char *msg);

typedef struct sg_gate_opts {
    const char *policy;                /* pack name, .rules, .sgt or .sgb; NULL: default */
    const char *const *incs;           /* -I directories for `use` */
    size_t ninc;
    const char *require_sig;           /* --require-signature KEY.pub, or NULL */
    const char *deploy_scope;          /* --scope NAME, or NULL */
    /* admission (docs/admission.md): admit 0 is a pure check (approval ids only) */
    int admit;
    const char *state;                 /* the state file; NULL: the default path */
    const char *rate_store;            /* redis://..., or NULL */
    int rate_down;                     /* 0 deny, 1 local (docs/fleet.md) */
    unsigned rate_timeout_ms;          /* 0: the default */
    const char *log;                   /* the decision log, or NULL */
    unsigned long long log_max;        /* its cap in bytes; 0: none */
    int non_interactive;               /* an unanswered ask is a deny */
    sg_gate_diag_fn diag;
    void *diag_ud;
} sg_gate_opts;

typedef struct sg_gate sg_gate;

/* The decision names, as the JSON spells them (ORDER SGT_DECISION). */
enum { SG_GATE_ALLOW = 0, SG_GATE_DENY = 1, SG_GATE_ASK = 2 };

/* Open a gate: load and verify the policy, open the store and the log.  0, or an
 * exit status in sysexits' terms (64 usage, 65 bad policy, 66 unreadable, 70 OOM)
 * with the reason sent to diag; *out NULL then. */
int sg_gate_open(const sg_gate_opts *o, sg_gate **out);
void sg_gate_free(sg_gate *g);

/* Load the policy again (policy NULL: the one the gate was opened with), verify
 * it (and its signature when the options require one), and only then put it in
 * force.  0, or a status with the reason sent to diag: the old policy stays. */
int sg_gate_reload(sg_gate *g, const char *policy);
/* The pack's name ("readonly") and what it was loaded from ("readonly", a path). */
const char *sg_gate_pack(const sg_gate *g);
const char *sg_gate_source(const sg_gate *g);

typedef struct sg_gate_verdict {
    int decision;                      /* SG_GATE_*, after admission */
    const char *rule, *message, *hint; /* hint "" when none */
    const char *approval_id;           /* "" unless the policy asked */
    int rate_limited;
    double wait_s;
    const char *error;                 /* an admission error, or NULL */
    const char *json;                  /* the `check --batch` answer, no newline */
    size_t json_len;
} sg_gate_verdict;

/* Where a command runs and for whom: cwd absolute (NULL: the process's); the
 * workspace roots (none: the cwd); agent the rate key and the log's agent (NULL:
 * "default"); session the approval session (NULL: the agent). */
typedef struct sg_gate_where {
    const char *cwd;
    const char *const *roots;
    size_t nroots;
    const char *agent, *session;
    const char *team;                  /* the key of `per team` limits; NULL: "default" */
} sg_gate_where;

/* Decide cmd[0..len) where w says, then admit it and log it.  Never fails: bad
 * input, a store error or no memory is a deny whose message says why. */
void sg_gate_decide(sg_gate *g, const char *cmd, size_t len, const sg_gate_where *w, sg_gate_verdict *v);

/* The same decision without admission or the log (nothing recorded), with each
 * segment as evaluated added to the JSON as "explain": [{"segment": i, "text":
 * the bytes it was written as, "parent": -1 or the segment it is nested in,
 * "nested": "cmdsub"..., "dynamic": why it cannot be analysed, "decision",
 * "rule"}, ...] (nested and dynamic only when they apply). */
void sg_gate_explain(sg_gate *g, const char *cmd, size_t len, const sg_gate_where *w, sg_gate_verdict *v);

/* Answer the ask with approval id `id` (32 hex digits) for scope "once" or
 * "session" (session NULL: the one it was asked from).  0 approved (*cmd the
 * command approved, valid until the next call), 1 no such ask waits, -1 an error
 * (diag).  Needs a gate opened with admit. */
int sg_gate_approve(sg_gate *g, const char *id, const char *scope, const char *session, const char **cmd);

#endif
