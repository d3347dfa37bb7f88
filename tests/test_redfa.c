/* test_redfa.c - compiler/redfa.c builds the DFAs runtime/dfa.h runs: every
 * construct, the lowest-id rule, canonical bytes, syntax errors with offsets
 * (golden file redfa/errors.txt), limits, allocation failure, speed, and a
 * randomized cross-check against independent reference matchers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1       /* strcasestr, FNM_CASEFOLD (CMake defines it too) */
#endif
#include "check.h"
#include "common/alloc.h"
#include "compiler/redfa.h"
#include "runtime/dfa.h"
#include "runtime/pathgroup.h"
#include "runtime/pathpat.h"
#include "common/arena.h"
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* The runtime's view of a compiled DFA, as the loader builds it; free the
 * returned loops[] after use. */
static uint8_t *runtime_dfa(const sgc_dfa *d, sgr_dfa *r)
{
    uint8_t *loops = malloc(d->nstates);
    if (!loops)
        abort();
    for (uint32_t st = 0; st < d->nstates; st++)
        loops[st] = sgr_dfa_state_loops(d->trans + (size_t)st * d->nclasses, d->nclasses, st);
    sgr_dfa_init(r, d->nstates, d->nclasses, d->classmap, d->trans, d->accept, loops);
    return loops;
}

/* Run d over s[0..n) with the runtime's matcher. */
static int32_t run_n(const sgc_dfa *d, const char *s, size_t n)
{
    sgr_dfa r;
    uint8_t *loops = runtime_dfa(d, &r);
    int32_t m = sgr_dfa_match(&r, s, n);
    free(loops);
    return m;
}

static int32_t run(const sgc_dfa *d, const char *s) { return run_n(d, s, strlen(s)); }

/* The runtime's `path inside` matcher on s, in one run and resumed at the k-th
 * byte (both must agree): *split gets the resumed answer. */
static int run_dirs(const sgc_dfa *d, const char *s, size_t n, size_t k, int *split)
{
    sgr_dfa r;
    uint8_t *loops = runtime_dfa(d, &r);
    int whole = sgr_dfa_match_dirs(&r, s, n);
    const uint8_t *p = (const uint8_t *)s;
    uint32_t st = 1;
    *split = sgr_dfa_dirs_from(&r, &st, p, p, p + k) || sgr_dfa_dirs_from(&r, &st, p, p + k, p + n)
             || r.accept[st] >= 0;
    free(loops);
    return whole;
}

static sgc_pattern pat(sgc_pat_kind k, const char *text, int icase, int32_t id)
{
    sgc_pattern p = {k, text, strlen(text), icase, id};
    return p;
}

/* The table is well formed: dead state 0, start 1, targets in range. */
static int well_formed(const sgc_dfa *d)
{
    if (d->nstates < 2 || d->nclasses < 1 || d->nclasses > 256)
        return 0;
    for (int b = 0; b < 256; b++)
        if (d->classmap[b] >= d->nclasses)
            return 0;
    for (uint32_t c = 0; c < d->nclasses; c++)
        if (d->trans[c] != 0)
            return 0;
    if (d->accept[0] != -1)
        return 0;
    for (size_t i = 0; i < (size_t)d->nstates * d->nclasses; i++)
        if (d->trans[i] >= d->nstates)
            return 0;
    return 1;
}

/* The table is the canonical minimal DFA redfa.h promises: classes numbered by
 * lowest byte and pairwise distinct, states numbered in BFS order from 1 over
 * classes in order, and no two states equivalent (naive Moore refinement; small
 * tables only). */
static int canonical(const sgc_dfa *d)
{
    uint32_t n = d->nstates, k = d->nclasses, next = 0;
    if (n > 3000)
        return 1;
    for (int b = 0; b < 256; b++) {
        if (d->classmap[b] > next)
            return 0;
        if (d->classmap[b] == next)
            next++;
    }
    if (next != k)
        return 0;
    if (n == 2 && d->accept[1] == -1 && k == 1 && d->trans[1] == 0)
        return 1;                                     /* the empty language */
    for (uint32_t c = 0; c < k; c++)
        for (uint32_t c2 = 0; c2 < c; c2++) {
            uint32_t s = 0;
            while (s < n && d->trans[s * k + c] == d->trans[s * k + c2])
                s++;
            if (s == n)
                return 0;
        }
    uint32_t *q = calloc(n, sizeof *q), *cls = calloc(n, sizeof *cls),
             *ncls = calloc(n, sizeof *ncls);
    uint8_t *seen = calloc(n, 1);
    int ok = 1;
    uint32_t qn = 0, id = 2;
    seen[0] = seen[1] = 1;
    q[qn++] = 1;
    for (uint32_t i = 0; i < qn && ok; i++)
        for (uint32_t c = 0; c < k; c++) {
            uint32_t t = d->trans[q[i] * k + c];
            if (!seen[t]) {
                ok &= t == id++;
                seen[t] = 1;
                q[qn++] = t;
            }
        }
    /* Moore: start from accept values, refine until stable; all must end apart */
    uint32_t nc = 0, prev = 0;
    for (uint32_t s = 0; s < n; s++)
        cls[s] = (uint32_t)(d->accept[s] + 1);
    while (ok) {
        nc = 0;
        for (uint32_t s = 0; s < n; s++) {
            uint32_t t = 0;
            for (; t < s; t++) {
                uint32_t c = 0;
                if (cls[t] != cls[s])
                    continue;
                while (c < k && cls[d->trans[t * k + c]] == cls[d->trans[s * k + c]])
                    c++;
                if (c == k)
                    break;
            }
            ncls[s] = t < s ? ncls[t] : nc++;
        }
        memcpy(cls, ncls, n * sizeof *cls);
        if (nc == prev)
            break;
        prev = nc;
    }
    ok &= nc == n;
    free(q);
    free(cls);
    free(ncls);
    free(seen);
    return ok;
}

static int same_dfa(const sgc_dfa *a, const sgc_dfa *b)
{
    return a->nstates == b->nstates && a->nclasses == b->nclasses
           && memcmp(a->classmap, b->classmap, 256) == 0
           && memcmp(a->trans, b->trans, (size_t)a->nstates * a->nclasses * 4) == 0
           && memcmp(a->accept, b->accept, (size_t)a->nstates * 4) == 0;
}

/* ---- each construct ------------------------------------------------------------- */

static const struct tcase {
    char kind;          /* E exact, S substring, G glob, R regex */
    int icase;
    const char *pat, *in;
    int want;
} cases[] = {
    {'E', 0, "ls", "ls", 1}, {'E', 0, "ls", "lsx", 0}, {'E', 0, "ls", "l", 0},
    {'E', 0, "", "", 1}, {'E', 0, "", "a", 0}, {'E', 1, "LS", "ls", 1},
    {'E', 0, "LS", "ls", 0}, {'E', 1, "a-1", "A-1", 1},
    {'S', 0, "pem", "key.pem.bak", 1}, {'S', 0, "pem", "pe", 0}, {'S', 0, "", "", 1},
    {'S', 0, "", "xyz", 1}, {'S', 1, "Upload", "--UPLOAD-pack", 1},
    {'S', 0, "abab", "abaabab", 1}, {'S', 0, "abab", "abaaba", 0},
    {'G', 0, "*.pem", "key.pem", 1}, {'G', 0, "*.pem", "dir/key.pem", 1},
    {'G', 0, "*.pem", "key.pem.bak", 0}, {'G', 0, "*.pem", ".pem", 1},
    {'G', 0, "a?c", "abc", 1}, {'G', 0, "a?c", "ac", 0}, {'G', 0, "a?c", "a/c", 1},
    {'G', 0, "[abc]x", "bx", 1}, {'G', 0, "[abc]x", "dx", 0},
    {'G', 0, "[a-c]", "b", 1}, {'G', 0, "[a-c]", "d", 0},
    {'G', 0, "[!a-c]", "d", 1}, {'G', 0, "[!a-c]", "a", 0}, {'G', 0, "[^a-c]", "a", 0},
    {'G', 0, "[]]", "]", 1}, {'G', 0, "[]a]", "a", 1}, {'G', 0, "[!]]", "]", 0},
    {'G', 0, "\\*", "*", 1}, {'G', 0, "\\*", "a", 0}, {'G', 0, "[\\]]", "]", 1},
    {'G', 0, "*", "", 1}, {'G', 0, "*", "any/thing", 1}, {'G', 0, "**", "x", 1},
    {'G', 0, "/etc/*", "/etc/passwd", 1}, {'G', 0, "/etc/*", "/etc", 0},
    {'G', 1, "*.PEM", "a.pem", 1}, {'G', 0, "[[:digit:]]*", "7up", 1},
    {'G', 0, "[[:digit:]]*", "up", 0}, {'G', 0, "a*b*c", "aXbYc", 1},
    {'G', 0, "a*b*c", "acb", 0},
    {'R', 0, "abc", "xxabcxx", 1}, {'R', 0, "abc", "ab", 0}, {'R', 0, "^abc", "abcx", 1},
    {'R', 0, "^abc", "xabc", 0}, {'R', 0, "abc$", "xabc", 1}, {'R', 0, "abc$", "abcx", 0},
    {'R', 0, "^abc$", "abc", 1}, {'R', 0, "^abc$", "abcabc", 0},
    {'R', 1, "^-{1,2}upload-pack", "--UPLOAD-pack=x", 1},
    {'R', 0, "^-{1,2}upload-pack", "---upload-pack", 0},
    {'R', 0, "^-{1,2}upload-pack", "-upload-pack", 1},
    {'R', 0, "a.c", "a\nc", 1}, {'R', 0, "a.c", "ac", 0},
    {'R', 0, "[a-c]+$", "xxcab", 1}, {'R', 0, "^[^a-c]+$", "xyz", 1},
    {'R', 0, "^[^a-c]+$", "xaz", 0}, {'R', 0, "[]a]", "]", 1}, {'R', 0, "[^]a]", "a", 0},
    {'R', 0, "^[a-]$", "-", 1}, {'R', 0, "^[-a]$", "-", 1}, {'R', 0, "^[\\]]$", "]", 1},
    {'R', 0, "^[[:alpha:]]+$", "abcXYZ", 1}, {'R', 0, "^[[:alpha:]]+$", "ab1", 0},
    {'R', 0, "^[[:digit:]]$", "5", 1}, {'R', 0, "^[[:space:]]$", "\t", 1},
    {'R', 0, "^[[:alnum:]]+$", "a1B", 1}, {'R', 0, "^[[:upper:]]$", "a", 0},
    {'R', 1, "^[[:upper:]]$", "a", 1}, {'R', 0, "^[[:lower:]]$", "a", 1},
    {'R', 0, "^[[:punct:]]+$", "!-/", 1}, {'R', 0, "^[[:punct:]]$", "a", 0},
    {'R', 0, "^[[:xdigit:]]+$", "09afAF", 1}, {'R', 0, "^[[:xdigit:]]$", "g", 0},
    {'R', 0, "^[^[:digit:]x]$", "x", 0}, {'R', 0, "^[^[:digit:]x]$", "y", 1},
    {'R', 0, "^\\d+$", "123", 1}, {'R', 0, "^\\d+$", "12a", 0}, {'R', 0, "^\\D$", "a", 1},
    {'R', 0, "^\\D$", "1", 0}, {'R', 0, "^\\w+$", "a_Z9", 1}, {'R', 0, "^\\w$", "-", 0},
    {'R', 0, "^\\W$", "-", 1}, {'R', 0, "^\\s$", " ", 1}, {'R', 0, "^\\s$", "\n", 1},
    {'R', 0, "^\\S$", " ", 0}, {'R', 0, "^\\.$", ".", 1}, {'R', 0, "^\\.$", "a", 0},
    {'R', 0, "^\\\\$", "\\", 1}, {'R', 0, "^\\/$", "/", 1}, {'R', 0, "^\\t$", "\t", 1},
    {'R', 0, "^\\n$", "\n", 1}, {'R', 0, "^\\r$", "\r", 1}, {'R', 0, "^\\x41$", "A", 1},
    {'R', 0, "^\\x7e$", "~", 1}, {'R', 0, "\\$", "a$b", 1}, {'R', 0, "\\^", "a^b", 1},
    {'R', 0, "^[\\d_]+$", "1_2", 1}, {'R', 0, "^[\\x00-\\x1f]$", "\x1b", 1},
    {'R', 0, "\\(\\)\\[\\]\\{\\}\\*\\+\\?\\|", "()[]{}*+?|", 1},
    {'R', 0, "^(ab)+$", "ababab", 1}, {'R', 0, "^(ab)+$", "aba", 0},
    {'R', 0, "^(?:ab|cd)*$", "abcdab", 1}, {'R', 0, "^(?:ab|cd)*$", "abc", 0},
    {'R', 0, "^(a|b|)$", "", 1}, {'R', 0, "^a|b$", "axx", 1}, {'R', 0, "^a|b$", "xxb", 1},
    {'R', 0, "^a|b$", "xbx", 0}, {'R', 0, "^(a|b)$", "ab", 0},
    {'R', 0, "^a?$", "", 1}, {'R', 0, "^a?$", "aa", 0}, {'R', 0, "^a*$", "aaaa", 1},
    {'R', 0, "^a+$", "", 0}, {'R', 0, "^a{3}$", "aaa", 1}, {'R', 0, "^a{3}$", "aa", 0},
    {'R', 0, "^a{2,}$", "aaaaa", 1}, {'R', 0, "^a{2,}$", "a", 0},
    {'R', 0, "^a{1,2}$", "aaa", 0}, {'R', 0, "^a{0,2}$", "", 1}, {'R', 0, "^a{0}$", "", 1},
    {'R', 0, "^a{0}$", "a", 0}, {'R', 0, "^(a{2}){3}$", "aaaaaa", 1},
    {'R', 0, "^a{2}{3}$", "aaaaa", 0}, {'R', 0, "^a**$", "aa", 1},
    {'R', 0, "^a}$", "a}", 1}, {'R', 0, "^(a*)*b$", "aaab", 1},
    {'R', 0, "", "anything", 1}, {'R', 0, "^$", "", 1}, {'R', 0, "^$", "x", 0},
    {'R', 0, "()", "x", 1}, {'R', 0, "a|", "zzz", 1},
    {'R', 1, "^[a-c]+$", "AbC", 1}, {'R', 1, "^[^a]$", "A", 0}, {'R', 1, "x", "X", 1},
    {'R', 0, "^.*\\.pem$", "a.pem", 1}, {'R', 0, "^.*$", "", 1},
    {'R', 0, "^[\\x80-\\xff]$", "\xe9", 1}, {'R', 0, "^\xe9$", "\xe9", 1},
};

static void test_cases(void)
{
    static const sgc_pat_kind kinds[128] = {['E'] = SGC_PAT_EXACT,
        ['S'] = SGC_PAT_SUBSTRING, ['G'] = SGC_PAT_GLOB, ['R'] = SGC_PAT_REGEX};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct tcase *t = &cases[i];
        sgc_pattern p = pat(kinds[(int)t->kind], t->pat, t->icase, 7);
        sgc_dfa d;
        sgc_dfa_error err;
        int rc = sgc_dfa_build(&p, 1, 0, &d, &err);
        int got = rc == 0 ? run(&d, t->in) == 7 : -1;
        if (got != t->want) {
            fprintf(stderr, "case %zu: %c%s /%s/ on \"%s\": got %d want %d (%s)\n", i,
                    t->kind, t->icase ? "i" : "", t->pat, t->in, got, t->want,
                    rc ? err.msg : "");
        }
        CHECK(got == t->want);
        CHECK(rc != 0 || (well_formed(&d) && canonical(&d)));
        sgc_dfa_free(&d);
    }
    /* NUL is an ordinary byte */
    sgc_pattern p = {SGC_PAT_REGEX, "^a\\x00b$", 8, 0, 1};
    sgc_dfa d;
    CHECK(sgc_dfa_build(&p, 1, 0, &d, NULL) == 0);
    CHECK(run_n(&d, "a\0b", 3) == 1);
    CHECK(run_n(&d, "a\0c", 3) == -1);
    sgc_dfa_free(&d);
    sgc_pattern q = {SGC_PAT_EXACT, "x\0y", 3, 0, 1};
    CHECK(sgc_dfa_build(&q, 1, 0, &d, NULL) == 0);
    CHECK(run_n(&d, "x\0y", 3) == 1);
    CHECK(run_n(&d, "x", 1) == -1);
    sgc_dfa_free(&d);
}

/* ---- unions and the lowest id ---------------------------------------------------- */

static void test_union(void)
{
    sgc_pattern ps[] = {
        pat(SGC_PAT_SUBSTRING, "rm", 0, 30),
        pat(SGC_PAT_EXACT, "rm -rf /", 0, 10),
        pat(SGC_PAT_GLOB, "rm *", 0, 20),
        pat(SGC_PAT_REGEX, "^sudo", 0, 5),
        pat(SGC_PAT_REGEX, "x$", 0, 40),
    };
    sgc_dfa d;
    sgc_dfa_error err;
    CHECK(sgc_dfa_build(ps, 5, 0, &d, &err) == 0);
    CHECK(well_formed(&d));
    CHECK(run(&d, "rm -rf /") == 10);
    CHECK(run(&d, "rm -rf /x") == 20);
    CHECK(run(&d, "farm") == 30);
    CHECK(run(&d, "sudo rm") == 5);
    CHECK(run(&d, "box") == 40);
    CHECK(run(&d, "ls") == -1);
    CHECK(run(&d, "") == -1);
    sgc_dfa_free(&d);
    /* the empty list matches nothing */
    CHECK(sgc_dfa_build(ps, 0, 0, &d, &err) == 0);
    CHECK(d.nstates == 2 && well_formed(&d) && run(&d, "") == -1);
    sgc_dfa_free(&d);
    /* a negative id is refused */
    sgc_pattern bad = pat(SGC_PAT_EXACT, "x", 0, -3);
    CHECK(sgc_dfa_build(&bad, 1, 0, &d, &err) == -1);
    CHECK(d.trans == NULL && d.accept == NULL);
}

/* ---- canonical bytes ------------------------------------------------------------- */

/* Build the one-pattern DFAs for kinds/texts a and b and say whether they are
 * byte-identical. */
static int same_tables(sgc_pat_kind ka, const char *a, sgc_pat_kind kb, const char *b)
{
    sgc_pattern pa = pat(ka, a, 0, 3), pb = pat(kb, b, 0, 3);
    sgc_dfa da, db;
    if (sgc_dfa_build(&pa, 1, 0, &da, NULL) || sgc_dfa_build(&pb, 1, 0, &db, NULL))
        return -1;
    int r = same_dfa(&da, &db);
    sgc_dfa_free(&da);
    sgc_dfa_free(&db);
    return r;
}

static void test_canonical(void)
{
    const sgc_pat_kind R = SGC_PAT_REGEX, G = SGC_PAT_GLOB, S = SGC_PAT_SUBSTRING,
                       E = SGC_PAT_EXACT;
    CHECK(same_tables(R, "a|a", R, "a") == 1);
    CHECK(same_tables(R, "[ab]", R, "a|b") == 1);
    CHECK(same_tables(R, "^(a|b)*$", R, "^[ab]*$") == 1);
    CHECK(same_tables(R, "^(a*)*$", R, "^a*$") == 1);
    CHECK(same_tables(R, "^a{2,3}$", R, "^aaa?$") == 1);
    CHECK(same_tables(G, "*.pem", R, "\\.pem$") == 1);
    CHECK(same_tables(G, "*.pem", R, "^.*\\.pem$") == 1);
    CHECK(same_tables(S, "abc", R, "abc") == 1);
    CHECK(same_tables(E, "abc", R, "^abc$") == 1);
    CHECK(same_tables(E, "abc", G, "abc") == 1);
    CHECK(same_tables(R, "ab", R, "a") == 0);
    /* building twice gives the same bytes; list order does not matter for equal ids */
    sgc_pattern l1[] = {pat(SGC_PAT_EXACT, "x", 0, 1), pat(SGC_PAT_REGEX, "y+z", 0, 1),
                        pat(SGC_PAT_GLOB, "*w", 0, 2)};
    sgc_pattern l2[] = {l1[2], l1[1], l1[0]};
    sgc_dfa a, b, c;
    CHECK(sgc_dfa_build(l1, 3, 0, &a, NULL) == 0);
    CHECK(sgc_dfa_build(l1, 3, 0, &b, NULL) == 0);
    CHECK(sgc_dfa_build(l2, 3, 0, &c, NULL) == 0);
    CHECK(same_dfa(&a, &b));
    CHECK(same_dfa(&a, &c));
    sgc_dfa_free(&a);
    sgc_dfa_free(&b);
    sgc_dfa_free(&c);
    /* the checker itself refuses a table with two equivalent states */
    uint32_t ft[3] = {0, 2, 2};
    int32_t fa[3] = {-1, 5, 5};
    sgc_dfa fake = {3, 1, {0}, ft, fa};
    CHECK(!canonical(&fake));
    /* minimal: the tail of /(a|b)*a(a|b){3}/ needs exactly 2^4 live states + dead */
    sgc_pattern m = pat(SGC_PAT_REGEX, "^(a|b)*a(a|b){3}$", 0, 0);
    CHECK(sgc_dfa_build(&m, 1, 0, &a, NULL) == 0);
    CHECK(a.nstates == 17);
    CHECK(a.nclasses == 3);          /* a, b, everything else */
    sgc_dfa_free(&a);
}

/* ---- errors ---------------------------------------------------------------------- */

/* redfa/errors.txt: "regex<TAB>offset<TAB>message" per line, '#' comments. */
static void test_syntax_errors(void)
{
    FILE *f = fopen("redfa/errors.txt", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        CHECK(t1 && t2);
        if (!t1 || !t2)
            continue;
        *t1 = *t2 = '\0';
        size_t want_off = strtoul(t1 + 1, NULL, 10);
        sgc_dfa_error err;
        int rc = sgc_regex_check(line, strlen(line), &err);
        if (rc != -1 || err.offset != want_off || strcmp(err.msg, t2 + 1) != 0)
            fprintf(stderr, "errors.txt: /%s/: rc %d offset %zu \"%s\"\n", line, rc,
                    err.offset, rc ? err.msg : "");
        CHECK(rc == -1);
        CHECK(err.offset == want_off);
        CHECK_STR(err.msg, t2 + 1);
        /* the same error, naming the pattern, from a build */
        sgc_pattern p = pat(SGC_PAT_REGEX, line, 0, 42);
        sgc_dfa d;
        sgc_dfa_error e2;
        CHECK(sgc_dfa_build(&p, 1, 0, &d, &e2) == -1);
        CHECK(e2.pattern_id == 42 && e2.offset == want_off);
        CHECK_STR(e2.msg, t2 + 1);
        n++;
    }
    fclose(f);
    CHECK(n >= 20);
    /* valid regexes pass the check */
    const char *ok[] = {"", "a|", "^a|b$", "(?:a)", "a{2}{3}", "[]]", "\\{", "a}", "[[:alpha:]_-]"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        CHECK(sgc_regex_check(ok[i], strlen(ok[i]), NULL) == 0);
    /* glob syntax errors surface from the build */
    sgc_pattern g = pat(SGC_PAT_GLOB, "ab[cd", 0, 9);
    sgc_dfa d;
    sgc_dfa_error err;
    CHECK(sgc_dfa_build(&g, 1, 0, &d, &err) == -1);
    CHECK(err.pattern_id == 9 && err.offset == 2);
    CHECK_STR(err.msg, "unterminated '[' (write \\[ for a literal bracket)");
    g = pat(SGC_PAT_GLOB, "ab\\", 0, 9);
    CHECK(sgc_dfa_build(&g, 1, 0, &d, &err) == -1);
    CHECK(err.offset == 2);
    CHECK_STR(err.msg, "trailing backslash");
}

static void test_limits(void)
{
    sgc_dfa d;
    sgc_dfa_error err;
    /* a pattern whose DFA is exponential: it must remember the last 13 bytes */
    sgc_pattern big = pat(SGC_PAT_REGEX, "(a|b)*a(a|b){12}$", 0, 3);
    CHECK(sgc_dfa_build(&big, 1, 4096, &d, &err) == -1);
    CHECK_STR(err.msg, "pattern needs more than 4096 automaton states; simplify it");
    CHECK(err.pattern_id == 3);
    CHECK(d.trans == NULL);
    /* in a list, the culprit is named */
    sgc_pattern list[] = {pat(SGC_PAT_EXACT, "x", 0, 1), pat(SGC_PAT_REGEX, "cd", 0, 2), big};
    CHECK(sgc_dfa_build(list, 3, 4096, &d, &err) == -1);
    CHECK(err.pattern_id == 3);
    CHECK_STR(err.msg, "pattern needs more than 4096 automaton states; simplify it");
    /* fine with room to spare */
    CHECK(sgc_dfa_build(&big, 1, 20000, &d, &err) == 0);
    CHECK(d.nstates == 8192 + 1);
    CHECK(run(&d, "xxabbbbbbbbbbbb") == 3 && run(&d, "abbbbbbbbbbbbb") == -1);
    sgc_dfa_free(&d);
    /* two patterns fine alone but too big together: the first non-literal is named */
    sgc_pattern two[] = {pat(SGC_PAT_EXACT, "q", 0, 1),
                         pat(SGC_PAT_REGEX, "a[ab]{5}$", 0, 2),
                         pat(SGC_PAT_REGEX, "b[ab]{5}$", 0, 3)};
    CHECK(sgc_dfa_build(two + 1, 1, 100, &d, &err) == 0);
    sgc_dfa_free(&d);
    CHECK(sgc_dfa_build(two + 2, 1, 100, &d, &err) == 0);
    sgc_dfa_free(&d);
    CHECK(sgc_dfa_build(two, 3, 100, &d, &err) == -1);
    CHECK(err.pattern_id == 2);
    CHECK(strstr(err.msg, "together need more than 100 automaton states") != NULL);
    /* repetitions multiply: refused by counting NFA states, quickly */
    clock_t t0 = clock();
    const char *huge[] = {"((a{255}){255}){255}", "a{255}{255}{255}", "([a-z]{200}){200}{200}"};
    for (int i = 0; i < 3; i++) {
        sgc_pattern h = pat(SGC_PAT_REGEX, huge[i], 0, 6);
        CHECK(sgc_dfa_build(&h, 1, 1u << 20, &d, &err) == -1);
        CHECK(err.pattern_id == 6);
        CHECK(strstr(err.msg, "more than 100000 NFA states") != NULL);
        CHECK(sgc_pattern_is_empty(&h, 0, &err) == -1);
    }
    CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    sgc_pattern h2 = pat(SGC_PAT_REGEX, "a{255}{255}", 0, 6);   /* 65025 NFA states */
    CHECK(sgc_dfa_build(&h2, 1, 0, &d, &err) == -1);
    CHECK_STR(err.msg, "pattern needs more than 4096 automaton states; simplify it");
    /* nesting: 200 groups are fine, 201 are refused at the 201st '(' */
    static char deep[1024];
    for (int depth = 200; depth <= 201; depth++) {
        memset(deep, '(', (size_t)depth);
        deep[depth] = 'a';
        memset(deep + depth + 1, ')', (size_t)depth);
        deep[2 * depth + 1] = '\0';
        int rc = sgc_regex_check(deep, strlen(deep), &err);
        CHECK(rc == (depth == 200 ? 0 : -1));
        if (rc)
            CHECK(err.offset == 200);
    }
    /* a long literal regex is a loop, not a recursion (anchored: unanchored, a
     * self-overlapping run like x{60000} costs quadratic time in the subset
     * construction, see redfa.h) */
    static char lit[60003];
    memset(lit, 'x', 60002);
    lit[0] = '^';
    lit[60001] = '$';
    sgc_pattern lp = pat(SGC_PAT_REGEX, lit, 0, 1);
    t0 = clock();
    CHECK(sgc_dfa_build(&lp, 1, 70000, &d, &err) == 0);
    CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
    CHECK(d.nstates == 60002 && run_n(&d, lit + 1, 60000) == 1 && run(&d, lit + 2) == -1);
    sgc_dfa_free(&d);
    /* repetition counts */
    CHECK(sgc_regex_check("a{256}", 6, &err) == -1);
    CHECK_STR(err.msg, "repetition count 256 is above the limit of 255");
    CHECK(err.offset == 2);
    CHECK(sgc_regex_check("a{1,999999999999}", 17, &err) == -1);
    CHECK(sgc_regex_check("a{255}", 6, &err) == 0);
}

static void test_empty(void)
{
    struct { sgc_pat_kind k; const char *p; int want; } t[] = {
        {SGC_PAT_REGEX, "[^\\x00-\\xff]", 1}, {SGC_PAT_REGEX, "a[^\\x00-\\xff]", 1},
        {SGC_PAT_REGEX, "^a[^\\x00-\\xff]*$", 0}, {SGC_PAT_REGEX, "a|[^\\x00-\\xff]", 0},
        {SGC_PAT_REGEX, "([^\\x00-\\xff]b)+", 1}, {SGC_PAT_REGEX, "a{0}", 0},
        {SGC_PAT_REGEX, "[^\\d\\D]", 1}, {SGC_PAT_GLOB, "x[!\\x]", 0},
        {SGC_PAT_EXACT, "", 0}, {SGC_PAT_SUBSTRING, "abc", 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        sgc_pattern p = pat(t[i].k, t[i].p, 0, 0);
        int got = sgc_pattern_is_empty(&p, 0, NULL);
        if (got != t[i].want)
            fprintf(stderr, "is_empty /%s/: got %d\n", t[i].p, got);
        CHECK(got == t[i].want);
        /* and the DFA agrees: only the dead state and a dead start */
        sgc_dfa d;
        CHECK(sgc_dfa_build(&p, 1, 0, &d, NULL) == 0);
        int accepting = 0;
        for (uint32_t s = 0; s < d.nstates; s++)
            accepting |= d.accept[s] >= 0;
        CHECK(accepting == !t[i].want);
        sgc_dfa_free(&d);
    }
    sgc_pattern bad = pat(SGC_PAT_REGEX, "a(", 0, 0);
    sgc_dfa_error err;
    CHECK(sgc_pattern_is_empty(&bad, 0, &err) == -1);
    CHECK_STR(err.msg, "unclosed '('");
}

/* ---- allocation failure ---------------------------------------------------------- */

static void test_alloc_failures(void)
{
    sgc_pattern ps[] = {
        pat(SGC_PAT_SUBSTRING, "curl", 1, 4), pat(SGC_PAT_EXACT, "rm", 0, 2),
        pat(SGC_PAT_GLOB, "*.p[e]m", 0, 3), pat(SGC_PAT_REGEX, "^-{1,2}up(load)?-pa.k$", 1, 1),
        pat(SGC_PAT_REGEX, "[[:digit:]]+x|y{2,4}", 0, 5), pat(SGC_PAT_SUBSTRING, "wget", 0, 4),
    };
    sgc_dfa ref, d;
    sgc_dfa_error err;
    CHECK(sgc_dfa_build(ps, 6, 0, &ref, &err) == 0);
    long n, fails = 0;
    for (n = 1; n < 100000; n++) {
        sg_alloc_fail_after(n);
        int rc = sgc_dfa_build(ps, 6, 0, &d, &err);
        sg_alloc_fail_after(0);
        if (rc == 0) {
            CHECK(same_dfa(&ref, &d));
            sgc_dfa_free(&d);
            break;
        }
        fails++;
        if (strcmp(err.msg, "out of memory") != 0)
            fprintf(stderr, "alloc sweep %ld: %s\n", n, err.msg);
        CHECK_STR(err.msg, "out of memory");
        CHECK(d.trans == NULL && d.accept == NULL);
    }
    CHECK(fails > 20);
    sgc_dfa_free(&ref);
    /* the state-limit diagnosis path, the emptiness check, the syntax check */
    sgc_pattern lim[] = {pat(SGC_PAT_REGEX, "cd", 0, 1), pat(SGC_PAT_REGEX, "(a|b)*a(a|b){5}$", 0, 2)};
    for (n = 1; n < 100000; n++) {
        sg_alloc_fail_after(n);
        int rc = sgc_dfa_build(lim, 2, 50, &d, &err);
        sg_alloc_fail_after(0);
        CHECK(rc == -1);
        if (rc == 0)
            sgc_dfa_free(&d);
        if (strcmp(err.msg, "out of memory") != 0) {
            CHECK(err.pattern_id == 2);
            CHECK(strstr(err.msg, "pattern needs more than 50") != NULL);
            break;
        }
    }
    for (n = 1; n < 100000; n++) {
        sg_alloc_fail_after(n);
        int rc = sgc_pattern_is_empty(&ps[3], 0, &err);
        sg_alloc_fail_after(0);
        if (rc != -1) {
            CHECK(rc == 0);
            break;
        }
        CHECK_STR(err.msg, "out of memory");
    }
    for (n = 1; n < 100000; n++) {
        sg_alloc_fail_after(n);
        int rc = sgc_regex_check(ps[3].text, ps[3].len, &err);
        sg_alloc_fail_after(0);
        if (rc == 0)
            break;
        CHECK_STR(err.msg, "out of memory");
    }
}

/* ---- speed ------------------------------------------------------------------------ */

static uint64_t rng = 0x2545f4914f6cdd1du;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_speed(void)
{
    enum { NW = 10000, NS = 500 };
    static char words[NW][9], subs[NS][13];
    static sgc_pattern ps[NW];
    sgc_dfa d;
    sgc_dfa_error err;
    for (int i = 0; i < NW; i++) {
        for (int j = 0; j < 8; j++)
            words[i][j] = (char)('a' + rnd(26));
        ps[i] = pat(SGC_PAT_EXACT, words[i], 0, i % 7);
    }
    double t0 = now();
    int rc = sgc_dfa_build(ps, NW, 1u << 20, &d, &err);
    double t1 = now();
    CHECK(rc == 0);
    /* size, not time, is asserted (tests never depend on the machine's speed): a
     * trie of 10,000 8-byte words has at most 80,001 states */
    if (rc == 0) {
        CHECK(d.nstates <= NW * 8 + 1);
        printf("10000 exact words: %.1f ms, %u states, %u classes\n", (t1 - t0) * 1e3,
               d.nstates, d.nclasses);
        int ok = 1;
        for (int i = 0; i < NW; i++)
            ok &= run(&d, words[i]) >= 0 && run(&d, words[i]) <= i % 7;
        CHECK(ok);
        CHECK(run(&d, "abcdefg") == -1);
        sgc_dfa_free(&d);
    }
    for (int i = 0; i < NS; i++) {
        int len = 5 + (int)rnd(8);
        for (int j = 0; j < len; j++)
            subs[i][j] = (char)(' ' + rnd(95));
        subs[i][len] = '\0';
        ps[i] = pat(SGC_PAT_SUBSTRING, subs[i], 0, 1);
    }
    t0 = now();
    rc = sgc_dfa_build(ps, NS, 1u << 20, &d, &err);
    t1 = now();
    CHECK(rc == 0);
    if (rc == 0) {
        printf("500 substrings, one id: %.1f ms, %u states, %u classes\n", (t1 - t0) * 1e3,
               d.nstates, d.nclasses);
        char text[6600];
        int ok = 1;
        for (int i = 0; i < NS; i++) {
            snprintf(text, sizeof text, "xx%syy", subs[i]);
            ok &= run(&d, text) == 1;
        }
        CHECK(ok);
        sgc_dfa_free(&d);
    }
    /* distinct ids: the DFA must remember the lowest id seen, quadratic in the set */
    for (int i = 0; i < 50; i++)
        ps[i].id = i;
    t0 = now();
    rc = sgc_dfa_build(ps, 50, 1u << 20, &d, &err);
    t1 = now();
    CHECK(rc == 0);
    if (rc == 0) {
        printf("50 substrings, distinct ids: %.1f ms, %u states\n", (t1 - t0) * 1e3,
               d.nstates);
        char text[64];
        snprintf(text, sizeof text, "%s..%s", subs[40], subs[3]);
        CHECK(run(&d, text) == 3);
        sgc_dfa_free(&d);
    }
    /* hostile input: (a*)*b over 100,000 a's is one lookup per byte */
    static char as[100001];
    memset(as, 'a', 100000);
    sgc_pattern h = pat(SGC_PAT_REGEX, "(a*)*b", 0, 1);
    CHECK(sgc_dfa_build(&h, 1, 0, &d, &err) == 0);
    t0 = now();
    CHECK(run(&d, as) == -1);
    as[99999] = 'b';
    CHECK(run(&d, as) == 1);
    t1 = now();
    /* linear by construction: a DFA reads one transition a byte, and this one is
     * tiny (the time is printed, never asserted) */
    CHECK(d.nstates <= 4);
    printf("(a*)*b over 100,000 bytes: %.2f ms, %u states\n", (t1 - t0) * 1e3, d.nstates);
    sgc_dfa_free(&d);
}

/* ---- randomized cross-check ----------------------------------------------------- */

/* A random regex over {a, b} as a tree, printed to text and matched by a
 * reference that tracks the set of positions a node can end at (exhaustive, no
 * automaton): an oracle independent of redfa's parser and NFA. */
enum { X_SET, X_CAT, X_ALT, X_REP };
typedef struct xnode {
    int type, min, max;           /* max -1: unbounded */
    uint8_t set[256];             /* X_SET: the listed bytes, before negation */
    int neg;                      /* [^...]: icase folds the list, then negates */
    int nk;
    struct xnode *k[4];
    int anch_s, anch_e;           /* top-level alternatives */
} xnode;

static xnode pool[4096];
static int npool;

static xnode *xnew(int type)
{
    xnode *x = &pool[npool++];
    memset(x, 0, sizeof *x);
    x->type = type;
    return x;
}

static xnode *gen(int depth, char *out, size_t *o);

/* An atom: a set or a parenthesised subexpression. */
static xnode *gen_atom(int depth, char *out, size_t *o)
{
    int r = (int)rnd(depth > 0 ? 10 : 7);
    xnode *x;
    if (r < 7) {
        static const char *const sets[] = {"a", "b", "a", "b", ".", "[ab]", "[^a]", "[a-b]",
                                           "\\x61", "[[:alpha:]]", "\\w"};
        const char *s = sets[rnd(11)];
        x = xnew(X_SET);
        for (int c = 0; c < 256; c++) {
            int in;
            if (!strcmp(s, ".")) in = 1;
            else if (!strcmp(s, "[ab]") || !strcmp(s, "[a-b]")) in = c == 'a' || c == 'b';
            else if (!strcmp(s, "[^a]")) in = c == 'a', x->neg = 1;
            else if (!strcmp(s, "\\x61")) in = c == 'a';
            else if (!strcmp(s, "[[:alpha:]]")) in = (c | 32) >= 'a' && (c | 32) <= 'z';
            else if (!strcmp(s, "\\w")) in = ((c | 32) >= 'a' && (c | 32) <= 'z')
                                             || (c >= '0' && c <= '9') || c == '_';
            else in = c == s[0];
            x->set[c] = (uint8_t)in;
        }
        *o += (size_t)sprintf(out + *o, "%s", s);
        return x;
    }
    *o += (size_t)sprintf(out + *o, "%s", rnd(2) ? "(" : "(?:");
    x = gen(depth - 1, out, o);
    *o += (size_t)sprintf(out + *o, ")");
    return x;
}

/* A piece: an atom, maybe quantified. */
static xnode *gen_piece(int depth, char *out, size_t *o)
{
    xnode *a = gen_atom(depth, out, o);
    int r = (int)rnd(12);
    if (r >= 6)
        return a;
    xnode *x = xnew(X_REP);
    x->nk = 1;
    x->k[0] = a;
    static const int mm[6][2] = {{0, -1}, {1, -1}, {0, 1}, {2, 2}, {1, 3}, {2, -1}};
    x->min = mm[r][0];
    x->max = mm[r][1];
    if (r < 3)
        *o += (size_t)sprintf(out + *o, "%c", "*+?"[r]);
    else if (x->max < 0)
        *o += (size_t)sprintf(out + *o, "{%d,}", x->min);
    else if (x->min == x->max)
        *o += (size_t)sprintf(out + *o, "{%d}", x->min);
    else
        *o += (size_t)sprintf(out + *o, "{%d,%d}", x->min, x->max);
    return x;
}

/* A sequence of 0..3 pieces. */
static xnode *gen_seq(int depth, char *out, size_t *o)
{
    xnode *x = xnew(X_CAT);
    x->nk = (int)rnd(4);
    for (int i = 0; i < x->nk; i++)
        x->k[i] = gen_piece(depth, out, o);
    return x;
}

/* An alternation of 1..3 sequences. */
static xnode *gen(int depth, char *out, size_t *o)
{
    xnode *x = xnew(X_ALT);
    x->nk = rnd(3) ? 1 : 2 + (int)rnd(2);
    for (int i = 0; i < x->nk; i++) {
        if (i)
            out[(*o)++] = '|';
        x->k[i] = gen_seq(depth, out, o);
    }
    return x;
}

/* The set of end positions reachable by matching x from any position in `from`
 * (bit i = position i) over s[0..n), n < 32. */
static uint32_t ends(const xnode *x, const char *s, int n, uint32_t from, int icase)
{
    uint32_t r = 0, cur, acc;
    switch (x->type) {
    case X_SET:
        for (int i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i], o = c;
            if (icase && ((c | 32) >= 'a' && (c | 32) <= 'z'))
                o = c ^ 32;
            if ((from >> i & 1) && ((x->set[c] || (icase && x->set[o])) != x->neg))
                r |= 1u << (i + 1);
        }
        return r;
    case X_CAT:
        for (int i = 0; i < x->nk; i++)
            from = ends(x->k[i], s, n, from, icase);
        return from;
    case X_ALT:
        for (int i = 0; i < x->nk; i++)
            r |= ends(x->k[i], s, n, from, icase);
        return r;
    default:
        cur = from;
        for (int i = 0; i < x->min; i++)
            cur = ends(x->k[0], s, n, cur, icase);
        acc = cur;
        if (x->max < 0) {
            for (uint32_t fr = cur; fr;) {
                uint32_t nx = ends(x->k[0], s, n, fr, icase) & ~acc;
                acc |= nx;
                fr = nx;
            }
        } else {
            for (int i = x->min; i < x->max; i++) {
                cur = ends(x->k[0], s, n, cur, icase);
                acc |= cur;
            }
        }
        return acc;
    }
}

/* Search semantics with per-alternative anchors, as redfa.h specifies. */
static int ref_match(const xnode *top, const char *s, int n, int icase)
{
    for (int i = 0; i < top->nk; i++) {
        const xnode *br = top->k[i];
        uint32_t from = br->anch_s ? 1u : (uint32_t)((1ull << (n + 1)) - 1);
        uint32_t e = ends(br, s, n, from, icase);
        if (br->anch_e ? (e >> n & 1) : e != 0)
            return 1;
    }
    return 0;
}

/* A random top-level regex: alternatives, each maybe anchored. */
static xnode *gen_top(char *out)
{
    size_t o = 0;
    xnode *top = xnew(X_ALT);
    top->nk = 1 + (rnd(4) == 0) + (rnd(6) == 0);
    for (int i = 0; i < top->nk; i++) {
        if (i)
            out[o++] = '|';
        int as = rnd(3) == 0, ae = rnd(3) == 0;
        if (as)
            out[o++] = '^';
        xnode *br = gen_seq(2, out, &o);
        if (ae)
            out[o++] = '$';
        br->anch_s = as;
        br->anch_e = ae;
        top->k[i] = br;
    }
    out[o] = '\0';
    return top;
}

static void test_random_regex(void)
{
    char re[3][512], s[16];
    xnode *tops[3];
    int bad = 0, built = 0;
    for (int iter = 0; iter < 1500 && bad < 5; iter++) {
        int np = iter % 5 == 4 ? 3 : 1, icase = iter % 7 == 6;
        int32_t ids[3] = {(int32_t)rnd(4), (int32_t)rnd(4), (int32_t)rnd(4)};
        sgc_pattern ps[3];
        npool = 0;
        for (int j = 0; j < np; j++) {
            tops[j] = gen_top(re[j]);
            ps[j] = pat(SGC_PAT_REGEX, re[j], icase, ids[j]);
        }
        sgc_dfa d;
        sgc_dfa_error err;
        if (sgc_dfa_build(ps, (size_t)np, 1u << 16, &d, &err) != 0) {
            fprintf(stderr, "random: /%s/ failed: %s at %zu\n", re[0], err.msg, err.offset);
            bad++;
            CHECK(0);
            continue;
        }
        built++;
        CHECK(well_formed(&d));
        CHECK(canonical(&d));
        /* 'A' and 'c' too: case folding and bytes outside the pattern alphabet */
        const char *alpha = icase ? "abABc" : "abcA";
        uint32_t nalpha = icase ? 5 : 4;
        for (int t = 0; t < 300; t++) {
            int n = t < 85 ? 0 : (int)rnd(11);
            if (t < 85) {          /* every string over {a,b} up to length 6 */
                int v = t, len = 0;
                while (v >= (1 << len)) {
                    v -= 1 << len;
                    len++;
                }
                n = len;
                for (int i = 0; i < n; i++)
                    s[i] = (v >> i & 1) ? 'b' : 'a';
            } else {
                for (int i = 0; i < n; i++)
                    s[i] = alpha[rnd(nalpha)];
            }
            int32_t want = -1;
            for (int j = 0; j < np; j++)
                if (ref_match(tops[j], s, n, icase) && (want < 0 || ids[j] < want))
                    want = ids[j];
            int32_t got = run_n(&d, s, (size_t)n);
            if (got != want && bad < 5) {
                fprintf(stderr, "random mismatch: ");
                for (int j = 0; j < np; j++)
                    fprintf(stderr, "/%s/%s id %d  ", re[j], icase ? "i" : "", ids[j]);
                fprintf(stderr, "on \"%.*s\": got %d want %d\n", n, s, got, want);
                bad++;
            }
            CHECK(got == want);
        }
        /* a rebuild is byte-identical */
        sgc_dfa d2;
        CHECK(sgc_dfa_build(ps, (size_t)np, 1u << 16, &d2, &err) == 0 && same_dfa(&d, &d2));
        sgc_dfa_free(&d2);
        sgc_dfa_free(&d);
    }
    CHECK(built >= 1400);
}

/* Random lists of substrings and exact words with random ids against strstr:
 * the Aho-Corasick path and the sticky pruning. */
static void test_random_literals(void)
{
    int bad = 0;
    for (int iter = 0; iter < 1500 && bad < 5; iter++) {
        char lit[6][8], s[16];
        sgc_pattern ps[6];
        int np = 1 + (int)rnd(6), icase = iter % 5 == 4;
        for (int j = 0; j < np; j++) {
            int len = (int)rnd(5);
            for (int i = 0; i < len; i++)
                lit[j][i] = "abB"[rnd(icase ? 3 : 2)];
            lit[j][len] = '\0';
            ps[j] = pat(rnd(4) ? SGC_PAT_SUBSTRING : SGC_PAT_EXACT, lit[j], icase,
                        (int32_t)rnd(5));
        }
        sgc_dfa d;
        sgc_dfa_error err;
        CHECK(sgc_dfa_build(ps, (size_t)np, 1u << 16, &d, &err) == 0);
        CHECK(canonical(&d));
        for (int t = 0; t < 200; t++) {
            int n = (int)rnd(11);
            for (int i = 0; i < n; i++)
                s[i] = "abcAB"[rnd(icase ? 5 : 3)];
            s[n] = '\0';
            int32_t want = -1;
            for (int j = 0; j < np; j++) {
                int hit = ps[j].kind == SGC_PAT_EXACT
                              ? (icase ? strcasecmp(s, lit[j]) == 0 : strcmp(s, lit[j]) == 0)
                              : (icase ? strcasestr(s, lit[j]) != NULL
                                       : strstr(s, lit[j]) != NULL);
                if (hit && (want < 0 || ps[j].id < want))
                    want = ps[j].id;
            }
            int32_t got = run(&d, s);
            if (got != want && bad++ < 5) {
                fprintf(stderr, "literal mismatch on \"%s\" (icase %d): got %d want %d:", s,
                        icase, got, want);
                for (int j = 0; j < np; j++)
                    fprintf(stderr, " %c\"%s\"=%d", ps[j].kind == SGC_PAT_EXACT ? 'E' : 'S',
                            lit[j], ps[j].id);
                fprintf(stderr, "\n");
            }
            CHECK(got == want);
        }
        sgc_dfa_free(&d);
    }
}

/* Random globs against libc fnmatch (flags 0: '*' crosses '/'). */
static void test_random_glob(void)
{
    static const char *const atoms[] = {"a", "b", "/", "*", "?", "[ab]", "[!a]", "[^b]",
                                        "\\*", "\\?", "[a-b/]", "[]a]"};
    int bad = 0;
    for (int iter = 0; iter < 2000 && bad < 5; iter++) {
        char g[128], s[16];
        size_t o = 0;
        int na = (int)rnd(6);
        for (int i = 0; i < na; i++)
            o += (size_t)sprintf(g + o, "%s", atoms[rnd(12)]);
        g[o] = '\0';
        int icase = iter % 4 == 3;
        sgc_pattern p = pat(SGC_PAT_GLOB, g, icase, 1);
        sgc_dfa d;
        sgc_dfa_error err;
        CHECK(sgc_dfa_build(&p, 1, 0, &d, &err) == 0);
        CHECK(canonical(&d));
        for (int t = 0; t < 100; t++) {
            int n = (int)rnd(8);
            for (int i = 0; i < n; i++)
                s[i] = "ab/*?]AB"[rnd(8)];
            s[n] = '\0';
            int want = fnmatch(g, s, icase ? FNM_CASEFOLD : 0) == 0, got = run(&d, s) == 1;
            if (got != want && bad++ < 5)
                fprintf(stderr, "glob mismatch: %s on \"%s\": got %d want %d\n", g, s,
                        got, want);
            CHECK(got == want);
            /* path inside: s or a leading part stopping before a '/' */
            int wantd = 0;
            for (int l = n; l >= 0 && !wantd; l--) {
                if (l < n && (l == 0 || s[l] != '/'))
                    continue;
                char pre[16];
                memcpy(pre, s, (size_t)l);
                pre[l] = '\0';
                wantd = fnmatch(g, pre, icase ? FNM_CASEFOLD : 0) == 0;
            }
            int split, gotd = run_dirs(&d, s, (size_t)n, n ? rnd((uint32_t)n + 1) : 0, &split);
            if ((gotd != wantd || split != wantd) && bad++ < 5)
                fprintf(stderr, "dirs mismatch: %s on \"%s\": got %d/%d want %d\n", g, s, gotd,
                        split, wantd);
            CHECK(gotd == wantd && split == wantd);
        }
        sgc_dfa_free(&d);
    }
}

/* ---- path groups (runtime/pathgroup.h) --------------------------------------------- */

/* One group run over s[0..n), split at byte k: the mask, or -1 when the group
 * could not make a state it needed.  The part after k goes through
 * sgr_pg_run_end (from SGR_PG_START when k is 0); when it answers, sgr_pg_run
 * and sgr_pg_accepts over the same part must say the same. */
static int64_t group_mask(sgr_pgroup *g, const char *s, size_t n, size_t k)
{
    const uint8_t *p = (const uint8_t *)s;
    uint32_t st = sgr_pg_start(g), hit = 0;
    if (k && sgr_pg_run(g, &st, p, p, p + k, &hit) < 0)
        return -1;
    uint32_t st2 = st, hit2 = hit;
    if (sgr_pg_run_end(g, k ? st : SGR_PG_START, p, p + k, p + n, &hit) < 0) {
        CHECK(hit == hit2);                 /* a run that gives up changes nothing */
        return -1;
    }
    /* every state that run needs exists now, so this one cannot give up */
    CHECK(sgr_pg_run(g, &st2, p, p + k, p + n, &hit2) == 0);
    CHECK((hit2 | sgr_pg_accepts(g, st2)) == hit);
    return hit;
}

/* A group decides, for every set at once, what sgr_dfa_match_dirs decides for
 * each set alone: random globs and regexes over paths, runs split at a random
 * byte, state bounds from the smallest up, trims between runs, and allocation
 * failures (which may only make a run give up, never answer wrongly). */
static void test_path_group(void)
{
    static const char *const atoms[] = {"a", "b", "/", "*", "?", "[ab]", "[!a]", ".", "/.", "*/"};
    int bad = 0, gave_up = 0, answered = 0;
    for (int iter = 0; iter < 300 && bad < 5; iter++) {
        uint32_t k = 1 + rnd(iter % 10 == 0 ? SGR_PG_MAX : 6);
        sgc_dfa cd[SGR_PG_MAX];
        sgr_dfa rd[SGR_PG_MAX];
        const sgr_dfa *dp[SGR_PG_MAX];
        uint8_t *loops[SGR_PG_MAX];
        for (uint32_t i = 0; i < k; i++) {
            char text[512];
            sgc_pattern pt;
            if (rnd(2)) {
                size_t o = 0;
                int na = 1 + (int)rnd(5);
                for (int a = 0; a < na; a++)
                    o += (size_t)sprintf(text + o, "%s", atoms[rnd(10)]);
                text[o] = '\0';
                pt = pat(SGC_PAT_GLOB, text, iter % 7 == 3, 1);
            } else {
                npool = 0;
                (void)gen_top(text);
                pt = pat(SGC_PAT_REGEX, text, 0, 1);
            }
            sgc_dfa_error err;
            if (sgc_dfa_build(&pt, 1, 0, &cd[i], &err) != 0) {
                pt = pat(SGC_PAT_GLOB, "*/a*", 0, 1);  /* a regex past the state bound */
                CHECK(sgc_dfa_build(&pt, 1, 0, &cd[i], &err) == 0);
            }
            loops[i] = runtime_dfa(&cd[i], &rd[i]);
            dp[i] = &rd[i];
        }
        uint32_t bound = iter % 4 == 0 ? 2 + rnd(6) : 4096;
        sgr_pgroup *g = sgr_pg_new(dp, k, bound);
        CHECK(g != NULL);
        if (!g)
            break;
        CHECK(sgr_pg_states(g) == 2);
        for (int t = 0; t < 200; t++) {
            char s[24];
            int n = (int)rnd(20);
            for (int i = 0; i < n; i++)
                s[i] = "ab/.*xA"[rnd(7)];
            uint32_t want = 0;
            for (uint32_t i = 0; i < k; i++)
                if (sgr_dfa_match_dirs(&rd[i], s, (size_t)n))
                    want |= 1u << i;
            int fail = t % 50 == 49;          /* now and then, no memory: a run needs none */
            if (fail)
                sg_alloc_fail_after(1);
            int64_t got = group_mask(g, s, (size_t)n, n ? rnd((uint32_t)n + 1) : 0);
            sg_alloc_fail_after(0);
            CHECK(sgr_pg_states(g) <= bound);
            if (got < 0) {
                gave_up++;
                /* only a full cache gives up: a run allocates nothing */
                CHECK(sgr_pg_states(g) == bound);
            } else {
                answered++;
                if ((uint32_t)got != want && bad++ < 5)
                    fprintf(stderr, "path group mismatch on \"%.*s\": got %08x want %08x\n", n, s,
                            (unsigned)got, (unsigned)want);
                CHECK((uint32_t)got == want);
            }
            if (t % 16 == 15) {
                uint32_t before = sgr_pg_states(g);
                sgr_pg_trim(g);
                CHECK(sgr_pg_states(g) == (before > bound / 2 ? 2 : before));
            }
        }
        sgr_pg_free(g);
        for (uint32_t i = 0; i < k; i++) {
            free(loops[i]);
            sgc_dfa_free(&cd[i]);
        }
    }
    CHECK(answered > 30000 && gave_up > 0);
    /* bad arguments, and the group's own allocations failing one by one */
    sgc_pattern pt = pat(SGC_PAT_GLOB, "*/.ssh", 0, 1);
    sgc_dfa one;
    sgc_dfa_error err;
    CHECK(sgc_dfa_build(&pt, 1, 0, &one, &err) == 0);
    sgr_dfa r;
    uint8_t *lp = runtime_dfa(&one, &r);
    const sgr_dfa *dp[SGR_PG_MAX + 1];
    for (int i = 0; i <= SGR_PG_MAX; i++)
        dp[i] = &r;
    CHECK(sgr_pg_new(dp, SGR_PG_MAX + 1, 100) == NULL);
    CHECK(sgr_pg_new(dp, 1, 1) == NULL);
    CHECK(sgr_pg_new(dp, 1, 65536) == NULL);
    int made = 0;
    for (long n = 1; n < 1000 && !made; n++) {
        sg_alloc_fail_after(n);
        sgr_pgroup *g = sgr_pg_new(dp, SGR_PG_MAX, 100);
        sg_alloc_fail_after(0);
        if (!g)
            continue;
        made = 1;
        const char *s = "/home/u/.ssh/id_rsa";
        CHECK(group_mask(g, s, strlen(s), 3) == (int64_t)UINT32_MAX);
        sgr_pg_free(g);
    }
    CHECK(made);
    free(lp);
    sgc_dfa_free(&one);
}

/* A trie of exact words (sgr_pg_trie_build) decides `path inside` for the words
 * as sgr_set_words_dirs does: the string, or a leading part of it stopping before
 * a '/', is one of the words.  Random word lists over a small alphabet (shared
 * prefixes, the empty word, duplicates), against that definition. */
static void test_path_trie(void)
{
    int bad = 0;
    for (int iter = 0; iter < 500 && bad < 5; iter++) {
        char store[16][8];
        const char *w[16];
        uint32_t l[16], n = rnd(9);
        for (uint32_t i = 0; i < n; i++) {
            l[i] = rnd(6);
            for (uint32_t k = 0; k < l[i]; k++)
                store[i][k] = "ab/c"[rnd(4)];
            store[i][l[i]] = '\0';
            w[i] = store[i];
        }
        sgr_pg_trie tr;
        CHECK(sgr_pg_trie_build(&tr, w, l, n, 4096) == 0);
        for (int t = 0; t < 200; t++) {
            char s[12];
            int sl = (int)rnd(10);
            for (int i = 0; i < sl; i++)
                s[i] = "ab/cd"[rnd(5)];
            int want = 0;
            for (int p = sl; p >= 0 && !want; p--) {
                if (p < sl && (p == 0 || s[p] != '/'))
                    continue;
                for (uint32_t i = 0; i < n && !want; i++)
                    want = l[i] == (uint32_t)p && memcmp(w[i], s, (size_t)p) == 0;
            }
            int got = sgr_dfa_match_dirs(&tr.d, s, (size_t)sl);
            if (got != want && bad++ < 5)
                fprintf(stderr, "trie mismatch on \"%.*s\": got %d want %d\n", sl, s, got, want);
            CHECK(got == want);
        }
        sgr_pg_trie_free(&tr);
    }
    /* the bound, and memory running out: -1 and nothing held */
    const char *w[] = { "/etc/shadow", "/etc/gshadow" };
    uint32_t l[] = { 11, 12 };
    sgr_pg_trie tr;
    CHECK(sgr_pg_trie_build(&tr, w, l, 2, 20) == -1 && tr.trans == NULL);
    CHECK(sgr_pg_trie_build(&tr, w, l, 2, 25) == 0 && tr.d.nstates == 2 + 6 + 6 + 6);
    sgr_pg_trie_free(&tr);
    for (long k = 1; k <= 3; k++) {
        sg_alloc_fail_after(k);
        CHECK(sgr_pg_trie_build(&tr, w, l, 2, 4096) == -1 && tr.trans == NULL && tr.accept == NULL
              && tr.loops == NULL);
        sg_alloc_fail_after(0);
    }
    CHECK(sgr_pg_trie_build(&tr, w, l, 2, 4096) == 0);
    CHECK(sgr_dfa_match_dirs(&tr.d, "/etc/shadow/x", 13) && !sgr_dfa_match_dirs(&tr.d, "/etc/shadowx", 12));
    sgr_pg_trie_free(&tr);
}

/* runtime/pathpat.c against brute force: random patterns over a small alphabet,
 * random glob sets, every string up to 6 bytes.  A string the brute force finds
 * in both languages must make sgr_pp_dfa answer 1 (never a miss); for a pattern
 * without loops (every string it makes is at most 5 bytes) the answers are equal.
 * sgr_pp_word is checked the same way against one word. */
static const char pp_alpha[] = { 'a', 'b', '.', '/', 1 };

static int pp_brute_has(const sgr_ppat *p, const sgc_dfa *d, int dirs, const char *word)
{
    char s[8];
    for (int len = 0; len <= 6; len++) {
        size_t total = 1;
        for (int i = 0; i < len; i++)
            total *= 5;
        for (size_t k = 0; k < total; k++) {
            size_t x = k;
            for (int i = 0; i < len; i++) {
                s[i] = pp_alpha[x % 5];
                x /= 5;
            }
            if (!sgr_pp_word(p, s, (size_t)len, 0))
                continue;                   /* not a string of the pattern */
            if (word) {
                size_t wl = strlen(word);
                if ((size_t)len == wl && !memcmp(s, word, wl))
                    return 1;
                if (dirs && (size_t)len > wl && !memcmp(s, word, wl) && s[wl] == '/' && wl && !(wl == 1 && word[0] == '/'))
                    return 1;
                continue;
            }
            if (len && run_n(d, s, (size_t)len) >= 0)
                return 1;
            for (int l = len - 1; dirs && l >= 1; l--)
                if (s[l] == '/' && run_n(d, s, (size_t)l) >= 0)
                    return 1;
        }
    }
    return 0;
}

static void test_path_patterns(void)
{
    static const char *const globs[] = { "*/a", "/a*", "*.b", "/a/b", "*/.a*", "/b", "*a/b*", "/\x01*", "*" };
    sg_arena arena;
    sg_arena_init(&arena, 0);
    uint64_t cls[2][4] = { { 0 }, { 0 } };
    cls[0]['a' >> 6] |= (uint64_t)1 << ('a' & 63);
    cls[1]['b' >> 6] |= (uint64_t)1 << ('b' & 63);
    cls[1]['.' >> 6] |= (uint64_t)1 << ('.' & 63);
    int bad = 0, checked = 0;
    for (int iter = 0; iter < 600 && bad < 5; iter++) {
        const char *g = globs[rnd(9)];
        char gbuf[16];
        if (strstr(g, "\\x01")) {
            snprintf(gbuf, sizeof gbuf, "/%c*", 1);
            g = gbuf;
        }
        sgc_pattern sp = pat(SGC_PAT_GLOB, g, 0, 0);
        sgc_dfa d;
        sgc_dfa_error err;
        if (sgc_dfa_build(&sp, 1, 0, &d, &err) != 0)
            continue;
        sgr_dfa r;
        uint8_t *loops = runtime_dfa(&d, &r);
        uint32_t el[5];
        sgr_ppat p = { el, 1 + rnd(4), (const uint64_t (*)[4])cls, NULL };
        int looped = 0;
        for (uint32_t i = 0; i < p.n; i++) {
            uint32_t k = rnd(9);
            if (k == 0)
                el[i] = SGR_PP_LIT | (uint32_t)(unsigned char)pp_alpha[rnd(5)] << 8;
            else if (k == 1)
                el[i] = SGR_PP_ONE;
            else if (k == 2)
                el[i] = SGR_PP_CLASS | rnd(2) << 8;
            else {
                static const uint32_t loopk[] = { SGR_PP_STAR, SGR_PP_XSTAR, SGR_PP_ANY, SGR_PP_STEM, SGR_PP_DIRS,
                                                  SGR_PP_LIT };
                el[i] = loopk[rnd(6)];
                if (el[i] == SGR_PP_LIT)
                    el[i] |= (uint32_t)'/' << 8;
                looped |= (el[i] & 0xff) != SGR_PP_LIT;
            }
        }
        for (int dirs = 0; dirs < 2; dirs++) {
            int got = sgr_pp_dfa(&p, &r, dirs, &arena), want = pp_brute_has(&p, &d, dirs, NULL);
            checked++;
            int ok = looped ? (!want || got == 1) : got == want;
            if (!ok && bad++ < 5)
                fprintf(stderr, "pathpat: glob %s, %u elements, dirs %d: got %d want %d\n", g, p.n, dirs, got, want);
            CHECK(ok);
            static const char *const words[] = { "/a", "a", "/a/b", ".a", "/", "b.b" };
            const char *w = words[rnd(6)];
            int gw = sgr_pp_word(&p, w, strlen(w), dirs), ww = pp_brute_has(&p, NULL, dirs, w);
            ok = looped ? (!ww || gw == 1) : gw == ww;
            if (!ok && bad++ < 5)
                fprintf(stderr, "pathpat: word %s, dirs %d: got %d want %d\n", w, dirs, gw, ww);
            CHECK(ok);
        }
        free(loops);
        sgc_dfa_free(&d);
        sg_arena_reset(&arena);
    }
    CHECK(checked > 500);
    sg_arena_free(&arena);
}

int main(void)
{
    test_path_patterns();
    test_cases();
    test_union();
    test_canonical();
    test_syntax_errors();
    test_limits();
    test_empty();
    test_alloc_failures();
    test_speed();
    test_random_regex();
    test_random_literals();
    test_random_glob();
    test_path_group();
    test_path_trie();
    return sg_test_summary();
}
