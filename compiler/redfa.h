/* redfa.h - globs, regexes and literals compiled to one DFA (see runtime/dfa.h).
 *
 * Ownership: sgc_dfa_build allocates out->trans and out->accept with sg_malloc;
 * sgc_dfa_free releases them.  Nothing here prints: errors are written to err. */
#ifndef SGC_REDFA_H
#define SGC_REDFA_H
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SGC_PAT_EXACT,       /* the whole string equals text */
    SGC_PAT_SUBSTRING,   /* text occurs anywhere in the string */
    SGC_PAT_GLOB,        /* shell glob over the whole string: * ? [..] [!..] \x;
                          * '*' also matches '/' */
    SGC_PAT_REGEX        /* ERE subset, search semantics unless anchored ^...$ */
} sgc_pat_kind;

typedef struct sgc_pattern {
    sgc_pat_kind kind;
    const char *text;
    size_t len;
    int icase;           /* ASCII case-insensitive */
    int32_t id;          /* reported by accept[]; the lowest matching id wins */
} sgc_pattern;

typedef struct sgc_dfa {
    uint32_t nstates, nclasses;
    uint8_t classmap[256];
    uint32_t *trans;     /* [nstates * nclasses]; state 0 dead, 1 start */
    int32_t *accept;     /* [nstates] */
} sgc_dfa;

typedef struct sgc_dfa_error {
    char msg[256];
    int32_t pattern_id;  /* which pattern, or -1 */
    size_t offset;       /* byte offset inside that pattern's text */
} sgc_dfa_error;

/* Build one DFA accepting the union of pats.  max_states bounds the DFA (a clear
 * error names the pattern when it would be exceeded).  Returns 0 or -1. */
int sgc_dfa_build(const sgc_pattern *pats, size_t n, uint32_t max_states,
                  sgc_dfa *out, sgc_dfa_error *err);
/* Check a regex's syntax only (for diagnostics while parsing). 0 or -1. */
int sgc_regex_check(const char *re, size_t len, sgc_dfa_error *err);
/* Does the pattern match no string at all (e.g. /a[^\x00-\xff]/)? 1 yes, 0 no,
 * -1 error. */
int sgc_pattern_is_empty(const sgc_pattern *p, uint32_t max_states, sgc_dfa_error *err);
void sgc_dfa_free(sgc_dfa *d);

#endif
