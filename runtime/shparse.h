/* shparse.h - POSIX sh parser: a command line becomes a flat list of segments.
 *
 * Ownership: every pointer in an sgr_cmdline points into the caller's arena or into
 * the line itself; all of it dies with sg_arena_reset().  The parser never prints
 * and never touches the filesystem.
 *
 * A segment is one simple command: its words after quote removal, its leading
 * assignments, its redirections, and where it sits (pipeline, position, what it was
 * nested in).  Commands nested in $(...), `...`, <(...), >(...), and the bodies of
 * if/while/for/case, subshells, brace groups and function definitions are segments
 * of their own, linked to their parent by index.  Wrapper unwrapping (sudo, sh -c,
 * find -exec, ...) is not done here: see unwrap.h, which calls back into this
 * parser for script strings. */
#ifndef SGR_SHPARSE_H
#define SGR_SHPARSE_H
#include <stddef.h>
#include <stdint.h>
#include "../common/arena.h"

typedef struct sgr_span {
    uint32_t off, len;           /* byte range in the original line */
} sgr_span;

/* Word flags: what the shell would still do to this word at run time.  A word's
 * text is its value after quote removal with escapes decoded ($'\x72' -> r); any
 * part that needs expansion is kept verbatim ("$HOME/x", "$(id)"). */
#define SGR_WORD_FLAGS(X) \
    X(QUOTED,  0x0001, "some part was quoted or escaped") \
    X(VAR,     0x0002, "unquoted or double-quoted $var / ${...}") \
    X(CMDSUB,  0x0004, "$(...) or `...`") \
    X(ARITH,   0x0008, "$((...))") \
    X(PROCSUB, 0x0010, "<(...) or >(...)") \
    X(GLOB,    0x0020, "unquoted * ? or [...]") \
    X(BRACE,   0x0040, "unquoted brace expansion {a,b} or {1..3}") \
    X(TILDE,   0x0080, "leading unquoted ~") \
    X(ANSIC,   0x0100, "$'...' decoded") \
    X(ARRAY,   0x0200, "NAME=(...): a compound array assignment, its words parsed")

enum {
#define X(name, bit, doc) SGR_W_##name = bit,
    SGR_WORD_FLAGS(X)
#undef X
};
/* a word whose value is not known until run time */
#define SGR_W_UNKNOWN (SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH | SGR_W_PROCSUB)

typedef struct sgr_word {
    const char *text;            /* NUL-terminated value (arena or line) */
    uint32_t len;
    uint32_t flags;              /* SGR_W_* */
    sgr_span span;               /* the word as written */
} sgr_word;

#define SGR_REDIR_KINDS(X) \
    X(READ,       "<")   \
    X(WRITE,      ">")   \
    X(APPEND,     ">>")  \
    X(CLOBBER,    ">|")  \
    X(RDWR,       "<>")  \
    X(DUP_OUT,    ">&")  \
    X(DUP_IN,     "<&")  \
    X(BOTH,       "&>")  \
    X(BOTH_APPEND,"&>>") \
    X(HEREDOC,    "<<")  \
    X(HERESTRING, "<<<")

typedef enum {
#define X(name, text) SGR_REDIR_##name,
    SGR_REDIR_KINDS(X)
#undef X
    SGR_REDIR__COUNT
} sgr_redir_kind;

typedef struct sgr_redir {
    int32_t fd;                  /* explicit fd number, or -1 for the default */
    uint8_t kind;                /* sgr_redir_kind */
    uint8_t quoted_delim;        /* heredoc: delimiter was quoted (body not expanded) */
    uint8_t strip_tabs;          /* heredoc <<- */
    sgr_word target;             /* file, fd number ("1", "-"), here-string word,
                                  * or for a heredoc its body (flags say what the
                                  * body would expand) */
} sgr_redir;

/* How a segment came to be. */
#define SGR_NEST_KINDS(X) \
    X(TOP,      "top")        /* a command of the line itself */ \
    X(CMDSUB,   "cmdsub")     /* $(...) or `...` */ \
    X(PROCSUB,  "procsub")    /* <(...) or >(...) */ \
    X(WRAPPED,  "wrapped")    /* inner command of a wrapper (sudo, env, ...) */ \
    X(SCRIPT,   "script")     /* parsed from a script string (sh -c, su -c) */ \
    X(EXEC,     "exec")       /* find -exec and alike */ \
    X(HEREDOC,  "heredoc")    /* $(...) inside a heredoc body or here-string */

typedef enum {
#define X(name, text) SGR_NEST_##name,
    SGR_NEST_KINDS(X)
#undef X
    SGR_NEST__COUNT
} sgr_nest_kind;

/* Segment flags. */
#define SGR_SEG_FLAGS(X) \
    X(DYNAMIC,    0x0001, "cannot be analysed statically (see dyn_reason)") \
    X(BACKGROUND, 0x0002, "followed by &") \
    X(SUBSHELL,   0x0004, "inside ( ... )") \
    X(CONTROL,    0x0008, "inside if/while/until/for/case/function body or condition") \
    X(FUNCDEF,    0x0010, "inside a function definition body") \
    X(MOREARGS,   0x0020, "receives more arguments at run time (xargs)") \
    X(NEGATED,    0x0040, "preceded by !") \
    X(SPLITS,     0x0080, "an unquoted expansion in its words is split into words at run time") \
    X(LOOP,       0x0100, "a for/select header: argc 0, the loop's words in values, its span up to 'done'") \
    X(PSCRIPT,    0x0200, "a name a `scripts` wrapper runs as the project's script: no directory of PATH holds it")

enum {
#define X(name, bit, doc) SGR_SEG_##name = bit,
    SGR_SEG_FLAGS(X)
#undef X
};

/* What follows a segment on its line (for explanations; pipes are in pipe_*). */
#define SGR_CONNECTORS(X) \
    X(END,  "")   \
    X(SEMI, ";")  \
    X(AND,  "&&") \
    X(OR,   "||") \
    X(AMP,  "&")  \
    X(PIPE, "|")  \
    X(PIPE_ERR, "|&")

typedef enum {
#define X(name, text) SGR_CONN_##name,
    SGR_CONNECTORS(X)
#undef X
} sgr_connector;

typedef struct sgr_segment {
    sgr_word *argv;              /* argv[0] is the program as written; argc may be 0
                                  * for a segment of only assignments/redirections */
    uint32_t argc;
    uint32_t spec;               /* set by sgr_unwrap (unwrap.h) for every segment:
                                  * index + 1 of the table's program spec for argv[0]'s
                                  * basename, 0: none; the parser leaves it unset */
    sgr_word *assigns;           /* leading NAME=value words (text "NAME=value") */
    uint32_t nassigns;
    sgr_word *values;            /* SGR_SEG_LOOP: the words after 'in', the values of
                                  * the loop variable (path candidates); else NULL */
    uint32_t nvalues;
    uint32_t base;               /* set by sgr_unwrap with spec, when argc > 0: where
                                  * argv[0]'s basename starts (sgr_basename) */
    const char *prog;            /* set by sgr_unwrap with spec, when argc > 0: the
                                  * program's name as rules see it, prog[0..progl):
                                  * the basename, folded where the platform's
                                  * filesystems fold case (unwrap.h; the arena's,
                                  * the table's or argv[0]'s bytes) */
    uint32_t progl;
    sgr_redir *redirs;
    uint32_t nredirs;
    uint32_t pipeline;           /* id shared by the segments of one pipeline */
    uint32_t pipe_index;         /* 0-based position in that pipeline */
    uint32_t pipe_len;           /* number of segments in that pipeline */
    int32_t parent;              /* index of the segment this is nested in, or -1 */
    uint8_t nest;                /* sgr_nest_kind */
    uint8_t connector;           /* sgr_connector: what follows this segment */
    uint16_t depth;              /* nesting depth, 0 for top level */
    uint32_t flags;              /* SGR_SEG_* */
    const char *dyn_reason;      /* why DYNAMIC, static string or arena text */
    sgr_span span;               /* the whole simple command as written */
} sgr_segment;
/* Conventions of the parser (shparse.c; pinned by tests/shparse/cases.txt):
 * - depth counts substitution levels only (the $(...), backquotes, <(...) and
 *   scripts around the segment): a nested segment has depth = parent's depth
 *   + 1, except as below.  Subshells and compound bodies keep the depth and set
 *   SUBSHELL / CONTROL / FUNCDEF instead.
 * - Commands in $(...) of compound-command headers (`for x in $(ls)`, `case
 *   $(x) in`, case patterns, `for ((...))`) get parent = the parent of the list
 *   the compound sits in: -1 at top level (nest CMDSUB, depth 1).  Inside a
 *   substitution their depth still counts every level, so it is the parent's
 *   depth + 2 (`echo $(for x in $(ls); do :; done)`: ls has depth 2, parent
 *   echo at depth 0); so are the commands of a heredoc body no segment holds.
 * - Redirections after a compound (`{ a; b; } >f`, `done <f`) are appended to
 *   every segment at its depth inside it.
 * - A compound that is a pipeline element (`curl x | (sh)`) gives its pipeline
 *   and position to the segments inside whose own pipeline has length 1.
 *   Pipeline ids are unique but need not be dense.
 * - connector is what follows the simple command in its own list (newline =
 *   SEMI); `;;` and what follows a compound command are not recorded.
 * - `[[ ... ]]` and `(( ... ))` are segments with argv "[[" ... "]]" and
 *   "((", EXPR, "))".  `time`, `coproc` are ordinary program names.
 * - An unquoted \r separates commands like a newline, but belongs to a heredoc's
 *   delimiter word, as bash reads it.
 * - An unquoted $IFS / ${IFS} splits an argv word into several (as bash with IFS as it
 *   starts); commands found in values bash evaluates (arithmetic, NAME operands of
 *   builtins, ${x@P}, the values of variables evaluated there) are CMDSUB segments
 *   of the segment that evaluates them, or the segment is DYNAMIC (runtime code);
 *   a header (`for ((...))`) that has no segment gets an empty DYNAMIC one. */

/* A variable the line assigns, as the parser records it for what bash evaluates in
 * values (see sgr_sh_parse): NAME=value words, declare/local/export/readonly/typeset
 * operands, read/mapfile/printf -v targets, for/select loop variables. */
#define SGR_VAR_FLAGS(X) \
    X(UNKNOWN, 0x0001, "the value is only known at run time (read, $(...), +=)") \
    X(INTEGER, 0x0002, "declare -i: bash evaluates every value it is given") \
    X(PREFIX,  0x0004, "NAME=value before a command: set for that command only") \
    X(APPEND,  0x0008, "NAME+=value: the value is added to what the variable holds")

enum {
#define X(name, bit, doc) SGR_VAR_##name = bit,
    SGR_VAR_FLAGS(X)
#undef X
};

typedef struct sgr_shvar {
    const char *name;            /* not NUL-terminated */
    uint32_t nlen;
    const char *value;           /* the value as words keep it (expansions verbatim) */
    uint32_t vlen;
    uint32_t vflags;             /* SGR_W_* of the word that gives the value */
    uint32_t flags;              /* SGR_VAR_* */
    int32_t seg;                 /* the assigning segment, -1: a loop header */
    sgr_span span;
} sgr_shvar;

typedef struct sgr_sh_limits {
    uint32_t max_line;           /* bytes; longer lines are refused */
    uint32_t max_depth;          /* nesting of $(), subshells, scripts */
    uint32_t max_segments;
    uint32_t max_words;          /* per segment */
} sgr_sh_limits;

#define SGR_SH_DEFAULT_LIMITS { 65536, 16, 1024, 4096 }

typedef struct sgr_cmdline {
    const char *line;            /* the line as given (not copied) */
    size_t len;
    sgr_segment *seg;            /* segments in source order; nested ones follow
                                  * the segment they are nested in */
    uint32_t nseg, cap;
    uint32_t npipelines;
    const char *error;           /* set when the whole line is unparseable: then
                                  * nseg is 0 and callers must deny */
    sgr_span error_span;
    sgr_word *funcs;             /* the names of the functions the line (and the
                                  * scripts parsed into it) defines, in source order */
    uint32_t nfuncs, capfuncs;
    sgr_word *loopvars;          /* the variables of its for and select loops, which
                                  * no segment's assignments show */
    uint32_t nloopvars, caploopvars;
    sgr_shvar *vars;             /* what the line assigns, in source order, nested
                                  * scripts' after the line's (sgr_sh_parse_nested
                                  * reads the line's): for the parser's own use */
    uint32_t nvars, varcap;
    uint8_t platform;            /* sgr_platform (unwrap.h): how sgr_unwrap reads the
                                  * program names; the parser leaves 0, the host's */
} sgr_cmdline;

/* Parse line[0..len) (NUL bytes are data and make the line dynamic).  Fills *out.
 * Returns 0 on success; -1 when the line as a whole cannot be parsed (unbalanced
 * quotes, over a limit, syntax error), with out->error set; -2 when the arena runs
 * out of memory (out->error = "out of memory").  Never reads past len. */
int sgr_sh_parse(sg_arena *a, const char *line, size_t len, const sgr_sh_limits *lim,
                 sgr_cmdline *out);

/* Parse a script string as nested segments of parent (for sh -c, su -c, watch,
 * env -S), appending to cl.  Spans of the new words are set to span (the script's
 * own word in the original line).  Same return values as sgr_sh_parse; on -1 the
 * parent segment is marked DYNAMIC with the error as reason instead of failing the
 * whole line. */
int sgr_sh_parse_nested(sg_arena *a, sgr_cmdline *cl, const char *script, size_t len,
                        int32_t parent, sgr_nest_kind nest, uint16_t depth, sgr_span span,
                        const sgr_sh_limits *lim);

/* Append a fresh zeroed segment to cl (for the unwrapper); NULL on OOM/limit. */
sgr_segment *sgr_sh_add_segment(sg_arena *a, sgr_cmdline *cl, const sgr_sh_limits *lim);

extern const char *const sgr_redir_names[SGR_REDIR__COUNT];
extern const char *const sgr_nest_names[SGR_NEST__COUNT];

#endif
