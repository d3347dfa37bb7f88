/* shellgate.h - the library face: load a policy, decide command lines, admit them.
 *
 * The one header a program that embeds shellgate includes: the CLI's check and run,
 * and the hook adapters, the server and language bindings built on it.  Every
 * handle is opaque.
 *
 * Ownership
 *   sg_policy     a loaded and verified policy.  Immutable once loaded; free it
 *                 after every checker made from it.
 *   sg_checker    an evaluation context over one policy.  Owns its results.
 *   sg_result     the answer of a checker's last sg_check or sg_decide: it, and
 *                 every string it hands out (JSON included), stay valid until that
 *                 checker's next sg_check, sg_decide or sg_checker_free.
 *   sg_admission  rate limits, approvals and the decision log over a state file or
 *                 a Redis store; the strings it hands out stay valid until its next
 *                 call.
 *   Strings given to the library are copied or read during the call only, unless
 *   a comment says otherwise.
 *
 * Threads
 *   A policy may be shared by any number of threads at once.  A checker and an
 *   admission belong to one thread at a time: eight threads deciding at once use
 *   eight checkers over one policy, and get the answers one thread would.  Any
 *   number of processes may share one state file or rate store: every admission
 *   is atomic among them.
 *
 * Errors
 *   The library never prints.  Functions that can fail return 0 or a status in
 *   sysexits' terms (SG_E*), and describe the failure, one complete message a
 *   call, to the callback of the options they were given.  A decision never
 *   fails: bad input, a limit of the parser and out-of-memory yield a deny whose
 *   message says why. */
#ifndef SHELLGATE_H
#define SHELLGATE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SG_API __attribute__((visibility("default")))

#define SG_VERSION_MAJOR 0
#define SG_VERSION_MINOR 9
#define SG_VERSION_PATCH 0
#define SG_VERSION "0.9.0"

/* The library's version ("0.9.0"), which may differ from the header's SG_VERSION,
 * and as one number: MAJOR * 10000 + MINOR * 100 + PATCH. */
SG_API const char *sg_version(void);
SG_API int sg_version_number(void);

/* Statuses (sysexits.h): 0 is success. */
enum {
    SG_OK = 0,
    SG_EUSAGE = 64,                    /* a bad option or argument */
    SG_EDATA = 65,                     /* a bad pack, table or bundle; a refused signature */
    SG_ENOINPUT = 66,                  /* a file that cannot be read */
    SG_ESOFTWARE = 70,                 /* out of memory, an internal error */
    SG_EIO = 74                        /* a read or write failed */
};

typedef enum { SG_ALLOW = 0, SG_DENY = 1, SG_ASK = 2 } sg_decision;   /* as SGT_DECISIONS (runtime/sgt.h) */
/* "allow", "deny", "ask". */
SG_API const char *sg_decision_name(sg_decision d);

/* The error callback: one complete message, no newline. */
typedef void (*sg_diag_fn)(void *ud, const char *text);

typedef struct sg_policy sg_policy;
typedef struct sg_checker sg_checker;
typedef struct sg_result sg_result;
typedef struct sg_admission sg_admission;

/* ---- policies ----------------------------------------------------------------- */

typedef struct sg_load_options {
    const char *const *include_dirs;   /* extra directories for `use` */
    size_t ninclude;
    sg_diag_fn diag;                   /* compiler diagnostics and load errors */
    void *diag_ud;
    /* Fleet (docs/fleet.md).  require_signature: the path of a public key
     * (`shellgate keygen`); when set, only a bundle (.sgb) signed by that key loads
     * -- an unsigned, wrongly signed or altered bundle, and any policy that is not a
     * bundle, is refused (SG_EDATA).  scope: the name of this deployment
     * ("prod/eu/web-3"); a bundle built for a scope loads only where a matching
     * name is given. */
    const char *require_signature;
    const char *scope;
} sg_load_options;

/* Load POLICY (NULL: the embedded default pack): an embedded pack name
 * ("readonly"), a .rules file (compiled in memory), a compiled .sgt table or a
 * bundle (.sgb, verified first).  opt may be NULL.  0, or SG_EDATA (a bad pack,
 * table or bundle, or one the signature or scope requirement refuses),
 * SG_ENOINPUT, SG_ESOFTWARE; *out is NULL on failure. */
SG_API int sg_policy_load(const char *policy, const sg_load_options *opt, sg_policy **out);
/* A compiled table image in memory (copied, then verified: a corrupt or truncated
 * image is SG_EDATA, never an empty policy).  name is what messages call it.
 * Refused (SG_EDATA) when opt requires a signature: only a bundle file can carry
 * one. */
SG_API int sg_policy_load_table(const void *image, size_t len, const char *name, const sg_load_options *opt,
                                sg_policy **out);
/* Rule text in memory, compiled as a .rules file named name would be (`use` finds
 * the embedded stdlib and opt's include_dirs).  Refused like a table when opt
 * requires a signature. */
SG_API int sg_policy_load_rules(const char *text, size_t len, const char *name, const sg_load_options *opt,
                                sg_policy **out);
SG_API void sg_policy_free(sg_policy *p);
/* The name of the i-th pack embedded in the library ("default", "readonly", ...;
 * what sg_policy_load takes by name), or NULL past the last. */
SG_API const char *sg_embedded_pack(size_t i);
/* The pack's name ("readonly") and version, as its `pack` line says. */
SG_API const char *sg_policy_name(const sg_policy *p);
SG_API unsigned sg_policy_version(const sg_policy *p);

/* ---- deciding ------------------------------------------------------------------ */

/* NULL when memory runs out. */
SG_API sg_checker *sg_checker_new(const sg_policy *p);
SG_API void sg_checker_free(sg_checker *c);

/* The platform whose filesystems find the programs a line runs (docs/language.md
 * "Platforms"): on macOS and Windows they find a program by any case of its name
 * (`RM -rf /` runs rm), and Git Bash finds rm.exe by `rm.exe` or `RM.EXE`, so
 * there a program's name is read folded.  As SGR_PLATFORMS (runtime/unwrap.h). */
typedef enum {
    SG_PLATFORM_HOST = 0,              /* the one the library was built for */
    SG_PLATFORM_LINUX,                 /* program names as written */
    SG_PLATFORM_MACOS,                 /* ASCII case folded */
    SG_PLATFORM_WINDOWS                /* folded, and a trailing .exe dropped */
} sg_platform;

typedef struct sg_check_options {
    const char *cwd;                   /* the working directory; relative: from the
                                        * process's; NULL: the process's */
    const char *const *roots;          /* workspace roots; none: the cwd */
    size_t nroots;
    const char *home;                  /* for ~; NULL: $HOME */
    /* admission (sg_decide) */
    const char *agent;                 /* the rate-limit key and the log's agent; NULL: "default" */
    const char *session;               /* the approval session; NULL: the agent */
    const char *team;                  /* the key of the `per team` limits; NULL: "default" */
    sg_platform platform;              /* 0: the host's */
} sg_check_options;

/* Decide cmd[0..len) (need not be NUL-terminated) as the policy says: a pure
 * function of the policy, the line and the file system.  o may be NULL.  An ask
 * carries its approval id.  Never NULL. */
SG_API const sg_result *sg_check(sg_checker *c, const char *cmd, size_t len, const sg_check_options *o);
/* Decide, then admit (a NULL: sg_check): rate limits, approvals and the decision
 * log as the admission says, for o's agent and session.  An allow that a limit
 * refuses is a deny (rule "limit:NAME"); an approved ask is an allow; any error of
 * the store is a deny (rule "admission").  Never NULL. */
SG_API const sg_result *sg_decide(sg_checker *c, sg_admission *a, const char *cmd, size_t len,
                                  const sg_check_options *o);

/* ---- a result ------------------------------------------------------------------ */

SG_API sg_decision sg_result_decision(const sg_result *r);
/* The deciding rule: "pack:label", "default", "dynamic", "limit:NAME", "admission". */
SG_API const char *sg_result_rule(const sg_result *r);
/* The pack the deciding rule belongs to (the policy's own pack for "default",
 * "dynamic" and admission's rules). */
SG_API const char *sg_result_pack(const sg_result *r);
SG_API const char *sg_result_message(const sg_result *r);
SG_API const char *sg_result_hint(const sg_result *r);          /* "" when none */
SG_API const char *sg_result_approval_id(const sg_result *r);   /* "" unless the policy asked */
/* Admission: 1 a limit refused (and the seconds until it has room), the scope that
 * let an ask through ("once", "session", "always"; NULL), -1 not admitted through a
 * store / 0 refused or still asking / 1 admitted, the store's error (NULL). */
SG_API int sg_result_rate_limited(const sg_result *r);
SG_API double sg_result_wait_seconds(const sg_result *r);
SG_API const char *sg_result_approved(const sg_result *r);
SG_API int sg_result_admitted(const sg_result *r);
SG_API const char *sg_result_error(const sg_result *r);

/* The segments as evaluated, unwrapped and nested ones included (a segment of only
 * assignments or redirections has no argv). */
SG_API size_t sg_result_segments(const sg_result *r);
SG_API size_t sg_result_segment_argc(const sg_result *r, size_t i);
/* argv[k] after quote removal (NULL out of range). */
SG_API const char *sg_result_segment_arg(const sg_result *r, size_t i, size_t k);
SG_API sg_decision sg_result_segment_decision(const sg_result *r, size_t i);
SG_API const char *sg_result_segment_rule(const sg_result *r, size_t i);
/* Where segment i is nested (NULL at top level, "cmdsub", "script", ...), and
 * the segment it is nested in (-1 at top level). */
SG_API const char *sg_result_segment_nested(const sg_result *r, size_t i);
SG_API long sg_result_segment_parent(const sg_result *r, size_t i);
/* Why it cannot be analysed before it runs, or NULL. */
SG_API const char *sg_result_segment_dynamic(const sg_result *r, size_t i);
/* The bytes of the line the segment was written as: 0 and *off, *len, or -1 out
 * of range. */
SG_API int sg_result_segment_span(const sg_result *r, size_t i, size_t *off, size_t *len);

/* The result as one JSON object (no newline; *len its length when len is not
 * NULL): the object `shellgate check --json` prints and `check --batch` answers
 * (docs/library.md "The API" lists its keys).  NULL when memory runs out. */
SG_API const char *sg_result_json(const sg_result *r, size_t *len);

/* ---- explain ------------------------------------------------------------------- */

/* sg_check, recording every rule tried on each segment and on the whole line
 * (what `shellgate explain` prints).  The result is sg_check's, with the trace
 * below; a trace that ran out of memory is cut short (sg_result_rules_tried_all
 * says 0).  Never NULL. */
SG_API const sg_result *sg_explain(sg_checker *c, const char *cmd, size_t len, const sg_check_options *o);

/* One rule tried: on segment `segment` (-1: the rules about the whole line), its
 * id ("pack:label"), its pack, its own decision, and whether it matched. */
typedef struct sg_rule_tried {
    long segment;
    const char *rule, *pack;
    sg_decision decision;
    int matched;
} sg_rule_tried;

/* The rules sg_explain tried, in the order tried (0 after sg_check or
 * sg_decide); 1 when the list is whole. */
SG_API size_t sg_result_rules_tried(const sg_result *r);
SG_API int sg_result_rules_tried_all(const sg_result *r);
/* Entry k: 0 and *out, or -1 out of range. */
SG_API int sg_result_rule_tried(const sg_result *r, size_t k, sg_rule_tried *out);

/* A segment as the rules saw it, after unwrapping and normalising: the program
 * (argv[0]'s basename; "" when none), the subcommand (the first operand after
 * the options, as a `subcommand` condition sees it; NULL when none), the
 * options one by one (-rf as -r and -f, --out=x as --out), the directory it runs
 * in, and the paths the evaluation resolved (absolute; operands and option
 * values it had to judge).  NULL out of range, or when memory runs out. */
SG_API const char *sg_result_segment_program(const sg_result *r, size_t i);
SG_API const char *sg_result_segment_subcommand(const sg_result *r, size_t i);
SG_API size_t sg_result_segment_options(const sg_result *r, size_t i);
SG_API const char *sg_result_segment_option(const sg_result *r, size_t i, size_t k);
SG_API const char *sg_result_segment_cwd(const sg_result *r, size_t i);
SG_API size_t sg_result_segment_paths(const sg_result *r, size_t i);
SG_API const char *sg_result_segment_path(const sg_result *r, size_t i, size_t k);

/* ---- admission ------------------------------------------------------------------ */

/* ORDER SGA_STORE_DOWN, ORDER SGA_APPROVE (lib/admission.c asserts the values) */
typedef enum { SG_STORE_DOWN_DENY = 0, SG_STORE_DOWN_LOCAL = 1 } sg_store_down;
typedef enum { SG_APPROVE_ONCE = 1, SG_APPROVE_SESSION = 2, SG_APPROVE_ALWAYS = 3 } sg_approve_scope;

typedef struct sg_admission_options {
    /* 1: rate limits and approvals against a store (docs/admission.md); 0: no
     * store -- approval ids, non_interactive and the log only. */
    int store;
    const char *state;                 /* the state file; NULL: $XDG_STATE_HOME/shellgate/state */
    const char *rate_store;            /* NULL: the state file alone; "redis://HOST[:PORT][/DB]" */
    sg_store_down rate_store_down;     /* when the rate store cannot be reached */
    unsigned rate_store_timeout_ms;    /* 0: 250 */
    /* Open the store when a command first needs it (an ask, or a policy with
     * limits); an error then refuses that command instead of failing here. */
    int lazy;
    const char *log;                   /* the decision log (docs/admission.md); NULL: none */
    unsigned long long log_max_bytes;  /* its size before rotation; 0: no cap */
    int non_interactive;               /* an ask nobody has answered is a deny */
    sg_diag_fn diag;                   /* errors and warnings (a log that cannot be written) */
    void *diag_ud;
    /* An injected clock, nanoseconds since the epoch (NULL: the real one).  A store
     * obeys it only if it was created under one, so it cannot free a real slot. */
    int64_t (*clock)(void *ud);
    void *clock_ud;
    int crash_test;                    /* tests/admission.sh only: kill the process at
                                        * this point of the next state write; 0 */
} sg_admission_options;

/* 0, or SG_EUSAGE (a malformed store URL, no usable state path) or SG_ESOFTWARE,
 * described to o->diag.  A log that cannot be opened only warns. */
SG_API int sg_admission_open(const sg_admission_options *o, sg_admission **out);
SG_API void sg_admission_free(sg_admission *a);
/* Where the store keeps its state (a state file, a Redis URL); "" without one. */
SG_API const char *sg_admission_where(sg_admission *a);

/* Is id an approval id (32 hex digits, as an ask's result carries)? */
SG_API int sg_is_approval_id(const char *id);

/* What sg_admission_approve approved: the command, where it was asked, and for
 * SG_APPROVE_ALWAYS the file the approval was saved to. */
typedef struct sg_approval {
    const char *cmd, *cwd, *saved_to;
} sg_approval;

/* Answer the ask with approval id `id`.  session NULL with SG_APPROVE_SESSION: the
 * session it was asked from.  SG_APPROVE_ALWAYS refuses a command that runs a
 * shell, an interpreter or a wrapper (approving it for good would approve code
 * that is not on the line).  0 approved (*out filled), 1 no such ask waits, -1 an
 * error (described to diag). */
SG_API int sg_admission_approve(sg_admission *a, const char *id, sg_approve_scope scope, const char *session,
                                sg_approval *out);
/* Forget every limit, approval and pending ask of the store: 0, or -1 (diag). */
SG_API int sg_admission_reset(sg_admission *a);

/* A pending ask or a granted approval, as sg_admission_list hands it to fn (valid
 * during the call).  scope 0: an ask waiting for `approve` (cmd, cwd and session
 * say what was asked, where and from which session); SG_APPROVE_ONCE or _SESSION:
 * an approval in the store (session: the session it holds for); SG_APPROVE_ALWAYS:
 * an approval for good, from the overlay file (cmd and cwd as saved).  created:
 * seconds since the epoch (0 when not recorded). */
typedef struct sg_approval_entry {
    const char *id;
    int scope;
    const char *cmd, *cwd, *session;
    double created;
} sg_approval_entry;
typedef void (*sg_approval_fn)(void *ud, const sg_approval_entry *e);
/* Every pending ask and approval, the store's first: 0, or -1 (diag; the Redis
 * rate store cannot list them). */
SG_API int sg_admission_list(sg_admission *a, sg_approval_fn fn, void *ud);
/* Forget the pending ask and every approval (for good included) with this id: 0
 * revoked, 1 nothing had that id, -1 an error (diag). */
SG_API int sg_admission_revoke(sg_admission *a, const char *id);

/* ---- JSON lines ------------------------------------------------------------------ */

typedef struct sg_batch_options {
    const char *cwd;                   /* for lines without "cwd"; NULL: the process's */
    const char *const *roots;          /* for lines without "roots" */
    size_t nroots;
    const char *agent, *session;       /* as sg_check_options */
    int threads;                       /* lines answered at once; 0: the CPUs this process
                                        * may use, at most 8.  One when a is not pure
                                        * (a store or a log keeps input order). */
    const char *team;                  /* as sg_check_options */
    sg_platform platform;              /* as sg_check_options */
} sg_batch_options;

/* `check --batch`: read JSON lines {"cmd": "...", "cwd": "/abs", "roots": [...]}
 * from in_fd and write one answer a line, in input order, to out_fd (each out
 * before the reader could wait for more input).  A line that is not a valid
 * request gets {"decision": "deny", "error": "..."} and the batch goes on.  0 at
 * the end of input, SG_EIO (a read or write failed) or SG_ESOFTWARE. */
SG_API int sg_batch(const sg_policy *p, sg_admission *a, int in_fd, int out_fd, const sg_batch_options *o);

#ifdef __cplusplus
}
#endif
#endif
