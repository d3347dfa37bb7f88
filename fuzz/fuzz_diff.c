/* fuzz_diff.c - the differential oracle (issue 7): every command line is decided
 * by the table evaluator (runtime/eval.c) and by the reference evaluator
 * (fuzz/refeval.c), which interprets the checked AST with no table, no bytecode
 * and no DFA, against every embedded pack compiled here from its source.  Any
 * disagreement on the line's decision and deciding rule, or on any segment's
 * decision and rule, is a failure.  Packs with `lua` conditions are skipped.
 * Lines run in the cwd /home/agent/project with HOME=/home/agent, which do not
 * exist, so both sides resolve paths there lexically. */
#include <string.h>
#include "fuzz.h"
#include "lib/embedded.h"
#include "lib/policy.h"
#include "fuzz/refeval.h"
#include "compiler/compile.h"
#include "runtime/table.h"
#include "common/alloc.h"

typedef struct pack {
    const char *name;
    uint8_t *bytes;
    sgr_table *t;
    sgr_ctx *ctx;
    sgc_checked *k;
    sg_ref *ref;
} pack;

static pack packs[64];
static size_t npacks;

static void diag(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "%s\n", text);
}

/* A pack of its own for what no embedded pack tests: where a segment connects and
 * where it writes (docs/language.md "Destinations"), in each form. */
static const char dests_pack[] =
    "pack dests version 1\n"
    "use std/wrappers\n"
    "use std/programs\n"
    "default allow\n"
    "set corp = { corp.example *.corp.example }\n"
    "evil: deny host in { evil.test *.evil.test } \"to {arg}\"\n"
    "plain: deny scheme in { http ftp } and not host only in corp\n"
    "odd_port: ask host corp.example and not port only in { 443 22 80 }\n"
    "admin: ask url matches /\\/admin\\//\n"
    "corp_only: ask program in { curl wget git ssh scp rsync pip npm } and not host only in corp\n"
    "tls: allow scheme only { https ssh } and url only /^[a-z+]*:\\/\\//\n"
    "out_w: ask redirect writes outside workspace\n"
    "in_w: allow redirect writes to path inside workspace\n";

static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    sgc_options co;
    memset(&co, 0, sizeof co);
    co.embedded = sg_embedded_source;
    co.diag = diag;
    for (size_t i = 0; i <= sg_embedded_ntables && npacks < 64; i++) {
        pack *p = &packs[npacks];
        const char *text;
        size_t tlen;
        if (i == sg_embedded_ntables) {
            p->name = "dests";
            text = dests_pack;
            tlen = sizeof dests_pack - 1;
        } else {
            p->name = sg_embedded_tables[i].name;
            const sg_embedded *src = sg_embedded_find(sg_embedded_sources, sg_embedded_nsources, p->name);
            FUZZ_CHECK(src != NULL);
            text = (const char *)src->data;
            tlen = src->len;
        }
        sgc_input in = { p->name, text, tlen };
        size_t len = 0;
        FUZZ_CHECK(sgc_compile_checked(&co, &in, 1, &p->bytes, &len, &p->k) == 0);
        char err[300];
        FUZZ_CHECK(sgr_table_load(p->bytes, len, &p->t, err, sizeof err) == 0);
        p->ctx = sgr_ctx_new(p->t);
        FUZZ_CHECK(p->ctx != NULL);
        int rc = sg_ref_new(p->k, &p->ref, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "fuzz_diff: %s: %s\n", p->name, rc < 0 ? "out of memory" : err);
        FUZZ_CHECK(rc == 0);
        /* the table's rule i is the checked program's rule i */
        FUZZ_CHECK(sgc_checked_nrules(p->k) == p->t->nrules);
        for (uint32_t r = 0; r < p->t->nrules; r++) {
            sgc_checked_rule cr;
            FUZZ_CHECK(sgc_checked_rule_at(p->k, r, &cr) == 0);
            FUZZ_CHECK(strcmp(cr.id, sgr_str(p->t, p->t->rules[r].id)) == 0);
            FUZZ_CHECK((uint32_t)cr.decision == p->t->rules[r].decision);
        }
        npacks++;
    }
    FUZZ_CHECK(npacks > 0);
}

static void teardown(void)
{
    for (size_t i = 0; i < npacks; i++) {
        sg_ref_free(packs[i].ref);
        sgr_ctx_free(packs[i].ctx);
        sgr_table_free(packs[i].t);
        sgc_checked_free(packs[i].k);
        sg_free(packs[i].bytes);
    }
    npacks = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int registered;
    if (!registered) {
        registered = 1;
        atexit(teardown);
    }
    setup();
    if (size > 4096)
        return 0;
    char *line = malloc(size ? size : 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    sgr_opts so = { SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
    for (size_t i = 0; i < npacks; i++) {
        const sgr_result *r = sgr_eval(packs[i].ctx, line, size, &so);
        char why[600];
        int rc = sg_ref_check(packs[i].ref, packs[i].t, r, SG_TEST_CWD, SG_TEST_HOME, why, sizeof why);
        if (rc == SG_REF_DISAGREE) {
            fprintf(stderr, "fuzz_diff: pack %s disagrees on \"", packs[i].name);
            for (size_t k = 0; k < size; k++)
                fprintf(stderr, (unsigned char)line[k] >= 32 && line[k] != '"' && line[k] != '\\' && (unsigned char)line[k] < 127 ? "%c" : "\\x%02x", (unsigned char)line[k]);
            fprintf(stderr, "\": %s\n", why);
        }
        FUZZ_CHECK(rc != SG_REF_DISAGREE);
        FUZZ_CHECK(rc != SG_REF_OOM);
    }
    free(line);
    return 0;
}
