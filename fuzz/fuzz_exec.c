/* fuzz_exec.c - the executor's prepare stage (exec/run.h: plan, word expansion,
 * rendering, the decision) on hostile lines, under the default pack.
 *
 * Nothing runs: prepare never forks (a $(...) stands for the empty string until
 * run time).  Globs read a scratch directory made once, and the filesystem for
 * absolute patterns, within the expander's budget.  Checks: prepare refuses (with
 * a message) or decides (a decision, the rendered line); the rendered line parses
 * and decides the same again; the same line prepares the same way twice (unless
 * it globs: directories change). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fuzz.h"
#include "lib/policy.h"
#include "exec/run.h"

static sg_policy *pol;
static sgr_ctx *ctx;
static sgx_vars vars;
static char ws[64] = "/tmp/sgx-fuzz-XXXXXX";

static void init(void)
{
    if (sg_policy_load("default", NULL, &pol) != 0 || !(ctx = sgr_ctx_new(pol->t)) || !mkdtemp(ws))
        abort();
    static const char *const files[] = { "a.c", "b.c", ".hidden", "notes.txt" };
    char p[128];
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", ws, files[i]);
        FILE *f = fopen(p, "w");
        if (f)
            fclose(f);
    }
    snprintf(p, sizeof p, "%s/src", ws);
    mkdir(p, 0700);
    sgx_vars_set(&vars, "HOME", 4, "/home/agent", 1);
    sgx_vars_set(&vars, "X", 1, "p  q", 0);
    sgx_vars_set(&vars, "G", 1, "*.c", 0);
}

/* 0 decided (decision, rendering into buf), 1 refused (message into buf) */
static int prepare(const char *line, size_t n, char *buf, size_t cap, uint32_t *decision, uint32_t *ndecided)
{
    const char *roots[1] = { ws };
    *ndecided = 0;
    sgx_opts o;
    memset(&o, 0, sizeof o);
    o.t = pol->t;
    o.ctx = ctx;
    o.cwd = ws;
    o.roots = roots;
    o.nroots = 1;
    o.vars = &vars;
    sgx_rlimits_default(&o.rl);
    sgx_run *r = sgx_run_new(&o);
    FUZZ_CHECK(r != NULL);
    int rc = sgx_prepare(r, line, n);
    const sgx_result *res = sgx_result_of(r);
    FUZZ_CHECK(rc == 0 || rc == -1);
    FUZZ_CHECK(res->message != NULL && res->rule != NULL);
    fuzz_touch(res->message, strlen(res->message));
    *decision = res->decision;
    FUZZ_CHECK(res->decision < SGT_NDECISIONS);
    if (rc == 0) {
        uint32_t nd;
        sgx_decided_lines(r, &nd);
        /* one decision, or (a $(...): its own lines, check's reading) more */
        FUZZ_CHECK(nd >= 1 && res->expanded != NULL);
        *ndecided = nd;
        snprintf(buf, cap, "%s", res->expanded);
    } else {
        FUZZ_CHECK(res->state == SGX_ST_REFUSED || res->state == SGX_ST_ERROR);
        snprintf(buf, cap, "%s", res->message);
    }
    sgx_run_free(r);
    return rc == 0 ? 0 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!pol)
        init();
    if (size > 4096)
        return 0;
    static char a[1 << 16], b[1 << 16], c[1 << 16];
    uint32_t d1, d2, d3, n1, n2, n3;
    int r1 = prepare((const char *)data, size, a, sizeof a, &d1, &n1);
    int r2 = prepare((const char *)data, size, b, sizeof b, &d2, &n2);
    /* a glob reads directories that may change in between (/proc) */
    if (!memchr(data, '*', size) && !memchr(data, '?', size) && !memchr(data, '[', size))
        FUZZ_CHECK(r1 == r2 && d1 == d2 && strcmp(a, b) == 0);
    if (r1 == 0 && strlen(a) < sizeof a - 1) {
        /* the rendered line is literal where it was expanded: preparing it again
         * gives itself and the same decision -- or, where a $(...) was decided on
         * too (more than one decision), one no stricter */
        int r3 = prepare(a, strlen(a), c, sizeof c, &d3, &n3);
        FUZZ_CHECK(r3 == 0 && strcmp(a, c) == 0 && n3 == 1);
        FUZZ_CHECK(n1 == 1 ? d3 == d1 : sgt_strictness(d3) <= sgt_strictness(d1));
    }
    return 0;
}
