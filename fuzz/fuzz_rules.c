/* fuzz_rules.c - the whole compiler on one rule file: lexer, parser, sema
 * (`use` of the embedded stdlib), pattern compilation, emit.  When the source
 * compiles, the table is held to what the runtime expects of every compiler
 * output: it loads (the verifier accepts it), it dumps, its inline tests run, it
 * evaluates, and compiling the same source again gives the same bytes.  The round
 * trip too (tests/roundtrip.sh): a table that rule text can express decompiles to
 * text that compiles, decides the probes as the table does (the same decision by
 * the same rule, counted in order: decompiling labels unlabelled rules, so their
 * ids differ), and decompiles again to the same text.
 *
 * The input is a text source, so no file is ever read: `use` finds only the
 * embedded sources (std/wrappers, std/sets, the packs), as for an embedded pack. */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "compiler/compile.h"
#include "lib/policy.h"
#include "lib/embedded.h"
#include "common/alloc.h"

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

typedef struct textbuf {
    char *s;
    size_t n, cap;
    int oom;
} textbuf;

static void to_text(void *ud, const char *text, size_t len)
{
    textbuf *b = ud;
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t nc = (b->cap ? b->cap * 2 : 4096) + len;
        char *ns = realloc(b->s, nc);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = nc;
    }
    memcpy(b->s + b->n, text, len);
    b->n += len;
    b->s[b->n] = '\0';
}

static const char *const probes[] = {
    "ls -la", "rm -rf /", "git push --force origin main", "curl -s x | sh",
    "sudo env FOO=1 bash -c 'cat ~/.ssh/id_rsa > /tmp/x'", "find . -exec rm {} \\;",
};

/* Decompile t; when text can express it, compile the text, which must decide the
 * probes as t does (dec/rid; NULL dec: not compared) and decompile to the same
 * text again. */
static void roundtrip(const sgr_table *t, sgc_options *opt, const uint32_t *dec, const int32_t *rid)
{
    textbuf d1 = { 0 }, d2 = { 0 };
    char err[256];
    if (sgr_table_decompile(t, to_text, &d1, err, sizeof err) != 0 || d1.oom || !d1.s) {
        free(d1.s);
        return;                                 /* not expressible as text: refused */
    }
    unsigned nd = 0;
    opt->diag_ud = &nd;
    sgc_input in = { "roundtrip.rules", d1.s, d1.n };
    uint8_t *t1 = NULL;
    size_t t1len = 0;
    int rc = sgc_compile(opt, &in, 1, &t1, &t1len);
    if (rc != 0) {
        if (rc > 0)
            fprintf(stderr, "decompiled text does not compile:\n%s\n", d1.s);
        FUZZ_CHECK(rc < 0);                     /* only running out of memory */
        free(d1.s);
        return;
    }
    sg_policy *p1 = NULL;
    char lerr[512] = "";
    int lr = sg_policy_from_table(t1, t1len, t1, "roundtrip", &p1, lerr, sizeof lerr);
    FUZZ_CHECK(lr == 0);
    if (lr == 0) {
        FUZZ_CHECK(sgr_table_decompile(p1->t, to_text, &d2, err, sizeof err) == 0);
        if (!d2.oom && d2.s)
            FUZZ_CHECK(d1.n == d2.n && memcmp(d1.s, d2.s, d1.n) == 0);
        sgr_ctx *ctx = dec ? sgr_ctx_new(p1->t) : NULL;
        if (ctx) {
            sgr_opts so = { SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
            for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
                const sgr_result *r = sgr_eval(ctx, probes[i], strlen(probes[i]), &so);
                if (r->oom)
                    continue;
                if (r->decision != dec[i] || r->rule != rid[i])
                    fprintf(stderr, "round trip decides '%s' as %s by rule %d, the table as %s by rule %d\n",
                            probes[i], sgr_decision_name(r->decision), (int)r->rule, sgr_decision_name(dec[i]),
                            (int)rid[i]);
                FUZZ_CHECK(r->decision == dec[i] && r->rule == rid[i]);
            }
            sgr_ctx_free(ctx);
        }
        sg_policy_free(p1);
    }
    free(d1.s);
    free(d2.s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16))
        return 0;
    unsigned ndiag = 0;
    sgc_options opt;
    memset(&opt, 0, sizeof opt);
    opt.embedded = sg_embedded_source;
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
    sg_run_inline_tests(p, SGR_PLATFORM_HOST, on_test, NULL, &pass, &fail);
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    uint32_t dec[sizeof probes / sizeof probes[0]];
    int32_t rid[sizeof probes / sizeof probes[0]];
    int decided = ctx != NULL;
    if (ctx) {
        sgr_opts so = { SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
        for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
            const sgr_result *r = sgr_eval(ctx, probes[i], strlen(probes[i]), &so);
            FUZZ_CHECK(r->decision < SGT_NDECISIONS && r->message && r->rule_id && r->hint);
            dec[i] = r->decision;
            rid[i] = r->rule;
            decided = decided && !r->oom;
        }
        sgr_ctx_free(ctx);
    }
    roundtrip(p->t, &opt, decided ? dec : NULL, rid);
    sg_policy_free(p);
    return 0;
}
