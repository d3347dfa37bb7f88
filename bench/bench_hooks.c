/* bench_hooks.c - per-call cost of a Lua hook: a trivial one (the floor: building
 * the segment table, the protected call, the result) and stdlib no_secrets on a
 * typical segment.  Prints figures; asserts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "runtime/hook_lua.h"
#include "tests/slurp.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static sgr_hook_sv sv(const char *s)
{
    return (sgr_hook_sv){s, strlen(s)};
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 1000000;
    char *secrets = sg_slurp(SG_STDLIB_LUA "/no_secrets.lua", NULL);
    if (!secrets) {
        fprintf(stderr, "bench_hooks: cannot read %s/no_secrets.lua\n", SG_STDLIB_LUA);
        return 1;
    }
    /* a hand-built table: strings "", names, sources; two HOOKS records */
    const char *trivial = "function h(seg) return seg.program == \"ls\" end";
    size_t lt = strlen(trivial) + 1, ls = strlen(secrets) + 1;
    char *blob = malloc(1 + 2 + lt + 11 + ls);
    size_t off = 0;
    blob[off++] = 0;
    uint32_t n_h = (uint32_t)off;
    memcpy(blob + off, "h", 2), off += 2;
    uint32_t s_h = (uint32_t)off;
    memcpy(blob + off, trivial, lt), off += lt;
    uint32_t n_ns = (uint32_t)off;
    memcpy(blob + off, "no_secrets", 11), off += 11;
    uint32_t s_ns = (uint32_t)off;
    memcpy(blob + off, secrets, ls), off += ls;
    sgt_hook recs[2] = {{.name = n_h, .source = s_h}, {.name = n_ns, .source = s_ns}};
    sgr_table t;
    memset(&t, 0, sizeof t);
    t.strings = blob;
    t.strings_size = (uint32_t)off;
    t.hooks = recs;
    t.nhooks = 2;
    char err[256];
    sgr_hooks *h = sgr_hooks_new(&t, NULL, err, sizeof err);
    if (!h) {
        fprintf(stderr, "bench_hooks: %s\n", err);
        return 1;
    }
    sgr_hook_sv av[] = {sv("ls"), sv("-la"), sv("src/components"), sv("--color=auto")};
    sgr_hook_sv opts[] = {sv("-la"), sv("-l"), sv("-a"), sv("--color")};
    sgr_hook_sv paths[] = {sv("/home/agent/project/src/components")};
    sgr_hook_sv ws[] = {sv("/home/agent/project")};
    sgr_hook_seg seg = {
        .program = sv("ls"), .path = sv("ls"), .argv = av, .argc = 4, .options = opts, .noptions = 4,
        .paths = paths, .npaths = 1, .cwd = sv("/home/agent/project"), .workspace = ws, .nworkspace = 1,
        .line = sv("ls -la src/components --color=auto")};
    static const char *const label[] = {"trivial hook (seg.program == \"ls\")", "stdlib no_secrets"};
    for (uint32_t k = 0; k < 2; k++) {
        long n = k == 0 ? iters : iters / 10;
        sgr_hook_result r;
        for (long i = 0; i < n / 100; i++)      /* warm up */
            sgr_hooks_call(h, k, &seg, &r);
        double t0 = now();
        for (long i = 0; i < n; i++)
            sgr_hooks_call(h, k, &seg, &r);
        double dt = now() - t0;
        if (r.status == SGR_HOOK_ERROR)
            fprintf(stderr, "bench_hooks: %s\n", r.message);
        printf("lua %-38s %9.0f calls/s  %7.0f ns/call  (%ld calls)\n", label[k], n / dt,
               dt * 1e9 / n, n);
    }
    sgr_hooks_free(h);
    free(blob);
    free(secrets);
    return 0;
}
