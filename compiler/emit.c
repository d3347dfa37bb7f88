/* emit.c - lowers a checked program to the matcher table (runtime/sgt.h): strings
 * interned, sets as sorted words plus one DFA, conditions as bytecode, an index by
 * program name, then the header sealed with its checksum.  Equal inputs give
 * identical bytes: nothing here depends on addresses or hash-table order. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sema.h"
#include "redfa.h"
#include "common/sha256.h"
#include "runtime/sgt.h"
#include "runtime/shparse.h"
#include "common/alloc.h"
#include "common/checksum.h"

typedef struct buf {
    uint8_t *d;
    size_t n, cap;
    int oom;
} buf;

static void *buf_add(buf *b, const void *p, size_t n)
{
    if (b->oom)
        return NULL;
    if (n == 0)                          /* nothing to add; b->d may still be NULL */
        return b->d ? b->d + b->n : NULL;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n)
            nc *= 2;
        uint8_t *nd = sg_realloc(b->d, nc);
        if (!nd) {
            b->oom = 1;
            return NULL;
        }
        b->d = nd;
        b->cap = nc;
    }
    void *at = b->d + b->n;
    if (p && n)
        memcpy(at, p, n);
    else if (n)
        memset(at, 0, n);
    b->n += n;
    return at;
}

static void buf_u32(buf *b, uint32_t v) { buf_add(b, &v, 4); }

/* ---- string interning ------------------------------------------------------ */

typedef struct strtab {
    buf data;
    uint32_t *slots;          /* offset + 1, 0 empty */
    uint32_t cap, n;
} strtab;

static uint32_t fnv32(const char *s, size_t n)
{
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 0x01000193u;
    return h;
}

static int strtab_grow(strtab *t)
{
    uint32_t nc = t->cap ? t->cap * 2 : 1024;
    uint32_t *ns = sg_calloc(nc, sizeof *ns);
    if (!ns)
        return -1;
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!t->slots[i])
            continue;
        const char *s = (const char *)t->data.d + t->slots[i] - 1;
        uint32_t h = fnv32(s, strlen(s)) & (nc - 1);
        while (ns[h])
            h = (h + 1) & (nc - 1);
        ns[h] = t->slots[i];
    }
    sg_free(t->slots);
    t->slots = ns;
    t->cap = nc;
    return 0;
}

static uint32_t intern(strtab *t, const char *s, size_t n)
{
    if (n == 0 || !s)
        return 0;
    if ((t->n + 1) * 2 > t->cap && strtab_grow(t) < 0) {
        t->data.oom = 1;
        return 0;
    }
    uint32_t h = fnv32(s, n) & (t->cap - 1);
    while (t->slots[h]) {
        const char *e = (const char *)t->data.d + t->slots[h] - 1;
        if (strncmp(e, s, n) == 0 && e[n] == '\0')
            return t->slots[h] - 1;
        h = (h + 1) & (t->cap - 1);
    }
    uint32_t off = (uint32_t)t->data.n;
    buf_add(&t->data, s, n);
    buf_add(&t->data, "", 1);
    if (t->data.oom)
        return 0;
    t->slots[h] = off + 1;
    t->n++;
    return off;
}

/* ---- the emitter --------------------------------------------------------------- */

typedef struct emitter {
    sgc_comp *c;
    sgc_program *p;
    strtab str;
    buf sec[SGT_NSECTIONS];
    uint32_t ndfas;
    int team_limits;                   /* a limit is per team: SGT_HDR_TEAM_LIMITS */
} emitter;

static int cmp_words(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* sets: exact words sorted and unique; globs and regexes (and for TEXT sets every
 * item) in one DFA */
static int emit_set(emitter *e, const sgc_lset *ls)
{
    sgc_comp *c = e->c;
    char **words = sg_calloc(ls->nitems ? ls->nitems : 1, sizeof *words);
    sgc_pattern *pats = sg_calloc(ls->nitems ? ls->nitems : 1, sizeof *pats);
    const sgc_item **pitem = sg_calloc(ls->nitems ? ls->nitems : 1, sizeof *pitem);
    uint32_t nw = 0, np = 0;
    int rc = -1;
    if (!words || !pats || !pitem) {
        sgc_oom(c);
        goto done;
    }
    for (uint32_t i = 0; i < ls->nitems; i++) {
        const sgc_item *it = ls->items[i];
        if (ls->kind == SGT_SETK_MATCH && it->kind == SGC_ITEM_WORD) {
            words[nw] = sg_strndup(it->text, it->len);
            if (!words[nw++]) {
                sgc_oom(c);
                goto done;
            }
            continue;
        }
        sgc_pattern *pt = &pats[np];
        pt->text = it->text;
        pt->len = it->len;
        pt->icase = it->icase;
        /* one id for the whole set: the runtime asks only "does any item match",
         * and distinct ids would make the automaton track the lowest one seen
         * (500 substrings: ~3k states with one id, ~800k with distinct ids) */
        pt->id = 0;
        if (it->kind == SGC_ITEM_REGEX)
            pt->kind = SGC_PAT_REGEX;
        else if (it->kind == SGC_ITEM_GLOB)
            pt->kind = SGC_PAT_GLOB;
        else
            pt->kind = ls->kind == SGT_SETK_TEXT ? SGC_PAT_SUBSTRING : SGC_PAT_EXACT;
        if (ls->kind == SGT_SETK_TEXT && it->kind == SGC_ITEM_GLOB) {
            /* `text contains *.pem` means the glob occurs somewhere in the line */
            char *g = sg_arena_alloc(&c->arena, it->len + 3);
            if (!g) {
                sgc_oom(c);
                goto done;
            }
            g[0] = '*';
            memcpy(g + 1, it->text, it->len);
            g[it->len + 1] = '*';
            g[it->len + 2] = '\0';
            pt->text = g;
            pt->len = it->len + 2;
        }
        pitem[np++] = it;
        sgt_pattern pr;
        pr.set = (uint32_t)(e->sec[SGT_SEC_SETS].n / sizeof(sgt_set));
        pr.kind = it->kind == SGC_ITEM_REGEX ? SGT_PAT_REGEX : it->kind == SGC_ITEM_GLOB ? SGT_PAT_GLOB : SGT_PAT_SUBSTRING;
        pr.icase = it->icase ? 1 : 0;
        pr.text = intern(&e->str, it->text, it->len);
        buf_add(&e->sec[SGT_SEC_PATTERNS], &pr, sizeof pr);
    }
    qsort(words, nw, sizeof *words, cmp_words);
    uint32_t nu = 0;
    for (uint32_t i = 0; i < nw; i++) {
        if (nu && strcmp(words[nu - 1], words[i]) == 0) {
            sg_free(words[i]);
            continue;
        }
        words[nu++] = words[i];
    }
    nw = nu;
    sgt_set rec;
    memset(&rec, 0, sizeof rec);
    rec.name = intern(&e->str, ls->name, ls->name_len);
    rec.kind = ls->kind;
    rec.words_off = (uint32_t)(e->sec[SGT_SEC_WORDS].n / 4);
    rec.nwords = nw;
    rec.dfa = SGT_NONE;
    for (uint32_t i = 0; i < nw; i++)
        buf_u32(&e->sec[SGT_SEC_WORDS], intern(&e->str, words[i], strlen(words[i])));
    if (np) {
        sgc_dfa d;
        sgc_dfa_error err;
        memset(&d, 0, sizeof d);
        memset(&err, 0, sizeof err);
        uint32_t maxst = c->opt && c->opt->max_dfa_states ? c->opt->max_dfa_states : 4096;
        if (sgc_dfa_build(pats, np, maxst, &d, &err) < 0) {
            sgc_loc at = err.pattern_id >= 0 && (uint32_t)err.pattern_id < np ? pitem[err.pattern_id]->loc : ls->loc;
            if (strstr(err.msg, "out of memory"))
                sgc_oom(c);
            else
                sgc_error(c, at, "%s", err.msg);
            goto done;
        }
        buf *dd = &e->sec[SGT_SEC_DFADATA];
        sgt_dfa drec = { d.nstates, d.nclasses, (uint32_t)dd->n, np };
        buf_add(dd, d.classmap, 256);
        buf_add(dd, d.trans, (size_t)d.nstates * d.nclasses * 4);
        buf_add(dd, d.accept, (size_t)d.nstates * 4);
        sgc_dfa_free(&d);
        buf_add(&e->sec[SGT_SEC_DFAS], &drec, sizeof drec);
        rec.dfa = e->ndfas++;
    }
    buf_add(&e->sec[SGT_SEC_SETS], &rec, sizeof rec);
    rc = 0;
done:
    if (words)
        for (uint32_t i = 0; i < nw; i++)
            sg_free(words[i]);
    sg_free(words);
    sg_free(pats);
    sg_free(pitem);
    return rc;
}

/* ---- bytecode --------------------------------------------------------------- */

static uint32_t set_of(const sgc_setexpr *s) { return s && s->set_index >= 0 ? (uint32_t)s->set_index : SGT_NONE; }

static void op(buf *b, uint32_t opc, uint32_t a, uint32_t bb)
{
    buf_u32(b, opc | a << 8);
    buf_u32(b, bb);
}

static int nest_mask(const sgc_tok *t)
{
    static const char *const names[] = {
#define X(name, text) text,
        SGR_NEST_KINDS(X)
#undef X
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (t->len == strlen(names[i]) && memcmp(t->text, names[i], t->len) == 0)
            return 1 << i;
    return 0;
}

/* Emit c into b; flags collects SGT_RULE_* facts.  `line_only` is cleared when a
 * segment condition appears. */
static void gen(buf *b, const sgc_cond *c, uint32_t *flags, int *line_only)
{
    switch (c->kind) {
    case SGC_C_AND: case SGC_C_OR: {
        gen(b, c->a, flags, line_only);
        size_t at = b->n;
        op(b, c->kind == SGC_C_AND ? SGT_OP_JUMP_FALSE : SGT_OP_JUMP_TRUE, 0, 0);
        size_t after = b->n;
        gen(b, c->b, flags, line_only);
        if (!b->oom)
            ((uint32_t *)(void *)(b->d + at))[1] = (uint32_t)((b->n - after) / 8);
        return;
    }
    case SGC_C_NOT:
        gen(b, c->a, flags, line_only);
        op(b, SGT_OP_NOT, 0, 0);
        return;
    case SGC_C_ANY: op(b, SGT_OP_TRUE, 0, 0); break;
    case SGC_C_PROGRAM: op(b, SGT_OP_PROGRAM, 0, set_of(c->set)); break;
    case SGC_C_SUBCOMMAND: op(b, SGT_OP_SUBCOMMAND, 0, set_of(c->set)); break;
    case SGC_C_OPTION: op(b, SGT_OP_OPTION_ANY, 0, set_of(c->set)); break;
    case SGC_C_OPTION_ALL: op(b, SGT_OP_OPTION_ALL, 0, set_of(c->set)); break;
    case SGC_C_ARG: op(b, SGT_OP_ARG_ANY, 0, set_of(c->set)); break;
    case SGC_C_ARG_AT: op(b, SGT_OP_ARG_AT, (uint32_t)sgc_tok_number(&c->num), set_of(c->set)); break;
    case SGC_C_ARGC: {
        static const char *const cmps[] = { "==", "!=", "<", "<=", ">", ">=" };
        uint32_t k = 0;
        for (uint32_t i = 0; i < 6; i++)
            if (c->cmp.len == strlen(cmps[i]) && memcmp(c->cmp.text, cmps[i], c->cmp.len) == 0)
                k = i;
        op(b, SGT_OP_ARGC, k, (uint32_t)sgc_tok_number(&c->num));
        break;
    }
    case SGC_C_PATH_OUTSIDE: op(b, SGT_OP_PATH_OUTSIDE, 0, 0); break;
    case SGC_C_PATH_INSIDE: op(b, SGT_OP_PATH_INSIDE, 0, set_of(c->set)); break;
    case SGC_C_PATH_IS: op(b, SGT_OP_PATH_IS, 0, set_of(c->set)); break;
    case SGC_C_EXPANDS: op(b, SGT_OP_EXPANDS, 0, set_of(c->set)); break;
    case SGC_C_REDIR_WRITES: op(b, SGT_OP_REDIR_WRITES, c->form, set_of(c->set)); break;
    case SGC_C_DEST: op(b, SGT_OP_DEST, c->form, set_of(c->set)); break;
    case SGC_C_REDIR_READS:
        op(b, SGT_OP_REDIR_READS, c->str.len ? SGT_READS_HEREDOC : 0, c->str.len ? SGT_NONE : set_of(c->set));
        break;
    case SGC_C_ASSIGNS: op(b, SGT_OP_ASSIGNS, 0, set_of(c->set)); break;
    case SGC_C_ASSIGNS_VAL:
        op(b, SGT_OP_ASSIGNS_VAL, set_of(c->set) | (c->num.len ? SGT_NEGATE_VALUE : 0), set_of(c->set2));
        break;
    case SGC_C_OPTION_VAL:
        op(b, SGT_OP_OPTION_VAL, set_of(c->set) | (c->num.len ? SGT_NEGATE_VALUE : 0), set_of(c->set2));
        break;
    case SGC_C_PIPED_FROM: op(b, SGT_OP_PIPED_FROM, 0, set_of(c->set)); break;
    case SGC_C_PIPED_TO: op(b, SGT_OP_PIPED_TO, 0, set_of(c->set)); break;
    case SGC_C_DYNAMIC: op(b, SGT_OP_DYNAMIC, 0, 0); *flags |= SGT_RULE_DYNAMIC; break;
    case SGC_C_MOREARGS: op(b, SGT_OP_MOREARGS, 0, 0); break;
    case SGC_C_MODULE_AT: op(b, SGT_OP_MODULE_AT, (uint32_t)sgc_tok_number(&c->num), 0); break;
    case SGC_C_CWD_OUTSIDE: op(b, SGT_OP_CWD_OUTSIDE, 0, 0); break;
    case SGC_C_PSCRIPT: op(b, SGT_OP_PSCRIPT, 0, 0); break;
    case SGC_C_LUA: op(b, SGT_OP_LUA, 0, c->hook < 0 ? 0 : (uint32_t)c->hook); *flags |= SGT_RULE_LUA; break;
    case SGC_C_TEXT_CONTAINS: case SGC_C_TEXT_MATCHES:
        op(b, SGT_OP_TEXT, 0, set_of(c->set));
        return;                                     /* keeps line_only */
    case SGC_C_NESTED: op(b, SGT_OP_NESTED, (uint32_t)nest_mask(&c->str), 0); break;
    case SGC_C_LINE_RUNS: op(b, SGT_OP_LINE_RUNS, 0, set_of(c->set)); break;
    }
    *line_only = 0;
}

/* The program names a rule can only match, when its condition says so:
 * `program W` with plain words (no '/'), through `and` (either side) and `or`
 * (every side, however many).  Writes the sets whose words are those names to
 * out[0..] and returns how many (at most max), or -1: the rule can match any
 * program, or names more sets than max (it is then simply not indexed). */
#define INDEX_MAX_SETS 16
static int index_sets(const sgc_program *p, const sgc_cond *c, int32_t *out, int max)
{
    switch (c->kind) {
    case SGC_C_PROGRAM: {
        if (!c->set || c->set->set_index < 0 || max < 1)
            return -1;
        const sgc_lset *ls = &p->sets[c->set->set_index];
        for (uint32_t i = 0; i < ls->nitems; i++)
            if (ls->items[i]->kind != SGC_ITEM_WORD || memchr(ls->items[i]->text, '/', ls->items[i]->len))
                return -1;
        out[0] = c->set->set_index;
        return 1;
    }
    case SGC_C_AND: {
        int n = index_sets(p, c->a, out, max);
        return n >= 0 ? n : index_sets(p, c->b, out, max);
    }
    case SGC_C_OR: {
        int a = index_sets(p, c->a, out, max);
        if (a < 0)
            return -1;
        int b = index_sets(p, c->b, out + a, max - a);
        return b < 0 ? -1 : a + b;
    }
    default:
        return -1;
    }
}

typedef struct ientry {
    const char *name;
    uint32_t rule;
} ientry;

static int cmp_ientry(const void *a, const void *b)
{
    const ientry *x = a, *y = b;
    int r = strcmp(x->name, y->name);
    return r ? r : (x->rule > y->rule) - (x->rule < y->rule);
}

static const char *default_message(uint32_t d)
{
    switch (d) {
    case SGT_ALLOW: return "'{program}' is allowed by rule {rule}";
    case SGT_ASK: return "'{program}' needs approval (rule {rule})";
    default: return "'{program}' is denied by rule {rule}";
    }
}

static int emit_index(emitter *e, uint32_t *any_off, uint32_t *any_len)
{
    sgc_program *p = e->p;
    size_t cap = 64, n = 0;
    ientry *ents = sg_malloc(sizeof *ents * cap);
    uint32_t *any = sg_malloc(sizeof(uint32_t) * (p->nrules + 1));
    uint32_t nany = 0;
    if (!ents || !any)
        goto oom;
    for (uint32_t r = 0; r < p->nrules; r++) {
        const sgt_rule *rr = (const sgt_rule *)(void *)e->sec[SGT_SEC_RULES].d + r;
        if (rr->flags & SGT_RULE_LINE)
            continue;
        int32_t sets[INDEX_MAX_SETS];
        int nsets = index_sets(p, p->rules[r].rule->cond, sets, INDEX_MAX_SETS);
        if (nsets < 0 || (rr->flags & SGT_RULE_DYNAMIC)) {
            any[nany++] = r;
            continue;
        }
        for (int k = 0; k < nsets; k++) {
            const sgc_lset *ls = &p->sets[sets[k]];
            for (uint32_t i = 0; i < ls->nitems; i++) {
                if (n == cap) {
                    cap *= 2;
                    ientry *ne = sg_realloc(ents, sizeof *ents * cap);
                    if (!ne)
                        goto oom;
                    ents = ne;
                }
                char *nm = sg_arena_strndup(&e->c->arena, ls->items[i]->text, ls->items[i]->len);
                if (!nm)
                    goto oom;
                ents[n].name = nm;
                ents[n].rule = r;
                n++;
            }
        }
    }
    qsort(ents, n, sizeof *ents, cmp_ientry);
    /* distinct names */
    uint32_t nnames = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(ents[i].name, ents[i - 1].name))
            nnames++;
    uint32_t nb = 0;
    if (nnames) {
        nb = 8;
        while (nb < nnames * 2)
            nb *= 2;
    }
    sgt_bucket *bk = sg_malloc(sizeof *bk * (nb ? nb : 1));
    if (!bk)
        goto oom;
    for (uint32_t i = 0; i < nb; i++) {
        bk[i].name = SGT_NONE;
        bk[i].list_off = bk[i].list_len = 0;
    }
    buf *lists = &e->sec[SGT_SEC_LISTS];
    for (size_t i = 0; i < n;) {
        size_t j = i;
        uint32_t off = (uint32_t)(lists->n / 4), len = 0;
        while (j < n && strcmp(ents[j].name, ents[i].name) == 0) {
            if (j == i || ents[j].rule != ents[j - 1].rule) {
                buf_u32(lists, ents[j].rule);
                len++;
            }
            j++;
        }
        uint32_t h = fnv32(ents[i].name, strlen(ents[i].name)) & (nb - 1);
        while (bk[h].name != SGT_NONE)
            h = (h + 1) & (nb - 1);
        bk[h].name = intern(&e->str, ents[i].name, strlen(ents[i].name));
        bk[h].list_off = off;
        bk[h].list_len = len;
        i = j;
    }
    buf_add(&e->sec[SGT_SEC_INDEX], bk, sizeof *bk * nb);
    sg_free(bk);
    *any_off = (uint32_t)(lists->n / 4);
    *any_len = nany;
    for (uint32_t i = 0; i < nany; i++)
        buf_u32(lists, any[i]);
    sg_free(ents);
    sg_free(any);
    return 0;
oom:
    sg_free(ents);
    sg_free(any);
    sgc_oom(e->c);
    return -1;
}

/* ---- program specs (wrapper and command declarations) ----------------------- */

typedef struct pspec {
    const char *name;
    const sgc_progdecl *decl;
} pspec;

static int cmp_pspec(const void *a, const void *b)
{
    return strcmp(((const pspec *)a)->name, ((const pspec *)b)->name);
}

/* The sorted, distinct words of d's clauses of kind k (and of kind k2, when not
 * k: a `text` option takes a value too) as a PROGOPTS slice. */
/* The words of d's clauses whose kind is in mask (1ull << sgc_clause_kind), sorted
 * and deduplicated, as one PROGOPTS slice. */
static void emit_optlist_kinds(emitter *e, const sgc_progdecl *d, uint64_t mask, uint32_t *off, uint32_t *len)
{
    const char *tmp[512];
    uint32_t n = 0;
    for (const sgc_clause *cl = d->clauses; cl; cl = cl->next) {
        if (!((mask >> cl->kind) & 1))
            continue;
        for (const sgc_wlist *w = cl->words; w; w = w->next) {
            if (n == 512) {
                sgc_error(e->c, w->tok.loc, "too many options in one declaration (512 at most)");
                break;
            }
            char *s = sg_arena_strndup(&e->c->arena, w->tok.text, w->tok.len);
            if (!s) {
                sgc_oom(e->c);
                return;
            }
            tmp[n++] = s;
        }
    }
    qsort(tmp, n, sizeof *tmp, cmp_words);
    *off = (uint32_t)(e->sec[SGT_SEC_PROGOPTS].n / 4);
    *len = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i && strcmp(tmp[i], tmp[i - 1]) == 0)
            continue;
        buf_u32(&e->sec[SGT_SEC_PROGOPTS], intern(&e->str, tmp[i], strlen(tmp[i])));
        (*len)++;
    }
}

static void emit_optlist(emitter *e, const sgc_progdecl *d, sgc_clause_kind k, sgc_clause_kind k2,
                         uint32_t *off, uint32_t *len)
{
    emit_optlist_kinds(e, d, 1ull << k | 1ull << k2, off, len);
}

static int emit_progspecs(emitter *e)
{
    sgc_comp *c = e->c;
    sgc_program *p = e->p;
    size_t n = 0, cap = 32;
    pspec *v = sg_malloc(sizeof *v * cap);
    if (!v) {
        sgc_oom(c);
        return -1;
    }
    for (uint32_t k = 0; k < p->norder; k++)
        for (const sgc_progdecl *d = c->files[p->order[k]].ast.progs; d; d = d->next)
            for (const sgc_wlist *w = d->names; w; w = w->next) {
                if (n == cap) {
                    cap *= 2;
                    pspec *nv = sg_realloc(v, sizeof *v * cap);
                    if (!nv) {
                        sg_free(v);
                        sgc_oom(c);
                        return -1;
                    }
                    v = nv;
                }
                char *nm = sg_arena_strndup(&c->arena, w->tok.text, w->tok.len);
                if (!nm) {
                    sg_free(v);
                    sgc_oom(c);
                    return -1;
                }
                v[n].name = nm;
                v[n].decl = d;
                n++;
                for (const sgc_clause *cl = d->clauses; cl; cl = cl->next) {
                    if (!d->wrapper && cl->kind != SGC_CL_VALUE && cl->kind != SGC_CL_TEXT
                        && cl->kind != SGC_CL_TEXT_OPERAND && cl->kind != SGC_CL_PERMUTE
                        && cl->kind != SGC_CL_CODE && cl->kind != SGC_CL_STDIN && cl->kind != SGC_CL_FLAGS
                        && cl->kind != SGC_CL_WRITES && cl->kind != SGC_CL_COPIES
                        && cl->kind != SGC_CL_RUNS_FILE && cl->kind != SGC_CL_TREE
                        && cl->kind != SGC_CL_TEXT_ALL && cl->kind != SGC_CL_LINKS
                        && cl->kind != SGC_CL_LINKS_UNLESS && cl->kind != SGC_CL_CWD
                        && cl->kind != SGC_CL_SUBCOMMANDS && cl->kind != SGC_CL_URL
                        && cl->kind != SGC_CL_URL_UNKNOWN && cl->kind != SGC_CL_URL_OPS
                        && cl->kind != SGC_CL_REMOTE_OPS && cl->kind != SGC_CL_HOST_OP)
                        sgc_error(c, cl->loc, "a 'command' declaration only has 'value', 'text', 'text operand', 'text operands', 'permute', 'code', 'stdin', 'flags', 'writes operands', 'copies', 'links', 'cwd', 'url', 'url unknown', 'url operands', 'remote operands', 'host operand', 'runs operand', 'tree operands' and 'subcommands' clauses; use 'wrapper' to unwrap commands");
                    if (cl->kind == SGC_CL_SKIP && (sgc_tok_number(&cl->num) < 0 || sgc_tok_number(&cl->num) > 16))
                        sgc_error(c, cl->num.loc, "'skip' takes a count from 0 to 16");
                }
            }
    qsort(v, n, sizeof *v, cmp_pspec);
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(v[i].name, v[i - 1].name) == 0) {
            char note[200];
            snprintf(note, sizeof note, "declared first at %s:%u", c->files[0].name,
                     sgc_line_of(c, v[i - 1].decl->loc.file, v[i - 1].decl->loc.off));
            sgc_error_note(c, v[i].decl->loc, note, "'%s' is declared twice", v[i].name);
            continue;
        }
        const sgc_progdecl *d = v[i].decl;
        const char *sp = strchr(v[i].name, ' ');
        if (sp) {
            /* a subcommand's declaration: "PROGRAM SUBCOMMAND", a wrapper, and the
             * program declared too (the runtime finds the subcommand through it) */
            size_t bl = (size_t)(sp - v[i].name);
            int base = 0;
            for (size_t k = 0; k < n && !base; k++)
                base = strlen(v[k].name) == bl && memcmp(v[k].name, v[i].name, bl) == 0;
            if (!bl || !sp[1] || strchr(sp + 1, ' ') || strchr(v[i].name, '/'))
                sgc_error(c, d->loc, "'%s': a name with a blank declares a subcommand, as \"PROGRAM SUBCOMMAND\"", v[i].name);
            else if (strlen(v[i].name) >= SGT_MAX_SUBSPEC_NAME)
                sgc_error(c, d->loc, "'%.40s...': a subcommand's declared name is at most %d bytes", v[i].name,
                          SGT_MAX_SUBSPEC_NAME - 1);
            else if (!d->wrapper)
                sgc_error(c, d->loc, "'%s': a subcommand is declared with 'wrapper' (its options that run commands); its value options go in the program's declaration", v[i].name);
            else if (!base)
                sgc_error(c, d->loc, "'%s' declares a subcommand of '%.*s', which has no declaration of its own: add 'command %.*s { }'",
                          v[i].name, (int)bl, v[i].name, (int)bl, v[i].name);
        }
        sgt_progspec ps;
        memset(&ps, 0, sizeof ps);
        ps.name = intern(&e->str, v[i].name, strlen(v[i].name));
        ps.flags = d->wrapper ? SGT_PROG_WRAPPER : 0;
        for (const sgc_clause *cl = d->clauses; cl; cl = cl->next) {
            switch (cl->kind) {
            case SGC_CL_SKIP: ps.skip = (uint32_t)(sgc_tok_number(&cl->num) < 0 ? 0 : sgc_tok_number(&cl->num)); break;
            case SGC_CL_RUNS_NOTHING: ps.flags |= SGT_PROG_RUNS_NOTHING; break;
            case SGC_CL_ASSIGNMENTS: ps.flags |= SGT_PROG_ASSIGNMENTS; break;
            case SGC_CL_PERMUTE: ps.flags |= SGT_PROG_PERMUTE; break;
            case SGC_CL_JOIN: ps.flags |= SGT_PROG_JOIN; break;
            case SGC_CL_SCRIPTS: ps.flags |= SGT_PROG_SCRIPTS; break;
            case SGC_CL_SUBCOMMANDS: ps.flags |= SGT_PROG_SUBCOMMANDS; break;
            case SGC_CL_MOREARGS: ps.flags |= SGT_PROG_MOREARGS; break;
            case SGC_CL_TEXT_OPERAND: ps.flags |= SGT_PROG_TEXT_OPERAND; break;
            case SGC_CL_STDIN: ps.flags |= SGT_PROG_STDIN; break;
            case SGC_CL_WRITES: ps.flags |= SGT_PROG_WRITES; break;
            case SGC_CL_COPIES: ps.flags |= SGT_PROG_COPIES; break;
            case SGC_CL_RUNS_FILE: ps.flags |= SGT_PROG_RUNS_FILE; break;
            case SGC_CL_NO_STDIN: ps.flags |= SGT_PROG_NO_STDIN; break;
            case SGC_CL_TREE: ps.flags |= SGT_PROG_TREE; break;
            case SGC_CL_TEXT_ALL: ps.flags |= SGT_PROG_TEXT_ALL; break;
            case SGC_CL_URL_OPS: ps.flags |= SGT_PROG_URL_OPS; break;
            case SGC_CL_REMOTE_OPS: ps.flags |= SGT_PROG_REMOTE_OPS; break;
            case SGC_CL_HOST_OP: ps.flags |= SGT_PROG_HOST_OP; break;
            default: break;
            }
        }
        if ((ps.flags & SGT_PROG_STDIN) && (ps.flags & SGT_PROG_NO_STDIN))
            sgc_error(c, d->loc, "'%s' has both 'stdin { ... }' and 'stdin nothing'", v[i].name);
        /* lookup, argv0, code, cwd and url options take a value too */
        emit_optlist_kinds(e, d, sgc_value_clause_mask(), &ps.value_off, &ps.value_len);
        emit_optlist(e, d, SGC_CL_SCRIPT, SGC_CL_SCRIPT, &ps.script_off, &ps.script_len);
        emit_optlist(e, d, SGC_CL_EXEC, SGC_CL_EXEC, &ps.exec_off, &ps.exec_len);
        emit_optlist(e, d, SGC_CL_END, SGC_CL_END, &ps.end_off, &ps.end_len);
        emit_optlist(e, d, SGC_CL_TEXT, SGC_CL_TEXT, &ps.text_off, &ps.text_len);
        emit_optlist(e, d, SGC_CL_TEXT_OPERAND, SGC_CL_TEXT_OPERAND, &ps.first_off, &ps.first_len);
        emit_optlist(e, d, SGC_CL_LOOKUP, SGC_CL_LOOKUP, &ps.lookup_off, &ps.lookup_len);
        emit_optlist(e, d, SGC_CL_ARGV0, SGC_CL_ARGV0, &ps.argv0_off, &ps.argv0_len);
        emit_optlist(e, d, SGC_CL_CODE, SGC_CL_CODE, &ps.code_off, &ps.code_len);
        emit_optlist(e, d, SGC_CL_STDIN, SGC_CL_STDIN, &ps.stdin_off, &ps.stdin_len);
        emit_optlist(e, d, SGC_CL_FLAGS, SGC_CL_FLAGS, &ps.flag_off, &ps.flag_len);
        emit_optlist(e, d, SGC_CL_LINKS, SGC_CL_LINKS, &ps.link_off, &ps.link_len);
        emit_optlist(e, d, SGC_CL_LINKS_UNLESS, SGC_CL_LINKS_UNLESS, &ps.linkrel_off, &ps.linkrel_len);
        emit_optlist(e, d, SGC_CL_NORUN, SGC_CL_NORUN, &ps.norun_off, &ps.norun_len);
        emit_optlist(e, d, SGC_CL_CWD, SGC_CL_CWD, &ps.cwd_off, &ps.cwd_len);
        emit_optlist(e, d, SGC_CL_URL, SGC_CL_URL, &ps.url_off, &ps.url_len);
        emit_optlist(e, d, SGC_CL_URL_UNKNOWN, SGC_CL_URL_UNKNOWN, &ps.urlunk_off, &ps.urlunk_len);
        if (ps.link_len && !(ps.flags & SGT_PROG_COPIES))
            sgc_error(c, d->loc, "a 'links' clause needs 'copies' (the sources it reads as link texts are the ones 'copies' names)");
        if (ps.exec_len && !ps.end_len)
            sgc_error(c, d->loc, "an 'exec' clause needs an 'end' clause (the words that end the inner command)");
        buf_add(&e->sec[SGT_SEC_PROGSPECS], &ps, sizeof ps);
    }
    sg_free(v);
    return 0;
}

/* ---- limits, tests, packs ------------------------------------------------ */

static long parse_duration(const sgc_tok *t)
{
    if (!t->len || t->len > 12)
        return -1;
    long v = 0;
    uint32_t i = 0;
    while (i < t->len && t->text[i] >= '0' && t->text[i] <= '9')
        v = v * 10 + (t->text[i++] - '0');
    if (i == 0)
        return -1;
    const char *u = t->text + i;
    size_t ul = t->len - i;
    long mul;
    if (ul == 0 || (ul == 1 && *u == 's'))
        mul = 1;
    else if (ul == 1 && *u == 'm')
        mul = 60;
    else if (ul == 1 && *u == 'h')
        mul = 3600;
    else if (ul == 1 && *u == 'd')
        mul = 86400;
    else
        return -1;
    v *= mul;
    return v > 0 && v <= 366L * 86400 ? v : -1;
}

static void emit_limits(emitter *e)
{
    sgc_comp *c = e->c;
    for (uint32_t k = 0; k < e->p->norder; k++)
        for (const sgc_limit *l = c->files[e->p->order[k]].ast.limits; l; l = l->next) {
            sgt_limit lr;
            memset(&lr, 0, sizeof lr);
            lr.name = intern(&e->str, l->name.text, l->name.len);
            for (const sgc_window *w = l->windows; w; w = w->next) {
                if (lr.nwindows == SGT_MAX_WINDOWS) {
                    sgc_error(c, w->count.loc, "a limit has at most %d windows", SGT_MAX_WINDOWS);
                    break;
                }
                long n = sgc_tok_number(&w->count), d = parse_duration(&w->dur);
                uint32_t nd = 0;
                while (nd < w->count.len && w->count.text[nd] >= '0' && w->count.text[nd] <= '9')
                    nd++;
                if (n < 0 && nd && nd == w->count.len)
                    n = (long)SGT_MAX_LIMIT_COUNT + 1;      /* digits, more than sgc_tok_number takes */
                if (n < 1)
                    sgc_error(c, w->count.loc, "a limit counts at least 1 command, not '%.*s'", (int)w->count.len, w->count.text);
                else if (n > (long)SGT_MAX_LIMIT_COUNT)
                    sgc_error(c, w->count.loc, "a limit counts at most %u commands per window, not %.*s (each store "
                              "keeps only the last %u admission times of a limit, so a larger count would never be "
                              "reached)", SGT_MAX_LIMIT_COUNT, (int)w->count.len, w->count.text, SGT_MAX_LIMIT_COUNT);
                if (d < 1)
                    sgc_error(c, w->dur.loc, "bad duration '%.*s' (write 10s, 1m, 1h or 1d)", (int)w->dur.len, w->dur.text);
                lr.count[lr.nwindows] = n < 1 || n > (long)SGT_MAX_LIMIT_COUNT ? 1 : (uint32_t)n;
                lr.seconds[lr.nwindows] = d < 1 ? 1 : (uint32_t)d;
                lr.nwindows++;
            }
            if (l->per.len == 4 && memcmp(l->per.text, "team", 4) == 0) {
                lr.key = SGT_LIMIT_PER_TEAM;
                e->team_limits = 1;
            } else if (l->per.len && !(l->per.len == 5 && memcmp(l->per.text, "agent", 5) == 0)) {
                sgc_error(c, l->per.loc, "a limit is kept per agent (the default) or per team, not per '%.*s'",
                          (int)l->per.len, l->per.text);
            }
            if (l->when) {
                uint32_t fl = 0;
                int lo = 1;
                lr.code_off = (uint32_t)(e->sec[SGT_SEC_CODE].n / 4);
                gen(&e->sec[SGT_SEC_CODE], l->when, &fl, &lo);
                lr.code_len = (uint32_t)(e->sec[SGT_SEC_CODE].n / 4) - lr.code_off;
            }
            lr.msg = intern(&e->str, l->msg.text, l->msg.len);
            buf_add(&e->sec[SGT_SEC_LIMITS], &lr, sizeof lr);
        }
}

static const char *test_rule_id(emitter *e, const sgc_tok *name, uint32_t file)
{
    sgc_program *p = e->p;
    if ((name->len == 7 && memcmp(name->text, "dynamic", 7) == 0)
        || (name->len == 7 && memcmp(name->text, "default", 7) == 0))
        return name->text[1] == 'y' ? "dynamic" : "default";
    for (uint32_t i = 0; i < p->nrules; i++)
        if (strlen(p->rules[i].id) == name->len && memcmp(p->rules[i].id, name->text, name->len) == 0)
            return p->rules[i].id;
    const char *best = NULL;
    for (uint32_t i = 0; i < p->nrules; i++) {
        const sgc_tok *l = &p->rules[i].rule->label;
        if (l->len == name->len && memcmp(l->text, name->text, l->len) == 0) {
            if (p->rules[i].file == file)
                return p->rules[i].id;
            if (!best)
                best = p->rules[i].id;
        }
    }
    return best;
}

static void emit_tests(emitter *e)
{
    sgc_comp *c = e->c;
    for (uint32_t f = 0; f < e->p->ninputs; f++)
        for (const sgc_test *t = c->files[f].ast.tests; t; t = t->next) {
            sgt_test tr;
            memset(&tr, 0, sizeof tr);
            tr.decision = (uint32_t)t->decision;
            tr.command = intern(&e->str, t->cmd.text, t->cmd.len);
            if (t->rule.len) {
                const char *id = test_rule_id(e, &t->rule, f);
                tr.rule = id ? intern(&e->str, id, strlen(id)) : 0;
            }
            tr.cwd = intern(&e->str, t->cwd.text, t->cwd.len);
            tr.file = intern(&e->str, c->files[f].name, strlen(c->files[f].name));
            tr.line = sgc_line_of(c, f, t->loc.off);
            buf_add(&e->sec[SGT_SEC_TESTS], &tr, sizeof tr);
        }
}

int sgc_emit(sgc_comp *c, sgc_program *p, uint8_t **out, size_t *outlen)
{
    emitter e;
    memset(&e, 0, sizeof e);
    e.c = c;
    e.p = p;
    int rc = -1;
    buf_add(&e.str.data, "", 1);                 /* string 0 is "" */

    for (uint32_t i = 0; i < p->nsets; i++)
        if (emit_set(&e, &p->sets[i]) < 0)
            goto done;

    /* rules */
    for (uint32_t r = 0; r < p->nrules; r++) {
        const sgc_lrule *lr = &p->rules[r];
        const sgc_rule *ru = lr->rule;
        sgt_rule rec;
        memset(&rec, 0, sizeof rec);
        rec.id = intern(&e.str, lr->id, strlen(lr->id));
        rec.pack = lr->pack;
        rec.decision = (uint32_t)ru->decision;
        rec.code_off = (uint32_t)(e.sec[SGT_SEC_CODE].n / 4);
        int line_only = 1;
        gen(&e.sec[SGT_SEC_CODE], ru->cond, &rec.flags, &line_only);
        if (line_only)
            rec.flags |= SGT_RULE_LINE;
        rec.code_len = (uint32_t)(e.sec[SGT_SEC_CODE].n / 4) - rec.code_off;
        if (ru->msg.text)
            rec.msg = intern(&e.str, ru->msg.text, ru->msg.len);
        else
            rec.msg = intern(&e.str, default_message(rec.decision), strlen(default_message(rec.decision)));
        rec.hint = intern(&e.str, ru->hint.text, ru->hint.len);
        rec.line = lr->line;
        buf_add(&e.sec[SGT_SEC_RULES], &rec, sizeof rec);
    }

    sgt_meta meta;
    memset(&meta, 0, sizeof meta);
    if (emit_index(&e, &meta.any_off, &meta.any_len) < 0)
        goto done;
    meta.line_off = (uint32_t)(e.sec[SGT_SEC_LISTS].n / 4);
    for (uint32_t r = 0; r < p->nrules; r++) {
        const sgt_rule *rr = (const sgt_rule *)(void *)e.sec[SGT_SEC_RULES].d + r;
        if (rr->flags & SGT_RULE_LINE) {
            buf_u32(&e.sec[SGT_SEC_LISTS], r);
            meta.line_len++;
        }
        if (rr->flags & SGT_RULE_DYNAMIC)
            meta.dynamic_rules++;
    }
    if (emit_progspecs(&e) < 0)
        goto done;
    for (uint32_t i = 0; i < p->nhooks; i++) {
        sgt_hook hk;
        memset(&hk, 0, sizeof hk);
        hk.name = intern(&e.str, p->hooks[i].fn, p->hooks[i].fn_len);
        hk.source = intern(&e.str, p->hooks[i].source, p->hooks[i].source_len);
        sg_sha256 hs;
        sg_sha256_init(&hs);
        sg_sha256_update(&hs, p->hooks[i].source, p->hooks[i].source_len);
        sg_sha256_final(&hs, hk.sha256);
        buf_add(&e.sec[SGT_SEC_HOOKS], &hk, sizeof hk);
    }
    meta.hook_budget = p->hook_budget;
    meta.hook_memory = p->hook_memory;
    meta.hook_millis = p->hook_millis;
    emit_limits(&e);
    emit_tests(&e);
    for (uint32_t i = 0; i < p->npacks; i++) {
        sgt_pack pk;
        memset(&pk, 0, sizeof pk);
        pk.name = intern(&e.str, p->packs[i].name, p->packs[i].name_len);
        pk.version = p->packs[i].version;
        pk.file = intern(&e.str, c->files[p->packs[i].file].name, strlen(c->files[p->packs[i].file].name));
        buf_add(&e.sec[SGT_SEC_PACKS], &pk, sizeof pk);
    }
    const sgc_file_ast *ma = &c->files[p->main_file].ast;
    meta.pack_name = p->packs[p->main_file].name ? intern(&e.str, p->packs[p->main_file].name, p->packs[p->main_file].name_len) : 0;
    meta.pack_version = p->packs[p->main_file].version;
    meta.default_decision = (uint32_t)ma->default_decision;
    meta.default_msg = ma->default_msg.text ? intern(&e.str, ma->default_msg.text, ma->default_msg.len)
                                            : intern(&e.str, "'{program}' is not allowed by any rule",
                                                     strlen("'{program}' is not allowed by any rule"));
    meta.default_hint = intern(&e.str, ma->default_hint.text, ma->default_hint.len);
    buf_add(&e.sec[SGT_SEC_META], &meta, sizeof meta);
    if (c->nerrors)
        goto done;

    /* assemble: header, then sections 8-aligned in directory order */
    buf *strings = &e.sec[SGT_SEC_STRINGS];
    buf_add(strings, e.str.data.d, e.str.data.n);
    for (int i = 0; i < SGT_NSECTIONS; i++)
        if (e.sec[i].oom || e.str.data.oom) {
            sgc_oom(c);
            goto done;
        }
    sgt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SGT_MAGIC, 8);
    h.version = SGT_VERSION;
    h.endian = SGT_ENDIAN;
    h.header_size = sizeof h;
    h.nsections = SGT_NSECTIONS;
    h.flags = e.team_limits ? SGT_HDR_TEAM_LIMITS : 0;   /* older runtimes refuse it */
    size_t pos = (sizeof h + 7) & ~(size_t)7;
    for (int i = 0; i < SGT_NSECTIONS; i++) {
        h.sec[i].off = (uint32_t)pos;
        h.sec[i].size = (uint32_t)e.sec[i].n;
        pos = (pos + e.sec[i].n + 7) & ~(size_t)7;
    }
    if (pos > 0x7fffffff) {
        sgc_loc none = { UINT32_MAX, 0, 0 };
        sgc_error(c, none, "table would be larger than 2 GiB");
        goto done;
    }
    h.total_size = (uint32_t)pos;
    sg_sha256 sh;
    sg_sha256_init(&sh);
    for (uint32_t k = 0; k < p->norder; k++) {
        const sgc_source *s = &c->files[p->order[k]];
        sg_sha256_update(&sh, s->text, s->len);
    }
    sg_sha256_final(&sh, h.source_sha256);
    uint8_t *img = sg_malloc(pos);       /* malloc alignment >= 8 */
    if (!img) {
        sgc_oom(c);
        goto done;
    }
    memset(img, 0, pos);
    memcpy(img, &h, sizeof h);
    for (int i = 0; i < SGT_NSECTIONS; i++)
        if (e.sec[i].n)
            memcpy(img + h.sec[i].off, e.sec[i].d, e.sec[i].n);
    uint64_t sum = sg_checksum64(img, pos, offsetof(sgt_header, checksum));
    memcpy(img + offsetof(sgt_header, checksum), &sum, 8);
    *out = img;
    *outlen = pos;
    rc = 0;
done:
    for (int i = 0; i < SGT_NSECTIONS; i++)
        sg_free(e.sec[i].d);
    sg_free(e.str.data.d);
    sg_free(e.str.slots);
    return rc;
}
