/* test_exec_diff.c - the executor's differential test: the argv every program
 * receives is the argv the evaluator decided on.
 *
 * For every line each shipped pack allows -- its case file's and inline tests'
 * allowed lines, their meaning-keeping variants (cli/mutate.h), and lines built
 * from them with ; && || | ( ) { } -- the executor runs the line in a scratch
 * workspace with a scratch HOME, and every program is the stand-in
 * tests/exec/sgx_standin.c: the executor's lookup hook maps every name, bare or a
 * path (/bin/rm), to it, and PATH holds only it, so no program of the corpus ever
 * runs.  Redirections may write only inside the scratch directory (the
 * executor's open hook).  The stand-in logs the argv it got; each must be the
 * argv of a top-level segment of a line the evaluator decided on (checked
 * independently here), as many programs must have run as the executor started,
 * and where nothing can skip a command (only ; and |) every decided program must
 * have run exactly once.
 * usage: test_exec_diff STANDIN SRCDIR */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "lib/policy.h"
#include "exec/run.h"
#include "cli/mutate.h"

static char standin[PATH_MAX], scratch[PATH_MAX], ws[PATH_MAX + 16], home[PATH_MAX + 16], logp[PATH_MAX + 16];

static int lookup(void *ud, const char *name, const char *path, const char *cwd, char *out, size_t n)
{
    (void)ud;
    (void)name;
    (void)path;
    (void)cwd;
    return snprintf(out, n, "%s", standin) < (int)n ? 0 : -1;
}

/* Writes only inside the scratch directory (and to /dev/null); reads anywhere. */
static int open_check(void *ud, const char *path, int flags)
{
    (void)ud;
    if ((flags & O_ACCMODE) == O_RDONLY || strcmp(path, "/dev/null") == 0)
        return 0;
    char dir[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    size_t sl = strlen(scratch);
    if (realpath(dir, real) && strncmp(real, scratch, sl) == 0 && (real[sl] == '/' || real[sl] == '\0'))
        return 0;
    errno = EACCES;
    return -1;
}

/* nftw: remove the scratch tree, what the lines made included */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path), 0;
}

/* ---- argv multisets ------------------------------------------------------------- */

typedef struct argv_t {
    char **v;
    uint32_t n;
    int used;
} argv_t;

typedef struct argvs {
    argv_t *a;
    uint32_t n, cap;
} argvs;

static void argvs_add(argvs *s, char **v, uint32_t n)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->a = realloc(s->a, s->cap * sizeof *s->a);
    }
    argv_t *x = &s->a[s->n++];
    x->v = malloc((n ? n : 1) * sizeof *x->v);
    for (uint32_t i = 0; i < n; i++)
        x->v[i] = strdup(v[i]);
    x->n = n;
    x->used = 0;
}

static void argvs_clear(argvs *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        for (uint32_t k = 0; k < s->a[i].n; k++)
            free(s->a[i].v[k]);
        free(s->a[i].v);
    }
    s->n = 0;
}

static int argv_eq(const argv_t *a, const argv_t *b)
{
    if (a->n != b->n)
        return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return 0;
    return 1;
}

static int is_builtin(const char *s)
{
    return strcmp(s, "cd") == 0 || strcmp(s, "export") == 0 || strcmp(s, "unset") == 0 || strcmp(s, ":") == 0;
}

/* Can a command of line s be skipped (&&, ||, ! outside quotes)?  The parser
 * records no connector after a compound, so this reads the text; an unsure
 * answer is yes, which only drops the all-ran check. */
static int may_skip(const char *s)
{
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        if (c == '\\' && s[i + 1]) {
            i++;
        } else if (c == '\'') {
            const char *q = strchr(s + i + 1, '\'');
            if (!q)
                return 1;
            i = (size_t)(q - s);
        } else if (c == '"') {
            for (i++; s[i] && s[i] != '"'; i++)
                if (s[i] == '\\' && s[i + 1])
                    i++;
            if (!s[i])
                return 1;
        } else if ((c == '&' && s[i + 1] == '&') || (c == '|' && s[i + 1] == '|')) {
            return 1;
        } else if (c == '!' && (i == 0 || strchr(" \t\n;&|({", s[i - 1])) && strchr(" \t", s[i + 1])) {
            return 1;
        }
    }
    return 0;
}

/* The stand-in's log: one argv per line, "N =hex =hex ...". */
static void read_log(argvs *got)
{
    FILE *f = fopen(logp, "r");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char *save, *tok = strtok_r(line, " \n", &save);
        uint32_t n = tok ? (uint32_t)atoi(tok) : 0, k = 0;
        char **v = calloc(n + 1, sizeof *v);
        while (k < n && (tok = strtok_r(NULL, " \n", &save))) {
            size_t hl = strlen(tok + 1);
            char *s = malloc(hl / 2 + 1);
            for (size_t i = 0; i < hl / 2; i++) {
                unsigned b;
                sscanf(tok + 1 + 2 * i, "%2x", &b);
                s[i] = (char)b;
            }
            s[hl / 2] = '\0';
            v[k++] = s;
        }
        argvs_add(got, v, k);
        for (uint32_t i = 0; i < k; i++)
            free(v[i]);
        free(v);
    }
    free(line);
    fclose(f);
}

/* ---- lines to run ------------------------------------------------------------------ */

typedef struct lines {
    char **v;
    uint32_t n, cap;
} lines;

static void lines_add(lines *l, const char *s)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = strdup(s);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* the allowed lines of a case file ("command ; decision [; rule]") */
static void read_cases(const char *path, lines *out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        sg_t_fail++;
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        char *s = trim(line);
        if (!*s || *s == '#')
            continue;
        char *last = NULL, *prev = NULL;
        for (char *q = strstr(s, " ; "); q; q = strstr(q + 1, " ; ")) {
            prev = last;
            last = q;
        }
        if (!last)
            continue;
        char *dec = trim(last + 3);
        if (strcmp(dec, "allow") != 0 && prev && strcmp(trim(prev + 3), "allow") == 0) {
            last = prev;
            dec = prev + 3;
        }
        if (strncmp(trim(dec), "allow", 5) != 0)
            continue;
        *last = '\0';
        lines_add(out, trim(s));
    }
    free(line);
    fclose(f);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Lines built from simple allowed lines with the executor's structure. */
static void combine(const lines *simple, lines *out, unsigned n)
{
    static const char *const conn[] = { "; ", " && ", " || ", " | ", "\n", " |& " };
    char buf[8192];
    for (unsigned i = 0; i < n && simple->n; i++) {
        unsigned k = 2 + (unsigned)(next() % 2);
        size_t o = 0;
        buf[0] = '\0';
        for (unsigned j = 0; j < k; j++) {
            const char *s = simple->v[next() % simple->n];
            const char *c = j ? conn[next() % 6] : "";
            int wrap = (int)(next() % 5);
            if (wrap == 3 && strchr(c, '|') && !strstr(c, "||"))
                wrap = 0;                  /* bash takes ! only at a pipeline's start */
            const char *pre = wrap == 1 ? "( " : wrap == 2 ? "{ " : wrap == 3 ? "! " : "";
            const char *post = wrap == 1 ? " )" : wrap == 2 ? "; }" : "";
            int w = snprintf(buf + o, sizeof buf - o, "%s%s%s%s", c, pre, s, post);
            if (w < 0 || (size_t)w >= sizeof buf - o)
                break;
            o += (size_t)w;
        }
        lines_add(out, buf);
    }
}

/* ---- one line -------------------------------------------------------------------------- */

typedef struct stats {
    unsigned ran, compared, refused, not_allowed, all_ran_checked, failed_runs;
} stats;

static void run_line(const sgr_table *t, sgr_ctx *ctx, sgr_ctx *ctx2, const sgx_vars *vars, const char *line,
                     stats *st)
{
    truncate(logp, 0);
    const char *roots[1] = { ws };
    sgx_opts o;
    memset(&o, 0, sizeof o);
    o.t = t;
    o.ctx = ctx;
    o.cwd = ws;
    o.roots = roots;
    o.nroots = 1;
    o.vars = vars;
    o.timeout_s = 20;
    o.grace_s = 0.2;
    sgx_rlimits_default(&o.rl);
    o.lookup = lookup;
    o.open_check = open_check;
    sgx_run *r = sgx_run_new(&o);
    if (!r) {
        CHECK(!"out of memory");
        return;
    }
    if (sgx_prepare(r, line, strlen(line)) < 0) {
        if (getenv("SGX_DIFF_VERBOSE"))
            fprintf(stderr, "refused: %s\n  %s\n", line, sgx_result_of(r)->message);
        st->refused++;
        sgx_run_free(r);
        return;
    }
    if (sgx_prepared(r)->decision != SGT_ALLOW) {
        st->not_allowed++;
        sgx_run_free(r);
        return;
    }
    if (sgx_execute(r) < 0) {
        CHECK(!"sgx_execute failed");
        sgx_run_free(r);
        return;
    }
    const sgx_result *res = sgx_result_of(r);
    st->ran++;
    if (res->state != SGX_ST_SUCCESS)
        st->failed_runs++;
    /* what the evaluator decided on: every line it was shown, evaluated again */
    uint32_t nd;
    const char *const *dl = sgx_decided_lines(r, &nd);
    argvs want = { 0 }, got = { 0 };
    int skippable = nd != 1 || (nd && may_skip(dl[0]));
    for (uint32_t i = 0; i < nd; i++) {
        sgr_opts so = { ws, roots, 1, home };
        const sgr_result *er = sgr_eval(ctx2, dl[i], strlen(dl[i]), &so);
        for (uint32_t s = 0; s < er->cl.nseg; s++) {
            const sgr_segment *sg = &er->cl.seg[s];
            if (sg->nest != SGR_NEST_TOP)
                continue;
            if (!sg->argc || is_builtin(sg->argv[0].text))
                continue;
            char *v[4096];
            for (uint32_t k = 0; k < sg->argc && k < 4096; k++)
                v[k] = (char *)sg->argv[k].text;
            argvs_add(&want, v, sg->argc);
        }
    }
    read_log(&got);
    int ok = got.n == res->nexec;
    for (uint32_t i = 0; i < got.n && ok; i++) {
        int found = 0;
        for (uint32_t k = 0; k < want.n && !found; k++)
            if (!want.a[k].used && argv_eq(&got.a[i], &want.a[k]))
                found = want.a[k].used = 1;
        ok = found;
        st->compared++;
    }
    if (ok && !skippable && res->state == SGX_ST_SUCCESS && !res->nfailed) {
        st->all_ran_checked++;
        for (uint32_t k = 0; k < want.n; k++)
            ok &= want.a[k].used;
    }
    if (!ok) {
        fprintf(stderr, "argv differs: %s\n  decided on: %s\n  programs started %u, logged %u\n", line,
                nd ? dl[0] : "", res->nexec, got.n);
        for (uint32_t i = 0; i < got.n; i++) {
            fprintf(stderr, "  got:");
            for (uint32_t k = 0; k < got.a[i].n; k++)
                fprintf(stderr, " [%s]", got.a[i].v[k]);
            fprintf(stderr, "\n");
        }
        for (uint32_t i = 0; i < want.n; i++) {
            fprintf(stderr, "  want:");
            for (uint32_t k = 0; k < want.a[i].n; k++)
                fprintf(stderr, " [%s]", want.a[i].v[k]);
            fprintf(stderr, "\n");
        }
    }
    CHECK(ok);
    argvs_clear(&want);
    argvs_clear(&got);
    free(want.a);
    free(got.a);
    sgx_run_free(r);
}

int main(int argc, char **argv)
{
    if (argc != 3 || !realpath(argv[1], standin)) {
        fprintf(stderr, "usage: test_exec_diff STANDIN SRCDIR\n");
        return 2;
    }
    char tmpl[] = "/tmp/sgx-diff-XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, scratch))
        return 2;
    snprintf(ws, sizeof ws, "%s/ws", scratch);
    snprintf(home, sizeof home, "%s/home", scratch);
    snprintf(logp, sizeof logp, "%s/argv.log", scratch);
    char bin[PATH_MAX + 8], link[PATH_MAX + 32];
    snprintf(bin, sizeof bin, "%s/bin", scratch);
    mkdir(ws, 0700);
    mkdir(home, 0700);
    mkdir(bin, 0700);
    snprintf(link, sizeof link, "%s/standin", bin);
    if (symlink(standin, link) != 0)
        return 2;
    static const char *const files[] = { "README.md", "notes.txt", "a.c", "b.c", "Makefile", "src" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", ws, files[i]);
        if (strcmp(files[i], "src") == 0)
            mkdir(p, 0700);
        else
            close(open(p, O_WRONLY | O_CREAT, 0600));
    }
    sgx_vars vars = { 0 };
    sgx_vars_set(&vars, "PATH", 4, bin, 1);
    sgx_vars_set(&vars, "HOME", 4, home, 1);
    sgx_vars_set(&vars, "SGX_STANDIN_LOG", 15, logp, 1);
    sgx_vars_set(&vars, "LANG", 4, "C.UTF-8", 1);
    static const char *const packs[] = { "default", "readonly", "gaia", "ironclaw" };
    stats total = { 0 };
    for (size_t p = 0; p < 4; p++) {
        sg_policy *pol = NULL;
        if (sg_policy_load(packs[p], NULL, &pol) != 0) {
            CHECK(!"pack loads");
            continue;
        }
        lines base = { 0 }, all = { 0 }, simple = { 0 };
        char cases[PATH_MAX];
        snprintf(cases, sizeof cases, "%s/tests/packs/%s.cases", argv[2], packs[p]);
        read_cases(cases, &base);
        for (uint32_t i = 0; i < pol->t->ntests; i++)
            if (pol->t->tests[i].decision == SGT_ALLOW)
                lines_add(&base, sgr_str(pol->t, pol->t->tests[i].command));
        sgm_opts mo;
        memset(&mo, 0, sizeof mo);
        mo.max = 2;
        for (uint32_t i = 0; i < base.n; i++) {
            lines_add(&all, base.v[i]);
            if (!strpbrk(base.v[i], ";&|()\n{}$`<>"))
                lines_add(&simple, base.v[i]);
            sgm_list vl = { 0 };
            if (sgm_variants(base.v[i], &mo, 1 + i, &vl) == 0)
                for (size_t k = 0; k < vl.n; k++)
                    lines_add(&all, vl.v[k].cmd);
            sgm_list_free(&vl);
        }
        combine(&simple, &all, 300);
        sgr_ctx *ctx = sgr_ctx_new(pol->t), *ctx2 = sgr_ctx_new(pol->t);
        stats st = { 0 };
        for (uint32_t i = 0; i < all.n && ctx && ctx2; i++)
            run_line(pol->t, ctx, ctx2, &vars, all.v[i], &st);
        printf("%s: %u lines (%u allowed in the case files and tests): %u run, %u argv compared, %u checked "
               "all-ran, %u stopped at run time; not run: %u refused by the executor, %u not allowed here\n",
               packs[p], all.n, base.n, st.ran, st.compared, st.all_ran_checked, st.failed_runs, st.refused,
               st.not_allowed);
        total.ran += st.ran;
        total.compared += st.compared;
        sgr_ctx_free(ctx);
        sgr_ctx_free(ctx2);
        for (uint32_t i = 0; i < all.n; i++)
            free(all.v[i]);
        for (uint32_t i = 0; i < base.n; i++)
            free(base.v[i]);
        for (uint32_t i = 0; i < simple.n; i++)
            free(simple.v[i]);
        free(all.v);
        free(base.v);
        free(simple.v);
        sg_policy_free(pol);
    }
    printf("total: %u lines run, %u argv compared\n", total.ran, total.compared);
    CHECK(total.ran >= 2000);
    CHECK(total.compared >= 2000);
    sgx_vars_free(&vars);
    nftw(scratch, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return sg_test_summary();
}
