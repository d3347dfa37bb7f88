/* pathgroup.h - `path inside` for many sets in one pass over a path.
 *
 * A pack checks every path operand against several sets (the default pack: secret
 * files, secret directories, secret globs, network devices, ...).  Each set has its
 * own automaton, so a path used to be run once per set.  A path group runs the
 * product of up to SGR_PG_MAX of those automata instead: one state of the product
 * is the tuple of the sets' states, and its accept mask has bit i set when set i's
 * automaton accepts in it.  One run over a path then decides `path inside` for
 * every set of the group, at one table lookup per byte whatever the number of sets.
 *
 * The product is built lazily, like a lazy DFA: a product state and each of its
 * transitions is made the first time a run needs it, from the sets' verified
 * automata, and kept.  The number of states is bounded (max_states); a run that
 * would pass the bound fails (-1) and the caller falls back to one run per set, so
 * the bound costs speed, never an answer.  sgr_pg_trim, called between runs that
 * share no state index, starts the cache afresh when it is over half full.
 *
 * Equivalence.  For each set i, a run from the start state over a string s,
 * with the accept masks of the states reached before every '/' at index >= 1 and
 * of the final state or-ed together, has bit i set exactly when sgr_dfa_match_dirs
 * (dfa.h) accepts s for set i's automaton: component i of a product state is the
 * state set i's automaton is in after the same bytes, so the masks read are the
 * accept values sgr_dfa_dirs_from reads (its early exits, at an accepting sink and
 * over bytes that keep a non-accepting state, do not change what it returns).
 * tests/test_redfa.c checks this against one run per set on random paths.
 *
 * Ownership: the group keeps pointers into the table's automata; the table must
 * outlive it.  Not thread-safe: one group per evaluation context. */
#ifndef SGR_PATHGROUP_H
#define SGR_PATHGROUP_H
#include <stdint.h>
#include "dfa.h"

#define SGR_PG_MAX 32           /* sets in a group: bits of a mask */
#define SGR_PG_DEAD 0u          /* the state where every set's automaton is dead */

typedef struct sgr_pgroup sgr_pgroup;

/* A group over dfas[0..n) (n <= SGR_PG_MAX; bit i of every mask is dfas[i]),
 * keeping at most max_states product states (at least 2; at most 65535).
 * NULL on allocation failure or a bad argument. */
sgr_pgroup *sgr_pg_new(const sgr_dfa *const *dfas, uint32_t n, uint32_t max_states);
void sgr_pg_free(sgr_pgroup *g);

/* Forget every product state but the dead and start states when more than half
 * of max_states are in use.  Every state index handed out before is void. */
void sgr_pg_trim(sgr_pgroup *g);

/* Run from *st over q[0..end) of a string that starts at p (p <= q <= end): or
 * into *hit the accept mask of the state reached before each '/' at an index
 * >= 1 of the string, and leave in *st the state at end.  The caller ors in
 * sgr_pg_accepts(g, *st) when end is the end of the whole string.  Returns 0, or
 * -1 (nothing changed) when a state it needs cannot be made: the cache is full.
 * It never allocates: sgr_pg_new reserves room for max_states states. */
int sgr_pg_run(sgr_pgroup *g, uint32_t *st, const uint8_t *p, const uint8_t *q, const uint8_t *end,
               uint32_t *hit);

/* sgr_pg_run from st (SGR_PG_START: the state before any byte) to end, the end
 * of the whole string, with sgr_pg_accepts of the state there or-ed into *hit:
 * the whole of `path inside` after a prefix in one call.  0, or -1 as
 * sgr_pg_run (then *hit is unchanged). */
#define SGR_PG_START UINT32_MAX
int sgr_pg_run_end(sgr_pgroup *g, uint32_t st, const uint8_t *p, const uint8_t *q, const uint8_t *end,
                   uint32_t *hit);

/* The state before any byte. */
uint32_t sgr_pg_start(const sgr_pgroup *g);

/* The accept mask of state st. */
uint32_t sgr_pg_accepts(const sgr_pgroup *g, uint32_t st);

/* Product states in use (for tests and figures). */
uint32_t sgr_pg_states(const sgr_pgroup *g);

/* An automaton accepting exactly the strings words[0..n) (lengths lens[]), built at
 * run time so a set's exact words can join a group beside its patterns: a trie,
 * one state a prefix.  sgr_dfa_match_dirs on trie->d answers what
 * sgr_set_words_dirs (table.h) answers for those words.  trie->d points into
 * *trie, which must not move.  Returns 0, or -1 when it would need more than
 * max_states states or memory runs out (then nothing is held). */
typedef struct sgr_pg_trie {
    sgr_dfa d;
    uint8_t classmap[256];
    uint32_t *trans;
    int32_t *accept;
    uint8_t *loops;
} sgr_pg_trie;

int sgr_pg_trie_build(sgr_pg_trie *tr, const char *const *words, const uint32_t *lens, uint32_t n,
                      uint32_t max_states);
void sgr_pg_trie_free(sgr_pg_trie *tr);

#endif
