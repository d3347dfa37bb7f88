/* parse.c - drives lexer and lemon parser over one source file and builds its AST
 * through the semantic actions the grammar calls. */
#include <stdlib.h>
#include <string.h>
#include "parse.h"
#include "grammar.h"
#include "common/alloc.h"

static void *arena_new(sgc_pstate *ps, size_t n)
{
    void *p = sg_arena_zalloc(&ps->c->arena, n);
    if (!p)
        sgc_oom(ps->c);
    return p;
}

static sgc_loc tok_loc(const sgc_tok *t) { return t->loc; }

/* Statement-level keywords: where error recovery resumes. */
static int starts_statement(int code)
{
    switch (code) {
    case TK_PACK: case TK_USE: case TK_HOOKS: case TK_DEFAULT: case TK_SET:
    case TK_ALLOW: case TK_ASK: case TK_DENY: case TK_LABEL: case TK_WRAPPER:
    case TK_COMMAND: case TK_LIMIT: case TK_TEST:
        return 1;
    }
    return 0;
}

static int first_on_line(const sgc_source *s, uint32_t off)
{
    while (off > 0) {
        char ch = s->text[off - 1];
        if (ch == '\n')
            return 1;
        if (ch != ' ' && ch != '\t' && ch != '\r')
            return 0;
        off--;
    }
    return 1;
}

void sgc_parse_file(sgc_comp *c, uint32_t f)
{
    sgc_source *s = &c->files[f];
    sgc_lexer lx = { s->text, s->len, s->text, f, NULL };
    sgc_pstate ps = { c, f, &s->ast, 0 };
    void *p = sgcParseAlloc(sg_malloc);
    if (!p) {
        sgc_oom(c);
        return;
    }
    sgc_tok tok;
    int skipping = 0;
    uint32_t last_end = 0;             /* where the last token ended: the end of file's place */
    for (;;) {
        memset(&tok, 0, sizeof tok);
        int code = sgc_lex(&lx, c, &tok);
        if (code == 0) {               /* an unfinished statement is reported where it stops */
            tok.loc.file = f;
            tok.loc.off = last_end;
            tok.loc.len = 0;
        } else if (code > 0) {
            last_end = tok.loc.off + tok.loc.len;
        }
        if (code < 0) {
            sgc_error(c, tok.loc, "%s", lx.error);
            if (c->oom)
                break;
            ps.failed = 1;
            skipping = 1;
            continue;
        }
        if (skipping) {
            /* resume at the next statement keyword that begins a line */
            if (code == 0)
                break;
            if (!(starts_statement(code) && first_on_line(s, tok.loc.off)))
                continue;
            sgcParseFree(p, sg_free);
            p = sgcParseAlloc(sg_malloc);
            if (!p) {
                sgc_oom(c);
                return;
            }
            skipping = 0;
            ps.failed = 0;
        }
        sgcParse(p, code, tok, &ps);
        if (ps.failed)
            skipping = 1;
        if (code == 0 || c->oom)
            break;
    }
    if (!skipping && !c->oom) {
        memset(&tok, 0, sizeof tok);
        tok.loc.file = f;
        tok.loc.off = last_end;
        sgcParse(p, 0, tok, &ps);
    }
    sgcParseFree(p, sg_free);
}

void sgc_parse_syntax_error(sgc_pstate *ps, const sgc_tok *tok, int code)
{
    if (ps->failed)
        return;
    ps->failed = 1;
    if (code == 0)
        sgc_error(ps->c, tok->loc, "unexpected end of file: the statement is unfinished here");
    else
        sgc_error(ps->c, tok->loc, "unexpected %s '%.*s'", sgc_token_name(code),
                  (int)(tok->len > 60 ? 60 : tok->len), tok->text);
}

void sgc_parse_overflow(sgc_pstate *ps)
{
    sgc_loc none = { ps->file, 0, 0 };
    ps->failed = 1;
    sgc_error(ps->c, none, "rule nests too deeply");
}

const char *sgc_token_name(int code)
{
    switch (code) {
    case TK_STRING: return "string";
    case TK_REGEX: return "regex";
    case TK_WORD: return "word";
    case TK_LABEL: return "label";
    case TK_LBRACE: case TK_RBRACE: case TK_LPAREN: case TK_RPAREN: case TK_COMMA:
    case TK_EQ: case TK_PLUS:
        return "symbol";
    default:
        return "keyword";
    }
}

void sgc_act_pack(sgc_pstate *ps, const sgc_tok *kw, const sgc_tok *name, const sgc_tok *ver)
{
    if (ps->ast->pack_name.len) {
        sgc_error(ps->c, kw->loc, "a file holds one pack: 'pack' given twice");
        return;
    }
    ps->ast->pack_name = *name;
    ps->ast->pack_version = *ver;
    ps->ast->pack_loc = kw->loc;
}

void sgc_act_use(sgc_pstate *ps, const sgc_tok *what)
{
    sgc_use *u = arena_new(ps, sizeof *u);
    if (!u)
        return;
    u->what = *what;
    if (ps->ast->uses_tail)
        ps->ast->uses_tail->next = u;
    else
        ps->ast->uses = u;
    ps->ast->uses_tail = u;
}

void sgc_act_hooks(sgc_pstate *ps, const sgc_tok *file)
{
    sgc_wlist *w = arena_new(ps, sizeof *w);
    if (!w)
        return;
    w->tok = *file;
    if (ps->ast->hooks_tail)
        ps->ast->hooks_tail->next = w;
    else
        ps->ast->hooks = w;
    ps->ast->hooks_tail = w;
}

void sgc_act_hook_limits(sgc_pstate *ps, const sgc_tok *kw, sgc_wlist *kv)
{
    if (ps->ast->hook_limits) {
        sgc_error(ps->c, kw->loc, "'hooks limit' given twice");
        return;
    }
    ps->ast->hook_limits = kv;
    ps->ast->hook_limits_loc = kw->loc;
}

void sgc_act_default(sgc_pstate *ps, const sgc_tok *kw, int decision, const sgc_tok *msg,
                     const sgc_tok *hint)
{
    if (ps->ast->has_default) {
        sgc_error(ps->c, kw->loc, "'default' given twice");
        return;
    }
    ps->ast->has_default = 1;
    ps->ast->default_decision = decision;
    ps->ast->default_msg = *msg;
    ps->ast->default_hint = *hint;
    ps->ast->default_loc = kw->loc;
}

void sgc_act_set(sgc_pstate *ps, const sgc_tok *name, sgc_setexpr *e)
{
    sgc_setdef *d = arena_new(ps, sizeof *d);
    if (!d || !e)
        return;
    d->name = *name;
    d->expr = e;
    d->set_index = -1;
    if (ps->ast->sets_tail)
        ps->ast->sets_tail->next = d;
    else
        ps->ast->sets = d;
    ps->ast->sets_tail = d;
}

void sgc_act_rule(sgc_pstate *ps, const sgc_tok *label, int decision, sgc_cond *cond,
                  const sgc_tok *msg, const sgc_tok *hint)
{
    sgc_rule *r = arena_new(ps, sizeof *r);
    if (!r || !cond)
        return;
    r->decision = decision;
    r->label = *label;
    r->cond = cond;
    r->msg = *msg;
    r->hint = *hint;
    r->loc = label->len ? label->loc : cond->loc;
    if (ps->ast->rules_tail)
        ps->ast->rules_tail->next = r;
    else
        ps->ast->rules = r;
    ps->ast->rules_tail = r;
}

void sgc_act_relax(sgc_pstate *ps, const sgc_tok *label, const sgc_tok *kw, const sgc_tok *target, sgc_cond *when,
                   int decision, const sgc_tok *msg, const sgc_tok *hint)
{
    sgc_rule *r = arena_new(ps, sizeof *r);
    if (!r)
        return;
    r->decision = decision;
    r->label = *label;
    r->relax = *target;
    r->relax_kw = kw->loc;
    r->cond = when;
    r->msg = *msg;
    r->hint = *hint;
    r->loc = label->len ? label->loc : kw->loc;
    if (ps->ast->rules_tail)
        ps->ast->rules_tail->next = r;
    else
        ps->ast->rules = r;
    ps->ast->rules_tail = r;
}

void sgc_act_prog(sgc_pstate *ps, const sgc_tok *kw, int wrapper, sgc_wlist *names,
                  sgc_clause *clauses)
{
    sgc_progdecl *d = arena_new(ps, sizeof *d);
    if (!d)
        return;
    d->wrapper = wrapper;
    d->names = names;
    d->clauses = clauses;
    d->loc = kw->loc;
    if (ps->ast->progs_tail)
        ps->ast->progs_tail->next = d;
    else
        ps->ast->progs = d;
    ps->ast->progs_tail = d;
}

void sgc_act_limit(sgc_pstate *ps, const sgc_tok *kw, const sgc_tok *name, sgc_window *w,
                   const sgc_tok *per, sgc_cond *when, const sgc_tok *msg)
{
    sgc_limit *l = arena_new(ps, sizeof *l);
    if (!l)
        return;
    l->name = *name;
    l->windows = w;
    l->per = *per;
    l->when = when;
    l->msg = *msg;
    l->loc = kw->loc;
    if (ps->ast->limits_tail)
        ps->ast->limits_tail->next = l;
    else
        ps->ast->limits = l;
    ps->ast->limits_tail = l;
}

void sgc_act_test(sgc_pstate *ps, const sgc_tok *kw, int decision, const sgc_tok *cmd,
                  sgc_test *t)
{
    if (!t)
        return;
    t->decision = decision;
    t->cmd = *cmd;
    t->loc = kw->loc;
    if (ps->ast->tests_tail)
        ps->ast->tests_tail->next = t;
    else
        ps->ast->tests = t;
    ps->ast->tests_tail = t;
}

sgc_wlist *sgc_wlist_new(sgc_pstate *ps, const sgc_tok *w, sgc_wlist *prev)
{
    sgc_wlist *n = arena_new(ps, sizeof *n);
    if (!n)
        return prev;
    n->tok = *w;
    if (!prev)
        return n;
    sgc_wlist *t = prev;
    while (t->next)
        t = t->next;
    t->next = n;
    return prev;
}

sgc_clause *sgc_clause_new(sgc_pstate *ps, sgc_clause_kind k, const sgc_tok *kw,
                           sgc_wlist *words, const sgc_tok *num)
{
    sgc_clause *c = arena_new(ps, sizeof *c);
    if (!c)
        return NULL;
    c->kind = k;
    c->words = words;
    if (num)
        c->num = *num;
    c->loc = tok_loc(kw);
    return c;
}

sgc_clause *sgc_clause_push(sgc_clause *list, sgc_clause *c)
{
    if (!c)
        return list;
    if (!list)
        return c;
    sgc_clause *t = list;
    while (t->next)
        t = t->next;
    t->next = c;
    return list;
}

sgc_window *sgc_window_new(sgc_pstate *ps, const sgc_tok *n, const sgc_tok *d, sgc_window *prev)
{
    sgc_window *w = arena_new(ps, sizeof *w);
    if (!w)
        return prev;
    w->count = *n;
    w->dur = *d;
    if (!prev)
        return w;
    sgc_window *t = prev;
    while (t->next)
        t = t->next;
    t->next = w;
    return prev;
}

sgc_test *sgc_test_new(sgc_pstate *ps)
{
    return arena_new(ps, sizeof(sgc_test));
}

sgc_setexpr *sgc_set_new(sgc_pstate *ps, const sgc_tok *at)
{
    sgc_setexpr *e = arena_new(ps, sizeof *e);
    if (e) {
        e->set_index = -1;
        if (at)
            e->loc = at->loc;
    }
    return e;
}

void sgc_set_add(sgc_pstate *ps, sgc_setexpr *e, sgc_item_kind k, const sgc_tok *t)
{
    if (!e)
        return;
    sgc_item *it = arena_new(ps, sizeof *it);
    if (!it)
        return;
    if (k == SGC_ITEM_WORD && (t->flags & SGC_TOKF_GLOB))
        k = SGC_ITEM_GLOB;  /* the lexer flags bare words only: strings stay exact */
    it->kind = k;
    it->text = t->text;
    it->len = t->len;
    it->icase = (t->flags & SGC_TOKF_ICASE) != 0;
    it->quoted = (t->flags & SGC_TOKF_QUOTED) != 0;
    it->loc = t->loc;
    if (e->tail)
        e->tail->next = it;
    else
        e->head = it;
    e->tail = it;
}

sgc_setexpr *sgc_set_concat(sgc_setexpr *a, sgc_setexpr *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (b->head) {
        if (a->tail)
            a->tail->next = b->head;
        else
            a->head = b->head;
        a->tail = b->tail;
    }
    return a;
}

sgc_cond *sgc_cond_new(sgc_pstate *ps, sgc_cond_kind k, const sgc_tok *kw)
{
    sgc_cond *c = arena_new(ps, sizeof *c);
    if (c) {
        c->kind = k;
        c->loc = kw->loc;
    }
    return c;
}

sgc_cond *sgc_cond_set(sgc_pstate *ps, sgc_cond_kind k, const sgc_tok *kw, sgc_setexpr *s)
{
    sgc_cond *c = sgc_cond_new(ps, k, kw);
    if (c)
        c->set = s;
    return c;
}

sgc_cond *sgc_cond_bin(sgc_pstate *ps, sgc_cond_kind k, sgc_cond *a, sgc_cond *b)
{
    if (!a || !b)
        return NULL;
    sgc_cond *c = arena_new(ps, sizeof *c);
    if (c) {
        c->kind = k;
        c->a = a;
        c->b = b;
        c->loc = a->loc;
    }
    return c;
}
