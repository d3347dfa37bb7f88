/* test_pathcache.c - the path cache answers exactly what lstat+readlink answer
 * after every sgr_pc_begin: the kinds, hits, every way a name can change under a
 * cached entry (including a directory or an ancestor renamed away), both bounds,
 * the uncached mode, failing allocations, too few file descriptors, non-local
 * filesystems, a random differential run against lstat, and (as root) a mount
 * over a cached directory and one propagated from a peer namespace, each
 * reported by exactly one begin, changes through an overlay mount, and a
 * permission change seen by an unprivileged user. */
#include "runtime/pathcache.h"
#include "common/alloc.h"
#include "check.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char T[64];               /* this run's temporary directory */
static int caching;              /* T and every directory above it are on a cached fs */

/* T/rel, in one of a few rotating buffers (so a call can take two of them). */
static const char *at(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *at(const char *fmt, ...)
{
    static char bufs[8][PATH_MAX];
    static int k;
    char *b = bufs[k++ & 7];
    int n = snprintf(b, PATH_MAX, "%s/", T);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + n, PATH_MAX - (size_t)n, fmt, ap);
    va_end(ap);
    return b;
}

/* Create an empty file; 0 when that failed (the random test expects failures). */
static int try_touch(const char *p)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* Tests that need a private namespace, another user or a lower limit run in a
 * forked child.  The child ends with child_exit (status 0: all its checks held);
 * exit 77 means it could not set up, and the parent prints why it was skipped. */
static void child_exit(int fails_before)
{
    fflush(NULL);
    _exit(sg_t_fail != fails_before);
}

static int child_wait(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

static void child_verdict(int st, const char *skipped)
{
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        printf("note: %s\n", skipped);
        return;
    }
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void touch(const char *p)
{
    if (!try_touch(p))
        fprintf(stderr, "  setup: cannot create %s: %s\n", p, strerror(errno));
}

/* The oracle: lstat + readlink exactly as pathcache.h specifies the answer. */
static sgr_pc_kind ref(const char *path, char *link, size_t cap, size_t *len)
{
    struct stat st;
    *len = 0;
    if (cap)
        link[0] = '\0';
    if (lstat(path, &st) != 0)
        return SGR_PC_MISSING;
    if (S_ISDIR(st.st_mode))
        return SGR_PC_DIR;
    if (!S_ISLNK(st.st_mode))
        return SGR_PC_OTHER;
    char t[PATH_MAX];
    ssize_t ll = readlink(path, t, sizeof t);
    if (ll > 0 && (size_t)ll < cap && ll < (ssize_t)sizeof t) {
        memcpy(link, t, (size_t)ll);
        link[ll] = '\0';
        *len = (size_t)ll;
    }
    return SGR_PC_LINK;
}

static const char *kname(sgr_pc_kind k)
{
    static const char *const n[] = { "MISSING", "DIR", "LINK", "OTHER" };
    return (unsigned)k < 4 ? n[k] : "?";
}

/* Look path up and compare with the oracle; 1 when they agree. */
static int same(sgr_pcache *pc, const char *path)
{
    char a[256], b[256];
    size_t al = 99, bl;
    memset(a, 'x', sizeof a);
    sgr_pc_kind ka = sgr_pc_lstat(pc, path, a, sizeof a, &al);
    sgr_pc_kind kb = ref(path, b, sizeof b, &bl);
    if (ka == kb && al == bl && memcmp(a, b, al + (ka == SGR_PC_LINK && al)) == 0)
        return 1;
    fprintf(stderr, "  %s: cache says %s \"%.*s\", lstat says %s \"%s\"\n", path, kname(ka), (int)(al < 256 ? al : 0),
            a, kname(kb), b);
    return 0;
}

/* The same through sgr_pc_lstat_next, which checks only the last component, and
 * sgr_pc_kind_next, asked before it every other time (so that it too meets
 * both paths it has not seen and paths sgr_pc_lstat_next has just cached). */
static int same_next(sgr_pcache *pc, const char *path)
{
    static unsigned calls;
    char a[256], b[256];
    size_t al = 99, bl, n = strlen(path), last = (size_t)(strrchr(path, '/') - path) + 1;
    memset(a, 'x', sizeof a);
    int first = calls++ & 1;
    sgr_pc_kind kk = first ? sgr_pc_kind_next(pc, path, n, last) : SGR_PC_MISSING;
    sgr_pc_kind ka = sgr_pc_lstat_next(pc, path, n, last, a, sizeof a, &al);
    if (!first)
        kk = sgr_pc_kind_next(pc, path, n, last);
    sgr_pc_kind kb = ref(path, b, sizeof b, &bl);
    if (ka == kb && kk == kb && al == bl && memcmp(a, b, al + (ka == SGR_PC_LINK && al)) == 0)
        return 1;
    fprintf(stderr, "  next %s: cache says %s (kind alone %s), lstat says %s\n", path, kname(ka), kname(kk),
            kname(kb));
    return 0;
}

static uint64_t hits(const sgr_pcache *pc)
{
    uint64_t h;
    sgr_pc_stats(pc, &h, NULL, NULL);
    return h;
}

static uint64_t misses(const sgr_pcache *pc)
{
    uint64_t m;
    sgr_pc_stats(pc, NULL, &m, NULL);
    return m;
}

static uint64_t flushes(const sgr_pcache *pc)
{
    uint64_t f;
    sgr_pc_stats(pc, NULL, NULL, &f);
    return f;
}

/* Look up, expect kind and (for a link) target; 1 when right. */
static int is(sgr_pcache *pc, const char *path, sgr_pc_kind want, const char *target)
{
    char l[256];
    size_t ll = 99;
    sgr_pc_kind k = sgr_pc_lstat(pc, path, l, sizeof l, &ll);
    size_t tl = target ? strlen(target) : 0;
    if (k == want && ll == tl && (!target || strcmp(l, target) == 0))
        return 1;
    fprintf(stderr, "  %s: got %s \"%.*s\", want %s \"%s\"\n", path, kname(k), (int)(ll < 256 ? ll : 0), l,
            kname(want), target ? target : "");
    return 0;
}

/* A second lookup is a hit (when caching) with the same answer. */
static void is_twice(sgr_pcache *pc, const char *path, sgr_pc_kind want, const char *target)
{
    CHECK(is(pc, path, want, target));
    uint64_t h = hits(pc), m = misses(pc);
    CHECK(is(pc, path, want, target));
    if (caching) {
        CHECK(hits(pc) == h + 1);
        CHECK(misses(pc) == m);
    }
}

static int fs_cached(const char *p)
{
    struct statfs sf;
    if (statfs(p, &sf) != 0)
        return 0;
    uint32_t t = (uint32_t)sf.f_type;
    return t == 0xEF53u || t == 0x58465342u || t == 0x9123683Eu || t == 0x01021994u || t == 0x794C7630u;
}

/* ------------------------------------------------------------------- kinds */

static void test_kinds(void)
{
    mkdir(at("k"), 0755);
    mkdir(at("k/d"), 0755);
    touch(at("k/f"));
    symlink("some/target", at("k/l"));
    sgr_pcache *pc = sgr_pc_new(0);
    CHECK(pc != NULL);
    sgr_pc_begin(pc);
    is_twice(pc, at("k/d"), SGR_PC_DIR, NULL);
    is_twice(pc, at("k/f"), SGR_PC_OTHER, NULL);
    is_twice(pc, at("k/nope"), SGR_PC_MISSING, NULL);
    is_twice(pc, at("k/l"), SGR_PC_LINK, "some/target");
    CHECK(is(pc, at("k/f/under-a-file"), SGR_PC_MISSING, NULL));  /* ENOTDIR: never cached */
    CHECK(is(pc, "/dev/null", SGR_PC_OTHER, NULL));

    /* nothing pending: begin drops nothing */
    uint64_t f = flushes(pc), h = hits(pc);
    sgr_pc_begin(pc);
    sgr_pc_begin(pc);
    CHECK(flushes(pc) == f);
    CHECK(is(pc, at("k/l"), SGR_PC_LINK, "some/target"));
    if (caching)
        CHECK(hits(pc) == h + 1);

    /* a target that does not fit with its NUL: LINK, length 0; exactly fits: whole */
    for (int round = 0; round < 2; round++) {         /* from lstat, then from the cache */
        char l[12];
        size_t ll = 99;
        memset(l, 'x', sizeof l);
        CHECK(sgr_pc_lstat(pc, at("k/l"), l, 11, &ll) == SGR_PC_LINK && ll == 0 && l[0] == '\0');
        CHECK(sgr_pc_lstat(pc, at("k/l"), l, 12, &ll) == SGR_PC_LINK && ll == 11 && strcmp(l, "some/target") == 0);
        CHECK(sgr_pc_lstat(pc, at("k/l"), NULL, 0, &ll) == SGR_PC_LINK && ll == 0);
        CHECK(sgr_pc_lstat(pc, at("k/f"), l, sizeof l, &ll) == SGR_PC_OTHER && ll == 0);
    }

    /* paths that are not canonical are answered by lstat itself, never cached */
    const char *odd[] = { at("k//f"), at("k/./f"), at("k/d/../f"), at("k/f/"), at("k/d/."), at("k/d/.."), "/", "" };
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
        uint64_t h0 = hits(pc);
        CHECK(same(pc, odd[i]));
        CHECK(same(pc, odd[i]));
        CHECK(hits(pc) == h0);
    }
    /* the walker's entry point: the same answers, cached when the last component
     * is a name; ".", ".." and a path past the bound are never cached */
    const char *names[] = { at("k/d"), at("k/f"), at("k/nope"), at("k/l"), at("k/d/f"), at("k/f/x") };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s", names[i]);
        CHECK(same_next(pc, p));
        uint64_t h1 = hits(pc);
        CHECK(same_next(pc, p));
        if (caching && i != 5)                        /* ENOTDIR is never cached */
            CHECK(hits(pc) == h1 + 2);     /* sgr_pc_lstat_next and sgr_pc_kind_next */
    }
    const char *dots[] = { at("k/d/."), at("k/d/.."), at("k/."), at("k/..") };
    for (size_t i = 0; i < sizeof dots / sizeof *dots; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s", dots[i]);
        uint64_t h1 = hits(pc);
        CHECK(same_next(pc, p) && same_next(pc, p));
        CHECK(hits(pc) == h1);
    }
    char rel[] = "test_pathcache.c";                /* cwd is tests/ */
    CHECK(is(pc, rel, SGR_PC_OTHER, NULL));
    char big[SGR_PC_MAX_PATH + 64];
    snprintf(big, sizeof big, "%s/k/%0*d", T, (int)(sizeof big - strlen(T) - 5), 7);
    uint64_t h0 = hits(pc);
    CHECK(same(pc, big) && same(pc, big));
    CHECK(same_next(pc, big) && same_next(pc, big));
    CHECK(hits(pc) == h0);
    sgr_pc_free(pc);
}

/* --------------------------------------------------------------- staleness */

static void test_stale(void)
{
    sgr_pcache *pc = sgr_pc_new(0);
    mkdir(at("s1"), 0755);
    touch(at("s1/f"));
    mkdir(at("s2"), 0755);
    touch(at("s2/f"));
    mkdir(at("s2src"), 0755);       /* never looked into: not watched */
    symlink("renamed-target", at("s2src/ln"));
    symlink("same-dir-target", at("s2/ln"));
    mkdir(at("s3"), 0755);
    sgr_pc_begin(pc);

    /* a file replaced by a symlink: unlink + symlink */
    is_twice(pc, at("s1/f"), SGR_PC_OTHER, NULL);
    unlink(at("s1/f"));
    symlink("/etc/new-target", at("s1/f"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s1/f"), SGR_PC_LINK, "/etc/new-target");

    /* a symlink renamed over a cached file from a directory nobody watches (the
     * only change after caching, reported only as IN_MOVED_TO) */
    is_twice(pc, at("s2/f"), SGR_PC_OTHER, NULL);
    rename(at("s2src/ln"), at("s2/f"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s2/f"), SGR_PC_LINK, "renamed-target");
    /* a cached symlink renamed away to there (IN_MOVED_FROM only) */
    is_twice(pc, at("s2/ln"), SGR_PC_LINK, "same-dir-target");
    rename(at("s2/ln"), at("s2src/ln"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s2/ln"), SGR_PC_MISSING, NULL);
    /* and a cached file removed (IN_DELETE only) */
    is_twice(pc, at("s2/f"), SGR_PC_LINK, "renamed-target");
    unlink(at("s2/f"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s2/f"), SGR_PC_MISSING, NULL);

    /* a missing name created as a symlink */
    is_twice(pc, at("s3/m"), SGR_PC_MISSING, NULL);
    symlink("t3", at("s3/m"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s3/m"), SGR_PC_LINK, "t3");

    /* a symlink replaced by a symlink elsewhere (the target text changes) */
    unlink(at("s3/m"));
    symlink("t3-other", at("s3/m"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s3/m"), SGR_PC_LINK, "t3-other");

    /* a directory, with d/x cached, renamed away and replaced by a symlink to
     * another directory whose x is a symlink: d/x must not be the old entry */
    mkdir(at("s4"), 0755);
    mkdir(at("s4/d"), 0755);
    touch(at("s4/d/x"));
    mkdir(at("s4/other"), 0755);
    symlink("other-x-target", at("s4/other/x"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s4/d"), SGR_PC_DIR, NULL);
    is_twice(pc, at("s4/d/x"), SGR_PC_OTHER, NULL);
    rename(at("s4/d"), at("s4/gone"));
    symlink("other", at("s4/d"));
    sgr_pc_begin(pc);
    CHECK(is(pc, at("s4/d"), SGR_PC_LINK, "other"));
    CHECK(is(pc, at("s4/d/x"), SGR_PC_LINK, "other-x-target"));
    CHECK(is(pc, at("s4/d/x"), SGR_PC_LINK, "other-x-target"));
    CHECK(is(pc, at("s4/gone/x"), SGR_PC_OTHER, NULL));

    /* ... and replaced by another directory (renamed in over it) */
    mkdir(at("s5"), 0755);
    mkdir(at("s5/d"), 0755);
    touch(at("s5/d/x"));
    mkdir(at("s5/new"), 0755);
    symlink("new-x", at("s5/new/x"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s5/d/x"), SGR_PC_OTHER, NULL);
    rename(at("s5/d"), at("s5/old"));
    rename(at("s5/new"), at("s5/d"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s5/d/x"), SGR_PC_LINK, "new-x");

    /* an ancestor two levels up renamed away: its own directory saw nothing */
    mkdir(at("s6"), 0755);
    mkdir(at("s6/a"), 0755);
    mkdir(at("s6/a/b"), 0755);
    touch(at("s6/a/b/c"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s6/a/b/c"), SGR_PC_OTHER, NULL);
    rename(at("s6/a"), at("s6/z"));
    mkdir(at("s6/a"), 0755);
    mkdir(at("s6/a/b"), 0755);
    symlink("/root/.ssh/id_rsa", at("s6/a/b/c"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s6/a/b/c"), SGR_PC_LINK, "/root/.ssh/id_rsa");
    is_twice(pc, at("s6/z/b/c"), SGR_PC_OTHER, NULL);

    /* an ancestor swapped with another directory in one syscall */
    mkdir(at("s7"), 0755);
    mkdir(at("s7/p"), 0755);
    mkdir(at("s7/p/q"), 0755);
    touch(at("s7/p/q/r"));
    mkdir(at("s7/o"), 0755);
    mkdir(at("s7/o/q"), 0755);
    sgr_pc_begin(pc);
    is_twice(pc, at("s7/p/q/r"), SGR_PC_OTHER, NULL);
    if (renameat2(AT_FDCWD, at("s7/p"), AT_FDCWD, at("s7/o"), RENAME_EXCHANGE) == 0) {
        sgr_pc_begin(pc);
        is_twice(pc, at("s7/p/q/r"), SGR_PC_MISSING, NULL);
        is_twice(pc, at("s7/o/q/r"), SGR_PC_OTHER, NULL);
    }

    /* a directory reached through a symlink is followed by lstat, not cached as
     * a directory: a change above its target, where nothing is watched, shows */
    mkdir(at("s9far"), 0755);
    mkdir(at("s9far/a"), 0755);
    mkdir(at("s9far/a/dir"), 0755);
    touch(at("s9far/a/dir/x"));
    mkdir(at("s9"), 0755);
    symlink(at("s9far/a/dir"), at("s9/d"));
    sgr_pc_begin(pc);
    CHECK(is(pc, at("s9/d/x"), SGR_PC_OTHER, NULL));
    CHECK(is(pc, at("s9/d/x"), SGR_PC_OTHER, NULL));
    rename(at("s9far/a"), at("s9far/b"));
    mkdir(at("s9far/a"), 0755);
    mkdir(at("s9far/a/dir"), 0755);
    symlink("moved", at("s9far/a/dir/x"));
    sgr_pc_begin(pc);
    CHECK(is(pc, at("s9/d/x"), SGR_PC_LINK, "moved"));

    /* the directory of a cached name removed and made again */
    mkdir(at("s8"), 0755);
    mkdir(at("s8/d"), 0755);
    sgr_pc_begin(pc);
    is_twice(pc, at("s8/d/n"), SGR_PC_MISSING, NULL);
    rmdir(at("s8/d"));
    mkdir(at("s8/d"), 0755);
    symlink("again", at("s8/d/n"));
    sgr_pc_begin(pc);
    is_twice(pc, at("s8/d/n"), SGR_PC_LINK, "again");
    sgr_pc_free(pc);
}

/* --------------------------------------------------------------- uncached */

/* sgr_pc_epoch: unchanged by answers the cache holds (hits, kept misses), moved
 * by a flush and by any answer it does not hold; 0 without a cache. */
static void test_epoch(void)
{
    CHECK(sgr_pc_epoch(NULL) == 0);
    sgr_pcache *un = sgr_pc_new(SGR_PC_UNCACHED);
    CHECK(un != NULL && sgr_pc_epoch(un) == 0);
    sgr_pc_free(un);
    if (!caching)
        return;
    mkdir(at("e"), 0755);
    touch(at("e/f"));
    sgr_pcache *pc = sgr_pc_new(0);
    CHECK(pc != NULL);
    sgr_pc_begin(pc);
    uint64_t e = sgr_pc_epoch(pc);
    CHECK(e != 0);
    CHECK(is(pc, at("e/f"), SGR_PC_OTHER, NULL));          /* a kept miss */
    CHECK(is(pc, at("e/none"), SGR_PC_MISSING, NULL));
    CHECK(is(pc, at("e/f"), SGR_PC_OTHER, NULL));          /* a hit */
    sgr_pc_begin(pc);
    CHECK(sgr_pc_epoch(pc) == e);
    CHECK(is(pc, at("e//f"), SGR_PC_OTHER, NULL));         /* never cached */
    CHECK(sgr_pc_epoch(pc) != e);
    e = sgr_pc_epoch(pc);
    CHECK(is(pc, at("e/f/x"), SGR_PC_MISSING, NULL));      /* ENOTDIR: not kept */
    CHECK(sgr_pc_epoch(pc) != e);
    e = sgr_pc_epoch(pc);
    touch(at("e/g"));                                      /* an event: the next begin flushes */
    sgr_pc_begin(pc);
    CHECK(sgr_pc_epoch(pc) != e);
    e = sgr_pc_epoch(pc);
    sgr_pc_begin(pc);
    CHECK(sgr_pc_epoch(pc) == e);
    sgr_pc_free(pc);
}

static void test_uncached(void)
{
    mkdir(at("u"), 0755);
    touch(at("u/f"));
    symlink("ut", at("u/l"));
    sgr_pcache *pcs[2] = { sgr_pc_new(SGR_PC_UNCACHED), NULL };
    CHECK(pcs[0] != NULL);
    for (int i = 0; i < 2; i++) {
        sgr_pcache *pc = pcs[i];
        for (int round = 0; round < 2; round++) {
            sgr_pc_begin(pc);
            CHECK(is(pc, at("u/f"), SGR_PC_OTHER, NULL));
            CHECK(is(pc, at("u/l"), SGR_PC_LINK, "ut"));
            CHECK(is(pc, at("u"), SGR_PC_DIR, NULL));
            CHECK(is(pc, at("u/none"), SGR_PC_MISSING, NULL));
        }
        unlink(at("u/f"));
        symlink("now-a-link", at("u/f"));
        CHECK(is(pc, at("u/f"), SGR_PC_LINK, "now-a-link"));    /* even without begin */
        unlink(at("u/f"));
        touch(at("u/f"));
        CHECK(hits(pc) == 0);
        CHECK(misses(pc) == (pc ? 9u : 0u));
        sgr_pc_free(pc);
    }
}

/* ------------------------------------------------------------------ bounds */

/* inotify watches held by this process (every descriptor's fdinfo) */
static int watches_held(void)
{
    DIR *d = opendir("/proc/self/fdinfo");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[300], line[512];
        snprintf(p, sizeof p, "/proc/self/fdinfo/%s", e->d_name);
        FILE *f = fopen(p, "r");
        while (f && fgets(line, sizeof line, f))
            n += strncmp(line, "inotify wd:", 11) == 0;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

static void test_entry_bound(void)
{
    enum { N = SGR_PC_MAX_ENTRIES + 904 };
    mkdir(at("o"), 0755);
    sgr_pcache *pc = sgr_pc_new(0);
    sgr_pc_begin(pc);
    uint64_t f0 = flushes(pc);
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= is(pc, at("o/n%d", i), SGR_PC_MISSING, NULL);
    CHECK(ok);
    if (caching)
        CHECK(flushes(pc) >= f0 + 1);
    /* the latest ones are cached again, the earliest answered right */
    uint64_t h = hits(pc);
    ok = 1;
    for (int i = N - 100; i < N; i++)
        ok &= is(pc, at("o/n%d", i), SGR_PC_MISSING, NULL);
    for (int i = 0; i < 100; i++)
        ok &= is(pc, at("o/n%d", i), SGR_PC_MISSING, NULL);
    CHECK(ok);
    if (caching)
        CHECK(hits(pc) >= h + 100);
    /* and changes after the overflow are seen */
    symlink("last", at("o/n%d", N - 1));
    mkdir(at("o/n0"), 0755);
    sgr_pc_begin(pc);
    CHECK(is(pc, at("o/n%d", N - 1), SGR_PC_LINK, "last"));
    CHECK(is(pc, at("o/n0"), SGR_PC_DIR, NULL));
    sgr_pc_free(pc);
}

/* Long paths fill the pool of path bytes before the table fills up. */
static void test_pool_bound(void)
{
    char x[251];
    memset(x, 'x', 250);
    x[250] = '\0';
    mkdir(at("L"), 0755);
    mkdir(at("L/%s", x), 0755);
    mkdir(at("L/%s/%s", x, x), 0755);
    mkdir(at("L/%s/%s/%s", x, x, x), 0755);
    symlink(x, at("L/%s/%s/%s/l", x, x, x));
    sgr_pcache *pc = sgr_pc_new(0);
    sgr_pc_begin(pc);
    uint64_t f0 = flushes(pc);
    int ok = 1;
    for (int i = 0; i < 400; i++) {
        ok &= is(pc, at("L/%s/%s/%s/n%d", x, x, x, i), SGR_PC_MISSING, NULL);
        ok &= is(pc, at("L/%s/%s/%s/l", x, x, x), SGR_PC_LINK, x);
    }
    CHECK(ok);
    if (caching) {
        CHECK(flushes(pc) >= f0 + 1);
        CHECK(hits(pc) >= 300);
    }
    sgr_pc_free(pc);
}

static void test_watch_bound(void)
{
    enum { N = SGR_PC_MAX_WATCHES + 88 };
    mkdir(at("w"), 0755);
    for (int i = 0; i < N; i++)
        mkdir(at("w/d%d", i), 0755);
    sgr_pcache *pc = sgr_pc_new(0);
    sgr_pc_begin(pc);
    uint64_t f0 = flushes(pc);
    int ok = 1, most = 0;
    for (int i = 0; i < N; i++) {
        ok &= is(pc, at("w/d%d/f", i), SGR_PC_MISSING, NULL);
        int w = watches_held();
        most = w > most ? w : most;
    }
    CHECK(ok);
    CHECK(most <= SGR_PC_MAX_WATCHES);
    if (caching) {
        CHECK(most > SGR_PC_MAX_WATCHES / 2);
        CHECK(flushes(pc) >= f0 + 1);
    }
    /* a change in a directory whose watch was removed, and in one still watched */
    symlink("first", at("w/d0/f"));
    symlink("last", at("w/d%d/f", N - 1));
    sgr_pc_begin(pc);
    CHECK(is(pc, at("w/d0/f"), SGR_PC_LINK, "first"));
    CHECK(is(pc, at("w/d%d/f", N - 1), SGR_PC_LINK, "last"));
    sgr_pc_free(pc);
    CHECK(watches_held() == 0);
}

/* ------------------------------------------------------ failing allocations */

static void test_alloc(void)
{
    mkdir(at("a"), 0755);
    touch(at("a/f"));
    symlink("at", at("a/l"));
    int nulls = 0, built = 0;
    for (long n = 1; n < 50; n++) {
        sg_alloc_fail_after(n);
        sgr_pcache *pc = sgr_pc_new(0);
        sgr_pc_begin(pc);
        int ok = 1;
        for (int round = 0; round < 2; round++) {
            ok &= is(pc, at("a/f"), SGR_PC_OTHER, NULL);
            ok &= is(pc, at("a/l"), SGR_PC_LINK, "at");
            ok &= is(pc, at("a/none"), SGR_PC_MISSING, NULL);
            ok &= is(pc, at("a"), SGR_PC_DIR, NULL);
        }
        CHECK(ok);
        nulls += pc == NULL;
        built += pc != NULL;
        sgr_pc_free(pc);
        long used = sg_alloc_fail_after(0);
        if (used < n)
            break;                  /* the nth allocation never happened: all covered */
    }
    CHECK(nulls >= 1);              /* the first allocation failing gives NULL */
    CHECK(built >= 1);              /* and the sweep ended with one that never failed */
}

/* ------------------------------------------------- too few file descriptors */

/* With room for only k of the three descriptors a cache needs, the cache caches
 * nothing, answers right and leaks none; with room for three it caches.  In a
 * child, which closes every descriptor above stderr and lowers its limit. */
static void test_fd_limit(void)
{
    mkdir(at("fd"), 0755);
    touch(at("fd/f"));
    fflush(NULL);
    int fails = sg_t_fail;
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit old;
        if (fcntl(0, F_GETFD) < 0 || fcntl(1, F_GETFD) < 0 || fcntl(2, F_GETFD) < 0
            || getrlimit(RLIMIT_NOFILE, &old) != 0 || old.rlim_cur < 16)
            _exit(77);
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        for (rlim_t k = 0; k <= 3; k++) {
            struct rlimit lim = { 3 + k, old.rlim_max };
            if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
                _exit(77);
            sgr_pcache *pc = sgr_pc_new(0);
            sgr_pc_begin(pc);
            int ok = 1;
            for (int round = 0; round < 3; round++) {
                ok &= is(pc, at("fd/f"), SGR_PC_OTHER, NULL);
                ok &= is(pc, at("fd/none"), SGR_PC_MISSING, NULL);
            }
            CHECK(ok);
            if (k < 3)
                CHECK(hits(pc) == 0);
            else if (caching)
                CHECK(hits(pc) == 4);
            /* a change is seen, cached or not (made without a descriptor) */
            rename(at("fd/f"), at("fd/keep"));
            symlink("fd-link", at("fd/f"));
            sgr_pc_begin(pc);
            CHECK(is(pc, at("fd/f"), SGR_PC_LINK, "fd-link"));
            unlink(at("fd/f"));
            rename(at("fd/keep"), at("fd/f"));
            sgr_pc_free(pc);
            /* every descriptor the cache took is closed again: 3 is the lowest free */
            if (setrlimit(RLIMIT_NOFILE, &old) != 0)
                _exit(77);
            int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
            CHECK(probe == 3);
            if (probe >= 0)
                close(probe);
        }
        child_exit(fails);
    }
    child_verdict(child_wait(pid), "cannot set up the descriptor limit: descriptor test skipped");
}

/* ------------------------------------------------------ non-local filesystems */

static void test_nonlocal(void)
{
    if (!fs_cached("/")) {
        printf("note: / is not on a cached filesystem: non-local test skipped\n");
        return;
    }
    sgr_pcache *pc = sgr_pc_new(0);
    sgr_pc_begin(pc);
    /* /proc itself is a name in "/" (cached); nothing in procfs is */
    is_twice(pc, "/proc", SGR_PC_DIR, NULL);
    uint64_t h = hits(pc), m = misses(pc);
    CHECK(is(pc, "/proc/version", SGR_PC_OTHER, NULL));
    CHECK(is(pc, "/proc/version", SGR_PC_OTHER, NULL));
    CHECK(is(pc, "/proc/no-such-thing", SGR_PC_MISSING, NULL));
    CHECK(is(pc, "/proc/no-such-thing", SGR_PC_MISSING, NULL));
    CHECK(same(pc, "/proc/self/status") && same(pc, "/proc/self/status"));
    CHECK(hits(pc) == h);
    CHECK(misses(pc) == m + 6);
    sgr_pc_free(pc);
}

/* ------------------------------------------------------------ random changes */

/* Random renames, removals, symlinks and directories in a tree of names a, b, c
 * three deep; after each begin every path agrees with lstat. */
static void test_random(void)
{
    static const char *const names[] = { "a", "b", "c" };
    char paths[39][32];
    int np = 0;
    for (int i = 0; i < 3; i++) {
        snprintf(paths[np++], 32, "%s", names[i]);
        for (int j = 0; j < 3; j++) {
            snprintf(paths[np++], 32, "%s/%s", names[i], names[j]);
            for (int k = 0; k < 3; k++)
                snprintf(paths[np++], 32, "%s/%s/%s", names[i], names[j], names[k]);
        }
    }
    char abs_target[PATH_MAX];
    snprintf(abs_target, sizeof abs_target, "%s/r/c", T);
    const char *targets[] = { "a", "../b", abs_target, "nowhere", "b/c" };
    mkdir(at("r"), 0755);
    sgr_pcache *pc = sgr_pc_new(0);
    srand(12345);
    int bad_rounds = 0;
    for (int round = 0; round < 400; round++) {
        int nmut = rand() % 3;
        for (int m = 0; m < nmut; m++) {
            const char *p = at("r/%s", paths[rand() % np]);
            const char *q = at("r/%s", paths[rand() % np]);
            switch (rand() % 8) {
            case 0: case 1: mkdir(p, 0755); break;
            case 2: try_touch(p); break;
            case 3: symlink(targets[rand() % 5], p); break;
            case 4: unlink(p); break;
            case 5: rmdir(p); break;
            case 6: rename(p, q); break;
            default: renameat2(AT_FDCWD, p, AT_FDCWD, q, RENAME_EXCHANGE); break;
            }
        }
        sgr_pc_begin(pc);
        int ok = 1;
        for (int i = 0; i < np; i++) {
            const char *p = at("r/%s", paths[(i * 7 + round) % np]);
            ok &= same(pc, p);
            ok &= same(pc, p);
            ok &= same_next(pc, p);
        }
        bad_rounds += !ok;
    }
    CHECK(bad_rounds == 0);
    if (caching)
        CHECK(hits(pc) > 10000);
    sgr_pc_free(pc);
}

/* ------------------------------------------------------------------ a race */

/* A change racing a first lookup: another thread renames a symlink over the name
 * from a directory nobody watches, at a varying moment around the lookup, while
 * the lookup watches the directories above it (four new ones each time) and
 * calls lstat.  Whatever the interleaving, the lookup
 * after the next begin must see the symlink: an entry made by an lstat before
 * the change is only safe if the watches were in place before the lstat.
 * Passing proves nothing alone; failing proves a bug. */
static atomic_int race_go, race_done, race_stop;
static atomic_int race_iter;

static void *race_thread(void *arg)
{
    (void)arg;
    for (int seen = 0;;) {
        while (atomic_load(&race_go) == seen)
            if (atomic_load(&race_stop))
                return NULL;
        seen = atomic_load(&race_go);
        int i = atomic_load(&race_iter);
        char from[PATH_MAX], to[PATH_MAX];
        snprintf(from, sizeof from, "%s/racesrc/s%d", T, i);
        snprintf(to, sizeof to, "%s/race/%d/a/b/c/f", T, i);
        if (rename(from, to) != 0)
            fprintf(stderr, "  race: rename %s: %s\n", from, strerror(errno));
        atomic_store(&race_done, seen);
    }
}

static void test_race(void)
{
    enum { N = 48 };
    mkdir(at("race"), 0755);
    mkdir(at("racesrc"), 0755);     /* never looked into: not watched */
    for (int i = 0; i < N; i++) {
        mkdir(at("race/%d", i), 0755);
        mkdir(at("race/%d/a", i), 0755);
        mkdir(at("race/%d/a/b", i), 0755);
        mkdir(at("race/%d/a/b/c", i), 0755);
        touch(at("race/%d/a/b/c/f", i));
        symlink("raced", at("racesrc/s%d", i));
    }
    sgr_pcache *pc = sgr_pc_new(0);
    pthread_t th;
    if (pthread_create(&th, NULL, race_thread, NULL) != 0) {
        CHECK(!"pthread_create");
        sgr_pc_free(pc);
        return;
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        const char *f = at("race/%d/a/b/c/f", i);
        sgr_pc_begin(pc);
        atomic_store(&race_iter, i);
        /* start the lookup 0..3 us after the rename (whose effect comes about 1 us
         * in, here), so that over the run the effect lands all along the lookup */
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        atomic_store(&race_go, i + 1);
        long wait_ns = (long)(i * 7 % 32) * 100;
        do
            clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < wait_ns);
        char l[64];
        size_t ll;
        sgr_pc_lstat(pc, f, l, sizeof l, &ll);       /* either answer is right here */
        while (atomic_load(&race_done) != i + 1)
            ;
        sgr_pc_begin(pc);
        bad += !is(pc, f, SGR_PC_LINK, "raced");
    }
    atomic_store(&race_stop, 1);
    pthread_join(th, NULL);
    CHECK(bad == 0);
    sgr_pc_free(pc);
}

/* ------------------------------------------------------- root: mounts, perms */

/* A tmpfs mounted over a cached directory (in a private mount namespace, in a
 * child): seen at the next begin, and unmounting it too. */
static void test_mount(void)
{
    if (geteuid() != 0) {
        printf("note: not root: mount test skipped\n");
        return;
    }
    mkdir(at("m"), 0755);
    touch(at("m/f"));
    fflush(NULL);
    int fails = sg_t_fail;
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
            _exit(77);
        sgr_pcache *pc = sgr_pc_new(0);
        sgr_pc_begin(pc);
        is_twice(pc, at("m/f"), SGR_PC_OTHER, NULL);
        is_twice(pc, at("m"), SGR_PC_DIR, NULL);
        uint64_t f = flushes(pc);
        if (mount("sgpc", at("m"), "tmpfs", 0, NULL) != 0)
            _exit(77);
        sgr_pc_begin(pc);
        CHECK(flushes(pc) == f + 1);
        is_twice(pc, at("m/f"), SGR_PC_MISSING, NULL);
        /* reported once: the epoll set re-armed, nothing more to see */
        f = flushes(pc);
        for (int i = 0; i < 100; i++)
            sgr_pc_begin(pc);
        CHECK(flushes(pc) == f);
        /* two changes between two begins: one report; a remount is a change */
        if (mount("sgpc2", at("m"), "tmpfs", 0, NULL) != 0 || umount2(at("m"), MNT_DETACH) != 0)
            _exit(77);
        sgr_pc_begin(pc);
        CHECK(flushes(pc) == f + 1);
        if (mount(NULL, at("m"), NULL, MS_REMOUNT | MS_RDONLY, NULL) != 0)
            _exit(77);
        sgr_pc_begin(pc);
        CHECK(flushes(pc) == f + 2);
        if (mount(NULL, at("m"), NULL, MS_REMOUNT, NULL) != 0)
            _exit(77);
        sgr_pc_begin(pc);
        sgr_pc_begin(pc);
        CHECK(flushes(pc) == f + 3);
        is_twice(pc, at("m/f"), SGR_PC_MISSING, NULL);
        /* names on the new tmpfs are watched and cached like any */
        symlink("on-tmpfs", at("m/f"));
        sgr_pc_begin(pc);
        is_twice(pc, at("m/f"), SGR_PC_LINK, "on-tmpfs");
        umount2(at("m"), MNT_DETACH);
        sgr_pc_begin(pc);
        is_twice(pc, at("m/f"), SGR_PC_OTHER, NULL);
        /* a bind mount of another directory over the parent of a cached name */
        mkdir(at("m/b"), 0755);
        mkdir(at("m/src"), 0755);
        symlink("bound", at("m/src/x"));
        sgr_pc_begin(pc);
        is_twice(pc, at("m/b/x"), SGR_PC_MISSING, NULL);
        if (mount(at("m/src"), at("m/b"), NULL, MS_BIND, NULL) != 0)
            _exit(77);
        sgr_pc_begin(pc);
        is_twice(pc, at("m/b/x"), SGR_PC_LINK, "bound");
        sgr_pc_free(pc);
        child_exit(fails);
    }
    child_verdict(child_wait(pid), "no private mount namespace here: mount test skipped");
}

/* A mount made in another namespace and propagated into ours (a shared tmpfs,
 * whose peer is in a child's namespace) is seen by the child's next begin, and
 * by that begin only. */
static void test_mount_peer(void)
{
    if (geteuid() != 0) {
        printf("note: not root: peer mount test skipped\n");
        return;
    }
    mkdir(at("mp"), 0755);
    fflush(NULL);
    int fails = sg_t_fail;
    pid_t pid = fork();
    if (pid == 0) {
        int go[2], done[2];
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0
            || mount("sgpcp", at("mp"), "tmpfs", 0, NULL) != 0 || mount(NULL, at("mp"), NULL, MS_SHARED, NULL) != 0
            || mkdir(at("mp/sub"), 0755) != 0 || symlink("peer", at("mp/sub/x")) != 0 || pipe(go) != 0
            || pipe(done) != 0)
            _exit(77);
        fflush(NULL);
        pid_t peer = fork();
        if (peer == 0) {
            char c = 0;
            if (unshare(CLONE_NEWNS) != 0)       /* mp stays a peer of the parent's */
                _exit(77);
            sgr_pcache *pc = sgr_pc_new(0);
            sgr_pc_begin(pc);
            is_twice(pc, at("mp/sub/x"), SGR_PC_LINK, "peer");
            uint64_t f = flushes(pc);
            if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
                _exit(77);
            sgr_pc_begin(pc);
            CHECK(flushes(pc) == f + 1);
            is_twice(pc, at("mp/sub/x"), SGR_PC_MISSING, NULL);
            for (int i = 0; i < 10; i++)
                sgr_pc_begin(pc);
            CHECK(flushes(pc) == f + 1);
            sgr_pc_free(pc);
            child_exit(fails);
        }
        char c = 0;
        if (peer < 0 || read(go[0], &c, 1) != 1)
            _exit(77);
        int m = mount("sgpcq", at("mp/sub"), "tmpfs", 0, NULL);
        if (write(done[1], &c, 1) != 1)
            _exit(77);
        int st = 0;
        waitpid(peer, &st, 0);
        _exit(m != 0 ? 77 : WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    child_verdict(child_wait(pid), "no shared mounts in private namespaces here: peer mount test skipped");
}

/* Names under an overlay mount (in a private mount namespace, in a child) are
 * cached, and changes made through the overlay are seen: a file replaced by a
 * symlink in a directory of the lower layer (which copies the directory up),
 * again in that directory once copied up, a missing name created, and a
 * symlink renamed over a file in a lower directory from one nobody watches. */
static void test_overlay(void)
{
    if (geteuid() != 0) {
        printf("note: not root: overlay test skipped\n");
        return;
    }
    const char *dirs[] = { "ov", "ov/l", "ov/u", "ov/w", "ov/m", "ov/l/d", "ov/l/d/sub", "ov/l/src" };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        mkdir(at("%s", dirs[i]), 0755);
    touch(at("ov/l/d/f"));
    touch(at("ov/l/d/g"));
    touch(at("ov/l/d/sub/h"));
    symlink("from-src", at("ov/l/src/ln"));
    fflush(NULL);
    int fails = sg_t_fail;
    pid_t pid = fork();
    if (pid == 0) {
        char opts[3 * PATH_MAX];
        snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s", at("ov/l"), at("ov/u"), at("ov/w"));
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0
            || mount("sgpco", at("ov/m"), "overlay", 0, opts) != 0)
            _exit(77);
        struct statfs sf;
        CHECK(statfs(at("ov/m/d"), &sf) == 0 && (uint32_t)sf.f_type == 0x794C7630u);
        sgr_pcache *pc = sgr_pc_new(0);
        sgr_pc_begin(pc);
        is_twice(pc, at("ov/m/d/f"), SGR_PC_OTHER, NULL);
        is_twice(pc, at("ov/m/d/g"), SGR_PC_OTHER, NULL);
        is_twice(pc, at("ov/m/d/none"), SGR_PC_MISSING, NULL);
        is_twice(pc, at("ov/m/d/sub/h"), SGR_PC_OTHER, NULL);
        /* d is in the lower layer only: this copies it up */
        unlink(at("ov/m/d/f"));
        symlink("ovl-target", at("ov/m/d/f"));
        sgr_pc_begin(pc);
        is_twice(pc, at("ov/m/d/f"), SGR_PC_LINK, "ovl-target");
        is_twice(pc, at("ov/m/d/g"), SGR_PC_OTHER, NULL);
        /* d copied up, and still watched */
        unlink(at("ov/m/d/g"));
        symlink("ovl-g", at("ov/m/d/g"));
        sgr_pc_begin(pc);
        is_twice(pc, at("ov/m/d/g"), SGR_PC_LINK, "ovl-g");
        symlink("ovl-new", at("ov/m/d/none"));
        sgr_pc_begin(pc);
        is_twice(pc, at("ov/m/d/none"), SGR_PC_LINK, "ovl-new");
        /* sub is still in the lower layer only; src is never looked into */
        CHECK(rename(at("ov/m/src/ln"), at("ov/m/d/sub/h")) == 0);
        sgr_pc_begin(pc);
        is_twice(pc, at("ov/m/d/sub/h"), SGR_PC_LINK, "from-src");
        /* the overlay's answers agree with lstat after all that */
        CHECK(same(pc, at("ov/m/d/f")) && same(pc, at("ov/m/d/sub")) && same(pc, at("ov/m/src/ln")));
        sgr_pc_free(pc);
        child_exit(fails);
    }
    child_verdict(child_wait(pid), "cannot mount an overlay here: overlay test skipped");
}

/* A directory on the path made unsearchable and searchable again: lstat fails
 * with EACCES, then succeeds, for a caller that is not root. */
static void perm_checks(void)
{
    sgr_pcache *pc = sgr_pc_new(0);
    sgr_pc_begin(pc);
    is_twice(pc, at("p/d/f"), SGR_PC_OTHER, NULL);
    is_twice(pc, at("p/d/none"), SGR_PC_MISSING, NULL);
    chmod(at("p/d"), 0);
    sgr_pc_begin(pc);
    CHECK(is(pc, at("p/d/f"), SGR_PC_MISSING, NULL));   /* EACCES */
    CHECK(is(pc, at("p/d/f"), SGR_PC_MISSING, NULL));
    chmod(at("p/d"), 0755);
    sgr_pc_begin(pc);
    is_twice(pc, at("p/d/f"), SGR_PC_OTHER, NULL);
    sgr_pc_free(pc);
}

static void test_perm(void)
{
    mkdir(at("p"), 0755);
    mkdir(at("p/d"), 0755);
    touch(at("p/d/f"));
    if (geteuid() != 0) {
        perm_checks();
        return;
    }
    /* root passes every permission check: run them as nobody, who owns p/d */
    if (chmod(T, 0755) != 0 || chown(at("p/d"), 65534, 65534) != 0) {
        CHECK(!"setup for the permission test");
        return;
    }
    fflush(NULL);
    int fails = sg_t_fail;
    pid_t pid = fork();
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(77);
        perm_checks();
        child_exit(fails);
    }
    int st = child_wait(pid);
    chmod(at("p/d"), 0755);
    child_verdict(st, "cannot become nobody: permission test skipped");
}

/* ------------------------------------------------------------------- main */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        chmod(p, 0700);
    return remove(p) != 0 && errno != ENOENT;
}

int main(void)
{
    snprintf(T, sizeof T, "/tmp/sg-pathcache-XXXXXX");
    if (!mkdtemp(T)) {
        perror("mkdtemp");
        return 1;
    }
    caching = fs_cached("/") && fs_cached("/tmp") && fs_cached(T);
    if (!caching)
        printf("note: %s or a directory above it is not on a cached filesystem: hit counts not checked\n", T);
    test_kinds();
    test_stale();
    test_uncached();
    test_epoch();
    test_entry_bound();
    test_pool_bound();
    test_watch_bound();
    test_alloc();
    test_fd_limit();
    test_nonlocal();
    test_random();
    test_race();
    test_mount();
    test_mount_peer();
    test_overlay();
    test_perm();
    nftw(T, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return sg_test_summary();
}
