/* checked.c - sgc_compile that keeps the checked program (compile.h): the
 * differential oracle interprets its condition trees next to the table. */
#include <string.h>
#include "comp.h"
#include "sema.h"
#include "common/alloc.h"

struct sgc_checked {
    sgc_comp c;                      /* owns the sources and the arena (the AST) */
    sgc_program prog;
};

static void release(sgc_checked *k)
{
    sgc_program_free(&k->prog);
    for (uint32_t i = 0; i < k->c.nfiles; i++) {
        sg_free(k->c.files[i].name);
        sg_free(k->c.files[i].dir);
        sg_free(k->c.files[i].text);
        sg_free(k->c.files[i].lines);
    }
    sg_free(k->c.files);
    sg_arena_free(&k->c.arena);
    sg_free(k);
}

/* The same steps as sgc_compile (compile.c), with the program kept on success. */
int sgc_compile_checked(const sgc_options *opt, const sgc_input *inputs, size_t ninputs,
                        uint8_t **out, size_t *outlen, sgc_checked **keep)
{
    *out = NULL;
    *outlen = 0;
    *keep = NULL;
    sgc_checked *k = sg_calloc(1, sizeof *k);
    if (!k)
        return -1;
    k->c.opt = opt;
    sg_arena_init(&k->c.arena, 65536);
    int rc = sgc_sema(&k->c, inputs, ninputs, &k->prog);
    if (rc == 0 && !k->c.nerrors)
        sgc_emit(&k->c, &k->prog, out, outlen);
    int result = k->c.oom ? -1 : k->c.nerrors;
    if (result) {
        sg_free(*out);
        *out = NULL;
        *outlen = 0;
        release(k);
        return result;
    }
    k->c.opt = NULL;                 /* the caller's options need not outlive the call */
    *keep = k;
    return 0;
}

void sgc_checked_free(sgc_checked *k)
{
    if (k)
        release(k);
}

uint32_t sgc_checked_nrules(const sgc_checked *k)
{
    return k->prog.nrules;
}

int sgc_checked_rule_at(const sgc_checked *k, uint32_t i, sgc_checked_rule *out)
{
    if (i >= k->prog.nrules)
        return -1;
    out->id = k->prog.rules[i].id;
    out->decision = k->prog.rules[i].rule->decision;
    out->cond = k->prog.rules[i].rule->cond;
    return 0;
}

uint32_t sgc_checked_nsets(const sgc_checked *k)
{
    return k->prog.nsets;
}

const struct sgc_item *const *sgc_checked_set_items(const sgc_checked *k, uint32_t s, uint32_t *n)
{
    if (s >= k->prog.nsets) {
        *n = 0;
        return NULL;
    }
    *n = k->prog.sets[s].nitems;
    return (const struct sgc_item *const *)k->prog.sets[s].items;
}

uint64_t sgc_checked_prog_clauses(const sgc_checked *k, const char *name, size_t n)
{
    uint64_t bits = 0;
    for (uint32_t f = 0; f < k->c.nfiles; f++)
        for (const sgc_progdecl *d = k->c.files[f].ast.progs; d; d = d->next)
            for (const sgc_wlist *w = d->names; w; w = w->next)
                if (w->tok.len == n && memcmp(w->tok.text, name, n) == 0)
                    for (const sgc_clause *cl = d->clauses; cl; cl = cl->next)
                        bits |= (uint64_t)1 << cl->kind;
    return bits;
}

int sgc_checked_default(const sgc_checked *k)
{
    return k->c.files[k->prog.main_file].ast.default_decision;
}

int sgc_checked_source(const sgc_checked *k, uint32_t i, const char **name, const char **text, size_t *len)
{
    if (i >= k->c.nfiles)
        return -1;
    *name = k->c.files[i].name;
    *text = k->c.files[i].text;
    *len = k->c.files[i].len;
    return 0;
}
