/* pathpat.h - path patterns: every path a word the shell still expands may name.
 *
 * A glob (`/e?c/sha*`), a brace alternative or a partly-unknown word (`~/.s${x}sh`)
 * resolves to a pattern rather than to one path: literal bytes, then wildcards
 * where the shell fills something in.  `path inside` and `path is` ask whether
 * some string the pattern can produce is in a set: the pattern and the set's
 * automaton are walked together (a product of the two, breadth first over
 * pattern position, automaton state and where in a component the string is), so
 * the answer is exact for the language of the pattern and takes time linear in
 * its size times the automaton's, never backtracking.
 *
 * Elements (SGR_PP_*): LIT one byte; ONE, STAR and CLASS are a glob's `?`, `*`
 * and `[...]`: never '/', and never a '.' that starts a component (bash matches
 * a leading dot only explicitly; dotglob aside); XSTAR is a run of bytes other
 * than '/' (an expansion that is part of one name); ANY is any run of bytes, '/'
 * included (an expansion that may span directories); STEM is a run of bytes
 * other than '/' and '.' (what completes a written name start: no extension of
 * its own); DIRS is a run of '/' and 0x01 bytes (some directories whose names
 * say nothing: 0x01 is the evaluator's "some name").
 *
 * Ownership: a pattern's arrays belong to whoever built it (the evaluator's
 * arena); nothing here allocates but sgr_pp_dfa, which takes its scratch from
 * the arena it is given. */
#ifndef SGR_PATHPAT_H
#define SGR_PATHPAT_H
#include <stddef.h>
#include <stdint.h>
#include "dfa.h"
#include "../common/arena.h"

enum { SGR_PP_LIT, SGR_PP_ONE, SGR_PP_STAR, SGR_PP_CLASS, SGR_PP_XSTAR, SGR_PP_ANY, SGR_PP_STEM,
       SGR_PP_DIRS };

/* Element i is el[i] & 0xff; LIT's byte, or CLASS's index into cls, is el[i] >> 8. */
typedef struct sgr_ppat {
    const uint32_t *el;
    uint32_t n;
    const uint64_t (*cls)[4];   /* CLASS byte sets ('/' is never in one) */
    const struct sgr_ppat *words; /* the pattern for a set's exact words, when it
                                   * differs (NULL: this one); see eval.c */
} sgr_ppat;

/* Can pattern p produce a string that automaton d accepts (exact), or (dirs)
 * such a string or a leading part of one that stops before a '/' at index >= 1
 * (`path inside`: the directories above a path)?  1 yes, 0 no; 1 also when the
 * walk would need more scratch than allowed (a huge automaton times a long
 * pattern), which fails closed; -1 when the arena runs out. */
int sgr_pp_dfa(const sgr_ppat *p, const sgr_dfa *d, int dirs, sg_arena *a);

/* The same question for one exact string w[0..n): is w a string of p (exact), or
 * (dirs) also a leading part of one that stops before a '/' (w != "/")? */
int sgr_pp_word(const sgr_ppat *p, const char *w, size_t n, int dirs);

#endif
