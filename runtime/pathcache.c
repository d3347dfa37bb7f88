/* pathcache.c - lstat answers cached under inotify watches and a mountinfo watch
 * in one epoll set (the contract and the invalidation argument are in pathcache.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "pathcache.h"
#include "common/alloc.h"

enum {
    PC_SLOTS = 2 * SGR_PC_MAX_ENTRIES,   /* open addressing, load <= 1/2; a power of two */
    PC_POOL = 64 * SGR_PC_MAX_ENTRIES,   /* path and target bytes of the live entries */
    PC_NOKIND = 0xff,                    /* slot records a directory's state, no lstat answer */
    PC_EV_INOTIFY = 0,                   /* epoll_event.data.u32 of each descriptor */
    PC_EV_MOUNTS = 1,
};

/* What a slot knows about the directory at its path (when it is one). */
enum {
    PC_DIR_UNKNOWN,
    PC_DIR_WATCHED,                      /* it and every directory above it are watched, on
                                          * local filesystems: names in it may be cached */
    PC_DIR_NOCACHE,                      /* a watch on it or above it failed, or a filesystem
                                          * is not local: nothing in it is cached */
};

/* IN_ATTRIB: a permission change of a directory on the path can turn a success
 * into EACCES for a caller without CAP_DAC_OVERRIDE (pathcache.h). */
#define PC_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | \
                 IN_ATTRIB | IN_ONLYDIR | IN_DONT_FOLLOW)

/* A slot is live iff gen equals the cache's gen: bumping gen empties the table at
 * once.  Keys are only ever added within a generation, so a probe may stop at the
 * first dead slot. */
typedef struct pc_slot {
    uint32_t gen;
    uint32_t hash;
    uint32_t off;                        /* pool[off..off+plen): path, then llen target bytes */
    uint16_t plen, llen;
    uint8_t kind;                        /* sgr_pc_kind, or PC_NOKIND */
    uint8_t dir;                         /* PC_DIR_* */
} pc_slot;

struct sgr_pcache {
    int ino;                             /* inotify descriptor; -1: cache nothing */
    int mi;                              /* /proc/self/mountinfo; -1 iff ino is -1 */
    int ep;                              /* epoll over ino and mi; -1 iff ino is -1 */
    uint32_t gen;                        /* never 0: calloc'd slots are dead */
    uint32_t count;                      /* live slots */
    uint32_t pool_used;
    uint32_t nwds;
    uint64_t hits, misses, flushes;
    uint64_t epoch;                      /* see sgr_pc_epoch */
    int wds[SGR_PC_MAX_WATCHES];         /* watches this cache holds (live or not) */
    pc_slot slots[PC_SLOTS];
    char pool[PC_POOL];
};

/* ---- table ------------------------------------------------------------------------ */

static inline __attribute__((always_inline)) uint32_t pc_hash(const char *s, size_t n)
{
    const size_t len = n;
    uint64_t h = 0x9e3779b97f4a7c15u ^ n, w = 0;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdu;
        h ^= h >> 29;
    }
    if (n && len >= 8) {
        memcpy(&w, s + n - 8, 8);        /* the last 8 bytes, overlapping the last block */
    } else {
        w = 0;
        for (size_t i = 0; i < n; i++)
            w |= (uint64_t)(uint8_t)s[i] << (8 * i);
    }
    h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
    return (uint32_t)(h ^ (h >> 32));
}

/* Drop every entry (the watches stay: only this cache's view of them is gone). */
static void pc_flush(sgr_pcache *pc)
{
    if (++pc->gen == 0) {                /* after 2^32 flushes: make every slot dead again */
        memset(pc->slots, 0, sizeof pc->slots);
        pc->gen = 1;
    }
    pc->count = 0;
    pc->pool_used = 0;
    pc->flushes++;
    pc->epoch++;
}

/* a[0..n) == b[0..n), inline: a key is a few words long, and a call to memcmp
 * costs more than comparing them.  Words overlap at the end, as in pc_hash. */
static inline __attribute__((always_inline)) int pc_same(const char *a, const char *b, size_t n)
{
    uint64_t x, y;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* The live slot of path[0..n) with hash h, or NULL; then *empty (if not NULL) is
 * the dead slot where it would go.  Terminates: fewer live slots than slots. */
static inline __attribute__((always_inline)) pc_slot *pc_find(sgr_pcache *pc, const char *path, size_t n, uint32_t h, pc_slot **empty)
{
    for (uint32_t i = h & (PC_SLOTS - 1);; i = (i + 1) & (PC_SLOTS - 1)) {
        pc_slot *s = &pc->slots[i];
        if (s->gen != pc->gen) {
            if (empty)
                *empty = s;
            return NULL;
        }
        if (s->hash == h && s->plen == n && pc_same(pc->pool + s->off, path, n))
            return s;
    }
}

/* The slot of path[0..n), made if needed, with room for a target of tlen bytes
 * (given only when the answer is stored).  NULL when the table or the pool is
 * full: then everything has been dropped (the generation changed). */
static pc_slot *pc_slot_for(sgr_pcache *pc, const char *path, size_t n, size_t tlen)
{
    uint32_t h = pc_hash(path, n);
    pc_slot *at = NULL, *s = pc_find(pc, path, n, h, &at);
    if (s && tlen == 0)
        return s;
    if ((!s && pc->count >= SGR_PC_MAX_ENTRIES) || PC_POOL - pc->pool_used < n + tlen) {
        pc_flush(pc);
        return NULL;
    }
    if (!s) {
        s = at;
        memset(s, 0, sizeof *s);
        s->gen = pc->gen;
        s->hash = h;
        s->plen = (uint16_t)n;
        s->kind = PC_NOKIND;
        pc->count++;
    }
    /* a fresh copy of the path, followed by the target's room */
    s->off = pc->pool_used;
    memcpy(pc->pool + s->off, path, n);
    pc->pool_used += (uint32_t)(n + tlen);
    return s;
}

/* ---- the kernel's side -------------------------------------------------------------- */

/* Close the cache's descriptors but the one numbered bad (-1: none), which is no
 * longer the cache's (closed behind its back, so the number may be reused). */
static void pc_close(sgr_pcache *pc, int bad)
{
    const int fds[3] = { pc->ep, pc->ino, pc->mi };
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0 && fds[i] != bad)
            close(fds[i]);
    pc->ep = pc->ino = pc->mi = -1;
}

/* Stop caching for good (the descriptor bad went bad): every lookup is a real
 * lstat. */
static void pc_disable(sgr_pcache *pc, int bad)
{
    pc_close(pc, bad);
    pc->nwds = 0;
    pc_flush(pc);
}

/* Read the inotify queue until it is empty (the caller drops the entries: every
 * event invalidates); a watch the kernel dropped (IN_IGNORED) leaves wds.  An
 * unexpected read error disables the cache. */
static void pc_drain(sgr_pcache *pc)
{
    char buf[4096];
    for (;;) {
        ssize_t r = read(pc->ino, buf, sizeof buf);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0 && errno != EAGAIN)
                pc_disable(pc, errno == EBADF ? pc->ino : -1);
            return;
        }
        struct inotify_event e;
        for (ssize_t i = 0; i + (ssize_t)sizeof e <= r; i += (ssize_t)(sizeof e + e.len)) {
            memcpy(&e, buf + i, sizeof e);
            if (e.mask & IN_IGNORED)
                for (uint32_t k = 0; k < pc->nwds; k++)
                    if (pc->wds[k] == e.wd) {
                        pc->wds[k] = pc->wds[--pc->nwds];
                        break;
                    }
        }
    }
}

/* Remove every watch this cache holds and drop everything.  The queue is read
 * through afterwards: the IN_IGNORED events the removals queued, and any event
 * of a change before now, concern entries that are gone already. */
static void pc_purge(sgr_pcache *pc)
{
    for (uint32_t k = 0; k < pc->nwds; k++)
        inotify_rm_watch(pc->ino, pc->wds[k]);   /* EINVAL for one already gone: fine */
    pc->nwds = 0;
    pc_drain(pc);
    pc_flush(pc);
}

/* Filesystems whose every change goes through this kernel's VFS, so inotify sees
 * it (not nfs, cifs, fuse, proc, sysfs, ...).  overlay: every supported change is
 * made through the overlay mount (pathcache.h). */
static int pc_local_fs(uint32_t type)
{
    return type == 0xEF53u           /* ext2, ext3, ext4 */
        || type == 0x58465342u       /* xfs */
        || type == 0x9123683Eu       /* btrfs */
        || type == 0x01021994u       /* tmpfs */
        || type == 0x794C7630u;      /* overlay */
}

/* Watch the directory buf[0..n) (NUL-terminated here for the syscalls) and check
 * its filesystem.  1: watched and local; 0: not (a symlink, not a directory,
 * EACCES, ENOSPC, not local, or the watch bound was reached: then everything has
 * been dropped and the watches removed). */
static int pc_watch(sgr_pcache *pc, char *buf, size_t n)
{
    char saved = buf[n];
    buf[n] = '\0';
    int ok = 0, wd = inotify_add_watch(pc->ino, buf, PC_MASK);
    if (wd >= 0) {
        /* the same inode again gives the same wd (no new watch); otherwise keep it */
        uint32_t k = 0;
        while (k < pc->nwds && pc->wds[k] != wd)
            k++;
        if (k == pc->nwds && pc->nwds == SGR_PC_MAX_WATCHES) {
            inotify_rm_watch(pc->ino, wd);
            pc_purge(pc);
        } else {
            if (k == pc->nwds)
                pc->wds[pc->nwds++] = wd;
            /* statfs every time: a wd's filesystem read in an earlier generation could
             * come from a race; this one's races are this evaluation's own window */
            struct statfs sf;
            ok = statfs(buf, &sf) == 0 && pc_local_fs((uint32_t)sf.f_type);
        }
    }
    buf[n] = saved;
    return ok;
}

/* ---- directories ---------------------------------------------------------------- */

/* Length of the parent of the canonical path buf[0..n), n > 1 ("/" is 1). */
static size_t pc_parent(const char *buf, size_t n)
{
    while (n > 0 && buf[n - 1] != '/')
        n--;
    return n > 1 ? n - 1 : 1;
}

/* Record a directory state; 0 when the table was full (everything dropped). */
static int pc_mark(sgr_pcache *pc, const char *buf, size_t n, int state)
{
    pc_slot *s = pc_slot_for(pc, buf, n, 0);
    if (s)
        s->dir = (uint8_t)state;
    return s != NULL;
}

/* 1 when names in the directory buf[0..dlen) may be cached now: it and every
 * directory above it are watched, on local filesystems, in this generation.
 * Watches what is missing, each directory before the one below it, so that a
 * change to any name on the way down is reported from the moment it matters.
 * 0 otherwise, recorded for the next lookup when the table has room.  buf is a
 * writable copy of a canonical path (restored on return). */
static int pc_dir_ok(sgr_pcache *pc, char *buf, size_t dlen)
{
    const uint32_t gen = pc->gen;
    size_t known = 0, len = dlen;    /* known: the deepest watched prefix, 0 none */
    for (;;) {
        pc_slot *s = pc_find(pc, buf, len, pc_hash(buf, len), NULL);
        if (s && s->dir == PC_DIR_WATCHED) {
            known = len;
            break;
        }
        if (s && s->dir == PC_DIR_NOCACHE) {
            if (len != dlen)
                pc_mark(pc, buf, dlen, PC_DIR_NOCACHE);
            return 0;
        }
        if (len == 1)
            break;
        len = pc_parent(buf, len);
    }
    while (known != dlen) {
        size_t next = 1;             /* "/" first when nothing is known */
        if (known) {
            next = known == 1 ? 1 : known + 1;
            while (next < dlen && buf[next] != '/')
                next++;
        }
        int ok = pc_watch(pc, buf, next);
        if (pc->gen != gen || !pc_mark(pc, buf, next, ok ? PC_DIR_WATCHED : PC_DIR_NOCACHE))
            return 0;                /* dropped meanwhile: start afresh next time */
        if (!ok) {
            if (next != dlen)
                pc_mark(pc, buf, dlen, PC_DIR_NOCACHE);
            return 0;
        }
        known = next;
    }
    return 1;
}

/* ---- lookups ---------------------------------------------------------------------- */

/* Length of path if it may be cached: absolute, canonical (no empty, "." or ".."
 * component, no trailing "/"; not "/" itself), at most SGR_PC_MAX_PATH bytes.
 * Else 0. */
static size_t pc_cacheable(const char *p)
{
    if (p[0] != '/')
        return 0;
    size_t n = strnlen(p, SGR_PC_MAX_PATH + 1);
    if (n > SGR_PC_MAX_PATH)
        return 0;
    /* every '/' starts a component that is not empty, "." or ".." */
    for (const char *q = p, *end = p + n; q; q = memchr(q + 1, '/', (size_t)(end - q - 1))) {
        const char *c = q + 1;
        if (c == end || *c == '/')
            return 0;
        if (*c == '.' && (c + 1 == end || c[1] == '/' || (c[1] == '.' && (c + 2 == end || c[2] == '/'))))
            return 0;
    }
    return n;
}

/* lstat(path), and readlink for a symlink into tgt[PATH_MAX]: the kind, the target
 * length in *tlen (0: unreadable), and in *keep whether the answer may be cached:
 * a success with a readable target, or ENOENT.  Never EACCES and the like, which
 * can change without a name changing. */
static sgr_pc_kind pc_real(const char *path, char *tgt, size_t *tlen, int *keep)
{
    struct stat st;
    *tlen = 0;
    *keep = 0;
    if (lstat(path, &st) != 0) {
        *keep = errno == ENOENT;
        return SGR_PC_MISSING;
    }
    *keep = 1;
    if (S_ISDIR(st.st_mode))
        return SGR_PC_DIR;
    if (!S_ISLNK(st.st_mode))
        return SGR_PC_OTHER;
    ssize_t ll = readlink(path, tgt, PATH_MAX);
    if (ll > 0 && ll < PATH_MAX)
        *tlen = (size_t)ll;
    else
        *keep = 0;
    return SGR_PC_LINK;
}

/* Hand an answer to the caller (the target only when it fits with its NUL). */
static sgr_pc_kind pc_answer(sgr_pc_kind kind, const char *tgt, size_t tlen, char *link, size_t linkcap,
                             size_t *linklen)
{
    *linklen = 0;
    if (linkcap)
        link[0] = '\0';
    if (kind == SGR_PC_LINK && tlen > 0 && tlen < linkcap) {
        memcpy(link, tgt, tlen);
        link[tlen] = '\0';
        *linklen = tlen;
    }
    return kind;
}

/* A lookup the table could not answer: watch the directories (before the lstat,
 * so a change between the two is still reported), then lstat, then store. */
static sgr_pc_kind pc_miss(sgr_pcache *pc, const char *path, size_t n, char *link, size_t linkcap,
                           size_t *linklen)
{
    char buf[SGR_PC_MAX_PATH + 1], tgt[PATH_MAX];
    memcpy(buf, path, n + 1);
    const uint32_t gen = pc->gen;
    int cache = pc_dir_ok(pc, buf, pc_parent(buf, n)), keep;
    size_t tlen;
    sgr_pc_kind kind = pc_real(path, tgt, &tlen, &keep);
    pc->misses++;
    pc_slot *s = cache && keep && pc->gen == gen ? pc_slot_for(pc, path, n, tlen) : NULL;
    if (s) {
        s->kind = (uint8_t)kind;
        s->llen = (uint16_t)tlen;
        memcpy(pc->pool + s->off + n, tgt, tlen);
    } else {
        pc->epoch++;                     /* an answer the cache does not hold */
    }
    return pc_answer(kind, tgt, tlen, link, linkcap, linklen);
}

/* A lookup of a path that may not be cached, or with no cache: a real lstat. */
static sgr_pc_kind pc_uncached(sgr_pcache *pc, const char *path, char *link, size_t linkcap, size_t *linklen)
{
    char tgt[PATH_MAX];
    size_t tlen;
    int keep;
    if (pc) {
        pc->misses++;
        pc->epoch++;                     /* an answer the cache does not hold */
    }
    sgr_pc_kind kind = pc_real(path, tgt, &tlen, &keep);
    return pc_answer(kind, tgt, tlen, link, linkcap, linklen);
}

static inline __attribute__((always_inline)) sgr_pc_kind pc_lstat_n(sgr_pcache *pc, const char *path, size_t n, char *link, size_t linkcap,
                              size_t *linklen)
{
    if (n) {
        pc_slot *s = pc_find(pc, path, n, pc_hash(path, n), NULL);
        if (s && s->kind != PC_NOKIND) {
            pc->hits++;
            return pc_answer((sgr_pc_kind)s->kind, pc->pool + s->off + n, s->llen, link, linkcap, linklen);
        }
        return pc_miss(pc, path, n, link, linkcap, linklen);
    }
    return pc_uncached(pc, path, link, linkcap, linklen);
}

sgr_pc_kind sgr_pc_lstat(sgr_pcache *pc, const char *path, char *link, size_t linkcap, size_t *linklen)
{
    return pc_lstat_n(pc, path, pc && pc->ino >= 0 ? pc_cacheable(path) : 0, link, linkcap, linklen);
}

/* The conditions pc_cacheable checks, for the last component alone. */
static inline __attribute__((always_inline)) int pc_next_ok(const sgr_pcache *pc, const char *path, size_t n,
                                                           size_t last)
{
    const char *c = path + last;
    return pc && pc->ino >= 0 && last >= 1 && last < n && n <= SGR_PC_MAX_PATH && path[0] == '/'
           && path[last - 1] == '/'
           && !(c[0] == '.' && (last + 1 == n || (c[1] == '.' && last + 2 == n)));
}

sgr_pc_kind sgr_pc_lstat_next(sgr_pcache *pc, const char *path, size_t n, size_t last, char *link,
                              size_t linkcap, size_t *linklen)
{
    return pc_lstat_n(pc, path, pc_next_ok(pc, path, n, last) ? n : 0, link, linkcap, linklen);
}

/* pc_lstat_n's hit, without handing a target over. */
sgr_pc_kind sgr_pc_kind_next(sgr_pcache *pc, const char *path, size_t n, size_t last)
{
    size_t ll;
    if (!pc_next_ok(pc, path, n, last))
        return pc_uncached(pc, path, NULL, 0, &ll);
    pc_slot *s = pc_find(pc, path, n, pc_hash(path, n), NULL);
    if (s && s->kind != PC_NOKIND) {
        pc->hits++;
        return (sgr_pc_kind)s->kind;
    }
    return pc_miss(pc, path, n, NULL, 0, &ll);
}

/* ---- life ------------------------------------------------------------------------- */

sgr_pcache *sgr_pc_new(unsigned flags)
{
    sgr_pcache *pc = sg_calloc(1, sizeof *pc);
    if (!pc)
        return NULL;
    pc->gen = 1;
    pc->ino = pc->mi = pc->ep = -1;
    if (flags & SGR_PC_UNCACHED)
        return pc;
    /* a mount changes answers without an inotify event: no mountinfo, no caching;
     * and no epoll set, no caching either (no poll() fallback: a second way to
     * wait is a second way to be wrong, for a case as rare as inotify failing) */
    pc->mi = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    pc->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    pc->ep = epoll_create1(EPOLL_CLOEXEC);
    /* mountinfo always reads as EPOLLIN; EPOLLPRI|EPOLLERR mean the table changed */
    struct epoll_event ei = { .events = EPOLLIN, .data.u32 = PC_EV_INOTIFY };
    struct epoll_event em = { .events = EPOLLPRI | EPOLLERR, .data.u32 = PC_EV_MOUNTS };
    if (pc->mi < 0 || pc->ino < 0 || pc->ep < 0 || epoll_ctl(pc->ep, EPOLL_CTL_ADD, pc->ino, &ei) != 0
        || epoll_ctl(pc->ep, EPOLL_CTL_ADD, pc->mi, &em) != 0)
        pc_close(pc, -1);
    return pc;
}

void sgr_pc_free(sgr_pcache *pc)
{
    if (!pc)
        return;
    pc_close(pc, -1);
    sg_free(pc);
}

void sgr_pc_begin(sgr_pcache *pc)
{
    if (!pc || pc->ino < 0)
        return;
    /* Level-triggered.  A mount change wakes the namespace's wait queue, which puts
     * mi on the ready list; this wait then calls mountinfo's poll method, which
     * reports EPOLLPRI|EPOLLERR once and re-arms (it records the table's event
     * count in the file); the next wait polls mi again, finds nothing and takes
     * it off the list.  With nothing ready, no descriptor is polled at all. */
    struct epoll_event ev[2];
    int r = epoll_wait(pc->ep, ev, 2, 0);
    if (r == 0)
        return;
    if (r < 0) {
        if (errno == EINTR)
            pc_flush(pc);            /* cannot tell what changed: assume everything */
        else
            pc_disable(pc, pc->ep);  /* EBADF, EINVAL: ep was closed behind our back */
        return;
    }
    for (int i = 0; i < r; i++)
        if (ev[i].data.u32 == PC_EV_INOTIFY)
            pc_drain(pc);            /* may disable the cache, which drops everything */
    if (pc->ino >= 0)
        pc_flush(pc);                /* anything reported is a change */
}

uint64_t sgr_pc_epoch(const sgr_pcache *pc)
{
    return pc && pc->ino >= 0 ? pc->epoch | (uint64_t)1 << 63 : 0;
}

void sgr_pc_stats(const sgr_pcache *pc, uint64_t *hits, uint64_t *misses, uint64_t *flushes)
{
    if (hits)
        *hits = pc ? pc->hits : 0;
    if (misses)
        *misses = pc ? pc->misses : 0;
    if (flushes)
        *flushes = pc ? pc->flushes : 0;
}
