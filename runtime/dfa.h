/* dfa.h - running the compiled pattern automata stored in a table.
 *
 * A DFA here is a byte-class table: state 0 is the dead state, state 1 the start
 * state; trans[s * nclasses + classmap[byte]] is the next state; accept[s] is -1 or
 * the lowest pattern id the state accepts.  Patterns are always compiled for a
 * whole-string match (a regex or a substring is wrapped in "any prefix/suffix" by
 * the compiler), so running is one table lookup per byte: linear in the input, no
 * backtracking, whatever the pattern (ORDER DFA_LAYOUT: compiler/redfa.c writes
 * this layout, runtime/table.c verifies it). */
#ifndef SGR_DFA_H
#define SGR_DFA_H
#include <stddef.h>
#include <stdint.h>

typedef struct sgr_dfa {
    uint32_t nstates;
    uint32_t nclasses;
    const uint8_t *classmap;     /* [256] */
    const uint32_t *trans;       /* [nstates * nclasses], each < nstates */
    const int32_t *accept;       /* [nstates] */
} sgr_dfa;

/* Run d over s[0..n); return the accept value of the final state (-1: no match). */
static inline int32_t sgr_dfa_match(const sgr_dfa *d, const char *s, size_t n)
{
    uint32_t st = 1;
    const uint8_t *p = (const uint8_t *)s;
    for (size_t i = 0; i < n; i++) {
        st = d->trans[(size_t)st * d->nclasses + d->classmap[p[i]]];
        if (st == 0)
            return -1;
    }
    return d->accept[st];
}

#endif
