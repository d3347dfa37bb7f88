/* decompile.c - a table back to rule text: one pack that compiles to the same
 * decisions, and whose own table decompiles to the same text again (the
 * round-trip oracle of tests/test_roundtrip.c).  Every rule gets a label (its id's
 * label, or one made from its file:line id), sets are re-emitted in table order,
 * conditions are rebuilt from the bytecode's forward jumps. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "table.h"
#include "shparse.h"

typedef struct dc {
    const sgr_table *t;
    sgr_out_fn out;
    void *ud;
    char *err;
    size_t errlen;
    int failed;
} dc;

static void put(dc *d, const char *s, size_t n) { d->out(d->ud, s, n); }
static void puts_(dc *d, const char *s) { put(d, s, strlen(s)); }

static void putf(dc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(dc *d, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(d, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void fail(dc *d, const char *what)
{
    if (!d->failed && d->err)
        snprintf(d->err, d->errlen, "decompile: %s", what);
    d->failed = 1;
}

/* A "string" the lexer decodes back to s (backslash, quote, newline, tab, CR). */
static void qstr(dc *d, const char *s)
{
    put(d, "\"", 1);
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '"': puts_(d, "\\\""); break;
        case '\\': puts_(d, "\\\\"); break;
        case '\n': puts_(d, "\\n"); break;
        case '\t': puts_(d, "\\t"); break;
        case '\r': puts_(d, "\\r"); break;
        default: put(d, p, 1); break;
        }
    }
    put(d, "\"", 1);
}

/* A bare word (globs must stay bare): refuse what the lexer would split. */
static void bare(dc *d, const char *s)
{
    if (!*s || *s == '#' || strpbrk(s, " \t\r\n\f\v{}(),\""))
        fail(d, "a glob holds characters a bare word cannot");
    puts_(d, s);
}

static void set_items(dc *d, uint32_t si)
{
    const sgr_table *t = d->t;
    const sgt_set *st = &t->sets[si];
    put(d, "{", 1);
    for (uint32_t k = 0; k < st->nwords; k++) {
        put(d, " ", 1);
        qstr(d, sgr_str(t, t->words[st->words_off + k]));
    }
    for (uint32_t k = 0; k < t->npatterns; k++) {
        const sgt_pattern *p = &t->patterns[k];
        if (p->set != si)
            continue;
        put(d, " ", 1);
        const char *txt = sgr_str(t, p->text);
        if (p->kind == SGT_PAT_REGEX) {
            if (strpbrk(txt, " \t\r\n"))
                fail(d, "a regex holds whitespace");
            put(d, "/", 1);
            puts_(d, txt);                      /* no format buffer: regexes can be long */
            puts_(d, p->icase ? "/i" : "/");
        } else if (p->kind == SGT_PAT_GLOB) {
            bare(d, txt);
        } else {
            qstr(d, txt);
        }
    }
    puts_(d, " }");
}

/* A matcher: `in NAME` for a named set, else its items. */
static void matcher(dc *d, uint32_t si)
{
    const char *name = sgr_str(d->t, d->t->sets[si].name);
    if (*name) {
        puts_(d, "in ");
        puts_(d, name);
    } else {
        set_items(d, si);
    }
}

static const char *const cmp_text[] = {
#define X(id, text) text,
    SGT_CMPS(X)
#undef X
};

/* Emit the condition in code[i..end) (instruction indices); returns 0 or -1. */
static int cond(dc *d, const uint32_t *code, uint32_t i, uint32_t end);

static int atom(dc *d, uint32_t op, uint32_t a, uint32_t b)
{
    switch (op) {
    case SGT_OP_TRUE: puts_(d, "any"); break;
    case SGT_OP_PROGRAM: puts_(d, "program "); matcher(d, b); break;
    case SGT_OP_SUBCOMMAND: puts_(d, "subcommand "); matcher(d, b); break;
    case SGT_OP_OPTION_ANY: puts_(d, "option "); matcher(d, b); break;
    case SGT_OP_OPTION_ALL: puts_(d, "option all "); set_items(d, b); break;
    case SGT_OP_ARG_ANY: puts_(d, "arg "); matcher(d, b); break;
    case SGT_OP_ARG_AT: putf(d, "arg at %u ", a); matcher(d, b); break;
    case SGT_OP_ARGC: putf(d, "argc %s %u", cmp_text[a], b); break;
    case SGT_OP_PATH_OUTSIDE: puts_(d, "path outside workspace"); break;
    case SGT_OP_PATH_INSIDE: puts_(d, "path inside "); matcher(d, b); break;
    case SGT_OP_PATH_IS: puts_(d, "path is "); matcher(d, b); break;
    case SGT_OP_REDIR_WRITES: case SGT_OP_REDIR_READS:
        puts_(d, op == SGT_OP_REDIR_WRITES ? "redirect writes" : "redirect reads");
        if (op == SGT_OP_REDIR_WRITES && a)
            puts_(d, a == SGT_WRITES_OUTSIDE ? " outside workspace" : " to path inside workspace");
        else if (a == SGT_READS_HEREDOC)
            puts_(d, " heredoc");
        else if (b != SGT_NONE) {
            puts_(d, op == SGT_OP_REDIR_WRITES ? " to " : " from ");
            matcher(d, b);
        }
        break;
    case SGT_OP_ASSIGNS: puts_(d, "assigns "); matcher(d, b); break;
    case SGT_OP_DEST: {
        static const char *const field[] = {
#define X(id, word) word,
            SGT_DEST_FIELDS(X)
#undef X
        };
        putf(d, "%s %s", field[(a & ~SGT_DEST_ONLY) % SGT_NDEST_FIELDS], a & SGT_DEST_ONLY ? "only " : "");
        matcher(d, b);
        break;
    }
    case SGT_OP_OPTION_VAL:
    case SGT_OP_ASSIGNS_VAL:
        puts_(d, op == SGT_OP_OPTION_VAL ? "option " : "assigns ");
        matcher(d, a & ~SGT_NEGATE_VALUE);
        puts_(d, (a & SGT_NEGATE_VALUE) ? " value not " : " value ");
        matcher(d, b);
        break;
    case SGT_OP_PIPED_FROM: puts_(d, "piped from "); matcher(d, b); break;
    case SGT_OP_PIPED_TO: puts_(d, "piped to "); matcher(d, b); break;
    case SGT_OP_DYNAMIC: puts_(d, "dynamic"); break;
    case SGT_OP_MOREARGS: puts_(d, "moreargs"); break;
    case SGT_OP_MODULE_AT: putf(d, "module at %u inside workspace", a); break;
    case SGT_OP_CWD_OUTSIDE: puts_(d, "cwd outside workspace"); break;
    case SGT_OP_PSCRIPT: puts_(d, "project script"); break;
    case SGT_OP_LUA: puts_(d, "lua "); qstr(d, sgr_str(d->t, d->t->hooks[b].name)); break;
    case SGT_OP_TEXT: puts_(d, "text contains "); matcher(d, b); break;
    case SGT_OP_LINE_RUNS: puts_(d, "line runs "); matcher(d, b); break;
    case SGT_OP_EXPANDS: puts_(d, "expands "); matcher(d, b); break;
    case SGT_OP_NESTED: {
        int k = 0;
        while (k < SGR_NEST__COUNT && !(a & (1u << k)))
            k++;
        if (k == SGR_NEST__COUNT || a != (1u << k)) {
            fail(d, "a nested condition with several kinds");
            return -1;
        }
        puts_(d, "nested in ");
        puts_(d, sgr_nest_names[k]);
        break;
    }
    default:
        fail(d, "an instruction that is not a condition");
        return -1;
    }
    return 0;
}

/* seq -> primary (NOT | JUMP_FALSE seq | JUMP_TRUE seq)* : the shapes compiler/emit.c
 * gen() produces, rebuilt with every binary operator parenthesised. */
static int cond(dc *d, const uint32_t *code, uint32_t i, uint32_t end)
{
    /* collect the chain first so parentheses can open before the primary */
    uint32_t ops[256], n = 0, j = i + 1;
    while (j < end) {
        uint32_t op = code[2 * j] & 0xff;
        if (n == 256) {
            fail(d, "a condition nests too deeply");
            return -1;
        }
        ops[n++] = j;
        if (op == SGT_OP_NOT)
            j++;
        else if (op == SGT_OP_JUMP_FALSE || op == SGT_OP_JUMP_TRUE)
            j = j + 1 + code[2 * j + 1];
        else {
            fail(d, "unexpected instruction order");
            return -1;
        }
    }
    if (j != end) {
        fail(d, "a jump past its condition");
        return -1;
    }
    /* the first operator applied to the primary is the innermost parenthesis */
    for (uint32_t k = n; k-- > 0;)
        puts_(d, (code[2 * ops[k]] & 0xff) == SGT_OP_NOT ? "not (" : "(");
    if (atom(d, code[2 * i] & 0xff, code[2 * i] >> 8, code[2 * i + 1]) < 0)
        return -1;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t at = ops[k], op = code[2 * at] & 0xff;
        if (op == SGT_OP_NOT) {
            puts_(d, ")");
            continue;
        }
        puts_(d, op == SGT_OP_JUMP_FALSE ? " and " : " or ");
        if (cond(d, code, at + 1, at + 1 + code[2 * at + 1]) < 0)
            return -1;
        puts_(d, ")");
    }
    return 0;
}

static const char *const dec_name[] = {
#define X(id, name) name,
    SGT_DECISIONS(X)
#undef X
};

/* A label for rule r: the part after ':' of a pack:label id, else one made from a
 * file:line id. */
static const char *label_part(const sgr_table *t, uint32_t r)
{
    const char *id = sgr_str(t, t->rules[r].id), *colon = strrchr(id, ':');
    return colon ? colon + 1 : id;
}

static void label(dc *d, uint32_t r)
{
    const char *id = sgr_str(d->t, d->t->rules[r].id);
    const char *l = label_part(d->t, r);
    int plain = *l && !strchr("0123456789", *l);
    /* two packs may both have a rule `read`: then both get id-made labels */
    for (uint32_t k = 0; k < d->t->nrules && plain; k++)
        plain = k == r || strcmp(label_part(d->t, k), l) != 0;
    for (const char *p = l; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'
                || *p == '-' || *p == '.';
    if (plain) {
        puts_(d, l);
        return;
    }
    puts_(d, "r_");
    for (const char *p = id; *p; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        put(d, ok ? &ch : "_", 1);
    }
}

/* " KW { OPT... }" for the options of [off, +len) not in [xoff, +xlen) (the value
 * options a `text` clause already names), nothing when none is left. */
static void optlist_but(dc *d, const char *kw, uint32_t off, uint32_t len, uint32_t xoff, uint32_t xlen)
{
    int open = 0;
    for (uint32_t k = 0; k < len; k++) {
        const char *o = sgr_str(d->t, d->t->progopts[off + k]);
        if (sgr_progopt_has(d->t, xoff, xlen, o, strlen(o)))
            continue;
        if (!open)
            putf(d, " %s {", kw);
        open = 1;
        put(d, " ", 1);
        qstr(d, o);
    }
    if (open)
        puts_(d, " }");
}

static void optlist(dc *d, const char *kw, uint32_t off, uint32_t len)
{
    optlist_but(d, kw, off, len, 0, 0);
}

int sgr_table_decompile(const sgr_table *t, sgr_out_fn out, void *ud, char *err, size_t errlen)
{
    dc d = { t, out, ud, err, errlen, 0 };
    const sgt_meta *m = t->meta;
    const char *pack = sgr_str(t, m->pack_name);
    puts_(&d, "# decompiled by shellgate: one pack, every rule labelled\npack ");
    qstr(&d, *pack ? pack : "decompiled");
    putf(&d, " version %u\n", m->pack_version);
    putf(&d, "default %s ", dec_name[m->default_decision]);
    qstr(&d, sgr_str(t, m->default_msg));
    if (*sgr_str(t, m->default_hint)) {
        puts_(&d, " hint ");
        qstr(&d, sgr_str(t, m->default_hint));
    }
    puts_(&d, "\n");
    if (t->nhooks)
        fail(&d, "a table with Lua hooks (their sources would need files of their own)");
    if (m->hook_budget || m->hook_memory || m->hook_millis) {
        puts_(&d, "hooks limit {");
        if (m->hook_budget)
            putf(&d, " instructions %u", m->hook_budget);
        if (m->hook_memory)
            putf(&d, " memory %u", m->hook_memory);
        if (m->hook_millis)
            putf(&d, " millis %u", m->hook_millis);
        puts_(&d, " }\n");
    }
    /* named sets, in table order: the compiler creates them first */
    for (uint32_t i = 0; i < t->nsets; i++) {
        const char *name = sgr_str(t, t->sets[i].name);
        if (!*name || t->sets[i].kind != SGT_SETK_MATCH)
            continue;
        int seen = 0;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = t->sets[j].kind == SGT_SETK_MATCH && strcmp(sgr_str(t, t->sets[j].name), name) == 0;
        if (seen)
            continue;
        puts_(&d, "set ");
        puts_(&d, name);
        puts_(&d, " = ");
        set_items(&d, i);
        puts_(&d, "\n");
    }
    for (uint32_t i = 0; i < t->nprogs; i++) {
        const sgt_progspec *p = &t->progs[i];
        puts_(&d, (p->flags & SGT_PROG_WRAPPER) ? "wrapper " : "command ");
        qstr(&d, sgr_str(t, p->name));
        puts_(&d, " {");
        optlist_but(&d, "value", p->value_off, p->value_len, p->text_off, p->text_len);
        optlist(&d, "text", p->text_off, p->text_len);
        if (p->flags & SGT_PROG_TEXT_OPERAND) {
            puts_(&d, " text operand");
            optlist(&d, "unless", p->first_off, p->first_len);
        }
        optlist(&d, "script", p->script_off, p->script_len);
        optlist(&d, "exec", p->exec_off, p->exec_len);
        optlist(&d, "end", p->end_off, p->end_len);
        optlist(&d, "lookup", p->lookup_off, p->lookup_len);
        optlist(&d, "argv0", p->argv0_off, p->argv0_len);
        optlist(&d, "code", p->code_off, p->code_len);
        optlist(&d, "flags", p->flag_off, p->flag_len);
        optlist(&d, "cwd", p->cwd_off, p->cwd_len);
        optlist(&d, "url", p->url_off, p->url_len);
        optlist(&d, "url unknown", p->urlunk_off, p->urlunk_len);
        if (p->link_len) {
            optlist(&d, "links", p->link_off, p->link_len);
            optlist(&d, "unless", p->linkrel_off, p->linkrel_len);
        }
        if (p->flags & SGT_PROG_STDIN) {
            /* written even when empty: the clause itself is the flag */
            puts_(&d, " stdin {");
            for (uint32_t k = 0; k < p->stdin_len; k++) {
                put(&d, " ", 1);
                qstr(&d, sgr_str(t, t->progopts[p->stdin_off + k]));
            }
            puts_(&d, " }");
        }
        if (p->skip)
            putf(&d, " skip %u", p->skip);
        if (p->flags & SGT_PROG_RUNS_NOTHING)
            puts_(&d, " runs nothing");
        if (p->norun_len) {
            puts_(&d, " runs nothing {");
            for (uint32_t k = 0; k < p->norun_len; k++) {
                put(&d, " ", 1);
                qstr(&d, sgr_str(t, t->progopts[p->norun_off + k]));
            }
            puts_(&d, " }");
        }
        if (p->flags & SGT_PROG_NO_STDIN)
            puts_(&d, " stdin nothing");
        if (p->flags & SGT_PROG_ASSIGNMENTS)
            puts_(&d, " assignments");
        if (p->flags & SGT_PROG_PERMUTE)
            puts_(&d, " permute");
        if (p->flags & SGT_PROG_JOIN)
            puts_(&d, " join");
        if (p->flags & SGT_PROG_SCRIPTS)
            puts_(&d, " scripts");
        if (p->flags & SGT_PROG_SUBCOMMANDS)
            puts_(&d, " subcommands");
        if (p->flags & SGT_PROG_MOREARGS)
            puts_(&d, " moreargs");
        if (p->flags & SGT_PROG_WRITES)
            puts_(&d, " writes operands");
        if (p->flags & SGT_PROG_TREE)
            puts_(&d, " tree operands");
        if (p->flags & SGT_PROG_TEXT_ALL)
            puts_(&d, " text operands");
        if (p->flags & SGT_PROG_COPIES)
            puts_(&d, " copies");
        if (p->flags & SGT_PROG_RUNS_FILE)
            puts_(&d, " runs operand");
        if (p->flags & SGT_PROG_URL_OPS)
            puts_(&d, " url operands");
        if (p->flags & SGT_PROG_REMOTE_OPS)
            puts_(&d, " remote operands");
        if (p->flags & SGT_PROG_HOST_OP)
            puts_(&d, " host operand");
        puts_(&d, " }\n");
    }
    for (uint32_t r = 0; r < t->nrules && !d.failed; r++) {
        const sgt_rule *ru = &t->rules[r];
        label(&d, r);
        putf(&d, ": %s ", dec_name[ru->decision]);
        const uint32_t *code = t->code + ru->code_off;
        if (cond(&d, code, 0, ru->code_len / 2) < 0)
            break;
        puts_(&d, " ");
        qstr(&d, sgr_str(t, ru->msg));
        if (*sgr_str(t, ru->hint)) {
            puts_(&d, " hint ");
            qstr(&d, sgr_str(t, ru->hint));
        }
        puts_(&d, "\n");
    }
    for (uint32_t i = 0; i < t->nlimits && !d.failed; i++) {
        const sgt_limit *l = &t->limits[i];
        puts_(&d, "limit ");
        qstr(&d, sgr_str(t, l->name));
        for (uint32_t w = 0; w < l->nwindows; w++)
            putf(&d, "%s %u per %us", w ? "," : "", l->count[w], l->seconds[w]);
        if (l->key == SGT_LIMIT_PER_TEAM)
            puts_(&d, " per team");
        if (l->code_len) {
            puts_(&d, " when ");
            if (cond(&d, t->code + l->code_off, 0, l->code_len / 2) < 0)
                break;
        }
        if (*sgr_str(t, l->msg)) {
            puts_(&d, " ");
            qstr(&d, sgr_str(t, l->msg));
        }
        puts_(&d, "\n");
    }
    for (uint32_t i = 0; i < t->ntests; i++) {
        const sgt_test *x = &t->tests[i];
        putf(&d, "test %s ", dec_name[x->decision]);
        qstr(&d, sgr_str(t, x->command));
        const char *rid = sgr_str(t, x->rule);
        if (*rid) {
            puts_(&d, " rule ");
            const char *colon = strrchr(rid, ':');
            uint32_t r;
            for (r = 0; r < t->nrules && strcmp(sgr_str(t, t->rules[r].id), rid) != 0; r++)
                ;
            if (r < t->nrules)
                label(&d, r);
            else
                qstr(&d, colon ? colon + 1 : rid);   /* dynamic / default */
        }
        if (*sgr_str(t, x->cwd)) {
            puts_(&d, " cwd ");
            qstr(&d, sgr_str(t, x->cwd));
        }
        puts_(&d, "\n");
    }
    return d.failed ? -1 : 0;
}
