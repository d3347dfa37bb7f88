/* sema.c - loads every source a pack uses, resolves names (sets, uses, rule ids),
 * flattens sets and checks everything a pack author can get wrong, collecting
 * several errors per run with "did you mean" for unknown names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sema.h"
#include "redfa.h"
#include "runtime/sgt.h"
#include "runtime/shparse.h"
#include "common/alloc.h"
#include <lauxlib.h>
#include <lua.h>

/* ---- small helpers -------------------------------------------------------- */

static int tok_eq(const sgc_tok *t, const char *s)
{
    size_t n = strlen(s);
    return t->len == n && memcmp(t->text, s, n) == 0;
}

long sgc_tok_number(const sgc_tok *t)
{
    if (!t->len || t->len > 10)
        return -1;
    long v = 0;
    for (uint32_t i = 0; i < t->len; i++) {
        if (t->text[i] < '0' || t->text[i] > '9')
            return -1;
        v = v * 10 + (t->text[i] - '0');
    }
    return v > 0x7fffffffL ? -1 : v;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = sg_malloc(cap);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0)
            break;
        if (cap - n - 1 == 0) {
            if (cap > (size_t)64 << 20) {       /* no rule file is that large */
                sg_free(buf);
                buf = NULL;
                errno = EFBIG;
                break;
            }
            char *nb = sg_realloc(buf, cap * 2);
            if (!nb) {
                sg_free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    if (buf && ferror(f)) {
        sg_free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return sg_strndup(".", 1);
    return sg_strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

int sgc_add_source(sgc_comp *c, const char *name, const char *dir, const char *text,
                   size_t len, int embedded)
{
    if (c->nfiles == c->capfiles) {
        uint32_t nc = c->capfiles ? c->capfiles * 2 : 8;
        sgc_source *nf = sg_realloc(c->files, sizeof *nf * nc);
        if (!nf)
            return -1;
        c->files = nf;
        c->capfiles = nc;
    }
    sgc_source *s = &c->files[c->nfiles];
    memset(s, 0, sizeof *s);
    s->name = sg_strndup(name, strlen(name));
    s->dir = dir ? sg_strndup(dir, strlen(dir)) : NULL;
    s->text = sg_strndup(text, len);
    s->len = len;
    s->embedded = embedded;
    if (!s->name || !s->text || (dir && !s->dir)) {
        sg_free(s->name);
        sg_free(s->dir);
        sg_free(s->text);
        return -1;
    }
    return (int)c->nfiles++;
}

static int find_source(sgc_comp *c, const char *name)
{
    for (uint32_t i = 0; i < c->nfiles; i++)
        if (strcmp(c->files[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Resolve `use W` from file f: relative path, -I dirs, then the embedded stdlib
 * and packs.  Returns the file index or -1 (error reported). */
static int resolve_use(sgc_comp *c, uint32_t f, const sgc_tok *w)
{
    char name[512], path[1100];
    if (w->len == 0 || w->len >= sizeof name - 8) {
        sgc_error(c, w->loc, "bad name in 'use'");
        return -1;
    }
    memcpy(name, w->text, w->len);
    name[w->len] = '\0';
    if (memchr(name, '\0', w->len)) {
        sgc_error(c, w->loc, "bad name in 'use'");
        return -1;
    }
    int has_ext = w->len > 6 && strcmp(name + w->len - 6, ".rules") == 0;
    const char *dirs[66];
    size_t nd = 0;
    if (c->files[f].dir)
        dirs[nd++] = c->files[f].dir;
    for (size_t i = 0; c->opt && i < c->opt->ninclude && nd < 64; i++)
        dirs[nd++] = c->opt->include_dirs[i];
    for (size_t i = 0; i < nd; i++) {
        if (name[0] == '/')
            snprintf(path, sizeof path, "%s%s", name, has_ext ? "" : ".rules");
        else
            snprintf(path, sizeof path, "%s/%s%s", dirs[i], name, has_ext ? "" : ".rules");
        int have = find_source(c, path);
        if (have >= 0)
            return have;
        size_t len;
        char *text = read_file(path, &len);
        if (text) {
            char *d = dir_of(path);
            int idx = d ? sgc_add_source(c, path, d, text, len, 0) : -1;
            sg_free(d);
            sg_free(text);
            if (idx < 0) {
                sgc_oom(c);
                return -1;
            }
            sgc_parse_file(c, (uint32_t)idx);
            return idx;
        }
        if (name[0] == '/')
            break;
    }
    const char *etext;
    size_t elen;
    if (name[0] != '/' && name[0] != '.' && c->opt && c->opt->embedded
        && c->opt->embedded(c->opt->embedded_ud, name, &etext, &elen)) {
        char ename[600];
        snprintf(ename, sizeof ename, "<%s>", name);
        int have = find_source(c, ename);
        if (have >= 0)
            return have;
        int idx = sgc_add_source(c, ename, NULL, etext, elen, 1);
        if (idx < 0) {
            sgc_oom(c);
            return -1;
        }
        sgc_parse_file(c, (uint32_t)idx);
        return idx;
    }
    sgc_error(c, w->loc, "cannot find '%s' to use (looked beside this file, in -I directories and in the embedded packs)", name);
    return -1;
}

/* ---- name tables ---------------------------------------------------------- */

typedef struct named {
    const char *name;
    uint32_t len;
    void *ptr;
    uint32_t file;
} named;

typedef struct ntab {
    named *v;
    uint32_t n, cap;
    uint32_t *slots;                 /* hash: index + 1, 0 empty */
    uint32_t nslots;
} ntab;

static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 0x811c9dc5u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 0x01000193u;
    return h;
}

static named *ntab_find(ntab *t, const char *s, size_t len)
{
    if (!t->nslots)
        return NULL;
    for (uint32_t h = name_hash(s, len) & (t->nslots - 1); t->slots[h]; h = (h + 1) & (t->nslots - 1)) {
        named *e = &t->v[t->slots[h] - 1];
        if (e->len == len && memcmp(e->name, s, len) == 0)
            return e;
    }
    return NULL;
}

static int ntab_add(ntab *t, const char *s, uint32_t len, void *ptr, uint32_t file)
{
    if (t->n == t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 16;
        named *nv = sg_realloc(t->v, sizeof *nv * nc);
        if (!nv)
            return -1;
        t->v = nv;
        t->cap = nc;
    }
    if ((t->n + 1) * 2 > t->nslots) {
        uint32_t ns = t->nslots ? t->nslots * 2 : 64;
        uint32_t *nsl = sg_calloc(ns, sizeof *nsl);
        if (!nsl)
            return -1;
        for (uint32_t i = 0; i < t->n; i++) {
            uint32_t h = name_hash(t->v[i].name, t->v[i].len) & (ns - 1);
            while (nsl[h])
                h = (h + 1) & (ns - 1);
            nsl[h] = i + 1;
        }
        sg_free(t->slots);
        t->slots = nsl;
        t->nslots = ns;
    }
    t->v[t->n].name = s;
    t->v[t->n].len = len;
    t->v[t->n].ptr = ptr;
    t->v[t->n].file = file;
    uint32_t h = name_hash(s, len) & (t->nslots - 1);
    while (t->slots[h])
        h = (h + 1) & (t->nslots - 1);
    t->slots[h] = t->n + 1;
    t->n++;
    return 0;
}

static const named *ntab_closest(const ntab *t, const char *s, size_t len)
{
    const named *best = NULL;
    unsigned bd = len < 4 ? 1 : len < 8 ? 2 : 3;
    for (uint32_t i = 0; i < t->n; i++) {
        unsigned d = sgc_edit_distance(s, len, t->v[i].name, t->v[i].len);
        if (d <= bd) {
            bd = d;
            best = &t->v[i];
            if (d == 0)
                break;
        }
    }
    return best;
}

typedef struct sema {
    sgc_comp *c;
    sgc_program *p;
    ntab sets;                       /* name -> sgc_setdef */
    ntab ids;                        /* rule id -> sgc_lrule index (as pointer-sized) */
    ntab labels;                     /* bare label -> rule index */
} sema;

/* ---- sets ----------------------------------------------------------------- */

static int push_item(sema *s, sgc_item ***v, uint32_t *n, uint32_t *cap, sgc_item *it)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 8;
        sgc_item **nv = sg_realloc(*v, sizeof *nv * nc);
        if (!nv) {
            sgc_oom(s->c);
            return -1;
        }
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = it;
    return 0;
}

static void check_pattern(sema *s, sgc_item *it)
{
    sgc_dfa_error err;
    memset(&err, 0, sizeof err);
    if (it->kind == SGC_ITEM_REGEX) {
        if (sgc_regex_check(it->text, it->len, &err) < 0) {
            sgc_loc l = it->loc;
            l.off += 1 + (uint32_t)err.offset;
            l.len = 1;
            sgc_error(s->c, l, "bad regex: %s", err.msg);
            return;
        }
    }
    if (it->kind == SGC_ITEM_REGEX || it->kind == SGC_ITEM_GLOB) {
        sgc_pattern pat = { it->kind == SGC_ITEM_REGEX ? SGC_PAT_REGEX : SGC_PAT_GLOB,
                            it->text, it->len, it->icase, 0 };
        int e = sgc_pattern_is_empty(&pat, s->c->opt && s->c->opt->max_dfa_states ? s->c->opt->max_dfa_states : 4096, &err);
        if (e == 1)
            sgc_error(s->c, it->loc, "this pattern can never match anything");
        else if (e < 0)
            sgc_error(s->c, it->loc, "%s", err.msg);
    }
}

/* Append the items of e to v, expanding set references (cycles reported). */
static int flatten(sema *s, sgc_setexpr *e, sgc_item ***v, uint32_t *n, uint32_t *cap)
{
    for (sgc_item *it = e->head; it; it = it->next) {
        if (it->kind != SGC_ITEM_SETREF) {
            if (push_item(s, v, n, cap, it) < 0)
                return -1;
            continue;
        }
        named *d = ntab_find(&s->sets, it->text, it->len);
        if (!d) {
            const named *near = ntab_closest(&s->sets, it->text, it->len);
            char note[200];
            if (near)
                snprintf(note, sizeof note, "did you mean '%.*s'?", (int)near->len, near->name);
            if (near)
                sgc_error_note(s->c, it->loc, note, "unknown set '%.*s'", (int)it->len, it->text);
            else
                sgc_error(s->c, it->loc, "unknown set '%.*s' (write a word in braces, { %.*s }, to match it literally)",
                          (int)it->len, it->text, (int)it->len, it->text);
            continue;
        }
        sgc_setdef *def = d->ptr;
        if (def->resolving) {
            sgc_error(s->c, it->loc, "set '%.*s' includes itself", (int)it->len, it->text);
            continue;
        }
        def->resolving = 1;
        int r = flatten(s, def->expr, v, n, cap);
        def->resolving = 0;
        if (r < 0)
            return -1;
    }
    return 0;
}

static int new_lset(sema *s, const char *name, uint32_t name_len, uint32_t kind, sgc_setexpr *e)
{
    sgc_program *p = s->p;
    if (p->nsets == p->capsets) {
        uint32_t nc = p->capsets ? p->capsets * 2 : 32;
        sgc_lset *nv = sg_realloc(p->sets, sizeof *nv * nc);
        if (!nv) {
            sgc_oom(s->c);
            return -1;
        }
        p->sets = nv;
        p->capsets = nc;
    }
    sgc_lset *ls = &p->sets[p->nsets];
    memset(ls, 0, sizeof *ls);
    ls->name = name;
    ls->name_len = name_len;
    ls->kind = kind;
    ls->loc = e->loc;
    uint32_t cap = 0;
    int before = s->c->nerrors;
    if (flatten(s, e, &ls->items, &ls->nitems, &cap) < 0) {
        sg_free(ls->items);
        return -1;
    }
    p->nsets++;
    if (ls->nitems == 0 && s->c->nerrors == before) {
        sgc_error(s->c, e->loc, "empty set: it can never match");
        return (int)p->nsets - 1;
    }
    for (uint32_t i = 0; i < ls->nitems; i++)
        if (ls->items[i]->kind == SGC_ITEM_WORD && memchr(ls->items[i]->text, '\0', ls->items[i]->len))
            sgc_error(s->c, ls->items[i]->loc, "a word cannot hold a NUL byte");
    return (int)p->nsets - 1;
}

/* Give matcher e a table set (named sets shared by kind). */
static void lower_matcher(sema *s, sgc_setexpr *e, uint32_t kind)
{
    if (!e || e->set_index >= 0)
        return;
    if (e->head && !e->head->next && e->head->kind == SGC_ITEM_WORD && !e->head->quoted
        && ntab_find(&s->sets, e->head->text, e->head->len)) {
        sgc_error_note(s->c, e->head->loc, "quote it (\"word\") to match the word itself",
                       "'%.*s' is the name of a set: write 'in %.*s' to match its members",
                       (int)e->head->len, e->head->text, (int)e->head->len, e->head->text);
        e->set_index = -1;
    }
    if (e->head && !e->head->next && e->head->kind == SGC_ITEM_SETREF) {
        named *d = ntab_find(&s->sets, e->head->text, e->head->len);
        if (d) {
            sgc_setdef *def = d->ptr;
            for (uint32_t i = 0; i < s->p->nsets; i++)
                if (s->p->sets[i].name == def->name.text && s->p->sets[i].kind == kind) {
                    e->set_index = (int32_t)i;
                    return;
                }
            e->set_index = new_lset(s, def->name.text, def->name.len, kind, def->expr);
            return;
        }
    }
    e->set_index = new_lset(s, "", 0, kind, e);
}

static int only_words(const sgc_program *p, int32_t set)
{
    if (set < 0)
        return 0;
    const sgc_lset *ls = &p->sets[set];
    for (uint32_t i = 0; i < ls->nitems; i++)
        if (ls->items[i]->kind != SGC_ITEM_WORD)
            return 0;
    return 1;
}

static const char *const nest_kind_names[] = {
#define X(name, text) text,
    SGR_NEST_KINDS(X)
#undef X
};

static void resolve_hook(sema *s, sgc_cond *c);

/* Resolve and check one condition tree. */
static void check_cond(sema *s, sgc_cond *c)
{
    if (!c)
        return;
    switch (c->kind) {
    case SGC_C_AND: case SGC_C_OR:
        check_cond(s, c->a);
        check_cond(s, c->b);
        return;
    case SGC_C_NOT:
        check_cond(s, c->a);
        return;
    case SGC_C_TEXT_CONTAINS: case SGC_C_TEXT_MATCHES:
        lower_matcher(s, c->set, SGT_SETK_TEXT);
        return;
    case SGC_C_ARG_AT:
        if (sgc_tok_number(&c->num) < 0 || sgc_tok_number(&c->num) > 0xffff)
            sgc_error(s->c, c->num.loc, "'arg at' needs a position from 0 to 65535, not '%.*s'",
                      (int)c->num.len, c->num.text);
        lower_matcher(s, c->set, SGT_SETK_MATCH);
        return;
    case SGC_C_MODULE_AT:
        if (sgc_tok_number(&c->num) < 1 || sgc_tok_number(&c->num) > 0xffff)
            sgc_error(s->c, c->num.loc, "'module at' needs a position from 1 to 65535, not '%.*s'",
                      (int)c->num.len, c->num.text);
        return;
    case SGC_C_ARGC: {
        static const char *const cmps[] = { "==", "!=", "<", "<=", ">", ">=" };
        int ok = 0;
        for (int i = 0; i < 6; i++)
            ok |= tok_eq(&c->cmp, cmps[i]);
        if (!ok)
            sgc_error(s->c, c->cmp.loc, "argc compares with == != < <= > >=, not '%.*s'",
                      (int)c->cmp.len, c->cmp.text);
        if (sgc_tok_number(&c->num) < 0)
            sgc_error(s->c, c->num.loc, "argc compares with a number, not '%.*s'",
                      (int)c->num.len, c->num.text);
        return;
    }
    case SGC_C_OPTION_ALL:
        lower_matcher(s, c->set, SGT_SETK_MATCH);
        if (c->set && c->set->set_index >= 0 && !only_words(s->p, c->set->set_index))
            sgc_error(s->c, c->loc, "'option all' needs plain words: a pattern cannot say which options must all be present");
        return;
    case SGC_C_LUA:
        resolve_hook(s, c);
        return;
    case SGC_C_NESTED: {
        int ok = 0;
        for (size_t i = 0; i < sizeof nest_kind_names / sizeof *nest_kind_names; i++)
            ok |= tok_eq(&c->str, nest_kind_names[i]);
        if (!ok)
            sgc_error(s->c, c->str.loc, "unknown nesting '%.*s' (top, cmdsub, procsub, wrapped, script, exec, heredoc)",
                      (int)c->str.len, c->str.text);
        return;
    }
    case SGC_C_ASSIGNS_VAL:
    case SGC_C_OPTION_VAL:
        lower_matcher(s, c->set, SGT_SETK_MATCH);
        lower_matcher(s, c->set2, SGT_SETK_MATCH);
        return;
    case SGC_C_DEST: {
        lower_matcher(s, c->set, SGT_SETK_MATCH);
        /* hosts and schemes are matched in lower case: a word in capitals never is */
        uint32_t f = c->form & ~SGT_DEST_ONLY;
        if ((f != SGT_DEST_HOST && f != SGT_DEST_SCHEME) || !c->set || c->set->set_index < 0)
            return;
        const sgc_lset *ls = &s->p->sets[c->set->set_index];
        for (uint32_t i = 0; i < ls->nitems; i++) {
            const sgc_item *it = ls->items[i];
            if (it->kind == SGC_ITEM_REGEX || it->icase)
                continue;
            for (uint32_t k = 0; k < it->len; k++)
                if (it->text[k] >= 'A' && it->text[k] <= 'Z') {
                    sgc_warning_note(s->c, it->loc, "a destination's host and scheme are matched in lower case "
                                     "(HTTPS://Git.Corp.Example/ has the host git.corp.example): write it so",
                                     "'%.*s' has capitals, so no %s matches it", (int)it->len, it->text,
                                     f == SGT_DEST_HOST ? "host" : "scheme");
                    break;
                }
        }
        return;
    }
    default:
        lower_matcher(s, c->set, SGT_SETK_MATCH);
        return;
    }
}

/* ---- shadowing: a later rule whose conjuncts include all of an earlier deny's
 * conjuncts can never decide (the deny matches whenever it does). ------------ */

static uint64_t hash_bytes(uint64_t h, const void *d, size_t n)
{
    const unsigned char *p = d;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t hash_set(const sgc_program *p, const sgc_setexpr *e, uint64_t h)
{
    if (!e || e->set_index < 0)
        return hash_bytes(h, "-", 1);
    const sgc_lset *ls = &p->sets[e->set_index];
    for (uint32_t i = 0; i < ls->nitems; i++) {
        h = hash_bytes(h, &ls->items[i]->kind, sizeof ls->items[i]->kind);
        h = hash_bytes(h, ls->items[i]->text, ls->items[i]->len);
        h = hash_bytes(h, "\0", 1);
    }
    return h;
}

static uint64_t hash_cond(const sgc_program *p, const sgc_cond *c)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    if (!c)
        return h;
    h = hash_bytes(h, &c->kind, sizeof c->kind);
    if (c->a)
        h ^= hash_cond(p, c->a) * 3;
    if (c->b)
        h ^= hash_cond(p, c->b) * 7;
    h = hash_set(p, c->set, h);
    h = hash_set(p, c->set2, h);
    h = hash_bytes(h, c->num.text ? c->num.text : "", c->num.len);
    h = hash_bytes(h, c->cmp.text ? c->cmp.text : "", c->cmp.len);
    h = hash_bytes(h, c->str.text ? c->str.text : "", c->str.len);
    h = hash_bytes(h, &c->form, sizeof c->form);
    return h;
}

#define MAXCONJ 6
static unsigned conjuncts(sgc_cond *c, sgc_cond **out, unsigned n)
{
    if (!c)
        return n;
    if (c->kind == SGC_C_AND) {
        n = conjuncts(c->a, out, n);
        return conjuncts(c->b, out, n);
    }
    if (n < MAXCONJ + 1)
        out[n] = c;
    return n + 1;
}

typedef struct shadow_ent {
    uint64_t key;
    uint32_t rule;
} shadow_ent;

static void check_shadowing(sema *s)
{
    sgc_program *p = s->p;
    uint32_t cap = 16;
    while (cap < p->nrules * 4)
        cap *= 2;
    shadow_ent *tab = sg_calloc(cap, sizeof *tab);
    if (!tab) {
        sgc_oom(s->c);
        return;
    }
    for (uint32_t i = 0; i < p->nrules; i++) {
        sgc_cond *cj[MAXCONJ + 1];
        unsigned n = conjuncts(p->rules[i].rule->cond, cj, 0);
        if (n <= MAXCONJ && n > 0) {
            uint64_t hs[MAXCONJ];
            for (unsigned k = 0; k < n; k++)
                hs[k] = hash_cond(p, cj[k]) | 1;
            /* every non-empty subset of the conjuncts: is it an earlier deny? */
            for (unsigned mask = 1; mask < (1u << n); mask++) {
                uint64_t key = 0;
                for (unsigned k = 0; k < n; k++)
                    if (mask & (1u << k))
                        key += hs[k] * 0x9e3779b97f4a7c15ULL;
                for (uint32_t slot = (uint32_t)(key >> 7) & (cap - 1); tab[slot].key; slot = (slot + 1) & (cap - 1)) {
                    if (tab[slot].key == key) {
                        const sgc_lrule *d = &p->rules[tab[slot].rule];
                        char note[300];
                        snprintf(note, sizeof note, "the deny %s matches every command this rule matches",
                                 d->id);
                        sgc_error_note(s->c, p->rules[i].rule->loc, note,
                                       "rule %s is shadowed by an earlier deny and can never decide",
                                       p->rules[i].id);
                        mask = 1u << n;
                        break;
                    }
                }
            }
        }
        if (p->rules[i].rule->decision == SGT_DENY && n <= MAXCONJ && n > 0) {
            uint64_t key = 0;
            for (unsigned k = 0; k < n; k++)
                key += (hash_cond(p, cj[k]) | 1) * 0x9e3779b97f4a7c15ULL;
            uint32_t slot = (uint32_t)(key >> 7) & (cap - 1);
            while (tab[slot].key && tab[slot].key != key)
                slot = (slot + 1) & (cap - 1);
            if (!tab[slot].key) {
                tab[slot].key = key;
                tab[slot].rule = i;
            }
        }
    }
    sg_free(tab);
}

/* ---- subcommand tests of programs whose value options are unknown ----------
 * `subcommand` is the first operand after the options, and only the options a
 * declaration lists as taking a value have their value skipped: for a program
 * with none declared, `kubectl -n prod delete` has the subcommand `prod`.  A rule
 * that tests the subcommand of a program it names then silently misses; in a pack
 * whose default allows, that is a way around it.  So each program a rule names
 * next to a `subcommand` test is looked up among the declarations of every file
 * compiled together, and one without a clause whose options take a value (the
 * clauses emit.c puts in a progspec's value list; an empty `value { }` says "none")
 * is a warning.  `arg at N` is the word at a fixed place, whatever is declared:
 * declaring options would not change it, so it is not warned about. */

/* Does d say which of its program's options take a value? */
static int declares_values(const sgc_progdecl *d)
{
    for (const sgc_clause *cl = d->clauses; cl; cl = cl->next)
        if (sgc_clause_takes_value(cl->kind))
            return 1;
    return 0;
}

/* The conditions a subcommand test is conjoined with, innermost first: the other
 * sides of the `and`s above it. */
typedef struct conj_ctx {
    const sgc_cond *c;
    const struct conj_ctx *up;
} conj_ctx;

typedef struct subcmd_check {
    sema *s;
    ntab decls;                      /* program name -> its sgc_progdecl */
    const sgc_lrule *rule;           /* NULL: a rate limit's condition */
    const sgc_limit *limit;
    ntab warned;                     /* the programs warned about for this rule */
} subcmd_check;

/* What a warning names: "rule ID" or "rate limit 'NAME'". */
static void rule_what(const subcmd_check *k, char *what, size_t n)
{
    if (k->rule)
        snprintf(what, n, "rule %s", k->rule->id);
    else
        snprintf(what, n, "rate limit '%.*s'", (int)k->limit->name.len, k->limit->name.text);
}

static void warn_program(subcmd_check *k, const sgc_cond *at, const char *name, uint32_t len)
{
    /* a program named by its path (program /usr/bin/kubectl) is read by the
     * declaration of its basename, as the normaliser reads it */
    const char *slash = memrchr(name, '/', len);
    if (slash) {
        len -= (uint32_t)(slash + 1 - name);
        name = slash + 1;
    }
    if (len == 0 || ntab_find(&k->warned, name, len))
        return;
    const named *d = ntab_find(&k->decls, name, len);
    if (d && declares_values(d->ptr))
        return;
    if (ntab_add(&k->warned, name, len, NULL, 0) < 0) {
        sgc_oom(k->s->c);
        return;
    }
    char what[700], note[900];
    rule_what(k, what, sizeof what);
    if (d) {
        const sgc_progdecl *pd = d->ptr;
        snprintf(note, sizeof note, "an option's value before the subcommand is taken for it ('prod' in "
                 "'kubectl -n prod delete'), so the rule misses; list the options of '%.*s' that take a value "
                 "in its declaration at %s:%u (value { ... }; an empty value { } says it has none)",
                 (int)len, name, k->s->c->files[pd->loc.file].name, sgc_line_of(k->s->c, pd->loc.file, pd->loc.off));
        sgc_warning_note(k->s->c, at->loc, note, "%s tests the subcommand of '%.*s', whose declaration lists "
                         "none of its options that take a value", what, (int)len, name);
    } else {
        snprintf(note, sizeof note, "an option's value before the subcommand is taken for it ('prod' in "
                 "'kubectl -n prod delete'), so the rule misses; declare the options that take a value: "
                 "command %.*s { value { ... } } (an empty value { } says it has none)", (int)len, name);
        sgc_warning_note(k->s->c, at->loc, note, "%s tests the subcommand of '%.*s', and no declaration says "
                         "which of its options take a value", what, (int)len, name);
    }
}

/* Does d list option o (n bytes) among those that take a value? */
static int declares_value(const sgc_progdecl *d, const char *o, uint32_t n)
{
    for (const sgc_clause *cl = d->clauses; cl; cl = cl->next)
        if (sgc_clause_takes_value(cl->kind))
            for (const sgc_wlist *w = cl->words; w; w = w->next)
                if (w->tok.len == n && memcmp(w->tok.text, o, n) == 0)
                    return 1;
    return 0;
}

/* `option M value V` (at) of program name: each option word of M that no
 * declaration of the program says takes a value is given none (`kubectl -n prod`
 * pairs prod with -n only where -n is declared), so the test misses. */
static void warn_option_value(subcmd_check *k, const sgc_cond *at, const char *name, uint32_t len)
{
    if (!at->set || at->set->set_index < 0)
        return;
    const named *d = ntab_find(&k->decls, name, len);
    const sgc_lset *ls = &k->s->p->sets[at->set->set_index];
    for (uint32_t i = 0; i < ls->nitems; i++) {
        const char *o = ls->items[i]->text;
        uint32_t ol = ls->items[i]->len;
        if (ls->items[i]->kind != SGC_ITEM_WORD || (d && declares_value(d->ptr, o, ol)))
            continue;
        char what[700], note[900];
        rule_what(k, what, sizeof what);
        snprintf(note, sizeof note, "only an option a declaration lists as taking a value is given one ('%.*s prod' "
                 "is then '%.*s' and the operand 'prod'), so the rule misses; add it to the value { ... } of "
                 "command %.*s", (int)ol, o, (int)ol, o, (int)len, name);
        sgc_warning_note(k->s->c, at->loc, note, "%s tests the value of option '%.*s' of '%.*s', which no "
                         "declaration says takes a value", what, (int)ol, o, (int)len, name);
    }
}

/* Does d say where its program connects (compiler/ast.h: url clauses, url,
 * remote or host operands)? */
static int declares_dests(const sgc_progdecl *d)
{
    for (const sgc_clause *cl = d->clauses; cl; cl = cl->next)
        if (cl->kind == SGC_CL_URL || cl->kind == SGC_CL_URL_UNKNOWN || cl->kind == SGC_CL_URL_OPS
            || cl->kind == SGC_CL_REMOTE_OPS || cl->kind == SGC_CL_HOST_OP)
            return 1;
    return 0;
}

/* `host M` (at, without only) of program name: where no declaration says which of
 * its operands and options name a place, only its URL words are destinations, so
 * `nc evil.test 80` escapes a deny by host.  (`host only M` is false without a
 * destination, so it only asks more: no warning.) */
static void warn_dest(subcmd_check *k, const sgc_cond *at, const char *name, uint32_t len)
{
    if (len == 0 || ntab_find(&k->warned, name, len))
        return;
    const named *d = ntab_find(&k->decls, name, len);
    if (d && declares_dests(d->ptr))
        return;
    if (ntab_add(&k->warned, name, len, NULL, 0) < 0) {
        sgc_oom(k->s->c);
        return;
    }
    char what[700], note[900];
    rule_what(k, what, sizeof what);
    snprintf(note, sizeof note, "only its words that are URLs are places it connects to ('%.*s evil.test 80' has "
             "none), so the rule misses; say which operands or options name one: command %.*s { url operands } "
             "(or remote operands, host operand, url { OPTS }), or test 'host only', which a line without a "
             "known destination never satisfies", (int)len, name, (int)len, name);
    sgc_warning_note(k->s->c, at->loc, note, "%s tests where '%.*s' connects, and no declaration says which of "
                     "its operands or options name a place", what, (int)len, name);
}

/* Warn about each program c names (`program` tests, through `and`/`or`; not
 * under `not`), for the subcommand or option-value test at. */
static void programs_named(subcmd_check *k, const sgc_cond *c, const sgc_cond *at)
{
    if (!c)
        return;
    if (c->kind == SGC_C_AND || c->kind == SGC_C_OR) {
        programs_named(k, c->a, at);
        programs_named(k, c->b, at);
        return;
    }
    if (c->kind != SGC_C_PROGRAM || !c->set || c->set->set_index < 0)
        return;
    const sgc_lset *ls = &k->s->p->sets[c->set->set_index];
    for (uint32_t i = 0; i < ls->nitems; i++) {
        if (ls->items[i]->kind != SGC_ITEM_WORD)
            continue;
        const char *name = ls->items[i]->text;
        uint32_t len = ls->items[i]->len;
        const char *slash = memrchr(name, '/', len);
        if (at->kind == SGC_C_DEST)
            warn_dest(k, at, slash ? slash + 1 : name, slash ? len - (uint32_t)(slash + 1 - name) : len);
        else if (at->kind == SGC_C_OPTION_VAL && slash)
            warn_option_value(k, at, slash + 1, len - (uint32_t)(slash + 1 - name));
        else if (at->kind == SGC_C_OPTION_VAL)
            warn_option_value(k, at, name, len);
        else
            warn_program(k, at, name, len);
    }
}

static void find_subcommands(subcmd_check *k, const sgc_cond *c, const conj_ctx *ctx)
{
    if (!c)
        return;
    switch (c->kind) {
    case SGC_C_AND: {
        conj_ctx left = { c->b, ctx }, right = { c->a, ctx };
        find_subcommands(k, c->a, &left);
        find_subcommands(k, c->b, &right);
        return;
    }
    case SGC_C_OR:
        find_subcommands(k, c->a, ctx);
        find_subcommands(k, c->b, ctx);
        return;
    case SGC_C_NOT:
        find_subcommands(k, c->a, ctx);
        return;
    case SGC_C_DEST:
        if (c->form & SGT_DEST_ONLY)
            return;
        /* fall through */
    case SGC_C_SUBCOMMAND:
    case SGC_C_OPTION_VAL:
        for (const conj_ctx *x = ctx; x; x = x->up)
            programs_named(k, x->c, c);
        return;
    default:
        return;
    }
}

/* ---- relax ---------------------------------------------------------------------
 * `relax RULE [to allow|ask] [when C]` in a pack lifts RULE, an ask of a pack it
 * uses: RULE then holds only where C does not, and the relax is a rule of its own
 * that decides `to` (allow unless said) where RULE's condition and C hold.  Only an
 * ask, named in full or by its label, never a deny nor a rule of the same pack: a
 * deployment lifts its base's questions explicitly and cannot undo a protection.
 * Any other rule that matches still decides as it would (the strictest wins). */

static sgc_cond *new_cond(sema *s, sgc_cond_kind k, sgc_loc loc, sgc_cond *a, sgc_cond *b)
{
    sgc_cond *c = sg_arena_alloc(&s->c->arena, sizeof *c);
    if (!c) {
        sgc_oom(s->c);
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->kind = k;
    c->loc = loc;
    c->a = a;
    c->b = b;
    c->hook = -1;
    return c;
}

static void relax_error(sema *s, const sgc_rule *r, const char *note, const char *fmt, const char *id)
{
    sgc_error_note(s->c, r->relax.loc, note, fmt, id);
}

static void join_relaxes(sema *s, sgc_cond **orig)
{
    sgc_program *p = s->p;
    for (uint32_t i = 0; i < p->nrules && !s->c->oom; i++) {
        sgc_lrule *x = &p->rules[i];
        sgc_rule *r = x->rule;
        if (!r->relax.len)
            continue;
        const named *t = ntab_find(&s->ids, r->relax.text, r->relax.len);
        if (!t)
            t = ntab_find(&s->labels, r->relax.text, r->relax.len);
        if (!t) {
            const named *near = ntab_closest(&s->ids, r->relax.text, r->relax.len);
            char note[300];
            if (near)
                snprintf(note, sizeof note, "did you mean '%.*s'?", (int)near->len, near->name);
            char what[300];
            snprintf(what, sizeof what, "%.*s", (int)r->relax.len, r->relax.text);
            relax_error(s, r, near ? note : NULL, "relax names rule '%s', which does not exist", what);
            continue;
        }
        uint32_t bi = (uint32_t)(uintptr_t)t->ptr;
        sgc_lrule *b = &p->rules[bi];
        if (r->decision == SGT_DENY) {
            sgc_error(s->c, r->relax_kw, "relax lifts an ask to allow or to ask, never to deny: write a deny rule");
            continue;
        }
        if (b->rule->relax.len) {
            relax_error(s, r, NULL, "rule %s is a relax itself: relax the ask it lifts", b->id);
            continue;
        }
        if (b->pack == x->pack) {
            relax_error(s, r, "relax lifts an ask of a pack this one uses; change this pack's own rule instead",
                        "rule %s is this pack's own", b->id);
            continue;
        }
        if (b->rule->decision != SGT_ASK) {
            relax_error(s, r, b->rule->decision == SGT_DENY ? "a deployment narrows or lifts its base pack's "
                        "questions; it cannot undo a protection" : "it decides allow already: there is nothing to lift",
                        b->rule->decision == SGT_DENY ? "rule %s is a deny: only an ask can be relaxed"
                                                      : "rule %s is an allow: only an ask can be relaxed", b->id);
            continue;
        }
        /* RULE and not C; the relax: RULE's own condition and C */
        sgc_cond *w = r->cond;
        sgc_cond *never = w ? NULL : new_cond(s, SGC_C_ANY, r->loc, NULL, NULL);
        sgc_cond *unless = new_cond(s, SGC_C_NOT, r->loc, w ? w : never, NULL);
        sgc_cond *base = unless ? new_cond(s, SGC_C_AND, b->rule->loc, b->rule->cond, unless) : NULL;
        sgc_cond *mine = w ? new_cond(s, SGC_C_AND, r->loc, orig[bi], w) : orig[bi];
        if (!base || !mine)
            return;
        b->rule->cond = base;
        r->cond = mine;
        if (!r->msg.text) {
            /* say what it lifts: explain and the decision name both rules */
            char buf[700];
            snprintf(buf, sizeof buf, "'{command}' is %s by {rule}, which relaxes %s",
                     r->decision == SGT_ALLOW ? "allowed" : "asked about", b->id);
            char *m = sg_arena_strndup(&s->c->arena, buf, strlen(buf));
            if (!m) {
                sgc_oom(s->c);
                return;
            }
            r->msg.text = m;
            r->msg.len = (uint32_t)strlen(m);
            r->msg.loc = r->loc;
        }
    }
}

static void check_subcommand_programs(sema *s)
{
    sgc_comp *c = s->c;
    subcmd_check k;
    memset(&k, 0, sizeof k);
    k.s = s;
    for (uint32_t f = 0; f < s->p->norder; f++)
        for (sgc_progdecl *d = c->files[s->p->order[f]].ast.progs; d; d = d->next)
            for (const sgc_wlist *w = d->names; w; w = w->next)
                if (!ntab_find(&k.decls, w->tok.text, w->tok.len)
                    && ntab_add(&k.decls, w->tok.text, w->tok.len, d, s->p->order[f]) < 0) {
                    sgc_oom(c);
                    goto out;
                }
    for (uint32_t i = 0; i < s->p->nrules && !c->oom; i++) {
        k.rule = &s->p->rules[i];
        k.warned.n = 0;
        if (k.warned.slots)
            memset(k.warned.slots, 0, sizeof *k.warned.slots * k.warned.nslots);
        find_subcommands(&k, k.rule->rule->cond, NULL);
    }
    k.rule = NULL;
    for (uint32_t f = 0; f < s->p->norder && !c->oom; f++)
        for (const sgc_limit *l = c->files[s->p->order[f]].ast.limits; l; l = l->next) {
            k.limit = l;
            k.warned.n = 0;
            if (k.warned.slots)
                memset(k.warned.slots, 0, sizeof *k.warned.slots * k.warned.nslots);
            find_subcommands(&k, l->when, NULL);
        }
out:
    sg_free(k.decls.v);
    sg_free(k.decls.slots);
    sg_free(k.warned.v);
    sg_free(k.warned.slots);
}

/* ---- Lua hooks ------------------------------------------------------------ */

static int ident_char(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* Does Lua source text define the global function fn (`function fn(` or
 * `fn = function`)?  A textual check: the sandbox finds out for sure at load. */
static int defines(const char *t, size_t n, const char *fn, size_t fl)
{
    for (size_t i = 0; i + fl <= n; i++) {
        if (memcmp(t + i, fn, fl) != 0 || (i > 0 && (ident_char(t[i - 1]) || t[i - 1] == '.' || t[i - 1] == ':'))
            || (i + fl < n && ident_char(t[i + fl])))
            continue;
        size_t b = i;
        while (b > 0 && (t[b - 1] == ' ' || t[b - 1] == '\t'))
            b--;
        if (b >= 8 && memcmp(t + b - 8, "function", 8) == 0 && (b == 8 || !ident_char(t[b - 9])))
            return 1;
        size_t a = i + fl;
        while (a < n && (t[a] == ' ' || t[a] == '\t'))
            a++;
        if (a < n && t[a] == '=' && (a + 1 >= n || t[a + 1] != '=')) {
            a++;
            while (a < n && (t[a] == ' ' || t[a] == '\t'))
                a++;
            if (a + 8 <= n && memcmp(t + a, "function", 8) == 0)
                return 1;
        }
    }
    return 0;
}

static void resolve_hook(sema *s, sgc_cond *c)
{
    sgc_program *p = s->p;
    c->hook = -1;
    if (c->str.len == 0 || c->str.len > 200) {
        sgc_error(s->c, c->str.loc, "a hook is named by its Lua function name");
        return;
    }
    for (uint32_t i = 0; i < p->nhooks; i++)
        if (p->hooks[i].fn_len == c->str.len && memcmp(p->hooks[i].fn, c->str.text, c->str.len) == 0) {
            c->hook = (int32_t)i;
            return;
        }
    for (uint32_t k = 0; k < p->nhookfiles; k++) {
        const sgc_hookfile *hf = &p->hookfiles[k];
        if (!defines(hf->text, hf->len, c->str.text, c->str.len))
            continue;
        sgc_hook *nv = sg_realloc(p->hooks, sizeof *nv * (p->nhooks + 1));
        if (!nv) {
            sgc_oom(s->c);
            return;
        }
        p->hooks = nv;
        nv[p->nhooks].fn = c->str.text;
        nv[p->nhooks].fn_len = c->str.len;
        nv[p->nhooks].source = hf->text;
        nv[p->nhooks].source_len = hf->len;
        c->hook = (int32_t)p->nhooks++;
        return;
    }
    if (p->nhookfiles == 0)
        sgc_error(s->c, c->str.loc, "'lua \"%.*s\"' needs a hook file: add hooks \"file.lua\" (or hooks \"std/%.*s\")",
                  (int)c->str.len, c->str.text, (int)c->str.len, c->str.text);
    else
        sgc_error(s->c, c->str.loc, "no hook file of this pack defines function '%.*s'", (int)c->str.len, c->str.text);
}

/* Load every `hooks "file"` of the files in order, and the main pack's limits. */
static void load_hooks(sema *s)
{
    sgc_comp *c = s->c;
    sgc_program *p = s->p;
    for (uint32_t k = 0; k < p->norder; k++) {
        uint32_t f = p->order[k];
        for (sgc_wlist *w = c->files[f].ast.hooks; w; w = w->next) {
            char name[600];
            if (w->tok.len == 0 || w->tok.len > 500 || memchr(w->tok.text, '\0', w->tok.len)) {
                sgc_error(c, w->tok.loc, "bad hook file name");
                continue;
            }
            snprintf(name, sizeof name, "%.*s", (int)w->tok.len, w->tok.text);
            const char *text = NULL;
            size_t len = 0;
            char *owned = NULL;
            if (strncmp(name, "std/", 4) == 0) {
                char emb[620];
                snprintf(emb, sizeof emb, "std/lua/%s", name + 4);
                if (!(c->opt && c->opt->embedded && c->opt->embedded(c->opt->embedded_ud, emb, &text, &len)))
                    text = NULL;
            } else {
                const char *dirs[66];
                size_t nd = 0;
                if (c->files[f].dir)
                    dirs[nd++] = c->files[f].dir;
                for (size_t i = 0; c->opt && i < c->opt->ninclude && nd < 64; i++)
                    dirs[nd++] = c->opt->include_dirs[i];
                for (size_t i = 0; i < nd && !owned; i++) {
                    char path[1200];
                    if (name[0] == '/')
                        snprintf(path, sizeof path, "%s", name);
                    else
                        snprintf(path, sizeof path, "%s/%s", dirs[i], name);
                    owned = read_file(path, &len);
                }
                text = owned;
            }
            if (!text) {
                sgc_error(c, w->tok.loc, "cannot find hook file '%s'", name);
                continue;
            }
            if (memchr(text, '\0', len)) {
                sgc_error(c, w->tok.loc, "hook file '%s' holds a NUL byte (hooks are Lua source text)", name);
                sg_free(owned);
                continue;
            }
            /* parse it now: a syntax error is this pack's error, with the file and
             * line Lua gives, not a deny at every decision that calls the hook */
            lua_State *L = luaL_newstate();
            if (!L) {
                sg_free(owned);
                sgc_oom(c);
                return;
            }
            char chunk[620];
            snprintf(chunk, sizeof chunk, "=%s", name);
            if (luaL_loadbufferx(L, text, len, chunk, "t") != LUA_OK) {
                const char *why = lua_tostring(L, -1);
                sgc_error(c, w->tok.loc, "hook file does not compile: %s", why ? why : "(no message)");
            }       /* kept, so the rules that call it are not reported as well */
            lua_close(L);
            char *copy = sg_arena_strndup(&c->arena, text, len);
            sg_free(owned);
            sgc_hookfile *nv = copy ? sg_realloc(p->hookfiles, sizeof *nv * (p->nhookfiles + 1)) : NULL;
            if (!nv) {
                sgc_oom(c);
                return;
            }
            p->hookfiles = nv;
            nv[p->nhookfiles].name = sg_arena_strndup(&c->arena, name, strlen(name));
            nv[p->nhookfiles].text = copy;
            nv[p->nhookfiles].len = len;
            p->nhookfiles++;
        }
    }
    const sgc_file_ast *ma = &c->files[0].ast;
    for (const sgc_wlist *w = ma->hook_limits; w && w->next; w = w->next->next) {
        const sgc_tok *key = &w->tok, *val = &w->next->tok;
        long v = sgc_tok_number(val);
        if (v < 1) {
            sgc_error(c, val->loc, "a hook limit is a whole number above 0, not '%.*s'", (int)val->len, val->text);
            continue;
        }
        if (tok_eq(key, "instructions"))
            p->hook_budget = (uint32_t)v;
        else if (tok_eq(key, "memory"))
            p->hook_memory = (uint32_t)v;
        else if (tok_eq(key, "millis"))
            p->hook_millis = (uint32_t)v;
        else
            sgc_error(c, key->loc, "unknown hook limit '%.*s' (instructions, memory, millis)", (int)key->len, key->text);
    }
}

/* ---- messages ------------------------------------------------------------- */

static const char *const placeholder_names[] = {
#define X(id, name) name,
    SGT_PLACEHOLDERS(X)
#undef X
    NULL
};

static const char *const limit_placeholder_names[] = {
#define X(id, name) name,
    SGT_LIMIT_PLACEHOLDERS(X)
#undef X
    NULL
};

/* Every "{name}" in a message or hint names a placeholder (SGT_PLACEHOLDERS): a
 * misspelt one would be shown verbatim to every agent it refuses.  A brace around
 * anything but a lower-case name ("{a,b}", "${HOME}") is text. */
static void check_placeholders(sema *s, const sgc_tok *t, const char *const *names)
{
    if (!t->text)
        return;
    const char *m = t->text, *end = m + t->len;
    uint32_t raw_from = 0;              /* where the next search of the source starts */
    for (const char *p = memchr(m, '{', t->len); p; p = p + 1 < end ? memchr(p + 1, '{', (size_t)(end - p - 1)) : NULL) {
        const char *q = p + 1;
        while (q < end && ((*q >= 'a' && *q <= 'z') || *q == '_'))
            q++;
        size_t n = (size_t)(q - p - 1);
        if (q == end || *q != '}' || n == 0)
            continue;
        const char *best = NULL;
        unsigned bd = 3;
        int known = 0;
        for (size_t i = 0; names[i]; i++) {
            const char *nm = names[i];
            if (strlen(nm) == n && memcmp(nm, p + 1, n) == 0)
                known = 1;
            unsigned d = sgc_edit_distance(p + 1, n, nm, strlen(nm));
            if (d < bd) {
                bd = d;
                best = nm;
            }
        }
        if (known)
            continue;
        /* point at the placeholder itself where the source spells it as is */
        sgc_loc at = t->loc;
        const sgc_source *src = &s->c->files[t->loc.file];
        if (t->loc.off + t->loc.len <= src->len) {
            const char *raw = src->text + t->loc.off;
            for (uint32_t i = raw_from; i + n + 2 <= t->loc.len; i++)
                if (memcmp(raw + i, p, n + 2) == 0) {
                    at.off += i;
                    at.len = (uint32_t)n + 2;
                    raw_from = i + (uint32_t)n + 2;
                    break;
                }
        }
        char note[200];
        if (best) {
            snprintf(note, sizeof note, "did you mean '{%s}'?", best);
        } else {
            size_t k = (size_t)snprintf(note, sizeof note, "the placeholders here are");
            for (size_t i = 0; names[i] && k < sizeof note; i++)
                k += (size_t)snprintf(note + k, sizeof note - k, " {%s}", names[i]);
        }
        sgc_error_note(s->c, at, note, "unknown placeholder '{%.*s}' in %s", (int)n, p + 1,
                       names == limit_placeholder_names ? "a rate limit's message" : "a message");
    }
}

static void check_messages(sema *s)
{
    for (uint32_t k = 0; k < s->p->norder; k++) {
        const sgc_file_ast *a = &s->c->files[s->p->order[k]].ast;
        check_placeholders(s, &a->default_msg, placeholder_names);
        check_placeholders(s, &a->default_hint, placeholder_names);
        for (const sgc_rule *r = a->rules; r; r = r->next) {
            check_placeholders(s, &r->msg, placeholder_names);
            check_placeholders(s, &r->hint, placeholder_names);
        }
        for (const sgc_limit *l = a->limits; l; l = l->next)
            check_placeholders(s, &l->msg, limit_placeholder_names);
    }
}

/* ---- the driver ----------------------------------------------------------- */

static void visit(sema *s, uint32_t f, uint8_t *state)
{
    if (state[f])
        return;
    state[f] = 1;
    for (sgc_use *u = s->c->files[f].ast.uses; u; u = u->next) {
        int idx = (int)(intptr_t)u->what.flags;   /* resolved index + 1, see below */
        if (idx > 0)
            visit(s, (uint32_t)idx - 1, state);
    }
    s->p->order[s->p->norder++] = f;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

int sgc_sema(sgc_comp *c, const sgc_input *inputs, size_t n, sgc_program *p)
{
    sema s;
    memset(&s, 0, sizeof s);
    memset(p, 0, sizeof *p);
    s.c = c;
    s.p = p;
    sgc_loc none = { UINT32_MAX, 0, 0 };
    if (n == 0) {
        sgc_error(c, none, "no rule file given");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = inputs[i].len;
        char *owned = NULL;
        const char *text = inputs[i].text;
        if (!text) {
            owned = read_file(inputs[i].name, &len);
            if (!owned) {
                sgc_error(c, none, "cannot read '%s': %s", inputs[i].name, strerror(errno));
                continue;
            }
            text = owned;
        }
        char *d = inputs[i].text ? NULL : dir_of(inputs[i].name);
        int idx = sgc_add_source(c, inputs[i].name, d, text, len, inputs[i].text != NULL);
        sg_free(d);
        sg_free(owned);
        if (idx < 0) {
            sgc_oom(c);
            return -1;
        }
        sgc_parse_file(c, (uint32_t)idx);
    }
    if (c->nerrors)
        return -1;
    p->ninputs = c->nfiles;
    /* follow `use`; the use token's flags field records the resolved file + 1 */
    for (uint32_t f = 0; f < c->nfiles && !c->oom; f++) {
        for (sgc_use *u = c->files[f].ast.uses; u; u = u->next) {
            int idx = resolve_use(c, f, &u->what);
            u->what.flags = idx >= 0 ? (uint32_t)idx + 1 : 0;
            if (c->oom)
                return -1;
        }
    }
    if (c->nerrors)
        return -1;
    p->order = sg_malloc(sizeof(uint32_t) * c->nfiles);
    uint8_t *state = sg_calloc(c->nfiles, 1);
    if (!p->order || !state) {
        sg_free(state);
        sgc_oom(c);
        return -1;
    }
    for (uint32_t f = 0; f < p->ninputs; f++)
        visit(&s, f, state);
    for (uint32_t f = 0; f < c->nfiles; f++)
        visit(&s, f, state);
    sg_free(state);
    p->main_file = 0;

    /* packs */
    p->packs = sg_calloc(c->nfiles, sizeof *p->packs);
    if (!p->packs) {
        sgc_oom(c);
        return -1;
    }
    for (uint32_t f = 0; f < c->nfiles; f++) {
        sgc_file_ast *a = &c->files[f].ast;
        sgc_lpack *pk = &p->packs[p->npacks++];
        pk->file = f;
        if (a->pack_name.len) {
            pk->name = a->pack_name.text;
            pk->name_len = a->pack_name.len;
            long v = sgc_tok_number(&a->pack_version);
            if (v < 0)
                sgc_error(c, a->pack_version.loc, "pack version must be a whole number, not '%.*s'",
                          (int)a->pack_version.len, a->pack_version.text);
            pk->version = v < 0 ? 0 : (uint32_t)v;
        } else {
            pk->name = base_name(c->files[f].name);
            pk->name_len = (uint32_t)strlen(pk->name);
        }
    }
    sgc_file_ast *mainast = &c->files[0].ast;
    sgc_loc start = { 0, 0, 0 };
    if (!mainast->pack_name.len)
        sgc_error(c, start, "a pack starts with 'pack NAME version N'");
    if (!mainast->has_default)
        sgc_error(c, mainast->pack_name.len ? mainast->pack_loc : start,
                  "pack has no 'default': say what happens to a command no rule matches (e.g. default deny \"...\")");

    /* sets: one namespace over every file */
    for (uint32_t k = 0; k < p->norder; k++) {
        uint32_t f = p->order[k];
        for (sgc_setdef *d = c->files[f].ast.sets; d; d = d->next) {
            named *prev = ntab_find(&s.sets, d->name.text, d->name.len);
            if (prev) {
                sgc_error(c, d->name.loc, "set '%.*s' is defined twice", (int)d->name.len, d->name.text);
                continue;
            }
            if (ntab_add(&s.sets, d->name.text, d->name.len, d, f) < 0) {
                sgc_oom(c);
                goto out;
            }
        }
    }
    /* every named set is checked (patterns, emptiness) even if unused */
    for (uint32_t i = 0; i < s.sets.n && !c->oom; i++) {
        sgc_setdef *d = s.sets.v[i].ptr;
        sgc_setexpr tmp;
        memset(&tmp, 0, sizeof tmp);
        tmp.head = tmp.tail = NULL;
        sgc_item ref;
        memset(&ref, 0, sizeof ref);
        ref.kind = SGC_ITEM_SETREF;
        ref.text = d->name.text;
        ref.len = d->name.len;
        ref.loc = d->name.loc;
        tmp.head = tmp.tail = &ref;
        tmp.loc = d->expr->loc;
        tmp.set_index = -1;
        lower_matcher(&s, &tmp, SGT_SETK_MATCH);
    }

    load_hooks(&s);
    check_messages(&s);

    /* rules, dependencies first */
    uint32_t nr = 0;
    for (uint32_t f = 0; f < c->nfiles; f++)
        for (sgc_rule *r = c->files[f].ast.rules; r; r = r->next)
            nr++;
    p->rules = sg_calloc(nr ? nr : 1, sizeof *p->rules);
    if (!p->rules) {
        sgc_oom(c);
        goto out;
    }
    for (uint32_t k = 0; k < p->norder && !c->oom; k++) {
        uint32_t f = p->order[k];
        for (sgc_rule *r = c->files[f].ast.rules; r; r = r->next) {
            sgc_lrule *lr = &p->rules[p->nrules];
            lr->rule = r;
            lr->file = f;
            lr->pack = f;
            lr->line = sgc_line_of(c, f, r->loc.off);
            char idbuf[600];
            if (r->label.len)
                snprintf(idbuf, sizeof idbuf, "%.*s:%.*s", (int)p->packs[f].name_len, p->packs[f].name,
                         (int)r->label.len, r->label.text);
            else
                snprintf(idbuf, sizeof idbuf, "%s:%u", base_name(c->files[f].name), lr->line);
            lr->id = sg_arena_strndup(&c->arena, idbuf, strlen(idbuf));
            if (!lr->id) {
                sgc_oom(c);
                goto out;
            }
            if (ntab_find(&s.ids, lr->id, (uint32_t)strlen(lr->id))) {
                sgc_error(c, r->label.loc, "rule name '%.*s' is used twice in this pack",
                          (int)r->label.len, r->label.text);
            } else if (ntab_add(&s.ids, lr->id, (uint32_t)strlen(lr->id), (void *)(uintptr_t)p->nrules, f) < 0
                       || (r->label.len && ntab_add(&s.labels, r->label.text, r->label.len,
                                                    (void *)(uintptr_t)p->nrules, f) < 0)) {
                sgc_oom(c);
                goto out;
            }
            if (r->cond)
                check_cond(&s, r->cond);
            p->nrules++;
        }
    }
    /* relaxes join the asks they lift, each with the ask's condition as written */
    sgc_cond **orig = sg_malloc(sizeof *orig * (p->nrules ? p->nrules : 1));
    if (!orig) {
        sgc_oom(c);
        goto out;
    }
    for (uint32_t i = 0; i < p->nrules; i++)
        orig[i] = p->rules[i].rule->cond;
    join_relaxes(&s, orig);
    sg_free(orig);
    /* limits */
    for (uint32_t k = 0; k < p->norder; k++)
        for (sgc_limit *l = c->files[p->order[k]].ast.limits; l; l = l->next)
            check_cond(&s, l->when);
    /* tests of the given files name real rules */
    for (uint32_t f = 0; f < p->ninputs; f++)
        for (sgc_test *t = c->files[f].ast.tests; t; t = t->next) {
            if (!t->rule.len || tok_eq(&t->rule, "dynamic") || tok_eq(&t->rule, "default"))
                continue;
            if (ntab_find(&s.ids, t->rule.text, t->rule.len) || ntab_find(&s.labels, t->rule.text, t->rule.len))
                continue;
            const named *near = ntab_closest(&s.labels, t->rule.text, t->rule.len);
            char note[200];
            if (near)
                snprintf(note, sizeof note, "did you mean '%.*s'?", (int)near->len, near->name);
            sgc_error_note(c, t->rule.loc, near ? note : NULL, "test names rule '%.*s', which does not exist",
                           (int)t->rule.len, t->rule.text);
        }
    /* patterns of every set, named or inline, once each */
    for (uint32_t i = 0; i < p->nsets; i++)
        for (uint32_t k = 0; k < p->sets[i].nitems; k++) {
            sgc_item *it = p->sets[i].items[k];
            if (!it->checked) {
                it->checked = 1;
                check_pattern(&s, it);
            }
        }
    if (!c->nerrors)
        check_shadowing(&s);
    if (!c->nerrors)
        check_subcommand_programs(&s);
out:
    sg_free(s.sets.v);
    sg_free(s.ids.v);
    sg_free(s.labels.v);
    sg_free(s.sets.slots);
    sg_free(s.ids.slots);
    sg_free(s.labels.slots);
    return c->nerrors ? -1 : 0;
}

void sgc_program_free(sgc_program *p)
{
    for (uint32_t i = 0; i < p->nsets; i++)
        sg_free(p->sets[i].items);
    sg_free(p->sets);
    sg_free(p->rules);
    sg_free(p->packs);
    sg_free(p->order);
    sg_free(p->hookfiles);
    sg_free(p->hooks);
    memset(p, 0, sizeof *p);
}
