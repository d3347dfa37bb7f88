/* eval.h - evaluating a command line against a loaded table.
 *
 * One sgr_ctx per thread over one shared read-only table (the table is never
 * written after load, so any number of contexts may evaluate at once).  Every
 * pointer in an sgr_result lives in the context's scratch arena and stays valid
 * until the next sgr_eval on the same context; after warm-up an evaluation makes
 * no heap allocation.  From its second call on, a context keeps lstat answers in
 * a path cache that inotify keeps honest (runtime/pathcache.h): it owns three file
 * descriptors, must not be used across fork(), and is dropped by sgr_ctx_free. */
#ifndef SGR_EVAL_H
#define SGR_EVAL_H
#include <stddef.h>
#include <stdint.h>
#include "table.h"
#include "shparse.h"
#include "unwrap.h"

typedef struct sgr_opts {
    const char *cwd;                  /* absolute working directory (required) */
    const char *const *roots;         /* workspace roots; none: the cwd (a relative
                                       * root is taken from the cwd) */
    size_t nroots;
    const char *home;                 /* for ~ ; NULL: $HOME of this process */
} sgr_opts;

typedef struct sgr_sv {
    const char *s;
    uint32_t len;
} sgr_sv;

/* A segment as the rules see it. */
typedef struct sgr_norm {
    sgr_sv prog;                     /* basename of argv[0] ("" when argc == 0) */
    sgr_sv subcmd;                   /* first operand, after options (s NULL: none) */
    sgr_sv subcmd_alt;               /* with has_alt: the subcommand when the first
                                      * operand is the value of an abbreviated value
                                      * option before it (hostnamectl --js pretty
                                      * set-hostname: set-hostname); s NULL: none */
    int has_alt;                      /* the segment is decided with both (eval.c) */
    sgr_sv *opts;    uint32_t nopts; /* -r, -f (from -rf), -rf, --force, --out (from --out=x) */
    sgr_sv *vals;    uint32_t nvals; /* option values: x (from --out=x or -o x) */
    uint32_t *optw, *valw;            /* the argv index of the word each option came
                                       * from, and of the option word that gave each
                                       * value (UINT32_MAX: none; `option M value M`) */
    uint32_t curw;                    /* normalise_segment's word, for those */
    uint32_t *vflags;                 /* SGR_W_* of the word each value came from, and
                                       * SGR_V_TEXT, SGR_V_WORD */
    uint32_t *pos;    uint32_t npos;  /* argv indices of operands */
    uint32_t text_ops;                /* operands pos[0 .. text_ops) are text, not files
                                       * (a program's `text operand`: grep's pattern,
                                       * git's command; `text operands`: echo's words) */
    int code_body;                    /* the program has `code` options (an interpreter):
                                       * a here-document or here-string it is given is
                                       * code too, whose literals are path candidates */
    int links;                        /* the operands are the texts of symbolic links
                                       * (a `links` declaration: ln -s), read from the
                                       * directory each link is in (eval.c "link texts") */
    const char *cwd;                  /* cwd this segment runs in if every `cd` before it
                                       * on the line succeeded (for messages and hooks) */
    const char *const *cwds;          /* every cwd it may run in: the caller's and each
                                       * earlier cd/pushd target (a cd can fail, and a
                                       * subshell's cd does not outlive it) */
    uint32_t ncwds;
    int cwd_unknown;                  /* a cd went somewhere only known at run time;
                                       * bit 2: to a directory the shell had before the
                                       * line (cd -, popd); bit 4: an option names
                                       * directories by a glob (env -C /et[c]) */
    int paths_state;                  /* 0 not resolved, 1 resolved */
    sgr_sv *paths;   uint32_t npaths;/* resolved absolute paths of path operands */
    uint64_t *pin;                    /* the evaluator's memo, per path: the path
                                       * group's `path inside` mask and flags (PIN_*
                                       * in eval.c) */
    uint64_t pin_all;                 /* 1 << 32 | the or of them all, 0 not run */
    uint32_t unknown_paths;           /* operands whose value is only known at run time */
    int outside;                      /* a path leaves every root (or is unknown) */
    sgr_sv outside_path;             /* the first one that does */
    uint32_t *rpath;                  /* [2 * nredirs]: the paths redirection i resolved
                                       * to, paths[rpath[2i] .. + rpath[2i + 1]) */
    uint8_t *routside;                /* [nredirs]: one of those is outside the roots */
    const struct sgr_ppat **ppat;     /* [npaths]: the pattern path i stands for (a glob,
                                       * a brace alternative, a partly known word;
                                       * runtime/pathpat.h), NULL: paths[i] itself */
    uint32_t npats;                   /* how many are patterns */
    uint32_t rel_unknown;             /* relative paths under a cwd only known at run
                                       * time (the segment is then dynamic) */
    int dests_state;                  /* 0 not read, 1 read: */
    struct sgr_dest *dests; uint32_t ndests; /* where it connects (dest.h; eval.c
                                       * "destinations") */
} sgr_norm;

/* In vflags: the value of a program's `text` option (a pattern, a number), which
 * the program never opens: not a path candidate. */
#define SGR_V_TEXT 0x80000000u
/* In vflags: the value is a whole argv word (-o FILE), which `arg` has already
 * tested as one. */
#define SGR_V_WORD 0x40000000u
/* In vflags: the value of a program's `code` option (python3 -c CODE): the
 * program's own code, whose string literals are path candidates too. */
#define SGR_V_CODE 0x20000000u
/* In vflags: the value of a program's `cwd` option (env -C DIR, git -C DIR): the
 * directory it works in, and runs its command in (a path candidate too). */
#define SGR_V_CWD 0x10000000u
/* In vflags: the value of a program's `url` option (curl -x URL): a place it
 * connects to, read as a URL or [user@]host[:port][/path]. */
#define SGR_V_URL 0x08000000u
/* In vflags: the value of a `url unknown` option (curl -K FILE): it names a file
 * of places the program connects to, known only at run time. */
#define SGR_V_URLUNK 0x04000000u

/* A name an earlier segment of the line may make (docs/language.md "Files made on
 * the line"): what segment seg writes (a redirection, `tee FILE`: src.s NULL) or
 * makes a copy of or a link to src (`cp SRC NAME`, `ln -s SRC NAME`).  With
 * under, name is a directory and what is made is name/basename(src).  Words as
 * the normaliser has them; each evaluator resolves them itself. */
typedef struct sgr_made {
    uint32_t seg;
    sgr_sv name, src;
    uint32_t name_flags, src_flags;   /* SGR_W_* of the words */
    int under;
} sgr_made;

#define SGR_RULE_DEFAULT  (-1)        /* the pack's default decided */
#define SGR_RULE_DYNAMIC  (-2)        /* the built-in dynamic deny decided */
#define SGR_RULE_NOTHING  (-3)        /* only assignments/redirections, no rule objected */

typedef struct sgr_result {
    uint32_t decision;                /* sgt_decision */
    int32_t rule;                     /* rule index, or SGR_RULE_* */
    int32_t seg;                      /* deciding segment, -1 for a whole-line rule */
    const char *rule_id;              /* "pack:label", "default", "dynamic" */
    const char *message;              /* placeholders filled */
    const char *hint;                 /* "" when none */
    sgr_cmdline cl;                   /* segments, including unwrapped ones */
    sgr_norm *norm;                   /* [cl.nseg] */
    uint8_t *seg_decision;            /* [cl.nseg] */
    int32_t *seg_rule;                /* [cl.nseg] */
    int oom;                          /* evaluation ran out of memory: deny */
    const sgr_made *made;             /* [nmade] names made on the line, in segment order */
    uint32_t nmade;
    /* The table's limits that apply to this command (indices into LIMITS, in
     * order): every limit without `when`, and each whose condition holds for a
     * segment.  Matched by sgr_eval, so admission reads them here.  limits_error:
     * a condition could not be evaluated, or the evaluation ran out of memory. */
    const uint32_t *limits;
    uint32_t nlimits;
    int limits_error;
} sgr_result;

/* Called for every rule tried on a segment (seg = -1: whole-line rules). */
typedef void (*sgr_trace_fn)(void *ud, int32_t seg, uint32_t rule, int matched);

typedef struct sgr_ctx sgr_ctx;

sgr_ctx *sgr_ctx_new(const sgr_table *t);
void sgr_ctx_free(sgr_ctx *c);
void sgr_ctx_set_trace(sgr_ctx *c, sgr_trace_fn fn, void *ud);
void sgr_ctx_set_limits(sgr_ctx *c, const sgr_sh_limits *lim);
/* The platform whose filesystems find the programs the lines run (unwrap.h): on
 * macOS and Windows a program's name folds case (`RM` runs rm).  Until set, and
 * for SGR_PLATFORM_HOST: the platform shellgate was built for. */
void sgr_ctx_set_platform(sgr_ctx *c, sgr_platform p);

/* Decide line[0..len).  Never fails: bad input, limits and out-of-memory all
 * yield a deny whose message says why. */
const sgr_result *sgr_eval(sgr_ctx *c, const char *line, size_t len, const sgr_opts *o);

const char *sgr_decision_name(uint32_t d);
/* A context keeps each program's rules merged with the rules of no program while
 * they take at most this many entries in all (else it merges them per segment);
 * tests lower it to compare the two ways.  Read by sgr_ctx_new. */
extern size_t sgr_walk_max;
/* Tests only (NULL otherwise): a directory below which every directory is taken
 * for a case-folding one, as a FAT or casefold directory is (there is no such
 * filesystem to mount in a test).  Read by every evaluation. */
extern const char *sgr_fold_force;
/* The id of rule r as results and logs print it: "pack:label", or "default",
 * "dynamic", "no-command" for the SGR_RULE_* values ("unknown" out of range). */
const char *sgr_rule_name(const sgr_table *t, int32_t r);

#endif
