/* shexpand.h - the expansions bash still makes in a word the parser has read:
 * brace expansion of its text, and the extent of each $... or `...` in it.
 *
 * Pure functions over a word's text as the parser keeps it (quotes removed, an
 * expansion kept verbatim and flagged: shparse.h SGR_W_*).  Quoting is gone by
 * then, so a quoted brace or '$' in a word that also has an unquoted one is read
 * as unquoted too: more words, never fewer.  Shell grammar, shared by the
 * evaluator and the reference evaluator as the parser is.
 *
 * Ownership: sgr_sx_braces puts its words in the caller's arena. */
#ifndef SGR_SHEXPAND_H
#define SGR_SHEXPAND_H
#include <stddef.h>
#include <stdint.h>
#include "../common/arena.h"

/* The length of the expansion that starts at w[0] ('$' or '`') in w[0..n):
 * $name, $1, $?, ${...}, $(...), $((...)), $[...], `...` (nesting and quotes
 * inside counted as bash counts them; an unclosed one runs to the end).  0: w[0]
 * is a literal '$' (before a blank, a quote or the end). */
size_t sgr_sx_expansion(const char *w, size_t n);

/* Each variable a word expands by name, left to right: $NAME, ${NAME...},
 * ${!NAME...}, ${#NAME...}, and the ones inside a ${...} (${A:-$B} expands B too);
 * not the text of a $(...) or `...`, whose commands are segments of their own.
 * Call with *pos 0; returns 1 and sets *name and *len to the next one, 0 at the end. */
int sgr_sx_next_var(const char *w, size_t n, size_t *pos, const char **name, size_t *len);

/* Brace expansion of w[0..n) as bash makes it (docs: bash(1) "Brace
 * Expansion"): preamble, {a,b,...} or {x..y[..incr]} (integers, or single
 * letters), postscript, nested, left to right; `${` is not one; empty words are
 * dropped.  Returns the number of words put in words[]/lens[] (arena strings),
 * 0 when w holds no brace expansion (it stands as it is), -1 when it would make
 * more than max words, -2 when the arena runs out. */
int sgr_sx_braces(sg_arena *a, const char *w, size_t n, const char **words, uint32_t *lens, size_t max);

#endif
