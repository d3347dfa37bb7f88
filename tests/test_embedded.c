/* test_embedded.c - the packs embedded in the binary, loaded as the binary loads
 * them (SGR_LOAD_TRUSTED: the view built, no content checked) and as a table file
 * is loaded (every check): both succeed and build the same view, field by field,
 * so skipping the checks for the program's own data changes nothing but the time.
 * A copy of each image with one flipped byte is still refused by the full load.
 * And the loop scan the view is built with, against its definition. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "common/alloc.h"
#include "lib/embedded.h"
#include "runtime/table.h"

#define SAME_ARRAY(a, b, n) CHECK(((a) == NULL) == ((b) == NULL) && (!(a) || memcmp((a), (b), (n)) == 0))

static void compare(const char *name, const sgr_table *x, const sgr_table *y)
{
    CHECK(x->ndfas == y->ndfas && x->nsets == y->nsets && x->nrules == y->nrules && x->nprogs == y->nprogs);
    for (uint32_t i = 0; i < x->ndfas && i < y->ndfas; i++) {
        const sgr_dfa *a = &x->dfas[i], *b = &y->dfas[i];
        CHECK(a->nstates == b->nstates && a->nclasses == b->nclasses && a->trans == b->trans &&
              a->accept == b->accept && a->classmap == b->classmap && a->sink == b->sink &&
              a->start_exit == b->start_exit);
        if (a->nstates == b->nstates)
            SAME_ARRAY(a->loops, b->loops, a->nstates);
    }
    CHECK(x->nproghash == y->nproghash && x->nopttab == y->nopttab && x->nlongopts == y->nlongopts);
    if (x->nproghash == y->nproghash)
        SAME_ARRAY(x->proghash, y->proghash, sizeof *x->proghash * x->nproghash);
    if (x->nopttab == y->nopttab)
        SAME_ARRAY(x->opttab, y->opttab, sizeof *x->opttab * x->nopttab);
    if (x->nlongopts == y->nlongopts)
        SAME_ARRAY(x->longopts, y->longopts, sizeof *x->longopts * x->nlongopts);
    SAME_ARRAY(x->subspecs, y->subspecs, x->nprogs);
    SAME_ARRAY(x->progfilt, y->progfilt, sizeof *x->progfilt * x->nprogs);
    SAME_ARRAY(x->abbrfilt, y->abbrfilt, sizeof *x->abbrfilt * x->nprogs);
    SAME_ARRAY(x->shortopt, y->shortopt, sizeof *x->shortopt * x->nprogs);
    printf("%s: %u dfas, %u programs, %u long options: the same view either way\n", name, x->ndfas, x->nprogs,
           x->nlongopts);
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
