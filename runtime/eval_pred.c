/* eval_pred.c - the predicates of a rule's bytecode and run(), their interpreter:
 * sets, paths inside sets, pipes, hooks, option values, destinations. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "eval_int.h"

static int seg_expands(sgr_ctx *c, const sgr_segment *s, uint32_t b);

/* ---- predicates -------------------------------------------------------------- */

/* words_may_have's first use of set: its filter. */
__attribute__((noinline))
void sgr_pred_words_filter(sgr_ctx *c, uint32_t set)
{
    const sgt_set *st = &c->t->sets[set];
    for (uint32_t k = 0; k < st->nwords; k++) {
        const char *w = sgr_str(c->t, c->t->words[st->words_off + k]);
        sgr_strfilt_add(&c->wf[set], w, strlen(w), 0);
    }
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
uint32_t sgr_pred_dfa_measure(sgr_ctx *c, uint32_t d)
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

/* set_has's automaton run, out of line: most tests end before it. */
__attribute__((noinline))
int sgr_pred_dfa_has(const sgr_ctx *c, uint32_t d, const char *s, uint32_t n)
{
    if (c->dlow[d] && !has_byte_below(s, n, c->dlow[d]))
        return 0;                            /* no byte of a class every match has */
    return sgr_dfa_match(sgr_table_dfa(c->t, d), s, n) >= 0;
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
int64_t sgr_pred_paths_mask(sgr_ctx *c, sgr_norm *nm)
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
int sgr_pred_run_line(sgr_ctx *c, uint32_t off, uint32_t len)
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
                      : pf & SGT_PROG_REMOTE_OPS ? SGR_DEST_REMOTE : SGR_DEST_SSH;
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
int sgr_pred_run(sgr_ctx *c, uint32_t si, uint32_t off, uint32_t len, uint32_t from)
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
                int64_t all = sgr_pred_paths_mask(c, nm);
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
