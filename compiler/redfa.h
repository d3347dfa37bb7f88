/* redfa.h - globs, regexes and literals compiled to one DFA (see runtime/dfa.h).
 *
 * Ownership: sgc_dfa_build allocates out->trans and out->accept with sg_malloc;
 * sgc_dfa_free releases them.  Nothing here prints: errors are written to err.
 *
 * Semantics (the contract; compiler/redfa.c implements exactly this).  Every
 * pattern is matched against the WHOLE input string:
 *   EXACT      the string equals text.
 *   SUBSTRING  text occurs anywhere (Σ* text Σ*); "" matches every string.
 *   GLOB       whole-string shell glob: '*' any run of bytes (including '/'),
 *              '?' any one byte, [abc] [a-z] [!a-z] [^a-z] [[:alpha:]], ']' first
 *              in a class is literal, '\x' is x (also inside a class); an
 *              unterminated '[' or a trailing '\' is an error, not a literal.
 *   REGEX      ERE subset with SEARCH semantics: matches if some substring matches
 *              (Σ* re Σ*).  A '^' at the start of a top-level alternative anchors
 *              it at the start, an unescaped '$' at its end anchors it at the end
 *              ("^a|b$" is "^a" or "b$"); '^'/'$' anywhere else is a syntax error.
 *              Syntax: literals, '.' (any byte, newline included), [..] with
 *              ranges, [^..], [[:alpha:]] digit space alnum upper lower punct
 *              xdigit blank cntrl print graph (ASCII), \d \D \w \W \s \S \t \n
 *              \r \f \v \xHH, '\' before any other non-alphanumeric byte is that
 *              byte; ( ) and (?: ); '|' with empty alternatives; * + ? {m} {m,}
 *              {m,n} with m, n <= 255; quantifiers may be stacked (a{2}{3},
 *              at most 4 in a row); groups nest at most 200 deep.
 *              Rejected with a message: lazy (*?) and possessive (*+) quantifiers,
 *              backreferences, lookaround and other (?...) groups, unknown
 *              escapes such as \b, a '{' that does not start a repetition.
 *   icase      ASCII case-insensitive, for that pattern only; a negated class
 *              folds first, then negates ([^a] matches neither 'a' nor 'A').
 * A byte is a byte: no UTF-8 decoding, NUL is an ordinary byte.
 *
 * The DFA (layout of runtime/dfa.h, ORDER DFA_LAYOUT): accept[s] is the lowest id
 * among the patterns accepting in state s, or -1; state 0 is dead, state 1 the
 * start.  It is minimal, its byte classes are the coarsest ones (two bytes share a
 * class iff every state treats them alike), and states are numbered in BFS order
 * from the start over classes in order (classes numbered by their lowest byte), so
 * the output bytes are a function of the accepted language and ids alone: equal or
 * equivalent pattern lists give identical tables. */
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

/* Limits.  SGC_NFA_MAX_STATES bounds one pattern's automaton before determinising
 * (repetitions multiply: a{255}{255}{255} is refused, not allocated);
 * SGC_NFA_MAX_TOTAL bounds the sum over a pattern list. */
#define SGC_REPEAT_MAX 255
#define SGC_NFA_MAX_STATES 100000u
#define SGC_NFA_MAX_TOTAL 4000000u
#define SGC_DFA_DEFAULT_MAX_STATES 4096u   /* what max_states == 0 means */

/* Build one DFA accepting the union of pats.  max_states bounds the DFA (a clear
 * error names the pattern when it would be exceeded).  Returns 0 or -1.
 * Details: max_states counts the states of the unminimised subset construction,
 * dead state included (0 = SGC_DFA_DEFAULT_MAX_STATES).  Ids must be >= 0.  On
 * error err->msg says why ("out of memory" for allocation failure), pattern_id is
 * the pattern at fault (for a state-limit error: the single pattern that needs
 * too many states on its own, else the first glob/regex of the list) and offset
 * the byte in its text; *out is left zeroed.  Nothing leaks on any path.
 * Because the bound applies before minimisation, a search pattern such as
 * /a.{12}/ (minimal DFA: 14 states; subset construction: 2^13) is refused too,
 * and an unanchored self-overlapping run (substring "xxx...x" of length n) costs
 * O(n^2) time to determinise.
 * Cost: a union of substrings sharing one id is an Aho-Corasick automaton; with
 * distinct ids the DFA must also remember the lowest id seen so far, which can
 * need (number of substrings)^2 states - give a "contains any of" set one id. */
int sgc_dfa_build(const sgc_pattern *pats, size_t n, uint32_t max_states,
                  sgc_dfa *out, sgc_dfa_error *err);
/* Check a regex's syntax only (for diagnostics while parsing). 0 or -1; on error
 * err->offset is the byte offset of the problem in re, err->pattern_id is -1. */
int sgc_regex_check(const char *re, size_t len, sgc_dfa_error *err);
/* Does the pattern match no string at all (e.g. /a[^\x00-\xff]/)? 1 yes, 0 no,
 * -1 error (syntax, limits, memory: see err).  Decided on the NFA by reachability,
 * so max_states is not needed and only kept for the signature. */
int sgc_pattern_is_empty(const sgc_pattern *p, uint32_t max_states, sgc_dfa_error *err);
/* Release what sgc_dfa_build allocated and zero *d; safe on a zeroed sgc_dfa. */
void sgc_dfa_free(sgc_dfa *d);

#endif
