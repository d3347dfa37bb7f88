/* eval_paths.c - the paths of a segment, resolved as the kernel will walk them:
 * symlinks, streams, glob patterns, case-folding filesystems, modules, link
 * texts, and the files earlier segments of the line make. */
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "eval_int.h"

#define SGR_MAX_CHAIN 64                    /* enclosing commands runs_before follows */
#define SGR_MK_PICKS 64                     /* made_link: choices walked for one path */

/* A name made on the line, resolved (see made_files). */
typedef struct sgr_mkres {
    uint32_t seg;
    const char *name;                   /* the made path */
    uint32_t nl;
    const char *ta, *tb;                /* a copy or link: its source as a symlink reads
                                         * it, and resolved from the cwd; NULL: written */
    uint32_t tal, tbl;
    int lost;                           /* a link to a place known only at run time
                                         * (ln -s "$D" x) */
    int glob;                           /* a link to what a glob matches (ln -s /e*c x):
                                         * ta is the glob, read as a pattern */
    const struct sgr_ppat *npat;        /* the name is a pattern too (ln -s /e*c -t d:
                                         * d/e*c), NULL: the name itself */
    uint32_t pflags;                    /* a link to a word the shell still expands
                                         * (ln -s /u$(x)r/../etc d): its SGR_W_* flags; ta
                                         * is the word as written, tb the same from the
                                         * cwd; the path through it is read as a pattern */
} sgr_mkres;

static int part_relative(const char *w, uint32_t flags);

/* ---- paths ------------------------------------------------------------------ */

/* Resolve word text against cwd (and ~ against home) the way the kernel walks
 * it: component by component from an already-resolved base, following each
 * symlink (so `link/../x` goes where the link points, not where the text says),
 * appending the rest lexically once a component does not exist.  One lstat per
 * component of the operand itself.  Returns an arena string, or NULL on OOM;
 * a symlink loop yields "/" + "(symlink loop)", which no root contains. */
/* resolve_path's short way for the commonest operands, plain names relative to
 * the caller's cwd ("src", "*.c", "docs/language.md", "runtime/"): the lookups
 * the walk would make, one per component up to the first missing one, and its
 * result.  0: not such an operand (an absolute path, ~, a "." or ".." or empty
 * component) or a component is a symlink (the walk follows it); 1: *out is the
 * result (NULL: out of memory). */
int sgr_path_resolve_plain(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde, char **out,
                           uint32_t *outlen)
{
    if (cwd != c->rcwd || w[0] == '/' || (tilde && w[0] == '~') || (cwd[1] == 'p' || cwd[1] == 'd'))
        return 0;                           /* (a cwd under /proc or /dev: the walk) */
    while (wl > 1 && w[wl - 1] == '/')
        wl--;                               /* "dir/" is "dir", as the walk has it */
    if ((size_t)c->rcwdl + 1 + wl >= PATH_MAX + 1)
        return 0;
    char p[PATH_MAX + 1];
    size_t n = c->rcwdl;
    memcpy(p, c->rcwd, n);
    if (n > 1)
        p[n++] = '/';
    size_t cs = n;
    memcpy(p + n, w, wl);
    n += wl;
    p[n] = '\0';
    int missing = 0;
    for (;;) {
        const char *sl = memchr(p + cs, '/', n - cs);
        size_t ce = sl ? (size_t)(sl - p) : n, cl = ce - cs;
        if (cl == 0 || (p[cs] == '.' && (cl == 1 || (cl == 2 && p[cs + 1] == '.'))))
            return 0;
        if (!missing) {
            /* p[0..cs - 1) is canonical: the cwd and components that are neither
             * links nor missing.  A link's target is not wanted (the walk reads it) */
            p[ce] = '\0';
            sgr_pc_kind k = sgr_pc_kind_next(c->pc, p, ce, cs);
            p[ce] = ce < n ? '/' : '\0';
            if (k == SGR_PC_LINK)
                return 0;
            missing = k == SGR_PC_MISSING;
        }
        if (ce == n)
            break;
        cs = ce + 1;
    }
    *outlen = (uint32_t)n;
    *out = sg_arena_strndup(&c->arena, p, n);
    return 1;
}

/* Does segment a run before segment b: are their outermost different enclosing
 * commands (or they themselves), children of one command or both of the line,
 * in that order?  Unwrapped and script segments come after the ones before them
 * on the line, so the order of indices alone does not say.  Neither runs before
 * the other when one encloses the other. */
static int runs_before(const sgr_cmdline *cl, uint32_t a, uint32_t b)
{
    uint32_t ca[SGR_MAX_CHAIN], cb[SGR_MAX_CHAIN], na = 0, nb = 0;
    for (int32_t x = (int32_t)a; x >= 0 && na < SGR_MAX_CHAIN; x = cl->seg[x].parent)
        ca[na++] = (uint32_t)x;
    for (int32_t x = (int32_t)b; x >= 0 && nb < SGR_MAX_CHAIN; x = cl->seg[x].parent)
        cb[nb++] = (uint32_t)x;
    while (na && nb && ca[na - 1] == cb[nb - 1]) {
        na--;
        nb--;
    }
    return na && nb && ca[na - 1] < cb[nb - 1];
}

/* The target of a link or copy made at p[0..n) by a segment before c->mk_seg, as
 * c->mk_mode reads it (1: as a symlink, 2: from the cwd); NULL: none. */
static int made_here(sgr_ctx *c, const sgr_mkres *m, const char *p, size_t n)
{
    int named = m->npat ? sgr_pp_word(m->npat, p, n, 0) : m->nl == n && memcmp(m->name, p, n) == 0;
    return m->ta && named && runs_before(&c->res.cl, m->seg, c->mk_seg);
}

static const char *made_link(sgr_ctx *c, const char *p, size_t n, size_t *len)
{
    /* A name made more than once may be any of them (`ln -s /etc x; ln -sf /tmp x`
     * leaves x -> /etc and makes /etc/tmp): the walk takes the one c->mk_pick
     * says, counting from the latest, and multiplies c->mk_radix by how many
     * there are, so that add_one_path walks every choice (SGR_MK_PICKS at most). */
    uint32_t cnt = 0;
    for (uint32_t i = c->nmk; i-- > 0;)
        cnt += (uint32_t)made_here(c, &c->mk[i], p, n);
    if (!cnt)
        return NULL;
    uint32_t radix = c->mk_radix ? c->mk_radix : 1;
    uint32_t want = cnt > 1 ? (c->mk_pick / radix) % cnt : 0;
    if (cnt > 1)
        c->mk_radix = radix > SGR_MK_PICKS ? radix : radix * cnt;
    for (uint32_t i = c->nmk; i-- > 0;) {
        const sgr_mkres *m = &c->mk[i];
        if (made_here(c, m, p, n) && want-- == 0) {
            if (m->lost || (m->pflags && !c->mk_part_ok)) {
                *len = 0;
                return "";                  /* some place: the walk's "lost" */
            }
            if (m->pflags) {
                c->mk_pflags = m->pflags;   /* the walk splices it as written */
                int b = c->mk_mode == 2;
                *len = b ? m->tbl : m->tal;
                return b ? m->tb : m->ta;
            }
            c->mk_glob |= m->glob;
            int b = c->mk_mode == 2 && m->tb;
            *len = b ? m->tbl : m->tal;
            return b ? m->tb : m->ta;
        }
    }
    return NULL;
}

/* What the walk's canonical prefix p[0..n) is to the kernel's /proc (the agent's
 * shell is another process than this one, so /proc/self is resolved by what it
 * means, never by following this process's link): PROC_PID a process directory
 * (/proc/self, /proc/thread-self, /proc/N, and their task/N), PROC_TASK its task
 * directory, PROC_FD its fd directory, PROC_NO anything else.  *self: the
 * process is the one running the command (self or thread-self). */
enum { PROC_NO, PROC_PID, PROC_TASK, PROC_FD };

static int is_pid_name(const char *s, size_t l)
{
    if ((l == 4 && memcmp(s, "self", 4) == 0) || (l == 11 && memcmp(s, "thread-self", 11) == 0))
        return 2;
    for (size_t i = 0; i < l; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return l > 0;
}

__attribute__((noinline))
static int proc_kind(const char *p, size_t n, int *self)
{
    if (n < 7 || memcmp(p, "/proc/", 6) != 0)
        return PROC_NO;
    size_t i = 6, kind = PROC_NO;
    int pid = 0;
    while (i < n) {
        size_t b = i;
        while (i < n && p[i] != '/')
            i++;
        size_t l = i - b;
        const char *cp = p + b;
        if (kind == PROC_NO && b == 6 && (pid = is_pid_name(cp, l)) != 0)
            kind = PROC_PID, *self = pid == 2;
        else if (kind == PROC_PID && l == 4 && memcmp(cp, "task", 4) == 0)
            kind = PROC_TASK;
        else if (kind == PROC_TASK && is_pid_name(cp, l) == 1)
            kind = PROC_PID;
        else if (kind == PROC_PID && l == 2 && memcmp(cp, "fd", 2) == 0)
            kind = PROC_FD;
        else
            return PROC_NO;
        i++;
    }
    return (int)kind;
}

/* resolve_path's long way: the walk itself, for every operand resolve_plain
 * does not take.  The caller has called lookups_begin.  Names whose meaning
 * depends on the process that opens them are resolved by that meaning: /dev/fd,
 * /dev/stdin, /dev/stdout and /dev/stderr are the agent's /proc/self/fd entries;
 * /proc/PID/root is "/", /proc/self/cwd the directory the segment runs in (cwd);
 * under /proc/PID nothing is looked up.  What only the running process knows
 * (/proc/self/fd/N/.., the cwd of another process) makes the rest of the path
 * relative to an unknown directory: then *unk (when not NULL) is 1 and the result
 * is what follows the last unknown point ("/etc/shadow" for
 * /dev/fd/3/../etc/shadow); without unk such a path resolves to
 * "/(unknown)", which no root contains. */
char *sgr_path_resolve_walk(sgr_ctx *c, const char *cwd, const char *w, uint32_t wl, int tilde, uint32_t *outlen,
                            int *unk)
{
    const char *home = NULL, *base = cwd, *rel = w;
    uint32_t rl = wl;
    if (unk)
        *unk = 0;
    if (w[0] == '/') {
        base = "/";
    } else if (tilde && w[0] == '~' && (wl == 1 || w[1] == '/')
               && (home = c->opts->home ? c->opts->home : getenv("HOME")) && home[0] == '/') {
        uint32_t hl;
        base = resolve_path(c, "/", home, (uint32_t)strlen(home), 0, &hl, NULL, NULL);
        if (!base)
            return NULL;
        rel = w + 1;
        rl = wl - 1;
    }
    /* walk in stack buffers; only the result goes to the arena, so resolving many
     * operands does not outgrow the context's first arena block.  base is "/" or
     * an earlier result, so p is canonical before each component is appended (what
     * sgr_pc_lstat_next relies on) */
    enum { cap = PATH_MAX + 1 };
    char p[cap], q[cap];
    size_t n = strlen(base);
    if (n >= cap)
        n = cap - 1;
    memcpy(p, base, n);
    while (n > 1 && p[n - 1] == '/')
        n--;
    p[n] = '\0';
    /* the components still to walk: src[qi..ql), the word itself until a symlink's
     * target is spliced in front of its rest (in q) */
    const char *src = rel;
    size_t ql = rl < cap - 1 ? rl : cap - 1, qi = 0;
    int missing = 0, hops = 0, lost = 0;     /* lost: p is relative to an unknown place */
    char link[PATH_MAX];
    while (qi < ql) {
        if (src[qi] == '/') {
            qi++;
            continue;
        }
        size_t cs = qi;
        const char *slash = memchr(src + qi, '/', ql - qi);
        qi = slash ? (size_t)(slash - src) : ql;
        size_t cl = qi - cs;
        if (cl == 1 && src[cs] == '.')
            continue;
        if (cl == 2 && src[cs] == '.' && src[cs + 1] == '.') {
            if (lost)
                n = 1;                          /* the parent of an unknown place */
            while (n > 1 && p[n - 1] != '/')
                n--;
            if (n > 1)
                n--;
            p[n] = '\0';
            continue;
        }
        if (!missing && n >= 4 && (p[1] == 'p' || p[1] == 'd')) {
            /* /dev/fd, /dev/std*: the agent's own descriptors, /proc/self/fd/N */
            int self = 0, k = PROC_NO;
            if (n == 4 && memcmp(p, "/dev", 4) == 0) {
                static const char *const std[] = { "stdin", "stdout", "stderr" };
                int sk = -1;
                for (int j = 0; j < 3; j++)
                    if (cl == strlen(std[j]) && memcmp(src + cs, std[j], cl) == 0)
                        sk = j;
                if (sk >= 0 || (cl == 2 && memcmp(src + cs, "fd", 2) == 0)) {
                    memcpy(p, "/proc/self/fd", 14);
                    n = 13;
                    if (sk < 0)
                        continue;
                    k = PROC_FD;               /* /dev/stdin: the descriptor itself */
                    cs = qi;
                    cl = 0;
                    p[n++] = '/';
                    p[n++] = (char)('0' + sk);
                    p[n] = '\0';
                }
            } else if (n == 5 && memcmp(p, "/proc", 5) == 0 && is_pid_name(src + cs, cl)) {
                p[n++] = '/';
                memcpy(p + n, src + cs, cl);
                n += cl;
                p[n] = '\0';
                continue;                       /* not this process's /proc/self link */
            } else {
                k = proc_kind(p, n, &self);
            }
            if (k == PROC_PID && cl == 4 && memcmp(src + cs, "root", 4) == 0) {
                n = 1;                          /* that process's "/" */
                p[1] = '\0';
                continue;
            }
            if (k == PROC_PID && cl == 3 && memcmp(src + cs, "cwd", 3) == 0 && self && cwd[0] == '/') {
                n = strlen(cwd);                /* the directory the command runs in */
                n = n < cap ? n : cap - 1;
                memmove(p, cwd, n);
                p[n] = '\0';
                continue;
            }
            if (k == PROC_FD && (cl == 0 || is_pid_name(src + cs, cl) == 1)) {
                /* a descriptor: whatever it names is known only when the command
                 * runs; what follows it is relative to that */
                size_t rest = qi;
                while (rest < ql && src[rest] == '/')
                    rest++;
                if (rest < ql) {
                    lost = missing = 1;
                    n = 1;
                    p[1] = '\0';
                    continue;
                }
            }
            if (k != PROC_NO) {
                int takes = (k == PROC_PID && ((cl == 2 && memcmp(src + cs, "fd", 2) == 0)
                                               || (cl == 4 && memcmp(src + cs, "task", 4) == 0)))
                            || (k == PROC_TASK && is_pid_name(src + cs, cl) == 1);
                if (k == PROC_PID && cl == 3 && memcmp(src + cs, "cwd", 3) == 0) {
                    lost = missing = 1;          /* another process's cwd */
                    n = 1;
                    p[1] = '\0';
                    continue;
                }
                if (!takes)
                    missing = 1;                /* a file of that process: its name */
                if (cl) {
                    p[n++] = '/';
                    memcpy(p + n, src + cs, cl);
                    n += cl;
                    p[n] = '\0';
                }
                continue;
            }
        }
        if (n + 1 + cl >= cap)
            break;                                  /* longer than PATH_MAX: stop */
        size_t before = n;
        if (n > 1 || p[0] != '/')
            p[n++] = '/';
        memcpy(p + n, src + cs, cl);
        n += cl;
        p[n] = '\0';
        size_t ll = 0;
        sgr_pc_kind kind;
        const char *made = c->mk_mode && !lost ? made_link(c, p, n, &ll) : NULL;
        if (made && ll == 0) {
            /* a link made to a place known only at run time: the rest is below it */
            c->mk_used = 1;
            c->mk_pflags = 0;
            lost = missing = 1;
            n = 1;
            p[1] = '\0';
            continue;
        }
        if (made && c->mk_pflags) {
            /* a link to a word the shell still expands: the rest is read as the
             * pattern that word and the rest make (the link's directory first for a
             * relative link; a copy's word already starts from its cwd) */
            c->mk_used = 1;
            int relt = part_relative(made, c->mk_pflags);
            size_t rest = ql - qi;
            n = relt && c->mk_mode == 1 ? before : 0;
            if (n + 1 + ll + rest >= cap) {
                c->mk_pflags = 0;           /* too long to read as one: some place */
                lost = missing = 1;
                n = 1;
                p[1] = '\0';
                break;
            }
            if (n && !(n == 1 && p[0] == '/'))
                p[n++] = '/';
            memcpy(p + n, made, ll);
            n += ll;
            memcpy(p + n, src + qi, rest);
            n += rest;
            p[n] = '\0';
            break;
        }
        if (made && ll < sizeof link) {
            /* made earlier on the line: read through as the link or copy it is */
            memcpy(link, made, ll);
            link[ll] = '\0';
            kind = SGR_PC_LINK;
            missing = 0;
            c->mk_used = 1;
        } else if (missing) {
            continue;
        } else {
            kind = sgr_pc_lstat_next(c->pc, p, n, n - cl, link, sizeof link, &ll);
        }
        if (kind == SGR_PC_MISSING) {
            missing = 1;
            continue;
        }
        if (kind != SGR_PC_LINK)
            continue;
        if (ll == 0 || ++hops > 40) {
            const char loop[] = "/(symlink loop)";
            memcpy(p, loop, sizeof loop);
            n = sizeof loop - 1;
            break;
        }
        /* replace the link by its target, then walk the rest after it */
        n = link[0] == '/' ? 1 : before;      /* back to the link's directory */
        if (n == 0)
            n = 1;
        p[0] = p[0] ? p[0] : '/';
        if (link[0] == '/')
            p[0] = '/';
        p[n] = '\0';
        size_t rest = ql - qi;
        if (ll + 1 + rest >= cap)
            break;
        memmove(q + ll + 1, src + qi, rest);
        memcpy(q, link, ll);
        q[ll] = '/';
        ql = ll + 1 + rest;
        src = q;
        qi = 0;
    }
    if (lost && unk) {
        *unk = 1;
    } else if (lost) {
        const char gone[] = "/(unknown)";
        memcpy(p, gone, sizeof gone);
        n = sizeof gone - 1;
    }
    *outlen = (uint32_t)n;
    return sg_arena_strndup(&c->arena, p, n);
}

static int under(const char *p, uint32_t pl, const char *root)
{
    size_t rl = strlen(root);
    if (rl == 1 && root[0] == '/')
        return 1;
    return pl >= rl && memcmp(p, root, rl) == 0 && (pl == rl || p[rl] == '/');
}

/* Is resolved path p[0..pl) a root or below one? */
int sgr_path_inside_roots(const sgr_ctx *c, const char *p, uint32_t pl)
{
    for (uint32_t i = 0; i < c->nroots; i++)
        if (under(p, pl, c->roots[i]))
            return 1;
    return 0;
}

/* ---- streams ------------------------------------------------------------------
 * Names that open one of the command's own streams, not a file: /dev/null,
 * /dev/tty, /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N and
 * /proc/thread-self/fd/N -- each only as exactly itself once "//", "/." and a
 * trailing "/" are folded (/dev//null, /dev/./fd/1), never as a prefix:
 * /dev/fd/../../etc/shadow names a file, which the walk resolves. */
#define STREAM_NONE (-1)                    /* a file name */
#define STREAM_DEV  (-2)                    /* /dev/null, /dev/tty */

__attribute__((noinline))
static int stream_slow(const char *s, uint32_t n)
{
    const char *cp[4];
    uint32_t cl[4], k = 0;
    for (uint32_t i = 0; i < n;) {
        while (i < n && s[i] == '/')
            i++;
        uint32_t b = i;
        while (i < n && s[i] != '/')
            i++;
        uint32_t l = i - b;
        if (l == 0 || (l == 1 && s[b] == '.'))
            continue;
        if (k == 4 || (l == 2 && s[b] == '.' && s[b + 1] == '.'))
            return STREAM_NONE;
        cp[k] = s + b;
        cl[k++] = l;
    }
#define IS(j, lit) (cl[j] == sizeof lit - 1 && memcmp(cp[j], lit, sizeof lit - 1) == 0)
    uint32_t fdc = 0;                       /* the component that holds N */
    if (k == 2 && IS(0, "dev"))
        return IS(1, "null") || IS(1, "tty") ? STREAM_DEV
             : IS(1, "stdin") ? 0 : IS(1, "stdout") ? 1 : IS(1, "stderr") ? 2 : STREAM_NONE;
    if (k == 3 && IS(0, "dev") && IS(1, "fd"))
        fdc = 2;
    else if (k == 4 && IS(0, "proc") && (IS(1, "self") || IS(1, "thread-self")) && IS(2, "fd"))
        fdc = 3;
    else
        return STREAM_NONE;
#undef IS
    int fd = 0;
    for (uint32_t i = 0; i < cl[fdc]; i++) {
        if (cp[fdc][i] < '0' || cp[fdc][i] > '9')
            return STREAM_NONE;
        fd = fd < 100000000 ? fd * 10 + (cp[fdc][i] - '0') : fd;
    }
    return fd;
}

/* s[0..n) as a stream: STREAM_NONE (a file), STREAM_DEV or the descriptor
 * number.  The test that fails for nearly every operand is inline. */
static inline int stream_of(const char *s, uint32_t n)
{
    return n >= 8 && s[0] == '/' && (s[1] == 'd' || s[1] == 'p' || s[1] == '/' || s[1] == '.')
           ? stream_slow(s, n) : STREAM_NONE;
}

/* Does reading or naming s[0..n) open no file (a stream)? */
static inline int not_a_file(const char *s, uint32_t n)
{
    return stream_of(s, n) != STREAM_NONE;
}

/* The descriptor redirection r opens, unless it names it (r->fd). */
static int redir_fd(const sgr_redir *r)
{
    if (r->fd >= 0)
        return r->fd;
    switch (r->kind) {
    case SGR_REDIR_READ: case SGR_REDIR_RDWR: case SGR_REDIR_HEREDOC: case SGR_REDIR_HERESTRING:
    case SGR_REDIR_DUP_IN:
        return 0;
    default:
        return 1;                           /* &> and &>> open 1 (and 2) */
    }
}

/* What write redirection r of segment s, whose target names stream fd, writes.
 * bash opens the name afresh, so `> /dev/stdin` truncates the file descriptor 0
 * reads.  0: no file (the null device, the terminal, the caller's stdout or
 * stderr, a pipe, a here-document); 1: the file an earlier redirection of s
 * opened on fd, itself a path candidate; 2: a file known only when the command
 * runs (what descriptor 0 or N of the caller names). */
static int stream_write(const sgr_segment *s, const sgr_redir *r, int fd, const sgr_redir **srcp)
{
    if (fd == STREAM_DEV || fd == 1 || fd == 2)
        return 0;
    const sgr_redir *src = NULL;
    for (const sgr_redir *e = s->redirs; e < r; e++)
        if (redir_fd(e) == fd || ((e->kind == SGR_REDIR_BOTH || e->kind == SGR_REDIR_BOTH_APPEND) && fd == 2))
            src = e;
    if (!src)
        return fd == 0 && s->pipe_index > 0 ? 0 : 2;
    if (src->kind == SGR_REDIR_HEREDOC || src->kind == SGR_REDIR_HERESTRING)
        return 0;
    if (src->kind == SGR_REDIR_DUP_IN || src->kind == SGR_REDIR_DUP_OUT)
        return src->target.len == 1 && src->target.text[0] == '-' ? 0 : 2;
    int st = stream_of(src->target.text, src->target.len);
    if (srcp)
        *srcp = src;
    return st == STREAM_NONE ? 1 : st == STREAM_DEV ? 0 : 2;
}

static int add_one_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                        const char *cwd);
static int add_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags);
static int splice_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *a, uint32_t al, const char *b,
                           uint32_t bl, uint32_t flags);
/* Does redirection r of segment s write a file (stream_write for stream names)? */
int sgr_path_is_write(const sgr_segment *s, const sgr_redir *r)
{
    switch (r->kind) {
    case SGR_REDIR_WRITE: case SGR_REDIR_APPEND: case SGR_REDIR_CLOBBER: case SGR_REDIR_RDWR:
    case SGR_REDIR_BOTH: case SGR_REDIR_BOTH_APPEND:
        break;
    case SGR_REDIR_DUP_OUT:
        /* >&2 and 2>&1 copy a descriptor; >&file (no digits) writes a file */
        if (!r->target.len || (r->target.text[0] >= '0' && r->target.text[0] <= '9')
            || (r->target.len == 1 && r->target.text[0] == '-'))
            return 0;
        break;
    default:
        return 0;
    }
    int st = stream_of(r->target.text, r->target.len);
    return st == STREAM_NONE || stream_write(s, r, st, NULL) != 0;
}

/* Does redirection r read a file (not a stream)? */
int sgr_path_is_read(const sgr_redir *r)
{
    return (r->kind == SGR_REDIR_READ || r->kind == SGR_REDIR_RDWR) && !not_a_file(r->target.text, r->target.len);
}

/* Count w[0..wl), a value known only when the command runs, as outside the
 * workspace (the first such path is the one messages name). */
static void mark_unknown(sgr_norm *nm, const char *w, uint32_t wl)
{
    nm->unknown_paths++;
    if (!nm->outside) {
        nm->outside = 1;
        nm->outside_path.s = w;
        nm->outside_path.len = wl;
    }
}

static int name_byte(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* May the line give HOME another value before a word is expanded (HOME=x,
 * export/read/declare/unset HOME, for HOME in ...)?  Then ~ and $HOME are known
 * only at run time.  A plain reading of the text: "HOME" as a name of its own,
 * not after '$' or "${". */
static int line_sets_home(sgr_ctx *c)
{
    if (c->sets_home_call != c->ncalls) {
        c->sets_home_call = c->ncalls;
        c->sets_home = 0;
        const char *l = c->line, *e = l + c->len;
        for (const char *p = memmem(l, c->len, "HOME", 4); p && !c->sets_home;
             p = memmem(p + 1, (size_t)(e - p - 1), "HOME", 4)) {
            char b = p > l ? p[-1] : ' ', b2 = p > l + 1 ? p[-2] : ' ', a = p + 4 < e ? p[4] : ' ';
            c->sets_home = !name_byte(b) && b != '$' && !(b == '{' && b2 == '$') && !name_byte(a);
        }
    }
    return c->sets_home;
}

/* $HOME or ${HOME} followed by nothing or "/..." without another expansion:
 * the length of the variable's spelling, else 0 (such a word is ~ and the rest). */
static uint32_t home_var(const char *w, uint32_t wl)
{
    uint32_t k = wl >= 5 && memcmp(w, "$HOME", 5) == 0 ? 5 : wl >= 7 && memcmp(w, "${HOME}", 7) == 0 ? 7 : 0;
    if (!k || (k < wl && w[k] != '/') || memchr(w + k, '$', wl - k) || memchr(w + k, '`', wl - k))
        return 0;
    return k;
}

/* ---- patterns --------------------------------------------------------------------
 * A word the shell still expands names every path its pattern can produce
 * (runtime/pathpat.h), read so that a hit needs what is written.  The word's
 * text is read as tokens: literal bytes, a glob's `?` `*` `[...]` (when the word
 * has an unquoted glob), and expansions ($x, ${...}, $(...), `...`: when it has
 * one).  Per component (between literal '/'): one with no literal byte at all
 * (`$dir`, `*`, `$a$b`) is some name that says nothing by itself (the byte
 * 0x01, which set patterns match only as "any byte"), and so is a `*` or an
 * expansion that starts a name (`*.c`, `${f%.txt}.md`: the name's start is not
 * written).  After a written start, `*` is any rest of the name, and so is an
 * expansion that ends it (`id_$k`: XSTAR); an expansion between written bytes
 * (`.s${x}sh`, `/e${x}dow`) may hold '/' too (ANY).  So `cat "$f"`, `ls *`,
 * `wc -l *.c`, `cat "$dir"/README.md` are not secrets, while `cat *.pem`,
 * `~/.ss?/id_*`, `/etc/[s]hadow` and `/etc/sha$(echo d)ow` are.  The literal components before the first other
 * one are walked as any path (symlinks followed); the rest is appended as
 * written, and a `..` after a pattern component makes everything before it
 * unknown (ANY). */

/* The caller's home, resolved once a call (NULL: none known). */
const char *sgr_path_home_of(sgr_ctx *c, uint32_t *len)
{
    if (c->rhome_call != c->ncalls) {
        c->rhome_call = c->ncalls;
        const char *h = c->opts->home ? c->opts->home : getenv("HOME");
        c->rhome = h && h[0] == '/' ? resolve_path(c, "/", h, (uint32_t)strlen(h), 0, &c->rhomel, NULL, NULL) : NULL;
    }
    *len = c->rhomel;
    return c->rhome;
}
static int path_room(sgr_ctx *c, sgr_norm *nm, uint32_t *cap);
static int folds(sgr_ctx *c, const char *p, uint32_t n);
static int folds_at(sgr_ctx *c, const char *p, uint32_t n, int self);
static int has_upper(const char *s, uint32_t n);
static int fold_pattern(sgr_ctx *c, sgr_ppat *p);

#define PAT_OPAQUE 0x01u                    /* "some name" */
#define PAT_EXP    0xffu                    /* a token: an expansion, not yet classified */

/* The bracket expression at w[i] == '[': its bytes (without '/') in set and the
 * index after its ']' in *end; 0 when it is not one (then '[' is literal). */
static int glob_class(const char *w, uint32_t wl, uint32_t i, uint64_t set[4], uint32_t *end)
{
    uint32_t j = i + 1;
    int neg = j < wl && (w[j] == '!' || w[j] == '^');
    j += (uint32_t)neg;
    uint64_t s[4] = { 0, 0, 0, 0 };
    for (int first = 1; j < wl && (w[j] != ']' || first); first = 0) {
        unsigned lo = (unsigned char)w[j];
        if (lo == '[' && j + 1 < wl && (w[j + 1] == ':' || w[j + 1] == '=' || w[j + 1] == '.')) {
            /* [:alpha:], [=a=], [.a.]: a class, or one byte; unknown classes: any byte */
            char kind = w[j + 1];
            const char *e = NULL;
            for (uint32_t k = j + 2; k + 1 < wl && !e; k++)
                if (w[k] == kind && w[k + 1] == ']')
                    e = w + k;
            if (!e)
                return 0;
            const char *nm = w + j + 2;
            size_t nl = (size_t)(e - nm);
            for (unsigned b = 0; b < 256; b++) {
                int in = kind != ':' ? (nl == 1 && b == (unsigned char)nm[0])
                       : nl == 5 && !memcmp(nm, "alpha", 5) ? ((b | 32) >= 'a' && (b | 32) <= 'z')
                       : nl == 5 && !memcmp(nm, "digit", 5) ? (b >= '0' && b <= '9')
                       : nl == 5 && !memcmp(nm, "alnum", 5) ? (((b | 32) >= 'a' && (b | 32) <= 'z') || (b >= '0' && b <= '9'))
                       : nl == 5 && !memcmp(nm, "upper", 5) ? (b >= 'A' && b <= 'Z')
                       : nl == 5 && !memcmp(nm, "lower", 5) ? (b >= 'a' && b <= 'z')
                       : nl == 5 && !memcmp(nm, "space", 5) ? (b == ' ' || (b >= 9 && b <= 13))
                       : nl == 5 && !memcmp(nm, "blank", 5) ? (b == ' ' || b == '\t')
                       : nl == 5 && !memcmp(nm, "cntrl", 5) ? (b < 32 || b == 127)
                       : nl == 6 && !memcmp(nm, "xdigit", 6) ? ((b >= '0' && b <= '9') || ((b | 32) >= 'a' && (b | 32) <= 'f'))
                       : 1;                 /* punct, print, graph, word, other: any */
                if (in)
                    s[b >> 6] |= (uint64_t)1 << (b & 63);
            }
            j = (uint32_t)(e - w) + 2;
            continue;
        }
        uint32_t hi = lo;
        if (j + 2 < wl && w[j + 1] == '-' && w[j + 2] != ']') {
            hi = (unsigned char)w[j + 2];
            j += 3;
        } else {
            j++;
        }
        for (uint32_t b = lo; b <= hi && b < 256; b++)
            s[b >> 6] |= (uint64_t)1 << (b & 63);
    }
    if (j >= wl)
        return 0;                           /* no closing ']' */
    for (int k = 0; k < 4; k++)
        set[k] = neg ? ~s[k] : s[k];
    set['/' >> 6] &= ~((uint64_t)1 << ('/' & 63));
    *end = j + 1;
    return 1;
}

/* A pattern being built: elements, their classes. */
typedef struct patb {
    uint32_t *el;
    uint32_t n, cap;
    uint64_t (*cls)[4];
    uint32_t ncls;
} patb;

static int pat_add(patb *b, uint32_t e)
{
    if (b->n == b->cap)
        return -1;
    /* two loops of which one takes all the other does: one is enough */
    if (b->n && (e & 0xff) == SGR_PP_ANY && (b->el[b->n - 1] & 0xff) == SGR_PP_ANY)
        return 0;
    b->el[b->n++] = e;
    return 0;
}

/* Tokens of word w: an element (SGR_PP_*) or PAT_EXP each, and where it starts. */
typedef struct ptoks {
    uint32_t *tk, *at;
    uint32_t n;
} ptoks;

/* Read w[0..wl) (with the word's flags) into tokens; class sets into b.  Known
 * values are spelled out: $HOME and ${HOME} as the caller's home (unless the line
 * may set HOME).  0, or -1 when the arena runs out. */
static int pat_tokens(sgr_ctx *c, const char *w, uint32_t wl, uint32_t flags, ptoks *t, patb *b)
{
    uint32_t hl = 0;
    const char *home = NULL;
    if ((flags & SGR_W_VAR) && !line_sets_home(c))
        home = sgr_path_home_of(c, &hl);
    uint32_t cap = wl + (home ? hl * (wl / 5 + 1) : 0) + 1;
    t->tk = sg_arena_alloc(&c->arena, sizeof *t->tk * cap);
    t->at = sg_arena_alloc(&c->arena, sizeof *t->at * cap);
    b->cls = sg_arena_alloc(&c->arena, sizeof *b->cls * (wl / 2 + 1));
    if (!t->tk || !t->at || !b->cls)
        return -1;
    t->n = 0;
    for (uint32_t i = 0; i < wl && t->n < cap;) {
        char ch = w[i];
        if ((flags & SGR_W_UNKNOWN) && (ch == '$' || ch == '`')) {
            size_t l = sgr_sx_expansion(w + i, wl - i);
            if (l) {
                if (home && ((l == 5 && !memcmp(w + i, "$HOME", 5)) || (l == 7 && !memcmp(w + i, "${HOME}", 7)))) {
                    for (uint32_t k = 0; k < hl && t->n < cap; k++) {
                        t->at[t->n] = i;
                        t->tk[t->n++] = SGR_PP_LIT | (uint32_t)(unsigned char)home[k] << 8;
                    }
                } else {
                    t->at[t->n] = i;
                    t->tk[t->n++] = PAT_EXP;
                }
                i += (uint32_t)l;
                continue;
            }
        }
        t->at[t->n] = i;
        if ((flags & SGR_W_GLOB) && (ch == '*' || ch == '?')) {
            t->tk[t->n++] = ch == '*' ? SGR_PP_STAR : SGR_PP_ONE;
            i++;
            continue;
        }
        uint32_t end;
        if ((flags & SGR_W_GLOB) && ch == '[' && glob_class(w, wl, i, b->cls[b->ncls], &end)) {
            t->tk[t->n++] = SGR_PP_CLASS | b->ncls++ << 8;
            i = end;
            continue;
        }
        t->tk[t->n++] = SGR_PP_LIT | (uint32_t)(unsigned char)ch << 8;
        i++;
    }
    return 0;
}

static inline int tok_lit(uint32_t tk, char ch)
{
    return tk == (SGR_PP_LIT | (uint32_t)(unsigned char)ch << 8);
}

static int magic_name(const ptoks *t, uint32_t k, uint32_t e);
static int wide_class(const patb *cls, uint32_t tk);

/* One pattern of word w (tokens t, classes in cls) from token first on: resolved
 * from base ("/" for an absolute word, else a cwd; NULL: a directory known only
 * at run time) with place the directory the segment runs in (/proc/self/cwd), or
 * with opaque, under some directories (a first component of expansions). */
static int add_pattern_one(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                           const ptoks *t, const patb *cls, uint32_t first, int opaque, const char *base,
                           const char *place, int mode)
{
    uint32_t nt = t->n;
    if (mode && (opaque || !base))
        return 0;                           /* no fixed part to walk through made links */
    patb b = *cls;
    b.n = 0;
    int lead_dirs = 0;
    /* the fixed part: the literal components before the first other one */
    uint32_t fixed = first;
    for (uint32_t k = first; !opaque;) {
        uint32_t e = k;
        while (e < nt && !tok_lit(t->tk[e], '/'))
            e++;
        int plain = 1;
        for (uint32_t j = k; j < e && plain; j++)
            plain = (t->tk[j] & 0xff) == SGR_PP_LIT;
        if (!plain)
            break;
        fixed = e;
        if (e >= nt)
            break;
        k = e + 1;
    }
    /* walked as any path: its text from the tokens ($HOME spelled out) */
    char *pre = NULL;
    uint32_t pl = 0;
    int unk = 0;
    if (opaque) {
        lead_dirs = 1;                      /* `$d/x`: x under some directories, or "/" */
    } else if (!base && (first >= nt || !tok_lit(t->tk[first], '/'))) {
        lead_dirs = 1;                      /* relative to a place known at run time */
        fixed = first;
    } else {
        char *txt = sg_arena_alloc(&c->arena, fixed - first + 1);
        if (!txt)
            return -1;
        for (uint32_t j = first; j < fixed; j++)
            txt[j - first] = (char)(t->tk[j] >> 8);
        uint32_t tl = fixed - first;
        int tilde = first == 0 && tl && txt[0] == '~' && (flags & SGR_W_TILDE);
        const char *from = txt[0] == '/' || tilde ? place : base;
        if (mode && tl) {
            /* the fixed part through links made earlier on the line (mode: as made_link) */
            c->mk_mode = mode;
            c->mk_used = c->mk_glob = 0;
            c->mk_part_ok = c->mk_depth < 2;
            c->mk_pflags = 0;
            pre = sgr_path_resolve_walk(c, from, txt, tl, tilde, &pl, &unk);
            c->mk_mode = c->mk_part_ok = 0;
            uint32_t pflags = c->mk_pflags;
            c->mk_pflags = 0;
            if (pre && !c->mk_used)
                return 0;
            if (pre && pflags && !unk)
                return splice_patterns(c, nm, cap, pre, pl, fixed < nt ? w + t->at[fixed] : "",
                                       fixed < nt ? wl - t->at[fixed] : 0,
                                       pflags | (flags & (SGR_W_GLOB | SGR_W_UNKNOWN)) | (c->mk_glob ? SGR_W_GLOB : 0));
        } else if (tl) {
            pre = resolve_path(c, from, txt, tl, tilde, &pl, NULL, &unk);
        } else {
            if (mode)
                return 0;
            pre = (char *)(base ? base : "/");
            pl = (uint32_t)strlen(pre);
        }
        if (!pre)
            return -1;
        lead_dirs = unk;                    /* below a descriptor: some place */
    }
    /* sized for what it holds, so a pattern costs the arena little */
    b.cap = 2 * nt + pl + 8;
    if (!(b.el = sg_arena_alloc(&c->arena, sizeof *b.el * b.cap)))
        return -1;
    if (lead_dirs)
        pat_add(&b, SGR_PP_DIRS);
    for (uint32_t i = 0; pre && i < pl && !(pl == 1 && pre[0] == '/' && unk); i++)
        pat_add(&b, SGR_PP_LIT | (uint32_t)(unsigned char)pre[i] << 8);
    int lost = !base || unk || opaque;      /* counts as outside */
    uint32_t magic_after = fixed;           /* past the last wildcard or /proc, /dev name */
    uint32_t bnd[8], nbnd = 0;              /* past each of them (the last 8) */
    int relword_absolute = (nt && tok_lit(t->tk[0], '/')) || ((flags & SGR_W_TILDE) && w[0] == '~');
    /* the rest, component by component, as written: into b for the set's
     * automaton, and into bw for its exact words, where a glob's wildcards are
     * themselves (a glob expands to every match: "/etc/ *" names /etc/shadow) */
    patb bw = b;
    bw.cap = b.cap;
    if (!(bw.el = sg_arena_alloc(&c->arena, sizeof *bw.el * bw.cap)))
        return -1;
    memcpy(bw.el, b.el, sizeof *b.el * b.n);
#define BOTH(x) do { pat_add(&b, (x)); pat_add(&bw, (x)); } while (0)
    for (uint32_t k = fixed; k < nt;) {
        if (tok_lit(t->tk[k], '/')) {
            k++;
            continue;
        }
        uint32_t e = k;
        while (e < nt && !tok_lit(t->tk[e], '/'))
            e++;
        int lit = 0, plain = 1, exp = 0;
        for (uint32_t j = k; j < e; j++) {
            lit |= (t->tk[j] & 0xff) == SGR_PP_LIT;
            plain &= (t->tk[j] & 0xff) == SGR_PP_LIT;
            exp |= t->tk[j] == PAT_EXP;
        }
        if (!plain || magic_name(t, k, e)) {
            magic_after = e;
            if (nbnd == 8)
                memmove(bnd, bnd + 1, sizeof bnd - sizeof *bnd), nbnd--;
            bnd[nbnd++] = e;
        }
        if (plain && e - k == 1 && tok_lit(t->tk[k], '.')) {
            k = e;
            continue;
        }
        if (plain && e - k == 2 && tok_lit(t->tk[k], '.') && tok_lit(t->tk[k + 1], '.')) {
            b.n = bw.n = 0;                 /* the parent of a pattern: some place */
            BOTH(SGR_PP_DIRS);
            lost = 1;
            k = e;
            continue;
        }
        if (!(b.n == 1 && b.el[0] == (SGR_PP_LIT | '/' << 8)))
            BOTH(SGR_PP_LIT | '/' << 8);
        if (!lit) {
            pat_add(&b, SGR_PP_LIT | PAT_OPAQUE << 8);
            for (uint32_t j = k; j < e; j++)
                pat_add(&bw, exp ? (j == k ? SGR_PP_LIT | PAT_OPAQUE << 8 : 0xffffffffu) : t->tk[j]);
            while (bw.n && bw.el[bw.n - 1] == 0xffffffffu)
                bw.n--;
            k = e;
            continue;
        }
        /* the first component of a relative word: an expansion in it makes the
         * word's own start, so it stays within the name */
        int head = k == 0 && !relword_absolute;
        for (uint32_t j = k; j < e; j++) {
            uint32_t tk = t->tk[j];
            int run = tk == SGR_PP_STAR || tk == PAT_EXP;
            if (j == k && (run || tk == SGR_PP_ONE || wide_class(cls, tk))) {
                pat_add(&b, SGR_PP_LIT | PAT_OPAQUE << 8);  /* a name's unwritten start */
                pat_add(&bw, tk == PAT_EXP ? SGR_PP_LIT | PAT_OPAQUE << 8 : tk);
                continue;
            }
            int after = 0;
            for (uint32_t x = j + 1; x < e && !after; x++)
                after = t->tk[x] != PAT_EXP && t->tk[x] != SGR_PP_STAR;
            if (run && !after) {
                pat_add(&b, SGR_PP_STEM);   /* completes a written start, no extension */
                pat_add(&bw, tk == SGR_PP_STAR ? SGR_PP_STAR : SGR_PP_STEM);
                continue;
            }
            if (tk != PAT_EXP) {
                BOTH(tk);
                continue;
            }
            BOTH(head ? SGR_PP_XSTAR : SGR_PP_ANY);
        }
        k = e;
    }
#undef BOTH
    if (b.n == 0)
        pat_add(&b, SGR_PP_LIT | '/' << 8);
    if (bw.n == 0)
        pat_add(&bw, SGR_PP_LIT | '/' << 8);
    /* the path as messages show it: where the fixed part led, then the rest as written */
    uint32_t doff = fixed < nt ? t->at[fixed] : wl;
    uint32_t dl = (pre ? pl : 0) + 1 + (wl - doff);
    char *disp = sg_arena_alloc(&c->arena, dl + 1);
    sgr_ppat *pp = sg_arena_alloc(&c->arena, sizeof *pp);
    if (!disp || !pp || path_room(c, nm, cap) < 0)
        return -1;
    uint32_t n = 0;
    if (pre) {
        memcpy(disp, pre, pl);
        n = pl;
    }
    if (doff < wl) {
        if (n && disp[n - 1] == '/' && w[doff] == '/')
            n--;
        else if (n && disp[n - 1] != '/' && w[doff] != '/')
            disp[n++] = '/';
        memcpy(disp + n, w + doff, wl - doff);
        n += wl - doff;
    }
    disp[n] = '\0';
    sgr_ppat *wp = sg_arena_alloc(&c->arena, sizeof *wp);
    if (!wp)
        return -1;
    pp->el = b.el;
    pp->n = b.n;
    pp->cls = (const uint64_t (*)[4])b.cls;
    wp->el = bw.el;
    wp->n = bw.n;
    wp->cls = pp->cls;
    wp->words = NULL;
    pp->words = wp;
    /* on a case-folding directory: the fixed part's, at or above it */
    if (pre && (has_upper(pre, pl) || has_upper(w, wl)) && folds_at(c, pre, pl, 1)
        && (fold_pattern(c, pp) < 0 || fold_pattern(c, wp) < 0))
        return -1;
    nm->paths[nm->npaths].s = disp;
    nm->paths[nm->npaths].len = n;
    nm->pin[nm->npaths] = 0;
    nm->ppat[nm->npaths] = pp;
    nm->npaths++;
    nm->npats++;
    if (lost)
        mark_unknown(nm, disp, n);          /* anywhere: outside */
    /* a wildcard or a magic name under /proc or /dev may lead anywhere
     * (/proc/sel[f]/root/etc/sha*, /proc/self/roo[t]/etc/shadow): what follows
     * each of them is also a pattern below some place */
    if (!mode && magic_after > fixed && (sgr_pp_word(wp, "/proc", 5, 1) || sgr_pp_word(wp, "/dev", 4, 1)))
        for (uint32_t i = 0; i < nbnd; i++)
            if (add_pattern_one(c, nm, cap, w, wl, flags, t, cls, bnd[i], 1, "/", place, 0) < 0)
                return -1;
    return 0;
}

/* A class that takes more than one letter in both cases or one other byte: a
 * wildcard, not a written byte ([a-m], [!_]; [s] and [sS] are written). */
static int wide_class(const patb *cls, uint32_t tk)
{
    if ((tk & 0xff) != SGR_PP_CLASS)
        return 0;
    const uint64_t *s = cls->cls[tk >> 8];
    int n = 0, lower = -1;
    for (unsigned b = 0; b < 256; b++)
        if ((s[b >> 6] >> (b & 63)) & 1) {
            unsigned l = (b >= 'A' && b <= 'Z') ? b + 32 : b;
            if (lower < 0)
                lower = (int)l;
            else if ((int)l != lower)
                return 1;
            n++;
        }
    return n > 2;
}

/* Is component t[k, e) (all literal bytes) a name /proc or /dev resolve by what it
 * means: self, thread-self, root, cwd, fd, task, stdin, stdout, stderr, a number? */
static int magic_name(const ptoks *t, uint32_t k, uint32_t e)
{
    static const char *const names[] = { "self", "thread-self", "root", "cwd", "fd", "task", "stdin", "stdout",
                                         "stderr", NULL };
    char b[16];
    uint32_t n = e - k, digits = n > 0;
    if (n >= sizeof b)
        return 0;
    for (uint32_t j = 0; j < n; j++) {
        if ((t->tk[k + j] & 0xff) != SGR_PP_LIT)
            return 0;
        b[j] = (char)(t->tk[k + j] >> 8);
        digits &= b[j] >= '0' && b[j] <= '9';
    }
    b[n] = '\0';
    for (const char *const *x = names; *x && !digits; x++)
        digits = strcmp(b, *x) == 0;
    return (int)digits;
}

/* add_pattern_one as the word reads, and through links made earlier on the line. */
static int add_pattern_modes(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                             const ptoks *t, const patb *cls, uint32_t first, int opaque, const char *base,
                             const char *place)
{
    for (int mode = 0; mode <= (c->nmk ? 2 : 0); mode++)
        if (add_pattern_one(c, nm, cap, w, wl, flags, t, cls, first, opaque, base, place, mode) < 0)
            return -1;
    return 0;
}

/* The patterns of word w[0..wl) (one brace alternative), appended to nm's paths.
 * Nothing for a word whose every literal byte is '/' or '.' and that has no
 * glob (`"$f"`, `$d/$f`): such a word is unknown, as before (counted outside,
 * its text kept), and not every secret. */
static int add_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags)
{
    ptoks t;
    patb cls = { NULL, 0, 0, NULL, 0 };
    if (pat_tokens(c, w, wl, flags, &t, &cls) < 0)
        return -1;
    int tilde = (flags & SGR_W_TILDE) && w[0] == '~';
    if (tilde && wl > 1 && w[1] != '/')
        return 0;                           /* ~user: not known */
    if (tilde && line_sets_home(c)) {
        t.tk[0] = PAT_EXP;                  /* HOME=/etc; cat ~/shadow: ~ is some place */
        tilde = 0;
    }
    int informative = tilde;
    for (uint32_t k = 0; k < t.n && !informative; k++)
        informative = t.tk[k] != PAT_EXP && !tok_lit(t.tk[k], '/') && !tok_lit(t.tk[k], '.');
    int absolute0 = (t.n && tok_lit(t.tk[0], '/')) || tilde, some_place = !absolute0 && nm->cwd_unknown;
    if (some_place)
        for (uint32_t k = 0; k < t.n && !informative; k++)
            informative = t.tk[k] != PAT_EXP;   /* `cd "$X" && rm -rf .`: some directory */
    if (!informative)
        return 0;
    int absolute = (t.n && tok_lit(t.tk[0], '/')) || tilde;
    /* a first component of expansions only (`$d/x`, `$(pwd)/x`): empty ("/x"),
     * or some directory ("/<name>/x") */
    uint32_t first_end = 0;
    while (first_end < t.n && !tok_lit(t.tk[first_end], '/'))
        first_end++;
    int lead = !absolute && first_end > 0 && first_end < t.n;
    for (uint32_t k = 0; k < first_end && lead; k++)
        lead = t.tk[k] == PAT_EXP;
    if (lead)
        return add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, first_end, 1, "/", nm->cwd);
    if (absolute)
        return add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, 0, 0, "/", nm->cwd);
    if (nm->cwd_unknown)
        return add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, 0, 0, NULL, nm->cwd);
    for (uint32_t k = 0; k < nm->ncwds; k++) {
        const char *d = nm->cwds[nm->ncwds - 1 - k];
        if (add_pattern_modes(c, nm, cap, w, wl, flags, &t, &cls, 0, 0, d, d) < 0)
            return -1;
    }
    return 0;
}

/* The patterns of a[0..al) and then b[0..bl): a path the walk spliced through a link
 * to a partly known word (made_link), with the flags of the words it holds; that
 * word's own links are lost from here on (mk_depth), so splicing ends. */
static int splice_patterns(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *a, uint32_t al, const char *b,
                           uint32_t bl, uint32_t flags)
{
    char *j = sg_arena_alloc(&c->arena, (size_t)al + bl + 1);
    if (!j)
        return -1;
    memcpy(j, a, al);
    memcpy(j + al, b, bl);
    j[al + bl] = '\0';
    c->mk_depth++;
    int rc = add_patterns(c, nm, cap, j, al + bl, flags);
    c->mk_depth--;
    return rc;
}

static int add_word(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags);

/* A brace expansion makes at most this many words of one path candidate; a word
 * that would make more makes its segment dynamic (brace_check). */
#define SGR_BRACE_MAX 256

/* Path candidate w[0..wl): each word its brace expansion makes (brace_check
 * has made the segment dynamic when there are too many), or w itself.  Braces
 * are read from the text, quoted or not; for a word with a quoted part its text
 * as written is one more alternative (every brace quoted). */
static int add_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags)
{
    if (!(flags & SGR_W_BRACE))
        return add_word(c, nm, cap, w, wl, flags);
    const char **words = sg_arena_alloc(&c->arena, sizeof *words * SGR_BRACE_MAX);
    uint32_t *lens = sg_arena_alloc(&c->arena, sizeof *lens * SGR_BRACE_MAX);
    if (!words || !lens)
        return -1;
    int n = sgr_sx_braces(&c->arena, w, wl, words, lens, SGR_BRACE_MAX);
    if (n == -2)
        return -1;
    flags &= ~(uint32_t)SGR_W_BRACE;
    if (n <= 0 || (flags & SGR_W_QUOTED))
        if (add_word(c, nm, cap, w, wl, flags | (n < 0 ? SGR_W_VAR : 0)) < 0)
            return -1;
    for (int i = 0; i < n; i++)
        if (add_word(c, nm, cap, words[i], lens[i], flags) < 0)
            return -1;
    return 0;
}

/* One word of a path candidate: resolved from every cwd it may be in, and when
 * the shell still expands it, its patterns too. */
static int add_word(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags)
{
    if (wl == 0 || not_a_file(w, wl))
        return 0;
    uint32_t hv;
    if ((flags & SGR_W_UNKNOWN) == SGR_W_VAR && (hv = home_var(w, wl)) && !line_sets_home(c)) {
        /* "$HOME"/x is ~/x: the caller's home */
        char *t = sg_arena_alloc(&c->arena, wl - hv + 2);
        if (!t)
            return -1;
        t[0] = '~';
        memcpy(t + 1, w + hv, wl - hv);
        t[wl - hv + 1] = '\0';
        w = t;
        wl = wl - hv + 1;
        flags = (flags & ~SGR_W_VAR) | SGR_W_TILDE;
    }
    uint32_t flags0 = flags;
    int home_set = (flags & SGR_W_TILDE) && w[0] == '~' && line_sets_home(c);
    if (home_set)
        flags |= SGR_W_VAR;                 /* HOME=/etc; cat ~/shadow */
    /* ~user, ~+, ~-: another home or a directory stack entry, known only at run time */
    if ((flags & SGR_W_TILDE) && w[0] == '~' && wl > 1 && w[1] != '/')
        flags |= SGR_W_VAR;
    if (flags & (SGR_W_UNKNOWN))
        mark_unknown(nm, w, wl);            /* still record the literal text, so `path
                                             * inside` sees "$HOME/.ssh/x" */
    int relative = w[0] != '/' && !((flags & SGR_W_TILDE) && w[0] == '~');
    /* /proc/self/cwd names the directory the segment runs in: like a relative path */
    relative |= w[0] == '/' && wl >= 4 && memmem(w, wl, "/cwd", 4) != NULL;
    if (relative && nm->cwd_unknown && !(flags & SGR_W_UNKNOWN)) {
        /* relative to a directory only known at run time */
        flags |= SGR_W_VAR;
        mark_unknown(nm, w, wl);
        nm->rel_unknown++;
    }
    /* a relative operand under every cwd the segment may run in (the last one
     * first); an absolute one once */
    uint32_t ncw = relative && !(flags & SGR_W_UNKNOWN) && nm->ncwds > 1 ? nm->ncwds : 1;
    for (uint32_t k = 0; k < ncw; k++) {
        const char *base = ncw > 1 ? nm->cwds[nm->ncwds - 1 - k] : nm->cwd;
        if (add_one_path(c, nm, cap, w, wl, flags, base) < 0)
            return -1;
    }

    if ((flags0 & (SGR_W_GLOB | SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH)) || home_set
        || (relative && nm->cwd_unknown))
        return add_patterns(c, nm, cap, w, wl, flags0);
    return 0;
}

/* Room for one more path in nm. */
static int path_room(sgr_ctx *c, sgr_norm *nm, uint32_t *cap)
{
    if (nm->npaths < *cap)
        return 0;
    /* the first arrays by the inline bump, not sg_arena_grow's call */
    uint32_t ncap = *cap ? *cap * 2 : 8;
    sgr_sv *np = *cap ? sg_arena_grow(&c->arena, nm->paths, sizeof *np * *cap, sizeof *np * ncap)
                      : sg_arena_alloc(&c->arena, sizeof *np * ncap);
    if (!np)
        return -1;
    nm->paths = np;
    uint64_t *pin = *cap ? sg_arena_grow(&c->arena, nm->pin, sizeof *pin * *cap, sizeof *pin * ncap)
                         : sg_arena_alloc(&c->arena, sizeof *pin * ncap);
    if (!pin)
        return -1;
    nm->pin = pin;
    const sgr_ppat **pp = *cap ? sg_arena_grow(&c->arena, nm->ppat, sizeof *pp * *cap, sizeof *pp * ncap)
                               : sg_arena_alloc(&c->arena, sizeof *pp * ncap);
    if (!pp)
        return -1;
    nm->ppat = pp;
    *cap = ncap;
    return 0;
}

/* ---- case-folding filesystems --------------------------------------------------- */

const char *sgr_fold_force;

/* Does looking up names in directory d fold case: a filesystem that does by its
 * type (FAT, exFAT, NTFS, HFS+, CIFS/SMB), or a directory with the casefold
 * flag (ext4, f2fs, tmpfs)?  ext4 without casefold does not.  sgr_fold_force
 * (tests only) names a directory below which every one folds. */
static int dir_folds(const char *d)
{
    size_t fl = sgr_fold_force ? strlen(sgr_fold_force) : 0;
    if (fl && strncmp(d, sgr_fold_force, fl) == 0 && (d[fl] == '\0' || d[fl] == '/'))
        return 1;
    struct statfs sf;
    if (statfs(d, &sf) != 0)
        return 0;
    switch ((uint32_t)sf.f_type) {
    case 0x4d44u: case 0x2011BAB0u: case 0x5346544eu: case 0x7366746eu: case 0x482bu: case 0x4244u:
    case 0xFF534D42u: case 0xFE534D42u: case 0x517Bu:
        return 1;                           /* msdos/vfat, exfat, ntfs, ntfs3, hfs+, hfs, cifs, smb2, smb */
    case 0xEF53u: case 0xF2F52010u: case 0x01021994u: {
        int fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
            return 0;
        int flags = 0;
        int r = ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & 0x40000000);  /* FS_CASEFOLD_FL */
        close(fd);
        return r;
    }
    default:
        return 0;
    }
}

/* Is path p[0..n) on a case-folding directory (folds: dir_folds of the deepest
 * existing directory above it)?  Asked only for a path with an upper-case letter,
 * whose lower-case spelling is what sets name (~/.SSH/ID_RSA).  Answers are kept
 * while the path cache's epoch stands (pathcache.h). */
static int has_upper(const char *s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (s[i] >= 'A' && s[i] <= 'Z')
            return 1;
    return 0;
}

/* dir_folds of the deepest existing directory at (self) or above p[0..n). */
static int folds_at(sgr_ctx *c, const char *p, uint32_t n, int self)
{
    if (n >= 256 || p[0] != '/')
        return 0;
    char d[256];
    uint32_t dl = n;
    memcpy(d, p, n);
    d[n] = '\0';
    for (int first = 1;; first = 0) {
        if (!(first && self)) {
            while (dl > 1 && d[dl - 1] != '/')
                dl--;
            dl = dl > 1 ? dl - 1 : 1;
            d[dl] = '\0';
        }
        size_t ll;
        if (dl == 1 || sgr_pc_lstat(c->pc, d, NULL, 0, &ll) == SGR_PC_DIR)
            break;
    }
    uint64_t e = sgr_fold_force ? 0 : sgr_pc_epoch(c->pc);   /* (a test's answers are not kept) */
    for (int i = 0; i < 4 && e; i++)
        if (c->fold_memo[i].epoch == e && c->fold_memo[i].len == dl && memcmp(c->fold_memo[i].dir, d, dl) == 0)
            return c->fold_memo[i].fold;
    int f = dir_folds(d);
    if (e && sgr_pc_epoch(c->pc) == e) {
        uint32_t k = c->fold_next++ & 3;
        memcpy(c->fold_memo[k].dir, d, dl + 1);
        c->fold_memo[k].len = dl;
        c->fold_memo[k].epoch = e;
        c->fold_memo[k].fold = f;
    }
    return f;
}

static int folds(sgr_ctx *c, const char *p, uint32_t n)
{
    return has_upper(p, n) && folds_at(c, p, n, 0);
}

/* The letters of pattern p (a class for each) as a folding directory reads them. */
static int fold_pattern(sgr_ctx *c, sgr_ppat *p)
{
    uint32_t nc = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t k = p->el[i] & 0xff, b = p->el[i] >> 8;
        nc += (k == SGR_PP_LIT && ((b | 32) >= 'a' && (b | 32) <= 'z')) || k == SGR_PP_CLASS;
    }
    if (!nc)
        return 0;
    uint64_t (*cls)[4] = sg_arena_alloc(&c->arena, sizeof *cls * nc);
    uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * p->n);
    if (!cls || !el)
        return -1;
    uint32_t k2 = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t k = p->el[i] & 0xff, b = p->el[i] >> 8;
        el[i] = p->el[i];
        if (k == SGR_PP_LIT && ((b | 32) >= 'a' && (b | 32) <= 'z')) {
            memset(cls[k2], 0, sizeof cls[k2]);
            cls[k2][(b | 32) >> 6] |= (uint64_t)1 << ((b | 32) & 63);
            cls[k2][(b & ~32u) >> 6] |= (uint64_t)1 << ((b & ~32u) & 63);
            el[i] = SGR_PP_CLASS | k2++ << 8;
        } else if (k == SGR_PP_CLASS) {
            memcpy(cls[k2], p->cls[b], sizeof cls[k2]);
            for (uint32_t x = 'a'; x <= 'z'; x++)
                if ((cls[k2][x >> 6] >> (x & 63) & 1) || (cls[k2][(x - 32) >> 6] >> ((x - 32) & 63) & 1)) {
                    cls[k2][x >> 6] |= (uint64_t)1 << (x & 63);
                    cls[k2][(x - 32) >> 6] |= (uint64_t)1 << ((x - 32) & 63);
                }
            el[i] = SGR_PP_CLASS | k2++ << 8;
        }
    }
    p->el = el;
    p->cls = (const uint64_t (*)[4])cls;
    return 0;
}

/* Append resolved path r[0..rl) to nm (in_cwd: known to be the cwd, '/' and more);
 * judged against the roots when judge. */
static int push_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *r, uint32_t rl, int in_cwd, int judge)
{
    uint32_t cl = c->rcwdl;
    if (!in_cwd)
        in_cwd = cl > 1 && rl > cl && r[cl] == '/' && memcmp(r, c->rcwd, cl) == 0;
    if (path_room(c, nm, cap) < 0)
        return -1;
    nm->paths[nm->npaths].s = r;
    nm->paths[nm->npaths].len = rl;
    nm->pin[nm->npaths] = in_cwd ? PIN_CWD : 0;
    nm->ppat[nm->npaths] = NULL;
    nm->npaths++;
    if (folds(c, r, rl)) {
        /* on a case-folding directory ~/.SSH/ID_RSA is ~/.ssh/id_rsa: the path
         * as a pattern whose letters match either case */
        sgr_ppat *pp = sg_arena_alloc(&c->arena, sizeof *pp);
        uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * (rl + 1));
        if (!pp || !el || path_room(c, nm, cap) < 0)
            return -1;
        for (uint32_t i = 0; i < rl; i++)
            el[i] = SGR_PP_LIT | (uint32_t)(unsigned char)r[i] << 8;
        pp->el = el;
        pp->n = rl;
        pp->cls = NULL;
        pp->words = NULL;
        if (fold_pattern(c, pp) < 0)
            return -1;
        nm->paths[nm->npaths].s = r;
        nm->paths[nm->npaths].len = rl;
        nm->pin[nm->npaths] = 0;
        nm->ppat[nm->npaths++] = pp;
        nm->npats++;
    }
    if (judge) {
        int in = 0;
        for (uint32_t i = 0; i < c->nroots && !in; i++)
            in = (in_cwd && c->roots[i] == c->rcwd) || under(r, rl, c->roots[i]);
        if (!in && !nm->outside) {
            nm->outside = 1;
            nm->outside_path.s = r;
            nm->outside_path.len = rl;
        }
    }
    return 0;
}

/* A walk that went through a descriptor, another process's cwd or a link made to
 * some place: r[0..rl) (what follows) below some place known at run time; the
 * path counts as outside and messages show word w. */
static int push_below(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *r, uint32_t rl, const char *w, uint32_t wl)
{
    mark_unknown(nm, w, wl);
    sgr_ppat *pp = sg_arena_alloc(&c->arena, sizeof *pp);
    uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * (rl + 1));
    if (!pp || !el || path_room(c, nm, cap) < 0)
        return -1;
    pp->n = 0;
    el[pp->n++] = SGR_PP_DIRS;
    for (uint32_t i = 0; i < rl && !(rl == 1 && r[0] == '/'); i++)
        el[pp->n++] = SGR_PP_LIT | (uint32_t)(unsigned char)r[i] << 8;
    pp->el = el;
    pp->cls = NULL;
    pp->words = NULL;
    nm->paths[nm->npaths].s = w;
    nm->paths[nm->npaths].len = wl;
    nm->pin[nm->npaths] = 0;
    nm->ppat[nm->npaths++] = pp;
    nm->npats++;
    return 0;
}

/* Could the walk of a path that resolved to r[0..rl) without a symlink meet a name
 * made on the line: is one of them r or a directory above it (or a pattern)? */
static int made_under(const sgr_ctx *c, const char *r, uint32_t rl)
{
    for (uint32_t i = 0; i < c->nmk; i++) {
        const sgr_mkres *m = &c->mk[i];
        if (m->npat || (m->nl <= rl && memcmp(m->name, r, m->nl) == 0 && (m->nl == rl || r[m->nl] == '/')))
            return 1;
    }
    return 0;
}

static int add_one_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl, uint32_t flags,
                        const char *cwd)
{
    uint32_t rl = wl, cl = c->rcwdl;
    char *r = (char *)w;
    int in_cwd = 0;                         /* r is the resolved cwd (not "/"), a '/', more */
    int short_way = 0;                      /* no symlink on the way: r's prefixes are the walk's */
    if (!(flags & SGR_W_UNKNOWN)) {
        int plain, unk;
        r = resolve_path(c, cwd, w, wl, (flags & SGR_W_TILDE) != 0, &rl, &plain, &unk);
        if (!r)
            return -1;
        if (unk)
            return push_below(c, nm, cap, r, rl, w, wl);
        in_cwd = plain && cl > 1;           /* what the short way makes: no need to compare */
        short_way = plain;
    }
    if (push_path(c, nm, cap, r, rl, in_cwd, !(flags & SGR_W_UNKNOWN)) < 0)
        return -1;
    if (!c->nmk || (flags & SGR_W_UNKNOWN) || (short_way && !made_under(c, r, rl)))
        return 0;
    /* through what earlier segments make: also where their links lead */
    for (uint32_t mode = 1, pick = 0; mode <= 2; pick++) {
        uint32_t l2;
        int unk2;
        c->mk_mode = (int)mode;
        c->mk_used = c->mk_glob = 0;
        c->mk_part_ok = c->mk_depth < 2;
        c->mk_pflags = 0;
        c->mk_pick = pick;
        c->mk_radix = 1;
        char *r2 = sgr_path_resolve_walk(c, cwd, w, wl, (flags & SGR_W_TILDE) != 0, &l2, &unk2);
        c->mk_mode = c->mk_part_ok = 0;
        if (pick + 1 >= c->mk_radix || pick + 1 >= SGR_MK_PICKS) {
            if (pick + 1 < c->mk_radix)
                mark_unknown(nm, w, wl);    /* more choices than are walked */
            mode++;                         /* every choice walked: the next mode */
            pick = UINT32_MAX;
        }
        c->mk_pick = 0;
        c->mk_radix = 1;
        uint32_t pflags = c->mk_pflags;
        c->mk_pflags = 0;
        if (!r2)
            return -1;
        if (c->mk_used && pflags && !unk2) {
            /* through a link to a partly known word: known only at run time, and
             * the patterns of what that word and the rest can name */
            mark_unknown(nm, w, wl);
            if (splice_patterns(c, nm, cap, r2, l2, "", 0, pflags | (c->mk_glob ? SGR_W_GLOB : 0)) < 0)
                return -1;
            continue;
        }
        if (c->mk_used && c->mk_glob && !unk2) {
            /* through a link to a glob: what the glob and the rest can name */
            if (add_patterns(c, nm, cap, r2, l2, SGR_W_GLOB) < 0)
                return -1;
            continue;
        }
        if (c->mk_used && unk2 && push_below(c, nm, cap, r2, l2, w, wl) < 0)
            return -1;
        if (c->mk_used && !unk2 && !(l2 == rl && memcmp(r2, r, rl) == 0)
            && push_path(c, nm, cap, r2, l2, 0, 1) < 0)
            return -1;
    }
    return 0;
}

/* A path candidate of segment si whose brace expansion would make more than
 * SGR_BRACE_MAX words makes the segment dynamic: those words cannot all be
 * checked.  -1: out of memory. */
int sgr_path_brace_check(sgr_ctx *c, uint32_t si)
{
    sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    const sgr_word *over = NULL;
    for (uint32_t i = nm->text_ops; i < nm->npos && !over; i++)
        if (s->argv[nm->pos[i]].flags & SGR_W_BRACE)
            over = &s->argv[nm->pos[i]];
    for (uint32_t i = 0; i < nm->nvals && !over; i++)
        if ((nm->vflags[i] & SGR_W_BRACE) && !(nm->vflags[i] & SGR_V_TEXT))
            over = (const sgr_word *)1;     /* a value: checked below */
    for (uint32_t i = 0; i < s->nredirs && !over; i++)
        if (s->redirs[i].target.flags & SGR_W_BRACE)
            over = &s->redirs[i].target;
    for (uint32_t i = 0; i < s->nvalues && !over; i++)
        if (s->values[i].flags & SGR_W_BRACE)
            over = &s->values[i];
    if (!over)
        return 0;                           /* nearly every segment */
    const char **words = sg_arena_alloc(&c->arena, sizeof *words * SGR_BRACE_MAX);
    uint32_t *lens = sg_arena_alloc(&c->arena, sizeof *lens * SGR_BRACE_MAX);
    if (!words || !lens)
        return -1;
    int too_many = 0;
    for (uint32_t i = nm->text_ops; i < nm->npos && !too_many; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        if (w->flags & SGR_W_BRACE) {
            int r = sgr_sx_braces(&c->arena, w->text, w->len, words, lens, SGR_BRACE_MAX);
            if (r == -2)
                return -1;
            too_many = r == -1;
        }
    }
    for (uint32_t i = 0; i < nm->nvals && !too_many; i++)
        if ((nm->vflags[i] & SGR_W_BRACE) && !(nm->vflags[i] & SGR_V_TEXT)) {
            int r = sgr_sx_braces(&c->arena, nm->vals[i].s, nm->vals[i].len, words, lens, SGR_BRACE_MAX);
            if (r == -2)
                return -1;
            too_many = r == -1;
        }
    for (uint32_t i = 0; i < s->nvalues + s->nredirs && !too_many; i++) {
        const sgr_word *w = i < s->nvalues ? &s->values[i] : &s->redirs[i - s->nvalues].target;
        if (w->flags & SGR_W_BRACE) {
            int r = sgr_sx_braces(&c->arena, w->text, w->len, words, lens, SGR_BRACE_MAX);
            if (r == -2)
                return -1;
            too_many = r == -1;
        }
    }
    if (too_many && !(s->flags & SGR_SEG_DYNAMIC)) {
        s->flags |= SGR_SEG_DYNAMIC;
        s->dyn_reason = "a brace expansion makes more than 256 words";
    }
    return 0;
}

/* May a loop variable name its loop's words on this line at all: no function, no
 * nullglob/failglob, and within the bounds above.  Once per line: the headers are
 * kept in c->loop_hdr. */
static int loop_line(sgr_ctx *c)
{
    if (c->loop_call == c->ncalls)
        return c->loop_ok;
    c->loop_call = c->ncalls;
    c->loop_ok = 0;
    c->nloop_hdr = 0;
    const sgr_cmdline *cl = &c->res.cl;
    if (cl->nfuncs || cl->nvars > LOOP_MAX_VARS || memmem(c->line, c->len, "glob", 4))
        return 0;
    uint32_t words = 0;
    for (uint32_t h = 0; h < cl->nseg; h++)
        if (cl->seg[h].flags & SGR_SEG_LOOP) {
            words += cl->seg[h].nvalues;
            if (c->nloop_hdr == LOOP_MAX_HEADERS || words > LOOP_MAX_WORDS)
                return 0;
            c->loop_hdr[c->nloop_hdr++] = h;
        }
    c->loop_ok = c->nloop_hdr > 0;
    return c->loop_ok;
}

/* The words a loop variable takes, for a word of segment si that is only its
 * expansion: "$f", "${f}", or $f unquoted when each word is a plain name bash
 * neither splits nor globs.  Sound only inside the body of a loop that sets it
 * (there it holds one of the words of the loops that set it), and only where
 * nothing else can have: every assignment of NAME on the line is a for/select
 * header's word, each known or a glob (a file name the loop walks), no function
 * (whose body runs where it is called) and no shopt of nullglob/failglob.
 * A script in the body (a single-quoted sh -c '...' is parsed in place, so its
 * words lie there too) runs in a shell of its own, which has the variable only
 * when the loop's shell exports it, and then with the loop's value: still one of
 * the words, or nothing.
 * Returns the number of words stored in *out (at most max), 0 when the word is
 * not such a use. */
uint32_t sgr_path_loop_words(sgr_ctx *c, uint32_t si, const sgr_word *w,
                             const sgr_word **out, uint32_t max)
{
    const sgr_cmdline *cl = &c->res.cl;
    if ((w->flags & SGR_W_UNKNOWN) != SGR_W_VAR || (w->flags & (SGR_W_GLOB | SGR_W_BRACE))
        || (cl->seg[si].flags & SGR_SEG_FUNCDEF)
        || w->span.off + w->span.len > c->len || w->span.len < 2 || w->span.len > 68)
        return 0;
    const char *src = c->line + w->span.off;
    uint32_t sl = w->span.len, q = src[0] == '"';
    if (q && (sl < 4 || src[sl - 1] != '"'))
        return 0;
    const char *e = src + q, *ee = src + sl - q;
    if (*e++ != '$')
        return 0;
    int br = e < ee && *e == '{';
    e += br;
    const char *name = e;
    while (e < ee && (name_byte(*e)))
        e++;
    uint32_t nl = (uint32_t)(e - name);
    if (!nl || (name[0] >= '0' && name[0] <= '9') || (br && (e >= ee || *e++ != '}')) || e != ee)
        return 0;
    if (!loop_line(c))
        return 0;
    uint32_t n = 0;
    int inside = 0;
    for (uint32_t v = 0; v < cl->nvars; v++) {
        const sgr_shvar *sv = &cl->vars[v];
        if (sv->nlen != nl || memcmp(sv->name, name, nl) != 0)
            continue;
        if (sv->seg != -1 || (sv->vflags & (SGR_W_UNKNOWN | SGR_W_PROCSUB)))
            return 0;
        /* the header word this record is, and whether w is in that loop's body */
        const sgr_word *hw = NULL;
        for (uint32_t h = 0; h < c->nloop_hdr && !hw; h++) {
            const sgr_segment *hs = &cl->seg[c->loop_hdr[h]];
            for (uint32_t k = 0; k < hs->nvalues && !hw; k++)
                if (hs->values[k].span.off == sv->span.off && hs->values[k].span.len == sv->span.len) {
                    hw = &hs->values[k];
                    const sgr_span *last = &hs->values[hs->nvalues - 1].span;
                    inside |= w->span.off >= last->off + last->len
                              && w->span.off + w->span.len <= hs->span.off + hs->span.len;
                }
        }
        if (!hw || n == max)
            return 0;
        if (!q) {
            /* unquoted: split and globbed again, so only a plain name stays itself */
            if (hw->flags || !hw->len)
                return 0;
            for (uint32_t k = 0; k < hw->len; k++)
                if (!name_byte(hw->text[k]) && hw->text[k] != '.' && hw->text[k] != '/'
                    && hw->text[k] != '-' && hw->text[k] != '+')
                    return 0;
        }
        out[n++] = hw;
    }
    return inside ? n : 0;
}

/* ---- module at N inside workspace ------------------------------------------
 * python -m NAME runs the first module NAME the interpreter finds, and it looks in
 * the directory it runs in first (after its builtin and frozen modules, which run
 * no file): the workspace's own app.py, or else an installed or standard one
 * (python -m http.server serves files).  argv[a] is such a module of the
 * workspace when, from every directory the segment may run in, each package on
 * the way (a of a.b) is a directory with __init__.py and NAME itself is a
 * package with __init__.py and __main__.py or, failing the package, NAME.py --
 * every such file a regular file that resolves inside the roots.  A package
 * without __init__.py is a namespace one, which an installed package of the same
 * name would win over.  Never on a line that makes files: the module may be
 * one it writes. */

/* cwd/rel[0..rl) + suffix: 1 a regular file inside the roots, 2 a file that is
 * not (or a place known only at run time), 0 none; -1 out of memory. */
static int module_file(sgr_ctx *c, const char *cwd, const char *rel, uint32_t rl, const char *suffix)
{
    char f[256 + 16];
    uint32_t sl = (uint32_t)strlen(suffix);
    memcpy(f, rel, rl);
    memcpy(f + rl, suffix, sl + 1);
    uint32_t outl;
    int unk;
    char *r = resolve_path(c, cwd, f, rl + sl, 0, &outl, NULL, &unk);
    if (!r)
        return -1;
    if (unk)
        return 2;
    struct stat st;
    if (stat(r, &st) != 0)
        return 0;
    return sgr_path_inside_roots(c, r, outl) && S_ISREG(st.st_mode) ? 1 : 2;
}

/* 1 when argv[a] of segment si is a module of the workspace (above), 0 when not,
 * -1 out of memory. */
int sgr_path_module_inside(sgr_ctx *c, uint32_t si, uint32_t a)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_norm *nm = &c->res.norm[si];
    if (a >= s->argc || (s->argv[a].flags & ~(uint32_t)SGR_W_QUOTED) || c->res.nmade
        || nm->cwd_unknown || !nm->ncwds)
        return 0;
    const char *m = s->argv[a].text;
    uint32_t ml = s->argv[a].len;
    if (!ml || ml > 255)
        return 0;
    char rel[256];
    for (uint32_t i = 0; i < ml; i++) {
        char ch = m[i];
        int start = i == 0 || m[i - 1] == '.';
        if (ch == '.') {
            if (start || i + 1 == ml)
                return 0;
            rel[i] = '/';
        } else if (name_byte(ch) && !(start && ch >= '0' && ch <= '9')) {
            rel[i] = ch;
        } else {
            return 0;
        }
    }
    for (uint32_t k = 0; k < nm->ncwds; k++) {
        const char *cwd = nm->cwds[k];
        int r;
        for (uint32_t i = 0; i < ml; i++)
            if (rel[i] == '/' && (r = module_file(c, cwd, rel, i, "/__init__.py")) != 1)
                return r < 0 ? -1 : 0;
        /* a package wins over NAME.py beside it */
        r = module_file(c, cwd, rel, ml, "/__init__.py");
        if (r == 1)
            r = module_file(c, cwd, rel, ml, "/__main__.py");
        else if (r == 0)
            r = module_file(c, cwd, rel, ml, ".py");
        else if (r == 2)
            r = 0;
        if (r != 1)
            return r < 0 ? -1 : 0;
    }
    return 1;
}

/* add_path of an operand: a loop variable's use stands for the loop's words. */
static int add_operand(sgr_ctx *c, uint32_t si, sgr_norm *nm, uint32_t *cap, const sgr_word *w)
{
    const sgr_word *lw[LOOP_MAX_WORDS];
    uint32_t n = sgr_path_loop_words(c, si, w, lw, LOOP_MAX_WORDS);
    if (!n)
        return add_path(c, nm, cap, w->text, w->len, w->flags);
    for (uint32_t k = 0; k < n; k++)
        if (add_path(c, nm, cap, lw[k]->text, lw[k]->len, lw[k]->flags) < 0)
            return -1;
    return 0;
}

/* ---- link texts -----------------------------------------------------------------
 * A symbolic link's text is read from the directory the link is in, not from the
 * cwd: `ln -s ../dist/index.js bin/cli` makes bin/cli point to dist/index.js.  For
 * a program declared `links { OPTS }` (and `copies`), given one of OPTS and none
 * of its `unless` options, each relative source that names a path as written is
 * a path candidate from every directory the link may be in, and not from the cwd
 * (the program opens no source): under each directory an option value names
 * (-t DIR: a value whose meaning the declaration does not say, -S SUFFIX, is
 * read as such a directory too, which only adds candidates), under the last
 * operand (a directory: DEST/basename) and, for one source and a DEST without
 * a trailing '/' that is not a directory now (on a line of this segment alone),
 * beside it (DEST itself), or the cwd for a lone source.  Every place the link can be is checked, so reading more
 * places is stricter, never laxer.  Sources a shell still expands, and every
 * source when the last operand is one, are read as any operand is. */

static int plain_word(uint32_t flags);

/* Is segment s a link maker whose sources are link texts (see above)?  Not
 * when what it makes depends on words the line does not show: more arguments
 * (xargs ln -s SRC DEST: DEST is not the last), or find -exec's {} (find . is
 * one of the names {} stands for). */
int sgr_path_link_texts(const sgr_ctx *c, const sgr_segment *s, const sgr_norm *nm)
{
    if (!s->spec)
        return 0;
    const sgt_progspec *ps = &c->t->progs[s->spec - 1];
    if (!(ps->flags & SGT_PROG_COPIES) || !ps->link_len || nm->npos <= nm->text_ops)
        return 0;
    for (const sgr_segment *a = s;; a = &c->res.cl.seg[a->parent]) {
        if ((a->flags & SGR_SEG_MOREARGS) || a->nest == SGR_NEST_EXEC)
            return 0;                       /* (under a wrapper too: xargs nice ln) */
        if (a->parent < 0 || a->nest != SGR_NEST_WRAPPED)
            break;
    }
    int on = 0;
    for (uint32_t i = 0; i < nm->nopts; i++) {
        uint32_t b = sgr_norm_opt_bits(c, ps, nm->opts[i].s, nm->opts[i].len);
        if (b & SGR_OPT_LINKREL)
            return 0;
        on |= (b & SGR_OPT_LINK) != 0;
    }
    const sgr_word *d = &s->argv[nm->pos[nm->npos - 1]];
    for (uint32_t i = nm->text_ops; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        if (memmem(w->text, w->len, "{}", 2))
            return 0;                       /* find -exec's name, under any wrapper */
    }
    return on && plain_word(d->flags);
}

/* Path candidate DIR/SRC (DIR's flags: a ~ or an expansion in it stays one). */
static int add_joined(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *d, uint32_t dl, uint32_t df,
                      const char *w, uint32_t wl)
{
    if (!dl || (dl == 1 && d[0] == '.'))
        return add_path(c, nm, cap, w, wl, 0);
    char *j = sg_arena_alloc(&c->arena, (size_t)dl + 1 + wl + 1);
    if (!j)
        return -1;
    memcpy(j, d, dl);
    uint32_t n = dl;
    if (!(dl == 1 && d[0] == '/'))
        j[n++] = '/';
    memcpy(j + n, w, wl);
    n += wl;
    j[n] = '\0';
    return add_path(c, nm, cap, j, n, df);
}

/* Is d[0..dl) a directory (not a link to one) from every directory segment si
 * may run in, with nothing else on the line that could remove or replace it
 * first?  Then `ln -s SRC d` makes d/SRC's basename, and only that is read. */
static int link_dir_now(sgr_ctx *c, uint32_t si, const sgr_word *d, uint32_t dl)
{
    const sgr_norm *nm = &c->res.norm[si];
    if (c->res.cl.nseg != 1 || (d->flags & SGR_W_TILDE) || nm->cwd_unknown || !nm->ncwds)
        return 0;
    lookups_begin(c);
    uint32_t n = d->text[0] == '/' ? 1 : nm->ncwds;
    for (uint32_t k = 0; k < n; k++) {
        const char *cwd = d->text[0] == '/' ? "" : nm->cwds[k];
        size_t cl = strlen(cwd);
        char p[4096];
        if (cl + 1 + dl + 1 > sizeof p)
            return 0;
        memcpy(p, cwd, cl);
        size_t pl = cl;
        if (cl)
            p[pl++] = '/';
        memcpy(p + pl, d->text, dl);
        p[pl + dl] = '\0';
        size_t ll;
        if (sgr_pc_lstat(c->pc, p, NULL, 0, &ll) != SGR_PC_DIR)
            return 0;
    }
    return 1;
}

/* Segment si's operands as link texts (link_texts is true). */
static int add_link_texts(sgr_ctx *c, uint32_t si, sgr_norm *nm, uint32_t *cap)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    uint32_t k = nm->npos - nm->text_ops, nv = 0;
    const sgr_word *d = &s->argv[nm->pos[nm->npos - 1]];
    for (uint32_t v = 0; v < nm->nvals; v++)
        nv += !(nm->vflags[v] & SGR_V_TEXT);
    /* DEST without trailing slashes, and the directory it is in */
    uint32_t dl = d->len;
    while (dl > 1 && d->text[dl - 1] == '/')
        dl--;
    uint32_t pl = dl;
    while (pl && d->text[pl - 1] != '/')
        pl--;
    uint32_t ppl = pl > 1 ? pl - 1 : pl;    /* "a/b" -> "a", "/b" -> "/", "b" -> "" */
    /* DEST may be the link itself: one source and no trailing '/', and DEST is not
     * a directory that stays one until ln runs */
    int beside = k == 2 && dl == d->len && !link_dir_now(c, si, d, dl);
    for (uint32_t i = nm->text_ops; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        int last = i + 1 == nm->npos;
        int dest = last && k > 1;           /* the link (or its directory) itself */
        int source = !last || k == 1 || nv;
        int rel = plain_word(w->flags) && !(w->flags & SGR_W_TILDE) && w->len && w->text[0] != '/';
        if ((dest || (source && !rel)) && add_operand(c, si, nm, cap, w) < 0)
            return -1;
        if (!source || !rel)
            continue;
        for (uint32_t v = 0; v < nm->nvals; v++)
            if (!(nm->vflags[v] & SGR_V_TEXT)
                && add_joined(c, nm, cap, nm->vals[v].s, nm->vals[v].len, nm->vflags[v], w->text, w->len) < 0)
                return -1;
        if (k == 1 && !nv && add_path(c, nm, cap, w->text, w->len, w->flags) < 0)
            return -1;
        if (!last && add_joined(c, nm, cap, d->text, dl, d->flags, w->text, w->len) < 0)
            return -1;
        if (!last && beside && add_joined(c, nm, cap, d->text, ppl, d->flags, w->text, w->len) < 0)
            return -1;
    }
    return 0;
}

/* A path candidate w[0..wl) names a place known only at run time: it counts as
 * outside every root, and is kept as written for messages. */
static int add_unknown_path(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *w, uint32_t wl)
{
    if (path_room(c, nm, cap) < 0)
        return -1;
    mark_unknown(nm, w, wl);
    nm->paths[nm->npaths].s = w;
    nm->paths[nm->npaths].len = wl;
    nm->ppat[nm->npaths] = NULL;
    nm->pin[nm->npaths++] = 0;
    return 0;
}

/* A code option's value is the program's own code (python3 -c, node -e): each
 * string literal in it ('...', "...", `...`; a backslash escapes the next byte)
 * is a path candidate as written, from the cwd, since the code may open it
 * (open('package.json'), require('./x.json')): a snippet rule's `not path
 * outside workspace` and the secrets rules see what it names.  So is each
 * literal of a here-document or here-string given to such a program.  Past
 * CODE_MAX_LITERALS literals the value counts as naming a place known only at
 * run time.  The value itself stays a candidate too. */
#define CODE_MAX_LITERALS 32
static int add_code_literals(sgr_ctx *c, sgr_norm *nm, uint32_t *cap, const char *v, uint32_t vl)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < vl; i++) {
        char q = v[i];
        if (q != '\'' && q != '"' && q != '`')
            continue;
        uint32_t b = ++i;
        while (i < vl && v[i] != q)
            i += v[i] == '\\' ? 2 : 1;
        if (i > vl)
            i = vl;
        if (i == b)
            continue;
        if (++n > CODE_MAX_LITERALS)
            return add_unknown_path(c, nm, cap, v, vl);
        if (add_path(c, nm, cap, v + b, i - b, 0) < 0)
            return -1;
    }
    return 0;
}

/* Resolve the path operands of segment si once, on first use. */
/* Redirection i of segment si: its target's paths (nm->rpath), and whether one
 * is outside the roots (nm->outside, which resolve_paths keeps per redirection). */
static int resolve_redir(sgr_ctx *c, uint32_t si, sgr_norm *nm, uint32_t *capp, uint32_t i)
{
    const sgr_segment *s = &c->res.cl.seg[si];
    const sgr_redir *r = &s->redirs[i];
    if ((r->kind == SGR_REDIR_HEREDOC || r->kind == SGR_REDIR_HERESTRING) && nm->code_body
        && add_code_literals(c, nm, capp, r->target.text, r->target.len) < 0)
        return -1;                          /* python3 - <<'EOF' ... open('x') ... EOF */
    if (r->kind == SGR_REDIR_HEREDOC || r->kind == SGR_REDIR_HERESTRING
        || r->kind == SGR_REDIR_DUP_IN || (r->kind == SGR_REDIR_DUP_OUT
            && r->target.len && ((r->target.text[0] >= '0' && r->target.text[0] <= '9') || r->target.text[0] == '-')))
        return 0;
    uint32_t first = nm->npaths;
    const char *tt = r->target.text;
    uint32_t tl = r->target.len, tf = r->target.flags;
    if (tf & SGR_W_BRACE) {
        /* bash brace-expands a redirection's target: one word is the file */
        const char *one[2];
        uint32_t onel[2];
        int nb = sgr_sx_braces(&c->arena, tt, tl, one, onel, 2);
        if (nb == -2)
            return -1;
        if (nb == 1) {
            tt = one[0];
            tl = onel[0];
            tf &= ~(uint32_t)SGR_W_BRACE;
        }
    }
    int st = stream_of(tt, tl);
    if (st != STREAM_NONE) {
        /* `> /dev/stdin` writes the file fd 0 names: the file an earlier
         * redirection opened (its paths), or one known only at run time */
        const sgr_redir *src = NULL;
        int sw = sgr_path_is_write(s, r) ? stream_write(s, r, st, &src) : 0;
        if (sw == 1) {
            uint32_t j = (uint32_t)(src - s->redirs);
            nm->rpath[2 * i] = nm->rpath[2 * j];
            nm->rpath[2 * i + 1] = nm->rpath[2 * j + 1];
            nm->outside = nm->routside[j];
            return 0;
        }
        if (sw == 2 && add_unknown_path(c, nm, capp, tt, tl) < 0)
            return -1;
    } else if (add_path(c, nm, capp, tt, tl, tf) < 0) {
        return -1;
    }
    nm->rpath[2 * i] = first;
    nm->rpath[2 * i + 1] = nm->npaths - first;
    return 0;
}

int sgr_path_resolve_paths(sgr_ctx *c, uint32_t si)
{
    sgr_norm *nm = &c->res.norm[si];
    if (nm->paths_state)
        return 0;
    nm->paths_state = 1;
    c->mk_seg = si;                         /* what segments before it make */
    const sgr_segment *s = &c->res.cl.seg[si];
    uint32_t cap = 0;
    if (nm->links) {
        if (add_link_texts(c, si, nm, &cap) < 0)
            return -1;
    } else {
        for (uint32_t i = nm->text_ops; i < nm->npos; i++)
            if (add_operand(c, si, nm, &cap, &s->argv[nm->pos[i]]) < 0)
                return -1;
    }
    for (uint32_t i = 0; i < nm->nvals; i++) {
        if (!(nm->vflags[i] & SGR_V_TEXT)
            && add_path(c, nm, &cap, nm->vals[i].s, nm->vals[i].len, nm->vflags[i]) < 0)
            return -1;
        if ((nm->vflags[i] & SGR_V_CODE) && add_code_literals(c, nm, &cap, nm->vals[i].s, nm->vals[i].len) < 0)
            return -1;
    }
    if (s->nredirs && (!(nm->rpath = sg_arena_zalloc(&c->arena, sizeof *nm->rpath * 2 * s->nredirs))
                       || !(nm->routside = sg_arena_zalloc(&c->arena, s->nredirs))))
        return -1;
    for (uint32_t i = 0; i < s->nredirs; i++) {
        /* whether this target leaves the roots, apart from the segment's others */
        int was = nm->outside;
        sgr_sv was_path = nm->outside_path;
        nm->outside = 0;
        if (resolve_redir(c, si, nm, &cap, i) < 0)
            return -1;
        nm->routside[i] = (uint8_t)nm->outside;
        if (was) {
            nm->outside = 1;
            nm->outside_path = was_path;
        }
    }
    for (uint32_t i = 0; i < s->nassigns; i++) {
        /* assignment values that look like paths (PYTHONPATH=/x:/y) */
        const char *eq = memchr(s->assigns[i].text, '=', s->assigns[i].len);
        if (!eq)
            continue;
        const char *v = eq + 1, *end = s->assigns[i].text + s->assigns[i].len;
        while (v < end) {
            const char *colon = memchr(v, ':', (size_t)(end - v));
            const char *e = colon ? colon : end;
            if (memchr(v, '/', (size_t)(e - v)) && add_path(c, nm, &cap, v, (uint32_t)(e - v), s->assigns[i].flags) < 0)
                return -1;
            v = e + 1;
        }
    }
    /* a loop's words: each a name the loop variable takes, as an operand is */
    for (uint32_t i = 0; i < s->nvalues; i++)
        if (add_path(c, nm, &cap, s->values[i].text, s->values[i].len, s->values[i].flags) < 0)
            return -1;
    return 0;
}

/* ---- files made on the line ----------------------------------------------------
 * A later segment of the line sees what an earlier one makes: a redirection's file,
 * the operands of a program declared `writes operands` (tee, touch), and what one
 * declared `copies` makes (cp, mv, ln, install: its last operand, or in the
 * directory that or an option value names, each other operand's name), which is
 * a copy of or a link to its source.  Such a name is read through to its source
 * (as a symlink reads a relative source, and from the cwd), besides as itself,
 * and a segment that runs a file made earlier (./x.sh, or the first operand of a
 * program declared `runs operand`: sh, source, python3, ...) is dynamic. */

/* A word that names a path as written: nothing the shell still expands. */
static int plain_word(uint32_t flags)
{
    return !(flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE));
}

static int made_add(sgr_ctx *c, uint32_t *cap, uint32_t seg, const char *name, uint32_t nl, uint32_t nf,
                    const char *src, uint32_t sl, uint32_t sf, int under)
{
    sgr_result *r = &c->res;
    if (r->nmade == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        sgr_made *m = *cap ? sg_arena_grow(&c->arena, (void *)r->made, sizeof *m * *cap, sizeof *m * ncap)
                           : sg_arena_alloc(&c->arena, sizeof *m * ncap);
        if (!m)
            return -1;
        r->made = m;
        *cap = ncap;
    }
    sgr_made *m = (sgr_made *)&r->made[r->nmade++];
    m->seg = seg;
    m->name.s = name;
    m->name.len = nl;
    m->name_flags = nf;
    m->src.s = src;
    m->src.len = sl;
    m->src_flags = sf;
    m->under = under;
    return 0;
}

/* An operand as the program receives it. */
typedef struct opword {
    const char *s;
    uint32_t l, f;
} opword;

/* Segment s's operands (nm->pos) with each brace expansion made, into *out (the
 * arena's): how many; -1 when they would be more than SGR_BRACE_MAX (brace_check
 * has made the segment dynamic), -2 when the arena runs out. */
static int operand_words(sgr_ctx *c, const sgr_segment *s, const sgr_norm *nm, opword **out)
{
    opword *ow = sg_arena_alloc(&c->arena, sizeof *ow * SGR_BRACE_MAX);
    const char **alt = sg_arena_alloc(&c->arena, sizeof *alt * SGR_BRACE_MAX);
    uint32_t *altl = sg_arena_alloc(&c->arena, sizeof *altl * SGR_BRACE_MAX);
    if (!ow || !alt || !altl)
        return -2;
    int k = 0;
    for (uint32_t i = 0; i < nm->npos; i++) {
        const sgr_word *w = &s->argv[nm->pos[i]];
        int na = (w->flags & SGR_W_BRACE) ? sgr_sx_braces(&c->arena, w->text, w->len, alt, altl, SGR_BRACE_MAX) : 0;
        if (na == -2)
            return -2;
        if (na <= 0) {
            if (k == SGR_BRACE_MAX)
                return -1;
            ow[k++] = (opword){ w->text, w->len, w->flags };
            continue;
        }
        for (int a = 0; a < na; a++) {
            if (k == SGR_BRACE_MAX)
                return -1;
            ow[k++] = (opword){ alt[a], altl[a], w->flags & ~(uint32_t)SGR_W_BRACE };
        }
    }
    *out = ow;
    return k;
}

/* The names each segment may make (into c->res.made), from its redirections and
 * its program's declaration.  -1: out of memory. */
int sgr_path_made_words(sgr_ctx *c)
{
    sgr_result *r = &c->res;
    uint32_t cap = 0;
    for (uint32_t si = 0; si < r->cl.nseg; si++) {
        const sgr_segment *s = &r->cl.seg[si];
        const sgr_norm *nm = &r->norm[si];
        for (uint32_t i = 0; i < s->nredirs; i++) {
            const sgr_word *t = &s->redirs[i].target;
            if (sgr_path_is_write(s, &s->redirs[i]) && plain_word(t->flags) && t->len && !not_a_file(t->text, t->len)
                && made_add(c, &cap, si, t->text, t->len, t->flags, NULL, 0, 0, 0) < 0)
                return -1;
        }
        if (!s->argc || !s->spec)
            continue;
        uint32_t pf = c->t->progs[s->spec - 1].flags;
        if (!(pf & (SGT_PROG_WRITES | SGT_PROG_COPIES)) || !nm->npos)
            continue;
        /* the operands as the program gets them: each brace expansion's words */
        opword *ow;
        int k = operand_words(c, s, nm, &ow);
        if (k < 0)
            return k == -2 ? -1 : 0;        /* -1: too many words, the segment is dynamic */
        if (pf & SGT_PROG_WRITES)
            for (int i = 0; i < k; i++)
                if (plain_word(ow[i].f) && made_add(c, &cap, si, ow[i].s, ow[i].l, ow[i].f, NULL, 0, 0, 0) < 0)
                    return -1;
        if (!(pf & SGT_PROG_COPIES) || !k)
            continue;
        const char *nmw = k == 1 ? "." : ow[k - 1].s;
        uint32_t nml = k == 1 ? 1 : ow[k - 1].l, nmf = k == 1 ? 0 : ow[k - 1].f;
        for (int i = 0; i + 1 < k || (k == 1 && i == 0); i++) {
            /* a glob or an expansion is a source known only when it runs */
            const char *sw = ow[i].s;
            uint32_t sl = ow[i].l, sf = ow[i].f;
            /* `ln -s SRC` makes ./basename(SRC) */
            if (plain_word(nmf)) {
                if (k > 1 && made_add(c, &cap, si, nmw, nml, nmf, sw, sl, sf, 0) < 0)
                    return -1;
                if (made_add(c, &cap, si, nmw, nml, nmf, sw, sl, sf, 1) < 0)
                    return -1;
            }
            for (uint32_t v = 0; v < nm->nvals; v++)          /* -t DIR */
                if (!(nm->vflags[v] & SGR_V_TEXT) && plain_word(nm->vflags[v])
                    && made_add(c, &cap, si, nm->vals[v].s, nm->vals[v].len, nm->vflags[v], sw, sl, sf, 1) < 0)
                    return -1;
        }
    }
    return 0;
}

/* w resolved from every directory segment si may run in (once for an absolute
 * or ~ word), each passed to fn; 0, or -1 on OOM.  Not through made links. */
static int each_place(sgr_ctx *c, uint32_t si, const char *w, uint32_t wl, uint32_t flags,
                      int (*fn)(sgr_ctx *, uint32_t, const char *, uint32_t, const char *, void *), void *ud)
{
    const sgr_norm *nm = &c->res.norm[si];
    int tilde = (flags & SGR_W_TILDE) && w[0] == '~';
    if (tilde && wl > 1 && w[1] != '/')
        return 0;
    if (!tilde && w[0] != '/' && nm->cwd_unknown)
        return 0;
    uint32_t n = tilde || w[0] == '/' ? 1 : nm->ncwds;
    for (uint32_t k = 0; k < n; k++) {
        const char *cwd = nm->cwds[nm->ncwds - 1 - k];
        uint32_t rl;
        int unk;
        char *r = resolve_path(c, cwd, w, wl, tilde, &rl, NULL, &unk);
        if (!r)
            return -1;
        if (!unk && fn(c, si, r, rl, cwd, ud) < 0)
            return -1;
    }
    return 0;
}

typedef struct made_ctx {
    const sgr_made *m;
    uint32_t cap;
} made_ctx;

/* Is partly known word w (flags) relative for certain?  Not when it starts with an
 * expansion, which may make it absolute: its patterns read such a start as some
 * place (add_patterns). */
static int part_relative(const char *w, uint32_t flags)
{
    return w[0] != '/' && w[0] != '$' && w[0] != '`' && !(w[0] == '~' && (flags & SGR_W_TILDE));
}

static sgr_mkres *mk_push(sgr_ctx *c, made_ctx *mc)
{
    if (c->nmk == mc->cap) {
        uint32_t ncap = mc->cap ? mc->cap * 2 : 8;
        sgr_mkres *a = mc->cap ? sg_arena_grow(&c->arena, c->mk, sizeof *a * mc->cap, sizeof *a * ncap)
                               : sg_arena_alloc(&c->arena, sizeof *a * ncap);
        if (!a)
            return NULL;
        c->mk = a;
        mc->cap = ncap;
    }
    sgr_mkres *x = &c->mk[c->nmk++];
    memset(x, 0, sizeof *x);
    return x;
}

/* made_put for a link or copy of a word the shell still expands (ln -s
 * /u$(x)r/../etc d, cp "$f" d): made at r (or, under a directory, at r and the
 * word's last component: a name of some one component when an expansion is in
 * it); its target is the word as written, read as a pattern by the walk. */
static int made_put_part(sgr_ctx *c, made_ctx *mc, uint32_t si, const char *r, uint32_t rl, const char *cwd)
{
    const sgr_made *m = mc->m;
    const char *s = m->src.s;
    uint32_t sl = m->src.len;
    while (sl > 1 && s[sl - 1] == '/')
        sl--;
    const char *name = r;
    uint32_t nl = rl;
    sgr_ppat *npat = NULL;
    if (m->under) {
        const char *b = s + sl;
        while (b > s && b[-1] != '/')
            b--;
        uint32_t bl = (uint32_t)(s + sl - b);
        if (!bl || (bl == 1 && b[0] == '.') || (bl == 2 && b[0] == '.' && b[1] == '.'))
            return 0;
        int exp = memchr(b, '$', bl) || memchr(b, '`', bl);
        char *j = sg_arena_alloc(&c->arena, rl + 1 + bl + 1);
        if (!j)
            return -1;
        memcpy(j, r, rl);
        nl = rl;
        if (nl > 1)
            j[nl++] = '/';
        if (exp) {
            /* DIR/NAME, NAME some one name: the literal bytes, then XSTAR */
            uint32_t *el = sg_arena_alloc(&c->arena, sizeof *el * (nl + 1));
            npat = sg_arena_alloc(&c->arena, sizeof *npat);
            if (!el || !npat)
                return -1;
            for (uint32_t i = 0; i < nl; i++)
                el[i] = SGR_PP_LIT | (uint32_t)(unsigned char)j[i] << 8;
            el[nl] = SGR_PP_XSTAR;
            npat->el = el;
            npat->n = nl + 1;
            npat->cls = NULL;
            npat->words = NULL;
        }
        memcpy(j + nl, b, bl);
        nl += bl;
        j[nl] = '\0';
        name = j;
    }
    int rel = part_relative(s, m->src_flags);
    size_t cl = rel ? strlen(cwd) : 0;
    char *tb = sg_arena_alloc(&c->arena, cl + 1 + sl + 1);
    if (!tb)
        return -1;
    size_t tbl = 0;
    if (rel) {
        memcpy(tb, cwd, cl);
        tbl = cl;
        if (!(cl == 1 && cwd[0] == '/'))
            tb[tbl++] = '/';
    }
    memcpy(tb + tbl, s, sl);
    tbl += sl;
    tb[tbl] = '\0';
    sgr_mkres *x = mk_push(c, mc);
    if (!x)
        return -1;
    x->seg = si;
    x->name = name;
    x->nl = nl;
    x->ta = s;
    x->tal = sl;
    x->tb = tb;
    x->tbl = (uint32_t)tbl;
    x->npat = npat;
    x->pflags = m->src_flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_TILDE | SGR_W_QUOTED);
    return 0;
}

/* each_place's fn for made_resolve: one resolved made name. */
static int made_put(sgr_ctx *c, uint32_t si, const char *r, uint32_t rl, const char *cwd, void *ud)
{
    made_ctx *mc = ud;
    const sgr_made *m = mc->m;
    const char *name = r;
    uint32_t nl = rl;
    const char *ta = NULL, *tb = NULL;
    uint32_t tal = 0, tbl = 0;
    int glob = m->src.s && (m->src_flags & SGR_W_GLOB) && !(m->src_flags & (SGR_W_UNKNOWN | SGR_W_BRACE));
    int part = m->src.s && (m->src_flags & SGR_W_UNKNOWN) && !(m->src_flags & SGR_W_BRACE);
    int lost = m->src.s && !plain_word(m->src_flags) && !glob && !part;
    if (m->src.s && lost && m->under)
        return 0;                           /* no name to put under a directory */
    sgr_ppat *npat = NULL;
    if (part)
        return made_put_part(c, mc, si, r, rl, cwd);
    if (glob && m->under) {
        /* DIR/basename(GLOB): a name that is itself a glob */
        const char *s = m->src.s, *b = s + m->src.len;
        while (b > s && b[-1] == '/')
            b--;
        const char *e = b;
        while (b > s && b[-1] != '/')
            b--;
        uint32_t bl = (uint32_t)(e - b);
        char *j = sg_arena_alloc(&c->arena, rl + 1 + bl + 1);
        ptoks t;
        patb cl = { NULL, 0, 0, NULL, 0 };
        npat = sg_arena_alloc(&c->arena, sizeof *npat);
        if (!j || !npat)
            return -1;
        memcpy(j, r, rl);
        nl = rl;
        if (nl > 1)
            j[nl++] = '/';
        memcpy(j + nl, b, bl);
        nl += bl;
        j[nl] = '\0';
        name = j;
        if (pat_tokens(c, j, nl, SGR_W_GLOB, &t, &cl) < 0)
            return -1;
        npat->el = t.tk;
        npat->n = t.n;
        npat->cls = (const uint64_t (*)[4])cl.cls;
        npat->words = NULL;
    }
    if (glob) {
        ta = m->src.s;                      /* spliced as written, read as a glob */
        tal = m->src.len;
    } else if (m->src.s && !lost) {
        const char *s = m->src.s;
        uint32_t sl = m->src.len;
        while (sl > 1 && s[sl - 1] == '/')
            sl--;
        if (m->under) {
            /* name/basename(src) */
            const char *b = s + sl;
            while (b > s && b[-1] != '/')
                b--;
            uint32_t bl = (uint32_t)(s + sl - b);
            if (!bl || (bl == 1 && b[0] == '.') || (bl == 2 && b[0] == '.' && b[1] == '.'))
                return 0;
            char *j = sg_arena_alloc(&c->arena, rl + 1 + bl + 1);
            if (!j)
                return -1;
            memcpy(j, r, rl);
            nl = rl;
            if (nl > 1)
                j[nl++] = '/';
            memcpy(j + nl, b, bl);
            nl += bl;
            j[nl] = '\0';
            name = j;
        }
        int tilde = (m->src_flags & SGR_W_TILDE) && s[0] == '~';
        if (tilde) {
            uint32_t hl;
            const char *h = sgr_path_home_of(c, &hl);
            if (!h)
                return 0;
            char *t = sg_arena_alloc(&c->arena, hl + sl + 1);
            if (!t)
                return -1;
            memcpy(t, h, hl);
            memcpy(t + hl, s + 1, sl - 1);
            t[hl + sl - 1] = '\0';
            ta = t;
            tal = hl + sl - 1;
        } else {
            ta = s;
            tal = sl;
        }
        int unk;
        tb = resolve_path(c, cwd, s, sl, tilde, &tbl, NULL, &unk);
        if (!tb)
            return -1;
        if (unk)
            tb = NULL;
    }
    sgr_mkres *x = mk_push(c, mc);
    if (!x)
        return -1;
    x->seg = si;
    x->name = name;
    x->nl = nl;
    x->ta = lost ? "" : ta;                 /* lost: a link to some place (tal 0) */
    x->tal = tal;
    x->tb = tb;
    x->tbl = tbl;
    x->lost = lost;
    x->glob = glob;
    x->npat = npat;
    return 0;
}

/* Resolve every made name (c->res.made) into c->mk.  -1: out of memory. */
int sgr_path_made_resolve(sgr_ctx *c)
{
    made_ctx mc = { NULL, 0 };
    for (uint32_t i = 0; i < c->res.nmade; i++) {
        mc.m = &c->res.made[i];
        if (each_place(c, mc.m->seg, mc.m->name.s, mc.m->name.len, mc.m->name_flags, made_put, &mc) < 0)
            return -1;
    }
    return 0;
}

/* each_place's fn for runs_made: is r a name an earlier segment makes? */
static int made_hit(sgr_ctx *c, uint32_t si, const char *r, uint32_t rl, const char *cwd, void *ud)
{
    (void)cwd;
    for (uint32_t i = 0; i < c->nmk; i++) {
        const sgr_mkres *m = &c->mk[i];
        int named = m->npat ? sgr_pp_word(m->npat, r, rl, 0) : m->nl == rl && memcmp(m->name, r, rl) == 0;
        if (named && runs_before(&c->res.cl, m->seg, si))
            *(const char **)ud = m->name;
    }
    return 0;
}

/* A segment that runs a file an earlier segment of the line makes is dynamic:
 * what it runs is known only when it runs.  -1: out of memory. */
int sgr_path_runs_made(sgr_ctx *c)
{
    sgr_result *r = &c->res;
    for (uint32_t si = 0; si < r->cl.nseg && c->nmk; si++) {
        sgr_segment *s = &r->cl.seg[si];
        const sgr_norm *nm = &r->norm[si];
        if (!s->argc || (s->flags & SGR_SEG_DYNAMIC))
            continue;
        const char *hit = NULL;
        const sgr_word *a0 = &s->argv[0];
        if (plain_word(a0->flags) && memchr(a0->text, '/', a0->len)
            && each_place(c, si, a0->text, a0->len, a0->flags, made_hit, &hit) < 0)
            return -1;
        if (!hit && s->spec && (c->t->progs[s->spec - 1].flags & SGT_PROG_RUNS_FILE) && nm->npos) {
            const sgt_progspec *ps = &c->t->progs[s->spec - 1];
            int script = 0;                 /* sh -c: the operand is not a file */
            for (uint32_t i = 0; i < nm->nopts && !script; i++)
                script = (sgr_progopt_bits(c->t, ps, nm->opts[i].s, nm->opts[i].len) & SGR_OPT_SCRIPT) != 0;
            const sgr_word *f = &s->argv[nm->pos[0]];
            const char *ft = f->text;
            uint32_t fl = f->len, ff = f->flags;
            if (ff & SGR_W_BRACE) {
                /* source {./x.sh,}: the word the braces make */
                const char *one[2];
                uint32_t onel[2];
                int nb = sgr_sx_braces(&c->arena, ft, fl, one, onel, 2);
                if (nb == -2)
                    return -1;
                if (nb == 1) {
                    ft = one[0];
                    fl = onel[0];
                    ff &= ~(uint32_t)SGR_W_BRACE;
                }
            }
            if (!script && plain_word(ff) && each_place(c, si, ft, fl, ff, made_hit, &hit) < 0)
                return -1;
        }
        if (hit) {
            s->flags |= SGR_SEG_DYNAMIC;
            size_t l = strlen(hit) + 96;
            char *why = sg_arena_alloc(&c->arena, l);
            if (!why)
                return -1;
            snprintf(why, l, "it runs '%s', which an earlier command on the line writes", hit);
            s->dyn_reason = why;
        }
    }
    return 0;
}
