/* sema.h - the checked program: every source loaded, names resolved, sets
 * flattened, rules ordered and given ids.  emit.c lowers it to a table.
 *
 * Ownership: arrays are sg_malloc'd and freed by sgc_program_free; the nodes they
 * point to live in the compilation's arena. */
#ifndef SGC_SEMA_H
#define SGC_SEMA_H
#include "comp.h"

typedef struct sgc_lset {            /* one table set */
    const char *name;                /* "" for an inline matcher */
    uint32_t name_len;
    uint32_t kind;                   /* SGT_SETK_* */
    sgc_item **items;                /* flattened: words, globs, regexes */
    uint32_t nitems;
    sgc_loc loc;
} sgc_lset;

typedef struct sgc_lrule {
    sgc_rule *rule;
    uint32_t file, pack;
    char *id;                        /* arena */
    uint32_t line;
} sgc_lrule;

typedef struct sgc_lpack {
    const char *name;
    uint32_t name_len;
    uint32_t version;
    uint32_t file;
} sgc_lpack;

typedef struct sgc_hook {
    const char *fn;                  /* the global function a `lua` condition calls */
    uint32_t fn_len;
    const char *source;              /* the hook file's text (arena) */
    size_t source_len;
} sgc_hook;

typedef struct sgc_hookfile {
    const char *name;                /* as written in `hooks` */
    const char *text;                /* arena copy */
    size_t len;
} sgc_hookfile;

typedef struct sgc_program {
    sgc_lset *sets;     uint32_t nsets, capsets;
    sgc_lrule *rules;   uint32_t nrules;
    sgc_lpack *packs;   uint32_t npacks;
    uint32_t *order;    uint32_t norder;   /* files, dependencies first */
    uint32_t main_file;
    uint32_t ninputs;                      /* files 0..ninputs-1 were given */
    sgc_hookfile *hookfiles; uint32_t nhookfiles;
    sgc_hook *hooks;    uint32_t nhooks;
    uint32_t hook_budget, hook_memory, hook_millis;
} sgc_program;

/* Load inputs, follow `use`, parse, resolve and check.  Returns 0 when no error
 * was reported. */
int sgc_sema(sgc_comp *c, const sgc_input *inputs, size_t n, sgc_program *p);
void sgc_program_free(sgc_program *p);
/* Lower and write the table.  0 or -1 (errors reported). */
int sgc_emit(sgc_comp *c, sgc_program *p, uint8_t **out, size_t *outlen);
uint32_t sgc_line_of(sgc_comp *c, uint32_t f, uint32_t off);
/* Parse a decimal number token; -1 if it is not one (or > 2^31). */
long sgc_tok_number(const sgc_tok *t);

#endif
