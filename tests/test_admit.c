/* test_admit.c - the admission stores (admit/admit_int.h, file.c) and the decision
 * log (admit/declog.h): exact window edges on an injected clock, a clock stepped
 * back, corrupt state refused then reset, approvals, messages, masking, log
 * rotation and a full disk, and the cost of one admission. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "check.h"
#include "admit/admit_int.h"
#include "admit/declog.h"

#define SEC 1000000000LL

static int64_t fake_now;                 /* the caller's clock in every request */

static char dir[128];

static sga_limit gaia(void)
{
    sga_limit l = { "shell", 2, { 3, 10 }, { 10, 60 }, 0 };
    return l;
}

/* admit one command at fake_now; returns the result */
static sga_res go(sga_store *a, const char *agent, const sga_limit *l, uint32_t nl, int *rc)
{
    sga_req q;
    memset(&q, 0, sizeof q);
    q.now_ns = fake_now;
    q.agent = agent;
    q.session = agent;
    q.pack = "gaia";
    q.limits = l;
    q.nlimits = nl;
    sga_res r;
    char err[600];
    *rc = sga_store_check(a, &q, &r, err, sizeof err);
    return r;
}

static void test_windows(sga_store *a)
{
    sga_limit l = gaia();
    int rc;
    fake_now = 1000 * SEC;
    for (int i = 0; i < 3; i++) {
        sga_res r = go(a, "a", &l, 1, &rc);
        CHECK(rc == 0 && r.admitted && !r.rate_limited);
        fake_now += SEC;                                  /* 1000, 1001, 1002 */
    }
    /* the 4th inside 10 s is refused with the exact wait until 1000 + 10 */
    fake_now = 1009 * SEC + SEC / 2;
    sga_res r = go(a, "a", &l, 1, &rc);
    CHECK(rc == 0 && !r.admitted && r.rate_limited && r.window == 0);
    CHECK(r.wait_ns == SEC / 2);
    /* one nanosecond early: still refused, 1 ns to wait */
    fake_now = 1010 * SEC - 1;
    r = go(a, "a", &l, 1, &rc);
    CHECK(r.rate_limited && r.wait_ns == 1);
    /* exactly at the edge the oldest leaves the window */
    fake_now = 1010 * SEC;
    r = go(a, "a", &l, 1, &rc);
    CHECK(r.admitted && !r.rate_limited);
    /* a refused command took no slot: another agent is independent */
    r = go(a, "b", &l, 1, &rc);
    CHECK(r.admitted);
    /* the minute window: 10 admissions spaced 5 s apart, then the 11th waits for
     * the first of them to be 60 s old */
    fake_now = 2000 * SEC;
    for (int i = 0; i < 10; i++) {
        r = go(a, "c", &l, 1, &rc);
        CHECK(r.admitted);
        fake_now += 5 * SEC;
    }
    r = go(a, "c", &l, 1, &rc);                          /* at 2050 */
    CHECK(r.rate_limited && r.window == 1 && r.wait_ns == 10 * SEC);
    fake_now = 2060 * SEC;
    r = go(a, "c", &l, 1, &rc);
    CHECK(r.admitted);
    /* no limits apply: admitted, nothing recorded */
    r = go(a, "c", NULL, 0, &rc);
    CHECK(rc == 0 && r.admitted);
}

static void test_clock_back(sga_store *a)
{
    sga_limit l = { "burst", 1, { 2 }, { 10 }, 0 };
    int rc;
    fake_now = 5000 * SEC;
    CHECK(go(a, "k", &l, 1, &rc).admitted);
    CHECK(go(a, "k", &l, 1, &rc).admitted);
    /* the clock jumps back an hour: time stays at the newest seen, still refused */
    fake_now = 1400 * SEC;
    sga_res r = go(a, "k", &l, 1, &rc);
    CHECK(r.rate_limited && r.wait_ns == 10 * SEC && r.now_ns == 5000 * SEC);
    fake_now = 5010 * SEC;
    CHECK(go(a, "k", &l, 1, &rc).admitted);
}

static void test_corrupt(sga_store *a, const char *path)
{
    sga_limit l = gaia();
    int rc;
    fake_now = 9000 * SEC;
    CHECK(go(a, "z", &l, 1, &rc).admitted);
    /* flip one byte in the middle */
    int fd = open(path, O_RDWR);
    struct stat st;
    fstat(fd, &st);
    unsigned char b;
    CHECK(pread(fd, &b, 1, st.st_size / 2) == 1);
    b ^= 0x40;
    CHECK(pwrite(fd, &b, 1, st.st_size / 2) == 1);
    close(fd);
    sga_req q;
    memset(&q, 0, sizeof q);
    q.now_ns = fake_now;
    q.agent = "z";
    q.pack = "gaia";
    q.limits = &l;
    q.nlimits = 1;
    sga_res r;
    char err[600];
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == -1 && !r.admitted);
    CHECK(strstr(err, "corrupt (checksum mismatch)") && strstr(err, "state reset"));
    /* truncated */
    CHECK(truncate(path, 30) == 0);
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == -1 && strstr(err, "bad magic") == NULL
          && strstr(err, "corrupt"));
    /* garbage */
    FILE *f = fopen(path, "w");
    fputs("hello, not a state file at all; hello, not a state file at all; hello", f);
    fclose(f);
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == -1 && strstr(err, "bad magic"));
    CHECK(a->be->reset(a, err, sizeof err) == 0);
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && r.admitted);
}

static void test_approvals(sga_store *a)
{
    sga_req q;
    memset(&q, 0, sizeof q);
    fake_now = 20000 * SEC;
    q.now_ns = fake_now;
    q.agent = "ag";
    q.session = "s1";
    q.pack = "p";
    q.ask = 1;
    memset(q.approval, 0xab, sizeof q.approval);
    q.cmd = "git push origin main";
    q.cwd = "/w";
    q.progs = "git";
    q.progs_len = 4;
    sga_res r;
    sga_pending p;
    char err[600];
    uint8_t other[SGA_APPROVAL_LEN];
    memset(other, 0xcd, sizeof other);
    /* unknown id: nothing pending */
    CHECK(a->be->approve(a, other, SGA_APPROVE_ONCE, "s1", fake_now, &p, err, sizeof err) == 1);
    /* an unapproved ask is not admitted and becomes pending */
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && !r.admitted && !r.approved);
    CHECK(a->be->approve(a, q.approval, SGA_APPROVE_ONCE, "s1", fake_now, &p, err, sizeof err) == 0);
    CHECK_STR(p.cmd, "git push origin main");
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && r.admitted && r.approved == SGA_APPROVE_ONCE);
    /* once is used up */
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && !r.admitted && !r.approved);
    /* session: for this session only, until it changes */
    CHECK(a->be->approve(a, q.approval, SGA_APPROVE_SESSION, "s1", fake_now, &p, err, sizeof err) == 0);
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && r.admitted && r.approved == SGA_APPROVE_SESSION);
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && r.admitted);
    q.session = "s2";
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && !r.admitted);
    /* an approved command still obeys the limits */
    sga_limit l = { "push", 1, { 1 }, { 60 }, 0 };
    q.session = "s1";
    q.limits = &l;
    q.nlimits = 1;
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && r.admitted);
    CHECK(sga_store_check(a, &q, &r, err, sizeof err) == 0 && !r.admitted && r.rate_limited);
}

static void test_messages(void)
{
    char m[256];
    sga_limit l = gaia();
    sga_limit_message(m, sizeof m, NULL, &l, 0, 0);
    CHECK_STR(m, "Rate limit: max 3 commands per 10 seconds");
    sga_limit_message(m, sizeof m,
                      "Rate limit: max {count} commands per {per}. Wait {wait}s. Please wait {wait} seconds.", &l, 1,
                      2345000000LL);
    CHECK_STR(m, "Rate limit: max 10 commands per minute. Wait 2.3s. Please wait 2.3 seconds.");
    sga_limit_message(m, sizeof m, "{name}: {count}/{window}s {per} {unknown}", &l, 0, 0);
    CHECK_STR(m, "shell: 3/10s 10 seconds {unknown}");
    sga_limit h = { "x", 1, { 300 }, { 7200 }, 0 };
    sga_limit_message(m, sizeof m, "{per}", &h, 0, 0);
    CHECK_STR(m, "2 hours");
    char tiny[8];
    sga_limit_message(tiny, sizeof tiny, NULL, &l, 0, 0);
    CHECK(strlen(tiny) == 7);
}

static void mask_is(const char *in, const char *want)
{
    char out[1024];
    sga_mask_line(in, strlen(in), out, sizeof out);
    CHECK_STR(out, want);
}

static void test_masking(void)
{
    mask_is("GITHUB_TOKEN=abc123 gh pr list", "GITHUB_TOKEN=*** gh pr list");
    mask_is("AWS_SECRET_ACCESS_KEY='x y' DB_PASSWORD=\"p w\" ls", "AWS_SECRET_ACCESS_KEY='***' DB_PASSWORD=\"***\" ls");
    mask_is("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv", "export OPENAI_API_KEY=***");
    mask_is("curl -H 'Authorization: Bearer abc.def' https://x", "curl -H 'Authorization: Bearer ***' https://x");
    mask_is("curl -H \"X-Api-Key: k123\" -H 'Accept: json' u", "curl -H \"X-Api-Key: ***\" -H 'Accept: json' u");
    mask_is("mysql -u root -psecret db", "mysql -u root -p*** db");
    mask_is("mysql -u root -p secret db", "mysql -u root -p *** db");
    mask_is("mkdir -p build && ssh -p 22 host", "mkdir -p build && ssh -p 22 host");
    mask_is("tool --password hunter2 --user bob", "tool --password *** --user bob");
    mask_is("tool --token=abc --name=x", "tool --token=*** --name=x");
    mask_is("echo AKIAIOSFODNN7EXAMPLE", "echo AKIA***");
    mask_is("git clone https://ghp_0123456789abcdefghijABCDEFGHIJ@github.com/x",
            "git clone https://ghp_***@github.com/x");
    mask_is("git clone https://bob:s3cret@host/repo", "git clone https://bob:***@host/repo");
    mask_is("echo xoxb-1234567890-abcdef", "echo xoxb-***");
    mask_is("GIT_AUTHOR_NAME=bob git commit", "GIT_AUTHOR_NAME=bob git commit");
    mask_is("ls -la", "ls -la");
    /* argv, already unquoted */
    sgr_word w[4] = { { "curl", 4, 0, { 0, 0 } }, { "-H", 2, 0, { 0, 0 } },
                      { "Authorization: token abc", 24, 0, { 0, 0 } }, { "--password", 10, 0, { 0, 0 } } };
    char buf[256];
    const char *out[4];
    CHECK(sga_mask_argv(w, 4, buf, sizeof buf, out) == 0);
    CHECK_STR(out[2], "Authorization: token ***");
    CHECK_STR(out[3], "--password");
}

static void test_log(void)
{
    char path[200], rot[256], err[600];
    snprintf(path, sizeof path, "%s/decisions.log", dir);
    snprintf(rot, sizeof rot, "%s.1", path);
    sga_declog *l = sga_declog_open(path, 200, err, sizeof err);
    CHECK(l != NULL);
    const char line[] = "{\"x\":\"0123456789012345678901234567890123456789012345678901234567890123456789\"}\n";
    for (int i = 0; i < 7; i++)
        CHECK(sga_declog_append(l, line, sizeof line - 1, err, sizeof err) == 0);
    sga_declog_close(l);
    struct stat a, b;
    CHECK(stat(path, &a) == 0 && stat(rot, &b) == 0);
    /* never over the cap; whole lines only; 7 lines over two files */
    CHECK(a.st_size <= 200 && b.st_size <= 200);
    CHECK((a.st_size + b.st_size) % (long)(sizeof line - 1) == 0);
    CHECK(a.st_size + b.st_size >= 2 * (long)(sizeof line - 1));
    /* a full disk: a clear error, and nothing else happens */
    l = sga_declog_open("/dev/full", 0, err, sizeof err);
    CHECK(l != NULL);
    if (l) {
        CHECK(sga_declog_append(l, line, sizeof line - 1, err, sizeof err) == -1);
        CHECK(strstr(err, "No space left on device") != NULL);
        sga_declog_close(l);
    }
    CHECK(sga_declog_open("/nonexistent/dir/log", 0, err, sizeof err) == NULL);
}

/* The cost of one admission through the file backend (lock, read, verify,
 * write, fsync, rename), printed for docs/admission.md. */
static void bench(sga_store *a)
{
    sga_limit l = { "bench", 2, { 1000000, 1000000 }, { 1, 2 }, 0 };
    l.count[0] = l.count[1] = 100;
    int rc, n = 200;
    struct timespec t0, t1;
    fake_now = 50000 * SEC;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < n; i++) {
        fake_now += SEC;
        go(a, "bench", &l, 1, &rc);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) / n;
    printf("admission (file backend, fsync, %s): %.1f us each\n", dir, us);
    CHECK(rc == 0);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");     /* TMPDIR=/dev/shm measures without a disk */
    snprintf(dir, sizeof dir, "%s/sg_admit_XXXXXX", tmp && tmp[0] == '/' && strlen(tmp) < 100 ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256], err[600];
    snprintf(path, sizeof path, "%s/sub/state", dir);
    sga_store *a = sga_file_open(path, err, sizeof err);
    CHECK(a != NULL);
    test_windows(a);
    test_clock_back(a);
    test_corrupt(a, path);
    test_approvals(a);
    bench(a);
    sga_store_close(a);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    test_messages();
    test_masking();
    test_log();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return sg_test_summary();
}
