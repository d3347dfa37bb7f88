/* pathpat.c - path patterns against automata and words (pathpat.h). */
#include <string.h>
#include "pathpat.h"

/* Where in a path the string built so far stands: nothing yet, exactly "/",
 * after a '/' (further in), or inside a name.  A glob's wildcards never match a
 * '.' that starts a name (F_EMPTY, F_ROOT, F_SLASH). */
enum { F_EMPTY, F_ROOT, F_SLASH, F_MID };

#define PP_MAX_STATES ((size_t)1 << 24)       /* product states a walk may visit */

static inline int loops(uint32_t k)
{
    return k == SGR_PP_STAR || k == SGR_PP_XSTAR || k == SGR_PP_ANY || k == SGR_PP_STEM || k == SGR_PP_DIRS;
}

static inline int next_f(int f, unsigned b)
{
    return b == '/' ? (f == F_EMPTY ? F_ROOT : F_SLASH) : F_MID;
}

static inline int has(const uint64_t *set, unsigned b)
{
    return (int)((set[b >> 6] >> (b & 63)) & 1);
}

/* Does element e accept byte b in place f? */
static int accepts(const sgr_ppat *p, uint32_t e, unsigned b, int f)
{
    int lead_dot = b == '.' && f != F_MID;
    switch (e & 0xff) {
    case SGR_PP_LIT: return b == (e >> 8);
    case SGR_PP_ONE: case SGR_PP_STAR: return b != '/' && !lead_dot;
    case SGR_PP_CLASS: return b != '/' && !lead_dot && has(p->cls[e >> 8], b);
    case SGR_PP_XSTAR: return b != '/';
    case SGR_PP_STEM: return b != '/' && b != '.';
    case SGR_PP_DIRS: return b == '/' || b == 1;
    default: return 1;
    }
}

/* May the byte after a string that reached position i be '/'? */
static inline int slash_next(const sgr_ppat *p, uint32_t i)
{
    if (i >= p->n)
        return 0;
    uint32_t e = p->el[i], k = e & 0xff;
    return k == SGR_PP_ANY || k == SGR_PP_DIRS || (k == SGR_PP_LIT && (e >> 8) == '/');
}

int sgr_pp_word(const sgr_ppat *p, const char *w, size_t n, int dirs)
{
    enum { W = 64 };
    uint64_t cur[W], nxt[W];
    if (p->n >= W * 64)
        return 1;                           /* a pattern this long: fail closed */
    size_t words = p->n / 64 + 1;
    memset(cur, 0, words * 8);
    cur[0] = 1;
    int f = F_EMPTY;
    for (size_t at = 0;; at++) {
        /* the positions reached without a byte: past each loop */
        for (uint32_t i = 0; i < p->n; i++)
            if (((cur[i >> 6] >> (i & 63)) & 1) && loops(p->el[i] & 0xff))
                cur[(i + 1) >> 6] |= (uint64_t)1 << ((i + 1) & 63);
        if (at == n)
            break;
        unsigned b = (unsigned char)w[at];
        memset(nxt, 0, words * 8);
        int any = 0;
        for (uint32_t i = 0; i < p->n; i++) {
            if (!((cur[i >> 6] >> (i & 63)) & 1) || !accepts(p, p->el[i], b, f))
                continue;
            uint32_t j = loops(p->el[i] & 0xff) ? i : i + 1;
            nxt[j >> 6] |= (uint64_t)1 << (j & 63);
            any = 1;
        }
        if (!any)
            return 0;
        memcpy(cur, nxt, words * 8);
        f = next_f(f, b);
    }
    if ((cur[p->n >> 6] >> (p->n & 63)) & 1)
        return 1;
    if (!dirs || n == 0 || (n == 1 && w[0] == '/'))
        return 0;
    for (uint32_t i = 0; i < p->n; i++)
        if (((cur[i >> 6] >> (i & 63)) & 1) && slash_next(p, i))
            return 1;
    return 0;
}

int sgr_pp_dfa(const sgr_ppat *p, const sgr_dfa *d, int dirs, sg_arena *a)
{
    uint32_t ns = d->nstates, nc = d->nclasses;
    size_t count = ((size_t)p->n + 1) * ns * 4;
    if (ns == 0 || nc == 0 || nc > 256 || count > PP_MAX_STATES)
        return 1;                           /* fail closed */
    /* the bytes of each class but '/', and whether one is not '.' either */
    uint64_t cb[256][4];
    uint8_t other[256], nodot[256];         /* a byte but '/'; a byte but '/' and '.' */
    memset(cb, 0, sizeof cb[0] * nc);
    for (unsigned b = 0; b < 256; b++)
        if (b != '/')
            cb[d->classmap[b]][b >> 6] |= (uint64_t)1 << (b & 63);
    for (uint32_t c = 0; c < nc; c++) {
        other[c] = (cb[c][0] | cb[c][1] | cb[c][2] | cb[c][3]) != 0;
        nodot[c] = (cb[c][0] & ~((uint64_t)1 << '.')) != 0 || (cb[c][1] | cb[c][2] | cb[c][3]) != 0;
    }
    /* scratch from the arena, handed back at the end when nothing else was
     * allocated meanwhile (the arena's own bump pointer, rewound).  A step goes
     * from pattern position i to i or i + 1, so the walk goes position by
     * position and keeps the states of two of them, the one it is at and the
     * next: 2 * ns * 4 product states, whatever the pattern's length. */
    char *mark = a->cur;
    size_t used = a->used_total;
    void *head = a->head;
    size_t L = (size_t)ns * 4;
    uint8_t *seen[2] = { sg_arena_zalloc(a, L / 8 + 1), sg_arena_zalloc(a, L / 8 + 1) };
    uint32_t *q[2] = { sg_arena_alloc(a, L * sizeof **q), sg_arena_alloc(a, L * sizeof **q) };
    if (!seen[0] || !seen[1] || !q[0] || !q[1])
        return -1;
    size_t nq[2] = { 0, 0 };
#define PUSH(i_, s_, f_) do {                                                        \
        int l_ = (i_) != i;                                                          \
        size_t x_ = ((size_t)(s_) << 2) | (size_t)(f_);                              \
        if (!((seen[l_][x_ >> 3] >> (x_ & 7)) & 1)) {                                \
            seen[l_][x_ >> 3] |= (uint8_t)(1u << (x_ & 7));                          \
            q[l_][nq[l_]++] = (uint32_t)x_;                                          \
        }                                                                            \
    } while (0)
    uint32_t i = 0;
    PUSH(0, 1, F_EMPTY);
    int hit = 0;
    for (; i <= p->n && !hit; i++) {
        for (size_t head_i = 0; head_i < nq[0] && !hit;) {
            size_t x = q[0][head_i++];
            int f = (int)(x & 3);
            uint32_t st = (uint32_t)(x >> 2);
            if (d->accept[st] >= 0 && f != F_EMPTY
                && (i == p->n || (dirs && f != F_ROOT && slash_next(p, i)))) {
                hit = 1;
                break;
            }
            if (i == p->n)
                continue;
            uint32_t e = p->el[i], k = e & 0xff, j = loops(k) ? i : i + 1;
            const uint32_t *row = d->trans + (size_t)st * nc;
            if (loops(k))
                PUSH(i + 1, st, f);
            if (k == SGR_PP_LIT) {
                unsigned b = e >> 8;
                uint32_t s2 = row[d->classmap[b]];
                if (s2)
                    PUSH(i + 1, s2, next_f(f, b));
                continue;
            }
            if (k == SGR_PP_ANY || k == SGR_PP_DIRS) {
                uint32_t s2 = row[d->classmap['/']];
                if (s2)
                    PUSH(j, s2, next_f(f, '/'));
            }
            if (k == SGR_PP_DIRS) {
                uint32_t s2 = row[d->classmap[1]];
                if (s2)
                    PUSH(j, s2, F_MID);
                continue;
            }
            int lead = (f != F_MID && (k == SGR_PP_ONE || k == SGR_PP_STAR || k == SGR_PP_CLASS)) || k == SGR_PP_STEM;
            for (uint32_t c = 0; c < nc; c++) {
                uint32_t s2 = row[c];
                if (!s2)
                    continue;
                int ok;
                if (k == SGR_PP_CLASS) {
                    const uint64_t *set = p->cls[e >> 8];
                    uint64_t m0 = cb[c][0] & set[0];
                    if (lead)
                        m0 &= ~((uint64_t)1 << '.');
                    ok = (m0 | (cb[c][1] & set[1]) | (cb[c][2] & set[2]) | (cb[c][3] & set[3])) != 0;
                } else {
                    ok = lead ? nodot[c] : other[c];
                }
                if (ok)
                    PUSH(j, s2, F_MID);
            }
        }
        /* on to position i + 1: its states become the current ones */
        uint8_t *ts = seen[0];
        uint32_t *tq = q[0];
        seen[0] = seen[1];
        q[0] = q[1];
        nq[0] = nq[1];
        seen[1] = ts;
        q[1] = tq;
        nq[1] = 0;
        memset(seen[1], 0, L / 8 + 1);
    }
#undef PUSH
    if (a->head == head) {
        a->cur = mark;
        a->used_total = used;
    }
    return hit;
}
