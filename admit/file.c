/* file.c - the file store of admission (admit_int.h): one state file shared by
 * every process of one user, updated under a lock and replaced atomically.
 *
 * Concurrency: every operation takes flock(LOCK_EX) on STATE.lock (a separate file,
 * because the state file itself is replaced by rename and a lock on a replaced
 * inode would lock nothing), reads and verifies STATE, changes it in memory, writes
 * the new version to STATE.tmp, fsyncs it and renames it over STATE.  So a process
 * killed at any point leaves STATE as the old version or the new one, never a mix;
 * a stale STATE.tmp is overwritten by the next writer; the kernel drops the lock of
 * a dead process.  Readers see only whole versions.
 *
 * File format (little-endian host order; the endian probe refuses a foreign file),
 * ORDER SGSTATE_LAYOUT, bump STATE_VERSION on any change:
 *   header  64 bytes: magic "SGSTATE\x1a", u32 version, u32 endian, u64 length,
 *           u64 checksum (sg_checksum64 over the file, this field as zero),
 *           i64 max time seen, u32 nkeys, u32 napprovals, u32 npending, u32 flags,
 *           u64 generation
 *   keys    u32 namelen, u32 cap, u32 n, u32 0, i64 span, name (padded to 8),
 *           i64 ts[n] oldest first
 *   approvals  id[16], u32 scope, u32 sesslen, i64 created, session (padded)
 *   pending    id[16], i64 created, u32 risky, u32 cmdlen, u32 cwdlen, u32 agentlen,
 *           u32 progslen, u32 0, the four strings (each padded)
 * Any mismatch -- magic, version, endian, length, checksum, a count or length out
 * of bounds -- is an error: the caller refuses the command until `state reset`. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "admit/admit_int.h"
#include "common/alloc.h"
#include "common/checksum.h"

#define STATE_MAGIC "SGSTATE\x1a"
#define STATE_VERSION 1u
#define STATE_ENDIAN 0x01020304u
#define HDR 64
#define MAX_KEYS 4096            /* live keys; empty ones are dropped on every write */
#define MAX_RING SGT_MAX_LIMIT_COUNT   /* timestamps per key: the largest count of a limit (runtime/sgt.h) */
#define MAX_APPROVALS 256
#define MAX_PENDING 64
#define MAX_NAME 800             /* agent + pack + limit, with separators */
#define FLAG_TEST_CLOCK 1u       /* created under SHELLGATE_TEST_NOW: only such files obey it */

typedef struct fkey {
    char *name;
    uint32_t namelen, cap, n, head;   /* ring: i-th oldest at ts[(head + i) % cap] */
    int64_t span;                     /* largest window of the limit, ns */
    int64_t *ts;
} fkey;

typedef struct fappr {
    uint8_t id[SGA_APPROVAL_LEN];
    uint32_t scope;
    int64_t created;
    char *session;
} fappr;

typedef struct fpend {
    uint8_t id[SGA_APPROVAL_LEN];
    int64_t created;
    uint32_t risky;
    char *s[4];                       /* cmd, cwd, agent, progs */
    uint32_t l[4];
} fpend;

typedef struct fstate {
    int64_t max_seen;
    uint32_t flags;                   /* FLAG_* */
    int missing;                      /* there was no file: a fresh state */
    uint64_t gen;
    fkey *keys;    uint32_t nkeys, capkeys;
    fappr *appr;   uint32_t nappr;
    fpend *pend;   uint32_t npend;
} fstate;

typedef struct fadmit {
    sga_store base;
    char *path, *lock, *tmp;
} fadmit;

static int crash_point;

void sga_file_test_crash(int point)
{
    crash_point = point;
}

static int fail(char *err, size_t n, const char *fmt, const char *a, const char *b)
{
    snprintf(err, n, fmt, a, b);
    return -1;
}

/* ---- in-memory state ---------------------------------------------------------- */

static void state_free(fstate *s)
{
    for (uint32_t i = 0; i < s->nkeys; i++) {
        sg_free(s->keys[i].name);
        sg_free(s->keys[i].ts);
    }
    sg_free(s->keys);
    for (uint32_t i = 0; i < s->nappr; i++)
        sg_free(s->appr[i].session);
    sg_free(s->appr);
    for (uint32_t i = 0; i < s->npend; i++)
        for (int k = 0; k < 4; k++)
            sg_free(s->pend[i].s[k]);
    sg_free(s->pend);
    memset(s, 0, sizeof *s);
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static int64_t rd64(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* A bounded reader: every take checks the remaining length first. */
typedef struct rd {
    const uint8_t *p;
    size_t n, at;
    int bad;
} rd;

static const uint8_t *take(rd *r, size_t n)
{
    if (r->bad || n > r->n - r->at) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *q = r->p + r->at;
    r->at += n;
    return q;
}

static char *take_str(rd *r, uint32_t len, uint32_t max)
{
    if (len > max) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *q = take(r, pad8(len));
    if (!q)
        return NULL;
    char *s = sg_strndup((const char *)q, len);
    if (!s)
        r->bad = 2;
    return s;
}

/* Parse and verify a state image.  0, or -1 with why in *why (2: out of memory). */
static int state_parse(const uint8_t *d, size_t n, fstate *s, const char **why)
{
    memset(s, 0, sizeof *s);
    if (memcmp(d, STATE_MAGIC, n < 8 ? n : 8) != 0 || n == 0) {
        *why = "not a shellgate state file (bad magic)";
        return -1;
    }
    if (n < HDR) {
        *why = "truncated";
        return -1;
    }
    if (rd32(d + 8) != STATE_VERSION) {
        *why = "unsupported state version";
        return -1;
    }
    if (rd32(d + 12) != STATE_ENDIAN) {
        *why = "written on a machine of the other byte order";
        return -1;
    }
    if ((uint64_t)rd64(d + 16) != n) {
        *why = "truncated or extended (length mismatch)";
        return -1;
    }
    if ((uint64_t)rd64(d + 24) != sg_checksum64(d, n, 24)) {
        *why = "checksum mismatch";
        return -1;
    }
    s->max_seen = rd64(d + 32);
    uint32_t nkeys = rd32(d + 40), nappr = rd32(d + 44), npend = rd32(d + 48);
    s->gen = (uint64_t)rd64(d + 56);
    s->flags = rd32(d + 52);
    if (s->flags & ~FLAG_TEST_CLOCK) {
        *why = "unknown flags";
        return -1;
    }
    if (nkeys > MAX_KEYS || nappr > MAX_APPROVALS || npend > MAX_PENDING) {
        *why = "a count is out of range";
        return -1;
    }
    rd r = { d, n, HDR, 0 };
    s->keys = sg_calloc(nkeys ? nkeys : 1, sizeof *s->keys);
    s->appr = sg_calloc(MAX_APPROVALS, sizeof *s->appr);
    s->pend = sg_calloc(MAX_PENDING, sizeof *s->pend);
    if (!s->keys || !s->appr || !s->pend) {
        r.bad = 2;
        goto out;
    }
    s->capkeys = nkeys ? nkeys : 1;
    for (uint32_t i = 0; i < nkeys && !r.bad; i++) {
        const uint8_t *h = take(&r, 24);
        if (!h)
            break;
        fkey *k = &s->keys[s->nkeys];
        uint32_t nl = rd32(h), cap = rd32(h + 4), cnt = rd32(h + 8);
        if (cap == 0 || cap > MAX_RING || cnt > cap || nl == 0) {
            r.bad = 1;
            break;
        }
        k->span = rd64(h + 16);
        k->name = take_str(&r, nl, MAX_NAME);
        k->namelen = nl;
        k->cap = cap;
        s->nkeys++;
        if (!k->name)
            break;
        const uint8_t *t = take(&r, (size_t)cnt * 8);
        if (!t)
            break;
        if (!(k->ts = sg_malloc((size_t)cap * 8))) {
            r.bad = 2;
            break;
        }
        for (uint32_t j = 0; j < cnt; j++) {
            k->ts[j] = rd64(t + 8 * j);
            if (j && k->ts[j] < k->ts[j - 1])
                r.bad = 1;                   /* timestamps only ever grow */
        }
        k->n = cnt;
    }
    for (uint32_t i = 0; i < nappr && !r.bad; i++) {
        const uint8_t *h = take(&r, 32);
        if (!h)
            break;
        fappr *a = &s->appr[s->nappr];
        memcpy(a->id, h, SGA_APPROVAL_LEN);
        a->scope = rd32(h + 16);
        a->created = rd64(h + 24);
        if (a->scope != SGA_APPROVE_ONCE && a->scope != SGA_APPROVE_SESSION) {
            r.bad = 1;
            break;
        }
        a->session = take_str(&r, rd32(h + 20), 256);
        if (a->session)
            s->nappr++;
    }
    for (uint32_t i = 0; i < npend && !r.bad; i++) {
        const uint8_t *h = take(&r, 48);
        if (!h)
            break;
        fpend *p = &s->pend[s->npend];
        memcpy(p->id, h, SGA_APPROVAL_LEN);
        p->created = rd64(h + 16);
        p->risky = rd32(h + 24);
        static const uint32_t max[4] = { 4095, 1023, 255, 1023 };
        s->npend++;
        for (int k = 0; k < 4 && !r.bad; k++) {
            p->l[k] = rd32(h + 28 + 4 * k);
            p->s[k] = take_str(&r, p->l[k], max[k]);
        }
    }
    if (!r.bad && r.at != n)
        r.bad = 1;
out:
    if (r.bad) {
        *why = r.bad == 2 ? "out of memory" : "malformed contents";
        state_free(s);
        return r.bad == 2 ? -2 : -1;
    }
    return 0;
}

/* ---- serialising -------------------------------------------------------------- */

typedef struct wb {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wb;

static void wput(wb *b, const void *d, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + n)
            nc *= 2;
        uint8_t *np = sg_realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void w32(wb *b, uint32_t v) { wput(b, &v, 4); }
static void w64(wb *b, int64_t v) { wput(b, &v, 8); }

static void wstr(wb *b, const char *s, uint32_t n)
{
    static const uint8_t zero[8];
    wput(b, s, n);
    wput(b, zero, pad8(n) - n);
}

static int state_write_image(const fstate *s, wb *b)
{
    uint8_t h[HDR];
    memset(h, 0, sizeof h);
    wput(b, h, sizeof h);
    for (uint32_t i = 0; i < s->nkeys; i++) {
        const fkey *k = &s->keys[i];
        w32(b, k->namelen);
        w32(b, k->cap);
        w32(b, k->n);
        w32(b, 0);
        w64(b, k->span);
        wstr(b, k->name, k->namelen);
        for (uint32_t j = 0; j < k->n; j++)
            w64(b, k->ts[(k->head + j) % k->cap]);
    }
    for (uint32_t i = 0; i < s->nappr; i++) {
        const fappr *a = &s->appr[i];
        uint32_t sl = (uint32_t)strlen(a->session);
        wput(b, a->id, SGA_APPROVAL_LEN);
        w32(b, a->scope);
        w32(b, sl);
        w64(b, a->created);
        wstr(b, a->session, sl);
    }
    for (uint32_t i = 0; i < s->npend; i++) {
        const fpend *p = &s->pend[i];
        wput(b, p->id, SGA_APPROVAL_LEN);
        w64(b, p->created);
        w32(b, p->risky);
        for (int k = 0; k < 4; k++)
            w32(b, p->l[k]);
        w32(b, 0);
        for (int k = 0; k < 4; k++)
            wstr(b, p->s[k], p->l[k]);
    }
    if (b->oom)
        return -1;
    uint8_t *d = b->p;
    memcpy(d, STATE_MAGIC, 8);
    uint32_t v = STATE_VERSION, e = STATE_ENDIAN;
    memcpy(d + 8, &v, 4);
    memcpy(d + 12, &e, 4);
    uint64_t len = b->n, gen = s->gen;
    memcpy(d + 16, &len, 8);
    memcpy(d + 32, &s->max_seen, 8);
    memcpy(d + 40, &s->nkeys, 4);
    memcpy(d + 44, &s->nappr, 4);
    memcpy(d + 48, &s->npend, 4);
    memcpy(d + 52, &s->flags, 4);
    memcpy(d + 56, &gen, 8);
    uint64_t sum = sg_checksum64(d, b->n, 24);
    memcpy(d + 24, &sum, 8);
    return 0;
}

/* ---- files -------------------------------------------------------------------- */

static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int r = mkdir(path, 0700);
        *p = '/';
        if (r != 0 && errno != EEXIST)
            return -1;
    }
    return 0;
}

static int lock_state(fadmit *f, char *err, size_t n)
{
    char *dir = sg_strndup(f->path, strlen(f->path));
    if (!dir)
        return fail(err, n, "out of memory%s%s", "", "");
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        slash[1] = '\0';
        mkdirs(dir);
    }
    sg_free(dir);
    int fd = open(f->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(err, n, "cannot open the state lock %s: %s", f->lock, strerror(errno));
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            close(fd);
            return fail(err, n, "cannot lock %s: %s", f->lock, strerror(errno));
        }
    }
    return fd;
}

/* Read and verify the state (a missing file is an empty state). */
static int state_load(fadmit *f, fstate *s, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            s->appr = sg_calloc(MAX_APPROVALS, sizeof *s->appr);
            s->pend = sg_calloc(MAX_PENDING, sizeof *s->pend);
            s->missing = 1;
            if (s->appr && s->pend)
                return 0;
            state_free(s);
            return fail(err, n, "out of memory reading %s%s", f->path, "");
        }
        return fail(err, n, "cannot read the state file %s: %s", f->path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 0 || st.st_size > (1 << 30)) {
        close(fd);
        return fail(err, n, "cannot read the state file %s: %s", f->path, "bad size");
    }
    size_t len = (size_t)st.st_size;
    uint8_t *d = sg_malloc(len ? len : 1);
    if (!d) {
        close(fd);
        return fail(err, n, "out of memory reading %s%s", f->path, "");
    }
    size_t got = 0;
    while (got < len) {
        ssize_t k = read(fd, d + got, len - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    const char *why = "short read";
    int r = got == len ? state_parse(d, len, s, &why) : -1;
    sg_free(d);
    if (r < 0) {
        snprintf(err, n, "the state file %s is corrupt (%s): commands are refused until "
                 "`shellgate state reset` starts it afresh", f->path, why);
        return -1;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Write a new version: STATE.tmp, fsync, rename over STATE. */
static int state_store(fadmit *f, fstate *s, char *err, size_t n)
{
    s->gen++;
    wb b = { NULL, 0, 0, 0 };
    if (state_write_image(s, &b) < 0) {
        sg_free(b.p);
        return fail(err, n, "out of memory writing %s%s", f->path, "");
    }
    int fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        sg_free(b.p);
        return fail(err, n, "cannot write the state file %s: %s", f->tmp, strerror(errno));
    }
    if (crash_point == 1) {
        (void)write_all(fd, b.p, b.n / 2);
        raise(SIGKILL);
    }
    int ok = write_all(fd, b.p, b.n) == 0 && fsync(fd) == 0;
    int e = errno;
    ok = close(fd) == 0 && ok;
    sg_free(b.p);
    if (crash_point == 2)
        raise(SIGKILL);
    if (!ok || rename(f->tmp, f->path) != 0) {
        e = ok ? errno : e;
        unlink(f->tmp);
        return fail(err, n, "cannot write the state file %s: %s", f->path, strerror(e));
    }
    return 0;
}

/* ---- operations ---------------------------------------------------------------- */

static fkey *find_key(fstate *s, const char *name, uint32_t nl)
{
    for (uint32_t i = 0; i < s->nkeys; i++)
        if (s->keys[i].namelen == nl && memcmp(s->keys[i].name, name, nl) == 0)
            return &s->keys[i];
    return NULL;
}

static uint32_t limit_ring(const sga_limit *l, int64_t *span)
{
    uint32_t cap = 1;
    *span = 0;
    for (uint32_t w = 0; w < l->nwindows && w < SGT_MAX_WINDOWS; w++) {
        if (l->count[w] > cap)
            cap = l->count[w];
        if ((int64_t)l->seconds[w] * 1000000000 > *span)
            *span = (int64_t)l->seconds[w] * 1000000000;
    }
    return cap > MAX_RING ? MAX_RING : cap;
}

/* The key for (agent, pack, limit), created empty or resized to the limit's ring. */
static fkey *get_key(fstate *s, const char *name, uint32_t nl, const sga_limit *l)
{
    int64_t span;
    uint32_t cap = limit_ring(l, &span);
    fkey *k = find_key(s, name, nl);
    if (!k) {
        if (s->nkeys >= MAX_KEYS)
            return NULL;
        if (s->nkeys == s->capkeys) {
            uint32_t nc = s->capkeys ? s->capkeys * 2 : 8;
            fkey *nk = sg_realloc(s->keys, sizeof *nk * nc);
            if (!nk)
                return NULL;
            s->keys = nk;
            s->capkeys = nc;
        }
        k = &s->keys[s->nkeys];
        memset(k, 0, sizeof *k);
        k->name = sg_strndup(name, nl);
        k->ts = sg_malloc((size_t)cap * 8);
        if (!k->name || !k->ts) {
            sg_free(k->name);
            sg_free(k->ts);
            return NULL;
        }
        k->namelen = nl;
        k->cap = cap;
        k->span = span;
        s->nkeys++;
        return k;
    }
    k->span = span;
    if (k->cap != cap) {
        /* the pack changed the limit: keep the newest min(n, cap) timestamps */
        int64_t *nt = sg_malloc((size_t)cap * 8);
        if (!nt)
            return NULL;
        uint32_t keep = k->n < cap ? k->n : cap;
        for (uint32_t j = 0; j < keep; j++)
            nt[j] = k->ts[(k->head + k->n - keep + j) % k->cap];
        sg_free(k->ts);
        k->ts = nt;
        k->cap = cap;
        k->n = keep;
        k->head = 0;
    }
    return k;
}

static void key_push(fkey *k, int64_t t)
{
    if (k->n < k->cap) {
        k->ts[(k->head + k->n) % k->cap] = t;
        k->n++;
    } else {
        k->ts[k->head] = t;
        k->head = (k->head + 1) % k->cap;
    }
}

/* Drop keys with nothing inside their largest window: lossless, and it keeps the
 * file as small as the set of recently active agents. */
static void gc_keys(fstate *s, int64_t now)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < s->nkeys; i++) {
        fkey *k = &s->keys[i];
        int live = k->n && k->ts[(k->head + k->n - 1) % k->cap] + k->span > now;
        if (live) {
            s->keys[j++] = *k;
        } else {
            sg_free(k->name);
            sg_free(k->ts);
        }
    }
    s->nkeys = j;
}

/* "AGENT \x1f PACK \x1f LIMIT", and for a per-team limit "TEAM \x1f PACK \x1f LIMIT
 * \x1f team": the pack names its limits, so an agent key ends in one of them and never
 * in "\x1fteam" -- no agent id, whatever its bytes, names a team's key. */
static int key_name(char *out, size_t n, const char *who, const char *pack, const sga_limit *l)
{
    int k = snprintf(out, n, "%s\x1f%s\x1f%s%s", who ? who : "default", pack ? pack : "", l->name ? l->name : "",
                     l->per_team ? "\x1fteam" : "");
    return k > 0 && (size_t)k < n ? k : -1;
}

static int find_appr(const fstate *s, const uint8_t *id, uint32_t scope, const char *session)
{
    for (uint32_t i = 0; i < s->nappr; i++)
        if (s->appr[i].scope == scope && memcmp(s->appr[i].id, id, SGA_APPROVAL_LEN) == 0
            && (scope != SGA_APPROVE_SESSION || strcmp(s->appr[i].session, session ? session : "") == 0))
            return (int)i;
    return -1;
}

static void drop_appr(fstate *s, uint32_t i)
{
    sg_free(s->appr[i].session);
    memmove(&s->appr[i], &s->appr[i + 1], sizeof *s->appr * (s->nappr - i - 1));
    s->nappr--;
}

static void drop_pend(fstate *s, uint32_t i)
{
    for (int k = 0; k < 4; k++)
        sg_free(s->pend[i].s[k]);
    memmove(&s->pend[i], &s->pend[i + 1], sizeof *s->pend * (s->npend - i - 1));
    s->npend--;
}

static char *dup_cap(const char *s, size_t len, size_t max, uint32_t *out)
{
    if (!s)
        s = "";
    if (len > max)
        len = max;
    *out = (uint32_t)len;
    return sg_strndup(s, len);
}

/* Remember an unapproved ask (newest wins; the oldest is dropped past the cap). */
static int add_pending(fstate *s, const sga_req *q, int64_t now)
{
    for (uint32_t i = 0; i < s->npend; i++)
        if (memcmp(s->pend[i].id, q->approval, SGA_APPROVAL_LEN) == 0) {
            drop_pend(s, i);
            break;
        }
    if (s->npend == MAX_PENDING)
        drop_pend(s, 0);
    fpend *p = &s->pend[s->npend];
    memset(p, 0, sizeof *p);
    memcpy(p->id, q->approval, SGA_APPROVAL_LEN);
    p->created = now;
    p->risky = q->risky != 0;
    p->s[0] = dup_cap(q->cmd, q->cmd ? strlen(q->cmd) : 0, 4095, &p->l[0]);
    p->s[1] = dup_cap(q->cwd, q->cwd ? strlen(q->cwd) : 0, 1023, &p->l[1]);
    p->s[2] = dup_cap(q->session, q->session ? strlen(q->session) : 0, 255, &p->l[2]);
    /* progs is NUL-separated: cut at a whole name */
    uint32_t pl = q->progs_len;
    if (pl > 1023) {
        pl = 1023;
        while (pl && q->progs[pl - 1] != '\0')
            pl--;
    }
    p->s[3] = dup_cap(q->progs, q->progs ? pl : 0, 1023, &p->l[3]);
    s->npend++;
    return p->s[0] && p->s[1] && p->s[2] && p->s[3] ? 0 : -1;
}

static int file_check(sga_store *a, const sga_req *q, sga_res *res, char *err, size_t errlen)
{
    fadmit *f = (fadmit *)a;
    memset(res, 0, sizeof *res);
    int lfd = lock_state(f, err, errlen);
    if (lfd < 0)
        return -1;
    fstate s;
    int rc = state_load(f, &s, err, errlen);
    if (rc < 0) {
        close(lfd);
        return -1;
    }
    /* never behind the newest time this state has seen: a clock stepped back (or an
     * injected one) cannot reopen a window */
    int64_t t = q->now_ns;
    if (q->clock_injected && !(s.flags & FLAG_TEST_CLOCK)) {
        /* a test clock may only drive a store it created: it could otherwise
         * step forward past real windows of a deployment's state */
        if (s.missing)
            s.flags |= FLAG_TEST_CLOCK;
        else
            t = q->real_ns;
    }
    int64_t now = t > s.max_seen ? t : s.max_seen;
    res->now_ns = now;
    int dirty = now != s.max_seen;
    s.max_seen = now;

    int ai = -1;
    if (q->ask) {
        if ((ai = find_appr(&s, q->approval, SGA_APPROVE_ONCE, NULL)) >= 0)
            res->approved = SGA_APPROVE_ONCE;
        else if ((ai = find_appr(&s, q->approval, SGA_APPROVE_SESSION, q->session)) >= 0)
            res->approved = SGA_APPROVE_SESSION;
    }
    if (q->ask && !res->approved) {
        /* waiting for a person: remember it for `approve`, take no slot */
        rc = add_pending(&s, q, now) < 0 ? fail(err, errlen, "out of memory%s%s", "", "") : 0;
        dirty = 1;
        goto store;
    }
    uint32_t kidx[64];                         /* indices: get_key may move the array */
    uint32_t nl = q->nlimits < 64 ? q->nlimits : 64;
    for (uint32_t i = 0; i < nl; i++) {
        char name[MAX_NAME + 1];
        int kl = key_name(name, sizeof name, q->limits[i].per_team ? q->team : q->agent, q->pack, &q->limits[i]);
        if (kl < 0) {
            rc = fail(err, errlen, "agent id or limit name too long%s%s", "", "");
            goto out;
        }
        fkey *k = get_key(&s, name, (uint32_t)kl, &q->limits[i]);
        if (!k) {
            rc = fail(err, errlen, "%s", s.nkeys >= MAX_KEYS ? "the state file is full: too many active agents"
                                                              : "out of memory", "");
            goto out;
        }
        kidx[i] = (uint32_t)(k - s.keys);
        uint32_t w;
        int64_t wait = sga_window_wait(&q->limits[i], k->ts, k->cap, k->head, k->n, now, &w);
        if (wait > res->wait_ns) {
            res->rate_limited = 1;
            res->wait_ns = wait;
            res->limit = i;
            res->window = w;
        }
    }
    if (!res->rate_limited) {
        res->admitted = 1;
        for (uint32_t i = 0; i < nl; i++)
            key_push(&s.keys[kidx[i]], now);
        if (res->approved == SGA_APPROVE_ONCE)
            drop_appr(&s, (uint32_t)ai);
        dirty |= nl > 0 || res->approved == SGA_APPROVE_ONCE;
    }
store:
    if (rc == 0 && dirty) {
        gc_keys(&s, now);
        rc = state_store(f, &s, err, errlen);
        if (rc < 0)
            res->admitted = 0;                /* not recorded: not admitted */
    }
out:
    state_free(&s);
    close(lfd);
    if (rc < 0)
        res->admitted = 0;
    return rc;
}

static int file_approve(sga_store *a, const uint8_t id[SGA_APPROVAL_LEN], int scope, const char *session,
                        int64_t now_ns, sga_pending *p, char *err, size_t errlen)
{
    fadmit *f = (fadmit *)a;
    memset(p, 0, sizeof *p);
    int lfd = lock_state(f, err, errlen);
    if (lfd < 0)
        return -1;
    fstate s;
    if (state_load(f, &s, err, errlen) < 0) {
        close(lfd);
        return -1;
    }
    int rc = 1;
    for (uint32_t i = 0; i < s.npend; i++) {
        fpend *e = &s.pend[i];
        if (memcmp(e->id, id, SGA_APPROVAL_LEN) != 0)
            continue;
        snprintf(p->cmd, sizeof p->cmd, "%s", e->s[0]);
        snprintf(p->cwd, sizeof p->cwd, "%s", e->s[1]);
        snprintf(p->agent, sizeof p->agent, "%s", e->s[2]);
        p->progs_len = e->l[3] < sizeof p->progs ? e->l[3] : (uint32_t)sizeof p->progs;
        memcpy(p->progs, e->s[3], p->progs_len);
        p->risky = (int)e->risky;
        p->when_ns = e->created;
        rc = 0;
        if (scope == SGA_APPROVE_ALWAYS) {
            /* the caller writes the overlay; the command stays pending until then */
            break;
        }
        if (find_appr(&s, id, (uint32_t)scope, session) < 0) {
            if (s.nappr == MAX_APPROVALS)
                drop_appr(&s, 0);
            fappr *ap = &s.appr[s.nappr];
            memset(ap, 0, sizeof *ap);
            memcpy(ap->id, id, SGA_APPROVAL_LEN);
            ap->scope = (uint32_t)scope;
            ap->created = now_ns;
            uint32_t sl;
            const char *ss = scope == SGA_APPROVE_SESSION && session ? session : "";
            ap->session = dup_cap(ss, strlen(ss), 255, &sl);
            if (!ap->session) {
                rc = fail(err, errlen, "out of memory%s%s", "", "");
                break;
            }
            s.nappr++;
        }
        drop_pend(&s, i);
        rc = state_store(f, &s, err, errlen);
        break;
    }
    state_free(&s);
    close(lfd);
    return rc;
}

static int file_reset(sga_store *a, char *err, size_t errlen)
{
    fadmit *f = (fadmit *)a;
    int lfd = lock_state(f, err, errlen);
    if (lfd < 0)
        return -1;
    /* keep the largest time seen when the old file still says it, so a reset
     * cannot be combined with a stepped-back clock; a corrupt file starts at 0 */
    fstate s, old;
    memset(&s, 0, sizeof s);
    char ignore[8];
    if (state_load(f, &old, ignore, sizeof ignore) == 0) {
        s.max_seen = old.max_seen;
        s.gen = old.gen;
        s.flags = old.flags;
        state_free(&old);
    }
    int rc = state_store(f, &s, err, errlen);
    close(lfd);
    return rc;
}

static void file_close(sga_store *a)
{
    fadmit *f = (fadmit *)a;
    sg_free(f->path);
    sg_free(f->lock);
    sg_free(f->tmp);
    sg_free(f);
}

static void hex16(const uint8_t id[SGA_APPROVAL_LEN], char out[SGA_ID_HEX])
{
    static const char dig[] = "0123456789abcdef";
    for (int i = 0; i < SGA_APPROVAL_LEN; i++) {
        out[2 * i] = dig[id[i] >> 4];
        out[2 * i + 1] = dig[id[i] & 15];
    }
    out[2 * SGA_APPROVAL_LEN] = '\0';
}

static int file_list(sga_store *a, sga_entry_fn fn, void *ud, char *err, size_t errlen)
{
    fadmit *f = (fadmit *)a;
    int lfd = lock_state(f, err, errlen);
    if (lfd < 0)
        return -1;
    fstate s;
    int rc = state_load(f, &s, err, errlen);
    close(lfd);                       /* a copy in memory: fn runs unlocked */
    if (rc < 0)
        return -1;
    for (uint32_t i = 0; i < s.npend; i++) {
        sga_entry e = { .kind = 0, .cmd = s.pend[i].s[0], .cwd = s.pend[i].s[1], .session = s.pend[i].s[2],
                        .created_ns = s.pend[i].created };
        hex16(s.pend[i].id, e.id);
        fn(ud, &e);
    }
    for (uint32_t i = 0; i < s.nappr; i++) {
        sga_entry e = { .kind = (int)s.appr[i].scope, .cmd = "", .cwd = "", .session = s.appr[i].session,
                        .created_ns = s.appr[i].created };
        hex16(s.appr[i].id, e.id);
        fn(ud, &e);
    }
    state_free(&s);
    return 0;
}

static int file_revoke(sga_store *a, const uint8_t id[SGA_APPROVAL_LEN], char *err, size_t errlen)
{
    fadmit *f = (fadmit *)a;
    int lfd = lock_state(f, err, errlen);
    if (lfd < 0)
        return -1;
    fstate s;
    if (state_load(f, &s, err, errlen) < 0) {
        close(lfd);
        return -1;
    }
    int found = 0;
    for (uint32_t i = s.npend; i-- > 0;)
        if (memcmp(s.pend[i].id, id, SGA_APPROVAL_LEN) == 0) {
            drop_pend(&s, i);
            found = 1;
        }
    for (uint32_t i = s.nappr; i-- > 0;)
        if (memcmp(s.appr[i].id, id, SGA_APPROVAL_LEN) == 0) {
            drop_appr(&s, i);
            found = 1;
        }
    int rc = found ? state_store(f, &s, err, errlen) : 1;
    state_free(&s);
    close(lfd);
    return rc;
}

static const sga_backend file_backend = {
    "file", file_check, file_approve, file_reset, file_close, file_list, file_revoke,
};

int sga_default_path(char *buf, size_t n)
{
    const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
    int k;
    if (x && x[0] == '/')
        k = snprintf(buf, n, "%s/shellgate/state", x);
    else if (h && h[0] == '/')
        k = snprintf(buf, n, "%s/.local/state/shellgate/state", h);
    else
        return -1;
    return k > 0 && (size_t)k < n ? 0 : -1;
}

static char *suffixed(const char *p, const char *suf)
{
    size_t a = strlen(p), b = strlen(suf);
    char *s = sg_malloc(a + b + 1);
    if (s) {
        memcpy(s, p, a);
        memcpy(s + a, suf, b + 1);
    }
    return s;
}

sga_store *sga_file_open(const char *path, char *err, size_t errlen)
{
    char def[4096];
    if (!path) {
        if (sga_default_path(def, sizeof def) < 0) {
            snprintf(err, errlen, "no state file: set XDG_STATE_HOME or HOME, or give --state FILE");
            return NULL;
        }
        path = def;
    }
    fadmit *f = sg_calloc(1, sizeof *f);
    if (!f || !(f->path = suffixed(path, "")) || !(f->lock = suffixed(path, ".lock"))
        || !(f->tmp = suffixed(path, ".tmp"))) {
        if (f)
            file_close(&f->base);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->base.be = &file_backend;
    return &f->base;
}

const char *sga_file_path(const sga_store *a)
{
    return ((const fadmit *)a)->path;
}
