/* pathcache.h - a per-context cache of lstat()+readlink() answers that is never
 * stale at the start of an evaluation: inotify reports name changes and
 * /proc/self/mountinfo reports mount changes, both waited on in one epoll set.
 *
 * Contract.  Call sgr_pc_begin once at the start of every evaluation, then any
 * number of sgr_pc_lstat.  Each answer equals what lstat (and readlink, for a
 * symlink) said at some moment after that sgr_pc_begin was called: a change to
 * the filesystem or the mount table completed before the call is seen by every
 * lookup after it.  Absolute, canonical paths ("/a/b": no "//", ".", "..", trailing
 * "/", at most SGR_PC_MAX_PATH bytes) may be cached; any other path is always
 * answered by a real lstat.
 *
 * Why an entry cannot be stale.  An entry for P is made only after a real
 * lstat(P), and only once inotify watches are in place on dirname(P) and on
 * every directory above it up to "/", each added before the one below it and
 * all before the lstat.  A watch is on an inode, so the chain matters: with
 * every ancestor watched, any rename, creation or removal of a name along the
 * path (which changes what dirname(P) resolves to) or of P's own name is
 * reported; a watch that fails (a symlink: IN_DONT_FOLLOW|IN_ONLYDIR; EACCES;
 * ENOSPC) means nothing below that directory is cached.  The kernel queues the
 * event before the changing syscall returns; sgr_pc_begin reads the queue and
 * any event at all (IN_Q_OVERFLOW and IN_IGNORED included) drops every entry.
 * The kind of a name and a symlink's target cannot change without a name
 * event (a symlink's target is immutable).  IN_ATTRIB is watched too: for a
 * caller without CAP_DAC_OVERRIDE, a chmod/chown/ACL change of a directory on
 * the path decides whether lstat succeeds at all; only results that stay right
 * under such changes are kept (success, and ENOENT; never EACCES or others).
 * A mount over a watched directory changes the answers without any inotify
 * event, so /proc/self/mountinfo is in the same level-triggered epoll set as the
 * inotify descriptor, for EPOLLPRI|EPOLLERR, and any mount change drops every
 * entry.  A change of the mount namespace's table (mount, umount, remount, bind,
 * move, and one propagated from a peer namespace) wakes mountinfo's wait queue
 * before the changing syscall returns, which puts it on the epoll ready list;
 * the next epoll_wait calls mountinfo's poll method, which reports
 * EPOLLPRI|EPOLLERR once and re-arms (it keeps the table's event count in the
 * open file), so the wait after that reports nothing until the next change.
 * Verified on Linux 6.18 (tmpfs and bind mounts, umount, remount, move, and
 * a mount propagated from a peer namespace): one report per change, or per
 * burst of changes between two waits, and none after it; and with another
 * thread mounting and unmounting, every change completed before a wait began
 * was reported by that wait.  (A change of propagation type alone, such as
 * MS_PRIVATE, is not reported: it changes no lookup.)  Only directories on
 * filesystems where every change goes through this kernel's VFS are watched
 * (ext2/3/4, xfs, btrfs, tmpfs, overlay, by statfs f_type); nothing at or below
 * a directory of another type (nfs, cifs, fuse, proc, ...) is cached.
 *
 * Overlay (a container's root).  A change made through any mount of an overlay
 * (the container's "/", or its merged directory on the host) is a VFS operation
 * on the overlay's own inodes, the ones the watches are on, so it is reported
 * as on any local filesystem; overlayfs then changes its upper layer, whose own
 * inodes report it too, watched or not.  Copying a directory up keeps its
 * overlay inode, and so the watch on it; a later lookup finds that inode again
 * because overlay hashes a directory's inode by its lower one "for fsnotify"
 * (ovl_hash_bylower in fs/overlayfs/inode.c; the exception, a directory copied
 * up without an index on an overlay mounted with nfs_export=on, is not
 * covered).  The limit: a change made to a lower or upper layer directly, not
 * through the overlay (from the host, under /var/lib/docker/overlay2/.../diff;
 * a layer on a network filesystem changed by another machine), produces no
 * event on the overlay's inodes and is not seen.  overlayfs itself does not
 * support that: its documentation leaves the behaviour of an overlay whose
 * layers change while it is mounted undefined.
 *
 * Known limits.  A change made during an evaluation, after its sgr_pc_begin,
 * is seen only by the next evaluation: the same time-of-check/time-of-use
 * window as an uncached lstat, whose answer may also be out of date by the time
 * the command runs.  The cache assumes the process keeps its root directory,
 * mount namespace and credentials: after chroot, setns/unshare(CLONE_NEWNS) or
 * a change of uid/gid/capabilities, free it and make a new one.  It owns three
 * file descriptors (inotify, mountinfo, epoll; all close-on-exec); closing
 * them behind its back voids the guarantee (a closed inotify or mountinfo
 * descriptor can leave the epoll set unnoticed).  Not thread-safe (one cache per
 * evaluation context, one context per thread) and not fork-safe: a child
 * process must not use its parent's cache (both would read one inotify queue
 * and one mountinfo event count), it makes its own.
 *
 * Degrading, never failing open: without inotify (EMFILE, ENOSYS, seccomp),
 * without /proc/self/mountinfo or without an epoll set (EMFILE, ENOMEM, the
 * epoll watch limit) the cache caches nothing and every lookup is a real
 * lstat; there is no poll() fallback.  A NULL cache behaves the same way.
 * Bounds: SGR_PC_MAX_ENTRIES entries and SGR_PC_MAX_WATCHES watches; reaching
 * either drops everything (and removes the watches).  All memory is taken in
 * sgr_pc_new (one sg_calloc of about 420 KiB); a lookup never allocates.
 *
 * Ownership: the caller owns every buffer it passes; the cache keeps no pointer
 * to any of them. */
#ifndef SGR_PATHCACHE_H
#define SGR_PATHCACHE_H
#include <stddef.h>
#include <stdint.h>

#define SGR_PC_MAX_ENTRIES 4096
#define SGR_PC_MAX_WATCHES 512
#define SGR_PC_MAX_PATH    1024      /* longer paths are never cached */

typedef struct sgr_pcache sgr_pcache;

typedef enum { SGR_PC_MISSING, SGR_PC_DIR, SGR_PC_LINK, SGR_PC_OTHER } sgr_pc_kind;

/* sgr_pc_new flags */
#define SGR_PC_UNCACHED 1u           /* cache nothing, as when inotify is unavailable */

/* A new cache.  NULL only when memory runs out (a NULL cache is still usable: it
 * caches nothing).  Without inotify, mountinfo or an epoll set, or with
 * SGR_PC_UNCACHED, the result caches nothing and every lookup is a real lstat. */
sgr_pcache *sgr_pc_new(unsigned flags);

/* Close the descriptors (which drops the watches) and free the memory.  NULL is
 * a no-op. */
void sgr_pc_free(sgr_pcache *pc);

/* Once per evaluation, before its first lookup: one epoll_wait (timeout 0) over
 * the inotify and mountinfo descriptors; if it reports anything, read the
 * inotify queue through and drop every entry.  An epoll_wait error also drops
 * every entry, and when it says the epoll descriptor is gone (EBADF, EINVAL)
 * stops caching for good, as any error reading the inotify queue does. */
void sgr_pc_begin(sgr_pcache *pc);

/* What lstat(path) says: SGR_PC_MISSING when it fails (for any reason), else the
 * kind of the name itself, not following a final symlink.  For SGR_PC_LINK the
 * target is copied to link[0..*linklen) followed by a NUL; when the target and
 * its NUL do not fit in linkcap bytes, or readlink fails, the answer is
 * SGR_PC_LINK with *linklen 0, which callers treat as unresolvable (as a symlink
 * loop).  *linklen is 0 for every other kind.  link may be NULL when linkcap is
 * 0.  pc may be NULL (a real lstat). */
sgr_pc_kind sgr_pc_lstat(sgr_pcache *pc, const char *path, char *link, size_t linkcap, size_t *linklen);

/* The same answer, for a caller that walks a path one component at a time (the
 * evaluator's resolver): path[0..n) is NUL-terminated, path[last - 1] is its last
 * '/', and path[0..last - 1) is "" or a canonical path (so only the component
 * path[last..n), which holds no '/', needs checking).  Saves the scan of the
 * whole path sgr_pc_lstat makes to see whether it may be cached. */
sgr_pc_kind sgr_pc_lstat_next(sgr_pcache *pc, const char *path, size_t n, size_t last, char *link,
                              size_t linkcap, size_t *linklen);

/* The kind sgr_pc_lstat_next answers, alone, for a caller that does not want a
 * symlink's target (the evaluator's short way, which leaves a symlink to the
 * walk): the same lookup, cached the same way, with nothing to hand over. */
sgr_pc_kind sgr_pc_kind_next(sgr_pcache *pc, const char *path, size_t n, size_t last);

/* A value that stays the same only while every answer given is one the cache
 * holds and none has been dropped: it changes with every flush (sgr_pc_begin
 * seeing an event, a full table) and every answer not kept (a path that may not
 * be cached, a watch that failed, an error like EACCES).  So a result computed
 * from lookups alone, all made while the epoch stayed e, is what the same lookups
 * would give again while it is still e.  0 when nothing is cached (pc NULL, or no
 * inotify): then no such result may be kept. */
uint64_t sgr_pc_epoch(const sgr_pcache *pc);

/* Counters since sgr_pc_new, for tests and benchmarks: answers from the cache,
 * real lstat calls, times every entry was dropped.  Any pointer may be NULL. */
void sgr_pc_stats(const sgr_pcache *pc, uint64_t *hits, uint64_t *misses, uint64_t *flushes);

#endif
