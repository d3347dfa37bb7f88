/* test_batch.c - check --batch's fast paths (lib/batch.c) against cJSON: every
 * command of the packs' case files and of the fuzz corpora, spelled as JSON lines
 * in several ways, must parse to the same request (or the same error) through
 * sg_batch_parse as through cJSON alone, and every answer sg_batch_write prints
 * must be byte for byte what cJSON prints for ref_result_json (tests/json_ref.h,
 * the tree built on its own), under each shipped pack and for verdicts with every
 * optional field.  Also the block reader: lines split as getline and the old loop
 * split them. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "check.h"
#include "common/alloc.h"
#include "common/jsontext.h"
#include "common/utf8.h"
#include "slurp.h"
#include "lib/policy.h"
#include "lib/batch.h"
#include "tests/json_ref.h"

#define NPACKS 4
static const char *const pack_names[NPACKS] = { "default", "readonly", "gaia", "ironclaw" };
static sg_policy *packs[NPACKS];
static sgr_ctx *ctxs[NPACKS];

static long n_lines, n_fast, n_answers, n_mismatch;

/* every byte from 1 to 255, for the string writer */
static char all_bytes[256];

/* ---- spelling a command as JSON ---------------------------------------------- */

/* s[0..n) as a JSON string, every byte below 0x20 and NUL as \u00xx (so a NUL
 * reaches the parser as the escape has_nul refuses), '"' and '\\' escaped; with
 * slash_esc, '/' as "\/" too. */
static void put_json_string(sg_batch_buf *b, const char *s, size_t n, int slash_esc)
{
    char tmp[8];
    sg_batch_buf *o = b;
    for (size_t i = 0; i <= n + 1; i++) {
        const char *p = tmp;
        size_t k = 1;
        if (i == 0 || i == n + 1) {
            tmp[0] = '"';
        } else {
            unsigned char c = (unsigned char)s[i - 1];
            if (c == '"' || c == '\\') {
                tmp[0] = '\\', tmp[1] = (char)c, k = 2;
            } else if (c == '/' && slash_esc) {
                tmp[0] = '\\', tmp[1] = '/', k = 2;
            } else if (c == '\n') {
                tmp[0] = '\\', tmp[1] = 'n', k = 2;
            } else if (c == '\t') {
                tmp[0] = '\\', tmp[1] = 't', k = 2;
            } else if (c < 0x20) {
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
                k = 6;
            } else {
                tmp[0] = (char)c;
            }
        }
        if (o->cap - o->len < k + 1) {
            o->cap = o->cap ? o->cap * 2 + k : 256;
            o->s = realloc(o->s, o->cap);
        }
        memcpy(o->s + o->len, p, k);
        o->len += k;
    }
}

static void put_raw(sg_batch_buf *b, const char *s)
{
    size_t k = strlen(s);
    if (b->cap - b->len < k + 1) {
        b->cap = b->cap * 2 + k + 1;
        b->s = realloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, k);
    b->len += k;
}

/* ---- one JSON line through both parsers, and its answers through both writers */

static void compare_answers(int p, const sg_batch_req *req, const char *line)
{
    sgr_opts so = { req->cwd ? req->cwd : SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
    const sgr_result *r = sgr_eval(ctxs[p], req->cmd, req->cmd_len, &so);
    const sgr_table *t = packs[p]->t;
    sg_batch_out outs[6] = {
        { r->decision, r->rule_id, r->message, r->hint ? r->hint : "", 0, 0.0, NULL, NULL, NULL },
        { r->decision, r->rule_id, r->message, r->hint, 0, 0.0, "", NULL, NULL },
        { SGT_ALLOW, r->rule_id, "approved (session): ok", "", 0, 0.0, "00ff00ff00ff00ff", "session", NULL },
        { SGT_DENY, "limit:shell", r->message, "", 1, 1.5, NULL, NULL, NULL },
        { SGT_DENY, "admission", all_bytes, all_bytes + 100, 1, 12.3456789, NULL, "always", all_bytes + 30 },
        { 7, NULL, NULL, NULL, 1, 1e-7, "ab", NULL, "state \"broken\"\n" },
    };
    static const double waits[] = { 0.1, 3.0, 2.5e-6, 59.999999, 1e10 };
    for (int k = 0; k < 6 + 5; k++) {
        sg_batch_out v = outs[k < 6 ? k : 3];
        if (k >= 6)
            v.wait_s = waits[k - 6];
        cJSON *o = ref_result_json(t, r, &v);
        /* cJSON copies a byte that starts no UTF-8 sequence; the writer puts U+FFFD
         * there, as sg_utf8_repair does to cJSON's text (common/utf8.h) */
        char *printed = o ? cJSON_PrintUnformatted(o) : NULL;
        char *want = printed ? sg_utf8_repair(printed, strlen(printed), NULL) : NULL;
        cJSON_free(printed);
        sg_batch_buf b = { NULL, 0, 0 };
        int w = sg_batch_write(&b, t, r, &v);
        size_t wl = want ? strlen(want) : 0;
        int same = want && w == 0 && b.len == wl + 1 && memcmp(b.s, want, wl) == 0 && b.s[wl] == '\n';
        n_answers++;
        if (!same && n_mismatch++ < 5)
            fprintf(stderr, "answer differs (pack %s, verdict %d) for %s\n  cJSON: %s\n  fast:  %.*s", pack_names[p],
                    k, line, want ? want : "(none)", (int)b.len, b.s ? b.s : "");
        CHECK(same);
        free(b.s);
        sg_free(want);
        cJSON_Delete(o);
    }
}

static void check_line(const char *line, size_t n, int want_fast, int answers)
{
    char *mine = malloc(n + 1);
    memcpy(mine, line, n);
    mine[n] = '\0';
    sg_batch_req a, b;
    const char *ea = sg_batch_parse(mine, n, &a);
    const char *eb = sg_batch_parse_cjson(line, n, &b);
    n_lines++;
    n_fast += a.fast;
    int same = (!ea && !eb) || (ea && eb && strcmp(ea, eb) == 0);
    if (!ea && !eb)
        same = a.cmd_len == b.cmd_len && memcmp(a.cmd, b.cmd, a.cmd_len) == 0 && a.cmd[a.cmd_len] == '\0'
               && strlen(a.cmd) == a.cmd_len && (!a.cwd) == (!b.cwd) && (!a.cwd || strcmp(a.cwd, b.cwd) == 0)
               && a.nroots == b.nroots;
    for (size_t i = 0; same && i < a.nroots; i++)
        same = strcmp(a.roots[i], b.roots[i]) == 0;
    if (!same)
        fprintf(stderr, "requests differ for %.*s: %s / %s\n", (int)n, line, ea ? ea : "ok", eb ? eb : "ok");
    CHECK(same);
    if (want_fast >= 0 && a.fast != want_fast)
        fprintf(stderr, "fast path %s for %.*s\n", a.fast ? "taken" : "not taken", (int)n, line);
    if (want_fast >= 0)
        CHECK(a.fast == want_fast);
    if (!ea && answers)
        for (int p = 0; p < NPACKS; p++)
            compare_answers(p, &a, line);
    if (ea) {                                   /* the error line, both ways */
        cJSON *o = ref_error_json(ea);
        char *want = cJSON_PrintUnformatted(o);
        sg_batch_buf ob = { NULL, 0, 0 };
        CHECK(sg_batch_write_error(&ob, ea) == 0 && ob.len == strlen(want) + 1 && memcmp(ob.s, want, ob.len - 1) == 0);
        free(ob.s);
        cJSON_free(want);
        cJSON_Delete(o);
    }
    sg_batch_req_free(&a);
    sg_batch_req_free(&b);
    free(mine);
}

/* A command spelled as several JSON lines: the shapes agents send (which the
 * fast path must take unless a byte needs \u) and shapes it must leave to cJSON. */
static void check_command(const char *cmd, size_t n, int answers)
{
    int needs_u = 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)cmd[i] < 0x20 && cmd[i] != '\n' && cmd[i] != '\t')
            needs_u = 1;
    static const char *const pre[] = {
        "{\"cmd\":", "{\"cmd\": ", " {\r\"cwd\" :\t\"/tmp/w\" , \"cmd\"\t:", "{\"cwd\": \"\\/home\\/agent\", \"cmd\": ",
        "{\"cmd\": ", "{\"id\": 7, \"cmd\": ", "{\"cmd\": ", "{\"cmd\": ", "\xef\xbb\xbf{\"cmd\": ", "{\"cmd\": ",
    };
    static const char *const post[] = {
        "}", ", \"cwd\": \"/home/agent/project\"}", "}  ", "}",
        ", \"cwd\": \"relative\"}", "}", ", \"roots\": [\"/tmp\"]}", "} trailing", "}", ", \"cmd\": \"ls\"}",
    };
    for (int v = 0; v < 10; v++) {
        sg_batch_buf b = { NULL, 0, 0 };
        put_raw(&b, pre[v]);
        put_json_string(&b, cmd, n, v == 3);
        put_raw(&b, post[v]);
        int want_fast = v < 4 ? !needs_u : 0;
        check_line(b.s, b.len, want_fast, answers && (v == 0 || v == 2));
        free(b.s);
    }
}

/* ---- the inputs ----------------------------------------------------------------- */

/* each case line's command: what precedes " ; decision [; rule]" */
static void add_cases(const char *path, int answers)
{
    size_t len;
    char *t = sg_slurp(path, &len);
    CHECK(t != NULL);
    if (!t)
        return;
    for (char *l = t; *l;) {
        char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        if (n && l[0] != '#') {
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
            check_command(l, cut, answers);
        }
        l += n + (nl ? 1 : 0);
    }
    free(t);
}

/* every file of a corpus directory: as a command (eval, shparse) or as batch input
 * lines (batch) */
static void add_corpus(const char *dir, int as_lines)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        char *t = sg_slurp(path, &len);
        if (!t)
            continue;
        if (!as_lines) {
            check_command(t, len, 1);
        } else {
            for (size_t s = 0; s < len;) {
                const char *nl = memchr(t + s, '\n', len - s);
                size_t end = nl ? (size_t)(nl - t) : len, n = end - s;
                while (n > 0 && (t[s + n - 1] == '\r' || t[s + n - 1] == '\n'))
                    n--;
                if (n)
                    check_line(t + s, n, -1, 1);
                s = end + 1;
            }
        }
        free(t);
    }
    closedir(d);
}

/* ---- the block reader ------------------------------------------------------------ */

/* Lines as the getline loop split them: at '\n', trailing '\r'/'\n' removed, empty
 * lines skipped.  The reader must hand out the same, however reads cut them. */
static void check_reader(void)
{
    char path[] = "/tmp/sg_test_batch_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    unlink(path);
    size_t cap = 3u << 20, n = 0;
    char *in = malloc(cap);
    unsigned seed = 7;
    for (int i = 0; n < cap - 600000; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 8) % 300;
        if (i == 500)
            len = 400000;                        /* longer than the first buffer */
        for (size_t k = 0; k < len; k++)
            in[n++] = (char)('a' + (k + (size_t)i) % 26);
        if (i % 7 == 0)
            in[n++] = '\r';
        if (i % 11 == 0)
            in[n++] = '\0';
        in[n++] = '\n';
        if (i % 13 == 0)
            in[n++] = '\n';
    }
    memcpy(in + n, "last line, no ending\r", 21);
    n += 21;
    CHECK(write(fd, in, n) == (ssize_t)n);
    lseek(fd, 0, SEEK_SET);
    sg_batch_io io;
    sg_batch_io_init(&io, fd, -1);
    size_t pos = 0, lines = 0, bad = 0;
    char *line;
    size_t len;
    int k;
    while ((k = sg_batch_next_line(&io, &line, &len)) > 0) {
        /* the next line the reference split gives */
        size_t want = 0, start = pos;
        for (;;) {
            const char *nl = memchr(in + pos, '\n', n - pos);
            size_t end = nl ? (size_t)(nl - in) : n;
            start = pos;
            want = end - pos;
            while (want > 0 && (in[start + want - 1] == '\r' || in[start + want - 1] == '\n'))
                want--;
            pos = end + 1;
            if (want || pos > n)
                break;
        }
        if (len != want || memcmp(line, in + start, len) != 0)
            bad++;
        lines++;
    }
    CHECK(k == 0);
    CHECK(bad == 0);
    CHECK(lines > 10000);
    CHECK(pos >= n);
    sg_batch_io_close(&io);
    close(fd);
    free(in);
}

/* Answers reach the output in order and whole, in blocks. */
static void check_writer(void)
{
    char path[] = "/tmp/sg_test_batch_out_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    unlink(path);
    sg_batch_io io;
    sg_batch_io_init(&io, -1, fd);
    for (int i = 0; i < 100000; i++)
        CHECK(sg_batch_write_error(&io.out, i % 2 ? "odd" : "even") == 0);
    CHECK(sg_batch_io_close(&io) == 0);
    off_t size = lseek(fd, 0, SEEK_END);
    CHECK(size == 50000 * (off_t)(sizeof "{\"decision\":\"deny\",\"error\":\"odd\"}\n" - 1)
                      + 50000 * (off_t)(sizeof "{\"decision\":\"deny\",\"error\":\"even\"}\n" - 1));
    close(fd);
    /* out of memory while an answer is written: -1, the buffer as it was */
    sg_batch_buf b = { NULL, 0, 0 };
    CHECK(sg_batch_write_error(&b, "first") == 0);
    size_t before = b.len;
    char big[5000];                             /* more than the first block holds */
    memset(big, 'x', sizeof big - 256);
    memcpy(big + sizeof big - 256, all_bytes, 256);
    long fails = 0;
    for (long nth = 1; nth < 50; nth++) {
        sg_alloc_fail_after(nth);
        int r = sg_batch_write_error(&b, big);
        sg_alloc_fail_after(0);
        if (r < 0) {
            fails++;
            CHECK(b.len == before);
        } else {
            CHECK(b.len > before + sizeof big);
            b.len = before;
        }
    }
    CHECK(fails > 0);
    free(b.s);
}

/* ---- sg_batch_run: one thread or several, the same answers in the same order ---- */

/* a pure check under the default pack, as the CLI's batch_answer makes it */
static int pure_answer(void *ud, sgr_ctx *ctx, char *line, size_t n, sg_batch_buf *out)
{
    const sgr_table *t = ud;
    sg_batch_req req;
    const char *err = sg_batch_parse(line, n, &req);
    if (err)
        return sg_batch_write_error(out, err);
    sgr_opts so = { req.cwd ? req.cwd : SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
    const sgr_result *r = sgr_eval(ctx, req.cmd, req.cmd_len, &so);
    sg_batch_out v = { r->decision, r->rule_id, r->message, r->hint ? r->hint : "", 0, 0.0, NULL, NULL, NULL };
    int w = sg_batch_write(out, t, r, &v);
    sg_batch_req_free(&req);
    return w;
}

static sg_batch_buf run_input;          /* JSON lines: every case command, several times */
static size_t run_lines;

static void add_run_input(const char *path)
{
    size_t len;
    char *t = sg_slurp(path, &len);
    if (!t)
        return;
    for (char *l = t; *l;) {
        char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        const char *semi = n ? memchr(l, ';', n) : NULL;
        if (n && l[0] != '#' && semi) {
            put_raw(&run_input, run_lines % 3 ? "{\"cmd\": " : "{\"cwd\": \"/tmp\", \"cmd\": ");
            put_json_string(&run_input, l, (size_t)(semi - l), 0);
            put_raw(&run_input, run_lines % 17 == 0 ? ", \"x\": 1}\n" : run_lines % 29 == 0 ? "\n\r\n" : "}\n");
            run_lines++;
        }
        l += n + (nl ? 1 : 0);
    }
    free(t);
}

/* the input through sg_batch_run on `threads` threads: its output, *r its result */
static char *run_batch_on(int threads, size_t *len, int *r, long fail_nth)
{
    int in = memfd_create("in", 0), out = memfd_create("out", 0);
    CHECK(in >= 0 && out >= 0);
    CHECK(write(in, run_input.s, run_input.len) == (ssize_t)run_input.len);
    lseek(in, 0, SEEK_SET);
    sg_batch_io io;
    sg_batch_io_init(&io, in, out);
    if (fail_nth)
        sg_alloc_fail_after(fail_nth);
    *r = sg_batch_run(&io, packs[0]->t, ctxs[0], threads, pure_answer, (void *)packs[0]->t);
    sg_alloc_fail_after(0);
    sg_batch_io_close(&io);
    off_t size = lseek(out, 0, SEEK_END);
    char *o = malloc((size_t)size + 1);
    CHECK(pread(out, o, (size_t)size, 0) == size);
    o[size] = '\0';
    *len = (size_t)size;
    close(in);
    close(out);
    return o;
}

static size_t count_lines(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\n';
    return k;
}

static void check_run(void)
{
    for (int rep = 0; rep < 3; rep++) {
        add_run_input("packs/default.cases");
        add_run_input("packs/gaia.cases");
    }
    CHECK(run_lines > 1000);
    size_t l1, l2, l4;
    int r1, r2, r4;
    char *o1 = run_batch_on(1, &l1, &r1, 0), *o2 = run_batch_on(2, &l2, &r2, 0), *o4 = run_batch_on(4, &l4, &r4, 0);
    CHECK(r1 == 0 && r2 == 0 && r4 == 0);
    CHECK(count_lines(o1, l1) == run_lines);
    CHECK(l1 == l2 && memcmp(o1, o2, l1) == 0);
    CHECK(l1 == l4 && memcmp(o1, o4, l1) == 0);
    /* and the same as the line-at-a-time reader with the same answers */
    int in = memfd_create("in", 0);
    CHECK(write(in, run_input.s, run_input.len) == (ssize_t)run_input.len);
    lseek(in, 0, SEEK_SET);
    sg_batch_io io;
    sg_batch_io_init(&io, in, -1);
    sg_batch_buf ref = { NULL, 0, 0 };
    char *line;
    size_t n;
    while (sg_batch_next_line(&io, &line, &n) > 0)
        CHECK(pure_answer((void *)packs[0]->t, ctxs[0], line, n, &ref) == 0);
    sg_batch_io_close(&io);
    close(in);
    CHECK(ref.len == l1 && memcmp(ref.s, o1, l1) == 0);
    sg_free(ref.s);
    /* memory running out on the calling thread: every line still gets exactly one
     * answer, its own or the out-of-memory line, in order */
    long total = sg_alloc_fail_after(0);
    (void)total;
    int swept = 0;
    for (long nth = 1; nth < 4000; nth += nth < 40 ? 1 : 97) {
        size_t lf;
        int rf;
        char *of = run_batch_on(4, &lf, &rf, nth);
        if (rf == 0) {
            CHECK(count_lines(of, lf) == run_lines);
            size_t a = 0, b = 0, bad = 0;
            while (a < lf && b < l1) {          /* line by line: the answer, or OOM */
                const char *ea = memchr(of + a, '\n', lf - a), *eb = memchr(o1 + b, '\n', l1 - b);
                size_t na = (size_t)(ea - (of + a)) + 1, nb = (size_t)(eb - (o1 + b)) + 1;
                if (!(na == nb && memcmp(of + a, o1 + b, na) == 0)
                    && !(na == sizeof SG_BATCH_OOM_LINE - 1 && memcmp(of + a, SG_BATCH_OOM_LINE, na) == 0))
                    bad++;
                a += na;
                b += nb;
            }
            CHECK(bad == 0);
            swept++;
        }
        free(of);
    }
    CHECK(swept > 0);
    free(o1);
    free(o2);
    free(o4);
    free(run_input.s);
}

/* sg_json_has_nul over the spellings of a NUL in JSON text, and the text that only
 * looks like one: it decides whether the hooks, the server and --batch refuse a
 * request, so a miss is a command decided as less than it is, and a false hit a
 * benign command refused. */
static void nul_spellings(void)
{
    static const struct { const char *text; size_t len; int nul; } v[] = {
        { "{\"cmd\":\"ls\\u0000; rm -rf /\"}", 0, 1 },          /* the escape */
        { "{\"cmd\":\"ls\\u0000\"}", 0, 1 },                     /* at the end of a string */
        { "{\"c\\u0000md\":\"ls\"}", 0, 1 },                     /* in a key */
        { "{\"cmd\":\"a\\\\\\u0000b\"}", 0, 1 },             /* an escaped backslash, then the escape */
        { "{\"cmd\":\"ls\0; rm\"}", 16, 1 },                    /* a raw NUL byte */
        { "{\"cmd\":\"echo \\\\u0000\"}", 0, 0 },              /* an escaped backslash and text u0000 */
        { "{\"cmd\":\"echo \\u00001\"}", 0, 1 },                 /* the escape, then a digit */
        { "{\"cmd\":\"echo \\u0001\"}", 0, 0 },                  /* another control character */
        { "{\"cmd\":\"echo u0000 \\\\\"}", 0, 0 },             /* the letters alone, a final backslash */
        { "{\"cmd\":\"\\u000\"}", 0, 0 },                        /* too short to be the escape */
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        size_t n = v[i].len ? v[i].len : strlen(v[i].text);
        int got = sg_json_has_nul(v[i].text, n);
        if (got != v[i].nul)
            fprintf(stderr, "  sg_json_has_nul #%zu: %d, want %d\n", i, got, v[i].nul);
        CHECK(got == v[i].nul);
    }
}

int main(void)
{
    nul_spellings();
    for (int i = 1; i < 256; i++)
        all_bytes[i - 1] = (char)i;
    for (int p = 0; p < NPACKS; p++) {
        CHECK(sg_policy_load(pack_names[p], NULL, &packs[p]) == 0);
        if (!packs[p])
            return sg_test_summary();
        ctxs[p] = sgr_ctx_new(packs[p]->t);
        CHECK(ctxs[p] != NULL);
    }
    check_command(all_bytes, 255, 1);
    add_cases("packs/default.cases", 1);
    add_cases("packs/readonly.cases", 1);
    add_cases("packs/gaia.cases", 1);
    add_cases("packs/ironclaw.cases", 1);
    add_corpus("../fuzz/corpus/eval", 0);
    add_corpus("../fuzz/corpus/shparse", 0);
    add_corpus("../fuzz/corpus/batch", 1);
    check_reader();
    check_writer();
    check_run();
    printf("%ld JSON lines (%ld read by the fast path), %ld answers compared, %ld differ\n", n_lines, n_fast,
           n_answers, n_mismatch);
    CHECK(n_fast > n_lines / 3);
    for (int p = 0; p < NPACKS; p++) {
        sgr_ctx_free(ctxs[p]);
        sg_policy_free(packs[p]);
    }
    return sg_test_summary();
}
