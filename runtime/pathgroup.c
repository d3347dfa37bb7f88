/* pathgroup.c - the lazily built product of several sets' automata (pathgroup.h).
 *
 * Layout.  A product state is known by the offset of its row in `rows`: a row is
 * the state's accept mask followed by one next-state offset per joint byte class
 * (`unmade` until a run needs it), so a step is one load from the row and the
 * mask one load more.  The dead state's row is at offset 0 and leads to itself;
 * the start state's row follows it.  `unmade` is the offset of one more row, past
 * every state's, with mask 0 and every transition to itself: a run steps on
 * without testing each transition, and one that ends there met a transition not
 * made yet and is run again, making them.  `comp` keeps each state's tuple of the
 * sets' states, the key by which `slots` finds a state already made. */
#include <string.h>
#include "pathgroup.h"
#include "common/alloc.h"

#define NOT_MADE UINT32_MAX      /* no state: state_of and step_make failed */

struct sgr_pgroup {
    const sgr_dfa *d[SGR_PG_MAX];
    uint32_t n;                 /* sets */
    uint32_t njc;               /* joint byte classes */
    uint32_t stride;            /* 1 + njc: uint32s in a row */
    uint8_t jcls[256];          /* byte -> joint class */
    uint8_t rep[256];           /* joint class -> a byte in it */
    uint32_t max;               /* states kept at most */
    uint32_t unmade;            /* offset of the row a transition not made leads to */
    uint32_t ns;                /* states in use */
    uint32_t *rows;             /* [(max + 1) * stride]: the states', then unmade's */
    uint32_t *comp;             /* [max * n] */
    uint32_t *slots;            /* [nslots] state number + 1, 0: empty */
    uint32_t nslots;            /* a power of two, at least 2 * max */
};

/* Split the joint classes cls[] further by the classes cm[] of one more automaton:
 * two bytes share a class afterwards only if they shared both before.  At most 256
 * classes ever exist, so the pairs seen fit a small open-addressed table. */
static void refine(uint8_t cls[256], uint32_t *ncls, const uint8_t cm[256])
{
    uint32_t keys[512];
    uint8_t vals[512];
    uint8_t out[256];
    uint32_t k = 0;
    memset(keys, 0xff, sizeof keys);
    for (int b = 0; b < 256; b++) {
        uint32_t key = (uint32_t)cls[b] << 8 | cm[b];
        uint32_t h = (key * 2654435761u) >> 23;
        while (keys[h] != UINT32_MAX && keys[h] != key)
            h = (h + 1) & 511;
        if (keys[h] == UINT32_MAX) {
            keys[h] = key;
            vals[h] = (uint8_t)k++;          /* at most 256 pairs: one per byte */
        }
        out[b] = vals[h];
    }
    memcpy(cls, out, 256);
    *ncls = k;
}

static uint32_t tuple_hash(const uint32_t *t, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ t[i]) * 0x100000001b3u;
    return (uint32_t)(h ^ h >> 29);
}

/* Room for one more state; -1 at the bound.  The arrays are allocated for the
 * bound at once (untouched pages cost no memory), so a run never allocates. */
static int reserve(const sgr_pgroup *g)
{
    return g->ns < g->max ? 0 : -1;
}

/* The offset of the state whose tuple is t, made if new; NOT_MADE on failure. */
static uint32_t state_of(sgr_pgroup *g, const uint32_t *t)
{
    uint32_t mask = g->nslots - 1, h = tuple_hash(t, g->n) & mask;
    for (; g->slots[h]; h = (h + 1) & mask) {
        uint32_t k = g->slots[h] - 1;
        if (memcmp(g->comp + (size_t)k * g->n, t, sizeof *t * g->n) == 0)
            return k * g->stride;
    }
    if (reserve(g) < 0)
        return NOT_MADE;
    uint32_t k = g->ns++, acc = 0;
    memcpy(g->comp + (size_t)k * g->n, t, sizeof *t * g->n);
    for (uint32_t i = 0; i < g->n; i++)
        if (g->d[i]->accept[t[i]] >= 0)
            acc |= 1u << i;
    uint32_t *row = g->rows + (size_t)k * g->stride;
    row[0] = acc;
    for (uint32_t j = 0; j < g->njc; j++)
        row[1 + j] = g->unmade;
    g->slots[h] = k + 1;
    return k * g->stride;
}

/* Make the two states every group starts with: dead (offset 0, all its
 * transitions to itself) and start. */
static int seed(sgr_pgroup *g)
{
    uint32_t t[SGR_PG_MAX];
    memset(g->slots, 0, sizeof *g->slots * g->nslots);
    g->ns = 0;
    memset(t, 0, sizeof t);
    if (state_of(g, t) != 0)
        return -1;
    for (uint32_t j = 0; j < g->njc; j++)
        g->rows[1 + j] = 0;
    for (uint32_t i = 0; i < g->n; i++)
        t[i] = 1;
    return state_of(g, t) == NOT_MADE ? -1 : 0;
}

sgr_pgroup *sgr_pg_new(const sgr_dfa *const *dfas, uint32_t n, uint32_t max_states)
{
    if (n > SGR_PG_MAX || max_states < 2 || max_states > 65535)
        return NULL;
    sgr_pgroup *g = sg_calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->n = n;
    g->njc = 1;
    for (uint32_t i = 0; i < n; i++) {
        g->d[i] = dfas[i];
        refine(g->jcls, &g->njc, dfas[i]->classmap);
    }
    for (int b = 255; b >= 0; b--)
        g->rep[g->jcls[b]] = (uint8_t)b;
    g->stride = 1 + g->njc;
    g->max = max_states;
    for (g->nslots = 4; g->nslots < 2 * max_states; g->nslots *= 2)
        ;
    g->unmade = max_states * g->stride;
    g->rows = sg_malloc(sizeof *g->rows * ((size_t)max_states + 1) * g->stride);
    g->comp = sg_malloc(sizeof *g->comp * (size_t)max_states * (n ? n : 1));
    g->slots = sg_malloc(sizeof *g->slots * g->nslots);
    if (!g->rows || !g->comp || !g->slots) {
        sgr_pg_free(g);
        return NULL;
    }
    uint32_t *un = g->rows + g->unmade;
    un[0] = 0;
    for (uint32_t j = 0; j < g->njc; j++)
        un[1 + j] = g->unmade;
    if (seed(g) < 0) {
        sgr_pg_free(g);
        return NULL;
    }
    return g;
}

void sgr_pg_free(sgr_pgroup *g)
{
    if (!g)
        return;
    sg_free(g->rows);
    sg_free(g->comp);
    sg_free(g->slots);
    sg_free(g);
}

void sgr_pg_trim(sgr_pgroup *g)
{
    if (g->ns > g->max / 2)
        (void)seed(g);              /* needs no memory: the two rows exist */
}

uint32_t sgr_pg_start(const sgr_pgroup *g)
{
    return g->stride;
}

uint32_t sgr_pg_accepts(const sgr_pgroup *g, uint32_t st)
{
    return g->rows[st];
}

uint32_t sgr_pg_states(const sgr_pgroup *g)
{
    return g->ns;
}

/* Make the transition of state st on byte b. */
static uint32_t step_make(sgr_pgroup *g, uint32_t st, uint8_t b)
{
    uint32_t t[SGR_PG_MAX];
    const uint32_t *from = g->comp + (size_t)(st / g->stride) * g->n;
    for (uint32_t i = 0; i < g->n; i++) {
        const sgr_dfa *d = g->d[i];
        t[i] = from[i] ? d->trans[(size_t)from[i] * d->nclasses + d->classmap[b]] : 0;
    }
    uint32_t to = state_of(g, t);
    if (to != NOT_MADE)
        g->rows[st + 1 + g->jcls[b]] = to;
    return to;
}

/* The run of sgr_pg_run when a transition it needs is not made yet: one byte at
 * a time, making each as it is met. */
__attribute__((noinline))
static int pg_run_making(sgr_pgroup *g, uint32_t *st, const uint8_t *p, const uint8_t *q, const uint8_t *end,
                         uint32_t *hit)
{
    uint32_t s = *st, h = 0;
    for (; q < end; q++) {
        uint8_t b = *q;
        if (b == '/' && q != p)             /* a '/' at index 0 ends no leading part */
            h |= g->rows[s];
        uint32_t to = g->rows[s + 1 + g->jcls[b]];
        if (to == g->unmade && (to = step_make(g, s, b)) == NOT_MADE)
            return -1;
        s = to;
    }
    *st = s;
    *hit |= h;
    return 0;
}

/* Steps without a test on the way: a transition not made leads to the `unmade`
 * row, which keeps the run there (its mask 0 adds nothing), and a run that ends
 * there is made again by pg_run_making.  Nor does a run stop at the dead state:
 * it too keeps the run there with mask 0, so stopping would only save the
 * steps, at a test on every one. */
static inline __attribute__((always_inline)) int pg_run(sgr_pgroup *g, uint32_t *st, const uint8_t *p,
                                                       const uint8_t *q, const uint8_t *end, uint32_t *hit)
{
    const uint32_t *rows = g->rows;
    const uint8_t *jc = g->jcls, *from = q;
    size_t s = *st;                         /* size_t: no widening in the row index */
    uint32_t h = 0;
    for (; q < end; q++) {
        unsigned b = *q;
        if (b == '/' && q != p)             /* a '/' at index 0 ends no leading part */
            h |= rows[s];
        s = rows[s + 1 + jc[b]];
    }
    if (s == g->unmade)
        return pg_run_making(g, st, p, from, end, hit);
    *st = (uint32_t)s;
    *hit |= h;
    return 0;
}

int sgr_pg_run(sgr_pgroup *g, uint32_t *st, const uint8_t *p, const uint8_t *q, const uint8_t *end,
               uint32_t *hit)
{
    return pg_run(g, st, p, q, end, hit);
}

int sgr_pg_run_end(sgr_pgroup *g, uint32_t st, const uint8_t *p, const uint8_t *q, const uint8_t *end,
                   uint32_t *hit)
{
    if (st == SGR_PG_START)
        st = g->stride;
    if (pg_run(g, &st, p, q, end, hit) < 0)
        return -1;
    *hit |= g->rows[st];
    return 0;
}

/* ---- tries of exact words ------------------------------------------------------ */

int sgr_pg_trie_build(sgr_pg_trie *tr, const char *const *words, const uint32_t *lens, uint32_t n,
                      uint32_t max_states)
{
    memset(tr, 0, sizeof *tr);
    /* a class for every byte some word uses, class 0 for all the others */
    uint32_t nc = 1;
    uint64_t states = 2;                    /* dead, root */
    for (uint32_t i = 0; i < n; i++) {
        states += lens[i];
        for (uint32_t k = 0; k < lens[i]; k++) {
            uint8_t b = (uint8_t)words[i][k];
            if (!tr->classmap[b])
                tr->classmap[b] = (uint8_t)nc++;
        }
    }
    if (nc > 256 || states > max_states) {   /* at most 255 byte classes plus "other" */
        memset(tr, 0, sizeof *tr);
        return -1;
    }
    tr->trans = sg_calloc((size_t)states * nc, sizeof *tr->trans);
    tr->accept = sg_malloc(sizeof *tr->accept * (size_t)states);
    if (!tr->trans || !tr->accept) {
        sgr_pg_trie_free(tr);
        return -1;
    }
    for (uint64_t s = 0; s < states; s++)
        tr->accept[s] = -1;
    uint32_t used = 2;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = 1;
        for (uint32_t k = 0; k < lens[i]; k++) {
            uint32_t *t = &tr->trans[(size_t)s * nc + tr->classmap[(uint8_t)words[i][k]]];
            if (!*t)
                *t = used++;
            s = *t;
        }
        tr->accept[s] = 0;
    }
    /* states past `used` (saved by shared prefixes) are never made */
    tr->loops = sg_malloc(used);
    if (!tr->loops) {
        sgr_pg_trie_free(tr);
        return -1;
    }
    for (uint32_t s = 0; s < used; s++)
        tr->loops[s] = sgr_dfa_state_loops(tr->trans + (size_t)s * nc, nc, s);
    sgr_dfa_init(&tr->d, used, nc, tr->classmap, tr->trans, tr->accept, tr->loops);
    return 0;
}

void sgr_pg_trie_free(sgr_pg_trie *tr)
{
    sg_free(tr->trans);
    sg_free(tr->accept);
    sg_free(tr->loops);
    memset(tr, 0, sizeof *tr);
}
