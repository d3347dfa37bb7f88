/* test_embedded.c - the packs embedded in the binary, loaded as the binary loads
 * them (SGR_LOAD_TRUSTED: the view built, no content checked) and as a table file
 * is loaded (every check): both succeed and build the same view, field by field,
 * so skipping the checks for the program's own data changes nothing but the time.
 * A copy of each image with one flipped byte is still refused by the full load.
 * The parts a trusted load leaves to first use (table.h, SGR_VIEW_*) are built
 * by 8 threads at once, each deciding with whatever view it gets, and compared
 * once built.  And the loop scan the view is built with, against its
 * definition. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "common/alloc.h"
#include "lib/embedded.h"
#include "runtime/table.h"

#define SAME_ARRAY(a, b, n) CHECK(((a) == NULL) == ((b) == NULL) && (!(a) || memcmp((a), (b), (n)) == 0))

/* A plain view: the automaton as stored, no speed-ups. */
static int plain(const sgr_dfa *d, const uint8_t *zeros)
{
    return d->sink == 0 && d->start_exit == -2 && d->loops == zeros;
}

/* x loaded with every check, y trusted: the same view, the parts y builds on
 * first use built here (x built them at load). */
static void compare(const char *name, const sgr_table *x, const sgr_table *y)
{
    CHECK(x->ndfas == y->ndfas && x->nsets == y->nsets && x->nrules == y->nrules && x->nprogs == y->nprogs);
    for (uint32_t i = 0; i < x->ndfas && i < y->ndfas; i++) {
        const sgr_dfa *a = &x->dfas[i], *b = &y->dfas[i];
        CHECK(a->nstates == b->nstates && a->nclasses == b->nclasses && a->trans == b->trans &&
              a->accept == b->accept && a->classmap == b->classmap && plain(a, x->dfa_noloops) &&
              plain(b, y->dfa_noloops));
        CHECK(atomic_load(&x->dfa_state[i]) == SGR_VIEW_READY);
        a = sgr_table_dfa(x, i);
        b = sgr_table_dfa(y, i);
        CHECK(a == &x->dfa_fast[i] && b == &y->dfa_fast[i] && atomic_load(&y->dfa_state[i]) == SGR_VIEW_READY);
        CHECK(a->nstates == b->nstates && a->nclasses == b->nclasses && a->trans == b->trans &&
              a->accept == b->accept && a->classmap == b->classmap && a->sink == b->sink &&
              a->start_exit == b->start_exit);
        if (a->nstates == b->nstates)
            SAME_ARRAY(a->loops, b->loops, a->nstates);
    }
    CHECK(x->nproghash == y->nproghash && x->nopttab == y->nopttab);
    if (x->nproghash == y->nproghash)
        SAME_ARRAY(x->proghash, y->proghash, sizeof *x->proghash * x->nproghash);
    for (uint32_t i = 0; i < x->nprogs && i < y->nprogs; i++) {
        CHECK(atomic_load(&x->prog_state[i]) == SGR_VIEW_READY);
        CHECK(sgr_table_progview(x, i) == 1 && sgr_table_progview(y, i) == 1);
        const struct sgr_progview *a = &x->progview[i], *b = &y->progview[i];
        CHECK(memcmp(a, b, sizeof *a) == 0);
        SAME_ARRAY(x->shortopt[i], y->shortopt[i], sizeof *x->shortopt);
        if (a->tab_off == b->tab_off && a->tab_mask == b->tab_mask && (size_t)a->tab_off + a->tab_mask < x->nopttab)
            SAME_ARRAY(x->opttab + a->tab_off, y->opttab + b->tab_off, sizeof *x->opttab * (a->tab_mask + 1));
    }
    uint32_t nlong = 0;
    for (int c = 0; c < 256; c++) {
        const sgr_longopts *lx = atomic_load(&x->lazy->longopts[c]), *ly = sgr_table_longopts(y, (unsigned char)c);
        CHECK(lx && ly && lx->n == ly->n && ly == atomic_load(&y->lazy->longopts[c]));
        if (lx && ly && lx->n == ly->n)
            SAME_ARRAY(lx->ref, ly->ref, sizeof *lx->ref * lx->n);
        nlong += lx ? lx->n : 0;
    }
    SAME_ARRAY(x->subspecs, y->subspecs, x->nprogs);
    printf("%s: %u dfas, %u programs, %u long options: the same view either way\n", name, x->ndfas, x->nprogs,
           nlong);
}

/* sgr_dfa_state_loops against its definition, over rows of every width up to 256
 * classes and every mix of kept and leaving transitions */
static void state_loops(void)
{
    uint32_t row[256];
    unsigned seed = 12345, bad = 0, n = 0;
    for (uint32_t nc = 1; nc <= 256; nc++)
        for (int trial = 0; trial < 40; trial++) {
            uint32_t s = trial % 7 == 0 ? 0 : 1 + trial % 5, keep = (uint32_t)trial * 7 % 101;
            for (uint32_t c = 0; c < nc; c++) {
                seed = seed * 1103515245u + 12345u;
                row[c] = (seed >> 16) % 100 < keep ? s : s + 1 + (seed >> 8) % 3;
            }
            uint32_t kept = 0;
            for (uint32_t c = 0; c < nc; c++)
                kept += row[c] == s;
            uint8_t want = (uint8_t)(s == 0 ? 0 : kept == nc ? 2 : 2 * kept >= nc);
            bad += sgr_dfa_state_loops(row, nc, s) != want;
            n++;
        }
    CHECK(bad == 0);
    printf("sgr_dfa_state_loops: %u rows, %u wrong\n", n, bad);
}

/* Lines every automaton of a pack is run over, path-like and not: the runs
 * skip (loop bytes), stop at a sink, jump to the start state's exit byte. */
static const char *const lines[] = {
    "", "git status --short", "/etc/passwd", "rm -rf /", "curl http://x | sh", "~/.ssh/id_rsa",
    "a/b/../../c", "python3 -c 'import os'", "DROP TABLE users;", "/proc/self/environ", "x.pem",
    "/home/u/.aws/credentials", "\xff\xfe", "eval \"$(printf x)\"",
};
#define NLINES (sizeof lines / sizeof *lines)

/* What option s[0..n) is to spec p, by definition: the lists naming it, and
 * (a long one) the value, script and unless lists naming something longer it
 * starts. */
static uint32_t bits_by_definition(const sgr_table *t, const sgt_progspec *p, const char *s, size_t n, int abbrev)
{
    sgr_prog_list sl[SGR_NPROG_LISTS];
    sgr_prog_lists(p, sl);
    uint32_t bits = 0;
    if (abbrev && (n < 3 || s[0] != '-' || s[1] != '-'))
        return 0;
    for (int j = 0; j < SGR_NPROG_LISTS; j++)
        for (uint32_t k = 0; k < sl[j].len; k++) {
            const char *o = sgr_str(t, t->progopts[sl[j].off + k]);
            if (!abbrev ? strlen(o) == n && memcmp(o, s, n) == 0
                        : (sl[j].bit & (SGR_OPT_VALUE | SGR_OPT_SCRIPT | SGR_OPT_FIRST | SGR_OPT_LOOKUP
                                        | SGR_OPT_ARGV0 | SGR_OPT_CWD | SGR_OPT_URL | SGR_OPT_URLUNK))
                          && strlen(o) > n && memcmp(o, s, n) == 0)
                bits |= sl[j].bit;
        }
    return bits;
}

typedef struct race {
    const sgr_table *t;
    int id;
    atomic_int *go;
    atomic_uint *wrong;
    const sgr_longopts *lo[256];        /* the long-option lists it was given */
} race;

/* One of the threads: the long-option lists; every automaton over every line, in
 * an order of its own, the view it is handed (built, being built, plain) against
 * the plain one; then every program spec's options, against their definition. */
static void *racer(void *arg)
{
    race *r = arg;
    while (!atomic_load(r->go))
        ;
    unsigned wrong = 0;
    /* half the threads list every letter at once, half one letter at a time */
    if (r->id % 2 && sgr_table_longopts_all(r->t) < 0)
        wrong++;
    for (int k = 0; k < 256; k++) {
        int c = (k * 37 + r->id * 101) & 255;
        r->lo[c] = sgr_table_longopts(r->t, (unsigned char)c);
    }
    for (uint32_t k = 0; k < r->t->ndfas; k++) {
        uint32_t i = (k * 7u + (uint32_t)r->id * 13u) % r->t->ndfas;
        const sgr_dfa *d = sgr_table_dfa(r->t, i);
        for (size_t l = 0; l < NLINES; l++) {
            size_t n = strlen(lines[l]);
            wrong += sgr_dfa_match(d, lines[l], n) != sgr_dfa_match(&r->t->dfas[i], lines[l], n);
            wrong += sgr_dfa_match_dirs(d, lines[l], n) != sgr_dfa_match_dirs(&r->t->dfas[i], lines[l], n);
        }
    }
    /* every option of every spec, a prefix of it and a name no spec has: what
     * it is, and what it may abbreviate */
    const sgr_table *t = r->t;
    for (uint32_t k = 0; k < t->nprogs; k++) {
        uint32_t i = (k * 5u + (uint32_t)r->id * 11u) % t->nprogs;
        const sgt_progspec *p = &t->progs[i];
        sgr_prog_list sl[SGR_NPROG_LISTS];
        sgr_prog_lists(p, sl);
        for (int j = 0; j < SGR_NPROG_LISTS; j++)
            for (uint32_t o = 0; o < sl[j].len; o++) {
                const char *w = sgr_str(t, t->progopts[sl[j].off + o]);
                size_t n = strlen(w);
                for (size_t m = n; m + 2 >= n && m > 0; m--) {
                    wrong += sgr_progopt_bits(t, p, w, m) != bits_by_definition(t, p, w, m, 0);
                    wrong += sgr_progopt_abbrev(t, p, w, m) != bits_by_definition(t, p, w, m, 1);
                }
            }
        wrong += sgr_progopt_bits(t, p, "--no-such-option", 16) != 0;
        wrong += sgr_progopt_bits(t, p, "-\x7f", 2) != bits_by_definition(t, p, "-\x7f", 2, 0);
    }
    atomic_fetch_add(r->wrong, wrong);
    return NULL;
}

/* 8 threads at once on a fresh trusted load: none waits, every answer is the
 * plain view's or the definition's, every part is built once they are done, and
 * all were handed the one long-option list kept for each letter. */
static void race_views(const sg_embedded *e)
{
    char err[256];
    sgr_table *t = NULL;
    CHECK(sgr_table_load_flags(e->data, e->len, SGR_LOAD_TRUSTED, &t, err, sizeof err) == 0);
    if (!t)
        return;
    uint32_t unbuilt = 0;
    for (uint32_t i = 0; i < t->ndfas; i++)
        unbuilt += atomic_load(&t->dfa_state[i]) == SGR_VIEW_NONE;
    for (uint32_t i = 0; i < t->nprogs; i++)
        unbuilt += atomic_load(&t->prog_state[i]) == SGR_VIEW_NONE;
    CHECK(unbuilt == t->ndfas + t->nprogs);   /* nothing built by the load itself */
    enum { N = 8 };
    pthread_t th[N];
    race r[N];
    atomic_int go = 0;
    atomic_uint wrong = 0;
    int started = 0;
    for (int k = 0; k < N; k++) {
        r[k] = (race){ t, k, &go, &wrong, { NULL } };
        started += pthread_create(&th[k], NULL, racer, &r[k]) == 0;
    }
    CHECK(started == N);
    atomic_store(&go, 1);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    CHECK(atomic_load(&wrong) == 0);
    int one_list = 1;                   /* every thread got the list published first */
    for (int k = 0; k < started; k++)
        for (int c = 0; c < 256; c++)
            one_list &= r[k].lo[c] != NULL && r[k].lo[c] == atomic_load(&t->lazy->longopts[c]);
    CHECK(one_list);
    uint32_t ready = 0;
    for (uint32_t i = 0; i < t->ndfas; i++)
        ready += atomic_load(&t->dfa_state[i]) == SGR_VIEW_READY;
    for (uint32_t i = 0; i < t->nprogs; i++)
        ready += atomic_load(&t->prog_state[i]) == SGR_VIEW_READY;
    CHECK(ready == t->ndfas + t->nprogs);
    sgr_table *full = NULL;
    CHECK(sgr_table_load(e->data, e->len, &full, err, sizeof err) == 0);
    if (full)
        compare(e->name, full, t);
    sgr_table_free(full);
    sgr_table_free(t);
}

int main(void)
{
    state_loops();
    CHECK(sg_embedded_ntables >= 4);
    for (size_t i = 0; i < sg_embedded_ntables; i++) {
        const sg_embedded *e = &sg_embedded_tables[i];
        char err[256];
        sgr_table *full = NULL, *trusted = NULL;
        CHECK(sgr_table_load(e->data, e->len, &full, err, sizeof err) == 0);
        CHECK(sgr_table_load_flags(e->data, e->len, SGR_LOAD_TRUSTED, &trusted, err, sizeof err) == 0);
        if (full && trusted)
            compare(e->name, full, trusted);
        sgr_table_free(full);
        sgr_table_free(trusted);
        race_views(e);
        /* the checks still run for bytes that are not the program's own */
        uint8_t *copy = aligned_alloc(8, (e->len + 7) & ~(size_t)7);
        memcpy(copy, e->data, e->len);
        copy[e->len / 2] ^= 0x5a;
        sgr_table *bad = NULL;
        CHECK(sgr_table_load(copy, e->len, &bad, err, sizeof err) != 0 && strstr(err, "checksum"));
        sgr_table_free(bad);
        free(copy);
    }
    return sg_test_summary();
}
