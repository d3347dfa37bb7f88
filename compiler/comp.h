/* comp.h - one compilation: its sources, arena, diagnostics and options.
 *
 * Ownership: sgc_comp owns every source text it loads (sg_malloc) and the arena
 * that holds every AST node; sgc_comp_free releases all of it at once. */
#ifndef SGC_COMP_H
#define SGC_COMP_H
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"
#include "ast.h"
#include "compile.h"

typedef struct sgc_source {
    char *name;              /* as shown in diagnostics */
    char *dir;               /* directory for relative `use` / `hooks` (NULL: none) */
    char *text;              /* NUL-terminated copy */
    size_t len;
    uint32_t *lines;         /* offsets of line starts, built lazily */
    uint32_t nlines;
    sgc_file_ast ast;
    int embedded;
} sgc_source;

typedef struct sgc_comp {
    const sgc_options *opt;
    sg_arena arena;
    sgc_source *files;
    uint32_t nfiles, capfiles;
    int nerrors;
    int nwarnings;           /* reported, and not counted in nerrors */
    int oom;
} sgc_comp;

/* Report an error at loc (file:line:col, source line, caret); printf-style. */
void sgc_error(sgc_comp *c, sgc_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with a note line appended (e.g. "did you mean 'tools'?"). */
void sgc_error_note(sgc_comp *c, sgc_loc loc, const char *note, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Report a warning: the same format with "warning:", a note line when note is not
 * NULL; it does not fail the compilation (`shellgate compile --strict` does). */
void sgc_warning_note(sgc_comp *c, sgc_loc loc, const char *note, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void sgc_oom(sgc_comp *c);
/* Levenshtein distance, capped (for "did you mean"). */
unsigned sgc_edit_distance(const char *a, size_t an, const char *b, size_t bn);

/* Add a source (copies text); returns its index or -1. */
int sgc_add_source(sgc_comp *c, const char *name, const char *dir, const char *text,
                   size_t len, int embedded);
/* Lex and parse file f into c->files[f].ast; errors are reported. */
void sgc_parse_file(sgc_comp *c, uint32_t f);

#endif
