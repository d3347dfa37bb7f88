/* eval_int.h - what the files of the evaluator share: the context, the segment
 * features of the rule pre-filter, and the functions one stage's file calls in
 * another's.  Internal: only runtime/eval*.c include it (tests and benchmarks
 * may); the public face of the evaluator is runtime/eval.h.
 *
 * The stages and their files (sgr_eval, eval.c, calls them in this order):
 *   eval.c        the context's lifecycle, the rule pre-filter, what the index
 *                 proves, the walks, cwd and roots, decide_segment, sgr_eval
 *   eval_norm.c   normalisation: argv split into options, values and operands
 *   eval_paths.c  paths: resolved as the kernel walks them, streams, patterns,
 *                 case-folding filesystems, modules, link texts, files made on
 *                 the line
 *   eval_pred.c   the predicates and run(), the interpreter of a rule's bytecode
 *                 (sgr_pred_run), destinations
 *   eval_msg.c    messages: templates parsed once, filled per decision
 *
 * A function one file calls in another carries its file's prefix (sgr_path_ for
 * eval_paths.c, sgr_norm_, sgr_pred_, sgr_msg_); libshellgate.so exports none of them
 * (lib/shellgate.map).  Small helpers called in hot loops are static inline here,
 * so that the split costs no call. */
#ifndef SGR_EVAL_INT_H
#define SGR_EVAL_INT_H

#include "eval.h"
#include "dest.h"
#include "unwrap.h"
#include "state.h"
#include "hook_lua.h"
#include "pathcache.h"
#include "pathgroup.h"
#include "pathpat.h"
#include "shexpand.h"
#include "common/alloc.h"

/* One rule of a walk: the rule, the features it needs (c->need), and where
 * run() starts (see implied_of; WALK_PROVED: the index proves the rule). */
typedef struct sgr_walk {
    uint32_t rule;
    uint16_t need;
    uint16_t from;
} sgr_walk;

#define WALK_PROVED UINT16_MAX

typedef struct sgr_walk_prog {
    uint32_t off, n1;                   /* its walk: walk[off..off + n1 - 1), once
                                         * merged (walk_for); n1 0: not yet */
} sgr_walk_prog;

/* A message template as fill reads it: pieces of literal text and placeholders,
 * each placeholder with its own text for when it has no value to stand for. */
enum {
    PIECE_TEXT,
#define X(id, name) PIECE_##id,
    SGT_PLACEHOLDERS(X)
#undef X
};

typedef struct sgr_piece {
    const char *s;
    uint32_t len;
    uint32_t kind;
} sgr_piece;

typedef struct sgr_tmpl {
    size_t len;                         /* strlen of the template (once parsed) */
    uint32_t off, n;                    /* pieces[off..off + n) */
    int parsed;                         /* 0: not yet; 1: parsed; -1: no room left in
                                         * pieces, the generic fill */
} sgr_tmpl;

struct sgr_ctx {
    const sgr_table *t;
    sg_arena arena;
    sgr_result res;
    sgr_sh_limits lim;
    sgr_trace_fn trace;
    void *trace_ud;
    sgr_platform platform;              /* how program names are read (unwrap.h) */
    /* per-call state */
    const char *line;
    size_t len;
    const sgr_opts *opts;
    const char **roots;                 /* resolved this call */
    uint32_t nroots;
    /* lstat answers, checked against inotify and the mount table once a call
     * (runtime/pathcache.h): the cwd, roots and every path operand are resolved
     * afresh on every call, and cost a system call only when something changed */
    sgr_pcache *pc;                     /* made by the second call (see sgr_eval) */
    int pc_begun;                       /* sgr_pc_begin done for this call */
    uint64_t ncalls;
    const char *rcwd;                   /* the caller's cwd, resolved this call */
    uint64_t cwd_epoch;                 /* resolve_cwd's last answer, valid while the
                                         * path cache's epoch is this (0: none) */
    char cwd_in[256], cwd_out[256];
    uint32_t cwd_outl;
    uint32_t rcwdl;
    /* `path inside` per set outside the path group: its automaton over the resolved
     * cwd most paths start with, run once a call (pm_call[set] == ncalls); each path
     * resumes from the state after it */
    uint64_t *pm_call;
    uint32_t *pm_state;
    uint8_t *pm_hit;
    uint16_t *wmax;                     /* [nsets] longest word + 1, 0: not yet measured */
    uint8_t *tilde;                     /* [nsets] has a word "~" or "~/...": the caller's
                                         * home, for path conditions (tilde_words);
                                         * TILDE_*, worked out on first use */
    const char *rhome;                  /* the caller's home resolved, when rhome_call ==
                                         * ncalls (NULL: none) */
    uint32_t rhomel;
    uint64_t rhome_call;
    uint64_t sets_home_call;            /* == ncalls: sets_home is this line's */
    int sets_home;
    uint64_t loop_call;                 /* == ncalls: loop_ok and loop_hdr are this line's */
    int loop_ok;
    uint32_t nloop_hdr;
    uint32_t loop_hdr[16];              /* its for/select headers (loop_line) */
    /* files made on the line (made_files): each made name resolved, with what a
     * link made there points to; the walk follows them while mk_mode is 1 (the
     * target as a symlink reads it) or 2 (as a copy or hard link: from the cwd),
     * for paths of segments after the one that makes them (mk_seg) */
    struct sgr_mkres *mk;
    uint32_t nmk;
    /* folds(): the last answers, valid while the path cache's epoch is theirs */
    struct { char dir[256]; uint32_t len; uint64_t epoch; int fold; } fold_memo[4];
    uint32_t fold_next;
    int mk_mode, mk_used, mk_glob;
    uint32_t mk_pick, mk_radix;             /* made_link's choice among names made twice */
    int mk_part_ok;                     /* the walk may splice a link to a partly known
                                         * word (add_one_path); elsewhere it is lost */
    uint32_t mk_pflags;                 /* the walk spliced one: its word's flags */
    int mk_depth;                       /* splice_patterns calls under way */
    uint32_t mk_seg;
    int funcdefs;                       /* the line defines a shell function: a program
                                         * name may be one, so nothing is text */
    uint32_t *dmin;                     /* [ndfas] shortest string the automaton accepts
                                         * + 1, DMIN_NEVER: none, 0: not yet measured */
    uint8_t *dlow;                      /* [ndfas] see dfa_low; valid once dmin is */
    uint32_t *bfs_queue;                /* [largest nstates] dfa_min's scratch */
    uint8_t *bfs_seen;
    /* `path inside` over the automata of every set a rule checks paths against, in
     * one run a path (runtime/pathgroup.h); made on first use, NULL: one run a set */
    uint32_t *pg_mask;                  /* [nsets] the group's bits for the set, 0: none */
    uint32_t pg_union;                  /* the bits of every set the group decides alone */
    uint8_t *pg_full;                   /* [nsets] the group decides the set alone: its
                                         * automaton and its exact words are in it */
    const sgr_dfa *pg_dfas[SGR_PG_MAX];
    uint32_t pg_n;
    sgr_pg_trie *pg_tries;              /* [SGR_PG_MAX] automata of sets' exact words */
    uint32_t pg_ntries;
    sgr_pgroup *pg;
    int pg_tried;
    uint64_t pg_call;                   /* == ncalls: pg_cwd_* are for this call */
    uint32_t pg_cwd_st, pg_cwd_hit;     /* the group's state and mask after the cwd */
    int pg_cwd_ok;
    uint64_t *pw_call;                  /* [nsets] the exact words over the cwd, a call */
    uint8_t *pw_hit;
    sgr_sv m_option, m_arg, m_path;    /* what the last predicate matched */
    /* Lua hooks: one sandboxed state per context, made on first use */
    sgr_hooks *hooks;
    int hooks_failed;
    char hooks_err[256];
    int ov_set, herr;                   /* the rule being run: a hook decided / failed */
    uint32_t ov_dec;
    const char *ov_msg;
    const char **seg_msg;               /* per segment: a hook's message for its decider */
    int8_t text_cache[64];              /* TEXT set results for the line: -1 unknown */
    uint16_t *need;                     /* [nrules] segment features each rule needs (F_*),
                                         * NEED_UNKNOWN until first used (need_of) */
    char short_opt[128][3];             /* "-x" for every ASCII x: a cluster's options */
    sgr_strfilt *wf;                    /* [nsets] the set's exact words by length and
                                         * first byte, made on first use (lens 0: not
                                         * yet; a set with words has a length bit) */
    uint8_t *implied;                   /* [nrules] IMPLIED_*, see implied_of */
    uint32_t *nfiled;                   /* [nrules] how many of the index's buckets
                                         * list each rule */
    uint32_t nprogs;                    /* segments of this call that run a program */
    /* decide_segment's walks (see build_walks): per program the index names, its
     * rules merged with the any list, found through a hash of the names */
    sgr_walk *walk;                     /* every walk back to back; walk[0..nany) is
                                         * the any list alone */
    uint32_t nany;
    sgr_walk_prog *wprog;               /* [nbuckets] by the index's bucket of the name */
    uint32_t walk_used;                 /* walk[0..walk_used) holds the walks built */
    int walk_merged;                    /* 0: the walks were too large to keep; each
                                         * is merged into walk_tmp when used */
    sgr_walk *walk_tmp;                 /* [longest list + nany] when !walk_merged */
    size_t walk_budget;                 /* code words rule_needs may still look at
                                         * for walks (walk_merge) */
    /* messages, parsed when first filled (tmpl_for): [nrules] the rules', then
     * the default's and DYN_MSG */
    sgr_tmpl *tmpl;
    sgr_piece *pieces;                  /* [PIECES_MAX] */
    size_t npieces;                     /* in use */
    uint32_t code_set;                  /* the set named code_vars (state.h), SGT_NONE */
};

/* Segment features (the rule pre-filter, eval.c): what a segment has, and what
 * every way to a match of a rule goes through. */
enum {
    F_PROG = 1 << 0,      /* argc > 0 */
    F_ARGS = 1 << 1,      /* argc > 1 (option values are argv words too) */
    F_OPTS = 1 << 2,      /* an option */
    F_SUB = 1 << 3,       /* an operand after the options */
    F_PATHS = 1 << 4,     /* a path candidate: operand, option value, redirection, assignment */
    F_REDIRS = 1 << 5,
    F_ASSIGNS = 1 << 6,
    F_OTHERS = 1 << 7,    /* another segment on the line runs a program */
    F_DYN = 1 << 8,       /* the segment is dynamic */
    F_PGHIT = 1 << 9,     /* a path is in some set the path group decides alone; known
                           * only once the paths are resolved (decide_segment) */
    F_ARGV0 = 1 << 10,    /* argv[0] is not the program's name (a path: /bin/rm) */
    F_ALL = (1 << 11) - 1
};

/* ---- eval.c ---- */

/* Is the program's name argv[0] as written (not a path, nor folded: unwrap.h)? */
static inline int prog_is_argv0(const sgr_segment *s, const sgr_norm *nm)
{
    return nm->prog.len == s->argv[0].len && memcmp(nm->prog.s, s->argv[0].text, nm->prog.len) == 0;
}

enum { TILDE_UNKNOWN, TILDE_NONE, TILDE_SOME };

/* Has set a word "~" or "~/..." (the caller's home)?  Looked for the first time a
 * set is asked about. */
static inline int tilde_of(sgr_ctx *c, uint32_t set)
{
    if (c->tilde[set] == TILDE_UNKNOWN) {
        const sgr_table *t = c->t;
        int some = 0;
        for (uint32_t k = 0; k < t->sets[set].nwords && !some; k++) {
            const char *w = sgr_str(t, t->words[t->sets[set].words_off + k]);
            some = w[0] == '~' && (w[1] == '\0' || w[1] == '/');
        }
        c->tilde[set] = some ? TILDE_SOME : TILDE_NONE;
    }
    return c->tilde[set] == TILDE_SOME;
}

/* ---- eval_paths.c ---- */

/* In sgr_norm.pin: the path group's mask is in the low 32 bits (path_mask ran);
 * the path is the resolved cwd (not "/"), a '/' and more (set by add_one_path,
 * which knows it without a comparison for most paths: path_mask resumes after
 * the cwd). */
#define PIN_RUN ((uint64_t)1 << 32)
#define PIN_CWD ((uint64_t)1 << 33)

/* Bounds that keep loop_words' lookups a constant cost each, so a line of many
 * "$f" operands stays linear; a line past them reads no loop variable (its "$f"
 * stays unknown).  The reference oracle (fuzz/refeval.c) holds the same ones. */
#define LOOP_MAX_VARS    96
#define LOOP_MAX_HEADERS 16
#define LOOP_MAX_WORDS   64

/* resolve_path's short way for the commonest operands, plain names relative to
 * the caller's cwd ("src", "*.c", "docs/language.md", "runtime/"): the lookups
 * the walk would make, one per component up to the first missing one, and its
 * result.  0: not such an operand (an absolute path, ~, a "." or ".." or empty
 * component) or a component is a symlink (the walk follows it); 1: *out is the
 * result (NULL: out of memory). */
int sgr_path_resolve_plain(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde, char **out,
                           uint32_t *outlen);
/* resolve_path's long way: the walk itself, for every operand resolve_plain
 * does not take.  The caller has called lookups_begin.  Names whose meaning
 * depends on the process that opens them are resolved by that meaning: /dev/fd,
 * /dev/stdin, /dev/stdout and /dev/stderr are the agent's /proc/self/fd entries;
 * /proc/PID/root is "/", /proc/self/cwd the directory the segment runs in (cwd);
 * under /proc/PID nothing is looked up.  What only the running process knows
 * (/proc/self/fd/N/.., the cwd of another process) makes the rest of the path
 * relative to an unknown directory: then *unk (when not NULL) is 1 and the result
 * is what follows the last unknown point ("/etc/shadow" for
 * /dev/fd/3/../etc/shadow); without unk such a path resolves to
 * "/(unknown)", which no root contains. */
char *sgr_path_resolve_walk(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde, uint32_t *outlen,
                            int *unk);
/* Is resolved path p[0..pl) a root or below one? */
int sgr_path_inside_roots(const sgr_ctx *c, const char *p, uint32_t pl);
/* Does redirection r of segment s write a file (stream_write for stream names)? */
int sgr_path_is_write(const sgr_segment *s, const sgr_redir *r);
/* Does redirection r read a file (not a stream)? */
int sgr_path_is_read(const sgr_redir *r);
/* The caller's home, resolved once a call (NULL: none known). */
const char *sgr_path_home_of(sgr_ctx *c, uint32_t *len);
/* 1 when argv[a] of segment si is a module of the workspace (above), 0 when not,
 * -1 out of memory. */
int sgr_path_module_inside(sgr_ctx *c, uint32_t si, uint32_t a);
/* The words a loop variable takes, for a word of segment si that is only its
 * expansion: "$f", "${f}", or $f unquoted when each word is a plain name bash
 * neither splits nor globs.  Sound only inside the body of a loop that sets it
 * (there it holds one of the words of the loops that set it), and only where
 * nothing else can have: every assignment of NAME on the line is a for/select
 * header's word, each known or a glob (a file name the loop walks), no function
 * (whose body runs where it is called) and no shopt of nullglob/failglob.
 * A script in the body (a single-quoted sh -c '...' is parsed in place, so its
 * words lie there too) runs in a shell of its own, which has the variable only
 * when the loop's shell exports it, and then with the loop's value: still one of
 * the words, or nothing.
 * Returns the number of words stored in *out (at most max), 0 when the word is
 * not such a use. */
uint32_t sgr_path_loop_words(sgr_ctx *c, uint32_t si, const sgr_word *w,
                             const sgr_word **out, uint32_t max);
/* A path candidate of segment si whose brace expansion would make more than
 * SGR_BRACE_MAX words makes the segment dynamic: those words cannot all be
 * checked.  -1: out of memory. */
int sgr_path_brace_check(sgr_ctx *c, uint32_t si);
/* Is segment s a link maker whose sources are link texts (see above)?  Not
 * when what it makes depends on words the line does not show: more arguments
 * (xargs ln -s SRC DEST: DEST is not the last), or find -exec's {} (find . is
 * one of the names {} stands for). */
int sgr_path_link_texts(const sgr_ctx *c, const sgr_segment *s, const sgr_norm *nm);
/* Resolve the path candidates of segment si (operands, option values,
 * redirections, assignments) into c->res.norm[si], once: run() asks on first
 * need.  -1: out of memory. */
int sgr_path_resolve_paths(sgr_ctx *c, uint32_t si);
/* The names each segment may make (into c->res.made), from its redirections and
 * its program's declaration.  -1: out of memory. */
int sgr_path_made_words(sgr_ctx *c);
/* Resolve every made name (c->res.made) into c->mk.  -1: out of memory. */
int sgr_path_made_resolve(sgr_ctx *c);
/* A segment that runs a file an earlier segment of the line makes is dynamic:
 * what it runs is known only when it runs.  -1: out of memory. */
int sgr_path_runs_made(sgr_ctx *c);

/* sgr_pc_begin once a call, before its first lookup (pathcache.h). */
static inline void lookups_begin(sgr_ctx *c)
{
    if (!c->pc_begun) {
        sgr_pc_begin(c->pc);
        c->pc_begun = 1;
    }
}

/* w resolved against cwd: resolve_plain's short way when it takes w (then *plain,
 * when not NULL, is 1: the result is the resolved cwd, a '/' and more), else the
 * walk (unk: see there).  NULL: out of memory. */
static inline char *resolve_path(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde,
                                 uint32_t *outlen, int *plain, int *unk)
{
    lookups_begin(c);
    char *named;
    int short_way = sgr_path_resolve_plain(c, cwd, w, wl, tilde, &named, outlen);
    if (plain)
        *plain = short_way;
    if (short_way && unk)
        *unk = 0;
    return short_way ? named : sgr_path_resolve_walk(c, cwd, w, wl, tilde, outlen, unk);
}

/* ---- eval_norm.c ---- */

/* What option o (n bytes) is to program spec ps: SGR_OPT_* (0 without a spec). */
uint32_t sgr_norm_opt_bits(const sgr_ctx *c, const sgt_progspec *ps, const char *o, size_t n);
/* Split argv into options, option values and operands (see sgr_norm), into
 * c->res.norm[si], which the caller has zeroed.  The segment's program spec and
 * basename are the ones sgr_unwrap found (segment spec and base). */
int sgr_norm_segment(sgr_ctx *c, uint32_t si, const char *cwd);

/* ---- eval_pred.c ---- */

/* words_may_have's first use of set: its filter. */
void sgr_pred_words_filter(sgr_ctx *c, uint32_t set);
/* dfa_min's first use of automaton d: its shortest accepted string, measured. */
uint32_t sgr_pred_dfa_measure(sgr_ctx *c, uint32_t d);
/* set_has's automaton run, out of line: most tests end before it. */
int sgr_pred_dfa_has(const sgr_ctx *c, uint32_t d, const char *s, uint32_t n);
/* Run a rule's code on segment si from op `from` (after a test the index proved,
 * see implied_of): 1 match, 0 none, -1 out of memory. */
int sgr_pred_run(sgr_ctx *c, uint32_t si, uint32_t off, uint32_t len, uint32_t from);
/* Run a whole-line rule's code: text, logic and jumps; a segment predicate is
 * false. */
int sgr_pred_run_line(sgr_ctx *c, uint32_t off, uint32_t len);
/* The or of every path's group mask (path_mask) for segment nm, run once; -1
 * when the group cannot run one of them. */
int64_t sgr_pred_paths_mask(sgr_ctx *c, sgr_norm *nm);

/* May s[0..n) be one of set's exact words?  0: certainly not. */
static inline int words_may_have(sgr_ctx *c, uint32_t set, const char *s, uint32_t n)
{
    if (!c->wf[set].lens)
        sgr_pred_words_filter(c, set);
    return sgr_strfilt_may(&c->wf[set], s, n, 0);
}

/* 1 + the length of the shortest string automaton d accepts, or DMIN_NEVER when it
 * accepts none (measured on first use). */
static inline uint32_t dfa_min(sgr_ctx *c, uint32_t d)
{
    uint32_t m = c->dmin[d];
    return m ? m : sgr_pred_dfa_measure(c, d);
}

/* Is s[0..n) in set: one of its exact words, or matched by its automaton?  Most
 * tests fail on the words' length and first byte, or on a length shorter than
 * anything the automaton accepts (`arg matches /drop\s+table/` over every
 * argument), so that much is inline in every caller. */
static inline int set_has(sgr_ctx *c, uint32_t set, const char *s, uint32_t n)
{
    const sgt_set *st = &c->t->sets[set];
    if (st->nwords && words_may_have(c, set, s, n) && sgr_set_words_has(c->t, set, s, n))
        return 1;
    return st->dfa != SGT_NONE && n >= dfa_min(c, st->dfa) - 1 && sgr_pred_dfa_has(c, st->dfa, s, n);
}

/* ---- eval_msg.c ---- */

/* Make the context's template pool (sgr_ctx_new).  -1: out of memory. */
int sgr_msg_build_tmpls(sgr_ctx *c);
/* Template i (a rule's message, then the default's and DYN_MSG) parsed into the
 * pool the first time it is filled: a context that decides once parses one. */
const sgr_tmpl *sgr_msg_tmpl_for(sgr_ctx *c, uint32_t i, const char *text);
/* Fill the placeholders of tmpl for segment si (-1: none); tp: tmpl parsed
 * (sgr_msg_tmpl_for), NULL or unparsed: read piece by piece.  Out of memory: tmpl
 * as it is. */
const char *sgr_msg_fill(sgr_ctx *c, const char *tmpl, const sgr_tmpl *tp, int32_t si, const char *rule_id,
                         const char *reason);

#endif
