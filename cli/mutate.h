/* mutate.h - meaning-keeping rewrites of a bash command line (for `shellgate fuzz`).
 *
 * Each transformation rewrites one command line into another that bash runs the
 * same way: the same programs with the same argv, in the same order, with the same
 * redirections -- except the path-* ones, which give a path operand another
 * spelling of the same file (the same argv once each path is resolved; path-glob
 * only for a path that exists, the one thing here that looks at the filesystem).
 * They work on the spans sgr_sh_parse reports, so a word is rewritten only where
 * its value is fully known (no $var, $(...), globs, braces, ~).
 *
 * Ownership: sgm_apply hands back one sg_malloc'd string; sgm_variants fills a list
 * whose strings the caller releases with sgm_list_free.  Nothing here prints or runs
 * a command. */
#ifndef SGM_MUTATE_H
#define SGM_MUTATE_H
#include <stddef.h>
#include <stdint.h>

/* ORDER SGM: names are part of the `fuzz` report and the tests. */
#define SGM_TRANSFORMS(X) \
    X(QUOTE_SPLIT,  "quote-split",  "empty quotes inside a word: r''m, r\"\"m") \
    X(BACKSLASH,    "backslash",    "backslash-escaped characters: \\rm") \
    X(DQUOTE,       "dquote",       "part of a word in double quotes: \"r\"m") \
    X(ANSIC,        "ansi-c",       "part of a word as $'\\xHH' escapes: $'\\x72\\x6d'") \
    X(ABS_PATH,     "abs-path",     "program by absolute path: /usr/bin/rm, //bin/rm, /usr/./bin/rm") \
    X(REL_PATH,     "rel-path",     "program by a relative path up to /: ../../../usr/bin/rm") \
    X(ENV,          "env",          "env CMD") \
    X(NICE,         "nice",         "nice CMD") \
    X(TIMEOUT,      "timeout",      "timeout 5 CMD") \
    X(COMMAND,      "command",      "command CMD") \
    X(SH_C,         "sh-c",         "sh -c 'CMD' (POSIX-only commands)") \
    X(BASH_C,       "bash-c",       "bash -c 'CMD'") \
    X(XARGS,        "xargs",        "printf '%s\\0' ARGS | xargs -0 CMD (trailing arguments through xargs)") \
    X(SUBSHELL,     "subshell",     "( CMD )") \
    X(BRACE,        "brace-group",  "{ CMD; }") \
    X(FLAG_SPLIT,   "flag-split",   "-rf -> -r -f (known no-value flags)") \
    X(FLAG_CLUSTER, "flag-cluster", "-r -f -> -rf (known no-value flags)") \
    X(LONG_OPT,     "long-option",  "-r -> --recursive (known programs)") \
    X(SHORT_OPT,    "short-option", "--recursive -> -r (known programs)") \
    X(LONG_ABBREV,  "long-abbrev",  "--recursive -> --recursiv (getopt_long prefixes of the long options the table names)") \
    X(OPT_SPLIT,    "opt-split",    "--out=x -> --out x, -ox -> -o x (known programs; any program's declared value options)") \
    X(OPT_JOIN,     "opt-join",     "--out x -> --out=x, -o x -> -ox, -n=x for Go's pflag (known programs; declared value options)") \
    X(OPT_MOVE,     "option-move",  "-n x a b -> a b -n x: an option, with its value, past operands (programs that permute)") \
    X(LINE_CONT,    "line-continuation", "backslash-newline between or inside words") \
    X(REDIR_MOVE,   "redirect-move", ">x cmd a <-> cmd a >x") \
    X(IFS,          "ifs",          "${IFS} instead of the blank between two words") \
    X(STATE,        "state",        "a shell variable set to its own value first: PATH=\"$PATH\"; CMD, export/declare/typeset/printf -v/read forms") \
    X(FEED,         "feed",         "the command as text fed to a shell: echo 'CMD' | sh, printf '%s\\n' 'CMD' | bash -s, bash <(...), source <(...)") \
    X(ARITH_EXPR,   "arith",        "a command as $(...) in arithmetic: (( a[$(CMD)] )), ${a[$(CMD)]}, x='a[$(CMD)]'; $((x)) (output captured)") \
    X(ARITH_NAME,   "arith-name",   "a command as $(...) in a builtin's NAME operand: test -v 'a[$(CMD)]', read, printf -v, let (output captured)") \
    X(HEREDOC,      "heredoc",      "a here-document before the line, in a delimiter form bash ends: EO\\<newline>F, <<-, <<E\"O\"F, $(...) rule") \
    X(HEREDOC_BODY, "heredoc-body", "a command as $(...) in an unquoted here-document body (output captured)") \
    X(PATH_SLASH,   "path-slash",   "a path operand with a doubled slash: //etc/x, /etc//x") \
    X(PATH_DOT,     "path-dot",     "a path operand with /./ inside, or x/ and x/. for a directory") \
    X(PATH_UP,      "path-up",      "a path operand from /usr/../, /dev/fd/../../../ or /proc/self/root/") \
    X(PATH_GLOB,    "path-glob",    "a path operand as a glob that matches only it: /e[t]c/x (existing paths)") \
    X(PATH_BRACE,   "path-brace",   "a path operand as a brace expansion of one word: {/etc/x,}") \
    X(PATH_EXPAND,  "path-expand",  "a path operand built at run time: /etc/sha$(printf d)ow, \"$HOME\"/x for ~/x") \
    X(URL,          "url",          "a URL to the same place: scheme and host in capitals, a trailing dot, the scheme's own port, a user") \
    X(PROG_CASE,    "program-case", "the program's name in other case: RM, Rm, and RM.EXE on windows (only where the platform folds case)")

typedef enum {
#define X(id, name, doc) SGM_##id,
    SGM_TRANSFORMS(X)
#undef X
    SGM__COUNT
} sgm_transform;

extern const char *const sgm_names[SGM__COUNT];
extern const char *const sgm_docs[SGM__COUNT];

#define SGM_MAX_DEPTH 3

typedef struct sgm_opts {
    const char *const *bindirs;  /* where programs live, for abs-path/rel-path;
                                  * NULL: { "/usr/bin", "/bin" } */
    size_t nbindirs;
    unsigned depth;              /* longest chain, 1..SGM_MAX_DEPTH (0: 3) */
    unsigned max;                /* variants per command (0: 64) */
    /* A table's option knowledge, for long-abbrev (nlongopts 0: only the few
     * programs this file knows).  longopts[0..nlongopts) is every long option
     * ("--name") the table names, strcmp-sorted and distinct; an abbreviation is
     * made only of one of them, and only as long as no other of them shares it.
     * optkind (may be NULL) says what program prog (a basename) declares option
     * word opt[0..olen) to be: SGM_OPT_VALUE, SGM_OPT_FLAG or 0 (not declared), so
     * a word that may be the value of the option before it is left alone; and
     * opt-split, opt-join and option-move respell the options it says take a
     * value, with their values, for any program (mutate.c "option values from
     * a table's declarations"). */
    const char *const *longopts;
    size_t nlongopts;
    unsigned (*optkind)(void *ud, const char *prog, size_t plen, const char *opt, size_t olen);
    void *ud;
    /* The platform finds programs by name folded to lower case (1: macos), and
     * also with a trailing .exe dropped (2: windows); 0: as written, and
     * program-case makes nothing (runtime/unwrap.h "platforms"). */
    int fold_case;
} sgm_opts;

#define SGM_OPT_VALUE 1u
#define SGM_OPT_FLAG 2u

typedef struct sgm_variant {
    char *cmd;                   /* sg_malloc'd, NUL-terminated */
    uint8_t chain[SGM_MAX_DEPTH];/* sgm_transform ids, first applied first */
    uint8_t nchain;
} sgm_variant;

typedef struct sgm_list {
    sgm_variant *v;
    size_t n, cap;
} sgm_list;

/* 1 when transformation t keeps what the command prints; 0 when it captures the
 * output of the command it moves into a substitution (arith, arith-name,
 * heredoc-body: the same programs run with the same argv and files, but their
 * standard output becomes part of an expression). */
int sgm_keeps_output(sgm_transform t);

/* Apply transformation t once to cmd[0..len), choosing where and how with *rng
 * (a splitmix64 state).  Returns 1 and sets *out (sg_malloc'd) when it applied, 0
 * when t has nothing to rewrite in cmd (or cmd does not parse), -1 out of memory. */
int sgm_apply(sgm_transform t, const char *cmd, size_t len, const sgm_opts *o, uint64_t *rng, char **out);

/* Fill *out (zeroed by the caller) with up to o->max distinct variants of cmd, none
 * equal to cmd: first each transformation alone, then random chains of up to
 * o->depth transformations.  Deterministic for a given seed and cmd.  Returns 0,
 * or -1 out of memory (the list holds what was made so far). */
int sgm_variants(const char *cmd, const sgm_opts *o, uint64_t seed, sgm_list *out);

void sgm_list_free(sgm_list *l);

#endif
