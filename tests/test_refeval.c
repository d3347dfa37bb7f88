/* test_refeval.c - the differential oracle without a fuzzer: every shipped pack
 * (rules/NAME.rules) and every deployment pack (tests/packs/deploy/) decides
 * every inline test line, every case-file line (tests/packs/NAME.cases), every input
 * of tests/shparse/cases.txt and variations of each (wrappers, sh -c, pipes,
 * substitutions, cd, redirections) with the table evaluator and with the
 * reference evaluator (fuzz/refeval.c); any disagreement fails, printed with the
 * line and both answers.  Runs in tests/ (paths below are relative to it). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "slurp.h"
#include "lib/policy.h"
#include "fuzz/refeval.h"
#include "compiler/compile.h"
#include "runtime/table.h"
#include "common/alloc.h"

typedef struct pack {
    char name[256];
    uint8_t *bytes;
    sgr_table *t;
    sgr_ctx *ctx;
    sgr_ctx *ctx_late;                   /* merges its walks per segment (sgr_walk_max 0) */
    sgc_checked *k;
    sg_ref *ref;
} pack;

static pack packs[32];
static size_t npacks;
static char **lines;
static size_t nlines, caplines;
static long agree, disagree, inconclusive, skipped;

/* `use` from disk: std/NAME, std/lua/NAME, or a shipped pack by name. */
static char *srcs[64];
static size_t nsrcs;

static int lookup(void *ud, const char *name, const char **text, size_t *len)
{
    (void)ud;
    char path[512];
    if (strncmp(name, "std/lua/", 8) == 0)
        snprintf(path, sizeof path, "../stdlib/lua/%s.lua", name + 8);
    else if (strncmp(name, "std/", 4) == 0)
        snprintf(path, sizeof path, "../stdlib/%s.rules", name + 4);
    else
        snprintf(path, sizeof path, "../rules/%s.rules", name);
    if (nsrcs == 64)
        return 0;
    char *t = sg_slurp(path, len);
    if (!t)
        return 0;
    srcs[nsrcs++] = t;
    *text = t;
    return 1;
}

static void diag(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "%s\n", text);
}

static void add_line(const char *s, size_t n)
{
    if (nlines == caplines) {
        caplines = caplines ? caplines * 2 : 1024;
        lines = realloc(lines, sizeof *lines * caplines);
        if (!lines)
            abort();
    }
    char *c = malloc(n + 1);
    if (!c)
        abort();
    memcpy(c, s, n);
    c[n] = '\0';
    lines[nlines++] = c;
}

static void add_pack(const char *path)
{
    if (npacks == 32)
        return;
    pack *p = &packs[npacks];
    snprintf(p->name, sizeof p->name, "%s", path);
    sgc_options co;
    memset(&co, 0, sizeof co);
    co.embedded = lookup;
    co.diag = diag;
    sgc_input in = { path, NULL, 0 };
    size_t len = 0;
    int rc = sgc_compile_checked(&co, &in, 1, &p->bytes, &len, &p->k);
    CHECK(rc == 0);
    if (rc != 0)
        return;
    char err[300];
    CHECK(sgr_table_load(p->bytes, len, &p->t, err, sizeof err) == 0);
    p->ctx = sgr_ctx_new(p->t);
    size_t wm = sgr_walk_max;
    sgr_walk_max = 0;
    p->ctx_late = sgr_ctx_new(p->t);
    sgr_walk_max = wm;
    CHECK(p->ctx_late != NULL);
    rc = sg_ref_new(p->k, &p->ref, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s: reference: %s\n", path, err);
    CHECK(rc == 0 && p->ctx);
    if (rc || !p->ctx)
        return;
    CHECK(sgc_checked_nrules(p->k) == p->t->nrules);
    for (uint32_t r = 0; r < p->t->nrules && r < sgc_checked_nrules(p->k); r++) {
        sgc_checked_rule cr;
        sgc_checked_rule_at(p->k, r, &cr);
        CHECK_STR(cr.id, sgr_str(p->t, p->t->rules[r].id));
    }
    /* its inline tests are lines too */
    for (uint32_t i = 0; i < p->t->ntests; i++) {
        const char *cmd = sgr_str(p->t, p->t->tests[i].command);
        add_line(cmd, strlen(cmd));
    }
    npacks++;
}

static void add_packs_in(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".rules") == 0) {
            names[n] = malloc(strlen(dir) + l + 2);
            sprintf(names[n++], "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        add_pack(names[i]);
        free(names[i]);
    }
}

/* The line at *l, with the lines after it that start with "| " (or are "|")
 * joined on, each after a newline: the case and golden files' continuation
 * lines.  *l moves past them; malloc'd, *n its length. */
static char *joined_line(const char **l, size_t *n)
{
    const char *s = *l, *nl = strchr(s, '\n');
    size_t k = nl ? (size_t)(nl - s) : strlen(s), cap = k + 1, m = k;
    char *o = malloc(cap);
    if (!o)
        abort();
    memcpy(o, s, k);
    s += k + (nl ? 1 : 0);
    while (s[0] == '|' && (s[1] == ' ' || s[1] == '\n' || s[1] == '\0')) {
        nl = strchr(s, '\n');
        k = nl ? (size_t)(nl - s) : strlen(s);
        size_t add = k > 2 ? k - 2 : 0;
        o = realloc(o, cap += add + 1);
        if (!o)
            abort();
        o[m++] = '\n';
        memcpy(o + m, s + 2, add);
        m += add;
        s += k + (nl ? 1 : 0);
    }
    o[m] = '\0';
    *l = s;
    *n = m;
    return o;
}

/* "command ; decision [; rule]" per case (joined_line), split from the right on " ; " */
static void add_cases(const char *path)
{
    size_t len;
    char *t = sg_slurp(path, &len);
    CHECK(t != NULL);
    if (!t)
        return;
    for (const char *next = t; *next;) {
        size_t n;
        char *l = joined_line(&next, &n);
        if (n && l[0] != '#') {
            /* the last " ; " ends the command unless a rule follows the decision */
            size_t cut = n;
            for (int k = 0; k < 2; k++) {
                size_t j = cut;
                while (j >= 3 && memcmp(l + j - 3, " ; ", 3) != 0)
                    j--;
                if (j < 3)
                    break;
                cut = j - 3;
                const char *d = l + j;
                if (strncmp(d, "allow", 5) == 0 || strncmp(d, "ask", 3) == 0 || strncmp(d, "deny", 4) == 0)
                    break;
            }
            add_line(l, cut);
        }
        free(l);
    }
    free(t);
}

/* "> input" lines of the shell parser's golden file, with their "| " lines */
static void add_shparse(const char *path)
{
    size_t len;
    char *t = sg_slurp(path, &len);
    CHECK(t != NULL);
    if (!t)
        return;
    for (const char *next = t; *next;) {
        size_t n;
        char *l = joined_line(&next, &n);
        if (n >= 2 && l[0] == '>' && l[1] == ' ')
            add_line(l + 2, n - 2);
        free(l);
    }
    free(t);
}

static void show(const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++)
        fprintf(stderr, (unsigned char)s[k] >= 32 && (unsigned char)s[k] < 127 ? "%c" : "\\x%02x", (unsigned char)s[k]);
}

static void run_line(const char *s, size_t n)
{
    sgr_opts so = { SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
    for (size_t i = 0; i < npacks; i++) {
        if (sg_ref_uses_lua(packs[i].ref)) {
            skipped++;                       /* not compared: no need to run its hooks */
            continue;
        }
        const sgr_result *r = sgr_eval(packs[i].ctx, s, n, &so);
        /* the context that merges each walk when used decides the same, word for word */
        const sgr_result *r2 = sgr_eval(packs[i].ctx_late, s, n, &so);
        if (r2->decision != r->decision || r2->rule != r->rule || r2->seg != r->seg
            || strcmp(r2->message, r->message) != 0 || strcmp(r2->hint, r->hint) != 0) {
            if (disagree++ < 60) {
                fprintf(stderr, "WALKS DIFFER %s: \"", packs[i].name);
                show(s, n);
                fprintf(stderr, "\": %s %s / %s %s\n", sgr_rule_name(packs[i].t, r->rule), r->message,
                        sgr_rule_name(packs[i].t, r2->rule), r2->message);
            }
        }
        char why[600];
        int rc = sg_ref_check(packs[i].ref, packs[i].t, r, SG_TEST_CWD, SG_TEST_HOME, why, sizeof why);
        if (rc == SG_REF_AGREE)
            agree++;
        else if (rc == SG_REF_INCONCLUSIVE)
            inconclusive++;
        else if (rc == SG_REF_SKIPPED)
            skipped++;
        else {
            if (disagree++ < 60) {
                fprintf(stderr, "DISAGREE %s: \"", packs[i].name);
                show(s, n);
                fprintf(stderr, "\": %s\n", rc == SG_REF_OOM ? "reference out of memory" : why);
            }
        }
    }
}

/* s with every ' written '\'' (for sh -c '...') */
static size_t squote(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    for (; *s && o + 5 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = *s;
        }
    }
    out[o] = '\0';
    return o;
}

static void variations(const char *s)
{
    static const char *const fmt[] = {
        "sudo %s", "env A=1 %s", "timeout 5 %s", "%s | sh", "cat x | %s", "echo $(%s)",
        "cd /tmp; %s", "cd sub && %s", "cd ..; %s", "%s > out.txt", "%s 2>&1 >/dev/null",
        "X=/etc/passwd %s", "(%s)", "{ %s; }", "%s &", "! %s", "nice -n 5 %s", "xargs %s",
        "find . -exec %s {} ;", "watch %s", "%s <(curl x)", "diff <(%s) y",
    };
    char buf[9000];
    size_t n = strlen(s);
    if (n > 4000)
        return;
    for (size_t f = 0; f < sizeof fmt / sizeof *fmt; f++) {
        int l = snprintf(buf, sizeof buf, fmt[f], s);
        if (l > 0 && (size_t)l < sizeof buf)
            run_line(buf, (size_t)l);
    }
    char q[8200];
    squote(s, q, sizeof q);
    int l = snprintf(buf, sizeof buf, "sh -c '%s'", q);
    if (l > 0 && (size_t)l < sizeof buf)
        run_line(buf, (size_t)l);
    l = snprintf(buf, sizeof buf, "bash -c 'cd /; %s'", q);
    if (l > 0 && (size_t)l < sizeof buf)
        run_line(buf, (size_t)l);
}

int main(void)
{
    add_packs_in("../rules");
    add_packs_in("packs/deploy");
    add_pack("packs/hooks.rules");           /* lua: must be reported as skipped */
    add_cases("packs/default.cases");
    add_cases("packs/gaia.cases");
    add_cases("packs/ironclaw.cases");
    add_cases("packs/readonly.cases");
    add_shparse("shparse/cases.txt");
    CHECK(npacks >= 8);
    CHECK(nlines > 1000);
    for (size_t i = 0; i < nlines; i++) {
        run_line(lines[i], strlen(lines[i]));
        variations(lines[i]);
    }
    /* hand-made edges: empty and blank lines, comments, parse errors, NUL bytes */
    static const char *const edges[] = { "", " ", "# c", "'", "a\"", "ls; ;", "A=1", "> f", "A=1 >f", "cd",
                                         "cd ~; cat .ssh/id_rsa", "cat ~root/x", "ls ~+", "echo >&f", "cat <&3" };
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++)
        run_line(edges[i], strlen(edges[i]));
    run_line("ls\0-la", 6);
    printf("oracle: %zu packs, %zu base lines: %ld agree, %ld disagree, %ld inconclusive, %ld skipped (lua)\n",
           npacks, nlines, agree, disagree, inconclusive, skipped);
    CHECK(disagree == 0);
    CHECK(skipped > 0);
    CHECK(agree > 100000);
    for (size_t i = 0; i < npacks; i++) {
        sg_ref_free(packs[i].ref);
        sgr_ctx_free(packs[i].ctx);
        sgr_ctx_free(packs[i].ctx_late);
        sgr_table_free(packs[i].t);
        sgc_checked_free(packs[i].k);
        sg_free(packs[i].bytes);
    }
    for (size_t i = 0; i < nlines; i++)
        free(lines[i]);
    free(lines);
    for (size_t i = 0; i < nsrcs; i++)
        free(srcs[i]);
    return sg_test_summary();
}
