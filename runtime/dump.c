/* dump.c - readable, deterministic listing of a verified matcher table (`shellgate dump`). */
#include "table.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Names and operand shapes, generated from the X-macro lists in sgt.h (STYLE 4). */
static const struct {
    const char *name;
    uint8_t uses_set;
} dop[SGT_NOPS] = {
#define X(id, name, uses_set) {name, uses_set},
    SGT_OPS(X)
#undef X
};

static const char *const ddecision[SGT_NDECISIONS] = {
#define X(id, name) name,
    SGT_DECISIONS(X)
#undef X
};

static const char *const dsetkind[] = {
#define X(id, name) name,
    SGT_SET_KINDS(X)
#undef X
};

static const char *const dcmp[SGT_NCMPS] = {
#define X(id, text) text,
    SGT_CMPS(X)
#undef X
};

static const char *const dsection[SGT_NSECTIONS] = {
#define X(id, name, rec) name,
    SGT_SECTIONS(X)
#undef X
};

/* Flag bits are plain #defines in sgt.h; their names live here, in bit order. */
typedef struct flagname {
    uint32_t bit;
    const char *name;
} flagname;

static const flagname rule_flags[] = {
    {SGT_RULE_LINE, "line"}, {SGT_RULE_DYNAMIC, "dynamic"}, {SGT_RULE_LUA, "lua"}, {0, NULL}};

static const flagname prog_flags[] = {
    {SGT_PROG_WRAPPER, "wrapper"},     {SGT_PROG_RUNS_NOTHING, "runs-nothing"},
    {SGT_PROG_ASSIGNMENTS, "assignments"}, {SGT_PROG_PERMUTE, "permute"},
    {SGT_PROG_JOIN, "join"},           {SGT_PROG_MOREARGS, "moreargs"},
    {SGT_PROG_TEXT_OPERAND, "text-operand"},
    {SGT_PROG_STDIN, "stdin"},         {SGT_PROG_WRITES, "writes-operands"},
    {SGT_PROG_COPIES, "copies"},       {SGT_PROG_RUNS_FILE, "runs-operand"},
    {SGT_PROG_NO_STDIN, "stdin-nothing"}, {SGT_PROG_TREE, "tree-operands"},
    {SGT_PROG_TEXT_ALL, "text-operands"}, {SGT_PROG_SCRIPTS, "scripts"},
    {SGT_PROG_SUBCOMMANDS, "subcommands"},
    {SGT_PROG_URL_OPS, "url-operands"}, {SGT_PROG_REMOTE_OPS, "remote-operands"},
    {SGT_PROG_HOST_OP, "host-operand"},
    {0, NULL}};

/* Words shown per set operand in a disassembly line; the sets section lists all. */
#define DUMP_OPERAND_WORDS 8

/* Output buffer: text reaches the callback in chunks (not necessarily whole lines). */
typedef struct dumper {
    sgr_out_fn out;
    void *ud;
    const sgr_table *t;
    size_t n;
    char buf[4096];
} dumper;

static void flush(dumper *d)
{
    if (d->n)
        d->out(d->ud, d->buf, d->n);
    d->n = 0;
}

static void put(dumper *d, const char *s, size_t n)
{
    while (n) {
        if (d->n == sizeof d->buf)
            flush(d);
        size_t k = sizeof d->buf - d->n;
        if (k > n)
            k = n;
        memcpy(d->buf + d->n, s, k);
        d->n += k;
        s += k;
        n -= k;
    }
}

static void put_str(dumper *d, const char *s)
{
    put(d, s, strlen(s));
}

/* printf for numbers and fixed names only (table strings go through put_quoted/put_word, which
 * have no length limit). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void putf(dumper *d, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(d, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* s as a C-style quoted string: control bytes escaped, other bytes as they are. */
static void put_quoted(dumper *d, const char *s)
{
    put(d, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': put_str(d, "\\\""); break;
        case '\\': put_str(d, "\\\\"); break;
        case '\n': put_str(d, "\\n"); break;
        case '\t': put_str(d, "\\t"); break;
        case '\r': put_str(d, "\\r"); break;
        default:
            if (c < 0x20 || c == 0x7f)
                putf(d, "\\x%02x", c);
            else
                put(d, s, 1);
        }
    }
    put(d, "\"", 1);
}

/* A word bare when that is unambiguous in a `{a b c}` list, else quoted. */
static void put_word(dumper *d, const char *s)
{
    int bare = *s != '\0';
    for (const char *p = s; *p && bare; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= 0x20 || c == 0x7f || strchr("\"'\\{}", c))
            bare = 0;
    }
    if (bare)
        put_str(d, s);
    else
        put_quoted(d, s);
}

static void put_hex(dumper *d, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        putf(d, "%02x", b[i]);
}

static void put_flags(dumper *d, uint32_t flags, const flagname *names)
{
    const char *sep = "";
    for (const flagname *f = names; f->name; f++)
        if (flags & f->bit) {
            putf(d, "%s%s", sep, f->name);
            sep = "|";
        }
}

/* `{w1 w2 ...}` for strs[off..off+len), at most max words (0 = all). */
static void put_words(dumper *d, const uint32_t *strs, uint32_t off, uint32_t len, uint32_t max)
{
    put(d, "{", 1);
    for (uint32_t i = 0; i < len; i++) {
        if (max && i == max) {
            putf(d, " ...+%u", len - max);
            break;
        }
        if (i)
            put(d, " ", 1);
        put_word(d, sgr_str(d->t, strs[off + i]));
    }
    put(d, "}", 1);
}

static void put_list(dumper *d, uint32_t off, uint32_t len)
{
    put(d, "[", 1);
    for (uint32_t i = 0; i < len; i++)
        putf(d, i ? " %u" : "%u", d->t->lists[off + i]);
    put(d, "]", 1);
}

/* A set operand: `set#N name {words} +dfa#K`, or `any` for SGT_NONE. */
static void put_set(dumper *d, uint32_t s)
{
    if (s == SGT_NONE) {
        put_str(d, "any");
        return;
    }
    const sgt_set *set = &d->t->sets[s];
    putf(d, "set#%u ", s);
    if (set->name && *sgr_str(d->t, set->name)) {
        put_word(d, sgr_str(d->t, set->name));
        put(d, " ", 1);
    }
    put_words(d, d->t->words, set->words_off, set->nwords, DUMP_OPERAND_WORDS);
    if (set->dfa != SGT_NONE)
        putf(d, " +dfa#%u", set->dfa);
}

/* Disassemble code[off..off+len) one instruction a line: `<indent>k: op  operands`. */
static void disasm(dumper *d, uint32_t off, uint32_t len, const char *indent)
{
    const sgr_table *t = d->t;
    for (uint32_t k = 0; k < len / 2; k++) {
        uint32_t w0 = t->code[off + 2 * k], b = t->code[off + 2 * k + 1];
        uint32_t op = w0 & 0xff, a = w0 >> 8;
        putf(d, "%s%u: %s", indent, k, dop[op].name);
        switch (op) {
        case SGT_OP_ARG_AT:
            putf(d, "  at %u ", a);
            put_set(d, b);
            break;
        case SGT_OP_ASSIGNS_VAL:
        case SGT_OP_OPTION_VAL:
            put_str(d, "  ");
            put_set(d, a & ~SGT_NEGATE_VALUE);
            put_str(d, (a & SGT_NEGATE_VALUE) ? " = not " : " = ");
            put_set(d, b);
            break;
        case SGT_OP_ARGC:
            putf(d, "  %s %u", dcmp[a], b);
            break;
        case SGT_OP_LUA:
            putf(d, "  hook#%u ", b);
            put_word(d, sgr_str(t, t->hooks[b].name));
            break;
        case SGT_OP_JUMP_FALSE:
        case SGT_OP_JUMP_TRUE:
            putf(d, "  +%u -> %u", b, k + 1 + b);
            break;
        case SGT_OP_NESTED:
            putf(d, "  mask 0x%x", a);
            break;
        default:
            /* a is unused here; show it if set so emitter bugs are visible */
            if (dop[op].uses_set) {
                put_str(d, "  ");
                put_set(d, b);
                if (a)
                    putf(d, " a=%u", a);
            } else if (a || b) {
                putf(d, "  a=%u b=%u", a, b);
            }
        }
        put(d, "\n", 1);
    }
}

static void dump_header(dumper *d)
{
    const sgr_table *t = d->t;
    const sgt_header *h = t->hdr;
    putf(d, "table v%u, %u bytes, checksum %016llx\n", h->version, h->total_size,
         (unsigned long long)h->checksum);
    if (h->flags & SGT_HDR_TEAM_LIMITS)
        put_str(d, "flags team-limits\n");
    put_str(d, "source sha256 ");
    put_hex(d, h->source_sha256, sizeof h->source_sha256);
    put_str(d, "\nsections\n");
    for (int i = 0; i < SGT_NSECTIONS; i++)
        putf(d, "  %-10s off %6u size %6u\n", dsection[i], h->sec[i].off, h->sec[i].size);
}

static void dump_meta(dumper *d)
{
    const sgr_table *t = d->t;
    const sgt_meta *m = t->meta;
    put_str(d, "meta\n  pack ");
    put_quoted(d, sgr_str(t, m->pack_name));
    putf(d, " version %u", m->pack_version);
    putf(d, "\n  default %s ", ddecision[m->default_decision]);
    put_quoted(d, sgr_str(t, m->default_msg));
    if (m->default_hint) {
        put_str(d, " hint ");
        put_quoted(d, sgr_str(t, m->default_hint));
    }
    put_str(d, "\n  any-rules ");
    put_list(d, m->any_off, m->any_len);
    put_str(d, "\n  line-rules ");
    put_list(d, m->line_off, m->line_len);
    putf(d, "\n  dynamic-rules %u\n  hook budget %u memory %u millis %u\n", m->dynamic_rules,
         m->hook_budget, m->hook_memory, m->hook_millis);
    putf(d, "  counts: %u sets, %u words, %u dfas, %u code words, %u rules, %u buckets, "
         "%u list ids, %u progspecs, %u progopts, %u limits, %u hooks, %u tests, %u packs\n",
         t->nsets, t->nwords, t->ndfas, t->ncode, t->nrules, t->nbuckets, t->nlists, t->nprogs,
         t->nprogopts, t->nlimits, t->nhooks, t->ntests, t->npacks);
}

static void dump_sets(dumper *d)
{
    const sgr_table *t = d->t;
    put_str(d, "sets\n");
    for (uint32_t i = 0; i < t->nsets; i++) {
        const sgt_set *s = &t->sets[i];
        putf(d, "  set#%u ", i);
        put_quoted(d, sgr_str(t, s->name));
        putf(d, " %s ", dsetkind[s->kind]);
        put_words(d, t->words, s->words_off, s->nwords, 0);
        if (s->dfa != SGT_NONE)
            putf(d, " dfa#%u (%u states, %u classes)", s->dfa, t->dfas[s->dfa].nstates,
                 t->dfas[s->dfa].nclasses);
        for (uint32_t k = 0; k < t->npatterns; k++) {
            static const char *const pk[] = {
#define X(id, name) name,
                SGT_PAT_KINDS(X)
#undef X
            };
            const sgt_pattern *p = &t->patterns[k];
            if (p->set != i)
                continue;
            putf(d, " %s%s ", pk[p->kind], p->icase ? "/i" : "");
            put_quoted(d, sgr_str(t, p->text));
        }
        put(d, "\n", 1);
    }
    put_str(d, "dfas\n");
    const sgt_dfa *raw = (const sgt_dfa *)(t->base + t->hdr->sec[SGT_SEC_DFAS].off);
    for (uint32_t i = 0; i < t->ndfas; i++)
        putf(d, "  dfa#%u %u states, %u classes, %u patterns, data +%u\n", i, raw[i].nstates,
             raw[i].nclasses, raw[i].npatterns, raw[i].data_off);
}

static void dump_rules(dumper *d)
{
    const sgr_table *t = d->t;
    put_str(d, "rules\n");
    for (uint32_t i = 0; i < t->nrules; i++) {
        const sgt_rule *r = &t->rules[i];
        putf(d, "  rule#%u ", i);
        put_quoted(d, sgr_str(t, r->id));
        putf(d, " %s pack#%u line %u", ddecision[r->decision], r->pack, r->line);
        if (r->flags) {
            put_str(d, " flags ");
            put_flags(d, r->flags, rule_flags);
        }
        put_str(d, "\n    message ");
        put_quoted(d, sgr_str(t, r->msg));
        if (r->hint) {
            put_str(d, "\n    hint ");
            put_quoted(d, sgr_str(t, r->hint));
        }
        put(d, "\n", 1);
        disasm(d, r->code_off, r->code_len, "    ");
    }
}

static void dump_index(dumper *d)
{
    const sgr_table *t = d->t;
    putf(d, "index (%u buckets)\n", t->nbuckets);
    for (uint32_t i = 0; i < t->nbuckets; i++) {
        const sgt_bucket *b = &t->index[i];
        if (b->name == SGT_NONE)
            continue;
        putf(d, "  %u: ", i);
        put_word(d, sgr_str(t, b->name));
        put_str(d, " -> ");
        put_list(d, b->list_off, b->list_len);
        put(d, "\n", 1);
    }
}

static void dump_progspecs(dumper *d)
{
    const sgr_table *t = d->t;
    put_str(d, "progspecs\n");
    for (uint32_t i = 0; i < t->nprogs; i++) {
        const sgt_progspec *p = &t->progs[i];
        put_str(d, "  ");
        put_word(d, sgr_str(t, p->name));
        if (p->flags) {
            put_str(d, " ");
            put_flags(d, p->flags, prog_flags);
        }
        putf(d, " skip %u\n", p->skip);
        sgr_prog_list sl[SGR_NPROG_LISTS];
        sgr_prog_lists(p, sl);
        for (int j = 0; j < SGR_NPROG_LISTS; j++)
            if (sl[j].len) {
                putf(d, "    %s ", sl[j].word);
                put_words(d, t->progopts, sl[j].off, sl[j].len, 0);
                put(d, "\n", 1);
            }
    }
}

static void dump_limits(dumper *d)
{
    const sgr_table *t = d->t;
    put_str(d, "limits\n");
    for (uint32_t i = 0; i < t->nlimits; i++) {
        const sgt_limit *l = &t->limits[i];
        putf(d, "  limit#%u ", i);
        put_word(d, sgr_str(t, l->name));
        for (uint32_t w = 0; w < l->nwindows; w++)
            putf(d, "%s %u per %us", w ? "," : "", l->count[w], l->seconds[w]);
        if (l->key == SGT_LIMIT_PER_TEAM)
            put_str(d, " per team");
        if (l->msg) {
            put_str(d, " message ");
            put_quoted(d, sgr_str(t, l->msg));
        }
        put_str(d, l->code_len ? "\n    when\n" : "\n    when every command\n");
        disasm(d, l->code_off, l->code_len, "      ");
    }
}

static void dump_rest(dumper *d)
{
    const sgr_table *t = d->t;
    put_str(d, "hooks\n");
    for (uint32_t i = 0; i < t->nhooks; i++) {
        const sgt_hook *h = &t->hooks[i];
        putf(d, "  hook#%u ", i);
        put_word(d, sgr_str(t, h->name));
        put_str(d, " sha256 ");
        put_hex(d, h->sha256, sizeof h->sha256);
        putf(d, " source %zu bytes\n", strlen(sgr_str(t, h->source)));
    }
    put_str(d, "tests\n");
    for (uint32_t i = 0; i < t->ntests; i++) {
        const sgt_test *x = &t->tests[i];
        putf(d, "  test#%u %s ", i, ddecision[x->decision]);
        put_quoted(d, sgr_str(t, x->command));
        if (x->rule) {
            put_str(d, " rule ");
            put_quoted(d, sgr_str(t, x->rule));
        }
        if (x->cwd) {
            put_str(d, " cwd ");
            put_quoted(d, sgr_str(t, x->cwd));
        }
        put_str(d, " at ");
        put_quoted(d, sgr_str(t, x->file));
        putf(d, ":%u\n", x->line);
    }
    put_str(d, "packs\n");
    for (uint32_t i = 0; i < t->npacks; i++) {
        const sgt_pack *p = &t->packs[i];
        putf(d, "  pack#%u ", i);
        put_quoted(d, sgr_str(t, p->name));
        putf(d, " version %u", p->version);
        put_str(d, " file ");
        put_quoted(d, sgr_str(t, p->file));
        put(d, "\n", 1);
    }
}

int sgr_table_dump(const sgr_table *t, sgr_out_fn out, void *ud)
{
    dumper d;
    d.out = out;
    d.ud = ud;
    d.t = t;
    d.n = 0;
    dump_header(&d);
    dump_meta(&d);
    dump_sets(&d);
    dump_rules(&d);
    dump_index(&d);
    dump_progspecs(&d);
    dump_limits(&d);
    dump_rest(&d);
    flush(&d);
    return 0;
}
