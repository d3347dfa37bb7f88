/* expand.h - what bash does to a word before a command runs, done by shellgate.
 *
 * sgx_expand reads one word as written (its bytes in the line, from the parser's
 * span) and produces the fields a program receives: tilde expansion (~, ~user,
 * ~+, ~-; after = and : in assignments and assignment-like arguments), parameters
 * ($NAME, ${NAME}, ${NAME:-word} and -, :+, +, ${#NAME}, $?), command substitution
 * $(...) through a callback, quote removal, field splitting of unquoted
 * expansions on blanks and newlines, and pathname expansion of unquoted glob
 * characters against the given directory (no match: the word stays, as in bash).
 * What it does not do is an error naming the construct, never a guess: brace
 * expansion, arithmetic, backquotes, positional and special parameters other than
 * $?, other ${...} operators.  The fields are what the policy is then shown
 * as literal words (sgx_quote), so whatever this reading is, the policy decides on
 * exactly what runs.
 *
 * Ownership: fields and messages live in the expander's arena. */
#ifndef SGX_EXPAND_H
#define SGX_EXPAND_H
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"

/* Where a word stands: what of the expansions above apply. */
enum {
    SGX_CTX_ARGV,                /* all of them; any number of fields */
    SGX_CTX_REDIR,               /* all of them; must give one field */
    SGX_CTX_ASSIGN,              /* NAME=value: no splitting, no globs, ~ after = and :;
                                  * one field "NAME=value" */
    SGX_CTX_HERESTR              /* <<< word: no splitting, no globs; one field */
};

/* Return codes of sgx_expand. */
enum { SGX_EX_OK = 0, SGX_EX_UNSUPPORTED = -1, SGX_EX_OOM = -2, SGX_EX_ABORT = -3 };

typedef struct sgx_expander {
    sg_arena *a;
    /* the value of a variable, or NULL when unset */
    const char *(*var)(void *ud, const char *name, size_t len);
    /* run the command text[0..len) of a $(...) and hand back its output (trailing
     * newlines are removed here); NULL: do not run anything, substitute "" and set
     * used_cmdsub.  A callback returns 0, or SGX_EX_ABORT to stop everything. */
    int (*cmdsub)(void *ud, const char *text, size_t len, char **out, size_t *outlen);
    int dry;                     /* cmdsub only looks at the text (decides it, runs
                                  * nothing): its output is ignored, "" stands for it
                                  * as with NULL */
    void *ud;
    const char *cwd;             /* absolute: where relative globs are matched */
    int status;                  /* $? */
    uint32_t max_fields;         /* 0: 4096 */
    /* set by each call */
    const char *error;           /* SGX_EX_UNSUPPORTED: why (static or arena text) */
    int used_cmdsub;             /* the word held a $(...) */
    int used_status;             /* the word read $? */
} sgx_expander;

typedef struct sgx_fields {
    char **v;                    /* NUL-terminated strings (none holds a NUL) */
    uint32_t n;
} sgx_fields;

/* Expand the word src[0..len) in context ctx into *out.  SGX_EX_OK, or one of the
 * codes above (e->error says why for SGX_EX_UNSUPPORTED). */
int sgx_expand(sgx_expander *e, const char *src, size_t len, int ctx, sgx_fields *out);

/* Does src[0..len) start with NAME= (an assignment-like word: `export A=$x`)? */
int sgx_word_is_assign(const char *src, size_t len);

/* s[0..n) as one single-quoted shell word ('it'\''s'); in a.  NULL on OOM. */
char *sgx_quote(sg_arena *a, const char *s, size_t n);

#endif
