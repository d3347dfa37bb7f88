/* bench_run.c - what the executor costs over a bare fork/exec of `true`: the
 * same program run N times bare, through `shellgate run` (a process each, as an
 * agent's tool calls it), with --sandbox bwrap, and in process (sgx_run: decide and
 * run, no shellgate start-up).  usage: bench_run SHELLGATE [N [JSON_OUT]]
 *   JSON_OUT gets {"run": {...}} for bench/results.json (bench/merge_agents.py). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/policy.h"
#include "exec/run.h"

extern char **environ;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run argv n times, output to /dev/null; mean microseconds, or -1 when a run
 * failed. */
static double spawn(const char *const *argv, int n)
{
    double t0 = now();
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            int nul = open("/dev/null", O_WRONLY);
            dup2(nul, 1);
            dup2(nul, 2);
            execve(argv[0], (char *const *)argv, environ);
            _exit(127);
        }
        int st;
        if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return -1;
    }
    return (now() - t0) / n * 1e6;
}

static FILE *js;                       /* JSON_OUT, or NULL */
static int js_n;

static void line(const char *what, double us, double base)
{
    if (js) {                          /* us < 0: the figure failed or was skipped (null) */
        fprintf(js, "%s{\"what\":\"", js_n++ ? "," : "");
        for (const char *c = what; *c; c++)
            fprintf(js, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
        if (us < 0)
            fputs("\",\"us\":null}", js);
        else
            fprintf(js, "\",\"us\":%.1f,\"over_bare_us\":%.1f}", us, base > 0 ? us - base : 0.0);
    }
    if (us < 0)
        printf("run: %-44s failed\n", what);
    else if (base > 0)
        printf("run: %-44s %8.0f us  (+%.0f us over bare)\n", what, us, us - base);
    else
        printf("run: %-44s %8.0f us\n", what, us);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_run SHELLGATE [N]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 200;
    if (n < 1)
        n = 1;
    if (argc > 3 && !(js = fopen(argv[3], "w"))) {
        perror(argv[3]);
        return 2;
    }
    if (js)
        fprintf(js, "{\"run\":{\"runs\":%d,\"figures\":[", n);
    char tmpl[] = "/tmp/sgx-bench-XXXXXX";
    if (!mkdtemp(tmpl))
        return 2;
    setenv("XDG_STATE_HOME", tmpl, 1);  /* no admission state of the caller's */
    const char *sg = argv[1];
    const char *bare[] = { "/bin/true", NULL };
    const char *check[] = { sg, "check", "--", "true", NULL };
    const char *run[] = { sg, "run", "--", "true", NULL };
    const char *box[] = { sg, "run", "--sandbox", "bwrap", "--", "true", NULL };
    spawn(bare, 5);                     /* warm the page cache */
    spawn(run, 5);
    double b = spawn(bare, n);
    line("bare fork/exec of true", b, 0);
    line("shellgate check -- true (decision only)", spawn(check, n), b);
    line("shellgate run -- true", spawn(run, n), b);
    double sb = spawn(box, 1) < 0 ? -1 : spawn(box, n / 4 ? n / 4 : 1);
    if (sb < 0) {
        printf("run: %-44s skipped: bwrap does not start here\n", "shellgate run --sandbox bwrap -- true");
        if (js)                        /* the figure's place, null */
            fprintf(js, "%s{\"what\":\"shellgate run --sandbox bwrap -- true\",\"us\":null}", js_n++ ? "," : "");
    } else {
        line("shellgate run --sandbox bwrap -- true", sb, b);
    }

    /* in process: the executor's own work for a line, no shellgate start-up */
    sg_policy *p = NULL;
    if (sg_policy_load("default", NULL, &p) != 0)
        return 2;
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    char cwd[4096];
    if (!ctx || !getcwd(cwd, sizeof cwd))
        return 2;
    sgx_vars vars = { 0 };
    sgx_vars_set(&vars, "PATH", 4, "/usr/bin:/bin", 1);
    sgx_opts o;
    memset(&o, 0, sizeof o);
    o.t = p->t;
    o.ctx = ctx;
    o.cwd = cwd;
    o.vars = &vars;
    sgx_rlimits_default(&o.rl);
    static const char *const lines[] = { "true", "echo a | cat > /dev/null && true" };
    for (size_t k = 0; k < 2; k++) {
        double t0 = now();
        int ok = 1;
        for (int i = 0; i < n && ok; i++) {
            sgx_run *r = sgx_run_new(&o);
            ok = r && sgx_prepare(r, lines[k], strlen(lines[k])) == 0 && sgx_execute(r) == 0
                 && sgx_result_of(r)->return_code == 0;
            sgx_run_free(r);
        }
        char what[80];
        snprintf(what, sizeof what, "in process: sgx_run \"%s\"", lines[k]);
        line(what, ok ? (now() - t0) / n * 1e6 : -1, k ? 0 : b);
    }
    sgx_vars_free(&vars);
    sgr_ctx_free(ctx);
    sg_policy_free(p);
    rmdir(tmpl);
    if (js) {
        fputs("]}}\n", js);
        fclose(js);
    }
    return 0;
}
