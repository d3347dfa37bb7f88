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
#include <string.h>

typedef struct sgr_dfa {
    uint32_t nstates;
    uint32_t nclasses;
    const uint8_t *classmap;     /* [256] */
    const uint32_t *trans;       /* [nstates * nclasses], each < nstates */
    const int32_t *accept;       /* [nstates] */
    /* derived by sgr_dfa_init; they speed a run up and never change its result */
    uint32_t sink;               /* an accepting state no byte leaves, or 0: none */
    int16_t start_exit;          /* the one byte that leaves the start state; -1: none
                                  * does; -2: more than one (see sgr_dfa_skip) */
    const uint8_t *loops;        /* [nstates]: sgr_dfa_state_loops (non-zero: a state
                                  * worth skipping through) */
} sgr_dfa;

/* How state s, whose transitions are row[0..nc), keeps to itself: 2 on every
 * class, 1 on at least half of them (worth skipping through), else 0.  The loader
 * computes it while it verifies the transitions, sgr_table_dfa (table.h) when a
 * trusted table's automaton is first run. */
static inline uint8_t sgr_dfa_state_loops(const uint32_t *row, uint32_t nc, uint32_t s)
{
    if (s == 0)
        return 0;
    /* four transitions a step in a vector (GCC's and Clang's vector extension: SSE2
     * here, what the target has elsewhere); most states of a big DFA leave on most
     * classes, so stop once more than half have left */
    typedef uint32_t sgr_v4u __attribute__((vector_size(16)));
    const sgr_v4u sv = { s, s, s, s };
    uint32_t left = 0, c = 0;
    for (; c + 16 <= nc; c += 16) {
        sgr_v4u acc = { 0, 0, 0, 0 };
        for (uint32_t j = 0; j < 16; j += 4) {
            sgr_v4u v;
            memcpy(&v, row + c + j, sizeof v);
            acc -= (sgr_v4u)(v != sv);  /* a lane that left: -1, so this adds 1 */
        }
        left += acc[0] + acc[1] + acc[2] + acc[3];
        if (2 * left > nc)
            return 0;
    }
    for (; c < nc; c++)
        left += row[c] != s;
    return (uint8_t)(left == 0 ? 2 : 2 * left <= nc);
}

/* Fill d from verified arrays, loops[s] = sgr_dfa_state_loops for every state,
 * and derive the acceleration: an unanchored pattern (`.*(x).*`) stays in its
 * start state until one of a few bytes comes, and once it has matched sits in an
 * accepting sink, so a run can skip to the next such byte (memchr when it is one
 * byte) and stop at the sink; the same holds for any state that most bytes leave
 * unchanged (`*.pem` after a '/').  Cost: a pass over the states, and over 256
 * bytes only when few classes leave the start state. */
static inline void sgr_dfa_init(sgr_dfa *d, uint32_t ns, uint32_t nc, const uint8_t *cm,
                                const uint32_t *tr, const int32_t *acc, const uint8_t *loops)
{
    d->nstates = ns;
    d->nclasses = nc;
    d->classmap = cm;
    d->trans = tr;
    d->accept = acc;
    d->loops = loops;
    d->sink = 0;
    for (uint32_t s = 1; s < ns && !d->sink; s++)
        if (loops[s] == 2 && acc[s] >= 0)
            d->sink = s;
    d->start_exit = -2;
    if (!loops[1])
        return;                      /* most bytes leave the start state */
    uint32_t leaving = 0;
    for (uint32_t c = 0; c < nc && leaving <= 1; c++)
        leaving += tr[nc + c] != 1;
    if (leaving > 1)
        return;
    int only = -1, k = 0;
    for (uint32_t b = 0; b < 256 && k <= 1; b++)
        if (tr[nc + cm[b]] != 1) {
            only = (int)b;
            k++;
        }
    if (k <= 1)
        d->start_exit = (int16_t)only;
}

/* The first byte in p[0..end) that leaves state st (d->loops[st]), or end.
 * Without a state to carry from byte to byte, the loads of successive bytes are
 * independent and pipeline, unlike a run of the automaton. */
static inline const uint8_t *sgr_dfa_skip(const sgr_dfa *d, uint32_t st, const uint8_t *p,
                                          const uint8_t *end)
{
    if (st == 1 && d->start_exit != -2) {
        if (d->start_exit == -1)
            return end;
        const uint8_t *q = memchr(p, d->start_exit, (size_t)(end - p));
        return q ? q : end;
    }
    const uint32_t *row = d->trans + (size_t)st * d->nclasses;
    while (p < end && row[d->classmap[*p]] == st)
        p++;
    return p;
}

/* Run d over s[0..n); return the accept value of the final state (-1: no match). */
static inline int32_t sgr_dfa_match(const sgr_dfa *d, const char *s, size_t n)
{
    uint32_t st = 1;
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    while (p < end) {
        if (d->loops[st]) {
            p = sgr_dfa_skip(d, st, p, end);
            if (p == end)
                break;
        }
        st = d->trans[(size_t)st * d->nclasses + d->classmap[*p++]];
        if (st == 0)
            return -1;
        if (st == d->sink)
            break;
    }
    return d->accept[st];
}

/* The `path inside` run, resumable: from state *st at q in the string that starts
 * at p, stop at end.  Returns 1 as soon as a leading part of the string that stops
 * before a '/' at or after q is accepted (or the accepting sink is reached, which
 * accepts the end whatever follows); else 0 with *st the state at end (0: dead).
 * Callers check accept[*st] themselves when end is the end of the whole string. */
static inline int sgr_dfa_dirs_from(const sgr_dfa *d, uint32_t *st, const uint8_t *p,
                                    const uint8_t *q, const uint8_t *end)
{
    uint32_t s = *st;
    while (q < end && s != 0) {
        if (d->loops[s] && d->accept[s] < 0) {     /* no prefix ending in s matches */
            q = sgr_dfa_skip(d, s, q, end);
            if (q == end)
                break;
        }
        if (q > p && *q == '/' && d->accept[s] >= 0)
            return 1;
        s = d->trans[(size_t)s * d->nclasses + d->classmap[*q++]];
        if (s != 0 && s == d->sink)
            return 1;
    }
    *st = s;
    return 0;
}

/* Is s[0..n), or a leading part of it that stops before a '/', accepted?  The
 * state after l bytes decides the prefix of length l, so one run decides them all
 * (`path inside`). */
static inline int sgr_dfa_match_dirs(const sgr_dfa *d, const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    uint32_t st = 1;
    return sgr_dfa_dirs_from(d, &st, p, p, p + n) || d->accept[st] >= 0;
}

#endif
