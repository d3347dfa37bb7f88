/* sgt.h - the matcher table format: the one contract between compiler and runtime.
 *
 * A table is one little-endian byte image, position-independent (every reference is
 * an offset or an index), loadable by mmap without parsing.  The compiler writes it
 * (compiler/emit.c); the runtime must verify all of it before first use
 * (runtime/table.c) and refuses anything it cannot prove well-formed: a corrupt or
 * truncated table is an error, never an empty policy.
 *
 * Layout: sgt_header (fixed size, section directory inside), then the sections in
 * directory order, each 8-byte aligned.  The checksum (common/checksum.h: FNV-1a
 * style over 64-bit words) covers the whole image with the checksum field itself
 * taken as zero, so any single changed byte anywhere is detected.  Bump SGT_VERSION on every layout change (ORDER SGT_LAYOUT). */
#ifndef SGT_H
#define SGT_H
#include <stdint.h>

#define SGT_MAGIC "SGTABLE\x1a"          /* 8 bytes */
#define SGT_VERSION 8u
#define SGT_ENDIAN 0x01020304u
/* Header flags.  TEAM_LIMITS: some limit is kept per team (sgt_limit.key); set exactly
 * when one is, so a table without one is as before, and a runtime that predates per-team
 * limits refuses the table (unknown flag) instead of counting them per agent. */
#define SGT_HDR_TEAM_LIMITS 0x1u
#define SGT_HDR_KNOWN SGT_HDR_TEAM_LIMITS
#define SGT_NONE 0xffffffffu              /* "no set / no string / no dfa" */

/* Sections, in image order. */
#define SGT_SECTIONS(X) \
    X(META,      "meta",      sizeof(sgt_meta))      /* exactly one record */ \
    X(STRINGS,   "strings",   1)                     /* NUL-terminated strings; 0 = "" */ \
    X(SETS,      "sets",      sizeof(sgt_set))       \
    X(WORDS,     "words",     4)                     /* u32 string refs, sorted per set */ \
    X(DFAS,      "dfas",      sizeof(sgt_dfa))       \
    X(DFADATA,   "dfadata",   4)                     /* classmaps, transitions, accepts */ \
    X(CODE,      "code",      4)                     /* u32 instruction words */ \
    X(RULES,     "rules",     sizeof(sgt_rule))      \
    X(INDEX,     "index",     sizeof(sgt_bucket))    /* open-addressed, power of 2 */ \
    X(LISTS,     "lists",     4)                     /* u32 rule ids, ascending per list */ \
    X(PROGSPECS, "progspecs", sizeof(sgt_progspec))  /* sorted by name */ \
    X(PROGOPTS,  "progopts",  4)                     /* u32 string refs, sorted per slice */ \
    X(LIMITS,    "limits",    sizeof(sgt_limit))     \
    X(HOOKS,     "hooks",     sizeof(sgt_hook))      \
    X(TESTS,     "tests",     sizeof(sgt_test))      \
    X(PACKS,     "packs",     sizeof(sgt_pack))      \
    X(PATTERNS,  "patterns",  sizeof(sgt_pattern))   /* sources of DFA items, by set */

enum {
#define X(id, name, rec) SGT_SEC_##id,
    SGT_SECTIONS(X)
#undef X
    SGT_NSECTIONS
};

typedef struct sgt_section {
    uint32_t off, size;                   /* bytes from the start of the image */
} sgt_section;

typedef struct sgt_header {
    char magic[8];
    uint32_t version;
    uint32_t endian;                      /* SGT_ENDIAN as written by the producer */
    uint32_t header_size;                 /* sizeof(sgt_header) */
    uint32_t total_size;                  /* the whole image */
    uint32_t nsections;                   /* SGT_NSECTIONS */
    uint32_t flags;                       /* SGT_HDR_*; a runtime refuses a flag it does not know */
    uint64_t checksum;                    /* sg_checksum64, this field as zero */
    uint8_t source_sha256[32];            /* over every source file, in load order */
    sgt_section sec[SGT_NSECTIONS];
} sgt_header;

/* The placeholders a message or hint may hold, "{name}", filled when a decision is
 * made (runtime/eval.c); the compiler refuses any other "{name}" (a brace around
 * anything but a lower-case name is text). */
#define SGT_PLACEHOLDERS(X) \
    X(PROGRAM,    "program")    \
    X(SUBCOMMAND, "subcommand") \
    X(COMMAND,    "command")    \
    X(OPTION,     "option")     \
    X(ARG,        "arg")        \
    X(PATH,       "path")       \
    X(RULE,       "rule")       \
    X(REASON,     "reason")

/* The placeholders of a rate limit's message, filled when admission refuses
 * (admit/common.c, sga_limit_message): the count, the window in seconds, the
 * window in words, the wait in seconds, the limit's name. */
#define SGT_LIMIT_PLACEHOLDERS(X) \
    X(COUNT,  "count")  \
    X(WINDOW, "window") \
    X(PER,    "per")    \
    X(WAIT,   "wait")   \
    X(NAME,   "name")

/* Decisions, strictest last is NOT the order: use sgt_strictness(). */
#define SGT_DECISIONS(X) \
    X(ALLOW, "allow") \
    X(DENY,  "deny")  \
    X(ASK,   "ask")

typedef enum {
#define X(id, name) SGT_##id,
    SGT_DECISIONS(X)
#undef X
    SGT_NDECISIONS
} sgt_decision;

/* deny > ask > allow */
static inline int sgt_strictness(uint32_t d)
{
    return d == SGT_DENY ? 2 : d == SGT_ASK ? 1 : 0;
}

typedef struct sgt_meta {
    uint32_t pack_name;                   /* string: the outermost pack */
    uint32_t pack_version;                /* a number, not a string */
    uint32_t default_decision, default_msg, default_hint;
    uint32_t any_off, any_len;            /* LISTS slice: rules not indexed by program */
    uint32_t line_off, line_len;          /* LISTS slice: rules on the whole line only */
    uint32_t dynamic_rules;               /* number of rules that test `dynamic` */
    uint32_t hook_budget;                 /* Lua instruction budget per call (0 = default) */
    uint32_t hook_memory;                 /* Lua memory cap in bytes (0 = default) */
    uint32_t hook_millis;                 /* Lua wall-clock cap (0 = default) */
    uint32_t reserved;
} sgt_meta;

/* A set: exact words (binary search) plus, when it has globs or regexes, one DFA
 * accepting any of them.  kind says how the runtime applies it. */
#define SGT_SET_KINDS(X) \
    X(MATCH,  "match")      /* item matches the whole string (words, globs, regexes) */ \
    X(TEXT,   "text")       /* DFA over the raw line (text contains / matches) */

enum {
#define X(id, name) SGT_SETK_##id,
    SGT_SET_KINDS(X)
#undef X
};

typedef struct sgt_set {
    uint32_t name;                        /* string ref ("" for inline sets) */
    uint32_t kind;
    uint32_t words_off, nwords;           /* WORDS slice (index of first u32) */
    uint32_t dfa;                         /* DFAS index or SGT_NONE */
} sgt_set;

typedef struct sgt_dfa {
    uint32_t nstates, nclasses;
    uint32_t data_off;                    /* byte offset in DFADATA: classmap[256] u8,
                                           * trans[nstates*nclasses] u32,
                                           * accept[nstates] i32 (ORDER DFA_LAYOUT) */
    uint32_t npatterns;                   /* accept values are < npatterns */
} sgt_dfa;

/* Condition bytecode: two u32 words an instruction.  w0 = opcode | a << 8,
 * w1 = b.  Predicates set the accumulator; jumps are forward only (so every
 * program terminates), relative to the next instruction, counted in instructions. */
#define SGT_OPS(X) \
    X(TRUE,         "true",          0) /* acc = 1 */ \
    X(PROGRAM,      "program",       1) /* b = set: basename or path as written */ \
    X(SUBCOMMAND,   "subcommand",    1) /* b = set */ \
    X(OPTION_ANY,   "option",        1) /* b = set: any normalised option */ \
    X(OPTION_ALL,   "option-all",    1) /* b = set: every word of the set present */ \
    X(ARG_ANY,      "arg",           1) /* b = set: any argument or option value */ \
    X(ARG_AT,       "arg-at",        1) /* a = position (argv index), b = set */ \
    X(ARGC,         "argc",          0) /* a = comparison (SGT_CMP_*), b = n */ \
    X(PATH_OUTSIDE, "path-outside",  0) /* a path operand resolves outside the roots */ \
    X(PATH_INSIDE,  "path-inside",   1) /* b = set: a resolved path operand matches */ \
    X(REDIR_WRITES, "redirect-writes", 1) /* b = set or SGT_NONE: a write redirection */ \
    X(REDIR_READS,  "redirect-reads",  1) /* a = 0 or SGT_READS_HEREDOC, b = set or SGT_NONE */ \
    X(ASSIGNS,      "assigns",       1) /* b = set over NAMEs */ \
    X(ASSIGNS_VAL,  "assigns-value", 1) /* a = set over NAMEs | SGT_NEGATE_VALUE, b = set over values */ \
    X(PIPED_FROM,   "piped-from",    1) /* b = set: an earlier program in the pipeline */ \
    X(PIPED_TO,     "piped-to",      1) /* b = set: a later program in the pipeline */ \
    X(DYNAMIC,      "dynamic",       0) /* the segment could not be analysed */ \
    X(LUA,          "lua",           0) /* b = hook index */ \
    X(TEXT,         "text",          1) /* b = TEXT set: the raw line matches */ \
    X(NOT,          "not",           0) /* acc = !acc */ \
    X(JUMP_FALSE,   "jump-false",    0) /* b = skip count when acc == 0 */ \
    X(JUMP_TRUE,    "jump-true",     0) /* b = skip count when acc == 1 */ \
    X(NESTED,       "nested",        0) /* a = nest-kind mask: segment came from there */ \
    X(LINE_RUNS,    "line-runs",     1) /* b = set: some segment of the line runs it */ \
    X(PATH_IS,      "path-is",       1) /* b = set: a resolved path itself matches */ \
    X(EXPANDS,      "expands",       1) /* b = set: a variable a word expands at run time */ \
    X(MOREARGS,     "moreargs",      0) /* the segment gets arguments the line does not show */ \
    X(MODULE_AT,    "module-at",     0) /* a = position: argv[a] is a Python module that is a file of the workspace */ \
    X(CWD_OUTSIDE,  "cwd-outside",   0) /* a directory the segment may work in is outside the roots */ \
    X(PSCRIPT,      "project-script", 0) /* the segment is a project's script a `scripts` wrapper runs */ \
    X(OPTION_VAL,   "option-value",  1) /* a = set over options | SGT_NEGATE_VALUE, b = set over their values */ \
    X(DEST,         "destination",   1) /* a = SGT_DEST_* field | SGT_DEST_ONLY, b = set: where the segment connects */

typedef enum {
#define X(id, name, uses_set) SGT_OP_##id,
    SGT_OPS(X)
#undef X
    SGT_NOPS
} sgt_op;

/* ASSIGNS_VAL, OPTION_VAL: this bit of `a` means "a value NOT in set b" */
#define SGT_NEGATE_VALUE 0x800000u
/* DEST a: which part of each destination the set is matched against (host, the
 * URL, its scheme, its port), and SGT_DEST_ONLY: every destination's part is known
 * and matches, and there is one at least (without: some destination's does) */
#define SGT_DEST_FIELDS(X) X(HOST, "host") X(URL, "url") X(SCHEME, "scheme") X(PORT, "port")
enum {
#define X(id, word) SGT_DEST_##id,
    SGT_DEST_FIELDS(X)
#undef X
    SGT_NDEST_FIELDS
};
#define SGT_DEST_ONLY 0x100u
/* REDIR_WRITES a: 0, or which write redirections: one resolves outside the roots
 * (or is unknown), or there is one and every one resolves inside them */
#define SGT_WRITES_OUTSIDE 1u
#define SGT_WRITES_INSIDE 2u
/* REDIR_READS a: the segment reads a here-document or here-string (b is SGT_NONE) */
#define SGT_READS_HEREDOC 1u

#define SGT_CMPS(X) X(EQ, "==") X(NE, "!=") X(LT, "<") X(LE, "<=") X(GT, ">") X(GE, ">=")
enum {
#define X(id, text) SGT_CMP_##id,
    SGT_CMPS(X)
#undef X
    SGT_NCMPS
};

#define SGT_RULE_LINE     0x1u            /* only whole-line conditions: run once */
#define SGT_RULE_DYNAMIC  0x2u            /* the condition tests `dynamic` */
#define SGT_RULE_LUA      0x4u            /* the condition calls a hook */

typedef struct sgt_rule {
    uint32_t id;                          /* string: "pack:label" or "file:line" */
    uint32_t pack;                        /* PACKS index */
    uint32_t decision;                    /* sgt_decision */
    uint32_t flags;                       /* SGT_RULE_* */
    uint32_t code_off, code_len;          /* CODE slice, in u32 words (even) */
    uint32_t msg, hint;                   /* strings; hint may be 0 ("") */
    uint32_t line;                        /* source line */
    uint32_t reserved;
} sgt_rule;

typedef struct sgt_bucket {
    uint32_t name;                        /* string ref, SGT_NONE when empty */
    uint32_t list_off, list_len;          /* LISTS slice */
} sgt_bucket;

#define SGT_PROG_WRAPPER      0x01u       /* unwrap an inner command */
#define SGT_PROG_RUNS_NOTHING 0x02u       /* positionals are not a command (sh FILE) */
#define SGT_PROG_ASSIGNMENTS  0x04u       /* skip NAME=value positionals (env) */
#define SGT_PROG_PERMUTE      0x08u       /* options may follow positionals */
#define SGT_PROG_JOIN         0x10u       /* the rest, joined by spaces, is a script */
#define SGT_PROG_MOREARGS     0x20u       /* the inner command gets more args (xargs) */
#define SGT_PROG_TEXT_OPERAND 0x40u       /* the first operand is text, not a file (grep's
                                           * pattern), unless an option of first_* is given */
#define SGT_PROG_STDIN        0x80u       /* it runs the program it reads from stdin when it
                                           * has no operand (or '-'), no script or code
                                           * option, or a stdin option */
#define SGT_PROG_WRITES       0x100u      /* may create or replace each operand (tee) */
#define SGT_PROG_COPIES       0x200u      /* makes its last operand (or, in the directory it
                                           * or an option value names, each other one's
                                           * name) a copy of or a link to the others (cp, ln) */
#define SGT_PROG_RUNS_FILE    0x400u      /* runs its first operand as code (sh FILE) */
#define SGT_PROG_NO_STDIN     0x800u      /* never runs a program it reads from stdin
                                           * (`stdin nothing`: tar, sort, a script option
                                           * and no operand as a command are no shell) */
/* A subcommand's declaration ("git rebase") is named in fewer bytes than this (the
 * runtime builds the name it looks up in a buffer of this size). */
#define SGT_MAX_SUBSPEC_NAME 128
#define SGT_PROG_TREE         0x1000u     /* an operand REV:PATH also names the file PATH
                                           * (git show HEAD:.env; `tree operands`) */
#define SGT_PROG_TEXT_ALL     0x2000u     /* every operand is text: the program opens no
                                           * file its operands name (echo; `text operands`) */
#define SGT_PROG_SCRIPTS      0x4000u     /* its command [ENV:]NAME may be the project's
                                           * script NAME (hatch run; `scripts`) */
#define SGT_PROG_SUBCOMMANDS  0x8000u     /* its first operand names a subcommand (git
                                           * clone; `subcommands`): {command} names both */
#define SGT_PROG_URL_OPS      0x10000u    /* each operand is a URL, or host[:port][/path]
                                           * (curl, wget; `url operands`) */
#define SGT_PROG_REMOTE_OPS   0x20000u    /* an operand that is a URL or [user@]host:path
                                           * names a remote (git, scp, rsync; `remote operands`) */
#define SGT_PROG_HOST_OP      0x40000u    /* its first operand is [user@]host (ssh; `host operand`) */

typedef struct sgt_progspec {
    uint32_t name;                        /* program basename */
    uint32_t flags;                       /* SGT_PROG_* */
    uint32_t skip;                        /* positionals to skip before the command */
    uint32_t value_off, value_len;        /* PROGOPTS: options that take a value */
    uint32_t script_off, script_len;      /* PROGOPTS: options whose value is a script */
    uint32_t exec_off, exec_len;          /* PROGOPTS: words starting an inner command */
    uint32_t end_off, end_len;            /* PROGOPTS: words ending it */
    uint32_t text_off, text_len;          /* PROGOPTS: value options whose value is text
                                           * (a pattern, a number), never a file */
    uint32_t first_off, first_len;        /* PROGOPTS: options that, given, make the first
                                           * operand a file again (grep -e, -f) */
    uint32_t lookup_off, lookup_len;      /* PROGOPTS: value options whose value is where
                                           * the inner program is looked up (env -P) */
    uint32_t argv0_off, argv0_len;        /* PROGOPTS: value options whose value is the
                                           * name the inner program is told (env -a) */
    uint32_t code_off, code_len;          /* PROGOPTS: value options whose value is the
                                           * program, in its own language (python -c) */
    uint32_t stdin_off, stdin_len;        /* PROGOPTS: flags that make the program read its
                                           * program from stdin (sh -s); SGT_PROG_STDIN */
    uint32_t flag_off, flag_len;          /* PROGOPTS: options that take no value (a word
                                           * spelling one is no abbreviation) */
    uint32_t link_off, link_len;          /* PROGOPTS: options that make the sources link
                                           * texts, read from the link's directory (ln -s) */
    uint32_t linkrel_off, linkrel_len;    /* PROGOPTS: options that undo that (ln -r) */
    uint32_t norun_off, norun_len;        /* PROGOPTS: options with which a wrapper runs no
                                           * command (command -v) */
    uint32_t cwd_off, cwd_len;            /* PROGOPTS: value options whose value is the
                                           * directory it works in (env -C, git -C) */
    uint32_t url_off, url_len;            /* PROGOPTS: value options whose value is where it
                                           * connects (curl -x, pip -i) */
    uint32_t urlunk_off, urlunk_len;      /* PROGOPTS: value options whose value names a
                                           * file of places it connects (curl -K, wget -i) */
} sgt_progspec;

#define SGT_MAX_WINDOWS 4
/* the largest count of a window: each store keeps a limit's last max(count) admission
 * times per key (a ring), so a larger count could never be reached (docs/admission.md) */
#define SGT_MAX_LIMIT_COUNT 100000u
typedef struct sgt_limit {
    uint32_t name;
    uint32_t nwindows;
    uint32_t count[SGT_MAX_WINDOWS];
    uint32_t seconds[SGT_MAX_WINDOWS];
    uint32_t code_off, code_len;          /* `when` condition; len 0 = every command */
    uint32_t msg;
    uint32_t key;                         /* whose slots: SGT_LIMIT_PER_* */
} sgt_limit;
#define SGT_LIMIT_PER_AGENT 0u            /* each agent id its own (the default) */
#define SGT_LIMIT_PER_TEAM 1u             /* every agent of a team (--team) together;
                                           * needs SGT_HDR_TEAM_LIMITS */

typedef struct sgt_hook {
    uint32_t name;                        /* function name */
    uint32_t source;                      /* Lua source text */
    uint8_t sha256[32];
} sgt_hook;

typedef struct sgt_test {
    uint32_t decision;
    uint32_t command;
    uint32_t rule;                        /* expected rule id, 0 = any */
    uint32_t cwd;                         /* 0 = caller's */
    uint32_t file;                        /* source file name */
    uint32_t line;
} sgt_test;

/* The source of each glob, regex or text-contains word of a set, in the order the
 * set's DFA was built from (sets ascending): what `dump` shows and a decompiler
 * re-emits.  Matching never reads it. */
#define SGT_PAT_KINDS(X) \
    X(GLOB,      "glob")      \
    X(REGEX,     "regex")     \
    X(SUBSTRING, "substring")

enum {
#define X(id, name) SGT_PAT_##id,
    SGT_PAT_KINDS(X)
#undef X
    SGT_NPATKINDS
};

typedef struct sgt_pattern {
    uint32_t set;                         /* SETS index */
    uint32_t kind;                        /* SGT_PAT_* */
    uint32_t icase;                       /* 0 or 1 */
    uint32_t text;                        /* string: the item as written */
} sgt_pattern;

typedef struct sgt_pack {
    uint32_t name;                        /* string */
    uint32_t version;                     /* a number */
    uint32_t file;                        /* string: file name as loaded */
    uint32_t reserved;
} sgt_pack;

#endif
