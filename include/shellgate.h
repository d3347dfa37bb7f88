/* shellgate.h - the library face: load a policy, check command lines.
 *
 * A policy is an embedded pack name ("default", "readonly"), a .rules file
 * (compiled in memory) or a compiled .sgt table; it is immutable once loaded and
 * may be shared by threads.  A checker belongs to one thread; the strings a result
 * hands out stay valid until that checker's next sg_check.  The library never
 * prints: diagnostics reach the callback given to sg_policy_load. */
#ifndef SHELLGATE_H
#define SHELLGATE_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SG_API __attribute__((visibility("default")))

typedef enum { SG_ALLOW = 0, SG_DENY = 1, SG_ASK = 2 } sg_decision;

typedef struct sg_policy sg_policy;
typedef struct sg_checker sg_checker;
typedef void (*sg_diag_fn)(void *ud, const char *text);

typedef struct sg_load_options {
    const char *const *include_dirs;   /* extra directories for `use` */
    size_t ninclude;
    sg_diag_fn diag;                   /* compiler diagnostics, one per call */
    void *diag_ud;
    /* Fleet (docs/fleet.md).  require_signature: the path of a public key
     * (`shellgate keygen`); when set, only a bundle (.sgb) signed by that key loads
     * -- an unsigned, wrongly signed or altered bundle, and any policy that is not a
     * bundle, is refused (65).  scope: the name of this deployment ("prod/eu/web-3");
     * a bundle built for a scope loads only where a matching name is given. */
    const char *require_signature;
    const char *scope;
} sg_load_options;

/* Load POLICY (NULL: the embedded default pack): a pack name, a .rules file, a
 * compiled .sgt table or a bundle (.sgb, verified first: docs/fleet.md).  Returns 0,
 * or a non-zero status: 65 for a bad pack, table or bundle, or one the signature
 * or scope requirement refuses (diagnostics sent), 66 for a file that cannot be
 * read, 70 out of memory. */
SG_API int sg_policy_load(const char *policy, const sg_load_options *opt, sg_policy **out);
SG_API void sg_policy_free(sg_policy *p);
SG_API const char *sg_policy_name(const sg_policy *p);

SG_API sg_checker *sg_checker_new(const sg_policy *p);
SG_API void sg_checker_free(sg_checker *c);

typedef struct sg_check_options {
    const char *cwd;                   /* absolute; NULL: the process's cwd */
    const char *const *roots;          /* workspace roots; none: the cwd */
    size_t nroots;
} sg_check_options;

typedef struct sg_verdict {
    sg_decision decision;
    const char *rule;                  /* deciding rule id ("default", "dynamic") */
    const char *message;
    const char *hint;                  /* "" when none */
} sg_verdict;

/* Decide one command line.  Never fails: bad input yields SG_DENY with a message
 * that says why. */
SG_API sg_verdict sg_check(sg_checker *c, const char *cmd, size_t len, const sg_check_options *o);
SG_API const char *sg_decision_name(sg_decision d);

#ifdef __cplusplus
}
#endif
#endif
