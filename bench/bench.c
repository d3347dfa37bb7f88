/* bench.c - shellgate's figures, and the baselines they are judged against, in one
 * run: compile, load and context time for generated packs; decisions in process on
 * generated workloads (bench/gen.h) for generated and shipped packs, each beside
 * the floor (one pass over the same bytes) and, for the generated packs, beside the
 * same pack as a list of POSIX regular expressions; check --batch in process and
 * through the CLI; one process per decision, timed from outside.  Prints a table
 * and, with --json FILE, writes every figure (docs/performance.md lists the
 * fields).  Asserts nothing about speed: tests must not depend on the machine.
 *
 * usage: bench_shellgate [--quick] [--iters N] [--json FILE] [--cli SHELLGATE]
 *                        [--spawn N] [--batch N] [--build TEXT]
 *        bench_shellgate --workload FILE   (the realistic workload as check --batch
 *                                           input, cwd the current directory) */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "lib/policy.h"
#include "lib/batch.h"
#include "compiler/compile.h"
#include "common/alloc.h"
#include "gen.h"
#include "spawn.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

/* ---- options and the results file ---------------------------------------------- */

static struct {
    int quick;
    long iters;                  /* decisions per measurement */
    const char *json, *cli, *build;
    const char *dump;            /* write the realistic workload as batch input, and stop */
    int spawn;                   /* runs per one-process figure */
    long batch;                  /* lines for the CLI batch figure */
} opt = { 0, 200000, NULL, NULL, "", NULL, 300, 200000 };

static FILE *js;                 /* the results file, or NULL */
static int js_first = 1;         /* no member written yet at this level */
static int js_depth;

static void js_str(const char *s)
{
    fputc('"', js);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(js, "\\%c", c);
        else if (c < 0x20)
            fprintf(js, "\\u%04x", c);
        else
            fputc(c, js);
    }
    fputc('"', js);
}

/* the separator and the indent of the next member */
static void js_next(void)
{
    if (!js_first)
        fputc(',', js);
    js_first = 0;
    if (js_depth)
        fprintf(js, "\n%*s", 2 * js_depth, "");
}

static void js_key(const char *k)
{
    if (!js)
        return;
    js_next();
    js_str(k);
    fputs(": ", js);
}

/* an object or array: as member k, or (k NULL) as the next element */
static void js_open(const char *k, int array)
{
    if (!js)
        return;
    if (k)
        js_key(k);
    else
        js_next();
    fputc(array ? '[' : '{', js);
    js_first = 1;
    js_depth++;
}

static void js_close(int array)
{
    if (!js)
        return;
    js_depth--;
    fprintf(js, "\n%*s%c", 2 * js_depth, "", array ? ']' : '}');
    js_first = 0;
}

static void js_num(const char *k, double v)
{
    if (!js)
        return;
    js_key(k);
    fprintf(js, "%.10g", v);
}

static void js_text(const char *k, const char *v)
{
    if (!js)
        return;
    js_key(k);
    js_str(v);
}

/* ---- decisions ------------------------------------------------------------------- */

/* decisions run in the real working directory (run from the source tree), so path
 * rules pay what real paths cost */
static char bench_cwd[4096];

typedef struct dstat {
    double per_s, per_cpu_s, median_us, p99_us, ns_per_line;
} dstat;

/* iters decisions over the lines in turn: three passes untimed (throughput: the
 * best of them), one with each call timed (latency) */
static dstat run_decisions(sgr_ctx *ctx, const bench_lines *L, long iters)
{
    sgr_opts o = { bench_cwd, NULL, 0, NULL };
    dstat d;
    for (size_t w = 0; w < L->n && w < 2000; w++)
        sgr_eval(ctx, L->v[w], L->len[w], &o);
    /* the best of three passes, each over a third: what other processes on the
     * machine take shows up as slower passes, not as a slower evaluator */
    double best_wall = 1e30, best_cpu = 1e30;
    long third = iters / 3 > 0 ? iters / 3 : 1;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now(), c0 = cpu_now();
        for (long i = 0; i < third; i++)
            sgr_eval(ctx, L->v[i % (long)L->n], L->len[i % (long)L->n], &o);
        double wall = now() - t0, cpu = cpu_now() - c0;
        best_wall = wall < best_wall ? wall : best_wall;
        best_cpu = cpu < best_cpu ? cpu : best_cpu;
    }
    d.per_cpu_s = third / best_cpu;
    d.per_s = third / best_wall;
    d.ns_per_line = best_cpu / third * 1e9;
    double *lat = xmalloc(sizeof *lat * (size_t)iters);
    for (long i = 0; i < iters; i++) {
        double a = now();
        sgr_eval(ctx, L->v[i % (long)L->n], L->len[i % (long)L->n], &o);
        lat[i] = now() - a;
    }
    qsort(lat, (size_t)iters, sizeof *lat, cmp_d);
    d.median_us = lat[iters / 2] * 1e6;
    d.p99_us = lat[iters * 99 / 100] * 1e6;
    free(lat);
    return d;
}

/* The floor: one pass over a line's bytes, each folded into a value that is kept,
 * so the compiler can neither drop the loop nor turn it into a vector sum. */
static volatile uint64_t floor_sink;

__attribute__((noinline)) static uint64_t floor_line(const char *s, size_t n)
{
    uint64_t h = 0;
    for (size_t i = 0; i < n; i++)
        h = h * 31 + (unsigned char)s[i];
    return h;
}

static double floor_ns_per_line(const bench_lines *L, long iters)
{
    uint64_t acc = 0;
    for (size_t w = 0; w < L->n; w++)
        acc += floor_line(L->v[w], L->len[w]);
    double best = 1e30;                         /* the best of three, as the decisions */
    long third = iters / 3 > 0 ? iters / 3 : 1;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = cpu_now();
        for (long i = 0; i < third; i++)
            acc += floor_line(L->v[i % (long)L->n], L->len[i % (long)L->n]);
        double t = cpu_now() - t0;
        best = t < best ? t : best;
    }
    floor_sink = acc;
    return best / third * 1e9;
}

static void report_decisions(const char *pack, size_t rules, const char *workload, const bench_lines *L, sgr_ctx *ctx,
                             long iters, dstat *out)
{
    dstat d = run_decisions(ctx, L, iters);
    double fl = floor_ns_per_line(L, iters);
    printf("  %-24s %-9s %9.0f decisions/s   median %7.2f us   p99 %7.2f us   %8.0f ns/line = %5.1fx the floor"
           " (%.0f ns)\n", pack, workload, d.per_s, d.median_us, d.p99_us, d.ns_per_line, d.ns_per_line / fl, fl);
    js_open(NULL, 0);
    js_text("pack", pack);
    js_num("rules", (double)rules);
    js_text("workload", workload);
    js_num("per_second", d.per_s);
    js_num("per_cpu_second", d.per_cpu_s);
    js_num("median_us", d.median_us);
    js_num("p99_us", d.p99_us);
    js_num("ns_per_line", d.ns_per_line);
    js_num("floor_ns_per_line", fl);
    js_num("eval_over_floor", d.ns_per_line / fl);
    js_close(0);
    if (out)
        *out = d;
}

/* ---- the regex-list alternative ---------------------------------------------------- */

typedef struct relist_c {
    regex_t *re;
    size_t n;
    double compile_ms;
} relist_c;

static void regex_compile(const bench_pack *p, relist_c *c)
{
    c->re = xmalloc(sizeof *c->re * p->nre);
    c->n = 0;
    double t0 = now();
    for (size_t i = 0; i < p->nre; i++) {
        if (regcomp(&c->re[i], p->re[i], REG_EXTENDED | REG_NOSUB) != 0) {
            fprintf(stderr, "bench: pattern %zu does not compile: %s\n", i, p->re[i]);
            exit(1);
        }
        c->n++;
    }
    c->compile_ms = (now() - t0) * 1e3;
}

static void regex_free(relist_c *c)
{
    for (size_t i = 0; i < c->n; i++)
        regfree(&c->re[i]);
    free(c->re);
}

/* lines decided by the list, in turn, for at least `budget` seconds of CPU time:
 * the first pattern that matches decides (they are ordered strictest first); CPU
 * us per line, as the decisions' ns/line */
static double regex_us_per_line(const relist_c *c, const bench_lines *L, double budget, size_t *lines)
{
    char *buf = NULL;
    size_t cap = 0, k = 0;
    double t0 = cpu_now(), t;
    uint64_t decided = 0;
    do {
        const char *s = L->v[k % L->n];
        size_t n = L->len[k % L->n];
        if (n + 1 > cap) {
            free(buf);
            cap = n + 1;
            buf = xmalloc(cap);
        }
        memcpy(buf, s, n + 1);                 /* regexec wants a C string */
        for (size_t i = 0; i < c->n; i++)
            if (regexec(&c->re[i], buf, 0, NULL, 0) == 0) {
                decided += i;
                break;
            }
        k++;
        t = cpu_now() - t0;
    } while (t < budget || k < 5);
    floor_sink = decided;
    free(buf);
    *lines = k;
    return t / (double)k * 1e6;
}

/* ---- named commands (the figures earlier rounds reported) -------------------------- */

static const char *const corpus2[] = {
    "git log --oneline --stat -20 -- compiler/sema.c runtime/eval.c | grep -in 'fix the evaluator'",
    "grep -rn --include='*.c' -e 'sgr_eval' -e 'sgr_ctx_new' runtime lib cli tests | sort -t: -k1,1 -k2,2n",
    "find runtime compiler -name '*.c' -newer CMakeLists.txt -not -name 'lex.c' -print | sort -r",
    "cat docs/language.md docs/packs.md docs/hooks.md docs/admission.md | grep -n -E '^#{2,3} [A-Z]'",
    "cd build && ctest -j2 --output-on-failure -R 'pack_|inline_|coverage_' --timeout 300 --repeat until-pass:2",
    "git diff --stat HEAD~3 -- runtime/ compiler/ lib/ cli/ && git log --oneline --graph --decorate -15",
    "python3 -m pytest -q tests/test_api.py -k 'not slow and not network' --maxfail=3 2>&1 | tail -n 30",
    "ls -la --time-style=long-iso src/ include/ tests/ docs/ bench/ | awk '{print $6, $7, $8, $NF}'",
    "sed -n '120,240p' runtime/shparse.c | grep -n -e 'static int' -e 'static void' -e 'parse_'",
    "docker ps --all --format '{{.Names}} {{.Status}} {{.Image}}' --filter status=running | sort -k2 -r",
};
#define NCORPUS2 (sizeof corpus2 / sizeof *corpus2)

static void report_command(sgr_ctx *ctx, const char *label, const char *const *cmds, size_t ncmd, long iters)
{
    bench_lines L;
    memset(&L, 0, sizeof L);
    L.v = (char **)cmds;
    L.len = xmalloc(sizeof *L.len * ncmd);
    L.n = ncmd;
    for (size_t i = 0; i < ncmd; i++) {
        L.len[i] = strlen(cmds[i]);
        L.min = !i || L.len[i] < L.min ? L.len[i] : L.min;
        L.max = L.len[i] > L.max ? L.len[i] : L.max;
    }
    dstat d = run_decisions(ctx, &L, iters);
    printf("  %-36s median %6.2f us   p99 %6.2f us   (%zu-%zu bytes)\n", label, d.median_us, d.p99_us, L.min, L.max);
    js_open(NULL, 0);
    js_text("label", label);
    js_num("commands", (double)ncmd);
    js_num("bytes_min", (double)L.min);
    js_num("bytes_max", (double)L.max);
    js_num("median_us", d.median_us);
    js_num("p99_us", d.p99_us);
    js_close(0);
    free(L.len);
}

/* ---- check --batch ------------------------------------------------------------------ */

/* the lines as the batch reads them: {"cmd": ..., "cwd": the bench's cwd} */
static void batch_lines(const bench_lines *L, bench_lines *J)
{
    memset(J, 0, sizeof *J);
    J->v = xmalloc(sizeof *J->v * L->n);
    J->len = xmalloc(sizeof *J->len * L->n);
    for (size_t i = 0; i < L->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "cmd", L->v[i]);
        cJSON_AddStringToObject(o, "cwd", bench_cwd);
        J->v[i] = cJSON_PrintUnformatted(o);
        J->len[i] = strlen(J->v[i]);
        cJSON_Delete(o);
        J->n++;
    }
}

/* request read, decision, answer written, as run_batch does for a pure check */
static double batch_in_process(sgr_ctx *ctx, const sgr_table *t, const bench_lines *J, long iters)
{
    sg_batch_buf out = { NULL, 0, 0 };
    size_t maxlen = 0;
    for (size_t i = 0; i < J->n; i++)
        maxlen = J->len[i] > maxlen ? J->len[i] : maxlen;
    char *buf = xmalloc(maxlen + 1);
    long warm = (long)J->n < 2000 ? (long)J->n : 2000, third = iters / 3 > 0 ? iters / 3 : 1;
    double t0 = 0, best = 1e30;
    /* a warm-up, then three passes of a third: the best, as run_decisions */
    for (long i = -warm, pass = 0; pass < 3; i++) {
        if (i == 0)
            t0 = cpu_now();
        if (i == third) {
            double dt = cpu_now() - t0;
            best = dt < best ? dt : best;
            pass++;
            i = -1;
            continue;
        }
        size_t k = (size_t)((i + warm) % (long)J->n);
        memcpy(buf, J->v[k], J->len[k]);
        sg_batch_req req;
        const char *err = sg_batch_parse(buf, J->len[k], &req);
        if (err) {
            sg_batch_write_error(&out, err);
        } else {
            sgr_opts so = { req.cwd ? req.cwd : bench_cwd, NULL, 0, NULL };
            const sgr_result *r = sgr_eval(ctx, req.cmd, req.cmd_len, &so);
            sg_batch_out v = { r->decision, r->rule_id, r->message, r->hint ? r->hint : "", 0, 0.0, NULL, NULL, NULL };
            sg_batch_write(&out, t, r, &v);
            sg_batch_req_free(&req);
        }
        if (out.len > (1u << 20))
            out.len = 0;
    }
    sg_free(out.s);
    free(buf);
    return third / best;
}

/* the CLI on a file of n lines, started from outside: lines per second of wall
 * time and of the CLI's own CPU time (median of three runs); 0 when it could not
 * be run */
static double batch_cli(const bench_lines *J, long n, double *per_cpu_s)
{
    char path[] = "/tmp/shellgate-bench-XXXXXX";
    int fd = mkstemp(path);
    *per_cpu_s = 0;
    if (fd < 0)
        return 0;
    FILE *f = fdopen(fd, "w");
    for (long i = 0; i < n; i++) {
        fwrite(J->v[i % (long)J->n], 1, J->len[i % (long)J->n], f);
        fputc('\n', f);
    }
    fclose(f);
    char *argv[] = { (char *)opt.cli, (char *)"check", (char *)"--batch", NULL };
    double t[3], c[3];
    int st = 0, ok = 1;
    for (int k = 0; k < 3 && ok; k++)
        ok = bench_spawn_run(argv, path, &st, &t[k], &c[k]) == 0 && st == 0;
    unlink(path);
    if (!ok)
        return 0;
    qsort(t, 3, sizeof *t, cmp_d);
    qsort(c, 3, sizeof *c, cmp_d);
    *per_cpu_s = n / c[1];
    return n / t[1];
}

/* ---- one process per decision ------------------------------------------------------ */

static void report_spawn(const char *label, char *const argv[], int runs)
{
    bench_spawn_res r;
    if (bench_spawn_stats(argv, runs, &r) < 0) {
        printf("  %-44s did not run\n", label);
        return;
    }
    printf("  %-44s median %6.3f ms   p99 %6.3f ms   min %6.3f ms   CPU %6.3f ms   (exit %d, %d runs)\n", label,
           r.median * 1e3, r.p99 * 1e3, r.min * 1e3, r.cpu_median * 1e3, r.status, r.runs);
    js_open(NULL, 0);
    js_text("label", label);
    js_num("runs", r.runs);
    js_num("exit", r.status);
    js_num("median_ms", r.median * 1e3);
    js_num("p99_ms", r.p99 * 1e3);
    js_num("min_ms", r.min * 1e3);
    js_num("cpu_ms", r.cpu_median * 1e3);
    js_close(0);
}

/* ---- main -------------------------------------------------------------------------- */

/* the 1-minute load average, -1 when unknown: how busy the machine was */
static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static void workload_stats(const char *name, uint64_t seed, const bench_lines *L, sgr_ctx *def)
{
    sgr_opts o = { bench_cwd, NULL, 0, NULL };
    double segs = 0;
    for (size_t i = 0; i < L->n; i++)
        segs += sgr_eval(def, L->v[i], L->len[i], &o)->cl.nseg;
    printf("  %-9s %5zu lines, %zu-%zu bytes (mean %.0f), %.2f segments a line as evaluated (seed %llu)\n", name, L->n,
           L->min, L->max, (double)L->total / L->n, segs / L->n, (unsigned long long)seed);
    js_open(name, 0);
    js_num("seed", (double)seed);
    js_num("lines", (double)L->n);
    js_num("bytes_min", (double)L->min);
    js_num("bytes_mean", (double)L->total / L->n);
    js_num("bytes_max", (double)L->max);
    js_num("segments_mean", segs / L->n);
    js_close(0);
}

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quick") == 0) {
            opt.quick = 1;
            opt.iters = 2000;
            opt.spawn = 3;
            opt.batch = 2000;
        } else if (strcmp(a, "--iters") == 0 && v) {
            opt.iters = atol(v), i++;
        } else if (strcmp(a, "--json") == 0 && v) {
            opt.json = v, i++;
        } else if (strcmp(a, "--cli") == 0 && v) {
            opt.cli = v, i++;
        } else if (strcmp(a, "--spawn") == 0 && v) {
            opt.spawn = atoi(v), i++;
        } else if (strcmp(a, "--batch") == 0 && v) {
            opt.batch = atol(v), i++;
        } else if (strcmp(a, "--workload") == 0 && v) {
            opt.dump = v, i++;
        } else if (strcmp(a, "--build") == 0 && v) {
            opt.build = v, i++;
        } else if (a[0] >= '0' && a[0] <= '9') {
            opt.iters = atol(a);                /* the old spelling: bench_shellgate ITERS */
        } else {
            fprintf(stderr, "usage: bench_shellgate [--quick] [--iters N] [--json FILE] [--cli SHELLGATE] "
                            "[--spawn N] [--batch N] [--build TEXT] [--workload FILE]\n");
            return -1;
        }
    }
    if (opt.iters < 100)
        opt.iters = 100;
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) < 0)
        return 64;
    if (!getcwd(bench_cwd, sizeof bench_cwd))
        strcpy(bench_cwd, "/");
    if (opt.dump) {
        bench_lines R, D;
        bench_gen_realistic(1, opt.quick ? 200 : 2000, &R);
        batch_lines(&R, &D);
        FILE *f = fopen(opt.dump, "w");
        for (size_t i = 0; f && i < D.n; i++)
            fprintf(f, "%s\n", D.v[i]);
        if (!f || fclose(f) != 0) {
            fprintf(stderr, "bench: cannot write %s\n", opt.dump);
            return 1;
        }
        for (size_t i = 0; i < D.n; i++)
            cJSON_free(D.v[i]);
        free(D.v);
        free(D.len);
        bench_lines_free(&R);
        return 0;
    }
    if (opt.json && !(js = fopen(opt.json, "w"))) {
        fprintf(stderr, "bench: cannot write %s\n", opt.json);
        return 1;
    }
    char when[64];
    time_t tnow = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tnow));
    js_open(NULL, 0);
    js_text("schema", "shellgate-bench/1");
    js_text("when", when);
    js_text("build", opt.build);
    js_num("cpus", (double)sysconf(_SC_NPROCESSORS_ONLN));
    js_num("quick", opt.quick);
    js_num("iterations", (double)opt.iters);
    js_num("load_start", loadavg());

    sg_policy *shipped[4] = { 0 };
    sgr_ctx *sctx[4] = { 0 };
    static const char *const shipped_names[4] = { "default", "readonly", "gaia", "ironclaw" };
    for (int k = 0; k < 4; k++) {
        if (sg_policy_load(shipped_names[k], NULL, &shipped[k]) != 0 || !(sctx[k] = sgr_ctx_new(shipped[k]->t))) {
            fprintf(stderr, "bench: the embedded %s pack does not load\n", shipped_names[k]);
            return 1;
        }
    }

    printf("workloads (generated from a seed; decisions run in %s)\n", bench_cwd);
    bench_lines real, host;
    bench_gen_realistic(1, opt.quick ? 200 : 2000, &real);
    bench_gen_hostile(2, opt.quick ? 14 : 70, &host);
    js_open("workloads", 0);
    workload_stats("realistic", 1, &real, sctx[0]);
    workload_stats("hostile", 2, &host, sctx[0]);
    js_close(0);

    printf("compile and load (generated packs; the regex list is the same pack as POSIX EREs)\n");
    static const size_t all_sizes[] = { 100, 300, 1000, 3000, 10000 };
    static const size_t quick_sizes[] = { 100, 1000 };
    const size_t *sizes = opt.quick ? quick_sizes : all_sizes;
    size_t nsizes = opt.quick ? 2 : 5;
    bench_pack packs[5];
    sgr_table *tabs[5] = { 0 }, *nttabs[5] = { 0 };
    sgr_ctx *gctx[5] = { 0 }, *ntctx[5] = { 0 };
    uint8_t *imgs[5] = { 0 }, *ntimgs[5] = { 0 };
    relist_c res[5];
    js_open("packs", 1);
    for (size_t k = 0; k < nsizes; k++) {
        bench_gen_pack(sizes[k], 0, &packs[k]);
        sgc_input in = { "gen.rules", packs[k].text, strlen(packs[k].text) };
        sgc_options co;
        memset(&co, 0, sizeof co);
        size_t len = 0;
        double best = 1e9;
        for (int rep = 0; rep < (opt.quick ? 1 : 5); rep++) {
            uint8_t *img = NULL;
            double t0 = now();
            int r = sgc_compile(&co, &in, 1, &img, &len);
            double t = now() - t0;
            if (r != 0) {
                fprintf(stderr, "bench: the generated pack of %zu rules does not compile\n", sizes[k]);
                return 1;
            }
            best = t < best ? t : best;
            sg_free(imgs[k]);
            imgs[k] = img;
        }
        char err[256];
        double lbest = 1e9;
        for (int rep = 0; rep < (opt.quick ? 2 : 50); rep++) {
            sgr_table *t = NULL;
            double t0 = now();
            if (sgr_table_load(imgs[k], len, &t, err, sizeof err) != 0) {
                fprintf(stderr, "bench: load: %s\n", err);
                return 1;
            }
            double tl = now() - t0;
            lbest = tl < lbest ? tl : lbest;
            sgr_table_free(tabs[k]);
            tabs[k] = t;
        }
        /* a context: the per-program rule walks and filters made once, which a
         * one-shot `shellgate check` pays on top of the load */
        double cbest = 1e9;
        for (int rep = 0; rep < (opt.quick ? 2 : 10); rep++) {
            double t0 = now();
            sgr_ctx *c = sgr_ctx_new(tabs[k]);
            double tc = now() - t0;
            if (!c) {
                fprintf(stderr, "bench: no context for the generated pack of %zu rules\n", sizes[k]);
                return 1;
            }
            cbest = tc < cbest ? tc : cbest;
            sgr_ctx_free(gctx[k]);
            gctx[k] = c;
        }
        regex_compile(&packs[k], &res[k]);
        /* the same pack without its whole-line text rules, for the per-segment figure */
        bench_pack nt;
        bench_gen_pack(sizes[k], BENCH_PACK_NO_TEXT, &nt);
        sgc_input nin = { "gen-notext.rules", nt.text, strlen(nt.text) };
        size_t ntlen = 0;
        if (sgc_compile(&co, &nin, 1, &ntimgs[k], &ntlen) != 0
            || sgr_table_load(ntimgs[k], ntlen, &nttabs[k], err, sizeof err) != 0
            || !(ntctx[k] = sgr_ctx_new(nttabs[k]))) {
            fprintf(stderr, "bench: the generated pack of %zu rules without text rules does not load\n", sizes[k]);
            return 1;
        }
        bench_pack_free(&nt);
        printf("  %5zu rules: compile %7.2f ms   table %8zu bytes (%5.1f bytes/rule)   load+verify %7.3f ms"
               "   context %7.3f ms   regcomp %8.2f ms\n",
               sizes[k], best * 1e3, len, (double)len / sizes[k], lbest * 1e3, cbest * 1e3, res[k].compile_ms);
        char name[32];
        snprintf(name, sizeof name, "generated-%zu", sizes[k]);
        js_open(NULL, 0);
        js_text("name", name);
        js_num("rules", (double)sizes[k]);
        js_num("text_rules", (double)packs[k].ntext);
        js_num("compile_ms", best * 1e3);
        js_num("table_bytes", (double)len);
        js_num("load_ms", lbest * 1e3);
        js_num("context_ms", cbest * 1e3);
        js_num("regex_patterns", (double)res[k].n);
        js_num("regcomp_ms", res[k].compile_ms);
        js_close(0);
    }
    js_close(1);

    printf("decisions in process, one thread (decisions/s: wall clock; ns/line: CPU time a decision, which other\n"
           "processes on the machine do not inflate; floor: one pass over the same bytes, CPU time)\n");
    dstat gen_real[5];
    js_open("decisions", 1);
    for (size_t k = 0; k < nsizes; k++) {
        char name[32];
        snprintf(name, sizeof name, "generated-%zu", sizes[k]);
        report_decisions(name, sizes[k], "realistic", &real, gctx[k], opt.iters, &gen_real[k]);
    }
    for (size_t k = 0; k < nsizes; k++) {
        char name[40];
        snprintf(name, sizeof name, "generated-%zu-notext", sizes[k]);
        report_decisions(name, sizes[k], "realistic", &real, ntctx[k], opt.iters, NULL);
    }
    for (int k = 0; k < 4; k++)
        report_decisions(shipped_names[k], shipped[k]->t->nrules, "realistic", &real, sctx[k], opt.iters, NULL);
    for (size_t k = 0; k < nsizes; k += nsizes - 1) {
        char name[32];
        snprintf(name, sizeof name, "generated-%zu", sizes[k]);
        report_decisions(name, sizes[k], "hostile", &host, gctx[k], opt.iters / 100 + 20, NULL);
    }
    report_decisions("default", shipped[0]->t->nrules, "hostile", &host, sctx[0], opt.iters / 100 + 20, NULL);
    js_close(1);

    printf("the hand-written alternative: the same packs as POSIX regexes, tried in turn on the raw line\n");
    js_open("regex_baseline", 1);
    for (size_t k = 0; k < nsizes; k++) {
        size_t lines = 0;
        double us = regex_us_per_line(&res[k], &real, opt.quick ? 0.02 : 1.0, &lines);
        double ev = gen_real[k].ns_per_line / 1e3;
        printf("  %5zu rules (%5zu patterns): %10.2f us/line over %6zu lines = %7.1fx shellgate's %.2f us\n",
               sizes[k], res[k].n, us, lines, us / ev, ev);
        char name[32];
        snprintf(name, sizeof name, "generated-%zu", sizes[k]);
        js_open(NULL, 0);
        js_text("pack", name);
        js_num("rules", (double)sizes[k]);
        js_num("patterns", (double)res[k].n);
        js_num("lines", (double)lines);
        js_num("us_per_line", us);
        js_num("eval_us_per_line", ev);
        js_num("regex_over_eval", us / ev);
        js_close(0);
    }
    js_close(1);

    printf("named commands, default pack\n");
    js_open("commands", 1);
    report_command(sctx[0], "2 segments, 93 bytes", corpus2, 1, opt.iters / 4 + 100);
    static const char *const short_cmd[] = { "git status --short | wc -l" };
    report_command(sctx[0], "no path operands, 26 bytes", short_cmd, 1, opt.iters / 4 + 100);
    report_command(sctx[0], "ten 2-segment commands", corpus2, NCORPUS2, opt.iters / 2 + 100);
    js_close(1);

    printf("check --batch (default pack; JSON lines of the realistic workload)\n");
    bench_lines J;
    batch_lines(&real, &J);
    double inproc = batch_in_process(sctx[0], shipped[0]->t, &J, opt.iters);
    dstat dd = run_decisions(sctx[0], &real, opt.iters / 4 + 100);
    printf("  in process (read, decide, write) %9.0f lines per CPU-second   decisions alone %9.0f   the JSON costs %.0f"
           " ns a line\n", inproc, dd.per_cpu_s, 1e9 / inproc - 1e9 / dd.per_cpu_s);
    js_open("batch", 0);
    js_text("pack", "default");
    js_num("in_process_lines_per_s", inproc);
    js_num("decisions_alone_per_s", dd.per_cpu_s);
    js_num("json_ns_per_line", 1e9 / inproc - 1e9 / dd.per_cpu_s);
    js_num("cli_lines", (double)opt.batch);
    /* the CLI from outside, on the realistic lines and on the six commands the
     * figure of earlier rounds was measured on (there with the cwd
     * /home/agent/project, which does not exist on a bench machine: a path under
     * a missing directory is never cached, so every decision paid an lstat per
     * path; here the bench's cwd), on one thread and on its default */
    bench_lines S;
    static const char *const six[] = { "ls -la src", "git -C sub log --oneline", "cat README.md | head -50",
                                       "curl -s x | bash", "sudo rm -rf /", "grep -E x notes.txt | wc -l" };
    memset(&S, 0, sizeof S);
    S.v = xmalloc(sizeof *S.v * 6);
    S.len = xmalloc(sizeof *S.len * 6);
    for (int i = 0; i < 6; i++) {
        size_t k = strlen(six[i]) + 64;
        S.v[i] = xmalloc(k);
        S.len[i] = (size_t)snprintf(S.v[i], k, "{\"cmd\": \"%s\", \"cwd\": \"%s\"}", six[i], bench_cwd);
    }
    S.n = 6;
    struct { const char *key, *label; const bench_lines *lines; int one; } runs[] = {
        { "cli_lines_per_s", "realistic lines", &J, 0 },
        { "cli_1thread_lines_per_s", "realistic lines, one thread", &J, 1 },
        { "cli_six_lines_per_s", "the six commands", &S, 0 },
        { "cli_six_1thread_lines_per_s", "the six commands, one thread", &S, 1 },
    };
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        if (runs[k].one)
            setenv("SHELLGATE_BATCH_THREADS", "1", 1);
        double cpu = 0, wall = opt.cli ? batch_cli(runs[k].lines, opt.batch, &cpu) : 0;
        unsetenv("SHELLGATE_BATCH_THREADS");
        if (wall > 0)
            printf("  the CLI, %-29s %9.0f lines/s (wall)   %9.0f per CPU-second of the CLI\n", runs[k].label,
                   wall, cpu);
        else
            printf("  the CLI, %-29s not run (--cli SHELLGATE)\n", runs[k].label);
        char key[64];
        js_num(runs[k].key, wall);
        snprintf(key, sizeof key, "%.*s_per_cpu_s", (int)(strlen(runs[k].key) - 6), runs[k].key);
        js_num(key, cpu);
    }
    js_close(0);
    for (int i = 0; i < 6; i++)
        free(S.v[i]);
    free(S.v);
    free(S.len);

    printf("one process per decision (started from outside, posix_spawn to exit)\n");
    js_open("process", 1);
    char truebin[] = "/bin/true";
    char *tv[] = { truebin, NULL };
    report_spawn("/bin/true (the machine's floor)", tv, opt.spawn);
    if (opt.cli) {
        char *uv[] = { (char *)opt.cli, (char *)"--no-such-verb", NULL };
        report_spawn("shellgate, start-up only (usage error)", uv, opt.spawn);
        char *cv[] = { (char *)opt.cli, (char *)"check", (char *)"--", (char *)"git status --short", NULL };
        report_spawn("shellgate check -- 'git status --short'", cv, opt.spawn);
        char *c2[] = { (char *)opt.cli, (char *)"check", (char *)"--", (char *)corpus2[0], NULL };
        report_spawn("shellgate check -- (2 segments, 93 bytes)", c2, opt.spawn);
        char *c3[] = { (char *)opt.cli, (char *)"check", (char *)"--json", (char *)"--", (char *)"sudo rm -rf /", NULL };
        report_spawn("shellgate check --json -- 'sudo rm -rf /'", c3, opt.spawn);
    }
    js_close(1);
    js_num("load_end", loadavg());
    /* the paths measured by the parts that add them (docs/performance.md) */
    if (js) {
        js_key("server");
        fputs("null", js);
        js_key("run");
        fputs("null", js);
        js_key("hook_adapters");
        fputs("null", js);
        js_key("redis");
        fputs("null", js);
    }
    js_close(0);
    if (js) {
        fputc('\n', js);
        if (fclose(js) != 0) {
            fprintf(stderr, "bench: cannot write %s\n", opt.json);
            return 1;
        }
    }

    for (size_t k = 0; k < nsizes; k++) {
        sgr_ctx_free(gctx[k]);
        sgr_table_free(tabs[k]);
        sg_free(imgs[k]);
        sgr_ctx_free(ntctx[k]);
        sgr_table_free(nttabs[k]);
        sg_free(ntimgs[k]);
        regex_free(&res[k]);
        bench_pack_free(&packs[k]);
    }
    for (int k = 0; k < 4; k++) {
        sgr_ctx_free(sctx[k]);
        sg_policy_free(shipped[k]);
    }
    for (size_t i = 0; i < J.n; i++)
        cJSON_free(J.v[i]);
    free(J.v);
    free(J.len);
    bench_lines_free(&real);
    bench_lines_free(&host);
    return 0;
}
