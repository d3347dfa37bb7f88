/* eval.c - the decision: parse, unwrap, normalise each segment, run the candidate
 * rules' bytecode, combine deny > ask > allow over rules and segments. */
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval_int.h"

static const char DYN_MSG[] = "'{program}' cannot be checked before it runs: {reason}";

/* ---- rule pre-filter ----------------------------------------------------------
 * Most rules can only match a segment that has something: an option, an operand,
 * a redirection, an assignment.  For every rule, sgr_ctx_new works out from its
 * bytecode which such features every way to a match goes through; decide_segment
 * then skips, without running it, a rule needing a feature the segment lacks.
 * The skip is exact, never a guess: a predicate needing an absent feature is false
 * in run() (ORDER OP: op_needs and run() must agree). */

static inline int set_has(sgr_ctx *c, uint32_t set, const char *s, uint32_t n);
static int seg_expands(sgr_ctx *c, const sgr_segment *s, uint32_t b);

/* The features without which predicate op (operands a, b) is false; pg_full:
 * the sets the context's path group decides alone; prog: the program name of
 * the walk the rule is in, NULL: any program.  `program S` tests the name, then
 * argv[0] only when it is not the name: in a program's walk a set without the
 * name needs F_ARGV0, so `program in {mkfs...}` is skipped for git. */
static uint32_t op_needs(sgr_ctx *c, uint32_t op, uint32_t a, uint32_t b, const char *prog, uint32_t plen)
{
    switch (op) {
    case SGT_OP_PATH_INSIDE: return F_PATHS | (c->pg_full[b] ? F_PGHIT : 0);
    case SGT_OP_PROGRAM: return F_PROG | (prog && !set_has(c, b, prog, plen) ? F_ARGV0 : 0);
    case SGT_OP_SUBCOMMAND: return F_SUB;
    case SGT_OP_OPTION_ANY: case SGT_OP_OPTION_ALL: case SGT_OP_OPTION_VAL: return F_OPTS;
    case SGT_OP_ARG_ANY: return F_ARGS;
    case SGT_OP_ARG_AT: return a >= 1 ? F_ARGS : F_PROG;
    case SGT_OP_MODULE_AT: return F_ARGS;
    case SGT_OP_PATH_OUTSIDE: case SGT_OP_PATH_IS: return F_PATHS;
    case SGT_OP_REDIR_WRITES: case SGT_OP_REDIR_READS: return F_REDIRS;
    case SGT_OP_ASSIGNS: case SGT_OP_ASSIGNS_VAL: return F_ASSIGNS;
    case SGT_OP_PIPED_FROM: case SGT_OP_PIPED_TO: return F_OTHERS;
    case SGT_OP_DYNAMIC: return F_DYN;
    default: return 0;
    }
}

enum { NEED_UNKNOWN = UINT16_MAX };     /* no F_* set is this */
_Static_assert((unsigned)F_ALL < (unsigned)NEED_UNKNOWN, "need holds every F_* set");

/* The features a condition needs: forward dataflow over its instructions, for all
 * "feature f is absent" scenarios at once (bit f of m0[pc]/m1[pc]: in that scenario
 * the accumulator may be 0/1 when pc is reached).  A rule needs f when no path ends
 * with the accumulator 1 in scenario f.  Conditions calling a Lua hook need
 * nothing: a hook's failure denies even when the rest of the rule cannot match. */
static uint32_t rule_needs(sgr_ctx *c, const uint32_t *code, uint32_t len, const char *prog, uint32_t plen)
{
    enum { maxn = 128 };
    uint32_t n = len / 2;
    if (n > maxn)
        return 0;                         /* long conditions are simply always run */
    uint16_t m0[maxn + 1], m1[maxn + 1];
    memset(m0, 0, sizeof(uint16_t) * (n + 1));
    memset(m1, 0, sizeof(uint16_t) * (n + 1));
    m0[0] = F_ALL;                        /* acc starts 0 */
    for (uint32_t pc = 0; pc < n; pc++) {
        uint32_t op = code[2 * pc] & 0xff, a = code[2 * pc] >> 8, b = code[2 * pc + 1];
        uint32_t z = m0[pc], o = m1[pc], r = z | o, nz, no;
        switch (op) {
        case SGT_OP_LUA: return 0;
        case SGT_OP_TRUE: nz = 0; no = r; break;
        case SGT_OP_NOT: nz = o; no = z; break;
        /* the loader guarantees pc + 1 + b <= n */
        case SGT_OP_JUMP_FALSE: m0[pc + 1 + b] |= (uint16_t)z; m1[pc + 1] |= (uint16_t)o; continue;
        case SGT_OP_JUMP_TRUE: m1[pc + 1 + b] |= (uint16_t)o; m0[pc + 1] |= (uint16_t)z; continue;
        default: nz = r; no = r & ~op_needs(c, op, a, b, prog, plen); break;
        }
        m0[pc + 1] |= (uint16_t)nz;
        m1[pc + 1] |= (uint16_t)no;
    }
    return F_ALL & ~(uint32_t)m1[n];
}

/* The features rule r needs, in any program's walk (worked out on first use:
 * a decision meets few of a pack's rules outside the walks it builds). */
static uint32_t need_of(sgr_ctx *c, uint32_t r)
{
    if (c->need[r] == NEED_UNKNOWN)
        c->need[r] = (uint16_t)rule_needs(c, c->t->code + c->t->rules[r].code_off, c->t->rules[r].code_len, NULL, 0);
    return c->need[r];
}

/* Is the program's name argv[0] as written (not a path, nor folded: unwrap.h)? */
static int prog_is_argv0(const sgr_segment *s, const sgr_norm *nm)
{
    return nm->prog.len == s->argv[0].len && memcmp(nm->prog.s, s->argv[0].text, nm->prog.len) == 0;
}

/* The features segment si has (F_*). */
static uint32_t seg_features(const sgr_ctx *c, uint32_t si)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    uint32_t f = 0;
    if (s->argc > 0)
        f |= F_PROG;
    if (s->argc > 1)
        f |= F_ARGS;
    if (nm->nopts)
        f |= F_OPTS;
    if (nm->subcmd.s)
        f |= F_SUB;
    if (nm->npos || nm->nvals || s->nredirs || s->nassigns || s->nvalues)
        f |= F_PATHS;
    if (s->nredirs)
        f |= F_REDIRS;
    if (s->nassigns)
        f |= F_ASSIGNS;
    if (s->flags & SGR_SEG_DYNAMIC)
        f |= F_DYN;
    if (c->nprogs > (s->argc > 0))
        f |= F_OTHERS;
    if (s->argc > 0 && !prog_is_argv0(s, nm))
        f |= F_ARGV0;
    return f;
}

/* ---- what the index proves ------------------------------------------------------
 * A rule the index files under program names usually starts with the test that
 * put it there: `program S and ...` is `0: program S; 1: jump-false ...; ...`,
 * and `program in S` is that one op.  When every name the index files the rule
 * under is a word of S, reaching the rule through the index means the test holds
 * (the basename is in S), so run() may start after it: implied_of marks such
 * rules IMPLIED_AND (start at op 2, acc 1: a jump-false after a test that holds is
 * not taken, wherever it leads) or IMPLIED_ALL (the rule matches).  Checked once
 * per context and rule, the first time a walk takes the rule, against the index
 * itself, so it holds for any table. */
enum { IMPLIED_UNKNOWN, IMPLIED_NO, IMPLIED_AND, IMPLIED_ALL };

/* How many of the index's buckets list each rule (nfiled): one pass over the
 * index, so implied_of need not look for the buckets themselves. */
static int index_filed(sgr_ctx *c)
{
    const sgr_table *t = c->t;
    uint32_t *nf = c->nfiled = sg_calloc(t->nrules ? t->nrules : 1, sizeof *c->nfiled);
    if (!nf)
        return -1;
    for (uint32_t b = 0; b < t->nbuckets; b++)
        if (t->index[b].name != SGT_NONE)
            for (uint32_t k = 0; k < t->index[b].list_len; k++)
                nf[t->lists[t->index[b].list_off + k]]++;
    return 0;
}

/* The index's bucket named name[0..n), found as sgr_table_lookup finds it, or
 * SGT_NONE. */
static inline uint32_t index_bucket(const sgr_table *t, const char *name, uint32_t n)
{
    uint32_t mask = t->nbuckets - 1;
    /* terminates: the loader proved at least one bucket is empty */
    for (uint32_t p = sgr_fnv1a(name, n) & mask; t->nbuckets && t->index[p].name != SGT_NONE; p = (p + 1) & mask)
        if (sgr_str_eq(sgr_str(t, t->index[p].name), name, n))
            return p;
    return SGT_NONE;
}

/* Does the index list lists[off..off + n) (ascending) hold rule r? */
static int list_has(const sgr_table *t, uint32_t off, uint32_t n, uint32_t r)
{
    const uint32_t *l = t->lists + off;
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (l[mid] == r)
            return 1;
        if (l[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* What the index proves of rule r (IMPLIED_*), worked out the first time a walk
 * takes it: the rule's form, then whether every bucket that lists it is named
 * by a word of its set S.  The buckets named by S's words that list r are some
 * of the nfiled[r] that do (names are distinct in the index, and words in a
 * set), so every one is when they are as many. */
static uint32_t implied_of(sgr_ctx *c, uint32_t r)
{
    if (c->implied[r] != IMPLIED_UNKNOWN)
        return c->implied[r];
    const sgr_table *t = c->t;
    const uint32_t *code = t->code + t->rules[r].code_off;
    uint32_t n = t->rules[r].code_len / 2, v = IMPLIED_NO;
    if (n > 0 && (code[0] & 0xff) == SGT_OP_PROGRAM && t->sets[code[1]].nwords != 0) {
        if (n == 1)
            v = IMPLIED_ALL;
        else if ((code[2] & 0xff) == SGT_OP_JUMP_FALSE)
            v = IMPLIED_AND;
    }
    if (v != IMPLIED_NO) {
        const sgt_set *st = &t->sets[code[1]];
        uint32_t named = 0;
        for (uint32_t k = 0; k < st->nwords && named < c->nfiled[r]; k++) {
            const char *w = sgr_str(t, t->words[st->words_off + k]);
            uint32_t b = index_bucket(t, w, (uint32_t)strlen(w));
            named += b != SGT_NONE && list_has(t, t->index[b].list_off, t->index[b].list_len, r);
        }
        if (named != c->nfiled[r])
            v = IMPLIED_NO;
    }
    c->implied[r] = (uint8_t)v;
    return v;
}

const char *sgr_decision_name(uint32_t d)
{
    static const char *const names[] = {
#define X(id, name) name,
        SGT_DECISIONS(X)
#undef X
    };
    return d < SGT_NDECISIONS ? names[d] : "deny";
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

/* The sets `path inside` tests, in the order rules name them, join the context's
 * path group (runtime/pathgroup.h) while it has bits left: a set's automaton, and
 * its exact words as a trie (unless they would make a large one). */
static int group_words(sgr_ctx *c, uint32_t set)
{
    const sgr_table *t = c->t;
    const sgt_set *st = &t->sets[set];
    if (tilde_of(c, set))
        return 0;                          /* "~" words name the caller's home: tested apart */
    const char **w = sg_malloc(sizeof *w * st->nwords);
    uint32_t *l = sg_malloc(sizeof *l * st->nwords);
    int r = -1;
    if (w && l) {
        for (uint32_t k = 0; k < st->nwords; k++) {
            w[k] = sgr_str(t, t->words[st->words_off + k]);
            l[k] = (uint32_t)strlen(w[k]);
        }
        r = sgr_pg_trie_build(&c->pg_tries[c->pg_ntries], w, l, st->nwords, 4096);
    }
    sg_free(w);
    sg_free(l);
    if (r < 0)
        return 0;                          /* too large, or no memory: words tested apart */
    c->pg_full[set] = 1;
    c->pg_mask[set] |= 1u << c->pg_n;
    c->pg_dfas[c->pg_n++] = &c->pg_tries[c->pg_ntries++].d;
    return 0;
}

static int group_sets(sgr_ctx *c)
{
    const sgr_table *t = c->t;
    for (uint32_t r = 0; r < t->nrules; r++) {
        const uint32_t *code = t->code + t->rules[r].code_off;
        for (uint32_t pc = 0; pc + 1 < t->rules[r].code_len; pc += 2) {
            uint32_t set = code[pc + 1];
            const sgt_set *st = &t->sets[set];
            if ((code[pc] & 0xff) != SGT_OP_PATH_INSIDE || c->pg_mask[set]
                || c->pg_n + (st->dfa != SGT_NONE) + (st->nwords > 0) > SGR_PG_MAX)
                continue;
            if (st->dfa != SGT_NONE) {
                c->pg_mask[set] |= 1u << c->pg_n;
                c->pg_dfas[c->pg_n++] = &t->dfas[st->dfa];
                c->pg_full[set] = st->nwords == 0;
            }
            if (st->nwords) {
                if (!c->pg_tries && !(c->pg_tries = sg_calloc(SGR_PG_MAX, sizeof *c->pg_tries)))
                    return -1;
                if (group_words(c, set) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* ---- the walk ---------------------------------------------------------------
 * decide_segment tries a segment's rules in the order of the index's list for its
 * program merged with the any list (by rule id; at a tie the any list first).
 * That merge, the lookups of c->need and c->implied and the index's own lookup
 * were most of its cost; they depend on the table only, so a context does them
 * once per program, the first time a segment runs it (walk_for), into room made
 * by sgr_ctx_new, and finds a program's walk by its bucket in the index.  A
 * table whose walks would take more than sgr_walk_max entries (many names, a
 * long any list) keeps none, and a walk is merged into walk_tmp each time it is
 * used. */
size_t sgr_walk_max = (size_t)1 << 18;

/* Merge idx[0..nidx) (an index list) with the any list into w; returns the
 * length.  prog (NULL: none): the name of the program the walk is for, whose
 * rules' needs are worked out again knowing it (op_needs) while *budget (code
 * words looked at) lasts. */
static uint32_t walk_merge(sgr_ctx *c, sgr_walk *w, const uint32_t *idx, uint32_t nidx, const char *prog,
                           uint32_t plen, size_t *budget)
{
    const uint32_t *any = c->t->lists + c->t->meta->any_off;
    uint32_t nany = c->nany, i = 0, j = 0, k = 0;
    while (i < nidx || j < nany) {
        uint32_t r, from = 0;
        if (j >= nany || (i < nidx && idx[i] < any[j])) {
            r = idx[i++];
            uint32_t im = implied_of(c, r);
            from = im == IMPLIED_ALL ? WALK_PROVED : im == IMPLIED_AND ? 2 : 0;
        } else {
            r = any[j++];
        }
        const sgt_rule *ru = &c->t->rules[r];
        w[k].rule = r;
        if (prog && *budget >= ru->code_len) {
            *budget -= ru->code_len;
            w[k].need = (uint16_t)rule_needs(c, c->t->code + ru->code_off, ru->code_len, prog, plen);
        } else {
            w[k].need = (uint16_t)need_of(c, r);
        }
        w[k].from = (uint16_t)from;
        k++;
    }
    return k;
}

/* Room for every walk, and a record of each per bucket of the index.  A
 * program's walk is merged the first time a segment runs it (walk_for), into
 * room made here: a context that decides once (the CLI's check) pays for the
 * walks of the programs it meets, not for every program of a large pack. */
static int build_walks(sgr_ctx *c)
{
    const sgr_table *t = c->t;
    size_t total = c->nany = t->meta->any_len, longest = 0;
    for (uint32_t b = 0; b < t->nbuckets; b++)
        if (t->index[b].name != SGT_NONE) {
            total += (size_t)t->index[b].list_len + c->nany;
            longest = t->index[b].list_len > longest ? t->index[b].list_len : longest;
        }
    c->walk_merged = total <= sgr_walk_max;
    c->wprog = sg_calloc(t->nbuckets ? t->nbuckets : 1, sizeof *c->wprog);
    c->walk = sg_malloc(sizeof *c->walk * (c->walk_merged ? (total ? total : 1) : (c->nany ? c->nany : 1)));
    if (!c->walk_merged)
        c->walk_tmp = sg_malloc(sizeof *c->walk_tmp * (longest + c->nany));
    if (!c->wprog || !c->walk || (!c->walk_merged && !c->walk_tmp))
        return -1;
    c->walk_budget = (size_t)1 << 22;
    c->walk_used = walk_merge(c, c->walk, NULL, 0, NULL, 0, NULL);
    return 0;
}

/* The walk for a segment running program name[0..n) (prog 0: none); *len its
 * length.  The program's bucket is found as sgr_table_lookup finds it. */
static inline const sgr_walk *walk_for(sgr_ctx *c, const char *name, uint32_t n, int prog, uint32_t *len)
{
    const sgr_table *t = c->t;
    uint32_t b = prog ? index_bucket(t, name, n) : SGT_NONE;
    if (b == SGT_NONE) {
        *len = c->nany;
        return c->walk;
    }
    const sgt_bucket *bk = &t->index[b];
    sgr_walk_prog *wp = &c->wprog[b];
    if (c->walk_merged) {
        if (!wp->n1) {
            /* a walk holds both lists, each rule once: room for it is left */
            wp->off = c->walk_used;
            wp->n1 = 1 + walk_merge(c, c->walk + wp->off, t->lists + bk->list_off, bk->list_len, name, n,
                                    &c->walk_budget);
            c->walk_used += wp->n1 - 1;
        }
        *len = wp->n1 - 1;
        return c->walk + wp->off;
    }
    *len = walk_merge(c, c->walk_tmp, t->lists + bk->list_off, bk->list_len, NULL, 0, NULL);
    return c->walk_tmp;
}

sgr_ctx *sgr_ctx_new(const sgr_table *t)
{
    sgr_ctx *c = sg_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->t = t;
    sg_arena_init(&c->arena, 64 * 1024);   /* allocates nothing yet */
    c->arena.limit = 64u << 20;         /* a hostile line cannot take more */
    sgr_sh_limits lim = SGR_SH_DEFAULT_LIMITS;
    c->lim = lim;
    size_t ns = t->nsets ? t->nsets : 1;
    c->need = sg_malloc(sizeof *c->need * (t->nrules ? t->nrules : 1));
    if (c->need)
        memset(c->need, 0xff, sizeof *c->need * t->nrules);     /* NEED_UNKNOWN */
    c->pm_call = sg_calloc(ns, sizeof *c->pm_call);
    c->pm_state = sg_calloc(ns, sizeof *c->pm_state);
    c->pm_hit = sg_calloc(ns, 1);
    c->wmax = sg_calloc(ns, sizeof *c->wmax);
    c->tilde = sg_calloc(ns, 1);
    size_t maxst = 1;
    for (uint32_t d = 0; d < t->ndfas; d++)
        maxst = t->dfas[d].nstates > maxst ? t->dfas[d].nstates : maxst;
    c->dmin = sg_calloc(t->ndfas ? t->ndfas : 1, sizeof *c->dmin);
    c->dlow = sg_calloc(t->ndfas ? t->ndfas : 1, 1);
    c->bfs_queue = sg_malloc(maxst * sizeof *c->bfs_queue);
    c->bfs_seen = sg_malloc(maxst);
    c->pg_mask = sg_calloc(ns, sizeof *c->pg_mask);
    c->pg_full = sg_calloc(ns, 1);
    c->pw_call = sg_calloc(ns, sizeof *c->pw_call);
    c->pw_hit = sg_calloc(ns, 1);
    c->wf = sg_calloc(ns, sizeof *c->wf);
    c->implied = sg_calloc(t->nrules ? t->nrules : 1, 1);       /* IMPLIED_UNKNOWN */
    if (!c->need || !c->pm_call || !c->pm_state || !c->pm_hit || !c->wmax || !c->tilde || !c->pg_mask || !c->pg_full || !c->pw_call
        || !c->pw_hit || !c->implied || !c->wf || !c->dmin || !c->dlow || !c->bfs_queue || !c->bfs_seen) {
        sgr_ctx_free(c);
        return NULL;
    }
    if (index_filed(c) < 0) {
        sgr_ctx_free(c);
        return NULL;
    }
    c->code_set = sgr_state_code_set(t);
    for (int ch = 0; ch < 128; ch++) {
        c->short_opt[ch][0] = '-';
        c->short_opt[ch][1] = (char)ch;
    }
    if (group_sets(c) < 0) {
        sgr_ctx_free(c);
        return NULL;
    }
    for (uint32_t set = 0; set < t->nsets; set++)
        if (c->pg_full[set])
            c->pg_union |= c->pg_mask[set];
    if (build_walks(c) < 0 || sgr_msg_build_tmpls(c) < 0) {
        sgr_ctx_free(c);
        return NULL;
    }
    return c;
}

void sgr_ctx_free(sgr_ctx *c)
{
    if (!c)
        return;
    sg_arena_free(&c->arena);
    sg_free(c->need);
    sg_free(c->pm_call);
    sg_free(c->pm_state);
    sg_free(c->pm_hit);
    sg_free(c->wmax);
    sg_free(c->tilde);
    sg_free(c->dmin);
    sg_free(c->dlow);
    sg_free(c->bfs_queue);
    sg_free(c->bfs_seen);
    sg_free(c->pg_mask);
    sg_free(c->pg_full);
    for (uint32_t i = 0; i < c->pg_ntries; i++)
        sgr_pg_trie_free(&c->pg_tries[i]);
    sg_free(c->pg_tries);
    sg_free(c->implied);
    sg_free(c->nfiled);
    sg_free(c->walk);
    sg_free(c->tmpl);
    sg_free(c->pieces);
    sg_free(c->walk_tmp);
    sg_free(c->wprog);
    sg_free(c->wf);
    sg_free(c->pw_call);
    sg_free(c->pw_hit);
    sgr_pg_free(c->pg);
    sgr_hooks_free(c->hooks);
    sgr_pc_free(c->pc);
    sg_free(c);
}

void sgr_ctx_set_trace(sgr_ctx *c, sgr_trace_fn fn, void *ud)
{
    c->trace = fn;
    c->trace_ud = ud;
}

void sgr_ctx_set_limits(sgr_ctx *c, const sgr_sh_limits *lim)
{
    c->lim = *lim;
}

void sgr_ctx_set_platform(sgr_ctx *c, sgr_platform p)
{
    c->platform = p;
}

/* ---- predicates -------------------------------------------------------------- */

/* words_may_have's first use of set: its filter. */
__attribute__((noinline))
static void words_filter(sgr_ctx *c, uint32_t set)
{
    const sgt_set *st = &c->t->sets[set];
    for (uint32_t k = 0; k < st->nwords; k++) {
        const char *w = sgr_str(c->t, c->t->words[st->words_off + k]);
        sgr_strfilt_add(&c->wf[set], w, strlen(w), 0);
    }
}

/* May s[0..n) be one of set's exact words?  0: certainly not. */
static inline int words_may_have(sgr_ctx *c, uint32_t set, const char *s, uint32_t n)
{
    if (!c->wf[set].lens)
        words_filter(c, set);
    return sgr_strfilt_may(&c->wf[set], s, n, 0);
}

#define DMIN_NEVER UINT32_MAX

/* Does automaton a accept a string without a byte of class k?  Breadth first
 * from the start state over the other classes; *budget is spent one per
 * transition looked at (0 left: the answer is 1, which is always safe). */
static int dfa_accepts_without(sgr_ctx *c, const sgr_dfa *a, uint32_t k, size_t *budget)
{
    uint32_t *q = c->bfs_queue, head = 0, tail = 0;
    uint8_t *seen = c->bfs_seen;
    memset(seen, 0, a->nstates);
    seen[0] = seen[1] = 1;
    q[tail++] = 1;
    while (head < tail) {
        uint32_t st = q[head++];
        if (a->accept[st] >= 0 || *budget < a->nclasses)
            return 1;
        *budget -= a->nclasses;
        const uint32_t *row = a->trans + (size_t)st * a->nclasses;
        for (uint32_t j = 0; j < a->nclasses; j++)
            if (j != k && !seen[row[j]]) {
                seen[row[j]] = 1;
                q[tail++] = row[j];
            }
    }
    return 0;
}

/* A bound under which some byte of every string a accepts lies, or 0: none kept.
 * `/(drop|truncate)\s+table|.../` cannot match an argument without a blank,
 * and most arguments have none; a test for a byte below 0x21, 8 bytes at a time
 * (has_byte_below), costs less than the automaton's byte-by-byte run.  The bound
 * is 1 + the highest byte of a class every accepted string holds (the class whose
 * highest byte is lowest), kept when it is at most 128 (has_byte_below's limit). */
static uint8_t dfa_low(sgr_ctx *c, const sgr_dfa *a)
{
    int top[256];
    for (uint32_t k = 0; k < a->nclasses && k < 256; k++)
        top[k] = -1;
    for (int b = 0; b < 256; b++)
        top[a->classmap[b]] = b;                /* the loader keeps classmap < nclasses */
    size_t budget = (size_t)1 << 22;            /* a huge automaton keeps no bound */
    for (int b = 0; b < 128; b++) {
        uint32_t k = a->classmap[b];
        if (top[k] == b && !dfa_accepts_without(c, a, k, &budget))
            return (uint8_t)(b + 1);
    }
    return 0;
}

/* Has s[0..n) a byte below low (1 <= low <= 128)?  Word by word: x - low in every
 * byte borrows into a byte's top bit only below low, and ~x keeps bytes of 128 and
 * more out (the exact "hasless" test: it may name the wrong byte, never the wrong
 * answer). */
static inline int has_byte_below(const char *s, size_t n, uint32_t low)
{
    const uint64_t ones = 0x0101010101010101ull, tops = ones * 0x80, sub = ones * low;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            if ((uint8_t)s[i] < low)
                return 1;
        return 0;
    }
    uint64_t x;
    for (size_t i = 0; i + 8 < n; i += 8) {
        memcpy(&x, s + i, 8);
        if ((x - sub) & ~x & tops)
            return 1;
    }
    memcpy(&x, s + n - 8, 8);                   /* the last 8, overlapping */
    return ((x - sub) & ~x & tops) != 0;
}

/* dfa_min's first use of automaton d: breadth first from the start state over
 * every class; a string that reaches the dead state is refused whatever follows,
 * so no path goes through it.  A class no byte maps to can only make the length
 * shorter than the truth, never longer: still a bound a shorter string fails. */
__attribute__((noinline))
static uint32_t dfa_measure(sgr_ctx *c, uint32_t d)
{
    const sgr_dfa *a = &c->t->dfas[d];
    uint32_t *q = c->bfs_queue, head = 0, tail = 0, found = DMIN_NEVER;
    uint8_t *seen = c->bfs_seen;
    memset(seen, 0, a->nstates);
    seen[0] = seen[1] = 1;
    q[tail++] = 1;
    for (uint32_t len = 0; head < tail && found == DMIN_NEVER; len++) {
        for (uint32_t end = tail; head < end; head++) {  /* the states len bytes away */
            const uint32_t *row = a->trans + (size_t)q[head] * a->nclasses;
            if (a->accept[q[head]] >= 0) {
                found = len + 1;
                break;
            }
            for (uint32_t k = 0; k < a->nclasses; k++)
                if (!seen[row[k]]) {
                    seen[row[k]] = 1;
                    q[tail++] = row[k];
                }
        }
    }
    c->dmin[d] = found;
    c->dlow[d] = dfa_low(c, a);
    return found;
}

/* 1 + the length of the shortest string automaton d accepts, or DMIN_NEVER when it
 * accepts none (measured on first use). */
static inline uint32_t dfa_min(sgr_ctx *c, uint32_t d)
{
    uint32_t m = c->dmin[d];
    return m ? m : dfa_measure(c, d);
}

/* set_has's automaton run, out of line: most tests end before it. */
__attribute__((noinline))
static int dfa_has(const sgr_ctx *c, uint32_t d, const char *s, uint32_t n)
{
    if (c->dlow[d] && !has_byte_below(s, n, c->dlow[d]))
        return 0;                            /* no byte of a class every match has */
    return sgr_dfa_match(sgr_table_dfa(c->t, d), s, n) >= 0;
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
    return st->dfa != SGT_NONE && n >= dfa_min(c, st->dfa) - 1 && dfa_has(c, st->dfa, s, n);
}

/* The length of set's longest exact word (measured on first use). */
static size_t words_max(sgr_ctx *c, uint32_t set)
{
    if (!c->wmax[set]) {
        const sgt_set *st = &c->t->sets[set];
        size_t m = 0;
        for (uint32_t k = 0; k < st->nwords; k++) {
            size_t l = strlen(sgr_str(c->t, c->t->words[st->words_off + k]));
            m = l > m ? l : m;
        }
        c->wmax[set] = (uint16_t)(m < UINT16_MAX - 1 ? m + 1 : UINT16_MAX);
    }
    return c->wmax[set] == UINT16_MAX ? SIZE_MAX : (size_t)c->wmax[set] - 1;
}

/* Is path s[0..n) (dirs: or a directory above it other than "/") a word "~" or
 * "~/REST" of set, with ~ the caller's home? */
__attribute__((noinline))
static int tilde_words_slow(sgr_ctx *c, uint32_t set, const char *s, uint32_t n, int dirs)
{
    uint32_t hl;
    const char *h = sgr_path_home_of(c, &hl);
    if (!h || n < hl || memcmp(s, h, hl) != 0)
        return 0;
    const sgt_set *st = &c->t->sets[set];
    for (uint32_t k = 0; k < st->nwords; k++) {
        const char *w = sgr_str(c->t, c->t->words[st->words_off + k]);
        if (w[0] != '~' || (w[1] && w[1] != '/'))
            continue;
        size_t rl = strlen(w + 1), l = hl + rl - (hl == 1 && rl);  /* "/" + "/x" is "/x" */
        const char *rest = hl == 1 && rl ? w + 2 : w + 1;
        if (n >= l && memcmp(s + hl, rest, l - hl) == 0
            && (n == l || (dirs && s[l] == '/' && l > 1)))
            return 1;
    }
    return 0;
}

static inline int tilde_words(sgr_ctx *c, uint32_t set, const char *s, uint32_t n, int dirs)
{
    return tilde_of(c, set) && tilde_words_slow(c, set, s, n, dirs);
}

/* The exact words of set over path s[0..n) and the directories above it. */
static int words_inside(sgr_ctx *c, uint32_t set, const char *s, uint32_t n)
{
    if (tilde_words(c, set, s, n, 1))
        return 1;
    size_t wm = words_max(c, set);
    uint32_t cl = c->rcwdl;
    int under_cwd = cl > 1 && n > cl && s[cl] == '/' && memcmp(s, c->rcwd, cl) == 0;
    if (under_cwd) {
        if (c->pw_call[set] != c->ncalls) {
            c->pw_hit[set] = (uint8_t)sgr_set_words_dirs(c->t, set, s, cl, 0, wm);
            c->pw_call[set] = c->ncalls;
        }
        if (c->pw_hit[set])
            return 1;
    }
    return sgr_set_words_dirs(c->t, set, s, n, under_cwd ? cl : 0, wm);
}

/* path_inside over set's own words and automaton (when the path group cannot
 * decide the set): the automaton's run over the cwd is made once a call and each
 * path under it resumes after it. */
static int path_inside_set(sgr_ctx *c, uint32_t set, const char *s, uint32_t n)
{
    const sgt_set *st = &c->t->sets[set];
    if (st->nwords && words_inside(c, set, s, n))
        return 1;
    if (st->dfa == SGT_NONE)
        return 0;
    const sgr_dfa *d = sgr_table_dfa(c->t, st->dfa);
    const uint8_t *p = (const uint8_t *)s;
    uint32_t cl = c->rcwdl;
    int under_cwd = cl > 1 && n > cl && s[cl] == '/' && memcmp(s, c->rcwd, cl) == 0;
    if (under_cwd && c->pm_call[set] != c->ncalls) {
        uint32_t q = 1;
        c->pm_hit[set] = (uint8_t)sgr_dfa_dirs_from(d, &q, p, p, p + cl);
        c->pm_state[set] = q;
        c->pm_call[set] = c->ncalls;
    }
    if (under_cwd && c->pm_hit[set])
        return 1;
    uint32_t q = under_cwd ? c->pm_state[set] : 1;
    return sgr_dfa_dirs_from(d, &q, p, under_cwd ? p + cl : p, p + n) || d->accept[q] >= 0;
}

/* The path group's mask for path i of nm, run once; -1 when the group cannot run
 * it (no group, or its state cache is full). */
static int64_t path_mask(sgr_ctx *c, sgr_norm *nm, uint32_t i)
{
    if (nm->pin[i] & PIN_RUN)
        return (int64_t)(uint32_t)nm->pin[i];
    if (nm->ppat[i])
        return -1;                          /* a pattern: see pattern_in */
    if (!c->pg_tried) {
        c->pg_tried = 1;
        c->pg = sgr_pg_new(c->pg_dfas, c->pg_n, 4096);
    }
    sgr_pgroup *g = c->pg;
    if (!g)
        return -1;
    const uint8_t *p = (const uint8_t *)nm->paths[i].s;
    uint32_t n = nm->paths[i].len, cl = c->rcwdl, st = SGR_PG_START, hit = 0;
    const uint8_t *q = p;
    if (nm->pin[i] & PIN_CWD) {
        /* most paths start with the cwd: run it once a call, resume after it */
        if (c->pg_call != c->ncalls) {
            c->pg_call = c->ncalls;
            c->pg_cwd_st = sgr_pg_start(g);
            c->pg_cwd_hit = 0;
            c->pg_cwd_ok = sgr_pg_run(g, &c->pg_cwd_st, p, p, p + cl, &c->pg_cwd_hit) == 0;
        }
        if (c->pg_cwd_ok) {
            st = c->pg_cwd_st;
            hit = c->pg_cwd_hit;
            q = p + cl;
        }
    }
    if (sgr_pg_run_end(g, st, p, q, p + n, &hit) < 0)
        return -1;
    nm->pin[i] = PIN_RUN | hit;
    return hit;
}

/* The or of every path's group mask (path_mask) for segment nm, run once; -1
 * when the group cannot run one of them. */
static int64_t paths_mask(sgr_ctx *c, sgr_norm *nm)
{
    if (!nm->pin_all) {
        uint32_t all = 0;
        for (uint32_t i = 0; i < nm->npaths; i++) {
            int64_t m = path_mask(c, nm, i);
            if (m < 0)
                return -1;
            all |= (uint32_t)m;
        }
        nm->pin_all = (uint64_t)1 << 32 | all;
    }
    return (int64_t)(uint32_t)nm->pin_all;
}

/* Can pattern p produce a path in set (dirs: or below a directory in it, other
 * than "/")?  The set's exact words (a "~" word with the caller's home for "~")
 * and its automaton (runtime/pathpat.h).  -1: out of memory. */
__attribute__((noinline))
static int pattern_in(sgr_ctx *c, uint32_t set, const sgr_ppat *p, int dirs)
{
    const sgt_set *st = &c->t->sets[set];
    const sgr_ppat *wp = p->words ? p->words : p;
    uint32_t hl = 0;
    const char *home = tilde_of(c, set) ? sgr_path_home_of(c, &hl) : NULL;
    for (uint32_t k = 0; k < st->nwords; k++) {
        const char *w = sgr_str(c->t, c->t->words[st->words_off + k]);
        size_t l = strlen(w);
        if (w[0] == '~' && (w[1] == '\0' || w[1] == '/')) {
            if (!home || hl + l >= PATH_MAX)
                continue;
            char full[PATH_MAX + 1];
            size_t skip = hl == 1 && l > 1;     /* "/" + "/x" is "/x" */
            memcpy(full, home, hl);
            memcpy(full + hl - skip, w + 1, l - 1);
            if (sgr_pp_word(wp, full, hl - skip + l - 1, dirs))
                return 1;
            continue;
        }
        if (sgr_pp_word(wp, w, l, dirs))
            return 1;
    }
    return st->dfa == SGT_NONE ? 0 : sgr_pp_dfa(p, &c->t->dfas[st->dfa], dirs, &c->arena);
}

/* Is path i of nm itself in set (not a directory above it)?  -1: out of memory. */
static int path_is(sgr_ctx *c, uint32_t set, sgr_norm *nm, uint32_t i)
{
    if (nm->ppat[i])
        return pattern_in(c, set, nm->ppat[i], 0);
    return set_has(c, set, nm->paths[i].s, nm->paths[i].len) || tilde_words(c, set, nm->paths[i].s, nm->paths[i].len, 0);
}

/* Is path i of nm, or a directory above it, in set?  -1: out of memory. */
static int path_inside(sgr_ctx *c, uint32_t set, sgr_norm *nm, uint32_t i)
{
    if (nm->ppat[i])
        return pattern_in(c, set, nm->ppat[i], 1);
    const char *s = nm->paths[i].s;
    uint32_t n = nm->paths[i].len;
    uint32_t bits = c->pg_mask[set];
    if (bits) {
        if (!c->pg_full[set] && c->t->sets[set].nwords && words_inside(c, set, s, n))
            return 1;
        int64_t m = path_mask(c, nm, i);
        if (m >= 0)
            return (m & bits) != 0;
    }
    return path_inside_set(c, set, s, n);
}

static int text_match(sgr_ctx *c, uint32_t set)
{
    if (set < 64 && c->text_cache[set] >= 0)
        return c->text_cache[set];
    const sgt_set *st = &c->t->sets[set];
    int r = st->dfa != SGT_NONE && sgr_dfa_match(sgr_table_dfa(c->t, st->dfa), c->line, c->len) >= 0;
    if (set < 64)
        c->text_cache[set] = (int8_t)r;
    return r;
}

/* The segment a wrapped command stands for in its pipeline: its outermost
 * wrapper (sudo bash -> the sudo segment). */
static int32_t pipeline_parent(const sgr_cmdline *cl, uint32_t si)
{
    const sgr_segment *s = &cl->seg[si];
    while (s->nest == SGR_NEST_WRAPPED && s->parent >= 0)
        s = &cl->seg[s->parent];
    return s->parent;
}

/* The pipeline member a segment runs as part of: climb out of wrappers, scripts
 * (sh -c '...') and exec'd commands to the segment that sits in a pipeline. */
static uint32_t pipeline_rep(const sgr_cmdline *cl, uint32_t si)
{
    while (cl->seg[si].parent >= 0 && (cl->seg[si].nest == SGR_NEST_WRAPPED || cl->seg[si].nest == SGR_NEST_SCRIPT
                                       || cl->seg[si].nest == SGR_NEST_EXEC))
        si = (uint32_t)cl->seg[si].parent;
    return si;
}

/* Is `anc` segment si itself or one of the wrappers around it? */
static int wraps(const sgr_cmdline *cl, int32_t anc, uint32_t si)
{
    for (int32_t x = (int32_t)si; x >= 0; x = cl->seg[x].parent) {
        if (x == anc)
            return 1;
        if (cl->seg[x].nest != SGR_NEST_WRAPPED)
            break;
    }
    return 0;
}

/* Does `a` come before `b` in one pipeline, directly or through what they are
 * part of (curl inside sh -c '...' | sh, printf / | sh -c 'xargs rm')? */
static int before_in_pipeline(const sgr_cmdline *cl, uint32_t a, uint32_t b)
{
    const sgr_segment *sa = &cl->seg[a], *sb = &cl->seg[b];
    if (sa->pipeline == sb->pipeline && sb->pipe_len > 1 && pipeline_parent(cl, a) == pipeline_parent(cl, b)
        && sa->pipe_index < sb->pipe_index)
        return 1;
    uint32_t ra = pipeline_rep(cl, a), rb = pipeline_rep(cl, b);
    if (ra == rb || (ra == a && rb == b))
        return 0;
    const sgr_segment *pa = &cl->seg[ra], *pb = &cl->seg[rb];
    return pa->pipeline == pb->pipeline && pb->pipe_len > 1 && pa->parent == pb->parent && pa->pipe_index < pb->pipe_index;
}

/* Programs feeding segment si (from) or fed by it (to): earlier/later segments of
 * its pipeline, seen through wrappers and scripts, and commands substituted into
 * it or into a wrapper around it ($(...), <(...)). */
static int piped(sgr_ctx *c, uint32_t si, uint32_t set, int from)
{
    const sgr_cmdline *cl = &c->res.cl;
    const sgr_segment *s = &cl->seg[si];
    for (uint32_t j = 0; j < cl->nseg; j++) {
        const sgr_segment *o = &cl->seg[j];
        if (j == si || o->argc == 0)
            continue;
        int rel = from ? before_in_pipeline(cl, j, si) : before_in_pipeline(cl, si, j);
        if (!rel && from && o->parent >= 0 && (o->nest == SGR_NEST_CMDSUB || o->nest == SGR_NEST_PROCSUB)
            && wraps(cl, o->parent, si))
            rel = 1;
        if (!rel && !from && s->parent >= 0 && (s->nest == SGR_NEST_CMDSUB || s->nest == SGR_NEST_PROCSUB)
            && wraps(cl, s->parent, j))
            rel = 1;
        if (rel && set_has(c, set, c->res.norm[j].prog.s, c->res.norm[j].prog.len))
            return 1;
    }
    return 0;
}

static sgr_hook_sv *svs_of(sgr_ctx *c, const sgr_sv *v, uint32_t n)
{
    sgr_hook_sv *o = sg_arena_alloc(&c->arena, sizeof *o * (n ? n : 1));
    for (uint32_t i = 0; o && i < n; i++) {
        o[i].s = v[i].s;
        o[i].len = v[i].len;
    }
    return o;
}

/* Call hook `hook` on segment si; fills the override/error state of the rule
 * being run.  Returns the condition's value, or -1 on OOM. */
static int call_hook(sgr_ctx *c, uint32_t si, uint32_t hook)
{
    const sgr_table *t = c->t;
    if (!c->hooks && !c->hooks_failed) {
        sgr_hook_limits lim = { t->meta->hook_budget, t->meta->hook_memory, t->meta->hook_millis };
        c->hooks = sgr_hooks_new(t, &lim, c->hooks_err, sizeof c->hooks_err);
        if (!c->hooks)
            c->hooks_failed = 1;
    }
    if (c->hooks_failed) {
        c->herr = 1;
        c->ov_msg = c->hooks_err;
        return 1;
    }
    if (sgr_path_resolve_paths(c, si) < 0)
        return -1;
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    sgr_hook_sv *argv = sg_arena_alloc(&c->arena, sizeof *argv * (s->argc ? s->argc : 1));
    sgr_hook_sv *asg = sg_arena_alloc(&c->arena, sizeof *asg * (s->nassigns ? s->nassigns : 1));
    sgr_hook_redirect *rd = sg_arena_alloc(&c->arena, sizeof *rd * (s->nredirs ? s->nredirs : 1));
    sgr_hook_sv *roots = sg_arena_alloc(&c->arena, sizeof *roots * (c->nroots ? c->nroots : 1));
    sgr_hook_sv *opts = svs_of(c, nm->opts, nm->nopts), *paths = svs_of(c, nm->paths, nm->npaths);
    if (!argv || !asg || !rd || !roots || !opts || !paths)
        return -1;
    for (uint32_t i = 0; i < s->argc; i++) {
        argv[i].s = s->argv[i].text;
        argv[i].len = s->argv[i].len;
    }
    for (uint32_t i = 0; i < s->nassigns; i++) {
        asg[i].s = s->assigns[i].text;
        asg[i].len = s->assigns[i].len;
    }
    for (uint32_t i = 0; i < s->nredirs; i++) {
        rd[i].op = sgr_redir_names[s->redirs[i].kind];
        rd[i].fd = s->redirs[i].fd;
        rd[i].target.s = s->redirs[i].target.text;
        rd[i].target.len = s->redirs[i].target.len;
    }
    for (uint32_t i = 0; i < c->nroots; i++) {
        roots[i].s = c->roots[i];
        roots[i].len = strlen(c->roots[i]);
    }
    sgr_hook_seg hs;
    memset(&hs, 0, sizeof hs);
    hs.program.s = nm->prog.s;
    hs.program.len = nm->prog.len;
    hs.path.s = s->argc ? s->argv[0].text : "";
    hs.path.len = s->argc ? s->argv[0].len : 0;
    hs.argv = argv;
    hs.argc = s->argc;
    hs.options = opts;
    hs.noptions = nm->nopts;
    hs.subcommand.s = nm->subcmd.s;
    hs.subcommand.len = nm->subcmd.len;
    hs.paths = paths;
    hs.npaths = nm->npaths;
    hs.redirects = rd;
    hs.nredirects = s->nredirs;
    hs.assignments = asg;
    hs.nassignments = s->nassigns;
    hs.cwd.s = nm->cwd;
    hs.cwd.len = strlen(nm->cwd);
    hs.workspace = roots;
    hs.nworkspace = c->nroots;
    hs.line.s = c->line;
    hs.line.len = c->len;
    hs.index = si;
    sgr_hook_result hr;
    sgr_hooks_call(c->hooks, hook, &hs, &hr);
    switch (hr.status) {
    case SGR_HOOK_FALSE:
        return 0;
    case SGR_HOOK_TRUE:
        return 1;
    case SGR_HOOK_DECIDE:
        c->ov_set = 1;
        c->ov_dec = hr.decision < SGT_NDECISIONS ? hr.decision : SGT_DENY;
        c->ov_msg = sg_arena_strndup(&c->arena, hr.message, strlen(hr.message));
        if (!c->ov_msg)
            return -1;
        return 1;
    default:
        /* fail closed whatever the rule around it says (even under `not`) */
        c->herr = 1;
        c->ov_msg = sg_arena_strndup(&c->arena, hr.message, strlen(hr.message));
        if (!c->ov_msg)
            return -1;
        return 1;
    }
}

static int cmp_argc(uint32_t cmp, uint32_t a, uint32_t b)
{
    switch (cmp) {
    case SGT_CMP_EQ: return a == b;
    case SGT_CMP_NE: return a != b;
    case SGT_CMP_LT: return a < b;
    case SGT_CMP_LE: return a <= b;
    case SGT_CMP_GT: return a > b;
    default: return a >= b;
    }
}

/* Run a whole-line rule's code: text, logic and jumps; a segment predicate is
 * false. */
static int run_line(sgr_ctx *c, uint32_t off, uint32_t len)
{
    const uint32_t *code = c->t->code + off;
    uint32_t n = len / 2;
    int acc = 0;
    for (uint32_t pc = 0; pc < n; pc++) {
        uint32_t b = code[2 * pc + 1];
        switch (code[2 * pc] & 0xff) {
        case SGT_OP_TRUE: acc = 1; break;
        case SGT_OP_TEXT: acc = text_match(c, b); break;
        case SGT_OP_NOT: acc = !acc; break;
        case SGT_OP_JUMP_FALSE: if (!acc) pc += b; break;
        case SGT_OP_JUMP_TRUE: if (acc) pc += b; break;
        default: acc = 0; break;
        }
    }
    return acc;
}

/* `option A value B` (a: set A | SGT_NEGATE_VALUE, b: set B): an option of the
 * segment in A was given a value in B (not in B) -- the next word, --opt=VALUE,
 * or attached to a short option, -nVALUE; an attached value that starts with '='
 * (-n=VALUE, which getopt reads as "=VALUE" and Go's flag packages as "VALUE") is
 * tried both ways.  An option is the word as given or what it may abbreviate or
 * cluster (normalise_segment), so each spelling the program takes matches.  A
 * value known only at run time is never in B, nor known not to be. */
static int option_value(sgr_ctx *c, const sgr_norm *nm, uint32_t a, uint32_t b)
{
    uint32_t set = a & ~SGT_NEGATE_VALUE;
    int neg = (a & SGT_NEGATE_VALUE) != 0;
    for (uint32_t v = 0; v < nm->nvals; v++) {
        if (nm->valw[v] == UINT32_MAX)
            continue;
        const sgr_sv *val = &nm->vals[v];
        int known = !(nm->vflags[v] & SGR_W_UNKNOWN), in = 0;
        if (known) {
            in = set_has(c, b, val->s, val->len);
            if (!in && val->len > 1 && val->s[0] == '=')
                in = set_has(c, b, val->s + 1, val->len - 1);
        }
        if (neg ? known && in : !in)
            continue;
        for (uint32_t k = 0; k < nm->nopts; k++)
            if (nm->optw[k] == nm->valw[v] && set_has(c, set, nm->opts[k].s, nm->opts[k].len)) {
                c->m_option = nm->opts[k];
                c->m_arg = *val;
                return 1;
            }
    }
    return 0;
}

/* `redirect writes outside workspace` (a = SGT_WRITES_OUTSIDE): a file a write
 * redirection opens is outside the roots or known only at run time;
 * `redirect writes to path inside workspace` (SGT_WRITES_INSIDE): there is one,
 * and every one is inside.  A redirection to a descriptor (>&2, > /dev/stderr of
 * the caller's) or to /dev/null opens no file. */
static int writes_where(sgr_ctx *c, uint32_t si, uint32_t a)
{
    if (sgr_path_resolve_paths(c, si) < 0)
        return -1;
    const sgr_segment *s = &c->res.cl.seg[si];
    sgr_norm *nm = &c->res.norm[si];
    int any = 0;
    for (uint32_t i = 0; i < s->nredirs; i++) {
        const sgr_redir *r = &s->redirs[i];
        uint32_t k = nm->rpath[2 * i], np = nm->rpath[2 * i + 1];
        if (!sgr_path_is_write(s, r) || !np)
            continue;
        int null = 1;
        for (uint32_t e = k + np; k < e && null; k++)
            null = !nm->ppat[k] && nm->paths[k].len == 9 && memcmp(nm->paths[k].s, "/dev/null", 9) == 0;
        if (null)
            continue;
        any = 1;
        if (nm->routside[i]) {
            c->m_path.s = r->target.text;
            c->m_path.len = r->target.len;
            return a == SGT_WRITES_OUTSIDE;
        }
    }
    return a == SGT_WRITES_INSIDE && any;
}

/* ---- destinations ------------------------------------------------------------
 * Where a segment connects (docs/language.md "Destinations"): each word the
 * shell passes it (an argument, the VALUE of an argument NAME=VALUE or
 * --opt=VALUE, an option's value, an assignment's value) that is a URL; each operand of a program declared `url operands` (curl: a URL or
 * host[/path]), `remote operands` (git: a URL or host:path) or `host operand`
 * (ssh: its first); each value of a `url { OPTS }` option, and, unknown, each of
 * a `url unknown { OPTS }` one (curl -K FILE), and one for the arguments of a
 * moreargs or dynamic segment; and each proxy a *_proxy variable
 * or a *.proxy setting (git -c http.proxy=H) set anywhere on the line names (a
 * program connects through it). */

static int add_dest(sgr_ctx *c, sgr_norm *nm, uint32_t cap, const char *w, uint32_t n, uint32_t flags, int how)
{
    if (nm->ndests >= cap)
        return 0;                            /* cap counts every source: a guard only */
    int r = sgr_dest_parse(&c->arena, w, n, flags, how, &nm->dests[nm->ndests]);
    if (r > 0)
        nm->ndests++;
    return r < 0 ? -1 : 0;
}

/* A word NAME=VALUE or --opt=VALUE: VALUE (NULL: none). */
static const char *after_eq(const char *w, uint32_t n)
{
    const char *eq = memchr(w, '=', n);
    return eq && eq > w ? eq + 1 : NULL;
}

/* The proxies word w names, as an assignment NAME=VALUE (s->assigns, or an
 * export's argument). */
static int add_proxy(sgr_ctx *c, sgr_norm *nm, uint32_t cap, const sgr_word *w)
{
    const char *v = after_eq(w->text, w->len);
    if (!v || !sgr_dest_proxy_var(w->text, (size_t)(v - 1 - w->text)))
        return 0;
    return add_dest(c, nm, cap, v, (uint32_t)(w->text + w->len - v), w->flags, SGR_DEST_BARE);
}

static int read_dests(sgr_ctx *c, uint32_t si)
{
    sgr_norm *nm = &c->res.norm[si];
    if (nm->dests_state)
        return 0;
    nm->dests_state = 1;
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgt_progspec *ps = s->spec ? &c->t->progs[s->spec - 1] : NULL;
    uint32_t pf = ps ? ps->flags : 0;
    uint64_t cap64 = 2ull * s->argc + nm->nvals + nm->npos + s->nassigns;
    for (uint32_t j = 0; j < c->res.cl.nseg; j++)
        if (j != si)
            cap64 += c->res.cl.seg[j].nassigns + c->res.cl.seg[j].argc;
    if (cap64 > UINT32_MAX / sizeof *nm->dests)
        return -1;
    uint32_t cap = (uint32_t)cap64 + 1;
    if (!(nm->dests = sg_arena_alloc(&c->arena, sizeof *nm->dests * cap)))
        return -1;
    /* arguments the line does not show (xargs curl URL), or words not known at all:
     * some place nothing is known of */
    if ((s->flags & (SGR_SEG_MOREARGS | SGR_SEG_DYNAMIC)) && add_dest(c, nm, cap, "", 0, 0, SGR_DEST_UNKNOWN) < 0)
        return -1;
    for (uint32_t i = 1; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        const char *v = after_eq(w->text, w->len);   /* --url=URL, git -c KEY=URL */
        if (add_dest(c, nm, cap, w->text, w->len, w->flags, SGR_DEST_SCHEMED) < 0
            || (v && add_dest(c, nm, cap, v, (uint32_t)(w->text + w->len - v), w->flags, SGR_DEST_SCHEMED) < 0)
            || add_proxy(c, nm, cap, w) < 0)
            return -1;
    }
    for (uint32_t i = 0; i < nm->nvals; i++) {
        uint32_t f = nm->vflags[i];
        int how = f & SGR_V_URLUNK ? SGR_DEST_UNKNOWN : f & SGR_V_URL ? SGR_DEST_BARE
                  : f & SGR_V_WORD ? -1 : SGR_DEST_SCHEMED;   /* a whole word: read above */
        if (how >= 0 && add_dest(c, nm, cap, nm->vals[i].s, nm->vals[i].len, f, how) < 0)
            return -1;
    }
    if (pf & (SGT_PROG_URL_OPS | SGT_PROG_REMOTE_OPS | SGT_PROG_HOST_OP))
        for (uint32_t i = nm->text_ops; i < nm->npos; i++) {
            const sgr_word *w = &s->argv[nm->pos[i]];
            int how = pf & SGT_PROG_URL_OPS ? SGR_DEST_BARE
                      : pf & SGT_PROG_REMOTE_OPS ? SGR_DEST_REMOTE : SGR_DEST_BARE;
            if (add_dest(c, nm, cap, w->text, w->len, w->flags, how) < 0)
                return -1;
            if ((pf & (SGT_PROG_URL_OPS | SGT_PROG_REMOTE_OPS)) == 0)
                break;                       /* host operand: the first; the rest is its command */
        }
    for (uint32_t i = 0; i < s->nassigns; i++) {
        const sgr_word *w = &s->assigns[i];
        const char *v = after_eq(w->text, w->len);
        if ((v && add_dest(c, nm, cap, v, (uint32_t)(w->text + w->len - v), w->flags, SGR_DEST_SCHEMED) < 0)
            || add_proxy(c, nm, cap, w) < 0)
            return -1;
    }
    /* a proxy set by another segment (export https_proxy=...; curl ...) */
    for (uint32_t j = 0; j < c->res.cl.nseg; j++) {
        if (j == si)
            continue;
        const sgr_segment *o = &c->res.cl.seg[j];
        for (uint32_t i = 0; i < o->nassigns; i++)
            if (add_proxy(c, nm, cap, &o->assigns[i]) < 0)
                return -1;
        for (uint32_t i = 1; i < o->argc; i++)
            if (add_proxy(c, nm, cap, &o->argv[i]) < 0)
                return -1;
    }
    return 0;
}

/* The part of d that DEST field f names. */
static const sgr_sv *dest_field(const sgr_dest *d, uint32_t f)
{
    switch (f) {
    case SGT_DEST_HOST: return &d->host;
    case SGT_DEST_URL: return &d->url;
    case SGT_DEST_SCHEME: return &d->scheme;
    default: return &d->port;
    }
}

/* `host M`: some destination's host is known and in set b; `host only M`: there
 * is one, and every one's is. */
static int dest_match(sgr_ctx *c, uint32_t si, uint32_t a, uint32_t b)
{
    if (read_dests(c, si) < 0)
        return -1;
    sgr_norm *nm = &c->res.norm[si];
    uint32_t f = a & ~SGT_DEST_ONLY;
    int only = (a & SGT_DEST_ONLY) != 0;
    for (uint32_t i = 0; i < nm->ndests; i++) {
        const sgr_sv *v = dest_field(&nm->dests[i], f);
        int in = v->s && set_has(c, b, v->s, v->len);
        if (only ? !in : in) {
            c->m_arg = nm->dests[i].word;
            return !only;
        }
    }
    if (only && nm->ndests)
        c->m_arg = nm->dests[0].word;
    return only && nm->ndests > 0;
}

/* Run a rule's code on segment si from op `from` (after a test the index proved,
 * see implied_of): 1 match, 0 none, -1 out of memory. */
static int run(sgr_ctx *c, uint32_t si, uint32_t off, uint32_t len, uint32_t from)
{
    const uint32_t *code = c->t->code + off;
    uint32_t n = len / 2;
    int acc = from > 0;                  /* started after a test that holds */
    const sgr_segment *s = &c->res.cl.seg[si];
    sgr_norm *nm = &c->res.norm[si];
    for (uint32_t pc = from; pc < n; pc++) {
        uint32_t w0 = code[2 * pc], b = code[2 * pc + 1], op = w0 & 0xff, a = w0 >> 8;
        switch (op) {
        case SGT_OP_TRUE: acc = 1; break;
        case SGT_OP_PROGRAM:
            acc = s->argc > 0 && (set_has(c, b, nm->prog.s, nm->prog.len)
                                  || (!prog_is_argv0(s, nm) && set_has(c, b, s->argv[0].text, s->argv[0].len)));
            break;
        case SGT_OP_SUBCOMMAND:
            acc = nm->subcmd.s && set_has(c, b, nm->subcmd.s, nm->subcmd.len);
            break;
        case SGT_OP_OPTION_ANY:
            acc = 0;
            for (uint32_t i = 0; i < nm->nopts && !acc; i++)
                if (set_has(c, b, nm->opts[i].s, nm->opts[i].len)) {
                    acc = 1;
                    c->m_option = nm->opts[i];
                }
            break;
        case SGT_OP_OPTION_ALL: {
            const sgt_set *st = &c->t->sets[b];
            acc = st->nwords > 0;
            for (uint32_t k = 0; k < st->nwords && acc; k++) {
                const char *wd = sgr_str(c->t, c->t->words[st->words_off + k]);
                size_t wl = strlen(wd);
                int found = 0;
                for (uint32_t i = 0; i < nm->nopts && !found; i++)
                    found = nm->opts[i].len == wl && memcmp(nm->opts[i].s, wd, wl) == 0;
                acc = found;
            }
            if (acc) {
                c->m_option.s = sgr_str(c->t, c->t->words[st->words_off]);
                c->m_option.len = (uint32_t)strlen(c->m_option.s);
            }
            break;
        }
        case SGT_OP_ARG_ANY:
            acc = 0;
            for (uint32_t i = 1; i < s->argc && !acc; i++)
                if (set_has(c, b, s->argv[i].text, s->argv[i].len)) {
                    acc = 1;
                    c->m_arg.s = s->argv[i].text;
                    c->m_arg.len = s->argv[i].len;
                }
            /* values that are argv words were tested above */
            for (uint32_t i = 0; i < nm->nvals && !acc; i++)
                if (!(nm->vflags[i] & SGR_V_WORD) && set_has(c, b, nm->vals[i].s, nm->vals[i].len)) {
                    acc = 1;
                    c->m_arg = nm->vals[i];
                }
            break;
        case SGT_OP_ARG_AT:
            acc = a < s->argc && set_has(c, b, s->argv[a].text, s->argv[a].len);
            if (acc) {
                c->m_arg.s = s->argv[a].text;
                c->m_arg.len = s->argv[a].len;
            }
            break;
        case SGT_OP_ARGC: acc = cmp_argc(a, s->argc, b); break;
        case SGT_OP_MODULE_AT:
            if ((acc = sgr_path_module_inside(c, si, a)) < 0)
                return -1;
            break;
        case SGT_OP_PSCRIPT: acc = (s->flags & SGR_SEG_PSCRIPT) != 0; break;
        case SGT_OP_CWD_OUTSIDE:
            acc = nm->cwd_unknown != 0;
            for (uint32_t k = 0; k < nm->ncwds && !acc; k++)
                acc = !sgr_path_inside_roots(c, nm->cwds[k], (uint32_t)strlen(nm->cwds[k]));
            break;
        case SGT_OP_PATH_OUTSIDE:
            if (sgr_path_resolve_paths(c, si) < 0)
                return -1;
            acc = nm->outside;
            if (acc)
                c->m_path = nm->outside_path;
            break;
        case SGT_OP_PATH_INSIDE:
            if (sgr_path_resolve_paths(c, si) < 0)
                return -1;
            acc = 0;
            if (c->pg_full[b]) {
                /* most segments have no path in any such set: one test for all */
                int64_t all = paths_mask(c, nm);
                if (all >= 0 && !(all & c->pg_mask[b]))
                    break;
            }
            for (uint32_t i = 0; i < nm->npaths && !acc; i++) {
                /* the path itself, or any directory above it, is in the set */
                int in = path_inside(c, b, nm, i);
                if (in < 0)
                    return -1;
                if (in) {
                    acc = 1;
                    c->m_path = nm->paths[i];
                }
            }
            break;
        case SGT_OP_PATH_IS:
            if (sgr_path_resolve_paths(c, si) < 0)
                return -1;
            acc = 0;
            for (uint32_t i = 0; i < nm->npaths && !acc; i++) {
                int is = path_is(c, b, nm, i);
                if (is < 0)
                    return -1;
                if (is) {
                    acc = 1;
                    c->m_path = nm->paths[i];
                }
            }
            break;
        case SGT_OP_REDIR_WRITES: case SGT_OP_REDIR_READS:
            acc = 0;
            if (op == SGT_OP_REDIR_WRITES && a) {
                if ((acc = writes_where(c, si, a)) < 0)
                    return -1;
                break;
            }
            if (op == SGT_OP_REDIR_READS && a == SGT_READS_HEREDOC) {
                for (uint32_t i = 0; i < s->nredirs && !acc; i++)
                    acc = s->redirs[i].kind == SGR_REDIR_HEREDOC || s->redirs[i].kind == SGR_REDIR_HERESTRING;
                break;
            }
            for (uint32_t i = 0; i < s->nredirs && !acc; i++) {
                const sgr_redir *r = &s->redirs[i];
                if (!(op == SGT_OP_REDIR_WRITES ? sgr_path_is_write(s, r) : sgr_path_is_read(r)))
                    continue;
                acc = b == SGT_NONE || set_has(c, b, r->target.text, r->target.len);
                if (acc) {
                    c->m_path.s = r->target.text;
                    c->m_path.len = r->target.len;
                    break;
                }
                /* or a path the target resolves to (`> /dev/./sda`) */
                if (sgr_path_resolve_paths(c, si) < 0)
                    return -1;
                for (uint32_t k = nm->rpath[2 * i], e = k + nm->rpath[2 * i + 1]; k < e && !acc; k++) {
                    int is = path_is(c, b, nm, k);
                    if (is < 0)
                        return -1;
                    if (is) {
                        acc = 1;
                        c->m_path = nm->paths[k];
                    }
                }
            }
            break;
        case SGT_OP_OPTION_VAL:
            acc = option_value(c, nm, a, b);
            break;
        case SGT_OP_DEST:
            if ((acc = dest_match(c, si, a, b)) < 0)
                return -1;
            break;
        case SGT_OP_ASSIGNS: case SGT_OP_ASSIGNS_VAL:
            acc = 0;
            for (uint32_t i = 0; i < s->nassigns && !acc; i++) {
                const sgr_word *w = &s->assigns[i];
                const char *eq = memchr(w->text, '=', w->len);
                uint32_t nl = eq ? (uint32_t)(eq - w->text) : w->len;
                if (!set_has(c, op == SGT_OP_ASSIGNS ? b : (a & ~SGT_NEGATE_VALUE), w->text, nl))
                    continue;
                if (op == SGT_OP_ASSIGNS)
                    acc = 1;
                else if (a & SGT_NEGATE_VALUE)  /* a value not in b; a run-time value is never known-good */
                    acc = !eq || (w->flags & SGR_W_UNKNOWN) || !set_has(c, b, eq + 1, w->len - nl - 1);
                else
                    acc = eq && !(w->flags & SGR_W_UNKNOWN) && set_has(c, b, eq + 1, w->len - nl - 1);
                if (acc) {
                    c->m_arg.s = w->text;
                    c->m_arg.len = w->len;
                }
            }
            break;
        case SGT_OP_PIPED_FROM: acc = piped(c, si, b, 1); break;
        case SGT_OP_PIPED_TO: acc = piped(c, si, b, 0); break;
        case SGT_OP_DYNAMIC: acc = (s->flags & SGR_SEG_DYNAMIC) != 0; break;
        case SGT_OP_MOREARGS: acc = (s->flags & SGR_SEG_MOREARGS) != 0; break;
        case SGT_OP_LUA:
            acc = call_hook(c, si, b);
            if (acc < 0)
                return -1;
            break;
        case SGT_OP_TEXT: acc = text_match(c, b); break;
        case SGT_OP_NOT: acc = !acc; break;
        case SGT_OP_JUMP_FALSE: if (!acc) pc += b; break;
        case SGT_OP_JUMP_TRUE: if (acc) pc += b; break;
        case SGT_OP_NESTED: acc = ((a >> s->nest) & 1) != 0; break;
        case SGT_OP_LINE_RUNS:
            acc = 0;
            for (uint32_t j = 0; j < c->res.cl.nseg && !acc; j++)
                acc = c->res.cl.seg[j].argc > 0
                      && set_has(c, b, c->res.norm[j].prog.s, c->res.norm[j].prog.len);
            break;
        case SGT_OP_EXPANDS: acc = seg_expands(c, s, b); break;
        default: acc = 1; break;             /* the loader refuses unknown ops */
        }
    }
    return acc;
}

/* Does a word of segment s that holds an expansion (its words, its assignments'
 * values, its redirections' targets and here-document bodies that expand) expand
 * a variable whose name is in set b?  The name is what {arg} then shows. */
static int word_expands(sgr_ctx *c, const sgr_word *w, uint32_t b)
{
    if (!(w->flags & SGR_W_UNKNOWN))
        return 0;
    size_t pos = 0, len;
    const char *name;
    while (sgr_sx_next_var(w->text, w->len, &pos, &name, &len))
        if (set_has(c, b, name, (uint32_t)len)) {
            c->m_arg.s = name;
            c->m_arg.len = (uint32_t)len;
            return 1;
        }
    return 0;
}

static int seg_expands(sgr_ctx *c, const sgr_segment *s, uint32_t b)
{
    for (uint32_t i = 0; i < s->argc; i++)
        if (word_expands(c, &s->argv[i], b))
            return 1;
    for (uint32_t i = 0; i < s->nassigns; i++)
        if (word_expands(c, &s->assigns[i], b))
            return 1;
    for (uint32_t i = 0; i < s->nredirs; i++)
        if (!(s->redirs[i].kind == SGR_REDIR_HEREDOC && s->redirs[i].quoted_delim)
            && word_expands(c, &s->redirs[i].target, b))
            return 1;
    return 0;
}

/* Resolve the workspace roots (default: the cwd; a relative root is taken from
 * the cwd) the way operands are resolved, on every call. */
static int resolve_roots(sgr_ctx *c, const sgr_opts *o, const char *cwd)
{
    c->roots = sg_arena_alloc(&c->arena, sizeof(char *) * (o->nroots ? o->nroots : 1));
    if (!c->roots)
        return -1;
    c->nroots = 0;
    if (!o->nroots) {
        c->roots[c->nroots++] = cwd;        /* the cwd, resolved already */
        return 0;
    }
    for (size_t i = 0; i < o->nroots; i++) {
        uint32_t l;
        char *r = resolve_path(c, cwd, o->roots[i], (uint32_t)strlen(o->roots[i]), 0, &l, NULL, NULL);
        if (!r)
            return -1;
        c->roots[c->nroots++] = r;
    }
    return 0;
}

/* The caller's cwd, resolved.  An agent decides call after call in one directory,
 * so the last resolution is kept with the path cache's epoch (pathcache.h): while
 * the epoch has not moved, walking the same text again would give the same
 * answers, hence the same result.  A kept answer is handed out as it is kept
 * (cwd_out): only this function writes it, once a call, and like the arena it
 * outlives the call's result until the next call. */
static const char *resolve_cwd(sgr_ctx *c, const char *cwd, uint32_t *len)
{
    if (!c->pc_begun) {
        sgr_pc_begin(c->pc);
        c->pc_begun = 1;
    }
    uint64_t e = sgr_pc_epoch(c->pc);
    if (e && e == c->cwd_epoch && strcmp(cwd, c->cwd_in) == 0) {
        *len = c->cwd_outl;
        return c->cwd_out;
    }
    size_t il = strlen(cwd);
    const char *r = resolve_path(c, "/", cwd, (uint32_t)il, 0, len, NULL, NULL);
    c->cwd_epoch = 0;
    if (r && e && sgr_pc_epoch(c->pc) == e && il < sizeof c->cwd_in && *len < sizeof c->cwd_out) {
        memcpy(c->cwd_in, cwd, il + 1);
        memcpy(c->cwd_out, r, (size_t)*len + 1);
        c->cwd_outl = *len;
        c->cwd_epoch = e;
    }
    return r;
}

static void oom_result(sgr_ctx *c)
{
    sgr_result *r = &c->res;
    r->decision = SGT_DENY;
    r->rule = SGR_RULE_DYNAMIC;
    r->seg = -1;
    r->rule_id = "internal";
    r->message = "shellgate ran out of memory while checking this command";
    r->hint = "";
    r->oom = 1;
}

static int better(uint32_t d, uint32_t best)
{
    return sgt_strictness(d) > sgt_strictness(best);
}

/* Between segments: a stricter decision wins; at equal strictness an explicit rule
 * explains more than the built-in dynamic deny, which explains more than the
 * pack's default, so `sudo rm -rf /` reports the rm rule, not "sudo is not allowed". */
static int rank(int32_t rule)
{
    return rule >= 0 ? 3 : rule == SGR_RULE_DYNAMIC ? 2 : rule == SGR_RULE_DEFAULT ? 1 : 0;
}

static int better_seg(uint32_t d, int32_t r, uint32_t bestd, int32_t bestr)
{
    if (sgt_strictness(d) != sgt_strictness(bestd))
        return sgt_strictness(d) > sgt_strictness(bestd);
    return rank(r) > rank(bestr);
}

/* Is a path of segment si in a set the path group decides alone (F_PGHIT)?  1
 * also when the group cannot tell (the rules then test each set themselves); -1
 * out of memory. */
static int seg_pg_hit(sgr_ctx *c, uint32_t si)
{
    if (sgr_path_resolve_paths(c, si) < 0)
        return -1;
    int64_t all = paths_mask(c, &c->res.norm[si]);
    return all < 0 || (all & c->pg_union) != 0;
}

/* Evaluate the rules for segment si; fills seg_decision/seg_rule. */
static int decide_segment(sgr_ctx *c, uint32_t si, int32_t *rule_out, uint32_t *dec_out)
{
    const sgr_table *t = c->t;
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    uint32_t nwalk;
    const sgr_walk *walk = walk_for(c, nm->prog.s, nm->prog.len, s->argc > 0, &nwalk);
    int32_t best = -1;
    uint32_t bestd = SGT_ALLOW;
    int dyn_handled = 0;
    sgr_sv save_o = c->m_option, save_a = c->m_arg, save_p = c->m_path;
    uint32_t have = seg_features(c, si);
    int pg_known = 0;
    for (const sgr_walk *w = walk, *wend = walk + nwalk; w < wend; w++) {
        uint32_t r = w->rule, miss = w->need & ~have;
        if (miss) {
            if (miss == F_PGHIT && !pg_known) {
                /* the first rule that needs a path in a group set: resolve the paths
                 * and see, once for the segment, whether any is in one */
                pg_known = 1;
                int h = seg_pg_hit(c, si);
                if (h < 0)
                    return -1;
                have |= h ? F_PGHIT : 0;
                miss = w->need & ~have;
            }
            if (miss) {
                if (c->trace)
                    c->trace(c->trace_ud, (int32_t)si, r, 0);
                continue;                    /* cannot match: see rule_needs */
            }
        }
        const sgt_rule *ru = &t->rules[r];
        c->m_option.s = c->m_arg.s = c->m_path.s = NULL;
        c->ov_set = c->herr = 0;
        c->ov_msg = NULL;
        int m = w->from == WALK_PROVED ? 1 : run(c, si, ru->code_off, ru->code_len, w->from);
        if (m < 0)
            return -1;
        uint32_t dec = ru->decision;
        const char *msg = NULL;
        if (c->herr) {
            m = 1;                           /* a failed hook denies, always */
            dec = SGT_DENY;
            msg = c->ov_msg;
        } else if (m && c->ov_set) {
            dec = c->ov_dec;
            msg = c->ov_msg;
        }
        if (c->trace)
            c->trace(c->trace_ud, (int32_t)si, r, m);
        if (!m)
            continue;
        if (ru->flags & SGT_RULE_DYNAMIC)
            dyn_handled = 1;
        if (best < 0 || better(dec, bestd)) {
            best = (int32_t)r;
            bestd = dec;
            c->seg_msg[si] = msg;
            save_o = c->m_option;
            save_a = c->m_arg;
            save_p = c->m_path;
        }
        if (bestd == SGT_DENY && !c->trace)
            break;                           /* nothing is stricter; first deny wins */
    }
    c->m_option = save_o;
    c->m_arg = save_a;
    c->m_path = save_p;
    if ((s->flags & SGR_SEG_DYNAMIC) && !dyn_handled && !(best >= 0 && bestd == SGT_DENY)) {
        *rule_out = SGR_RULE_DYNAMIC;
        *dec_out = SGT_DENY;
        return 0;
    }
    if (best < 0 && s->argc == 0) {
        /* only assignments, redirections or a loop's words: nothing runs, and no
         * rule objected */
        *rule_out = SGR_RULE_NOTHING;
        *dec_out = SGT_ALLOW;
        return 0;
    }
    if (best < 0) {
        *rule_out = SGR_RULE_DEFAULT;
        *dec_out = t->meta->default_decision;
        return 0;
    }
    *rule_out = best;
    *dec_out = bestd;
    return 0;
}

const char *sgr_rule_name(const sgr_table *t, int32_t r)
{
    if (r == SGR_RULE_DEFAULT)
        return "default";
    if (r == SGR_RULE_DYNAMIC)
        return "dynamic";
    if (r == SGR_RULE_NOTHING)
        return "no-command";
    return r >= 0 && (uint32_t)r < t->nrules ? sgr_str(t, t->rules[r].id) : "unknown";
}

#define SGR_MAX_CWDS 8

/* The cwds a line may be in: the caller's, then every cd/pushd target seen so
 * far, each resolved against every earlier candidate.  Append-only, so a segment
 * keeps (base, count) as its view. */
typedef struct cwd_set {
    const char **v;
    uint32_t n;
    int unknown;
} cwd_set;

static void cwd_add(cwd_set *cs, const char *d)
{
    for (uint32_t i = 0; i < cs->n; i++)
        if (strcmp(cs->v[i], d) == 0)
            return;
    if (cs->n == SGR_MAX_CWDS)
        cs->unknown |= 1;                  /* too many places to follow: fail closed */
    else
        cs->v[cs->n++] = d;
}

/* Word t (a directory, nothing left for the shell to expand) resolved from each
 * of the places from[0..n) into tgt: 1, or 2 when it leads somewhere only known
 * at run time; -1 out of memory. */
static int dir_word(sgr_ctx *c, const char *const *from, uint32_t n, int from_unknown, const char *t,
                    uint32_t tl, uint32_t flags, cwd_set *tgt)
{
    if (from_unknown && t[0] != '/' && !(flags & SGR_W_TILDE))
        return 2;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t rl;
        int unk;
        char *r = resolve_path(c, from[n - 1 - k], t, tl, (flags & SGR_W_TILDE) != 0, &rl, NULL, &unk);
        if (!r)
            return -1;
        if (unk)
            return 2;                      /* into a directory only the process knows */
        cwd_add(tgt, r);
        if (t[0] == '/' || (flags & SGR_W_TILDE))
            break;                         /* the same place from every cwd */
    }
    return tgt->unknown ? 2 : 1;
}

/* If segment si changes directory (cd, pushd, popd): where it may lead from each
 * of its own cwds, into tgt (deduplicated; tgt's vector is allocated here, only
 * for cd and pushd: most segments change nothing).  Returns 1 for a directory
 * change with known targets, 0 for no change, 2 for a change to somewhere only
 * known at run time, 3 for a change to a directory the shell remembers from before
 * the line (cd - goes to OLDPWD, popd and pushd to the directory stack), 4 for a
 * glob (the directories it matches when it runs: a relative path after it is
 * dynamic, as after cd -), -1 on OOM. */
static int cd_targets(sgr_ctx *c, uint32_t si, cwd_set *tgt)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    int cd = nm->prog.len == 2 && memcmp(nm->prog.s, "cd", 2) == 0;
    int pushd = nm->prog.len == 5 && memcmp(nm->prog.s, "pushd", 5) == 0;
    if (nm->prog.len == 4 && memcmp(nm->prog.s, "popd", 4) == 0)
        return 3;
    if (!cd && !pushd)
        return 0;
    tgt->v = sg_arena_alloc(&c->arena, sizeof(char *) * SGR_MAX_CWDS);
    if (!tgt->v)
        return -1;
    uint32_t i = 1;
    while (i < s->argc && s->argv[i].len >= 2 && s->argv[i].text[0] == '-'
           && !(s->argv[i].len == 2 && s->argv[i].text[1] == '-'))
        i++;                               /* -L -P -e -@ */
    if (i < s->argc && s->argv[i].len == 2 && memcmp(s->argv[i].text, "--", 2) == 0)
        i++;
    const char *home = c->opts->home ? c->opts->home : getenv("HOME");
    const char *t;
    uint32_t tl, flags;
    if (i >= s->argc) {
        if (!cd)
            return 3;                      /* bare pushd swaps the stack */
        if (!home || home[0] != '/')
            return 2;
        t = "~";
        tl = 1;
        flags = SGR_W_TILDE;
    } else {
        const sgr_word *w = &s->argv[i];
        t = w->text;
        tl = w->len;
        flags = w->flags;
        if (flags & SGR_W_BRACE) {
            /* cd {/,}: the one word its brace expansion makes; more: cd fails */
            const char *one[2];
            uint32_t onel[2];
            int nb = sgr_sx_braces(&c->arena, t, tl, one, onel, 2);
            if (nb == -2)
                return -1;
            if (nb != 0 && nb != 1)
                return 2;
            if (nb == 1) {
                t = one[0];
                tl = onel[0];
                flags &= ~(uint32_t)SGR_W_BRACE;
            }
        }
        if ((tl == 1 && t[0] == '-' && !(flags & SGR_W_UNKNOWN)) || (pushd && (t[0] == '+' || t[0] == '-')))
            return 3;
        if ((flags & SGR_W_UNKNOWN) || (t[0] == '~' && tl > 1 && t[1] != '/'))
            return 2;
        if (flags & SGR_W_GLOB)
            return 4;                      /* the directories bash picks when it runs */
    }
    return dir_word(c, nm->cwds, nm->ncwds, nm->cwd_unknown, t, tl, flags, tgt);
}

/* A segment given a `cwd { ... }` option (env -C DIR, git -C DIR, make -C DIR)
 * works in DIR, and so does the command it runs: its places are its own and
 * every DIR resolved from them, each value from the places before it (git -C a
 * -C b is a/b).  Into *out; 1 when some value leads somewhere only known at run
 * time, 2 when some value is a glob (bash picks the directories it matches when
 * it runs: a relative path there is dynamic, as after cd -), 0 when neither, -1
 * out of memory. */
static int cwd_options(sgr_ctx *c, uint32_t si, cwd_set *out)
{
    const sgr_norm *nm = &c->res.norm[si];
    out->v = NULL;
    out->n = 0;
    out->unknown = 0;
    int glob = 0;
    for (uint32_t i = 0; i < nm->nvals; i++) {
        if (!(nm->vflags[i] & SGR_V_CWD))
            continue;
        if (!out->v) {
            if (!(out->v = sg_arena_alloc(&c->arena, sizeof(char *) * SGR_MAX_CWDS)))
                return -1;
            for (uint32_t k = 0; k < nm->ncwds; k++)
                out->v[out->n++] = nm->cwds[k];
            out->unknown = nm->cwd_unknown;
        }
        const char *t = nm->vals[i].s;
        uint32_t tl = nm->vals[i].len, fl = nm->vflags[i];
        cwd_set tgt = { sg_arena_alloc(&c->arena, sizeof(char *) * SGR_MAX_CWDS), 0, 0 };
        if (!tgt.v)
            return -1;
        /* a brace expansion is each of its words (env -C {/etc,} is env -C /etc;
         * bash drops its empty words); one that makes none, or too many, is a
         * place only known at run time */
        const char *one[8];
        uint32_t onel[8];
        int nw = tl ? 1 : 0;
        one[0] = t;
        onel[0] = tl;
        if (fl & SGR_W_BRACE) {
            nw = sgr_sx_braces(&c->arena, t, tl, one, onel, 8);
            if (nw == -2)
                return -1;
            fl &= ~(uint32_t)SGR_W_BRACE;
        }
        if (nw <= 0)
            out->unknown |= 1;
        glob |= (fl & SGR_W_GLOB) != 0;
        for (int k = 0; k < nw; k++) {
            const char *tw = one[k];
            uint32_t twl = onel[k];
            int r = 2;
            if (!(fl & (SGR_W_UNKNOWN | SGR_W_GLOB)) && !(twl == 1 && tw[0] == '-')
                && !((fl & SGR_W_TILDE) && tw[0] == '~' && twl > 1 && tw[1] != '/'))
                r = dir_word(c, out->v, out->n, out->unknown, tw, twl, fl & SGR_W_TILDE, &tgt);
            if (r < 0)
                return -1;
            if (r == 2)
                out->unknown |= 1;
        }
        for (uint32_t k = 0; k < tgt.n; k++)
            cwd_add(out, tgt.v[k]);
    }
    return glob ? 2 : out->unknown != 0;
}

/* prepare -> parse -> unwrap -> resolve cwd -> normalise -> decide (sgr_eval runs
 * it, then match_limits) */
static const sgr_result *eval_line(sgr_ctx *c, const char *line, size_t len, const sgr_opts *o)
{
    sg_arena_reset(&c->arena);
    sgr_result *r = &c->res;
    memset(r, 0, sizeof *r);
    memset(c->text_cache, -1, sizeof c->text_cache);
    c->line = line;
    c->len = len;
    c->opts = o;
    c->m_option.s = c->m_arg.s = c->m_path.s = NULL;
    c->pc_begun = 0;
    c->nmk = 0;
    c->mk = NULL;
    c->mk_mode = 0;
    /* A context that decides once (the CLI's check) gains nothing from the cache,
     * and dropping inotify watches costs milliseconds at exit: the cache comes
     * with the second call.  NULL (out of memory, or no inotify): lstat each time. */
    if (++c->ncalls == 2)
        c->pc = sgr_pc_new(0);
    if (c->pg)
        sgr_pg_trim(c->pg);             /* no state index outlives a call */
    const sgr_table *t = c->t;
    const char *cwd = o && o->cwd && o->cwd[0] == '/' ? o->cwd : "/nonexistent-cwd";
    sgr_opts dflt = { cwd, NULL, 0, NULL };
    if (!o)
        c->opts = o = &dflt;

    uint32_t cwdl;
    c->rcwd = NULL;                     /* the last call's is in the reset arena */
    const char *rcwd = resolve_cwd(c, cwd, &cwdl);
    if (rcwd) {
        c->rcwd = rcwd;                 /* before the roots: resolve_plain uses it */
        c->rcwdl = cwdl;
    }
    if (!rcwd || resolve_roots(c, o, rcwd) < 0) {
        oom_result(c);
        return r;
    }

    int pr = sgr_sh_parse(&c->arena, line, len, &c->lim, &r->cl);
    r->cl.platform = (uint8_t)c->platform;
    if (pr == -2) {
        oom_result(c);
        return r;
    }
    if (pr < 0 || r->cl.nseg == 0) {
        /* the line as a whole cannot be analysed: one dynamic pseudo-segment */
        const char *why = r->cl.error ? r->cl.error : (pr < 0 ? "cannot parse the command" : "empty command");
        r->cl.seg = sg_arena_zalloc(&c->arena, sizeof(sgr_segment));
        if (!r->cl.seg) {
            oom_result(c);
            return r;
        }
        r->cl.nseg = 1;
        r->cl.seg[0].parent = -1;
        r->cl.seg[0].pipe_len = 1;
        r->cl.seg[0].flags = SGR_SEG_DYNAMIC;
        r->cl.seg[0].dyn_reason = why;
        r->cl.seg[0].span.len = (uint32_t)(len > UINT32_MAX ? UINT32_MAX : len);
        r->cl.error = NULL;
        if (pr == 0) {
            /* an empty line runs nothing */
            r->cl.seg[0].flags = 0;
        }
    } else if (sgr_unwrap(&c->arena, &r->cl, t, &c->lim) == -2
               || sgr_state(&c->arena, &r->cl, t, c->code_set, &c->lim) == -2) {
        oom_result(c);
        return r;
    }

    uint32_t n = r->cl.nseg;
    r->norm = sg_arena_zalloc(&c->arena, sizeof *r->norm * n);
    r->seg_decision = sg_arena_zalloc(&c->arena, n);
    r->seg_rule = sg_arena_zalloc(&c->arena, sizeof *r->seg_rule * n);
    c->seg_msg = sg_arena_zalloc(&c->arena, sizeof *c->seg_msg * n);
    if (!r->norm || !r->seg_decision || !r->seg_rule || !c->seg_msg) {
        oom_result(c);
        return r;
    }
    /* normalise.  A segment may run in the caller's cwd or after any cd/pushd seen
     * before it on the line: a cd can fail, and a subshell's cd does not outlive
     * it.  Only within `cd X && ...` is the directory certain. */
    cwd_set all = { sg_arena_alloc(&c->arena, sizeof(char *) * SGR_MAX_CWDS), 0, 0 };
    if (!all.v) {
        oom_result(c);
        return r;
    }
    all.v[all.n++] = rcwd;
    cwd_set sure = { NULL, 0, 0 };        /* the && chain after a cd, when there is one */
    /* grep() { command grep -e. "$@"; }; grep KEY reads KEY: where the line defines
     * a function, no program's declaration says what is text */
    c->funcdefs = 0;
    c->nprogs = 0;                      /* seg_features': counted in the same pass */
    for (uint32_t i = 0; i < n; i++) {
        c->funcdefs |= (r->cl.seg[i].flags & SGR_SEG_FUNCDEF) != 0;
        c->nprogs += r->cl.seg[i].argc > 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        const char *const *cw;
        uint32_t ncw;
        int unk;
        if (s->parent >= 0) {
            cw = r->norm[s->parent].cwds;
            ncw = r->norm[s->parent].ncwds;
            unk = r->norm[s->parent].cwd_unknown;
        } else if (sure.v) {
            cw = sure.v;
            ncw = sure.n;
            unk = 0;
        } else {
            cw = all.v;
            ncw = all.n;
            unk = all.unknown;
        }
        if (sgr_norm_segment(c, i, cw[ncw - 1]) < 0 || sgr_path_brace_check(c, i) < 0) {
            oom_result(c);
            return r;
        }
        r->norm[i].cwds = cw;
        r->norm[i].ncwds = ncw;
        r->norm[i].cwd_unknown = unk;
        if (r->norm[i].nvals) {
            cwd_set own;
            int ou = cwd_options(c, i, &own);
            if (ou < 0) {
                oom_result(c);
                return r;
            }
            if (own.v) {
                r->norm[i].cwds = own.v;
                r->norm[i].ncwds = own.n;
                r->norm[i].cwd_unknown = unk | (ou == 2 ? 4 | 1 : ou);
            }
        }
        int cu = r->norm[i].cwd_unknown;
        if ((cu & 6) && !(r->cl.seg[i].flags & SGR_SEG_DYNAMIC)) {
            /* after cd - or popd, what a relative path names depends on the directory
             * the shell had before the line: state the line does not show; so it
             * does in the directories a glob names (cd /et[c]; env -C /et[c], for
             * the segment and what it runs) */
            if (sgr_path_resolve_paths(c, i) < 0) {
                oom_result(c);
                return r;
            }
            if (r->norm[i].rel_unknown) {
                r->cl.seg[i].flags |= SGR_SEG_DYNAMIC;
                r->cl.seg[i].dyn_reason = cu & 2 ? "a relative path after cd - or popd, which go to a directory from before the line"
                                                 : "a relative path in the directories a glob names (cd /et[c], env -C /et[c]), which bash picks when it runs";
            }
        }
        cwd_set tgt = { NULL, 0, 0 };
        int ch = cd_targets(c, i, &tgt);
        if (ch < 0) {
            oom_result(c);
            return r;
        }
        if (ch >= 2)
            all.unknown |= ch == 3 ? 3 : ch == 4 ? 5 : 1;
        for (uint32_t k = 0; ch == 1 && k < tgt.n; k++)
            cwd_add(&all, tgt.v[k]);
        if (s->parent >= 0)
            continue;
        int chained = s->connector == SGR_CONN_AND && s->pipe_len == 1
                      && !(s->flags & (SGR_SEG_BACKGROUND | SGR_SEG_SUBSHELL));
        if (ch == 1 && chained)
            sure = tgt;                    /* `cd X && next`: next runs in X */
        else if (ch >= 2 && chained)
            sure.v = NULL;                 /* unknown: the general set (marked unknown) */
        else if (!(chained && sure.v))
            sure.v = NULL;                 /* the chain ended (;, ||, &, a pipeline) */
        if (ch >= 2)
            sure.v = NULL;
    }

    /* files made on the line, before any path is judged */
    if (sgr_path_made_words(c) < 0 || sgr_path_made_resolve(c) < 0 || sgr_path_runs_made(c) < 0) {
        oom_result(c);
        return r;
    }

    int32_t best = SGR_RULE_DEFAULT, bestseg = -1;
    uint32_t bestd = SGT_ALLOW;
    int have = 0;
    sgr_sv bo = { 0 }, ba = { 0 }, bp = { 0 };
    for (uint32_t i = 0; i < n; i++) {
        int32_t ru;
        uint32_t d;
        if (r->cl.seg[i].argc == 0 && r->cl.seg[i].nredirs == 0 && r->cl.seg[i].nassigns == 0
            && r->cl.seg[i].nvalues == 0 && !(r->cl.seg[i].flags & SGR_SEG_DYNAMIC)) {
            r->seg_decision[i] = SGT_ALLOW;     /* nothing to run */
            r->seg_rule[i] = SGR_RULE_DEFAULT;
            if (!have && n == 1) {
                best = SGR_RULE_DEFAULT;
                bestd = SGT_ALLOW;
            }
            continue;
        }
        if (decide_segment(c, i, &ru, &d) < 0) {
            oom_result(c);
            return r;
        }
        sgr_norm *nm = &r->norm[i];
        if (nm->has_alt) {
            /* the other reading of an abbreviated value option (normalise_segment):
             * the stricter verdict, its subcommand the one messages name */
            sgr_sv mo = c->m_option, ma = c->m_arg, mp = c->m_path, sub = nm->subcmd;
            int32_t ru2;
            uint32_t d2;
            nm->subcmd = nm->subcmd_alt;
            if (decide_segment(c, i, &ru2, &d2) < 0) {
                oom_result(c);
                return r;
            }
            if (better_seg(d2, ru2, d, ru)) {
                ru = ru2;
                d = d2;
            } else {
                nm->subcmd = sub;
                c->m_option = mo;
                c->m_arg = ma;
                c->m_path = mp;
            }
        }
        r->seg_decision[i] = (uint8_t)d;
        r->seg_rule[i] = ru;
        if (!have || better_seg(d, ru, bestd, best)) {
            have = 1;
            best = ru;
            bestd = d;
            bestseg = (int32_t)i;
            bo = c->m_option;
            ba = c->m_arg;
            bp = c->m_path;
        }
    }
    /* whole-line rules */
    for (uint32_t k = 0; k < t->meta->line_len; k++) {
        uint32_t ri = t->lists[t->meta->line_off + k];
        const sgt_rule *ru = &t->rules[ri];
        int m = run_line(c, ru->code_off, ru->code_len);
        if (c->trace)
            c->trace(c->trace_ud, -1, ri, m);
        if (m > 0 && (!have || better_seg(ru->decision, (int32_t)ri, bestd, best))) {
            have = 1;
            best = (int32_t)ri;
            bestd = ru->decision;
            bestseg = -1;
        }
    }
    if (!have) {
        /* nothing to run at all (an empty line or only comments) */
        r->decision = SGT_ALLOW;
        r->rule = SGR_RULE_DEFAULT;
        r->seg = -1;
        r->rule_id = "empty";
        r->message = "nothing to run";
        r->hint = "";
        return r;
    }
    r->decision = bestd;
    r->rule = best;
    r->seg = bestseg;
    r->rule_id = sgr_rule_name(t, best);
    c->m_option = bo;
    c->m_arg = ba;
    c->m_path = bp;
    const char *reason = bestseg >= 0 ? r->cl.seg[bestseg].dyn_reason : NULL;
    if (best == SGR_RULE_DYNAMIC) {
        r->message = sgr_msg_fill(c, DYN_MSG, sgr_msg_tmpl_for(c, t->nrules + 1, DYN_MSG), bestseg, r->rule_id,
                          reason ? reason : "unknown");
        r->hint = "Write the command out literally: names and code that only exist when it runs cannot be checked.";
    } else if (best == SGR_RULE_NOTHING) {
        r->message = "nothing runs: the line only sets variables or opens files";
        r->hint = "";
    } else if (best == SGR_RULE_DEFAULT) {
        const char *dm = sgr_str(t, t->meta->default_msg);
        r->message = sgr_msg_fill(c, dm, sgr_msg_tmpl_for(c, t->nrules, dm), bestseg, r->rule_id, reason);
        r->hint = sgr_str(t, t->meta->default_hint);
    } else {
        const char *hm = bestseg >= 0 ? c->seg_msg[bestseg] : NULL;
        const char *rm = sgr_str(t, t->rules[best].msg);
        r->message = sgr_msg_fill(c, hm ? hm : rm, hm ? NULL : sgr_msg_tmpl_for(c, (uint32_t)best, rm), bestseg, r->rule_id, reason);
        r->hint = sgr_str(t, t->rules[best].hint);
    }
    return r;
}

/* Does limit `limit` of the table apply to the command c just decided?  A limit
 * without a `when` condition applies to every command; one with a condition applies
 * when the condition holds for at least one segment (every evaluation has one, so
 * conditions on the raw line are tested there too).  1, 0, or -1 when its code
 * fails. */
static int limit_applies(sgr_ctx *c, uint32_t limit)
{
    const sgt_limit *l = &c->t->limits[limit];
    if (l->code_len == 0)
        return 1;
    sgr_sv save_o = c->m_option, save_a = c->m_arg, save_p = c->m_path;
    int hit = 0;
    for (uint32_t i = 0; i < c->res.cl.nseg && !hit; i++) {
        int m = run(c, i, l->code_off, l->code_len, 0);
        if (m < 0) {
            hit = -1;
            break;
        }
        hit = m;
    }
    c->m_option = save_o;
    c->m_arg = save_a;
    c->m_path = save_p;
    return hit < 0 ? -1 : hit != 0;
}

/* The decide stage's last step: the limits that apply, listed in the result so
 * admission never calls back into the evaluator (eval.h sgr_result.limits). */
static void match_limits(sgr_ctx *c)
{
    sgr_result *r = &c->res;
    uint32_t n = c->t->nlimits;
    if (n == 0)
        return;
    uint32_t *v = r->oom || !r->norm ? NULL : sg_arena_alloc(&c->arena, sizeof *v * n);
    if (!v) {
        r->limits_error = 1;            /* an out-of-memory deny: nothing to admit */
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        int m = limit_applies(c, i);
        if (m < 0) {
            r->limits_error = 1;
            break;
        }
        if (m)
            v[r->nlimits++] = i;
    }
    r->limits = v;
}

const sgr_result *sgr_eval(sgr_ctx *c, const char *line, size_t len, const sgr_opts *o)
{
    eval_line(c, line, len, o);
    match_limits(c);
    return &c->res;
}
