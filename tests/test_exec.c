/* test_exec.c - the executor's stages on their own: output capture (exact
 * truncation however the bytes arrive, streaming, the marker), JSON strings from
 * any bytes, the prepare stage against golden cases (exec/prepare.txt: what the
 * policy is shown, or why a line is refused), resource-limit parsing, sessions'
 * record of changes, and a sweep failing the Nth allocation of prepare.
 * usage: test_exec SRCDIR [-u]  (-u prints every case's actual result) */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "common/alloc.h"
#include "lib/policy.h"
#include "exec/capture.h"
#include "exec/run.h"
#include "exec/session.h"

/* ---- capture ---------------------------------------------------------------------- */

static char pat(size_t i)
{
    return (char)('a' + (i * 7 + i / 26) % 26);
}

/* What a capture of cap bytes must keep of n pattern bytes. */
static char *expected(size_t n, size_t cap, int mode, size_t *len)
{
    size_t keep = n <= cap ? n : cap;
    char *s = malloc(keep + 100);
    size_t o = 0;
    if (n <= cap) {
        for (size_t i = 0; i < n; i++)
            s[o++] = pat(i);
    } else {
        size_t h = mode == SGX_TRUNC_HEAD ? cap : cap / 2, t = mode == SGX_TRUNC_HEAD ? 0 : cap - cap / 2;
        for (size_t i = 0; i < h; i++)
            s[o++] = pat(i);
        o += (size_t)sprintf(s + o, "\n... [truncated %zu bytes] ...\n", n - h - t);
        for (size_t i = n - t; i < n; i++)
            s[o++] = pat(i);
    }
    *len = o;
    return s;
}

static void capture_tests(void)
{
    static const size_t sizes[] = { 0, 1, 1023, 1024, 1025, 2047, 2048, 4095, 4096, 4097, 10000, 100003 };
    static const size_t chunks[] = { 1, 7, 512, 1500, 65536 };
    char *src = malloc(100003);
    for (size_t i = 0; i < 100003; i++)
        src[i] = pat(i);
    for (int mode = 0; mode < 2; mode++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
                size_t n = sizes[si], cap = 2048;
                sgx_cap c;
                CHECK(sgx_cap_init(&c, cap, mode, -1) == 0);
                for (size_t off = 0; off < n; off += chunks[ci])
                    sgx_cap_add(&c, src + off, n - off < chunks[ci] ? n - off : chunks[ci]);
                size_t gl, wl;
                char *got = sgx_cap_text(&c, &gl), *want = expected(n, cap, mode, &wl);
                CHECK(c.total == n && gl == wl && memcmp(got, want, wl) == 0);
                CHECK(sgx_cap_dropped(&c) == (n > cap ? n - cap : 0));
                sg_free(got);
                free(want);
                sgx_cap_free(&c);
            }
    /* streaming: the head as it comes, then the marker and the tail: the same bytes */
    for (int mode = 0; mode < 2; mode++) {
        char path[] = "/tmp/sgx-cap-XXXXXX";
        int fd = mkstemp(path);
        sgx_cap c;
        sgx_cap_init(&c, 1024, mode, fd);
        for (size_t off = 0; off < 50000; off += 333)
            sgx_cap_add(&c, src + off, 50000 - off < 333 ? 50000 - off : 333);
        sgx_cap_finish_stream(&c);
        size_t wl;
        char *want = expected(50000, 1024, mode, &wl), *got = malloc(wl + 10);
        ssize_t k = pread(fd, got, wl + 10, 0);
        CHECK(k == (ssize_t)wl && memcmp(got, want, wl) == 0);
        free(got);
        free(want);
        close(fd);
        unlink(path);
        sgx_cap_free(&c);
    }
    /* the cap is clamped */
    sgx_cap c;
    sgx_cap_init(&c, 10, SGX_TRUNC_HEADTAIL, -1);
    CHECK(c.cap == SGX_CAP_MIN);
    sgx_cap_free(&c);
    free(src);
}

static void json_tests(void)
{
    static const struct { const char *in; size_t n; const char *out; } t[] = {
        { "plain", 5, "\"plain\"" },
        { "q\"b\\", 4, "\"q\\\"b\\\\\"" },
        { "\n\t\r\b\f\x01\x1f\x7f", 8, "\"\\n\\t\\r\\b\\f\\u0001\\u001f\x7f\"" },
        { "a\0b", 3, "\"a\\u0000b\"" },
        { "\xc3\xa9", 2, "\"\xc3\xa9\"" },                       /* U+00E9 kept */
        { "\xe2\x82\xac\xf0\x9f\x98\x80", 7, "\"\xe2\x82\xac\xf0\x9f\x98\x80\"" },
        { "\xff", 1, "\"\xef\xbf\xbd\"" },                         /* not UTF-8 */
        { "\xc3", 1, "\"\xef\xbf\xbd\"" },                         /* cut short */
        { "\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"" },         /* overlong */
        { "\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" }, /* a surrogate */
        { "\xf4\x90\x80\x80", 4, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" }, /* past U+10FFFF */
        { "\xe2\x82x", 3, "\"\xef\xbf\xbd\xef\xbf\xbdx\"" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char *o = NULL;
        size_t len = 0, cap = 0;
        CHECK(sgx_json_string(&o, &len, &cap, t[i].in, t[i].n) == 0);
        if (!(len == strlen(t[i].out) && memcmp(o, t[i].out, len) == 0)) {
            fprintf(stderr, "json string %zu: got %.*s\n", i, (int)len, o);
            CHECK(!"json string");
        }
        sg_free(o);
    }
}

static void rlimit_tests(void)
{
    sgx_rlimits r;
    char err[200];
    sgx_rlimits_default(&r);
    CHECK(r.v[SGX_RL_NOFILE] == 4096 && r.v[SGX_RL_CPU] == SGX_RL_UNSET);
    CHECK(sgx_rlimits_parse(&r, "fsize=2m", err, sizeof err) == 0 && r.v[SGX_RL_FSIZE] == 2u << 20);
    CHECK(sgx_rlimits_parse(&r, "as=1g", err, sizeof err) == 0 && r.v[SGX_RL_AS] == 1ull << 30);
    CHECK(sgx_rlimits_parse(&r, "cpu=unlimited", err, sizeof err) == 0 && r.v[SGX_RL_CPU] == UINT64_MAX);
    CHECK(sgx_rlimits_parse(&r, "nproc=-1", err, sizeof err) < 0);
    CHECK(sgx_rlimits_parse(&r, "stack=1", err, sizeof err) < 0);
    CHECK(sgx_rlimits_parse(&r, "nofile=12x", err, sizeof err) < 0);
}

/* Sessions record what changed against the base: set, changed, unset -- and not
 * what merely stayed. */
static void session_tests(void)
{
    sgx_vars base = { 0 }, fin = { 0 };
    sgx_vars_set(&base, "LANG", 4, "C", 1);
    sgx_vars_set(&base, "TERM", 4, "xterm", 1);
    sgx_vars_set(&base, "HOME", 4, "/h", 1);
    sgx_vars_copy(&fin, &base);
    sgx_vars_set(&fin, "NEW", 3, "1", 1);
    sgx_vars_set(&fin, "LANG", 4, "C.UTF-8", 1);
    sgx_vars_unset(&fin, "TERM", 4);
    sgx_vars_set(&fin, "SHELLONLY", 9, "x", 0);
    sgx_session s;
    memset(&s, 0, sizeof s);
    CHECK(sgx_session_record(&s, &base, &fin) == 0);
    CHECK(s.set.n == 2 && sgx_vars_get(&s.set, "NEW", 3) && strcmp(sgx_vars_get(&s.set, "LANG", 4)->value, "C.UTF-8") == 0);
    CHECK(s.nunset == 1 && strcmp(s.unset[0], "TERM") == 0);
    sgx_vars applied = { 0 };
    sgx_vars_copy(&applied, &base);
    CHECK(sgx_session_apply(&s, &applied) == 0);
    CHECK(!sgx_vars_get(&applied, "TERM", 4) && sgx_vars_get(&applied, "NEW", 3));
    CHECK(sgx_session_id_ok("agent-1.x_Y") && !sgx_session_id_ok(".x") && !sgx_session_id_ok("a/b")
          && !sgx_session_id_ok(""));
    sgx_vars_free(&s.set);
    for (uint32_t i = 0; i < s.nunset; i++)
        sg_free(s.unset[i]);
    sg_free(s.unset);
    sgx_vars_free(&applied);
    sgx_vars_free(&base);
    sgx_vars_free(&fin);
}

/* ---- prepare: golden cases ------------------------------------------------------ */

static char ws[PATH_MAX];

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb;
    (void)f;
    return flag == FTW_DP ? rmdir(path) : unlink(path), 0;
}

/* the text with the workspace path shown as /WS */
static char *shown(const char *s)
{
    size_t wl = strlen(ws), n = strlen(s);
    char *o = malloc(n + 1), *p = o;
    for (size_t i = 0; i < n;) {
        if (strncmp(s + i, ws, wl) == 0) {
            p += sprintf(p, "/WS");
            i += wl;
        } else {
            *p++ = s[i++];
        }
    }
    *p = '\0';
    return o;
}

typedef struct env_t {
    const sgr_table *t;
    sgr_ctx *ctx;
    sgx_vars vars;
} env_t;

/* 0 and *out (the rendered line), or 1 and *out (the refusal) */
static int prepare_one(env_t *e, const char *line, char **out)
{
    const char *roots[1] = { ws };
    sgx_opts o;
    memset(&o, 0, sizeof o);
    o.t = e->t;
    o.ctx = e->ctx;
    o.cwd = ws;
    o.roots = roots;
    o.nroots = 1;
    o.vars = &e->vars;
    sgx_rlimits_default(&o.rl);
    sgx_run *r = sgx_run_new(&o);
    if (!r) {
        *out = strdup("(out of memory)");
        return 2;
    }
    int rc = sgx_prepare(r, line, strlen(line));
    const sgx_result *res = sgx_result_of(r);
    *out = shown(rc == 0 ? res->expanded : res->message);
    sgx_run_free(r);
    return rc == 0 ? 0 : 1;
}

static void golden(env_t *e, const char *path, int update)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        CHECK(!"exec/prepare.txt readable");
        return;
    }
    char line[8192], input[16384] = "";
    int have = 0, n = 0;
    unsigned ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\n')
            line[--l] = '\0';
        if (line[0] == '>' && line[1] == ' ') {
            snprintf(input, sizeof input, "%s", line + 2);
            have = 1;
        } else if (line[0] == '|' && line[1] == ' ' && have) {
            strncat(input, "\n", sizeof input - strlen(input) - 1);
            strncat(input, line + 2, sizeof input - strlen(input) - 1);
        } else if ((line[0] == '=' || line[0] == '!') && line[1] == ' ' && have) {
            char *got;
            int rc = prepare_one(e, input, &got);
            int ok = rc == (line[0] == '!') && strcmp(got, line + 2) == 0;
            if (update || !ok)
                fprintf(update ? stdout : stderr, "%s%s:%u: > %s\n  want %s\n  got  %c %s\n", ok ? "" : "MISMATCH ",
                        path, ln, input, line, rc ? '!' : '=', got);
            CHECK(ok);
            free(got);
            have = 0;
            n++;
        }
    }
    fclose(f);
    CHECK(n >= 40);
}

/* Failing the Nth allocation of a prepare (and of everything it calls) ends in a
 * clean refusal or a clean failure to start, never a crash or a leak (ASan). */
static void alloc_sweep(env_t *e)
{
    static const char *const lines[] = { "cd src && echo $X *.c ~ | cat > out; (export V=$G; echo $V) || false",
                                         "echo $(echo $X) && A=1 B=$X env; export C=$(echo x)", "for x in a; do :; done" };
    for (size_t li = 0; li < sizeof lines / sizeof lines[0]; li++) {
        int clean_pass = 0;
        for (long nth = 1; nth < 20000 && !clean_pass; nth++) {
            char *out;
            sg_alloc_fail_after(nth);
            int rc = prepare_one(e, lines[li], &out);
            long used = sg_alloc_fail_after(0);
            clean_pass = used < nth;       /* it needed fewer: nothing failed */
            CHECK(rc == 0 || rc == 1 || rc == 2);
            free(out);
        }
        CHECK(clean_pass);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int update = argc > 2 && strcmp(argv[2], "-u") == 0;
    capture_tests();
    json_tests();
    rlimit_tests();
    session_tests();
    char tmpl[] = "/tmp/sgx-prep-XXXXXX";
    if (!mkdtemp(tmpl) || !realpath(tmpl, ws))
        return 2;
    static const char *const files[] = { "a.c", "b.c", "notes.txt", ".hidden", "src/main.c" };
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/src", ws);
    mkdir(p, 0700);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", ws, files[i]);
        close(open(p, O_WRONLY | O_CREAT, 0600));
    }
    char pack[PATH_MAX];
    snprintf(pack, sizeof pack, "%s/tests/exec/exec.rules", argv[1]);
    sg_policy *pol = NULL;
    if (sg_policy_load(pack, NULL, &pol) != 0)
        return 2;
    env_t e = { pol->t, sgr_ctx_new(pol->t), { 0 } };
    sgx_vars_set(&e.vars, "HOME", 4, "/home/agent", 1);
    sgx_vars_set(&e.vars, "X", 1, "p  q", 0);
    sgx_vars_set(&e.vars, "G", 1, "*.c", 0);
    sgx_vars_set(&e.vars, "E", 1, "", 0);
    snprintf(p, sizeof p, "%s/tests/exec/prepare.txt", argv[1]);
    golden(&e, p, update);
    alloc_sweep(&e);
    sgx_vars_free(&e.vars);
    sgr_ctx_free(e.ctx);
    sg_policy_free(pol);
    nftw(ws, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return sg_test_summary();
}
