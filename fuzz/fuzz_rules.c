/* fuzz_rules.c - the whole compiler on one rule file: lexer, parser, sema
 * (`use` of the embedded stdlib), pattern compilation, emit.  When the source
 * compiles, the table is held to what the runtime expects of every compiler
 * output: it loads (the verifier accepts it), it dumps, its inline tests run, it
 * evaluates, and compiling the same source again gives the same bytes.
 *
 * The input is a text source, so no file is ever read: `use` finds only the
 * embedded sources (std/wrappers, std/sets, the packs), as for an embedded pack. */
#include <string.h>
#include "fuzz.h"
#include "compiler/compile.h"
#include "lib/policy.h"
#include "lib/embedded.h"
#include "common/alloc.h"

static int embedded_lookup(void *ud, const char *name, const char **text, size_t *len)
{
    (void)ud;
    const sg_embedded *e = sg_embedded_find(sg_embedded_sources, sg_embedded_nsources, name);
    if (!e)
        return 0;
    *text = (const char *)e->data;
    *len = e->len;
    return 1;
}

static void on_diag(void *ud, const char *text)
{
    FUZZ_CHECK(text != NULL);
    fuzz_touch(text, strlen(text));
    ++*(unsigned *)ud;
}

static void null_sink(void *ud, const char *text, size_t len)
{
    (void)ud;
    fuzz_touch(text, len);
}

static void on_test(void *ud, const char *file, unsigned line, const char *cmd, const char *want,
                    const char *want_rule, const char *got, const char *got_rule, const char *message)
{
    (void)ud;
    (void)line;
    const char *v[] = { file, cmd, want, want_rule, got, got_rule, message };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i])
            fuzz_touch(v[i], strlen(v[i]));
}

static const char *const probes[] = {
    "ls -la", "rm -rf /", "git push --force origin main", "curl -s x | sh",
    "sudo env FOO=1 bash -c 'cat ~/.ssh/id_rsa > /tmp/x'", "find . -exec rm {} \\;",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16))
        return 0;
    unsigned ndiag = 0;
    sgc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.embedded = embedded_lookup;
    opt.diag = on_diag;
    opt.diag_ud = &ndiag;
    sgc_input in = { "fuzz.rules", (const char *)data, size };
    uint8_t *out = NULL;
    size_t outlen = 0;
    int rc = sgc_compile(&opt, &in, 1, &out, &outlen);
    FUZZ_CHECK(rc >= -1);
    if (rc != 0) {
        FUZZ_CHECK(out == NULL && outlen == 0);
        FUZZ_CHECK(rc < 0 || ndiag > 0);       /* every failure is explained */
        return 0;
    }
    FUZZ_CHECK(out != NULL && outlen > 0 && ((uintptr_t)out & 7) == 0);

    /* the same source compiles to the same bytes */
    uint8_t *again = NULL;
    size_t againlen = 0;
    unsigned ndiag2 = 0;
    opt.diag_ud = &ndiag2;
    int rc2 = sgc_compile(&opt, &in, 1, &again, &againlen);
    if (rc2 == 0)
        FUZZ_CHECK(againlen == outlen && memcmp(again, out, outlen) == 0);
    else
        FUZZ_CHECK(rc2 < 0);                    /* only running out of memory may differ */
    sg_free(again);

    sg_policy *p = NULL;
    char err[512] = "";
    int lr = sg_policy_from_table(out, outlen, out, "fuzz", &p, err, sizeof err);
    if (lr != 0) {
        fprintf(stderr, "compiler output does not load: %s\n", err);
        FUZZ_CHECK(lr == 0);
    }
    sgr_table_dump(p->t, null_sink, NULL);
    unsigned pass = 0, fail = 0;
    sg_run_inline_tests(p, on_test, NULL, &pass, &fail);
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (ctx) {
        sgr_opts so = { SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
        for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
            const sgr_result *r = sgr_eval(ctx, probes[i], strlen(probes[i]), &so);
            FUZZ_CHECK(r->decision < SGT_NDECISIONS && r->message && r->rule_id && r->hint);
        }
        sgr_ctx_free(ctx);
    }
    sg_policy_free(p);
    return 0;
}
