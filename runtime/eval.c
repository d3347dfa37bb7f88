/* eval.c - the decision: parse, unwrap, normalise each segment, run the candidate
 * rules' bytecode, combine deny > ask > allow over rules and segments.  The stages
 * other than the walk over the rules live beside it (see eval_int.h). */
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
 * in sgr_pred_run() (ORDER OP: op_needs and sgr_pred_run() must agree). */


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
 * (the basename is in S), so sgr_pred_run() may start after it: implied_of marks such
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

/* ---- cwd, roots, and each segment decided ---------------------------------- */

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
    int64_t all = sgr_pred_paths_mask(c, &c->res.norm[si]);
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
        int m = w->from == WALK_PROVED ? 1 : sgr_pred_run(c, si, ru->code_off, ru->code_len, w->from);
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
        int m = sgr_pred_run_line(c, ru->code_off, ru->code_len);
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
        int m = sgr_pred_run(c, i, l->code_off, l->code_len, 0);
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
