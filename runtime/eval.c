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

#define SGR_MAX_CHAIN 64                    /* enclosing commands runs_before follows */
#define SGR_MK_PICKS 64                     /* made_link: choices walked for one path */

/* A name made on the line, resolved (see made_files). */
typedef struct sgr_mkres {
    uint32_t seg;
    const char *name;                   /* the made path */
    uint32_t nl;
    const char *ta, *tb;                /* a copy or link: its source as a symlink reads
                                         * it, and resolved from the cwd; NULL: written */
    uint32_t tal, tbl;
    int lost;                           /* a link to a place known only at run time
                                         * (ln -s "$D" x) */
    int glob;                           /* a link to what a glob matches (ln -s /e*c x):
                                         * ta is the glob, read as a pattern */
    const struct sgr_ppat *npat;        /* the name is a pattern too (ln -s /e*c -t d:
                                         * d/e*c), NULL: the name itself */
    uint32_t pflags;                    /* a link to a word the shell still expands
                                         * (ln -s /u$(x)r/../etc d): its SGR_W_* flags; ta
                                         * is the word as written, tb the same from the
                                         * cwd; the path through it is read as a pattern */
} sgr_mkres;

static int part_relative(const char *w, uint32_t flags);


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

/* ---- paths ------------------------------------------------------------------ */

/* Resolve word text against cwd (and ~ against home) the way the kernel walks
 * it: component by component from an already-resolved base, following each
 * symlink (so `link/../x` goes where the link points, not where the text says),
 * appending the rest lexically once a component does not exist.  One lstat per
 * component of the operand itself.  Returns an arena string, or NULL on OOM;
 * a symlink loop yields "/" + "(symlink loop)", which no root contains. */
/* resolve_path's short way for the commonest operands, plain names relative to
 * the caller's cwd ("src", "*.c", "docs/language.md", "runtime/"): the lookups
 * the walk would make, one per component up to the first missing one, and its
 * result.  0: not such an operand (an absolute path, ~, a "." or ".." or empty
 * component) or a component is a symlink (the walk follows it); 1: *out is the
 * result (NULL: out of memory). */
static int resolve_plain(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde, char **out,
                         uint32_t *outlen)
{
    if (cwd != c->rcwd || w[0] == '/' || (tilde && w[0] == '~') || (cwd[1] == 'p' || cwd[1] == 'd'))
        return 0;                           /* (a cwd under /proc or /dev: the walk) */
    while (wl > 1 && w[wl - 1] == '/')
        wl--;                               /* "dir/" is "dir", as the walk has it */
    if ((size_t)c->rcwdl + 1 + wl >= PATH_MAX + 1)
        return 0;
    char p[PATH_MAX + 1];
    size_t n = c->rcwdl;
    memcpy(p, c->rcwd, n);
    if (n > 1)
        p[n++] = '/';
    size_t cs = n;
    memcpy(p + n, w, wl);
    n += wl;
    p[n] = '\0';
    int missing = 0;
    for (;;) {
        const char *sl = memchr(p + cs, '/', n - cs);
        size_t ce = sl ? (size_t)(sl - p) : n, cl = ce - cs;
        if (cl == 0 || (p[cs] == '.' && (cl == 1 || (cl == 2 && p[cs + 1] == '.'))))
            return 0;
        if (!missing) {
            /* p[0..cs - 1) is canonical: the cwd and components that are neither
             * links nor missing.  A link's target is not wanted (the walk reads it) */
            p[ce] = '\0';
            sgr_pc_kind k = sgr_pc_kind_next(c->pc, p, ce, cs);
            p[ce] = ce < n ? '/' : '\0';
            if (k == SGR_PC_LINK)
                return 0;
            missing = k == SGR_PC_MISSING;
        }
        if (ce == n)
            break;
        cs = ce + 1;
    }
    *outlen = (uint32_t)n;
    *out = sg_arena_strndup(&c->arena, p, n);
    return 1;
}

/* sgr_pc_begin once a call, before its first lookup (pathcache.h). */
static inline void lookups_begin(sgr_ctx *c)
{
    if (!c->pc_begun) {
        sgr_pc_begin(c->pc);
        c->pc_begun = 1;
    }
}

static inline char *resolve_path(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde,
                                 uint32_t *outlen, int *plain, int *unk);

/* Does segment a run before segment b: are their outermost different enclosing
 * commands (or they themselves), children of one command or both of the line,
 * in that order?  Unwrapped and script segments come after the ones before them
 * on the line, so the order of indices alone does not say.  Neither runs before
 * the other when one encloses the other. */
static int runs_before(const sgr_cmdline *cl, uint32_t a, uint32_t b)
{
    uint32_t ca[SGR_MAX_CHAIN], cb[SGR_MAX_CHAIN], na = 0, nb = 0;
    for (int32_t x = (int32_t)a; x >= 0 && na < SGR_MAX_CHAIN; x = cl->seg[x].parent)
        ca[na++] = (uint32_t)x;
    for (int32_t x = (int32_t)b; x >= 0 && nb < SGR_MAX_CHAIN; x = cl->seg[x].parent)
        cb[nb++] = (uint32_t)x;
    while (na && nb && ca[na - 1] == cb[nb - 1]) {
        na--;
        nb--;
    }
    return na && nb && ca[na - 1] < cb[nb - 1];
}

/* The target of a link or copy made at p[0..n) by a segment before c->mk_seg, as
 * c->mk_mode reads it (1: as a symlink, 2: from the cwd); NULL: none. */
static int made_here(sgr_ctx *c, const sgr_mkres *m, const char *p, size_t n)
{
    int named = m->npat ? sgr_pp_word(m->npat, p, n, 0) : m->nl == n && memcmp(m->name, p, n) == 0;
    return m->ta && named && runs_before(&c->res.cl, m->seg, c->mk_seg);
}

static const char *made_link(sgr_ctx *c, const char *p, size_t n, size_t *len)
{
    /* A name made more than once may be any of them (`ln -s /etc x; ln -sf /tmp x`
     * leaves x -> /etc and makes /etc/tmp): the walk takes the one c->mk_pick
     * says, counting from the latest, and multiplies c->mk_radix by how many
     * there are, so that add_one_path walks every choice (SGR_MK_PICKS at most). */
    uint32_t cnt = 0;
    for (uint32_t i = c->nmk; i-- > 0;)
        cnt += (uint32_t)made_here(c, &c->mk[i], p, n);
    if (!cnt)
        return NULL;
    uint32_t radix = c->mk_radix ? c->mk_radix : 1;
    uint32_t want = cnt > 1 ? (c->mk_pick / radix) % cnt : 0;
    if (cnt > 1)
        c->mk_radix = radix > SGR_MK_PICKS ? radix : radix * cnt;
    for (uint32_t i = c->nmk; i-- > 0;) {
        const sgr_mkres *m = &c->mk[i];
        if (made_here(c, m, p, n) && want-- == 0) {
            if (m->lost || (m->pflags && !c->mk_part_ok)) {
                *len = 0;
                return "";                  /* some place: the walk's "lost" */
            }
            if (m->pflags) {
                c->mk_pflags = m->pflags;   /* the walk splices it as written */
                int b = c->mk_mode == 2;
                *len = b ? m->tbl : m->tal;
                return b ? m->tb : m->ta;
            }
            c->mk_glob |= m->glob;
            int b = c->mk_mode == 2 && m->tb;
            *len = b ? m->tbl : m->tal;
            return b ? m->tb : m->ta;
        }
    }
    return NULL;
}

/* What the walk's canonical prefix p[0..n) is to the kernel's /proc (the agent's
 * shell is another process than this one, so /proc/self is resolved by what it
 * means, never by following this process's link): PROC_PID a process directory
 * (/proc/self, /proc/thread-self, /proc/N, and their task/N), PROC_TASK its task
 * directory, PROC_FD its fd directory, PROC_NO anything else.  *self: the
 * process is the one running the command (self or thread-self). */
enum { PROC_NO, PROC_PID, PROC_TASK, PROC_FD };

static int is_pid_name(const char *s, size_t l)
{
    if ((l == 4 && memcmp(s, "self", 4) == 0) || (l == 11 && memcmp(s, "thread-self", 11) == 0))
        return 2;
    for (size_t i = 0; i < l; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return l > 0;
}

__attribute__((noinline))
static int proc_kind(const char *p, size_t n, int *self)
{
    if (n < 7 || memcmp(p, "/proc/", 6) != 0)
        return PROC_NO;
    size_t i = 6, kind = PROC_NO;
    int pid = 0;
    while (i < n) {
        size_t b = i;
        while (i < n && p[i] != '/')
            i++;
        size_t l = i - b;
        const char *cp = p + b;
        if (kind == PROC_NO && b == 6 && (pid = is_pid_name(cp, l)) != 0)
            kind = PROC_PID, *self = pid == 2;
        else if (kind == PROC_PID && l == 4 && memcmp(cp, "task", 4) == 0)
            kind = PROC_TASK;
        else if (kind == PROC_TASK && is_pid_name(cp, l) == 1)
            kind = PROC_PID;
        else if (kind == PROC_PID && l == 2 && memcmp(cp, "fd", 2) == 0)
            kind = PROC_FD;
        else
            return PROC_NO;
        i++;
    }
    return (int)kind;
}

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
static char *resolve_walk(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde, uint32_t *outlen,
                          int *unk)
{
    const char *home = NULL, *base = cwd, *rel = w;
    uint32_t rl = wl;
    if (unk)
        *unk = 0;
    if (w[0] == '/') {
        base = "/";
    } else if (tilde && w[0] == '~' && (wl == 1 || w[1] == '/')
               && (home = c->opts->home ? c->opts->home : getenv("HOME")) && home[0] == '/') {
        uint32_t hl;
        base = resolve_path(c, "/", home, (uint32_t)strlen(home), 0, &hl, NULL, NULL);
        if (!base)
            return NULL;
        rel = w + 1;
        rl = wl - 1;
    }
    /* walk in stack buffers; only the result goes to the arena, so resolving many
     * operands does not outgrow the context's first arena block.  base is "/" or
     * an earlier result, so p is canonical before each component is appended (what
     * sgr_pc_lstat_next relies on) */
    enum { cap = PATH_MAX + 1 };
    char p[cap], q[cap];
    size_t n = strlen(base);
    if (n >= cap)
        n = cap - 1;
    memcpy(p, base, n);
    while (n > 1 && p[n - 1] == '/')
        n--;
    p[n] = '\0';
    /* the components still to walk: src[qi..ql), the word itself until a symlink's
     * target is spliced in front of its rest (in q) */
    const char *src = rel;
    size_t ql = rl < cap - 1 ? rl : cap - 1, qi = 0;
    int missing = 0, hops = 0, lost = 0;     /* lost: p is relative to an unknown place */
    char link[PATH_MAX];
    while (qi < ql) {
        if (src[qi] == '/') {
            qi++;
            continue;
        }
        size_t cs = qi;
        const char *slash = memchr(src + qi, '/', ql - qi);
        qi = slash ? (size_t)(slash - src) : ql;
        size_t cl = qi - cs;
        if (cl == 1 && src[cs] == '.')
            continue;
        if (cl == 2 && src[cs] == '.' && src[cs + 1] == '.') {
            if (lost)
                n = 1;                          /* the parent of an unknown place */
            while (n > 1 && p[n - 1] != '/')
                n--;
            if (n > 1)
                n--;
            p[n] = '\0';
            continue;
        }
        if (!missing && n >= 4 && (p[1] == 'p' || p[1] == 'd')) {
            /* /dev/fd, /dev/std*: the agent's own descriptors, /proc/self/fd/N */
            int self = 0, k = PROC_NO;
            if (n == 4 && memcmp(p, "/dev", 4) == 0) {
                static const char *const std[] = { "stdin", "stdout", "stderr" };
                int sk = -1;
                for (int j = 0; j < 3; j++)
                    if (cl == strlen(std[j]) && memcmp(src + cs, std[j], cl) == 0)
                        sk = j;
                if (sk >= 0 || (cl == 2 && memcmp(src + cs, "fd", 2) == 0)) {
                    memcpy(p, "/proc/self/fd", 14);
                    n = 13;
                    if (sk < 0)
                        continue;
                    k = PROC_FD;               /* /dev/stdin: the descriptor itself */
                    cs = qi;
                    cl = 0;
                    p[n++] = '/';
                    p[n++] = (char)('0' + sk);
                    p[n] = '\0';
                }
            } else if (n == 5 && memcmp(p, "/proc", 5) == 0 && is_pid_name(src + cs, cl)) {
                p[n++] = '/';
                memcpy(p + n, src + cs, cl);
                n += cl;
                p[n] = '\0';
                continue;                       /* not this process's /proc/self link */
            } else {
                k = proc_kind(p, n, &self);
            }
            if (k == PROC_PID && cl == 4 && memcmp(src + cs, "root", 4) == 0) {
                n = 1;                          /* that process's "/" */
                p[1] = '\0';
                continue;
            }
            if (k == PROC_PID && cl == 3 && memcmp(src + cs, "cwd", 3) == 0 && self && cwd[0] == '/') {
                n = strlen(cwd);                /* the directory the command runs in */
                n = n < cap ? n : cap - 1;
                memmove(p, cwd, n);
                p[n] = '\0';
                continue;
            }
            if (k == PROC_FD && (cl == 0 || is_pid_name(src + cs, cl) == 1)) {
                /* a descriptor: whatever it names is known only when the command
                 * runs; what follows it is relative to that */
                size_t rest = qi;
                while (rest < ql && src[rest] == '/')
                    rest++;
                if (rest < ql) {
                    lost = missing = 1;
                    n = 1;
                    p[1] = '\0';
                    continue;
                }
            }
            if (k != PROC_NO) {
                int takes = (k == PROC_PID && ((cl == 2 && memcmp(src + cs, "fd", 2) == 0)
                                               || (cl == 4 && memcmp(src + cs, "task", 4) == 0)))
                            || (k == PROC_TASK && is_pid_name(src + cs, cl) == 1);
                if (k == PROC_PID && cl == 3 && memcmp(src + cs, "cwd", 3) == 0) {
                    lost = missing = 1;          /* another process's cwd */
                    n = 1;
                    p[1] = '\0';
                    continue;
                }
                if (!takes)
                    missing = 1;                /* a file of that process: its name */
                if (cl) {
                    p[n++] = '/';
                    memcpy(p + n, src + cs, cl);
                    n += cl;
                    p[n] = '\0';
                }
                continue;
            }
        }
        if (n + 1 + cl >= cap)
            break;                                  /* longer than PATH_MAX: stop */
        size_t before = n;
        if (n > 1 || p[0] != '/')
            p[n++] = '/';
        memcpy(p + n, src + cs, cl);
        n += cl;
        p[n] = '\0';
        size_t ll = 0;
        sgr_pc_kind kind;
        const char *made = c->mk_mode && !lost ? made_link(c, p, n, &ll) : NULL;
        if (made && ll == 0) {
            /* a link made to a place known only at run time: the rest is below it */
            c->mk_used = 1;
            c->mk_pflags = 0;
            lost = missing = 1;
            n = 1;
            p[1] = '\0';
            continue;
        }
        if (made && c->mk_pflags) {
            /* a link to a word the shell still expands: the rest is read as the
             * pattern that word and the rest make (the link's directory first for a
             * relative link; a copy's word already starts from its cwd) */
            c->mk_used = 1;
            int relt = part_relative(made, c->mk_pflags);
            size_t rest = ql - qi;
            n = relt && c->mk_mode == 1 ? before : 0;
            if (n + 1 + ll + rest >= cap) {
                c->mk_pflags = 0;           /* too long to read as one: some place */
                lost = missing = 1;
                n = 1;
                p[1] = '\0';
                break;
            }
            if (n && !(n == 1 && p[0] == '/'))
                p[n++] = '/';
            memcpy(p + n, made, ll);
            n += ll;
            memcpy(p + n, src + qi, rest);
            n += rest;
            p[n] = '\0';
            break;
        }
        if (made && ll < sizeof link) {
            /* made earlier on the line: read through as the link or copy it is */
            memcpy(link, made, ll);
            link[ll] = '\0';
            kind = SGR_PC_LINK;
            missing = 0;
            c->mk_used = 1;
        } else if (missing) {
            continue;
        } else {
            kind = sgr_pc_lstat_next(c->pc, p, n, n - cl, link, sizeof link, &ll);
        }
        if (kind == SGR_PC_MISSING) {
            missing = 1;
            continue;
        }
        if (kind != SGR_PC_LINK)
            continue;
        if (ll == 0 || ++hops > 40) {
            const char loop[] = "/(symlink loop)";
            memcpy(p, loop, sizeof loop);
            n = sizeof loop - 1;
            break;
        }
        /* replace the link by its target, then walk the rest after it */
        n = link[0] == '/' ? 1 : before;      /* back to the link's directory */
        if (n == 0)
            n = 1;
        p[0] = p[0] ? p[0] : '/';
        if (link[0] == '/')
            p[0] = '/';
        p[n] = '\0';
        size_t rest = ql - qi;
        if (ll + 1 + rest >= cap)
            break;
        memmove(q + ll + 1, src + qi, rest);
        memcpy(q, link, ll);
        q[ll] = '/';
        ql = ll + 1 + rest;
        src = q;
        qi = 0;
    }
    if (lost && unk) {
        *unk = 1;
    } else if (lost) {
        const char gone[] = "/(unknown)";
        memcpy(p, gone, sizeof gone);
        n = sizeof gone - 1;
    }
    *outlen = (uint32_t)n;
    return sg_arena_strndup(&c->arena, p, n);
}

/* w resolved against cwd: resolve_plain's short way when it takes w (then *plain,
 * when not NULL, is 1: the result is the resolved cwd, a '/' and more), else the
 * walk (unk: see there).  NULL: out of memory. */
static inline char *resolve_path(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde,
                                 uint32_t *outlen, int *plain, int *unk)
{
    lookups_begin(c);
    char *named;
    int short_way = resolve_plain(c, cwd, w, wl, tilde, &named, outlen);
    if (plain)
        *plain = short_way;
    if (short_way && unk)
        *unk = 0;
    return short_way ? named : resolve_walk(c, cwd, w, wl, tilde, outlen, unk);
}

static int under(const char *p, uint32_t pl, const char *root)
{
    size_t rl = strlen(root);
    if (rl == 1 && root[0] == '/')
        return 1;
    return pl >= rl && memcmp(p, root, rl) == 0 && (pl == rl || p[rl] == '/');
}

/* Is resolved path p[0..pl) a root or below one? */
static int inside_roots(const sgr_ctx *c, const char *p, uint32_t pl)
{
    for (uint32_t i = 0; i < c->nroots; i++)
        if (under(p, pl, c->roots[i]))
            return 1;
    return 0;
}

/* ---- streams ------------------------------------------------------------------
 * Names that open one of the command's own streams, not a file: /dev/null,
 * /dev/tty, /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N and
 * /proc/thread-self/fd/N -- each only as exactly itself once "//", "/." and a
 * trailing "/" are folded (/dev//null, /dev/./fd/1), never as a prefix:
 * /dev/fd/../../etc/shadow names a file, which the walk resolves. */
#define STREAM_NONE (-1)                    /* a file name */
#define STREAM_DEV  (-2)                    /* /dev/null, /dev/tty */

__attribute__((noinline))
static int stream_slow(const char *s, uint32_t n)
{
    const char *cp[4];
    uint32_t cl[4], k = 0;
    for (uint32_t i = 0; i < n;) {
        while (i < n && s[i] == '/')
            i++;
        uint32_t b = i;
        while (i < n && s[i] != '/')
            i++;
        uint32_t l = i - b;
        if (l == 0 || (l == 1 && s[b] == '.'))
            continue;
        if (k == 4 || (l == 2 && s[b] == '.' && s[b + 1] == '.'))
            return STREAM_NONE;
        cp[k] = s + b;
        cl[k++] = l;
    }
#define IS(j, lit) (cl[j] == sizeof lit - 1 && memcmp(cp[j], lit, sizeof lit - 1) == 0)
    uint32_t fdc = 0;                       /* the component that holds N */
    if (k == 2 && IS(0, "dev"))
        return IS(1, "null") || IS(1, "tty") ? STREAM_DEV
             : IS(1, "stdin") ? 0 : IS(1, "stdout") ? 1 : IS(1, "stderr") ? 2 : STREAM_NONE;
    if (k == 3 && IS(0, "dev") && IS(1, "fd"))
        fdc = 2;
    else if (k == 4 && IS(0, "proc") && (IS(1, "self") || IS(1, "thread-self")) && IS(2, "fd"))
        fdc = 3;
    else
        return STREAM_NONE;
#undef IS
    int fd = 0;
    for (uint32_t i = 0; i < cl[fdc]; i++) {
        if (cp[fdc][i] < '0' || cp[fdc][i] > '9')
            return STREAM_NONE;
        fd = fd < 100000000 ? fd * 10 + (cp[fdc][i] - '0') : fd;
    }
    return fd;
}

/* s[0..n) as a stream: STREAM_NONE (a file), STREAM_DEV or the descriptor
 * number.  The test that fails for nearly every operand is inline. */
static inline int stream_of(const char *s, uint32_t n)
{
    return n >= 8 && s[0] == '/' && (s[1] == 'd' || s[1] == 'p' || s[1] == '/' || s[1] == '.')
           ? stream_slow(s, n) : STREAM_NONE;
}

/* Does reading or naming s[0..n) open no file (a stream)? */
static inline int not_a_file(const char *s, uint32_t n)
{
    return stream_of(s, n) != STREAM_NONE;
}

/* The descriptor redirection r opens, unless it names it (r->fd). */
static int redir_fd(const sgr_redir *r)
{
    if (r->fd >= 0)
        return r->fd;
    switch (r->kind) {
    case SGR_REDIR_READ: case SGR_REDIR_RDWR: case SGR_REDIR_HEREDOC: case SGR_REDIR_HERESTRING:
    case SGR_REDIR_DUP_IN:
        return 0;
    default:
        return 1;                           /* &> and &>> open 1 (and 2) */
    }
}

/* What write redirection r of segment s, whose target names stream fd, writes.
 * bash opens the name afresh, so `> /dev/stdin` truncates the file descriptor 0
 * reads.  0: no file (the null device, the terminal, the caller's stdout or
 * stderr, a pipe, a here-document); 1: the file an earlier redirection of s
 * opened on fd, itself a path candidate; 2: a file known only when the command
 * runs (what descriptor 0 or N of the caller names). */
static int stream_write(const sgr_segment *s, const sgr_redir *r, int fd, const sgr_redir **srcp)
{
    if (fd == STREAM_DEV || fd == 1 || fd == 2)
        return 0;
    const sgr_redir *src = NULL;
    for (const sgr_redir *e = s->redirs; e < r; e++)
        if (redir_fd(e) == fd || ((e->kind == SGR_REDIR_BOTH || e->kind == SGR_REDIR_BOTH_APPEND) && fd == 2))
            src = e;
    if (!src)
        return fd == 0 && s->pipe_index > 0 ? 0 : 2;
    if (src->kind == SGR_REDIR_HEREDOC || src->kind == SGR_REDIR_HERESTRING)
        return 0;
    if (src->kind == SGR_REDIR_DUP_IN || src->kind == SGR_REDIR_DUP_OUT)
        return src->target.len == 1 && src->target.text[0] == '-' ? 0 : 2;
    int st = stream_of(src->target.text, src->target.len);
    if (srcp)
        *srcp = src;
    return st == STREAM_NONE ? 1 : st == STREAM_DEV ? 0 : 2;
}

static int add_one_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                        const char *cwd);
static int add_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags);
static int splice_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *a, uint32_t al, const char *b,
                           uint32_t bl, uint32_t flags);
static int is_write(const sgr_segment *s, const sgr_redir *r);

/* In sgr_norm.pin: the path group's mask is in the low 32 bits (path_mask ran);
 * the path is the resolved cwd (not "/"), a '/' and more (set by add_one_path,
 * which knows it without a comparison for most paths: path_mask resumes after
 * the cwd). */
#define PIN_RUN ((uint64_t)1 << 32)
#define PIN_CWD ((uint64_t)1 << 33)

/* Count w[0..wl), a value known only when the command runs, as outside the
 * workspace (the first such path is the one messages name). */
static void mark_unknown(sgr_norm *nm, const char *w, uint32_t wl)
{
    nm->unknown_paths++;
    if (!nm->outside) {
        nm->outside = 1;
        nm->outside_path.s = w;
        nm->outside_path.len = wl;
    }
}

static int name_byte(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* May the line give HOME another value before a word is expanded (HOME=x,
 * export/read/declare/unset HOME, for HOME in ...)?  Then ~ and $HOME are known
 * only at run time.  A plain reading of the text: "HOME" as a name of its own,
 * not after '$' or "${". */
static int line_sets_home(sgr_ctx *c)
{
    if (c->sets_home_call != c->ncalls) {
        c->sets_home_call = c->ncalls;
        c->sets_home = 0;
        const char *l = c->line, *e = l + c->len;
        for (const char *p = memmem(l, c->len, "HOME", 4); p && !c->sets_home;
             p = memmem(p + 1, (size_t)(e - p - 1), "HOME", 4)) {
            char b = p > l ? p[-1] : ' ', b2 = p > l + 1 ? p[-2] : ' ', a = p + 4 < e ? p[4] : ' ';
            c->sets_home = !name_byte(b) && b != '$' && !(b == '{' && b2 == '$') && !name_byte(a);
        }
    }
    return c->sets_home;
}

/* $HOME or ${HOME} followed by nothing or "/..." without another expansion:
 * the length of the variable's spelling, else 0 (such a word is ~ and the rest). */
static uint32_t home_var(const char *w, uint32_t wl)
{
    uint32_t k = wl >= 5 && memcmp(w, "$HOME", 5) == 0 ? 5 : wl >= 7 && memcmp(w, "${HOME}", 7) == 0 ? 7 : 0;
    if (!k || (k < wl && w[k] != '/') || memchr(w + k, '$', wl - k) || memchr(w + k, '`', wl - k))
        return 0;
    return k;
}

/* ---- patterns --------------------------------------------------------------------
 * A word the shell still expands names every path its pattern can produce
 * (runtime/pathpat.h), read so that a hit needs what is written.  The word's
 * text is read as tokens: literal bytes, a glob's `?` `*` `[...]` (when the word
 * has an unquoted glob), and expansions ($x, ${...}, $(...), `...`: when it has
 * one).  Per component (between literal '/'): one with no literal byte at all
 * (`$dir`, `*`, `$a$b`) is some name that says nothing by itself (the byte
 * 0x01, which set patterns match only as "any byte"), and so is a `*` or an
 * expansion that starts a name (`*.c`, `${f%.txt}.md`: the name's start is not
 * written).  After a written start, `*` is any rest of the name, and so is an
 * expansion that ends it (`id_$k`: XSTAR); an expansion between written bytes
 * (`.s${x}sh`, `/e${x}dow`) may hold '/' too (ANY).  So `cat "$f"`, `ls *`,
 * `wc -l *.c`, `cat "$dir"/README.md` are not secrets, while `cat *.pem`,
 * `~/.ss?/id_*`, `/etc/[s]hadow` and `/etc/sha$(echo d)ow` are.  The literal components before the first other
 * one are walked as any path (symlinks followed); the rest is appended as
 * written, and a `..` after a pattern component makes everything before it
 * unknown (ANY). */

static const char *home_of(sgr_ctx *c, uint32_t *len);
static int path_room(sgr_ctx *c, sgr_norm *nm, uint32_t *cap);
static int folds(sgr_ctx *c, const char *p, uint32_t n);
static int folds_at(sgr_ctx *c, const char *p, uint32_t n, int self);
static int has_upper(const char *s, uint32_t n);
static int fold_pattern(sgr_ctx *c, sgr_ppat *p);

#define PAT_OPAQUE 0x01u                    /* "some name" */
#define PAT_EXP    0xffu                    /* a token: an expansion, not yet classified */

/* The bracket expression at w[i] == '[': its bytes (without '/') in set and the
 * index after its ']' in *end; 0 when it is not one (then '[' is literal). */
static int glob_class(const char *w, uint32_t wl, uint32_t i, uint64_t set[4], uint32_t *end)
{
    uint32_t j = i + 1;
    int neg = j < wl && (w[j] == '!' || w[j] == '^');
    j += (uint32_t)neg;
    uint64_t s[4] = { 0, 0, 0, 0 };
    for (int first = 1; j < wl && (w[j] != ']' || first); first = 0) {
        unsigned lo = (unsigned char)w[j];
        if (lo == '[' && j + 1 < wl && (w[j + 1] == ':' || w[j + 1] == '=' || w[j + 1] == '.')) {
            /* [:alpha:], [=a=], [.a.]: a class, or one byte; unknown classes: any byte */
            char kind = w[j + 1];
            const char *e = NULL;
            for (uint32_t k = j + 2; k + 1 < wl && !e; k++)
                if (w[k] == kind && w[k + 1] == ']')
                    e = w + k;
            if (!e)
                return 0;
            const char *nm = w + j + 2;
            size_t nl = (size_t)(e - nm);
            for (unsigned b = 0; b < 256; b++) {
                int in = kind != ':' ? (nl == 1 && b == (unsigned char)nm[0])
                       : nl == 5 && !memcmp(nm, "alpha", 5) ? ((b | 32) >= 'a' && (b | 32) <= 'z')
                       : nl == 5 && !memcmp(nm, "digit", 5) ? (b >= '0' && b <= '9')
                       : nl == 5 && !memcmp(nm, "alnum", 5) ? (((b | 32) >= 'a' && (b | 32) <= 'z') || (b >= '0' && b <= '9'))
                       : nl == 5 && !memcmp(nm, "upper", 5) ? (b >= 'A' && b <= 'Z')
                       : nl == 5 && !memcmp(nm, "lower", 5) ? (b >= 'a' && b <= 'z')
                       : nl == 5 && !memcmp(nm, "space", 5) ? (b == ' ' || (b >= 9 && b <= 13))
                       : nl == 5 && !memcmp(nm, "blank", 5) ? (b == ' ' || b == '\t')
                       : nl == 5 && !memcmp(nm, "cntrl", 5) ? (b < 32 || b == 127)
                       : nl == 6 && !memcmp(nm, "xdigit", 6) ? ((b >= '0' && b <= '9') || ((b | 32) >= 'a' && (b | 32) <= 'f'))
                       : 1;                 /* punct, print, graph, word, other: any */
                if (in)
                    s[b >> 6] |= (uint64_t)1 << (b & 63);
            }
            j = (uint32_t)(e - w) + 2;
            continue;
        }
        uint32_t hi = lo;
        if (j + 2 < wl && w[j + 1] == '-' && w[j + 2] != ']') {
            hi = (unsigned char)w[j + 2];
            j += 3;
        } else {
            j++;
        }
        for (uint32_t b = lo; b <= hi && b < 256; b++)
            s[b >> 6] |= (uint64_t)1 << (b & 63);
    }
    if (j >= wl)
        return 0;                           /* no closing ']' */
    for (int k = 0; k < 4; k++)
        set[k] = neg ? ~s[k] : s[k];
    set['/' >> 6] &= ~((uint64_t)1 << ('/' & 63));
    *end = j + 1;
    return 1;
}

/* A pattern being built: elements, their classes. */
typedef struct patb {
    uint32_t *el;
    uint32_t n, cap;
    uint64_t (*cls)[4];
    uint32_t ncls;
} patb;

static int pat_add(patb *b, uint32_t e)
{
    if (b->n == b->cap)
        return -1;
    /* two loops of which one takes all the other does: one is enough */
    if (b->n && (e & 0xff) == SGR_PP_ANY && (b->el[b->n - 1] & 0xff) == SGR_PP_ANY)
        return 0;
    b->el[b->n++] = e;
    return 0;
}

/* Tokens of word w: an element (SGR_PP_*) or PAT_EXP each, and where it starts. */
typedef struct ptoks {
    uint32_t *tk, *at;
    uint32_t n;
} ptoks;

/* Read w[0..wl) (with the word's flags) into tokens; class sets into b.  Known
 * values are spelled out: $HOME and ${HOME} as the caller's home (unless the line
 * may set HOME).  0, or -1 when the arena runs out. */
static int pat_tokens(sgr_ctx *c, const char *w, uint32_t wl, uint32_t flags, ptoks *t, patb *b)
{
    uint32_t hl = 0;
    const char *home = NULL;
    if ((flags & SGR_W_VAR) && !line_sets_home(c))
        home = home_of(c, &hl);
    uint32_t cap = wl + (home ? hl * (wl / 5 + 1) : 0) + 1;
    t->tk = sg_arena_alloc(&c->arena, sizeof *t->tk * cap);
    t->at = sg_arena_alloc(&c->arena, sizeof *t->at * cap);
    b->cls = sg_arena_alloc(&c->arena, sizeof *b->cls * (wl / 2 + 1));
    if (!t->tk || !t->at || !b->cls)
        return -1;
    t->n = 0;
    for (uint32_t i = 0; i < wl && t->n < cap;) {
        char ch = w[i];
        if ((flags & SGR_W_UNKNOWN) && (ch == '$' || ch == '`')) {
            size_t l = sgr_sx_expansion(w + i, wl - i);
            if (l) {
                if (home && ((l == 5 && !memcmp(w + i, "$HOME", 5)) || (l == 7 && !memcmp(w + i, "${HOME}", 7)))) {
                    for (uint32_t k = 0; k < hl && t->n < cap; k++) {
                        t->at[t->n] = i;
                        t->tk[t->n++] = SGR_PP_LIT | (uint32_t)(unsigned char)home[k] << 8;
                    }
                } else {
                    t->at[t->n] = i;
                    t->tk[t->n++] = PAT_EXP;
                }
                i += (uint32_t)l;
                continue;
            }
        }
        t->at[t->n] = i;
        if ((flags & SGR_W_GLOB) && (ch == '*' || ch == '?')) {
            t->tk[t->n++] = ch == '*' ? SGR_PP_STAR : SGR_PP_ONE;
            i++;
            continue;
        }
        uint32_t end;
        if ((flags & SGR_W_GLOB) && ch == '[' && glob_class(w, wl, i, b->cls[b->ncls], &end)) {
            t->tk[t->n++] = SGR_PP_CLASS | b->ncls++ << 8;
            i = end;
            continue;
        }
        t->tk[t->n++] = SGR_PP_LIT | (uint32_t)(unsigned char)ch << 8;
        i++;
    }
    return 0;
}

static inline int tok_lit(uint32_t tk, char ch)
{
    return tk == (SGR_PP_LIT | (uint32_t)(unsigned char)ch << 8);
}

static int magic_name(const ptoks *t, uint32_t k, uint32_t e);
static int wide_class(const patb *cls, uint32_t tk);

/* One pattern of word w (tokens t, classes in cls) from token first on: resolved
 * from base ("/" for an absolute word, else a cwd; NULL: a directory known only
 * at run time) with place the directory the segment runs in (/proc/self/cwd), or
 * with opaque, under some directories (a first component of expansions). */
static int add_pattern_one(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                           const ptoks *t, const patb *cls, uint32_t first, int opaque, const char *base,
                           const char *place, int mode)
{
    uint32_t nt = t->n;
    if (mode && (opaque || !base))
        return 0;                           /* no fixed part to walk through made links */
    patb b = *cls;
    b.n = 0;
    int lead_dirs = 0;
    /* the fixed part: the literal components before the first other one */
    uint32_t fixed = first;
    for (uint32_t k = first; !opaque;) {
        uint32_t e = k;
        while (e < nt && !tok_lit(t->tk[e], '/'))
            e++;
        int plain = 1;
        for (uint32_t j = k; j < e && plain; j++)
            plain = (t->tk[j] & 0xff) == SGR_PP_LIT;
        if (!plain)
            break;
        fixed = e;
        if (e >= nt)
            break;
        k = e + 1;
    }
    /* walked as any path: its text from the tokens ($HOME spelled out) */
    char *pre = NULL;
    uint32_t pl = 0;
    int unk = 0;
    if (opaque) {
        lead_dirs = 1;                      /* `$d/x`: x under some directories, or "/" */
    } else if (!base && (first >= nt || !tok_lit(t->tk[first], '/'))) {
        lead_dirs = 1;                      /* relative to a place known at run time */
        fixed = first;
    } else {
        char *txt = sg_arena_alloc(&c->arena, fixed - first + 1);
        if (!txt)
            return -1;
        for (uint32_t j = first; j < fixed; j++)
            txt[j - first] = (char)(t->tk[j] >> 8);
        uint32_t tl = fixed - first;
        int tilde = first == 0 && tl && txt[0] == '~' && (flags & SGR_W_TILDE);
        const char *from = txt[0] == '/' || tilde ? place : base;
        if (mode && tl) {
            /* the fixed part through links made earlier on the line (mode: as made_link) */
            c->mk_mode = mode;
            c->mk_used = c->mk_glob = 0;
            c->mk_part_ok = c->mk_depth < 2;
            c->mk_pflags = 0;
            pre = resolve_walk(c, from, txt, tl, tilde, &pl, &unk);
            c->mk_mode = c->mk_part_ok = 0;
            uint32_t pflags = c->mk_pflags;
            c->mk_pflags = 0;
            if (pre && !c->mk_used)
                return 0;
            if (pre && pflags && !unk)
                return splice_patterns(c, nm, cap, pre, pl, fixed < nt ? w + t->at[fixed] : "",
                                       fixed < nt ? wl - t->at[fixed] : 0,
                                       pflags | (flags & (SGR_W_GLOB | SGR_W_UNKNOWN)) | (c->mk_glob ? SGR_W_GLOB : 0));
        } else if (tl) {
            pre = resolve_path(c, from, txt, tl, tilde, &pl, NULL, &unk);
        } else {
            if (mode)
                return 0;
            pre = (char *)(base ? base : "/");
            pl = (uint32_t)strlen(pre);
        }
        if (!pre)
            return -1;
        lead_dirs = unk;                    /* below a descriptor: some place */
    }
    /* sized for what it holds, so a pattern costs the arena little */
    b.cap = 2 * nt + pl + 8;
    if (!(b.el = sg_arena_alloc(&c->arena, sizeof *b.el * b.cap)))
        return -1;
    if (lead_dirs)
        pat_add(&b, SGR_PP_DIRS);
    for (uint32_t i = 0; pre && i < pl && !(pl == 1 && pre[0] == '/' && unk); i++)
        pat_add(&b, SGR_PP_LIT | (uint32_t)(unsigned char)pre[i] << 8);
    int lost = !base || unk || opaque;      /* counts as outside */
    uint32_t magic_after = fixed;           /* past the last wildcard or /proc, /dev name */
    uint32_t bnd[8], nbnd = 0;              /* past each of them (the last 8) */
    int relword_absolute = (nt && tok_lit(t->tk[0], '/')) || ((flags & SGR_W_TILDE) && w[0] == '~');
    /* the rest, component by component, as written: into b for the set's
     * automaton, and into bw for its exact words, where a glob's wildcards are
     * themselves (a glob expands to every match: "/etc/ *" names /etc/shadow) */
    patb bw = b;
    bw.cap = b.cap;
    if (!(bw.el = sg_arena_alloc(&c->arena, sizeof *bw.el * bw.cap)))
        return -1;
    memcpy(bw.el, b.el, sizeof *b.el * b.n);
#define BOTH(x) do { pat_add(&b, (x)); pat_add(&bw, (x)); } while (0)
    for (uint32_t k = fixed; k < nt;) {
        if (tok_lit(t->tk[k], '/')) {
            k++;
            continue;
        }
        uint32_t e = k;
        while (e < nt && !tok_lit(t->tk[e], '/'))
            e++;
        int lit = 0, plain = 1, exp = 0;
        for (uint32_t j = k; j < e; j++) {
            lit |= (t->tk[j] & 0xff) == SGR_PP_LIT;
            plain &= (t->tk[j] & 0xff) == SGR_PP_LIT;
            exp |= t->tk[j] == PAT_EXP;
        }
        if (!plain || magic_name(t, k, e)) {
            magic_after = e;
            if (nbnd == 8)
                memmove(bnd, bnd + 1, sizeof bnd - sizeof *bnd), nbnd--;
            bnd[nbnd++] = e;
        }
        if (plain && e - k == 1 && tok_lit(t->tk[k], '.')) {
            k = e;
            continue;
        }
        if (plain && e - k == 2 && tok_lit(t->tk[k], '.') && tok_lit(t->tk[k + 1], '.')) {
            b.n = bw.n = 0;                 /* the parent of a pattern: some place */
            BOTH(SGR_PP_DIRS);
            lost = 1;
            k = e;
            continue;
        }
        if (!(b.n == 1 && b.el[0] == (SGR_PP_LIT | '/' << 8)))
            BOTH(SGR_PP_LIT | '/' << 8);
        if (!lit) {
            pat_add(&b, SGR_PP_LIT | PAT_OPAQUE << 8);
            for (uint32_t j = k; j < e; j++)
                pat_add(&bw, exp ? (j == k ? SGR_PP_LIT | PAT_OPAQUE << 8 : 0xffffffffu) : t->tk[j]);
            while (bw.n && bw.el[bw.n - 1] == 0xffffffffu)
                bw.n--;
            k = e;
            continue;
        }
        /* the first component of a relative word: an expansion in it makes the
         * word's own start, so it stays within the name */
        int head = k == 0 && !relword_absolute;
        for (uint32_t j = k; j < e; j++) {
            uint32_t tk = t->tk[j];
            int run = tk == SGR_PP_STAR || tk == PAT_EXP;
            if (j == k && (run || tk == SGR_PP_ONE || wide_class(cls, tk))) {
                pat_add(&b, SGR_PP_LIT | PAT_OPAQUE << 8);  /* a name's unwritten start */
                pat_add(&bw, tk == PAT_EXP ? SGR_PP_LIT | PAT_OPAQUE << 8 : tk);
                continue;
            }
            int after = 0;
            for (uint32_t x = j + 1; x < e && !after; x++)
                after = t->tk[x] != PAT_EXP && t->tk[x] != SGR_PP_STAR;
            if (run && !after) {
                pat_add(&b, SGR_PP_STEM);   /* completes a written start, no extension */
                pat_add(&bw, tk == SGR_PP_STAR ? SGR_PP_STAR : SGR_PP_STEM);
                continue;
            }
            if (tk != PAT_EXP) {
                BOTH(tk);
                continue;
            }
            BOTH(head ? SGR_PP_XSTAR : SGR_PP_ANY);
        }
        k = e;
    }
#undef BOTH
    if (b.n == 0)
        pat_add(&b, SGR_PP_LIT | '/' << 8);
    if (bw.n == 0)
        pat_add(&bw, SGR_PP_LIT | '/' << 8);
    /* the path as messages show it: where the fixed part led, then the rest as written */
    uint32_t doff = fixed < nt ? t->at[fixed] : wl;
    uint32_t dl = (pre ? pl : 0) + 1 + (wl - doff);
    char *disp = sg_arena_alloc(&c->arena, dl + 1);
    sgr_ppat *pp = sg_arena_alloc(&c->arena, sizeof *pp);
    if (!disp || !pp || path_room(c, nm, cap) < 0)
        return -1;
    uint32_t n = 0;
    if (pre) {
        memcpy(disp, pre, pl);
        n = pl;
    }
    if (doff < wl) {
        if (n && disp[n - 1] == '/' && w[doff] == '/')
            n--;
        else if (n && disp[n - 1] != '/' && w[doff] != '/')
            disp[n++] = '/';
        memcpy(disp + n, w + doff, wl - doff);
        n += wl - doff;
    }
    disp[n] = '\0';
    sgr_ppat *wp = sg_arena_alloc(&c->arena, sizeof *wp);
    if (!wp)
        return -1;
    pp->el = b.el;
    pp->n = b.n;
    pp->cls = (const uint64_t (*)[4])b.cls;
    wp->el = bw.el;
    wp->n = bw.n;
    wp->cls = pp->cls;
    wp->words = NULL;
    pp->words = wp;
    /* on a case-folding directory: the fixed part's, at or above it */
    if (pre && (has_upper(pre, pl) || has_upper(w, wl)) && folds_at(c, pre, pl, 1)
        && (fold_pattern(c, pp) < 0 || fold_pattern(c, wp) < 0))
        return -1;
    nm->paths[nm->npaths].s = disp;
    nm->paths[nm->npaths].len = n;
    nm->pin[nm->npaths] = 0;
    nm->ppat[nm->npaths] = pp;
    nm->npaths++;
    nm->npats++;
    if (lost)
        mark_unknown(nm, disp, n);          /* anywhere: outside */
    /* a wildcard or a magic name under /proc or /dev may lead anywhere
     * (/proc/sel[f]/root/etc/sha*, /proc/self/roo[t]/etc/shadow): what follows
     * each of them is also a pattern below some place */
    if (!mode && magic_after > fixed && (sgr_pp_word(wp, "/proc", 5, 1) || sgr_pp_word(wp, "/dev", 4, 1)))
        for (uint32_t i = 0; i < nbnd; i++)
            if (add_pattern_one(c, nm, cap, w, wl, flags, t, cls, bnd[i], 1, "/", place, 0) < 0)
                return -1;
    return 0;
}

/* A class that takes more than one letter in both cases or one other byte: a
 * wildcard, not a written byte ([a-m], [!_]; [s] and [sS] are written). */
static int wide_class(const patb *cls, uint32_t tk)
{
    if ((tk & 0xff) != SGR_PP_CLASS)
        return 0;
    const uint64_t *s = cls->cls[tk >> 8];
    int n = 0, lower = -1;
    for (unsigned b = 0; b < 256; b++)
        if ((s[b >> 6] >> (b & 63)) & 1) {
            unsigned l = (b >= 'A' && b <= 'Z') ? b + 32 : b;
            if (lower < 0)
                lower = (int)l;
            else if ((int)l != lower)
                return 1;
            n++;
        }
    return n > 2;
}

/* Is component t[k, e) (all literal bytes) a name /proc or /dev resolve by what it
 * means: self, thread-self, root, cwd, fd, task, stdin, stdout, stderr, a number? */
static int magic_name(const ptoks *t, uint32_t k, uint32_t e)
{
    static const char *const names[] = { "self", "thread-self", "root", "cwd", "fd", "task", "stdin", "stdout",
                                         "stderr", NULL };
    char b[16];
    uint32_t n = e - k, digits = n > 0;
    if (n >= sizeof b)
        return 0;
    for (uint32_t j = 0; j < n; j++) {
        if ((t->tk[k + j] & 0xff) != SGR_PP_LIT)
            return 0;
        b[j] = (char)(t->tk[k + j] >> 8);
        digits &= b[j] >= '0' && b[j] <= '9';
    }
    b[n] = '\0';
    for (const char *const *x = names; *x && !digits; x++)
        digits = strcmp(b, *x) == 0;
    return (int)digits;
}

/* add_pattern_one as the word reads, and through links made earlier on the line. */
static int add_pattern_modes(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                             const ptoks *t, const patb *cls, uint32_t first, int opaque, const char *base,
                             const char *place)
{
    for (int mode = 0; mode <= (c->nmk ? 2 : 0); mode++)
        if (add_pattern_one(c, nm, cap, w, wl, flags, t, cls, first, opaque, base, place, mode) < 0)
            return -1;
    return 0;
}

/* The patterns of word w[0..wl) (one brace alternative), appended to nm's paths.
 * Nothing for a word whose every literal byte is '/' or '.' and that has no
 * glob (`"$f"`, `$d/$f`): such a word is unknown, as before (counted outside,
 * its text kept), and not every secret. */
static int add_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags)
{
    ptoks t;
    patb cls = { NULL, 0, 0, NULL, 0 };
    if (pat_tokens(c, w, wl, flags, &t, &cls) < 0)
        return -1;
    int tilde = (flags & SGR_W_TILDE) && w[0] == '~';
    if (tilde && wl > 1 && w[1] != '/')
        return 0;                           /* ~user: not known */
    if (tilde && line_sets_home(c)) {
        t.tk[0] = PAT_EXP;                  /* HOME=/etc; cat ~/shadow: ~ is some place */
        tilde = 0;
    }
    int informative = tilde;
    for (uint32_t k = 0; k < t.n && !informative; k++)
        informative = t.tk[k] != PAT_EXP && !tok_lit(t.tk[k], '/') && !tok_lit(t.tk[k], '.');
    int absolute0 = (t.n && tok_lit(t.tk[0], '/')) || tilde, some_place = !absolute0 && nm->cwd_unknown;
    if (some_place)
        for (uint32_t k = 0; k < t.n && !informative; k++)
            informative = t.tk[k] != PAT_EXP;   /* `cd "$X" && rm -rf .`: some directory */
    if (!informative)
        return 0;
    int absolute = (t.n && tok_lit(t.tk[0], '/')) || tilde;
    /* a first component of expansions only (`$d/x`, `$(pwd)/x`): empty ("/x"),
     * or some directory ("/<name>/x") */
    uint32_t first_end = 0;
    while (first_end < t.n && !tok_lit(t.tk[first_end], '/'))
        first_end++;
    int lead = !absolute && first_end > 0 && first_end < t.n;
    for (uint32_t k = 0; k < first_end && lead; k++)
        lead = t.tk[k] == PAT_EXP;
    if (lead)
        return add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, first_end, 1, "/", nm->cwd);
    if (absolute)
        return add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, 0, 0, "/", nm->cwd);
    if (nm->cwd_unknown)
        return add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, 0, 0, NULL, nm->cwd);
    for (uint32_t k = 0; k < nm->ncwds; k++) {
        const char *d = nm->cwds[nm->ncwds - 1 - k];
        if (add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, 0, 0, d, d) < 0)
            return -1;
    }
    return 0;
}

/* The patterns of a[0..al) and then b[0..bl): a path the walk spliced through a link
 * to a partly known word (made_link), with the flags of the words it holds; that
 * word's own links are lost from here on (mk_depth), so splicing ends. */
static int splice_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *a, uint32_t al, const char *b,
                           uint32_t bl, uint32_t flags)
{
    char *j = sg_arena_alloc(&c->arena, (size_t)al + bl + 1);
    if (!j)
        return -1;
    memcpy(j, a, al);
    memcpy(j + al, b, bl);
    j[al + bl] = '\0';
    c->mk_depth++;
    int rc = add_patterns(c, nm, cap, j, al + bl, flags);
    c->mk_depth--;
    return rc;
}

static int add_word(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags);

/* A brace expansion makes at most this many words of one path candidate; a word
 * that would make more makes its segment dynamic (brace_check). */
#define SGR_BRACE_MAX 256

/* Path candidate w[0..wl): each word its brace expansion makes (brace_check
 * has made the segment dynamic when there are too many), or w itself.  Braces
 * are read from the text, quoted or not; for a word with a quoted part its text
 * as written is one more alternative (every brace quoted). */
static int add_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags)
{
    if (!(flags & SGR_W_BRACE))
        return add_word(c, nm, cap, w, wl, flags);
    const char **words = sg_arena_alloc(&c->arena, sizeof *words * SGR_BRACE_MAX);
    uint32_t *lens = sg_arena_alloc(&c->arena, sizeof *lens * SGR_BRACE_MAX);
    if (!words || !lens)
        return -1;
    int n = sgr_sx_braces(&c->arena, w, wl, words, lens, SGR_BRACE_MAX);
    if (n == -2)
        return -1;
    flags &= ~(uint32_t)SGR_W_BRACE;
    if (n <= 0 || (flags & SGR_W_QUOTED))
        if (add_word(c, nm, cap, w, wl, flags | (n < 0 ? SGR_W_VAR : 0)) < 0)
            return -1;
    for (int i = 0; i < n; i++)
        if (add_word(c, nm, cap, words[i], lens[i], flags) < 0)
            return -1;
    return 0;
}

/* One word of a path candidate: resolved from every cwd it may be in, and when
 * the shell still expands it, its patterns too. */
static int add_word(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags)
{
    if (wl == 0 || not_a_file(w, wl))
        return 0;
    uint32_t hv;
    if ((flags & SGR_W_UNKNOWN) == SGR_W_VAR && (hv = home_var(w, wl)) && !line_sets_home(c)) {
        /* "$HOME"/x is ~/x: the caller's home */
        char *t = sg_arena_alloc(&c->arena, wl - hv + 2);
        if (!t)
            return -1;
        t[0] = '~';
        memcpy(t + 1, w + hv, wl - hv);
        t[wl - hv + 1] = '\0';
        w = t;
        wl = wl - hv + 1;
        flags = (flags & ~SGR_W_VAR) | SGR_W_TILDE;
    }
    uint32_t flags0 = flags;
    int home_set = (flags & SGR_W_TILDE) && w[0] == '~' && line_sets_home(c);
    if (home_set)
        flags |= SGR_W_VAR;                 /* HOME=/etc; cat ~/shadow */
    /* ~user, ~+, ~-: another home or a directory stack entry, known only at run time */
    if ((flags & SGR_W_TILDE) && w[0] == '~' && wl > 1 && w[1] != '/')
        flags |= SGR_W_VAR;
    if (flags & (SGR_W_UNKNOWN))
        mark_unknown(nm, w, wl);            /* still record the literal text, so `path
                                             * inside` sees "$HOME/.ssh/x" */
    int relative = w[0] != '/' && !((flags & SGR_W_TILDE) && w[0] == '~');
    /* /proc/self/cwd names the directory the segment runs in: like a relative path */
    relative |= w[0] == '/' && wl >= 4 && memmem(w, wl, "/cwd", 4) != NULL;
    if (relative && nm->cwd_unknown && !(flags & SGR_W_UNKNOWN)) {
        /* relative to a directory only known at run time */
        flags |= SGR_W_VAR;
        mark_unknown(nm, w, wl);
        nm->rel_unknown++;
    }
    /* a relative operand under every cwd the segment may run in (the last one
     * first); an absolute one once */
    uint32_t ncw = relative && !(flags & SGR_W_UNKNOWN) && nm->ncwds > 1 ? nm->ncwds : 1;
    for (uint32_t k = 0; k < ncw; k++) {
        const char *base = ncw > 1 ? nm->cwds[nm->ncwds - 1 - k] : nm->cwd;
        if (add_one_path(c, nm, cap, w, wl, flags, base) < 0)
            return -1;
    }

    if ((flags0 & (SGR_W_GLOB | SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH)) || home_set
        || (relative && nm->cwd_unknown))
        return add_patterns(c, nm, cap, w, wl, flags0);
    return 0;
}

/* Room for one more path in nm. */
static int path_room(sgr_ctx *c, sgr_norm *nm, uint32_t *cap)
{
    if (nm->npaths < *cap)
        return 0;
    /* the first arrays by the inline bump, not sg_arena_grow's call */
    uint32_t ncap = *cap ? *cap * 2 : 8;
    sgr_sv *np = *cap ? sg_arena_grow(&c->arena, nm->paths, sizeof *np * *cap, sizeof *np * ncap)
                      : sg_arena_alloc(&c->arena, sizeof *np * ncap);
    if (!np)
        return -1;
    nm->paths = np;
    uint64_t *pin = *cap ? sg_arena_grow(&c->arena, nm->pin, sizeof *pin * *cap, sizeof *pin * ncap)
                         : sg_arena_alloc(&c->arena, sizeof *pin * ncap);
    if (!pin)
        return -1;
    nm->pin = pin;
    const sgr_ppat **pp = *cap ? sg_arena_grow(&c->arena, nm->ppat, sizeof *pp * *cap, sizeof *pp * ncap)
                               : sg_arena_alloc(&c->arena, sizeof *pp * ncap);
    if (!pp)
        return -1;
    nm->ppat = pp;
    *cap = ncap;
    return 0;
}

/* ---- case-folding filesystems --------------------------------------------------- */

const char *sgr_fold_force;

/* Does looking up names in directory d fold case: a filesystem that does by its
 * type (FAT, exFAT, NTFS, HFS+, CIFS/SMB), or a directory with the casefold
 * flag (ext4, f2fs, tmpfs)?  ext4 without casefold does not.  sgr_fold_force
 * (tests only) names a directory below which every one folds. */
static int dir_folds(const char *d)
{
    size_t fl = sgr_fold_force ? strlen(sgr_fold_force) : 0;
    if (fl && strncmp(d, sgr_fold_force, fl) == 0 && (d[fl] == '\0' || d[fl] == '/'))
        return 1;
    struct statfs sf;
    if (statfs(d, &sf) != 0)
        return 0;
    switch ((uint32_t)sf.f_type) {
    case 0x4d44u: case 0x2011BAB0u: case 0x5346544eu: case 0x7366746eu: case 0x482bu: case 0x4244u:
    case 0xFF534D42u: case 0xFE534D42u: case 0x517Bu:
        return 1;                           /* msdos/vfat, exfat, ntfs, ntfs3, hfs+, hfs, cifs, smb2, smb */
    case 0xEF53u: case 0xF2F52010u: case 0x01021994u: {
        int fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            return 0;
        int flags = 0;
        int r = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & 0x40000000);  /* FS_CASEFOLD_FL */
        close(fd);
        return r;
    }
    default:
        return 0;
    }
}

/* Is path p[0..n) on a case-folding directory (folds: dir_folds of the deepest
 * existing directory above it)?  Asked only for a path with an upper-case letter,
 * whose lower-case spelling is what sets name (~/.SSH/ID_RSA).  Answers are kept
 * while the path cache's epoch stands (pathcache.h). */
static int has_upper(const char *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            return 1;
    return 0;
}

/* dir_folds of the deepest existing directory at (self) or above p[0..n). */
static int folds_at(sgr_ctx *c, const char *p, uint32_t n, int self)
{
    if (n >= 256 || p[0] != '/')
        return 0;
    char d[256];
    uint32_t dl = n;
    memcpy(d, p, n);
    d[n] = '\0';
    for (int first = 1;; first = 0) {
        if (!(first && self)) {
            while (dl > 1 && d[dl - 1] != '/')
                dl--;
            dl = dl > 1 ? dl - 1 : 1;
            d[dl] = '\0';
        }
        size_t ll;
        if (dl == 1 || sgr_pc_lstat(c->pc, d, NULL, 0, &ll) == SGR_PC_DIR)
            break;
    }
    uint64_t e = sgr_fold_force ? 0 : sgr_pc_epoch(c->pc);   /* (a test's answers are not kept) */
    for (int i = 0; i < 4 && e; i++)
        if (c->fold_memo[i].epoch == e && c->fold_memo[i].len == dl && memcmp(c->fold_memo[i].dir, d, dl) == 0)
            return c->fold_memo[i].fold;
    int f = dir_folds(d);
    if (e && sgr_pc_epoch(c->pc) == e) {
        uint32_t k = c->fold_next++ & 3;
        memcpy(c->fold_memo[k].dir, d, dl + 1);
        c->fold_memo[k].len = dl;
        c->fold_memo[k].epoch = e;
        c->fold_memo[k].fold = f;
    }
    return f;
}

static int folds(sgr_ctx *c, const char *p, uint32_t n)
{
    return has_upper(p, n) && folds_at(c, p, n, 0);
}

/* The letters of pattern p (a class for each) as a folding directory reads them. */
static int fold_pattern(sgr_ctx *c, sgr_ppat *p)
{
    uint32_t nc = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t k = p->el[i] & 0xff, b = p->el[i] >> 8;
        nc += (k == SGR_PP_LIT && ((b | 32) >= 'a' && (b | 32) <= 'z')) || k == SGR_PP_CLASS;
    }
    if (!nc)
        return 0;
    uint64_t (*cls)[4] = sg_arena_alloc(&c->arena, sizeof *cls * nc);
    uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * p->n);
    if (!cls || !el)
        return -1;
    uint32_t k2 = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t k = p->el[i] & 0xff, b = p->el[i] >> 8;
        el[i] = p->el[i];
        if (k == SGR_PP_LIT && ((b | 32) >= 'a' && (b | 32) <= 'z')) {
            memset(cls[k2], 0, sizeof cls[k2]);
            cls[k2][(b | 32) >> 6] |= (uint64_t)1 << ((b | 32) & 63);
            cls[k2][(b & ~32u) >> 6] |= (uint64_t)1 << ((b & ~32u) & 63);
            el[i] = SGR_PP_CLASS | k2++ << 8;
        } else if (k == SGR_PP_CLASS) {
            memcpy(cls[k2], p->cls[b], sizeof cls[k2]);
            for (uint32_t x = 'a'; x <= 'z'; x++)
                if ((cls[k2][x >> 6] >> (x & 63) & 1) || (cls[k2][(x - 32) >> 6] >> ((x - 32) & 63) & 1)) {
                    cls[k2][x >> 6] |= (uint64_t)1 << (x & 63);
                    cls[k2][(x - 32) >> 6] |= (uint64_t)1 << ((x - 32) & 63);
                }
            el[i] = SGR_PP_CLASS | k2++ << 8;
        }
    }
    p->el = el;
    p->cls = (const uint64_t (*)[4])cls;
    return 0;
}

/* Append resolved path r[0..rl) to nm (in_cwd: known to be the cwd, '/' and more);
 * judged against the roots when judge. */
static int push_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *r, uint32_t rl, int in_cwd, int judge)
{
    uint32_t cl = c->rcwdl;
    if (!in_cwd)
        in_cwd = cl > 1 && rl > cl && r[cl] == '/' && memcmp(r, c->rcwd, cl) == 0;
    if (path_room(c, nm, cap) < 0)
        return -1;
    nm->paths[nm->npaths].s = r;
    nm->paths[nm->npaths].len = rl;
    nm->pin[nm->npaths] = in_cwd ? PIN_CWD : 0;
    nm->ppat[nm->npaths] = NULL;
    nm->npaths++;
    if (folds(c, r, rl)) {
        /* on a case-folding directory ~/.SSH/ID_RSA is ~/.ssh/id_rsa: the path
         * as a pattern whose letters match either case */
        sgr_ppat *pp = sg_arena_alloc(&c->arena, sizeof *pp);
        uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * (rl + 1));
        if (!pp || !el || path_room(c, nm, cap) < 0)
            return -1;
        for (uint32_t i = 0; i < rl; i++)
            el[i] = SGR_PP_LIT | (uint32_t)(unsigned char)r[i] << 8;
        pp->el = el;
        pp->n = rl;
        pp->cls = NULL;
        pp->words = NULL;
        if (fold_pattern(c, pp) < 0)
            return -1;
        nm->paths[nm->npaths].s = r;
        nm->paths[nm->npaths].len = rl;
        nm->pin[nm->npaths] = 0;
        nm->ppat[nm->npaths++] = pp;
        nm->npats++;
    }
    if (judge) {
        int in = 0;
        for (uint32_t i = 0; i < c->nroots && !in; i++)
            in = (in_cwd && c->roots[i] == c->rcwd) || under(r, rl, c->roots[i]);
        if (!in && !nm->outside) {
            nm->outside = 1;
            nm->outside_path.s = r;
            nm->outside_path.len = rl;
        }
    }
    return 0;
}

/* A walk that went through a descriptor, another process's cwd or a link made to
 * some place: r[0..rl) (what follows) below some place known at run time; the
 * path counts as outside and messages show word w. */
static int push_below(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *r, uint32_t rl, const char *w, uint32_t wl)
{
    mark_unknown(nm, w, wl);
    sgr_ppat *pp = sg_arena_alloc(&c->arena, sizeof *pp);
    uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * (rl + 1));
    if (!pp || !el || path_room(c, nm, cap) < 0)
        return -1;
    pp->n = 0;
    el[pp->n++] = SGR_PP_DIRS;
    for (uint32_t i = 0; i < rl && !(rl == 1 && r[0] == '/'); i++)
        el[pp->n++] = SGR_PP_LIT | (uint32_t)(unsigned char)r[i] << 8;
    pp->el = el;
    pp->cls = NULL;
    pp->words = NULL;
    nm->paths[nm->npaths].s = w;
    nm->paths[nm->npaths].len = wl;
    nm->pin[nm->npaths] = 0;
    nm->ppat[nm->npaths++] = pp;
    nm->npats++;
    return 0;
}

/* Could the walk of a path that resolved to r[0..rl) without a symlink meet a name
 * made on the line: is one of them r or a directory above it (or a pattern)? */
static int made_under(const sgr_ctx *c, const char *r, uint32_t rl)
{
    for (uint32_t i = 0; i < c->nmk; i++) {
        const sgr_mkres *m = &c->mk[i];
        if (m->npat || (m->nl <= rl && memcmp(m->name, r, m->nl) == 0 && (m->nl == rl || r[m->nl] == '/')))
            return 1;
    }
    return 0;
}

static int add_one_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                        const char *cwd)
{
    uint32_t rl = wl, cl = c->rcwdl;
    char *r = (char *)w;
    int in_cwd = 0;                         /* r is the resolved cwd (not "/"), a '/', more */
    int short_way = 0;                      /* no symlink on the way: r's prefixes are the walk's */
    if (!(flags & SGR_W_UNKNOWN)) {
        int plain, unk;
        r = resolve_path(c, cwd, w, wl, (flags & SGR_W_TILDE) != 0, &rl, &plain, &unk);
        if (!r)
            return -1;
        if (unk)
            return push_below(c, nm, cap, r, rl, w, wl);
        in_cwd = plain && cl > 1;           /* what the short way makes: no need to compare */
        short_way = plain;
    }
    if (push_path(c, nm, cap, r, rl, in_cwd, !(flags & SGR_W_UNKNOWN)) < 0)
        return -1;
    if (!c->nmk || (flags & SGR_W_UNKNOWN) || (short_way && !made_under(c, r, rl)))
        return 0;
    /* through what earlier segments make: also where their links lead */
    for (uint32_t mode = 1, pick = 0; mode <= 2; pick++) {
        uint32_t l2;
        int unk2;
        c->mk_mode = (int)mode;
        c->mk_used = c->mk_glob = 0;
        c->mk_part_ok = c->mk_depth < 2;
        c->mk_pflags = 0;
        c->mk_pick = pick;
        c->mk_radix = 1;
        char *r2 = resolve_walk(c, cwd, w, wl, (flags & SGR_W_TILDE) != 0, &l2, &unk2);
        c->mk_mode = c->mk_part_ok = 0;
        if (pick + 1 >= c->mk_radix || pick + 1 >= SGR_MK_PICKS) {
            if (pick + 1 < c->mk_radix)
                mark_unknown(nm, w, wl);    /* more choices than are walked */
            mode++;                         /* every choice walked: the next mode */
            pick = UINT32_MAX;
        }
        c->mk_pick = 0;
        c->mk_radix = 1;
        uint32_t pflags = c->mk_pflags;
        c->mk_pflags = 0;
        if (!r2)
            return -1;
        if (c->mk_used && pflags && !unk2) {
            /* through a link to a partly known word: known only at run time, and
             * the patterns of what that word and the rest can name */
            mark_unknown(nm, w, wl);
            if (splice_patterns(c, nm, cap, r2, l2, "", 0, pflags | (c->mk_glob ? SGR_W_GLOB : 0)) < 0)
                return -1;
            continue;
        }
        if (c->mk_used && c->mk_glob && !unk2) {
            /* through a link to a glob: what the glob and the rest can name */
            if (add_patterns(c, nm, cap, r2, l2, SGR_W_GLOB) < 0)
                return -1;
            continue;
        }
        if (c->mk_used && unk2 && push_below(c, nm, cap, r2, l2, w, wl) < 0)
            return -1;
        if (c->mk_used && !unk2 && !(l2 == rl && memcmp(r2, r, rl) == 0)
            && push_path(c, nm, cap, r2, l2, 0, 1) < 0)
            return -1;
    }
    return 0;
}

/* A path candidate of segment si whose brace expansion would make more than
 * SGR_BRACE_MAX words makes the segment dynamic: those words cannot all be
 * checked.  -1: out of memory. */
static int brace_check(sgr_ctx *c, uint32_t si)
{
    sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    const sgr_word *over = NULL;
    for (uint32_t i = nm->text_ops; i < nm->npos && !over; i++)
        if (s->argv[nm->pos[i]].flags & SGR_W_BRACE)
            over = &s->argv[nm->pos[i]];
    for (uint32_t i = 0; i < nm->nvals && !over; i++)
        if ((nm->vflags[i] & SGR_W_BRACE) && !(nm->vflags[i] & SGR_V_TEXT))
            over = (const sgr_word *)1;     /* a value: checked below */
    for (uint32_t i = 0; i < s->nredirs && !over; i++)
        if (s->redirs[i].target.flags & SGR_W_BRACE)
            over = &s->redirs[i].target;
    for (uint32_t i = 0; i < s->nvalues && !over; i++)
        if (s->values[i].flags & SGR_W_BRACE)
            over = &s->values[i];
    if (!over)
        return 0;                           /* nearly every segment */
    const char **words = sg_arena_alloc(&c->arena, sizeof *words * SGR_BRACE_MAX);
    uint32_t *lens = sg_arena_alloc(&c->arena, sizeof *lens * SGR_BRACE_MAX);
    if (!words || !lens)
        return -1;
    int too_many = 0;
    for (uint32_t i = nm->text_ops; i < nm->npos && !too_many; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        if (w->flags & SGR_W_BRACE) {
            int r = sgr_sx_braces(&c->arena, w->text, w->len, words, lens, SGR_BRACE_MAX);
            if (r == -2)
                return -1;
            too_many = r == -1;
        }
    }
    for (uint32_t i = 0; i < nm->nvals && !too_many; i++)
        if ((nm->vflags[i] & SGR_W_BRACE) && !(nm->vflags[i] & SGR_V_TEXT)) {
            int r = sgr_sx_braces(&c->arena, nm->vals[i].s, nm->vals[i].len, words, lens, SGR_BRACE_MAX);
            if (r == -2)
                return -1;
            too_many = r == -1;
        }
    for (uint32_t i = 0; i < s->nvalues + s->nredirs && !too_many; i++) {
        const sgr_word *w = i < s->nvalues ? &s->values[i] : &s->redirs[i - s->nvalues].target;
        if (w->flags & SGR_W_BRACE) {
            int r = sgr_sx_braces(&c->arena, w->text, w->len, words, lens, SGR_BRACE_MAX);
            if (r == -2)
                return -1;
            too_many = r == -1;
        }
    }
    if (too_many && !(s->flags & SGR_SEG_DYNAMIC)) {
        s->flags |= SGR_SEG_DYNAMIC;
        s->dyn_reason = "a brace expansion makes more than 256 words";
    }
    return 0;
}

/* Bounds that keep loop_words' lookups a constant cost each, so a line of many
 * "$f" operands stays linear; a line past them reads no loop variable (its "$f"
 * stays unknown).  The reference oracle (fuzz/refeval.c) holds the same ones. */
#define LOOP_MAX_VARS    96
#define LOOP_MAX_HEADERS 16
#define LOOP_MAX_WORDS   64

/* May a loop variable name its loop's words on this line at all: no function, no
 * nullglob/failglob, and within the bounds above.  Once per line: the headers are
 * kept in c->loop_hdr. */
static int loop_line(sgr_ctx *c)
{
    if (c->loop_call == c->ncalls)
        return c->loop_ok;
    c->loop_call = c->ncalls;
    c->loop_ok = 0;
    c->nloop_hdr = 0;
    const sgr_cmdline *cl = &c->res.cl;
    if (cl->nfuncs || cl->nvars > LOOP_MAX_VARS || memmem(c->line, c->len, "glob", 4))
        return 0;
    uint32_t words = 0;
    for (uint32_t h = 0; h < cl->nseg; h++)
        if (cl->seg[h].flags & SGR_SEG_LOOP) {
            words += cl->seg[h].nvalues;
            if (c->nloop_hdr == LOOP_MAX_HEADERS || words > LOOP_MAX_WORDS)
                return 0;
            c->loop_hdr[c->nloop_hdr++] = h;
        }
    c->loop_ok = c->nloop_hdr > 0;
    return c->loop_ok;
}

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
static uint32_t loop_words(sgr_ctx *c, uint32_t si, const sgr_word *w,
                           const sgr_word **out, uint32_t max)
{
    const sgr_cmdline *cl = &c->res.cl;
    if ((w->flags & SGR_W_UNKNOWN) != SGR_W_VAR || (w->flags & (SGR_W_GLOB | SGR_W_BRACE))
        || (cl->seg[si].flags & SGR_SEG_FUNCDEF)
        || w->span.off + w->span.len > c->len || w->span.len < 2 || w->span.len > 68)
        return 0;
    const char *src = c->line + w->span.off;
    uint32_t sl = w->span.len, q = src[0] == '"';
    if (q && (sl < 4 || src[sl - 1] != '"'))
        return 0;
    const char *e = src + q, *ee = src + sl - q;
    if (*e++ != '$')
        return 0;
    int br = e < ee && *e == '{';
    e += br;
    const char *name = e;
    while (e < ee && (name_byte(*e)))
        e++;
    uint32_t nl = (uint32_t)(e - name);
    if (!nl || (name[0] >= '0' && name[0] <= '9') || (br && (e >= ee || *e++ != '}')) || e != ee)
        return 0;
    if (!loop_line(c))
        return 0;
    uint32_t n = 0;
    int inside = 0;
    for (uint32_t v = 0; v < cl->nvars; v++) {
        const sgr_shvar *sv = &cl->vars[v];
        if (sv->nlen != nl || memcmp(sv->name, name, nl) != 0)
            continue;
        if (sv->seg != -1 || (sv->vflags & (SGR_W_UNKNOWN | SGR_W_PROCSUB)))
            return 0;
        /* the header word this record is, and whether w is in that loop's body */
        const sgr_word *hw = NULL;
        for (uint32_t h = 0; h < c->nloop_hdr && !hw; h++) {
            const sgr_segment *hs = &cl->seg[c->loop_hdr[h]];
            for (uint32_t k = 0; k < hs->nvalues && !hw; k++)
                if (hs->values[k].span.off == sv->span.off && hs->values[k].span.len == sv->span.len) {
                    hw = &hs->values[k];
                    const sgr_span *last = &hs->values[hs->nvalues - 1].span;
                    inside |= w->span.off >= last->off + last->len
                              && w->span.off + w->span.len <= hs->span.off + hs->span.len;
                }
        }
        if (!hw || n == max)
            return 0;
        if (!q) {
            /* unquoted: split and globbed again, so only a plain name stays itself */
            if (hw->flags || !hw->len)
                return 0;
            for (uint32_t k = 0; k < hw->len; k++)
                if (!name_byte(hw->text[k]) && hw->text[k] != '.' && hw->text[k] != '/'
                    && hw->text[k] != '-' && hw->text[k] != '+')
                    return 0;
        }
        out[n++] = hw;
    }
    return inside ? n : 0;
}

/* ---- module at N inside workspace ------------------------------------------
 * python -m NAME runs the first module NAME the interpreter finds, and it looks in
 * the directory it runs in first (after its builtin and frozen modules, which run
 * no file): the workspace's own app.py, or else an installed or standard one
 * (python -m http.server serves files).  argv[a] is such a module of the
 * workspace when, from every directory the segment may run in, each package on
 * the way (a of a.b) is a directory with __init__.py and NAME itself is a
 * package with __init__.py and __main__.py or, failing the package, NAME.py --
 * every such file a regular file that resolves inside the roots.  A package
 * without __init__.py is a namespace one, which an installed package of the same
 * name would win over.  Never on a line that makes files: the module may be
 * one it writes. */

/* cwd/rel[0..rl) + suffix: 1 a regular file inside the roots, 2 a file that is
 * not (or a place known only at run time), 0 none; -1 out of memory. */
static int module_file(sgr_ctx *c, const char *cwd, const char *rel, uint32_t rl, const char *suffix)
{
    char f[256 + 16];
    uint32_t sl = (uint32_t)strlen(suffix);
    memcpy(f, rel, rl);
    memcpy(f + rl, suffix, sl + 1);
    uint32_t outl;
    int unk;
    char *r = resolve_path(c, cwd, f, rl + sl, 0, &outl, NULL, &unk);
    if (!r)
        return -1;
    if (unk)
        return 2;
    struct stat st;
    if (stat(r, &st) != 0)
        return 0;
    return inside_roots(c, r, outl) && S_ISREG(st.st_mode) ? 1 : 2;
}

/* 1 when argv[a] of segment si is a module of the workspace (above), 0 when not,
 * -1 out of memory. */
static int module_inside(sgr_ctx *c, uint32_t si, uint32_t a)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    if (a >= s->argc || (s->argv[a].flags & ~(uint32_t)SGR_W_QUOTED) || c->res.nmade
        || nm->cwd_unknown || !nm->ncwds)
        return 0;
    const char *m = s->argv[a].text;
    uint32_t ml = s->argv[a].len;
    if (!ml || ml > 255)
        return 0;
    char rel[256];
    for (uint32_t i = 0; i < ml; i++) {
        char ch = m[i];
        int start = i == 0 || m[i - 1] == '.';
        if (ch == '.') {
            if (start || i + 1 == ml)
                return 0;
            rel[i] = '/';
        } else if (name_byte(ch) && !(start && ch >= '0' && ch <= '9')) {
            rel[i] = ch;
        } else {
            return 0;
        }
    }
    for (uint32_t k = 0; k < nm->ncwds; k++) {
        const char *cwd = nm->cwds[k];
        int r;
        for (uint32_t i = 0; i < ml; i++)
            if (rel[i] == '/' && (r = module_file(c, cwd, rel, i, "/__init__.py")) != 1)
                return r < 0 ? -1 : 0;
        /* a package wins over NAME.py beside it */
        r = module_file(c, cwd, rel, ml, "/__init__.py");
        if (r == 1)
            r = module_file(c, cwd, rel, ml, "/__main__.py");
        else if (r == 0)
            r = module_file(c, cwd, rel, ml, ".py");
        else if (r == 2)
            r = 0;
        if (r != 1)
            return r < 0 ? -1 : 0;
    }
    return 1;
}

/* add_path of an operand: a loop variable's use stands for the loop's words. */
static int add_operand(sgr_ctx *c, uint32_t si, sgr_norm *nm, uint32_t *cap, const sgr_word *w)
{
    const sgr_word *lw[LOOP_MAX_WORDS];
    uint32_t n = loop_words(c, si, w, lw, LOOP_MAX_WORDS);
    if (!n)
        return add_path(c, nm, cap, w->text, w->len, w->flags);
    for (uint32_t k = 0; k < n; k++)
        if (add_path(c, nm, cap, lw[k]->text, lw[k]->len, lw[k]->flags) < 0)
            return -1;
    return 0;
}

/* ---- link texts -----------------------------------------------------------------
 * A symbolic link's text is read from the directory the link is in, not from the
 * cwd: `ln -s ../dist/index.js bin/cli` makes bin/cli point to dist/index.js.  For
 * a program declared `links { OPTS }` (and `copies`), given one of OPTS and none
 * of its `unless` options, each relative source that names a path as written is
 * a path candidate from every directory the link may be in, and not from the cwd
 * (the program opens no source): under each directory an option value names
 * (-t DIR: a value whose meaning the declaration does not say, -S SUFFIX, is
 * read as such a directory too, which only adds candidates), under the last
 * operand (a directory: DEST/basename) and, for one source and a DEST without
 * a trailing '/' that is not a directory now (on a line of this segment alone),
 * beside it (DEST itself), or the cwd for a lone source.  Every place the link can be is checked, so reading more
 * places is stricter, never laxer.  Sources a shell still expands, and every
 * source when the last operand is one, are read as any operand is. */

static int plain_word(uint32_t flags);
static uint32_t opt_bits(const sgr_ctx *c, const sgt_progspec *ps, const char *o, size_t n);

/* Is segment s a link maker whose sources are link texts (see above)?  Not
 * when what it makes depends on words the line does not show: more arguments
 * (xargs ln -s SRC DEST: DEST is not the last), or find -exec's {} (find . is
 * one of the names {} stands for). */
static int link_texts(const sgr_ctx *c, const sgr_segment *s, const sgr_norm *nm)
{
    if (!s->spec)
        return 0;
    const sgt_progspec *ps = &c->t->progs[s->spec - 1];
    if (!(ps->flags & SGT_PROG_COPIES) || !ps->link_len || nm->npos <= nm->text_ops)
        return 0;
    for (const sgr_segment *a = s;; a = &c->res.cl.seg[a->parent]) {
        if ((a->flags & SGR_SEG_MOREARGS) || a->nest == SGR_NEST_EXEC)
            return 0;                       /* (under a wrapper too: xargs nice ln) */
        if (a->parent < 0 || a->nest != SGR_NEST_WRAPPED)
            break;
    }
    int on = 0;
    for (uint32_t i = 0; i < nm->nopts; i++) {
        uint32_t b = opt_bits(c, ps, nm->opts[i].s, nm->opts[i].len);
        if (b & SGR_OPT_LINKREL)
            return 0;
        on |= (b & SGR_OPT_LINK) != 0;
    }
    const sgr_word *d = &s->argv[nm->pos[nm->npos - 1]];
    for (uint32_t i = nm->text_ops; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        if (memmem(w->text, w->len, "{}", 2))
            return 0;                       /* find -exec's name, under any wrapper */
    }
    return on && plain_word(d->flags);
}

/* Path candidate DIR/SRC (DIR's flags: a ~ or an expansion in it stays one). */
static int add_joined(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *d, uint32_t dl, uint32_t df,
                      const char *w, uint32_t wl)
{
    if (!dl || (dl == 1 && d[0] == '.'))
        return add_path(c, nm, cap, w, wl, 0);
    char *j = sg_arena_alloc(&c->arena, (size_t)dl + 1 + wl + 1);
    if (!j)
        return -1;
    memcpy(j, d, dl);
    uint32_t n = dl;
    if (!(dl == 1 && d[0] == '/'))
        j[n++] = '/';
    memcpy(j + n, w, wl);
    n += wl;
    j[n] = '\0';
    return add_path(c, nm, cap, j, n, df);
}

/* Is d[0..dl) a directory (not a link to one) from every directory segment si
 * may run in, with nothing else on the line that could remove or replace it
 * first?  Then `ln -s SRC d` makes d/SRC's basename, and only that is read. */
static int link_dir_now(sgr_ctx *c, uint32_t si, const sgr_word *d, uint32_t dl)
{
    const sgr_norm *nm = &c->res.norm[si];
    if (c->res.cl.nseg != 1 || (d->flags & SGR_W_TILDE) || nm->cwd_unknown || !nm->ncwds)
        return 0;
    lookups_begin(c);
    uint32_t n = d->text[0] == '/' ? 1 : nm->ncwds;
    for (uint32_t k = 0; k < n; k++) {
        const char *cwd = d->text[0] == '/' ? "" : nm->cwds[k];
        size_t cl = strlen(cwd);
        char p[4096];
        if (cl + 1 + dl + 1 > sizeof p)
            return 0;
        memcpy(p, cwd, cl);
        size_t pl = cl;
        if (cl)
            p[pl++] = '/';
        memcpy(p + pl, d->text, dl);
        p[pl + dl] = '\0';
        size_t ll;
        if (sgr_pc_lstat(c->pc, p, NULL, 0, &ll) != SGR_PC_DIR)
            return 0;
    }
    return 1;
}

/* Segment si's operands as link texts (link_texts is true). */
static int add_link_texts(sgr_ctx *c, uint32_t si, sgr_norm *nm, uint32_t *cap)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    uint32_t k = nm->npos - nm->text_ops, nv = 0;
    const sgr_word *d = &s->argv[nm->pos[nm->npos - 1]];
    for (uint32_t v = 0; v < nm->nvals; v++)
        nv += !(nm->vflags[v] & SGR_V_TEXT);
    /* DEST without trailing slashes, and the directory it is in */
    uint32_t dl = d->len;
    while (dl > 1 && d->text[dl - 1] == '/')
        dl--;
    uint32_t pl = dl;
    while (pl && d->text[pl - 1] != '/')
        pl--;
    uint32_t ppl = pl > 1 ? pl - 1 : pl;    /* "a/b" -> "a", "/b" -> "/", "b" -> "" */
    /* DEST may be the link itself: one source and no trailing '/', and DEST is not
     * a directory that stays one until ln runs */
    int beside = k == 2 && dl == d->len && !link_dir_now(c, si, d, dl);
    for (uint32_t i = nm->text_ops; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        int last = i + 1 == nm->npos;
        int dest = last && k > 1;           /* the link (or its directory) itself */
        int source = !last || k == 1 || nv;
        int rel = plain_word(w->flags) && !(w->flags & SGR_W_TILDE) && w->len && w->text[0] != '/';
        if ((dest || (source && !rel)) && add_operand(c, si, nm, cap, w) < 0)
            return -1;
        if (!source || !rel)
            continue;
        for (uint32_t v = 0; v < nm->nvals; v++)
            if (!(nm->vflags[v] & SGR_V_TEXT)
                && add_joined(c, nm, cap, nm->vals[v].s, nm->vals[v].len, nm->vflags[v], w->text, w->len) < 0)
                return -1;
        if (k == 1 && !nv && add_path(c, nm, cap, w->text, w->len, w->flags) < 0)
            return -1;
        if (!last && add_joined(c, nm, cap, d->text, dl, d->flags, w->text, w->len) < 0)
            return -1;
        if (!last && beside && add_joined(c, nm, cap, d->text, ppl, d->flags, w->text, w->len) < 0)
            return -1;
    }
    return 0;
}

/* A path candidate w[0..wl) names a place known only at run time: it counts as
 * outside every root, and is kept as written for messages. */
static int add_unknown_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl)
{
    if (path_room(c, nm, cap) < 0)
        return -1;
    mark_unknown(nm, w, wl);
    nm->paths[nm->npaths].s = w;
    nm->paths[nm->npaths].len = wl;
    nm->ppat[nm->npaths] = NULL;
    nm->pin[nm->npaths++] = 0;
    return 0;
}

/* A code option's value is the program's own code (python3 -c, node -e): each
 * string literal in it ('...', "...", `...`; a backslash escapes the next byte)
 * is a path candidate as written, from the cwd, since the code may open it
 * (open('package.json'), require('./x.json')): a snippet rule's `not path
 * outside workspace` and the secrets rules see what it names.  So is each
 * literal of a here-document or here-string given to such a program.  Past
 * CODE_MAX_LITERALS literals the value counts as naming a place known only at
 * run time.  The value itself stays a candidate too. */
#define CODE_MAX_LITERALS 32
static int add_code_literals(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *v, uint32_t vl)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < vl; i++) {
        char q = v[i];
        if (q != '\'' && q != '"' && q != '`')
            continue;
        uint32_t b = ++i;
        while (i < vl && v[i] != q)
            i += v[i] == '\\' ? 2 : 1;
        if (i > vl)
            i = vl;
        if (i == b)
            continue;
        if (++n > CODE_MAX_LITERALS)
            return add_unknown_path(c, nm, cap, v, vl);
        if (add_path(c, nm, cap, v + b, i - b, 0) < 0)
            return -1;
    }
    return 0;
}

/* Resolve the path operands of segment si once, on first use. */
/* Redirection i of segment si: its target's paths (nm->rpath), and whether one
 * is outside the roots (nm->outside, which resolve_paths keeps per redirection). */
static int resolve_redir(sgr_ctx *c, uint32_t si, sgr_norm *nm, uint32_t *capp, uint32_t i)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_redir *r = &s->redirs[i];
    if ((r->kind == SGR_REDIR_HEREDOC || r->kind == SGR_REDIR_HERESTRING) && nm->code_body
        && add_code_literals(c, nm, capp, r->target.text, r->target.len) < 0)
        return -1;                          /* python3 - <<'EOF' ... open('x') ... EOF */
    if (r->kind == SGR_REDIR_HEREDOC || r->kind == SGR_REDIR_HERESTRING
        || r->kind == SGR_REDIR_DUP_IN || (r->kind == SGR_REDIR_DUP_OUT
            && r->target.len && ((r->target.text[0] >= '0' && r->target.text[0] <= '9') || r->target.text[0] == '-')))
        return 0;
    uint32_t first = nm->npaths;
    const char *tt = r->target.text;
    uint32_t tl = r->target.len, tf = r->target.flags;
    if (tf & SGR_W_BRACE) {
        /* bash brace-expands a redirection's target: one word is the file */
        const char *one[2];
        uint32_t onel[2];
        int nb = sgr_sx_braces(&c->arena, tt, tl, one, onel, 2);
        if (nb == -2)
            return -1;
        if (nb == 1) {
            tt = one[0];
            tl = onel[0];
            tf &= ~(uint32_t)SGR_W_BRACE;
        }
    }
    int st = stream_of(tt, tl);
    if (st != STREAM_NONE) {
        /* `> /dev/stdin` writes the file fd 0 names: the file an earlier
         * redirection opened (its paths), or one known only at run time */
        const sgr_redir *src = NULL;
        int sw = is_write(s, r) ? stream_write(s, r, st, &src) : 0;
        if (sw == 1) {
            uint32_t j = (uint32_t)(src - s->redirs);
            nm->rpath[2 * i] = nm->rpath[2 * j];
            nm->rpath[2 * i + 1] = nm->rpath[2 * j + 1];
            nm->outside = nm->routside[j];
            return 0;
        }
        if (sw == 2 && add_unknown_path(c, nm, capp, tt, tl) < 0)
            return -1;
    } else if (add_path(c, nm, capp, tt, tl, tf) < 0) {
        return -1;
    }
    nm->rpath[2 * i] = first;
    nm->rpath[2 * i + 1] = nm->npaths - first;
    return 0;
}

static int resolve_paths(sgr_ctx *c, uint32_t si)
{
    sgr_norm *nm = &c->res.norm[si];
    if (nm->paths_state)
        return 0;
    nm->paths_state = 1;
    c->mk_seg = si;                         /* what segments before it make */
    const sgr_segment *s = &c->res.cl.seg[si];
    uint32_t cap = 0;
    if (nm->links) {
        if (add_link_texts(c, si, nm, &cap) < 0)
            return -1;
    } else {
        for (uint32_t i = nm->text_ops; i < nm->npos; i++)
            if (add_operand(c, si, nm, &cap, &s->argv[nm->pos[i]]) < 0)
                return -1;
    }
    for (uint32_t i = 0; i < nm->nvals; i++) {
        if (!(nm->vflags[i] & SGR_V_TEXT)
            && add_path(c, nm, &cap, nm->vals[i].s, nm->vals[i].len, nm->vflags[i]) < 0)
            return -1;
        if ((nm->vflags[i] & SGR_V_CODE) && add_code_literals(c, nm, &cap, nm->vals[i].s, nm->vals[i].len) < 0)
            return -1;
    }
    if (s->nredirs && (!(nm->rpath = sg_arena_zalloc(&c->arena, sizeof *nm->rpath * 2 * s->nredirs))
                       || !(nm->routside = sg_arena_zalloc(&c->arena, s->nredirs))))
        return -1;
    for (uint32_t i = 0; i < s->nredirs; i++) {
        /* whether this target leaves the roots, apart from the segment's others */
        int was = nm->outside;
        sgr_sv was_path = nm->outside_path;
        nm->outside = 0;
        if (resolve_redir(c, si, nm, &cap, i) < 0)
            return -1;
        nm->routside[i] = (uint8_t)nm->outside;
        if (was) {
            nm->outside = 1;
            nm->outside_path = was_path;
        }
    }
    for (uint32_t i = 0; i < s->nassigns; i++) {
        /* assignment values that look like paths (PYTHONPATH=/x:/y) */
        const char *eq = memchr(s->assigns[i].text, '=', s->assigns[i].len);
        if (!eq)
            continue;
        const char *v = eq + 1, *end = s->assigns[i].text + s->assigns[i].len;
        while (v < end) {
            const char *colon = memchr(v, ':', (size_t)(end - v));
            const char *e = colon ? colon : end;
            if (memchr(v, '/', (size_t)(e - v)) && add_path(c, nm, &cap, v, (uint32_t)(e - v), s->assigns[i].flags) < 0)
                return -1;
            v = e + 1;
        }
    }
    /* a loop's words: each a name the loop variable takes, as an operand is */
    for (uint32_t i = 0; i < s->nvalues; i++)
        if (add_path(c, nm, &cap, s->values[i].text, s->values[i].len, s->values[i].flags) < 0)
            return -1;
    return 0;
}

/* ---- normalisation ----------------------------------------------------------- */

/* normalise_segment sizes opts and vals for the most a segment can have (see
 * there), so appending never grows them; the bound check is a guard only. */
static int push_str(sgr_sv *v, uint32_t *n, uint32_t cap, const char *s, uint32_t len)
{
    if (*n >= cap)
        return -1;
    v[*n].s = s;
    v[*n].len = len;
    (*n)++;
    return 0;
}

/* Append an option value with the flags of the word it came from (so `-f ~/x`
 * and `-f$HOME/x` are resolved or treated as unknown like any operand). */
static int push_val(sgr_norm *nm, uint32_t cap, const char *s, uint32_t len, uint32_t flags)
{
    if (nm->nvals >= cap)
        return -1;
    nm->vflags[nm->nvals] = flags;
    nm->valw[nm->nvals] = nm->curw;
    return push_str(nm->vals, &nm->nvals, cap, s, len);
}

/* Append an option the word being read gives. */
static int push_opt(sgr_norm *nm, uint32_t cap, const char *s, uint32_t len)
{
    if (nm->nopts >= cap)
        return -1;
    nm->optw[nm->nopts] = nm->curw;
    return push_str(nm->opts, &nm->nopts, cap, s, len);
}

static int is_alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* What option o (n bytes) is to program spec ps: SGR_OPT_* (0 without a spec). */
static uint32_t opt_bits(const sgr_ctx *c, const sgt_progspec *ps, const char *o, size_t n)
{
    return ps ? sgr_progopt_bits(c->t, ps, o, n) : 0;
}

/* SGR_V_TEXT for the value of an option with bits b when it is one of ps's `text`
 * options and counts as text where it stands: before the first operand, or
 * anywhere for a program whose options keep their meaning after operands
 * (`permute`).  A getopt program under POSIXLY_CORRECT reads `grep PAT FILE -e X`
 * as three files, so a value after an operand stays a path candidate.  Nothing
 * is text once the normaliser is unsure what a word is (unsure). */
static uint32_t text_of(const sgt_progspec *ps, const sgr_norm *nm, uint32_t b, int unsure)
{
    /* a `url` option's value is where it connects, and a path candidate too */
    uint32_t u = (b & SGR_OPT_URL ? SGR_V_URL : 0) | (b & SGR_OPT_URLUNK ? SGR_V_URLUNK : 0);
    if (b & SGR_OPT_CODE)
        return SGR_V_CODE | u;
    if (b & SGR_OPT_CWD)
        return SGR_V_CWD | u;
    return u | (!unsure && (b & SGR_OPT_TEXT) && (!nm->npos || (ps->flags & SGT_PROG_PERMUTE)) ? SGR_V_TEXT : 0);
}

/* A word the shell may still turn into other words, or none, at run time: $X,
 * $(cmd), $((n)), a glob or a brace expansion (quoted or not: the flags do not
 * say).  It may be an option (X=-e.; grep KEY $X reads KEY) or several words
 * (grep {KEY,-e.}), so which word is what is unknown from there on. */
static int may_split(const sgr_word *w)
{
    return (w->flags & (SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH | SGR_W_GLOB | SGR_W_BRACE)) != 0;
}

/* An option with bits b takes the next word, argv[*i + 1], as its value: it is
 * consumed (*i moves on), and makes the normaliser unsure if it may split. */
static int push_next_val(sgr_norm *nm, uint32_t cap, const sgr_segment *s, uint32_t *i,
                         const sgt_progspec *ps, uint32_t b, int *unsure)
{
    const sgr_word *v = &s->argv[++*i];
    *unsure |= may_split(v);
    return push_val(nm, cap, v->text, v->len, v->flags | SGR_V_WORD | text_of(ps, nm, b, *unsure));
}

/* Split argv into options, option values and operands (see sgr_norm), into
 * c->res.norm[si], which the caller has zeroed.  The segment's program spec and
 * basename are the ones sgr_unwrap found (segment spec and base). */
static int normalise_segment(sgr_ctx *c, uint32_t si, const char *cwd)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    sgr_norm *nm = &c->res.norm[si];
    nm->cwd = cwd;
    nm->prog.s = "";
    nm->has_alt = 0;
    if (s->argc == 0)
        return 0;
    nm->prog.s = s->prog;
    nm->prog.len = s->progl;
    const sgt_progspec *ps = s->spec ? &c->t->progs[s->spec - 1] : NULL;
    uint32_t seen = 0;                  /* SGR_OPT_* of every option given */
    /* unsure: which word is what is a guess from here on (a word that may split,
     * an abbreviated option): no more text values, and the first operand not text.
     * From the start on a line that defines a function, and for a program named by
     * a path (./grep is whatever the workspace holds, not the grep declared: the
     * basename is shorter than the word) */
    int done = 0, unsure = c->funcdefs || s->base != 0;
    uint32_t abbr_val = 0;              /* argv index of the first word read as the value
                                         * of an abbreviated value option, and as itself */
    /* a word gives at most three values (its own, the next one's as the value of
     * an abbreviation, and the PATH of an operand REV:PATH), and a word of n bytes
     * at most n options (itself and its letters) */
    uint32_t ocap = 0, vcap = 3 * s->argc, first;
    for (uint32_t i = 1; i < s->argc; i++) {
        ocap += s->argv[i].len;
        /* and the long options an abbreviation may stand for (below: a word the
         * program's declaration knows stands for itself alone) */
        const sgr_word *w = &s->argv[i];
        if (w->len > 2 && w->text[0] == '-' && w->text[1] == '-') {
            const char *eq = memchr(w->text, '=', w->len);
            uint32_t nl = eq ? (uint32_t)(eq - w->text) : w->len;
            const sgr_longopts *lo;
            if (nl < 3 || opt_bits(c, ps, w->text, nl))
                continue;
            if (!(lo = sgr_table_longopts(c->t, (uint8_t)w->text[2])))
                return -1;
            ocap += sgr_longopt_range(c->t, lo, w->text, nl, &first);
        }
    }
    if (!ocap)
        ocap = 1;
    /* the six arrays in one allocation, the 8-byte aligned ones first */
    char *m = sg_arena_alloc(&c->arena, sizeof *nm->opts * ocap + sizeof *nm->vals * vcap
                                        + sizeof *nm->pos * s->argc + sizeof *nm->vflags * vcap
                                        + sizeof *nm->optw * ocap + sizeof *nm->valw * vcap);
    if (!m)
        return -1;
    nm->opts = (sgr_sv *)m;
    nm->vals = nm->opts + ocap;
    nm->pos = (uint32_t *)(nm->vals + vcap);
    nm->vflags = nm->pos + s->argc;
    nm->optw = nm->vflags + vcap;
    nm->valw = nm->optw + ocap;
    for (uint32_t i = 1; i < s->argc; i++) {
        const sgr_word *w = &s->argv[i];
        nm->curw = i;
        const char *t = w->text;
        /* after --, a word that may split changes what only the first operand is */
        if (may_split(w) && !(done && nm->npos))
            unsure = 1;
        if (done || w->len < 2 || t[0] != '-') {
            nm->pos[nm->npos++] = i;
            continue;
        }
        /* find -exec CMD ARGS ;: the words up to the end word are the inner
         * command's (a segment of its own), not the wrapper's operands */
        if (ps && ps->exec_len && (opt_bits(c, ps, t, w->len) & SGR_OPT_EXEC)) {
            if (push_opt(nm, ocap, t, w->len) < 0)
                return -1;
            while (i + 1 < s->argc && !(opt_bits(c, ps, s->argv[i + 1].text, s->argv[i + 1].len) & SGR_OPT_END))
                i++;
            i++;                            /* the end word */
            continue;
        }
        if (w->len == 2 && t[1] == '-') {
            done = 1;
            continue;
        }
        if (t[1] == '-') {
            const char *eq = memchr(t, '=', w->len);
            uint32_t nl = eq ? (uint32_t)(eq - t) : w->len;
            if (push_opt(nm, ocap, t, nl) < 0)
                return -1;
            uint32_t b = opt_bits(c, ps, t, nl);
            seen |= b;
            /* getopt_long reads an unambiguous abbreviation as the option it starts:
             * grep --regex=P FILE is --regexp=P (the first operand is a file), and
             * sort --ke -k FILE gives --key the value -k.  The next word after an
             * abbreviation of a value option is read both ways, as its value and
             * as a word of its own (git push --n --force: --force is an option
             * whether or not --n takes a value), and after any, nothing more is
             * text: which word is what is a guess. */
            uint32_t declared = b, ab = !b && ps ? sgr_progopt_abbrev(c->t, ps, t, nl) : 0;
            if (ab) {
                unsure = 1;
                if (!eq && (ab & SGR_OPT_VALUE) && i + 1 < s->argc) {
                    const sgr_word *v = &s->argv[i + 1];
                    if (!abbr_val)
                        abbr_val = i + 1;
                    if (push_val(nm, vcap, v->text, v->len, v->flags | SGR_V_WORD
                                                        | text_of(ps, nm, ab & (SGR_OPT_CWD | SGR_OPT_URL | SGR_OPT_URLUNK), 1)) < 0)
                        return -1;
                }
            }
            /* ... and a rule's `option --output` sees `--outp` as the option it may
             * be: every long option the table knows that it starts (which one the
             * program takes depends on options no declaration lists, so all of
             * them; an option declared for this program is itself) */
            const sgr_longopts *lo = !declared && nl > 2 ? sgr_table_longopts(c->t, (uint8_t)t[2]) : NULL;
            if (!declared && nl > 2 && !lo)
                return -1;
            uint32_t nab = lo ? sgr_longopt_range(c->t, lo, t, nl, &first) : 0;
            for (uint32_t k = 0; k < nab; k++) {
                const char *o = sgr_str(c->t, lo->ref[first + k]);
                if (push_opt(nm, ocap, o, (uint32_t)strlen(o)) < 0)
                    return -1;
            }
            if (nab)
                unsure = 1;
            if (eq) {
                /* an abbreviation of a cwd option may name the directory (env --chd=D),
                 * one of a url option where it connects (curl --prox=URL) */
                uint32_t vb = b ? b : ab & (SGR_OPT_CWD | SGR_OPT_URL | SGR_OPT_URLUNK);
                if (push_val(nm, vcap, eq + 1, w->len - nl - 1, (w->flags & ~SGR_W_TILDE) | text_of(ps, nm, vb, unsure)) < 0)
                    return -1;
            } else if ((b & SGR_OPT_VALUE) && i + 1 < s->argc) {
                if (push_next_val(nm, vcap, s, &i, ps, b, &unsure) < 0)
                    return -1;
            }
            continue;
        }
        /* single dash: the word itself (for -exec, -name), then its letters; a
         * single-dash long option with its value attached (-fplugin=X.so,
         * -toolexec=CMD, as gcc and Go's flag package read them) is the option too,
         * in place of the letter the '=' would end */
        if (push_opt(nm, ocap, t, w->len) < 0)
            return -1;
        const char *seq = w->len > 3 ? memchr(t + 2, '=', w->len - 2) : NULL;
        if (seq && push_opt(nm, ocap, t, (uint32_t)(seq - t)) < 0)
            return -1;
        uint32_t b = opt_bits(c, ps, t, w->len);
        seen |= b;
        if (b & SGR_OPT_VALUE) {
            if (i + 1 < s->argc && push_next_val(nm, vcap, s, &i, ps, b, &unsure) < 0)
                return -1;
            continue;
        }
        for (uint32_t k = 1; k < w->len; k++) {
            if (!is_alnum(t[k])) {
                /* -f/etc/passwd: the rest is a value; -fplugin=X: X is */
                uint32_t at = t + k == seq ? k + 1 : k;
                if (push_val(nm, vcap, t + at, w->len - at, w->flags & ~SGR_W_TILDE) < 0)
                    return -1;
                break;
            }
            const char *o = c->short_opt[(uint8_t)t[k]];    /* "-x" (is_alnum: ASCII) */
            uint32_t ob = b;                                 /* -x alone: the word itself */
            if (w->len > 2) {
                if (push_opt(nm, ocap, o, 2) < 0)
                    return -1;
                ob = opt_bits(c, ps, o, 2);
                seen |= ob;
            }
            if (ob & SGR_OPT_VALUE) {
                if (k + 1 < w->len) {
                    if (push_val(nm, vcap, t + k + 1, w->len - k - 1,
                                 (w->flags & ~SGR_W_TILDE) | text_of(ps, nm, ob, unsure)) < 0)
                        return -1;
                } else if (i + 1 < s->argc && push_next_val(nm, vcap, s, &i, ps, ob, &unsure) < 0) {
                    return -1;
                }
                break;
            }
        }
    }
    nm->curw = UINT32_MAX;              /* values from here on are no option's */
    if (nm->npos) {
        const sgr_word *w = &s->argv[nm->pos[0]];
        /* a loop variable over one word stands for it: "$f" of a loop over the
         * glob t/[*].sh is one of the files it names, as the glob would be */
        const sgr_word *lw[LOOP_MAX_WORDS];
        if (loop_words(c, si, w, lw, LOOP_MAX_WORDS) == 1)
            w = lw[0];
        nm->subcmd.s = w->text;
        nm->subcmd.len = w->len;
        /* the first operand may be an abbreviated option's value: then the
         * subcommand is the operand after it, and the segment is decided both ways */
        if (abbr_val && nm->pos[0] == abbr_val) {
            nm->has_alt = 1;
            nm->subcmd_alt = nm->npos > 1 ? (sgr_sv){ s->argv[nm->pos[1]].text, s->argv[nm->pos[1]].len }
                                          : (sgr_sv){ NULL, 0 };
        }
        /* grep PATTERN FILE, unless -e or -f gives the pattern (anywhere: with one
         * of them, the first operand is a file in any parsing mode) */
        nm->text_ops = ps && (ps->flags & SGT_PROG_TEXT_OPERAND) && !(seen & SGR_OPT_FIRST) && !unsure;
        /* echo and printf open no file: every word they are given is printed */
        if (ps && (ps->flags & SGT_PROG_TEXT_ALL))
            nm->text_ops = nm->npos;
    }
    /* git show HEAD:.env reads the file .env as a revision holds it: an operand
     * REV:PATH (or :PATH, :0:PATH, the index) also names PATH, a value the path
     * conditions see (relative to the cwd, as git's ./PATH is; a path from the
     * repository's root ends the same).  Not a URL's //host, nor an empty PATH. */
    if (ps && (ps->flags & SGT_PROG_TREE))
        for (uint32_t k = 0; k < nm->npos; k++) {
            const sgr_word *w = &s->argv[nm->pos[k]];
            const char *col = memchr(w->text, ':', w->len);
            if (!col)
                continue;
            uint32_t at = (uint32_t)(col - w->text) + 1;
            if (at + 2 < w->len && w->text[at] >= '0' && w->text[at] <= '3' && w->text[at + 1] == ':')
                at += 2;                    /* :STAGE:PATH */
            if (at >= w->len || w->text[at] == '/')
                continue;
            if (push_val(nm, vcap, w->text + at, w->len - at, w->flags & ~SGR_W_TILDE) < 0)
                return -1;
        }
    nm->links = link_texts(c, s, nm);
    nm->code_body = ps && ps->code_len;
    return 0;
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

/* The caller's home, resolved once a call (NULL: none known). */
static const char *home_of(sgr_ctx *c, uint32_t *len)
{
    if (c->rhome_call != c->ncalls) {
        c->rhome_call = c->ncalls;
        const char *h = c->opts->home ? c->opts->home : getenv("HOME");
        c->rhome = h && h[0] == '/' ? resolve_path(c, "/", h, (uint32_t)strlen(h), 0, &c->rhomel, NULL, NULL) : NULL;
    }
    *len = c->rhomel;
    return c->rhome;
}

/* Is path s[0..n) (dirs: or a directory above it other than "/") a word "~" or
 * "~/REST" of set, with ~ the caller's home? */
__attribute__((noinline))
static int tilde_words_slow(sgr_ctx *c, uint32_t set, const char *s, uint32_t n, int dirs)
{
    uint32_t hl;
    const char *h = home_of(c, &hl);
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
    const char *home = tilde_of(c, set) ? home_of(c, &hl) : NULL;
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

/* Does redirection r of segment s write a file (stream_write for stream names)? */
static int is_write(const sgr_segment *s, const sgr_redir *r)
{
    switch (r->kind) {
    case SGR_REDIR_WRITE: case SGR_REDIR_APPEND: case SGR_REDIR_CLOBBER: case SGR_REDIR_RDWR:
    case SGR_REDIR_BOTH: case SGR_REDIR_BOTH_APPEND:
        break;
    case SGR_REDIR_DUP_OUT:
        /* >&2 and 2>&1 copy a descriptor; >&file (no digits) writes a file */
        if (!r->target.len || (r->target.text[0] >= '0' && r->target.text[0] <= '9')
            || (r->target.len == 1 && r->target.text[0] == '-'))
            return 0;
        break;
    default:
        return 0;
    }
    int st = stream_of(r->target.text, r->target.len);
    return st == STREAM_NONE || stream_write(s, r, st, NULL) != 0;
}

static int is_read(const sgr_redir *r)
{
    return (r->kind == SGR_REDIR_READ || r->kind == SGR_REDIR_RDWR) && !not_a_file(r->target.text, r->target.len);
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
    if (resolve_paths(c, si) < 0)
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
    if (resolve_paths(c, si) < 0)
        return -1;
    const sgr_segment *s = &c->res.cl.seg[si];
    sgr_norm *nm = &c->res.norm[si];
    int any = 0;
    for (uint32_t i = 0; i < s->nredirs; i++) {
        const sgr_redir *r = &s->redirs[i];
        uint32_t k = nm->rpath[2 * i], np = nm->rpath[2 * i + 1];
        if (!is_write(s, r) || !np)
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
            if ((acc = module_inside(c, si, a)) < 0)
                return -1;
            break;
        case SGT_OP_PSCRIPT: acc = (s->flags & SGR_SEG_PSCRIPT) != 0; break;
        case SGT_OP_CWD_OUTSIDE:
            acc = nm->cwd_unknown != 0;
            for (uint32_t k = 0; k < nm->ncwds && !acc; k++)
                acc = !inside_roots(c, nm->cwds[k], (uint32_t)strlen(nm->cwds[k]));
            break;
        case SGT_OP_PATH_OUTSIDE:
            if (resolve_paths(c, si) < 0)
                return -1;
            acc = nm->outside;
            if (acc)
                c->m_path = nm->outside_path;
            break;
        case SGT_OP_PATH_INSIDE:
            if (resolve_paths(c, si) < 0)
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
            if (resolve_paths(c, si) < 0)
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
                if (!(op == SGT_OP_REDIR_WRITES ? is_write(s, r) : is_read(r)))
                    continue;
                acc = b == SGT_NONE || set_has(c, b, r->target.text, r->target.len);
                if (acc) {
                    c->m_path.s = r->target.text;
                    c->m_path.len = r->target.len;
                    break;
                }
                /* or a path the target resolves to (`> /dev/./sda`) */
                if (resolve_paths(c, si) < 0)
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
    if (resolve_paths(c, si) < 0)
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

/* ---- files made on the line ----------------------------------------------------
 * A later segment of the line sees what an earlier one makes: a redirection's file,
 * the operands of a program declared `writes operands` (tee, touch), and what one
 * declared `copies` makes (cp, mv, ln, install: its last operand, or in the
 * directory that or an option value names, each other operand's name), which is
 * a copy of or a link to its source.  Such a name is read through to its source
 * (as a symlink reads a relative source, and from the cwd), besides as itself,
 * and a segment that runs a file made earlier (./x.sh, or the first operand of a
 * program declared `runs operand`: sh, source, python3, ...) is dynamic. */

/* A word that names a path as written: nothing the shell still expands. */
static int plain_word(uint32_t flags)
{
    return !(flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE));
}

static int made_add(sgr_ctx *c, uint32_t *cap, uint32_t seg, const char *name, uint32_t nl, uint32_t nf,
                    const char *src, uint32_t sl, uint32_t sf, int under)
{
    sgr_result *r = &c->res;
    if (r->nmade == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        sgr_made *m = *cap ? sg_arena_grow(&c->arena, (void *)r->made, sizeof *m * *cap, sizeof *m * ncap)
                           : sg_arena_alloc(&c->arena, sizeof *m * ncap);
        if (!m)
            return -1;
        r->made = m;
        *cap = ncap;
    }
    sgr_made *m = (sgr_made *)&r->made[r->nmade++];
    m->seg = seg;
    m->name.s = name;
    m->name.len = nl;
    m->name_flags = nf;
    m->src.s = src;
    m->src.len = sl;
    m->src_flags = sf;
    m->under = under;
    return 0;
}

/* An operand as the program receives it. */
typedef struct opword {
    const char *s;
    uint32_t l, f;
} opword;

/* Segment s's operands (nm->pos) with each brace expansion made, into *out (the
 * arena's): how many; -1 when they would be more than SGR_BRACE_MAX (brace_check
 * has made the segment dynamic), -2 when the arena runs out. */
static int operand_words(sgr_ctx *c, const sgr_segment *s, const sgr_norm *nm, opword **out)
{
    opword *ow = sg_arena_alloc(&c->arena, sizeof *ow * SGR_BRACE_MAX);
    const char **alt = sg_arena_alloc(&c->arena, sizeof *alt * SGR_BRACE_MAX);
    uint32_t *altl = sg_arena_alloc(&c->arena, sizeof *altl * SGR_BRACE_MAX);
    if (!ow || !alt || !altl)
        return -2;
    int k = 0;
    for (uint32_t i = 0; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        int na = (w->flags & SGR_W_BRACE) ? sgr_sx_braces(&c->arena, w->text, w->len, alt, altl, SGR_BRACE_MAX) : 0;
        if (na == -2)
            return -2;
        if (na <= 0) {
            if (k == SGR_BRACE_MAX)
                return -1;
            ow[k++] = (opword){ w->text, w->len, w->flags };
            continue;
        }
        for (int a = 0; a < na; a++) {
            if (k == SGR_BRACE_MAX)
                return -1;
            ow[k++] = (opword){ alt[a], altl[a], w->flags & ~(uint32_t)SGR_W_BRACE };
        }
    }
    *out = ow;
    return k;
}

/* The names each segment may make (into c->res.made), from its redirections and
 * its program's declaration.  -1: out of memory. */
static int made_words(sgr_ctx *c)
{
    sgr_result *r = &c->res;
    uint32_t cap = 0;
    for (uint32_t si = 0; si < r->cl.nseg; si++) {
        const sgr_segment *s = &r->cl.seg[si];
        const sgr_norm *nm = &r->norm[si];
        for (uint32_t i = 0; i < s->nredirs; i++) {
            const sgr_word *t = &s->redirs[i].target;
            if (is_write(s, &s->redirs[i]) && plain_word(t->flags) && t->len && !not_a_file(t->text, t->len)
                && made_add(c, &cap, si, t->text, t->len, t->flags, NULL, 0, 0, 0) < 0)
                return -1;
        }
        if (!s->argc || !s->spec)
            continue;
        uint32_t pf = c->t->progs[s->spec - 1].flags;
        if (!(pf & (SGT_PROG_WRITES | SGT_PROG_COPIES)) || !nm->npos)
            continue;
        /* the operands as the program gets them: each brace expansion's words */
        opword *ow;
        int k = operand_words(c, s, nm, &ow);
        if (k < 0)
            return k == -2 ? -1 : 0;        /* -1: too many words, the segment is dynamic */
        if (pf & SGT_PROG_WRITES)
            for (int i = 0; i < k; i++)
                if (plain_word(ow[i].f) && made_add(c, &cap, si, ow[i].s, ow[i].l, ow[i].f, NULL, 0, 0, 0) < 0)
                    return -1;
        if (!(pf & SGT_PROG_COPIES) || !k)
            continue;
        const char *nmw = k == 1 ? "." : ow[k - 1].s;
        uint32_t nml = k == 1 ? 1 : ow[k - 1].l, nmf = k == 1 ? 0 : ow[k - 1].f;
        for (int i = 0; i + 1 < k || (k == 1 && i == 0); i++) {
            /* a glob or an expansion is a source known only when it runs */
            const char *sw = ow[i].s;
            uint32_t sl = ow[i].l, sf = ow[i].f;
            /* `ln -s SRC` makes ./basename(SRC) */
            if (plain_word(nmf)) {
                if (k > 1 && made_add(c, &cap, si, nmw, nml, nmf, sw, sl, sf, 0) < 0)
                    return -1;
                if (made_add(c, &cap, si, nmw, nml, nmf, sw, sl, sf, 1) < 0)
                    return -1;
            }
            for (uint32_t v = 0; v < nm->nvals; v++)          /* -t DIR */
                if (!(nm->vflags[v] & SGR_V_TEXT) && plain_word(nm->vflags[v])
                    && made_add(c, &cap, si, nm->vals[v].s, nm->vals[v].len, nm->vflags[v], sw, sl, sf, 1) < 0)
                    return -1;
        }
    }
    return 0;
}

/* w resolved from every directory segment si may run in (once for an absolute
 * or ~ word), each passed to fn; 0, or -1 on OOM.  Not through made links. */
static int each_place(sgr_ctx *c, uint32_t si, const char *w, uint32_t wl, uint32_t flags,
                      int (*fn)(sgr_ctx *, uint32_t, const char *, uint32_t, const char *, void *), void *ud)
{
    const sgr_norm *nm = &c->res.norm[si];
    int tilde = (flags & SGR_W_TILDE) && w[0] == '~';
    if (tilde && wl > 1 && w[1] != '/')
        return 0;
    if (!tilde && w[0] != '/' && nm->cwd_unknown)
        return 0;
    uint32_t n = tilde || w[0] == '/' ? 1 : nm->ncwds;
    for (uint32_t k = 0; k < n; k++) {
        const char *cwd = nm->cwds[nm->ncwds - 1 - k];
        uint32_t rl;
        int unk;
        char *r = resolve_path(c, cwd, w, wl, tilde, &rl, NULL, &unk);
        if (!r)
            return -1;
        if (!unk && fn(c, si, r, rl, cwd, ud) < 0)
            return -1;
    }
    return 0;
}

typedef struct made_ctx {
    const sgr_made *m;
    uint32_t cap;
} made_ctx;

/* Is partly known word w (flags) relative for certain?  Not when it starts with an
 * expansion, which may make it absolute: its patterns read such a start as some
 * place (add_patterns). */
static int part_relative(const char *w, uint32_t flags)
{
    return w[0] != '/' && w[0] != '$' && w[0] != '`' && !(w[0] == '~' && (flags & SGR_W_TILDE));
}

static sgr_mkres *mk_push(sgr_ctx *c, made_ctx *mc)
{
    if (c->nmk == mc->cap) {
        uint32_t ncap = mc->cap ? mc->cap * 2 : 8;
        sgr_mkres *a = mc->cap ? sg_arena_grow(&c->arena, c->mk, sizeof *a * mc->cap, sizeof *a * ncap)
                               : sg_arena_alloc(&c->arena, sizeof *a * ncap);
        if (!a)
            return NULL;
        c->mk = a;
        mc->cap = ncap;
    }
    sgr_mkres *x = &c->mk[c->nmk++];
    memset(x, 0, sizeof *x);
    return x;
}

/* made_put for a link or copy of a word the shell still expands (ln -s
 * /u$(x)r/../etc d, cp "$f" d): made at r (or, under a directory, at r and the
 * word's last component: a name of some one component when an expansion is in
 * it); its target is the word as written, read as a pattern by the walk. */
static int made_put_part(sgr_ctx *c, made_ctx *mc, uint32_t si, const char *r, uint32_t rl, const char *cwd)
{
    const sgr_made *m = mc->m;
    const char *s = m->src.s;
    uint32_t sl = m->src.len;
    while (sl > 1 && s[sl - 1] == '/')
        sl--;
    const char *name = r;
    uint32_t nl = rl;
    sgr_ppat *npat = NULL;
    if (m->under) {
        const char *b = s + sl;
        while (b > s && b[-1] != '/')
            b--;
        uint32_t bl = (uint32_t)(s + sl - b);
        if (!bl || (bl == 1 && b[0] == '.') || (bl == 2 && b[0] == '.' && b[1] == '.'))
            return 0;
        int exp = memchr(b, '$', bl) || memchr(b, '`', bl);
        char *j = sg_arena_alloc(&c->arena, rl + 1 + bl + 1);
        if (!j)
            return -1;
        memcpy(j, r, rl);
        nl = rl;
        if (nl > 1)
            j[nl++] = '/';
        if (exp) {
            /* DIR/NAME, NAME some one name: the literal bytes, then XSTAR */
            uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * (nl + 1));
            npat = sg_arena_alloc(&c->arena, sizeof *npat);
            if (!el || !npat)
                return -1;
            for (uint32_t i = 0; i < nl; i++)
                el[i] = SGR_PP_LIT | (uint32_t)(unsigned char)j[i] << 8;
            el[nl] = SGR_PP_XSTAR;
            npat->el = el;
            npat->n = nl + 1;
            npat->cls = NULL;
            npat->words = NULL;
        }
        memcpy(j + nl, b, bl);
        nl += bl;
        j[nl] = '\0';
        name = j;
    }
    int rel = part_relative(s, m->src_flags);
    size_t cl = rel ? strlen(cwd) : 0;
    char *tb = sg_arena_alloc(&c->arena, cl + 1 + sl + 1);
    if (!tb)
        return -1;
    size_t tbl = 0;
    if (rel) {
        memcpy(tb, cwd, cl);
        tbl = cl;
        if (!(cl == 1 && cwd[0] == '/'))
            tb[tbl++] = '/';
    }
    memcpy(tb + tbl, s, sl);
    tbl += sl;
    tb[tbl] = '\0';
    sgr_mkres *x = mk_push(c, mc);
    if (!x)
        return -1;
    x->seg = si;
    x->name = name;
    x->nl = nl;
    x->ta = s;
    x->tal = sl;
    x->tb = tb;
    x->tbl = (uint32_t)tbl;
    x->npat = npat;
    x->pflags = m->src_flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_TILDE | SGR_W_QUOTED);
    return 0;
}

/* each_place's fn for made_resolve: one resolved made name. */
static int made_put(sgr_ctx *c, uint32_t si, const char *r, uint32_t rl, const char *cwd, void *ud)
{
    made_ctx *mc = ud;
    const sgr_made *m = mc->m;
    const char *name = r;
    uint32_t nl = rl;
    const char *ta = NULL, *tb = NULL;
    uint32_t tal = 0, tbl = 0;
    int glob = m->src.s && (m->src_flags & SGR_W_GLOB) && !(m->src_flags & (SGR_W_UNKNOWN | SGR_W_BRACE));
    int part = m->src.s && (m->src_flags & SGR_W_UNKNOWN) && !(m->src_flags & SGR_W_BRACE);
    int lost = m->src.s && !plain_word(m->src_flags) && !glob && !part;
    if (m->src.s && lost && m->under)
        return 0;                           /* no name to put under a directory */
    sgr_ppat *npat = NULL;
    if (part)
        return made_put_part(c, mc, si, r, rl, cwd);
    if (glob && m->under) {
        /* DIR/basename(GLOB): a name that is itself a glob */
        const char *s = m->src.s, *b = s + m->src.len;
        while (b > s && b[-1] == '/')
            b--;
        const char *e = b;
        while (b > s && b[-1] != '/')
            b--;
        uint32_t bl = (uint32_t)(e - b);
        char *j = sg_arena_alloc(&c->arena, rl + 1 + bl + 1);
        ptoks t;
        patb cl = { NULL, 0, 0, NULL, 0 };
        npat = sg_arena_alloc(&c->arena, sizeof *npat);
        if (!j || !npat)
            return -1;
        memcpy(j, r, rl);
        nl = rl;
        if (nl > 1)
            j[nl++] = '/';
        memcpy(j + nl, b, bl);
        nl += bl;
        j[nl] = '\0';
        name = j;
        if (pat_tokens(c, j, nl, SGR_W_GLOB, &t, &cl) < 0)
            return -1;
        npat->el = t.tk;
        npat->n = t.n;
        npat->cls = (const uint64_t (*)[4])cl.cls;
        npat->words = NULL;
    }
    if (glob) {
        ta = m->src.s;                      /* spliced as written, read as a glob */
        tal = m->src.len;
    } else if (m->src.s && !lost) {
        const char *s = m->src.s;
        uint32_t sl = m->src.len;
        while (sl > 1 && s[sl - 1] == '/')
            sl--;
        if (m->under) {
            /* name/basename(src) */
            const char *b = s + sl;
            while (b > s && b[-1] != '/')
                b--;
            uint32_t bl = (uint32_t)(s + sl - b);
            if (!bl || (bl == 1 && b[0] == '.') || (bl == 2 && b[0] == '.' && b[1] == '.'))
                return 0;
            char *j = sg_arena_alloc(&c->arena, rl + 1 + bl + 1);
            if (!j)
                return -1;
            memcpy(j, r, rl);
            nl = rl;
            if (nl > 1)
                j[nl++] = '/';
            memcpy(j + nl, b, bl);
            nl += bl;
            j[nl] = '\0';
            name = j;
        }
        int tilde = (m->src_flags & SGR_W_TILDE) && s[0] == '~';
        if (tilde) {
            uint32_t hl;
            const char *h = home_of(c, &hl);
            if (!h)
                return 0;
            char *t = sg_arena_alloc(&c->arena, hl + sl + 1);
            if (!t)
                return -1;
            memcpy(t, h, hl);
            memcpy(t + hl, s + 1, sl - 1);
            t[hl + sl - 1] = '\0';
            ta = t;
            tal = hl + sl - 1;
        } else {
            ta = s;
            tal = sl;
        }
        int unk;
        tb = resolve_path(c, cwd, s, sl, tilde, &tbl, NULL, &unk);
        if (!tb)
            return -1;
        if (unk)
            tb = NULL;
    }
    sgr_mkres *x = mk_push(c, mc);
    if (!x)
        return -1;
    x->seg = si;
    x->name = name;
    x->nl = nl;
    x->ta = lost ? "" : ta;                 /* lost: a link to some place (tal 0) */
    x->tal = tal;
    x->tb = tb;
    x->tbl = tbl;
    x->lost = lost;
    x->glob = glob;
    x->npat = npat;
    return 0;
}

/* Resolve every made name (c->res.made) into c->mk.  -1: out of memory. */
static int made_resolve(sgr_ctx *c)
{
    made_ctx mc = { NULL, 0 };
    for (uint32_t i = 0; i < c->res.nmade; i++) {
        mc.m = &c->res.made[i];
        if (each_place(c, mc.m->seg, mc.m->name.s, mc.m->name.len, mc.m->name_flags, made_put, &mc) < 0)
            return -1;
    }
    return 0;
}

/* each_place's fn for runs_made: is r a name an earlier segment makes? */
static int made_hit(sgr_ctx *c, uint32_t si, const char *r, uint32_t rl, const char *cwd, void *ud)
{
    (void)cwd;
    for (uint32_t i = 0; i < c->nmk; i++) {
        const sgr_mkres *m = &c->mk[i];
        int named = m->npat ? sgr_pp_word(m->npat, r, rl, 0) : m->nl == rl && memcmp(m->name, r, rl) == 0;
        if (named && runs_before(&c->res.cl, m->seg, si))
            *(const char **)ud = m->name;
    }
    return 0;
}

/* A segment that runs a file an earlier segment of the line makes is dynamic:
 * what it runs is known only when it runs.  -1: out of memory. */
static int runs_made(sgr_ctx *c)
{
    sgr_result *r = &c->res;
    for (uint32_t si = 0; si < r->cl.nseg && c->nmk; si++) {
        sgr_segment *s = &r->cl.seg[si];
        const sgr_norm *nm = &r->norm[si];
        if (!s->argc || (s->flags & SGR_SEG_DYNAMIC))
            continue;
        const char *hit = NULL;
        const sgr_word *a0 = &s->argv[0];
        if (plain_word(a0->flags) && memchr(a0->text, '/', a0->len)
            && each_place(c, si, a0->text, a0->len, a0->flags, made_hit, &hit) < 0)
            return -1;
        if (!hit && s->spec && (c->t->progs[s->spec - 1].flags & SGT_PROG_RUNS_FILE) && nm->npos) {
            const sgt_progspec *ps = &c->t->progs[s->spec - 1];
            int script = 0;                 /* sh -c: the operand is not a file */
            for (uint32_t i = 0; i < nm->nopts && !script; i++)
                script = (sgr_progopt_bits(c->t, ps, nm->opts[i].s, nm->opts[i].len) & SGR_OPT_SCRIPT) != 0;
            const sgr_word *f = &s->argv[nm->pos[0]];
            const char *ft = f->text;
            uint32_t fl = f->len, ff = f->flags;
            if (ff & SGR_W_BRACE) {
                /* source {./x.sh,}: the word the braces make */
                const char *one[2];
                uint32_t onel[2];
                int nb = sgr_sx_braces(&c->arena, ft, fl, one, onel, 2);
                if (nb == -2)
                    return -1;
                if (nb == 1) {
                    ft = one[0];
                    fl = onel[0];
                    ff &= ~(uint32_t)SGR_W_BRACE;
                }
            }
            if (!script && plain_word(ff) && each_place(c, si, ft, fl, ff, made_hit, &hit) < 0)
                return -1;
        }
        if (hit) {
            s->flags |= SGR_SEG_DYNAMIC;
            size_t l = strlen(hit) + 96;
            char *why = sg_arena_alloc(&c->arena, l);
            if (!why)
                return -1;
            snprintf(why, l, "it runs '%s', which an earlier command on the line writes", hit);
            s->dyn_reason = why;
        }
    }
    return 0;
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
        if (normalise_segment(c, i, cw[ncw - 1]) < 0 || brace_check(c, i) < 0) {
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
            if (resolve_paths(c, i) < 0) {
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
    if (made_words(c) < 0 || made_resolve(c) < 0 || runs_made(c) < 0) {
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
