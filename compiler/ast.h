/* ast.h - the rule language's syntax tree, shared by grammar, resolver and emitter.
 *
 * Ownership: every node lives in the compilation's arena (sgc_comp.arena) and dies
 * with it; nodes point into source text through spans, never copies, except where
 * a value had to be decoded (string escapes). */
#ifndef SGC_AST_H
#define SGC_AST_H
#include <stddef.h>
#include <stdint.h>
#include "common/arena.h"

/* A place in a source file: file index into sgc_comp.files, byte range. */
typedef struct sgc_loc {
    uint32_t file, off, len;
} sgc_loc;

/* A token as the lexer hands it to the grammar. */
typedef struct sgc_tok {
    const char *text;    /* decoded value (strings, regex bodies) or span start */
    uint32_t len;
    uint32_t flags;      /* SGC_TOKF_* */
    sgc_loc loc;
} sgc_tok;

#define SGC_TOKF_ICASE 0x1   /* regex /.../i */
#define SGC_TOKF_GLOB  0x2   /* word with * ? [ */
#define SGC_TOKF_QUOTED 0x4  /* a "string" */

/* One member of a set expression. */
typedef enum {
    SGC_ITEM_WORD,       /* exact word (bare or quoted) */
    SGC_ITEM_GLOB,
    SGC_ITEM_REGEX,
    SGC_ITEM_SETREF      /* a named set, resolved later */
} sgc_item_kind;

typedef struct sgc_item {
    sgc_item_kind kind;
    const char *text;
    uint32_t len;
    int icase;
    int quoted;          /* written as a "string" */
    int checked;         /* sema: pattern already checked */
    sgc_loc loc;
    struct sgc_item *next;
} sgc_item;

typedef struct sgc_setexpr {
    sgc_item *head, *tail;
    sgc_loc loc;
    int32_t set_index;   /* assigned while lowering */
} sgc_setexpr;

#define SGC_COND_KINDS(X) \
    X(AND) X(OR) X(NOT) X(ANY) X(PROGRAM) X(SUBCOMMAND) X(OPTION) X(OPTION_ALL) \
    X(ARG) X(ARG_AT) X(ARGC) X(PATH_OUTSIDE) X(PATH_INSIDE) X(REDIR_WRITES) \
    X(REDIR_READS) X(ASSIGNS) X(ASSIGNS_VAL) X(OPTION_VAL) X(PIPED_FROM) X(PIPED_TO) X(DYNAMIC) \
    X(LUA) X(TEXT_CONTAINS) X(TEXT_MATCHES) X(NESTED) X(LINE_RUNS) X(PATH_IS) X(EXPANDS) \
    X(MOREARGS) X(MODULE_AT) X(CWD_OUTSIDE) X(PSCRIPT) X(DEST)

typedef enum {
#define X(k) SGC_C_##k,
    SGC_COND_KINDS(X)
#undef X
} sgc_cond_kind;

typedef struct sgc_cond {
    sgc_cond_kind kind;
    sgc_loc loc;
    struct sgc_cond *a, *b;      /* AND/OR/NOT children */
    sgc_setexpr *set, *set2;     /* matcher(s); NULL where none */
    sgc_tok num, cmp;            /* ARG_AT position, ARGC comparison and number */
    sgc_tok str;                 /* LUA hook name, NESTED kind; REDIR_READS: "heredoc" */
    int32_t hook;                /* LUA: index into the program's hooks */
    uint32_t form;               /* DEST: SGT_DEST_* | SGT_DEST_ONLY; REDIR_WRITES:
                                  * 0 or SGT_WRITES_OUTSIDE / _INSIDE */
} sgc_cond;

typedef struct sgc_rule {
    int decision;                /* sgt_decision */
    sgc_tok label;               /* len 0: none */
    sgc_tok relax;               /* `relax RULE`: the rule it lifts (len 0: a rule) */
    sgc_loc relax_kw;            /* where `relax` stands */
    sgc_cond *cond;              /* a relax's `when` (NULL: always) until sema joins them */
    sgc_tok msg, hint;           /* len 0 (and text NULL): none */
    sgc_loc loc;
    struct sgc_rule *next;
} sgc_rule;

typedef struct sgc_setdef {
    sgc_tok name;
    sgc_setexpr *expr;
    struct sgc_setdef *next;
    int32_t set_index;           /* lowering */
    int resolving;               /* cycle detection */
} sgc_setdef;

/* wrapper / command declarations: clauses. */
typedef enum {
    SGC_CL_VALUE, SGC_CL_SKIP, SGC_CL_SCRIPT, SGC_CL_EXEC, SGC_CL_END,
    SGC_CL_RUNS_NOTHING, SGC_CL_ASSIGNMENTS, SGC_CL_PERMUTE, SGC_CL_JOIN, SGC_CL_MOREARGS,
    SGC_CL_TEXT,                 /* text { OPTS }: values that are not file names */
    SGC_CL_TEXT_OPERAND,         /* text operand [unless { OPTS }] */
    SGC_CL_LOOKUP,               /* lookup { OPTS }: the value is where the inner
                                  * program is looked up (env -P DIR) */
    SGC_CL_ARGV0,                /* argv0 { OPTS }: the value is the name the inner
                                  * program is told it has (env -a NAME) */
    SGC_CL_CODE,                 /* code { OPTS }: the value is the program, in the
                                  * program's own language (python -c CODE) */
    SGC_CL_STDIN,                /* stdin { OPTS }: the program runs what it reads
                                  * from stdin (sh -s; with no operand) */
    SGC_CL_FLAGS,                /* flags { OPTS }: options that take no value, named so
                                  * that a word spelling one is that option and not an
                                  * abbreviation of a longer one (pip --pre, --prefix) */
    SGC_CL_WRITES,               /* writes operands */
    SGC_CL_COPIES,               /* copies */
    SGC_CL_RUNS_FILE,            /* runs operand */
    SGC_CL_NO_STDIN,             /* stdin nothing: never runs a program read from stdin */
    SGC_CL_TREE,                 /* tree operands: an operand REV:PATH also names PATH */
    SGC_CL_TEXT_ALL,             /* text operands: every operand is text (echo, printf) */
    SGC_CL_LINKS,                /* links { OPTS }: given one, the sources are link texts,
                                  * read from the link's directory (ln -s) */
    SGC_CL_LINKS_UNLESS,         /* ... unless { OPTS }: not when one of these is given
                                  * (ln -r makes the text from a cwd-relative source) */
    SGC_CL_NORUN,                /* runs nothing { OPTS }: a wrapper given one of these
                                  * runs no command (command -v NAME describes NAME) */
    SGC_CL_CWD,                  /* cwd { OPTS }: the value is the directory the program
                                  * works in and runs its command in (env -C DIR) */
    SGC_CL_SCRIPTS,              /* scripts: its command [ENV:]NAME may be the project's
                                  * script NAME (hatch run) */
    SGC_CL_SUBCOMMANDS,          /* subcommands: its first operand names what it does
                                  * (git clone): messages name the two ({command}) */
    SGC_CL_URL,                  /* url { OPTS }: the value is where it connects (curl -x) */
    SGC_CL_URL_UNKNOWN,          /* url unknown { OPTS }: the value names a file of where
                                  * it connects (curl -K, wget -i) */
    SGC_CL_URL_OPS,              /* url operands: each operand is a URL or host[/path] */
    SGC_CL_REMOTE_OPS,           /* remote operands: a URL or [user@]host:path operand */
    SGC_CL_HOST_OP               /* host operand: the first operand is [user@]host (ssh) */
} sgc_clause_kind;

/* The clauses whose options take a value (every one is in the value list too). */
#define SGC_VALUE_CLAUSES(X) X(VALUE) X(TEXT) X(LOOKUP) X(ARGV0) X(CODE) X(CWD) X(URL) X(URL_UNKNOWN)
static inline int sgc_clause_takes_value(sgc_clause_kind k)
{
#define X(id) k == SGC_CL_##id ||
    return SGC_VALUE_CLAUSES(X) 0;
#undef X
}
_Static_assert(SGC_CL_HOST_OP < 64, "a clause kind is a bit of a 64-bit mask");
static inline uint64_t sgc_value_clause_mask(void)
{
#define X(id) 1ull << SGC_CL_##id |
    return SGC_VALUE_CLAUSES(X) 0ull;
#undef X
}

typedef struct sgc_wlist {       /* a list of words/strings */
    sgc_tok tok;
    struct sgc_wlist *next;
} sgc_wlist;

typedef struct sgc_clause {
    sgc_clause_kind kind;
    sgc_wlist *words;
    sgc_tok num;
    sgc_loc loc;
    struct sgc_clause *next;
} sgc_clause;

typedef struct sgc_progdecl {
    int wrapper;                 /* 1: wrapper, 0: command */
    sgc_wlist *names;
    sgc_clause *clauses;
    sgc_loc loc;
    struct sgc_progdecl *next;
} sgc_progdecl;

typedef struct sgc_window {
    sgc_tok count, dur;
    struct sgc_window *next;
} sgc_window;

typedef struct sgc_limit {
    sgc_tok name;
    sgc_window *windows;
    sgc_tok per;                       /* `per agent|team` after the windows; len 0: none */
    sgc_cond *when;
    sgc_tok msg;
    sgc_loc loc;
    struct sgc_limit *next;
} sgc_limit;

typedef struct sgc_test {
    int decision;
    sgc_tok cmd, rule, cwd;
    sgc_loc loc;
    struct sgc_test *next;
} sgc_test;

typedef struct sgc_use {
    sgc_tok what;
    struct sgc_use *next;
} sgc_use;

/* Everything one source file declares, in order of appearance. */
typedef struct sgc_file_ast {
    sgc_tok pack_name, pack_version;     /* len 0: no pack header */
    sgc_loc pack_loc;
    int has_default;
    int default_decision;
    sgc_tok default_msg, default_hint;
    sgc_loc default_loc;
    sgc_use *uses, *uses_tail;
    sgc_wlist *hooks, *hooks_tail;
    sgc_wlist *hook_limits;              /* key value key value ... */
    sgc_loc hook_limits_loc;
    sgc_setdef *sets, *sets_tail;
    sgc_rule *rules, *rules_tail;
    sgc_progdecl *progs, *progs_tail;
    sgc_limit *limits, *limits_tail;
    sgc_test *tests, *tests_tail;
} sgc_file_ast;

#endif
