/* compile.h - the compiler's face: rule sources in, a sealed table image out.
 *
 * Ownership: on success *out is sg_malloc'd (8-byte aligned) and the caller frees
 * it with sg_free.  Diagnostics go only through opt->diag; nothing prints. */
#ifndef SGC_COMPILE_H
#define SGC_COMPILE_H
#include <stddef.h>
#include <stdint.h>

/* Look up an embedded source by name ("std/wrappers", "readonly"): set *text and
 * *len and return 1, or return 0. */
typedef int (*sgc_embedded_fn)(void *ud, const char *name, const char **text, size_t *len);
/* Receives one complete diagnostic (several lines, no trailing newline).  Its
 * first line is "FILE:LINE:COL: error: MESSAGE" (or "shellgate: error: ..." where
 * no place applies); a warning says "warning:" instead and does not fail the
 * compilation. */
typedef void (*sgc_diag_fn)(void *ud, const char *text);
/* Is text (as a sgc_diag_fn receives it) a warning?  1 or 0. */
int sgc_diag_is_warning(const char *text);

typedef struct sgc_options {
    const char *const *include_dirs;
    size_t ninclude;
    sgc_embedded_fn embedded;
    void *embedded_ud;
    sgc_diag_fn diag;
    void *diag_ud;
    uint32_t max_dfa_states;     /* per pattern set; 0 = 4096 */
} sgc_options;

typedef struct sgc_input {
    const char *name;            /* shown in diagnostics; resolved for `use` */
    const char *text;            /* NULL: read the file `name` */
    size_t len;
} sgc_input;

/* Compile inputs (the first is the main pack; the others are used by it).
 * Returns 0 with *out and *outlen set, or the number of errors (> 0), or -1 when out of
 * memory.  Inline tests are NOT run here (the compiler never evaluates): callers
 * that link the runtime run them on the result (see `shellgate compile`). */
int sgc_compile(const sgc_options *opt, const sgc_input *inputs, size_t ninputs,
                uint8_t **out, size_t *outlen);

/* ---- the checked program, kept alive (for the differential oracle) -----------
 * sgc_compile_checked is sgc_compile that also hands back the checked program the
 * table was emitted from: its rules in table order (rule i of the table is rule i
 * here), their condition trees (compiler/ast.h) and the flattened items of every
 * set (index = sgc_setexpr.set_index = the table's set index).  On success *keep
 * is set and owns the AST, the sources and the arena; free it with
 * sgc_checked_free.  On failure *keep is NULL.  The table bytes are the same as
 * sgc_compile's for the same inputs. */
typedef struct sgc_checked sgc_checked;
struct sgc_cond;
struct sgc_item;

int sgc_compile_checked(const sgc_options *opt, const sgc_input *inputs, size_t ninputs,
                        uint8_t **out, size_t *outlen, sgc_checked **keep);
void sgc_checked_free(sgc_checked *k);

typedef struct sgc_checked_rule {
    const char *id;                  /* "pack:label" or "FILE:LINE" */
    int decision;                    /* sgt_decision */
    const struct sgc_cond *cond;     /* the condition tree */
} sgc_checked_rule;

uint32_t sgc_checked_nrules(const sgc_checked *k);
/* Rule i (table order); 0, or -1 when i is out of range. */
int sgc_checked_rule_at(const sgc_checked *k, uint32_t i, sgc_checked_rule *out);
uint32_t sgc_checked_nsets(const sgc_checked *k);
/* The flattened items of set s (words, globs, regexes; no set references), or
 * NULL with *n = 0 when s is out of range. */
const struct sgc_item *const *sgc_checked_set_items(const sgc_checked *k, uint32_t s, uint32_t *n);
/* The clauses of program NAME's declarations (n bytes), as bits 1 << sgc_clause_kind
 * (compiler/ast.h); 0: none. */
uint64_t sgc_checked_prog_clauses(const sgc_checked *k, const char *name, size_t n);
/* The main pack's default decision (sgt_decision). */
int sgc_checked_default(const sgc_checked *k);
/* Source file i as compiled (i < the table's number of packs: file i is pack i,
 * file 0 the main pack): its name and text.  0, or -1 when i is out of range. */
int sgc_checked_source(const sgc_checked *k, uint32_t i, const char **name, const char **text, size_t *len);

#endif
