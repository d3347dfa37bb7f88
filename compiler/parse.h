/* parse.h - glue between the lexer (lex.re), the lemon grammar (grammar.y) and
 * the AST: the parser state and the semantic actions the grammar calls. */
#ifndef SGC_PARSE_H
#define SGC_PARSE_H
#include "comp.h"

typedef struct sgc_pstate {
    sgc_comp *c;
    uint32_t file;
    sgc_file_ast *ast;
    int failed;              /* a syntax error was reported in this statement */
} sgc_pstate;

typedef struct sgc_lexer {
    const char *src;         /* NUL-terminated at src[len] */
    size_t len;
    const char *cur;
    uint32_t file;
    const char *error;       /* message for a bad token */
} sgc_lexer;

/* Next token into *tok: returns its TK_ code, 0 at end of input, -1 for a bad
 * token (lx->error says why; tok->loc covers it). */
int sgc_lex(sgc_lexer *lx, sgc_comp *c, sgc_tok *tok);
const char *sgc_token_name(int code);

void sgc_parse_syntax_error(sgc_pstate *ps, const sgc_tok *tok, int code);
void sgc_parse_overflow(sgc_pstate *ps);

void sgc_act_pack(sgc_pstate *ps, const sgc_tok *kw, const sgc_tok *name, const sgc_tok *ver);
void sgc_act_use(sgc_pstate *ps, const sgc_tok *what);
void sgc_act_hooks(sgc_pstate *ps, const sgc_tok *file);
void sgc_act_hook_limits(sgc_pstate *ps, const sgc_tok *kw, sgc_wlist *kv);
void sgc_act_default(sgc_pstate *ps, const sgc_tok *kw, int decision, const sgc_tok *msg,
                     const sgc_tok *hint);
void sgc_act_set(sgc_pstate *ps, const sgc_tok *name, sgc_setexpr *e);
void sgc_act_rule(sgc_pstate *ps, const sgc_tok *label, int decision, sgc_cond *cond,
                  const sgc_tok *msg, const sgc_tok *hint);
void sgc_act_prog(sgc_pstate *ps, const sgc_tok *kw, int wrapper, sgc_wlist *names,
                  sgc_clause *clauses);
void sgc_act_limit(sgc_pstate *ps, const sgc_tok *kw, const sgc_tok *name, sgc_window *w,
                   const sgc_tok *per, sgc_cond *when, const sgc_tok *msg);
void sgc_act_test(sgc_pstate *ps, const sgc_tok *kw, int decision, const sgc_tok *cmd,
                  sgc_test *opts);

sgc_wlist *sgc_wlist_new(sgc_pstate *ps, const sgc_tok *w, sgc_wlist *prev);
sgc_clause *sgc_clause_new(sgc_pstate *ps, sgc_clause_kind k, const sgc_tok *kw,
                           sgc_wlist *words, const sgc_tok *num);
sgc_clause *sgc_clause_push(sgc_clause *list, sgc_clause *c);
sgc_window *sgc_window_new(sgc_pstate *ps, const sgc_tok *n, const sgc_tok *d, sgc_window *prev);
sgc_test *sgc_test_new(sgc_pstate *ps);
sgc_setexpr *sgc_set_new(sgc_pstate *ps, const sgc_tok *at);
void sgc_set_add(sgc_pstate *ps, sgc_setexpr *e, sgc_item_kind k, const sgc_tok *t);
sgc_setexpr *sgc_set_concat(sgc_setexpr *a, sgc_setexpr *b);
sgc_cond *sgc_cond_new(sgc_pstate *ps, sgc_cond_kind k, const sgc_tok *kw);
sgc_cond *sgc_cond_set(sgc_pstate *ps, sgc_cond_kind k, const sgc_tok *kw, sgc_setexpr *s);
/* [label:] relax RULE [to allow|ask] [when cond] [msg] [hint]: a rule sema joins
 * with the one it lifts (sgc_rule.relax) */
void sgc_act_relax(sgc_pstate *ps, const sgc_tok *label, const sgc_tok *kw, const sgc_tok *target, sgc_cond *when,
                   int decision, const sgc_tok *msg, const sgc_tok *hint);
sgc_cond *sgc_cond_bin(sgc_pstate *ps, sgc_cond_kind k, sgc_cond *a, sgc_cond *b);

/* lemon's entry points (generated) */
void *sgcParseAlloc(void *(*mallocProc)(size_t));
void sgcParseFree(void *p, void (*freeProc)(void *));
void sgcParse(void *p, int major, sgc_tok minor, sgc_pstate *ps);

#endif
