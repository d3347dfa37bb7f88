/* proc.c - spawning a run's processes, reading their output while waiting, and
 * ending the whole process tree (proc.h). */
#include "proc.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>
#include "common/alloc.h"
#include "runtime/shparse.h"

int64_t sgx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void exec_status(sgx_proc *p);

/* Every descriptor from 3 up gets FD_CLOEXEC (close_range, or one by one). */
static void cloexec_from_3(void)
{
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
        return;
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        for (int fd = 3; fd < 4096; fd++)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
        return;
    }
    int self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        int fd = atoi(e->d_name);
        if (fd >= 3 && fd != self)
            fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    closedir(d);
}

int sgx_proc_init(sgx_proc *p, double timeout_s, double grace_s)
{
    memset(p, 0, sizeof *p);
    p->sigfd = -1;
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0)
            return -1;
    cloexec_from_3();
    p->subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGCHLD);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    sigaddset(&s, SIGQUIT);
    if (sigprocmask(SIG_BLOCK, &s, &p->oldmask) != 0)
        return -1;
    p->sigfd = signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
    if (p->sigfd < 0) {
        sigprocmask(SIG_SETMASK, &p->oldmask, NULL);
        return -1;
    }
    p->oldpipe = signal(SIGPIPE, SIG_IGN);
    if (timeout_s > 0)
        p->deadline_ns = sgx_now_ns() + (int64_t)(timeout_s * 1e9);
    p->grace_ns = (int64_t)((grace_s > 0 ? grace_s : 0) * 1e9);
    return 0;
}

void sgx_proc_done(sgx_proc *p)
{
    while (p->nrd)
        sgx_proc_close_reader(p, (int)p->nrd - 1);
    if (p->sigfd >= 0) {
        close(p->sigfd);
        sigprocmask(SIG_SETMASK, &p->oldmask, NULL);
        signal(SIGPIPE, p->oldpipe);
    }
    p->sigfd = -1;
    exec_status(p);
    for (uint32_t i = 0; i < p->nkids; i++)
        if (p->kids[i].sfd >= 0)
            close(p->kids[i].sfd);
    sg_free(p->kids);
    p->kids = NULL;
    p->nkids = p->capkids = 0;
}

int sgx_proc_add_reader(sgx_proc *p, int fd, sgx_cap *cap, size_t max)
{
    if (p->nrd == SGX_MAX_READERS)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    sgx_reader *r = &p->rd[p->nrd];
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->cap = cap;
    r->max = max;
    return (int)p->nrd++;
}

/* Read everything reader r has now (non-blocking); close it at end of file. */
static void read_some(sgx_reader *r)
{
    char buf[65536];
    while (r->fd >= 0) {
        ssize_t k = read(r->fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return;                     /* EAGAIN: nothing more now */
        if (k == 0) {
            close(r->fd);
            r->fd = -1;
            return;
        }
        if (r->cap) {
            sgx_cap_add(r->cap, buf, (size_t)k);
            continue;
        }
        size_t take = (size_t)k;
        if (r->len + take > r->max) {
            r->overflow = 1;
            take = r->max - r->len;
        }
        if (r->len + take > r->bcap) {
            size_t nc = r->bcap ? r->bcap : 4096;
            while (nc < r->len + take)
                nc *= 2;
            char *nb = sg_realloc(r->buf, nc);
            if (!nb) {
                r->overflow = 1;
                continue;
            }
            r->buf = nb;
            r->bcap = nc;
        }
        memcpy(r->buf + r->len, buf, take);
        r->len += take;
    }
}

void sgx_proc_close_reader(sgx_proc *p, int i)
{
    if (i < 0 || (uint32_t)i >= p->nrd)
        return;
    sgx_reader *r = &p->rd[i];
    read_some(r);
    if (r->fd >= 0)
        close(r->fd);
    memmove(&p->rd[i], &p->rd[i + 1], (p->nrd - (uint32_t)i - 1) * sizeof p->rd[0]);
    p->nrd--;
}

static void record(sgx_proc *p, pid_t pid, int st)
{
    for (uint32_t i = 0; i < p->nkids; i++)
        if (p->kids[i].pid == pid && !p->kids[i].done) {
            p->kids[i].done = 1;
            p->kids[i].status = st;
            return;
        }
    /* not one we started: a descendant that detached and was re-parented here */
}

/* Learn, without blocking, which children's programs have started: a status pipe
 * at end of file with no byte in it was closed by a successful execve. */
static void exec_status(sgx_proc *p)
{
    for (uint32_t i = 0; i < p->nkids; i++) {
        sgx_kid *k = &p->kids[i];
        if (k->sfd < 0)
            continue;
        char b;
        ssize_t n = read(k->sfd, &b, 1);
        if (n < 0 && (errno == EAGAIN || errno == EINTR) && !k->done)
            continue;
        if (n == 0) {
            k->execd = 1;
            p->execd++;
        }
        close(k->sfd);
        k->sfd = -1;
    }
}

static void reap(sgx_proc *p)
{
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
        record(p, pid, st);
}

/* One round: poll the readers and the SIGCHLD descriptor for up to ms, read, reap. */
static void pump_raw(sgx_proc *p, int ms)
{
    struct pollfd pf[SGX_MAX_READERS + 1];
    int idx[SGX_MAX_READERS];
    nfds_t n = 0;
    for (uint32_t i = 0; i < p->nrd; i++)
        if (p->rd[i].fd >= 0) {
            pf[n].fd = p->rd[i].fd;
            pf[n].events = POLLIN;
            idx[n++] = (int)i;
        }
    nfds_t nr = n;
    pf[n].fd = p->sigfd;
    pf[n++].events = POLLIN;
    int k = poll(pf, n, ms);
    if (k > 0) {
        for (nfds_t i = 0; i < nr; i++)
            if (pf[i].revents)
                read_some(&p->rd[idx[i]]);
        if (pf[nr].revents) {
            struct signalfd_siginfo si[8];
            ssize_t got;
            while ((got = read(p->sigfd, si, sizeof si)) > 0)
                for (size_t i = 0; i < (size_t)got / sizeof si[0]; i++)
                    if (si[i].ssi_signo != SIGCHLD)
                        p->signo = (int)si[i].ssi_signo;
        }
    }
    reap(p);
    exec_status(p);
}

static int64_t remaining_ms(const sgx_proc *p)
{
    if (!p->deadline_ns)
        return INT64_MAX;
    int64_t left = p->deadline_ns - sgx_now_ns();
    return left <= 0 ? 0 : (left + 999999) / 1000000;
}

int sgx_proc_pump(sgx_proc *p, int ms)
{
    int64_t left = remaining_ms(p);
    if (left == 0 || p->signo) {
        pump_raw(p, 0);
        return -1;
    }
    pump_raw(p, (int)(ms < left ? ms : left));
    return remaining_ms(p) == 0 || p->signo ? -1 : 0;
}

int sgx_proc_drain(sgx_proc *p, int i)
{
    while (p->rd[i].fd >= 0)
        if (sgx_proc_pump(p, 100) < 0)
            return p->rd[i].fd >= 0 ? -1 : 0;
    return 0;
}

static sgx_kid *kid_of(sgx_proc *p, pid_t pid)
{
    for (uint32_t i = 0; i < p->nkids; i++)
        if (p->kids[i].pid == pid)
            return &p->kids[i];
    return NULL;
}

int sgx_proc_wait(sgx_proc *p, const pid_t *pids, uint32_t n, int *st)
{
    for (;;) {
        reap(p);
        uint32_t left = 0;
        for (uint32_t i = 0; i < n; i++) {
            sgx_kid *k = kid_of(p, pids[i]);
            if (k && !k->done)
                left++;
        }
        if (!left)
            break;
        if (sgx_proc_pump(p, 200) < 0) {
            if (!p->signo)
                p->timed_out = 1;
            sgx_proc_end_tree(p, p->grace_ns);
            for (uint32_t i = 0; i < n; i++) {
                sgx_kid *k = kid_of(p, pids[i]);
                st[i] = k && k->done ? k->status : (SIGKILL & 0x7f);
            }
            return -1;
        }
    }
    exec_status(p);
    for (uint32_t i = 0; i < n; i++) {
        sgx_kid *k = kid_of(p, pids[i]);
        st[i] = k ? k->status : 0;
    }
    return 0;
}

/* ---- the process tree ------------------------------------------------------- */

typedef struct pinfo {
    pid_t pid, ppid;
    char state;
} pinfo;

/* Every process in /proc with its parent; *n entries, heap (sg_free). */
static pinfo *scan_proc(uint32_t *n)
{
    *n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    uint32_t cap = 256;
    pinfo *v = sg_malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k <= 0)
            continue;
        buf[k] = '\0';
        char *rp = strrchr(buf, ')');
        char state;
        int ppid;
        if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2)
            continue;
        if (*n == cap) {
            cap *= 2;
            pinfo *nv = sg_realloc(v, cap * sizeof *v);
            if (!nv) {
                sg_free(v);
                v = NULL;
                break;
            }
            v = nv;
        }
        v[*n].pid = (pid_t)atoi(e->d_name);
        v[*n].ppid = (pid_t)ppid;
        v[(*n)++].state = state;
    }
    closedir(d);
    if (!v)
        *n = 0;
    return v;
}

uint32_t sgx_proc_descendants(pid_t *out, uint32_t max)
{
    uint32_t n;
    pinfo *v = scan_proc(&n);
    if (!v)
        return 0;
    /* breadth first from this process: a queue of parents, in v's own order */
    pid_t *q = sg_malloc((n + 1) * sizeof *q);
    uint32_t qh = 0, qt = 0, found = 0;
    if (!q) {
        sg_free(v);
        return 0;
    }
    q[qt++] = getpid();
    while (qh < qt) {
        pid_t par = q[qh++];
        for (uint32_t i = 0; i < n; i++) {
            if (v[i].ppid != par || v[i].pid == par)
                continue;
            if (qt <= n)
                q[qt++] = v[i].pid;
            if (v[i].state == 'Z' || v[i].state == 'X')
                continue;
            if (found < max)
                out[found] = v[i].pid;
            found++;
        }
    }
    sg_free(q);
    sg_free(v);
    return found;
}

static void signal_all(sgx_proc *p, int sig, const pid_t *list, uint32_t n)
{
    for (uint32_t i = 0; i < p->nkids; i++)
        if (!p->kids[i].done)
            kill(-p->kids[i].pid, sig);     /* its own process group (setsid) */
    for (uint32_t i = 0; i < n; i++)
        kill(list[i], sig);
}

/* No child at all?  As a subreaper, every descendant still alive is a child or
 * below a living child: then there is nothing to look for in /proc. */
static int childless(const sgx_proc *p)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    /* WNOWAIT: ask, without reaping a child whose status is still to be read */
    return p->subreaper && waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 && errno == ECHILD;
}

uint32_t sgx_proc_end_tree(sgx_proc *p, int64_t grace_ns)
{
    pid_t list[1024];
    reap(p);
    if (childless(p)) {
        exec_status(p);
        return 0;
    }
    uint32_t n = sgx_proc_descendants(list, 1024), first = n;
    if (!n) {
        reap(p);
        return 0;
    }
    if (grace_ns > 0) {
        signal_all(p, SIGTERM, list, n < 1024 ? n : 1024);
        signal_all(p, SIGCONT, list, n < 1024 ? n : 1024);  /* a stopped process sees TERM */
        int64_t until = sgx_now_ns() + grace_ns;
        while (sgx_now_ns() < until) {
            pump_raw(p, 20);
            if (childless(p) || !(n = sgx_proc_descendants(list, 1024)))
                break;
        }
    }
    /* whatever is left, until nothing is: a process forking while we kill gets
     * its children re-parented here, and the next round finds them */
    for (int round = 0; round < 1000 && !childless(p) && (n = sgx_proc_descendants(list, 1024)) > 0; round++) {
        signal_all(p, SIGKILL, list, n < 1024 ? n : 1024);
        pump_raw(p, 5);
    }
    reap(p);
    exec_status(p);
    return first;
}

/* ---- the child --------------------------------------------------------------- */

static int child_sfd = -1;         /* in a child: the write end of its status pipe */

/* "shellgate: what: strerror(e)" on fd 2, a byte on the status pipe (the
 * program did not start); then _exit(code). */
static void child_fail(const char *what, int e, int code)
{
    char buf[4200];
    int k = snprintf(buf, sizeof buf, "shellgate: %s: %s\n", what, strerror(e));
    if (k > 0)
        (void)!write(2, buf, (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1);
    if (child_sfd >= 0)
        (void)!write(child_sfd, "x", 1);
    _exit(code);
}

static int herestring_fd(const char *data, size_t n)
{
    int fd = memfd_create("shellgate-herestring", 0);
    if (fd >= 0) {
        size_t off = 0;
        while (off < n) {
            ssize_t k = write(fd, data + off, n - off);
            if (k <= 0) {
                close(fd);
                return -1;
            }
            off += (size_t)k;
        }
        lseek(fd, 0, SEEK_SET);
        return fd;
    }
    int pp[2];
    if (n > 65536 || pipe(pp) != 0)
        return -1;
    if (write(pp[1], data, n) != (ssize_t)n) {
        close(pp[0]);
        close(pp[1]);
        return -1;
    }
    close(pp[1]);
    return pp[0];
}

static void child_redirs(const sgx_spawn *s)
{
    for (uint32_t i = 0; i < s->nredirs; i++) {
        const sgx_redir_op *r = &s->redirs[i];
        int flags = -1, fd = -1;
        switch (r->kind) {
        case SGR_REDIR_READ: flags = O_RDONLY; break;
        case SGR_REDIR_WRITE: case SGR_REDIR_CLOBBER: case SGR_REDIR_BOTH: flags = O_WRONLY | O_CREAT | O_TRUNC; break;
        case SGR_REDIR_APPEND: case SGR_REDIR_BOTH_APPEND: flags = O_WRONLY | O_CREAT | O_APPEND; break;
        case SGR_REDIR_RDWR: flags = O_RDWR | O_CREAT; break;
        case SGR_REDIR_DUP_OUT: case SGR_REDIR_DUP_IN:
            if (r->dupfd < 0) {
                close(r->fd);
                continue;
            }
            if (fcntl(r->dupfd, F_GETFD) < 0)
                child_fail("redirection", EBADF, 1);
            if (r->dupfd != r->fd && dup2(r->dupfd, r->fd) < 0)
                child_fail("redirection", errno, 1);
            continue;
        case SGR_REDIR_HERESTRING:
            fd = herestring_fd(r->data, r->dlen);
            if (fd < 0)
                child_fail("here-string", errno, 1);
            break;
        default:
            child_fail("redirection", EINVAL, 1);
        }
        if (flags >= 0) {
            if (s->open_check && s->open_check(s->ud, r->path, flags) < 0)
                child_fail(r->path, errno, 1);
            fd = open(r->path, flags | O_NOCTTY, 0666);
            if (fd < 0)
                child_fail(r->path, errno, 1);
        }
        int target = r->kind == SGR_REDIR_BOTH || r->kind == SGR_REDIR_BOTH_APPEND ? 1 : r->fd;
        if (fd != target && dup2(fd, target) < 0)
            child_fail("redirection", errno, 1);
        if (target == 1 && (r->kind == SGR_REDIR_BOTH || r->kind == SGR_REDIR_BOTH_APPEND) && dup2(fd, 2) < 0)
            child_fail("redirection", errno, 1);
        if (fd != target && fd != 2)
            close(fd);
    }
}

pid_t sgx_proc_spawn(sgx_proc *p, const sgx_spawn *s)
{
    if (p->nkids == p->capkids) {
        uint32_t nc = p->capkids ? p->capkids * 2 : 16;
        sgx_kid *nk = sg_realloc(p->kids, nc * sizeof *nk);
        if (!nk) {
            errno = ENOMEM;
            return -1;
        }
        p->kids = nk;
        p->capkids = nc;
    }
    int sp[2];
    if (pipe2(sp, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sp[0]);
        close(sp[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(sp[0]);
        /* above every descriptor a redirection may name (the executor refuses
         * those past 255), so no redirection replaces it */
        child_sfd = fcntl(sp[1], F_DUPFD_CLOEXEC, 256);
        if (child_sfd < 0)                /* few descriptors allowed: above the kept ones */
            child_sfd = fcntl(sp[1], F_DUPFD_CLOEXEC, 16);
        close(sp[1]);
        sigset_t none;
        sigemptyset(&none);
        for (int sig = 1; sig < NSIG; sig++)
            signal(sig, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setsid();
        for (int i = 0; i < 3; i++)
            if (s->fd[i] != i && dup2(s->fd[i], i) < 0)
                child_fail("dup2", errno, 126);
        uint32_t nkeep = s->nkeep < 8 ? s->nkeep : 8;
        int tmp[8];
        for (uint32_t i = 0; i < nkeep; i++)
            if ((tmp[i] = fcntl(s->keep[i], F_DUPFD, 100)) < 0)
                child_fail("dup", errno, 126);
        for (uint32_t i = 0; i < nkeep; i++)
            if (dup2(tmp[i], 3 + (int)i) < 0)
                child_fail("dup2", errno, 126);
        int first = 3 + (int)nkeep;
        if (first < child_sfd && close_range((unsigned)first, (unsigned)child_sfd - 1, 0) != 0)
            for (int fd = first; fd < child_sfd; fd++)
                close(fd);
        if (close_range((unsigned)child_sfd + 1, ~0U, 0) != 0)
            for (int fd = child_sfd + 1; fd < 65536; fd++)
                close(fd);
        if (s->cwd && chdir(s->cwd) != 0)
            child_fail(s->cwd, errno, 1);
        child_redirs(s);
        if (s->rl && sgx_rlimits_apply(s->rl) != 0)
            child_fail("setrlimit", errno, 126);
        execve(s->path, s->argv, s->envp);
        int e = errno;
        child_fail(s->name, e, e == ENOENT ? 127 : 126);
    }
    close(sp[1]);
    fcntl(sp[0], F_SETFL, O_NONBLOCK);
    sgx_kid *k = &p->kids[p->nkids++];
    k->pid = pid;
    k->done = k->execd = 0;
    k->status = 0;
    k->sfd = sp[0];
    p->started++;
    return pid;
}
