/* test_fuzzdecl.c - fuzzing by declarations catches a runtime that misreads an
 * option's value.  cli/mutate.c respells an option and its value in every way a
 * table's declarations allow (opt-split, opt-join, option-move).  The denied and
 * asked lines of tests/packs/deploy/acme_default.cases get the variants that
 * acme_default's declarations give, as `shellgate fuzz` makes them, and each is
 * decided by two packs: acme_default itself, which must decide none less strictly
 * than its original (what CTest deploy_fuzz_acme_default asks of `shellgate fuzz`),
 * and tests/fuzzverb/blind.rules, its rule over a declaration of kubectl without
 * -n -- what a runtime would decide that did not know -n takes a value.  For that
 * one the variants must include findings: -n=prod split into -n prod, which it
 * reads as an operand prod (or as the subcommand).  A mutator that did not make
 * the spellings from the declarations would find nothing, and this test fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "cli/mutate.h"
#include "common/alloc.h"
#include "lib/policy.h"
#include "runtime/table.h"

#define CASES "packs/deploy/acme_default.cases"

/* sgm_opts.optkind over a table, as `shellgate fuzz` asks it (cli/main.c). */
static unsigned table_optkind(void *ud, const char *prog, size_t plen, const char *opt, size_t olen)
{
    const sgr_table *t = ud;
    const sgt_progspec *ps = sgr_table_progspec(t, prog, plen);
    if (!ps)
        return 0;
    uint32_t bits = sgr_progopt_bits(t, ps, opt, olen);
    if (bits & SGR_OPT_VALUE)
        return SGM_OPT_VALUE;
    return bits & SGR_OPT_FLAG ? SGM_OPT_FLAG : 0;
}

static void quiet(void *ud, const char *text)
{
    (void)ud;
    (void)text;                         /* blind.rules's warning is expected */
}

static sg_policy *load(const char *path)
{
    sg_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.diag = quiet;
    sg_policy *p = NULL;
    if (sg_policy_load(path, &lo, &p) != 0) {
        fprintf(stderr, "FAIL cannot load %s\n", path);
        exit(1);
    }
    return p;
}

typedef struct tally {
    unsigned commands, variants, findings, split_findings, split_alone, move_variants, join_variants;
} tally;

static int has_chain(const sgm_variant *v, sgm_transform t)
{
    for (unsigned k = 0; k < v->nchain; k++)
        if (v->chain[k] == t)
            return 1;
    return 0;
}

/* Fuzz every denied or asked line of CASES with variants from gen's declarations,
 * deciding the line and its variants by judge; findings are printed when show. */
static tally fuzz(const sg_policy *gen, const sg_policy *judge, int show)
{
    tally n = { 0 };
    FILE *f = fopen(CASES, "r");
    if (!f) {
        fprintf(stderr, "FAIL cannot read %s\n", CASES);
        exit(1);
    }
    /* every long option the table names, as the fuzz verb gathers them: the lists
     * per letter after "--", in order */
    size_t nlong = 0;
    if (sgr_table_longopts_all(gen->t) < 0)
        exit(2);
    for (int ch = 0; ch < 256; ch++)
        nlong += sgr_table_longopts(gen->t, (unsigned char)ch)->n;
    const char **longopts = sg_malloc(sizeof *longopts * (nlong + 1));
    if (!longopts)
        exit(2);
    nlong = 0;
    for (int ch = 0; ch < 256; ch++) {
        const sgr_longopts *lo = sgr_table_longopts(gen->t, (unsigned char)ch);
        for (uint32_t i = 0; i < lo->n; i++)
            longopts[nlong++] = sgr_str(gen->t, lo->ref[i]);
    }
    sgm_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.max = 64;
    mo.longopts = longopts;
    mo.nlongopts = nlong;
    mo.optkind = table_optkind;
    mo.ud = (void *)gen->t;
    sgr_ctx *ctx = sgr_ctx_new(judge->t);
    if (!ctx)
        exit(2);
    sgr_opts so = { SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *semi = strstr(line, " ; ");
        if (!line[0] || line[0] == '#' || !semi)
            continue;                   /* the commands here hold no " ; " */
        *semi = '\0';
        if (strncmp(semi + 3, "deny", 4) != 0 && strncmp(semi + 3, "ask", 3) != 0)
            continue;
        uint32_t base = sgr_eval(ctx, line, strlen(line), &so)->decision;
        if (base == SGT_ALLOW)
            continue;                   /* nothing to weaken */
        n.commands++;
        sgm_list vl = { 0 };
        if (sgm_variants(line, &mo, 1, &vl) < 0)
            exit(2);
        for (size_t k = 0; k < vl.n; k++) {
            const sgm_variant *v = &vl.v[k];
            n.variants++;
            n.move_variants += has_chain(v, SGM_OPT_MOVE);
            n.join_variants += has_chain(v, SGM_OPT_JOIN);
            const sgr_result *r = sgr_eval(ctx, v->cmd, strlen(v->cmd), &so);
            if (sgt_strictness(r->decision) >= sgt_strictness(base))
                continue;
            n.findings++;
            n.split_findings += has_chain(v, SGM_OPT_SPLIT);
            n.split_alone += v->nchain == 1 && v->chain[0] == SGM_OPT_SPLIT;
            if (show) {
                printf("  %s\n  -> %s (%s) by", line, v->cmd, sgr_decision_name(r->decision));
                for (unsigned c = 0; c < v->nchain; c++)
                    printf("%s%s", c ? " > " : " ", sgm_names[v->chain[c]]);
                printf("\n");
            }
        }
        sgm_list_free(&vl);
    }
    fclose(f);
    sgr_ctx_free(ctx);
    sg_free(longopts);
    return n;
}

int main(void)
{
    sg_policy *acme = load("packs/deploy/acme_default.rules");
    sg_policy *blind = load("fuzzverb/blind.rules");

    tally own = fuzz(acme, acme, 1);
    printf("acme_default by itself: %u commands, %u variants, %u findings\n", own.commands, own.variants,
           own.findings);
    CHECK(own.commands >= 15);
    CHECK(own.findings == 0);
    /* the declarations were used: variants that only they can make */
    CHECK(own.move_variants > 0);
    CHECK(own.join_variants > 0);

    printf("blind.rules judging acme_default's variants:\n");
    tally b = fuzz(acme, blind, 1);
    printf("%u commands, %u variants, %u findings (%u by opt-split alone)\n", b.commands, b.variants,
           b.findings, b.split_alone);
    CHECK(b.commands > 0);
    CHECK(b.split_alone > 0);
    /* and nothing else: what it lets through is what it misreads */
    CHECK(b.split_findings == b.findings);

    sg_policy_free(acme);
    sg_policy_free(blind);
    return sg_test_summary();
}
