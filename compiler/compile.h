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
/* Receives one complete diagnostic (several lines, no trailing newline). */
typedef void (*sgc_diag_fn)(void *ud, const char *text);

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

#endif
