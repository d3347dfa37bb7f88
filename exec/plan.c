/* plan.c - the tree of a line, read from its top-level segments and the bytes
 * between them, and checked against what the parser recorded.
 *
 * Grammar of the token stream (CMD: one top-level segment, as a token):
 *   list     -> NL* [andor ((';' | NL) NL* andor)* (';' | NL)*]
 *   andor    -> pipeline (('&&' | '||') NL* pipeline)*
 *   pipeline -> '!'* element (('|' | '|&') NL* element)*
 *   element  -> CMD | '(' list ')' | '{' list '}' */
#include "plan.h"
#include <stdio.h>
#include <string.h>
#include "common/alloc.h"

enum { T_CMD, T_NL, T_SEMI, T_AND, T_OR, T_PIPE, T_PIPE_ERR, T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_BANG, T_EOF };

typedef struct tok {
    uint8_t kind;
    uint32_t cmd;                /* T_CMD: its number */
} tok;

typedef struct pp {
    sg_arena *a;
    const sgr_cmdline *cl;
    const uint32_t *cmdseg;
    tok *t;
    uint32_t n, i;
    uint32_t in_subshell;        /* ( ) levels around the current element */
    uint32_t depth;
    const char *why;
} pp;

#define MAX_NEST 64u

/* fmt with one %.*s taking s[0..n), n cut to max */
static const char *msg(sg_arena *a, const char *fmt, const char *s, size_t n, size_t max)
{
    char buf[512];
    snprintf(buf, sizeof buf, fmt, (int)(n > max ? max : n), s);
    char *d = sg_arena_strndup(a, buf, strlen(buf));
    return d ? d : "the executor does not run this line";
}

static int add_tok(tok **v, uint32_t *n, uint32_t *cap, uint8_t kind, uint32_t cmd)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 64;
        tok *nv = sg_realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[*n].kind = kind;
    (*v)[(*n)++].cmd = cmd;
    return 0;
}

/* Tokens of the bytes g[0..n) between two commands.  0, -1 refused (*why), -2 OOM. */
static int gap(sg_arena *a, const char *g, size_t n, tok **v, uint32_t *nt, uint32_t *cap, const char **why)
{
    size_t i = 0;
    while (i < n) {
        char c = g[i];
        uint8_t k;
        size_t w = 1;
        if (c == ' ' || c == '\t') {
            i++;
            continue;
        }
        if (c == '\\' && i + 1 < n && g[i + 1] == '\n') {
            i += 2;
            continue;
        }
        if (c == '#') {
            while (i < n && g[i] != '\n')
                i++;
            continue;
        }
        int blank_after = i + 1 >= n || g[i + 1] == ' ' || g[i + 1] == '\t' || g[i + 1] == '\n';
        if (c == '\n' || c == '\r')
            k = T_NL;
        else if (c == ';') {
            if (i + 1 < n && (g[i + 1] == ';' || g[i + 1] == '&')) {
                *why = "the executor does not run case commands (;; ;&)";
                return -1;
            }
            k = T_SEMI;
        } else if (c == '&' && i + 1 < n && g[i + 1] == '&') {
            k = T_AND;
            w = 2;
        } else if (c == '&') {
            *why = i + 1 < n && g[i + 1] == '>' ? "the executor does not run a redirection after ( ) or { }"
                                                : "the executor does not run commands in the background (&)";
            return -1;
        } else if (c == '|' && i + 1 < n && g[i + 1] == '|') {
            k = T_OR;
            w = 2;
        } else if (c == '|' && i + 1 < n && g[i + 1] == '&') {
            k = T_PIPE_ERR;
            w = 2;
        } else if (c == '|')
            k = T_PIPE;
        else if (c == '(')
            k = T_LPAREN;
        else if (c == ')')
            k = T_RPAREN;
        else if (c == '{' && blank_after)
            k = T_LBRACE;
        else if (c == '}')
            k = T_RBRACE;
        else if (c == '!' && blank_after)
            k = T_BANG;
        else if (c == '<' || c == '>' || (c >= '0' && c <= '9')) {
            *why = "the executor does not run a redirection after ( ) or { }";
            return -1;
        } else {
            size_t j = i;
            while (j < n && g[j] != ' ' && g[j] != '\t' && g[j] != '\n' && g[j] != ';')
                j++;
            *why = msg(a, "the executor does not run '%.*s' (it runs simple commands joined by ; && || |, "
                          "( ) subshells and { } groups; no if, for, while, case or functions)", g + i, j - i, 24);
            return -1;
        }
        if (add_tok(v, nt, cap, k, 0) < 0)
            return -2;
        i += w;
    }
    return 0;
}

static const tok *peek(pp *p)
{
    return &p->t[p->i];
}

static void skip_nl(pp *p)
{
    while (peek(p)->kind == T_NL)
        p->i++;
}

static sgx_node *node(pp *p, uint8_t kind)
{
    sgx_node *n = sg_arena_zalloc(p->a, sizeof *n);
    if (!n)
        p->why = "out of memory";
    return n;
}

/* kids collected on the heap, handed to the arena */
typedef struct kids {
    sgx_node **v;
    uint32_t n, cap;
} kids;

static int kid_add(pp *p, kids *k, sgx_node *x)
{
    if (k->n == k->cap) {
        uint32_t nc = k->cap ? k->cap * 2 : 8;
        sgx_node **nv = sg_realloc(k->v, nc * sizeof *nv);
        if (!nv) {
            p->why = "out of memory";
            return -1;
        }
        k->v = nv;
        k->cap = nc;
    }
    k->v[k->n++] = x;
    return 0;
}

static int kids_done(pp *p, sgx_node *n, kids *k)
{
    n->kids = sg_arena_alloc(p->a, (k->n ? k->n : 1) * sizeof *n->kids);
    if (!n->kids) {
        sg_free(k->v);
        p->why = "out of memory";
        return -1;
    }
    if (k->n)
        memcpy(n->kids, k->v, k->n * sizeof *n->kids);
    n->nkids = k->n;
    sg_free(k->v);
    return 0;
}

static sgx_node *list(pp *p, uint8_t stop);

/* What the parser must have recorded as the connector after a command that the
 * token t follows. */
static int want_connector(uint8_t t)
{
    switch (t) {
    case T_NL: case T_SEMI: return SGR_CONN_SEMI;
    case T_AND: return SGR_CONN_AND;
    case T_OR: return SGR_CONN_OR;
    case T_PIPE: return SGR_CONN_PIPE;
    case T_PIPE_ERR: return SGR_CONN_PIPE_ERR;
    default: return SGR_CONN_END;
    }
}

static const char *const mismatch = "the executor reads this line's structure differently from the parser, so it "
                                    "runs none of it";

static sgx_node *element(pp *p)
{
    const tok *t = peek(p);
    if (t->kind == T_CMD) {
        sgx_node *n = node(p, SGX_N_CMD);
        if (!n)
            return NULL;
        n->kind = SGX_N_CMD;
        n->cmd = t->cmd;
        p->i++;
        const sgr_segment *s = &p->cl->seg[p->cmdseg[t->cmd]];
        if ((int)s->connector != want_connector(peek(p)->kind)
            || !!(s->flags & SGR_SEG_SUBSHELL) != (p->in_subshell > 0)) {
            p->why = mismatch;
            return NULL;
        }
        return n;
    }
    if (t->kind != T_LPAREN && t->kind != T_LBRACE) {
        p->why = mismatch;
        return NULL;
    }
    if (++p->depth > MAX_NEST) {
        p->why = "( ) and { } nested too deeply";
        return NULL;
    }
    int sub = t->kind == T_LPAREN;
    p->i++;
    p->in_subshell += (uint32_t)sub;
    sgx_node *body = list(p, sub ? T_RPAREN : T_RBRACE);
    p->in_subshell -= (uint32_t)sub;
    p->depth--;
    if (!body)
        return NULL;
    if (peek(p)->kind != (sub ? T_RPAREN : T_RBRACE)) {
        p->why = mismatch;
        return NULL;
    }
    p->i++;
    sgx_node *n = node(p, 0);
    if (!n)
        return NULL;
    n->kind = sub ? SGX_N_SUBSHELL : SGX_N_GROUP;
    n->kids = sg_arena_alloc(p->a, sizeof *n->kids);
    if (!n->kids) {
        p->why = "out of memory";
        return NULL;
    }
    n->kids[0] = body;
    n->nkids = 1;
    return n;
}

static sgx_node *pipeline(pp *p)
{
    sgx_node *n = node(p, 0);
    if (!n)
        return NULL;
    n->kind = SGX_N_PIPE;
    while (peek(p)->kind == T_BANG) {
        n->negated ^= 1;
        p->i++;
    }
    kids k = { 0 };
    uint32_t compounds = 0;
    for (;;) {
        sgx_node *e = element(p);
        if (!e || kid_add(p, &k, e) < 0) {
            sg_free(k.v);
            return NULL;
        }
        compounds += e->kind != SGX_N_CMD;
        uint8_t t = peek(p)->kind;
        if (t != T_PIPE && t != T_PIPE_ERR)
            break;
        e->pipe_err = t == T_PIPE_ERR;
        p->i++;
        skip_nl(p);
    }
    if (k.n > 1) {
        if (compounds > 1) {
            sg_free(k.v);
            p->why = "the executor runs at most one ( ) or { } part in a pipeline";
            return NULL;
        }
        for (uint32_t j = 0; j < k.n; j++) {
            if (k.v[j]->kind != SGX_N_CMD)
                continue;
            const sgr_segment *s = &p->cl->seg[p->cmdseg[k.v[j]->cmd]];
            if (s->pipe_index != j || s->pipe_len != k.n) {
                sg_free(k.v);
                p->why = mismatch;
                return NULL;
            }
        }
    }
    return kids_done(p, n, &k) < 0 ? NULL : n;
}

static sgx_node *list(pp *p, uint8_t stop)
{
    sgx_node *n = node(p, 0);
    if (!n)
        return NULL;
    n->kind = SGX_N_LIST;
    kids k = { 0 };
    uint8_t op = SGX_OP_SEQ;
    skip_nl(p);
    while (peek(p)->kind != stop && peek(p)->kind != T_EOF) {
        sgx_node *x = pipeline(p);
        if (!x || kid_add(p, &k, x) < 0) {
            sg_free(k.v);
            return NULL;
        }
        x->op = op;
        uint8_t t = peek(p)->kind;
        if (t == T_AND || t == T_OR) {
            op = t == T_AND ? SGX_OP_AND : SGX_OP_OR;
            p->i++;
            skip_nl(p);
            continue;
        }
        if (t != T_SEMI && t != T_NL)
            break;
        op = SGX_OP_SEQ;
        while (peek(p)->kind == T_SEMI || peek(p)->kind == T_NL)
            p->i++;
    }
    return kids_done(p, n, &k) < 0 ? NULL : n;
}

/* The line's own checks, before its structure: what the parser found that the
 * executor does not run. */
static const char *unsupported(sg_arena *a, const sgr_cmdline *cl)
{
    for (uint32_t i = 0; i < cl->nseg; i++) {
        const sgr_segment *s = &cl->seg[i];
        if (s->nest == SGR_NEST_PROCSUB)
            return "the executor does not run process substitution <(...) >(...)";
        if (s->nest == SGR_NEST_HEREDOC)
            return "the executor does not run here-documents";
        if (s->nest != SGR_NEST_TOP && s->nest != SGR_NEST_CMDSUB)
            return mismatch;
        if (s->flags & SGR_SEG_FUNCDEF)
            return "the executor does not define or run shell functions";
        if (s->flags & SGR_SEG_CONTROL)
            return "the executor does not run if, while, until, for, select or case";
        if ((s->flags & SGR_SEG_BACKGROUND) || s->connector == SGR_CONN_AMP)
            return "the executor does not run commands in the background (&)";
        if (s->nest != SGR_NEST_TOP)
            continue;                   /* a $(...)'s commands: planned when it runs */
        if (s->argc && !(s->argv[0].flags & SGR_W_QUOTED)
            && (strcmp(s->argv[0].text, "[[") == 0 || strcmp(s->argv[0].text, "((") == 0))
            return "the executor does not run [[ ... ]] or (( ... )): use test or [";
        for (uint32_t k = 0; k < s->nredirs; k++)
            if (s->redirs[k].kind == SGR_REDIR_HEREDOC)
                return "the executor does not run here-documents (<<): use a here-string (<<<) or a file";
        for (int part = 0; part < 3; part++) {
            uint32_t n = part == 0 ? s->argc : part == 1 ? s->nassigns : s->nredirs;
            for (uint32_t k = 0; k < n; k++) {
                const sgr_word *w = part == 0 ? &s->argv[k] : part == 1 ? &s->assigns[k] : &s->redirs[k].target;
                if (w->flags & SGR_W_BRACE)
                    return "the executor does not do brace expansion ({a,b}, {1..3}): write the words out";
                if (w->flags & SGR_W_ARITH)
                    return "the executor does not do arithmetic expansion $((...))";
                if (w->flags & SGR_W_PROCSUB)
                    return "the executor does not run process substitution <(...) >(...)";
            }
        }
    }
    (void)a;
    return NULL;
}

sgx_node *sgx_plan(sg_arena *a, const sgr_cmdline *cl, const char *line, size_t len, uint32_t **cmdseg,
                   uint32_t *ncmds, const char **why)
{
    *why = NULL;
    if (cl->error) {
        *why = msg(a, "the line does not parse: %.*s", cl->error, strlen(cl->error), 300);
        return NULL;
    }
    if ((*why = unsupported(a, cl)))
        return NULL;
    uint32_t nc = 0;
    for (uint32_t i = 0; i < cl->nseg; i++)
        nc += cl->seg[i].nest == SGR_NEST_TOP;
    uint32_t *cs = sg_arena_alloc(a, (nc ? nc : 1) * sizeof *cs);
    if (!cs) {
        *why = "out of memory";
        return NULL;
    }
    tok *t = NULL;
    uint32_t nt = 0, cap = 0, k = 0;
    size_t pos = 0;
    int r = 0;
    for (uint32_t i = 0; i < cl->nseg && !r; i++) {
        const sgr_segment *s = &cl->seg[i];
        if (s->nest != SGR_NEST_TOP)
            continue;
        if (s->span.off < pos || s->span.off + (size_t)s->span.len > len) {
            *why = mismatch;
            r = -1;
            break;
        }
        r = gap(a, line + pos, s->span.off - pos, &t, &nt, &cap, why);
        if (!r && add_tok(&t, &nt, &cap, T_CMD, k) < 0)
            r = -2;
        cs[k++] = i;
        pos = s->span.off + s->span.len;
    }
    if (!r)
        r = gap(a, line + pos, len - pos, &t, &nt, &cap, why);
    if (!r && add_tok(&t, &nt, &cap, T_EOF, 0) < 0)
        r = -2;
    if (r) {
        if (r == -2)
            *why = "out of memory";
        sg_free(t);
        return NULL;
    }
    pp p = { a, cl, cs, t, nt, 0, 0, 0, NULL };
    sgx_node *root = list(&p, T_EOF);
    if (root && peek(&p)->kind != T_EOF) {
        root = NULL;
        p.why = mismatch;
    }
    sg_free(t);
    if (!root) {
        *why = p.why ? p.why : mismatch;
        return NULL;
    }
    *cmdseg = cs;
    *ncmds = nc;
    return root;
}
