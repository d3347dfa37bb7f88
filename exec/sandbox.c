/* sandbox.c - bubblewrap's command line for a run, and a probe that it starts. */
#include "sandbox.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int sgx_sandbox_mode(const char *s)
{
    if (strcmp(s, "none") == 0)
        return SGX_SANDBOX_NONE;
    if (strcmp(s, "bwrap") == 0)
        return SGX_SANDBOX_BWRAP;
    if (strcmp(s, "auto") == 0)
        return SGX_SANDBOX_AUTO;
    return -1;
}

int sgx_sandbox_find(const char *given, char *out, size_t n)
{
    const char *name = given && *given ? given : "bwrap";
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0 || snprintf(out, n, "%s", name) >= (int)n)
            return -1;
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *e = strchr(p, ':');
        size_t dl = e ? (size_t)(e - p) : strlen(p);
        if (dl && p[0] == '/') {
            int k = snprintf(out, n, "%.*s/%s", (int)dl, p, name);
            struct stat sb;
            if (k > 0 && (size_t)k < n && stat(out, &sb) == 0 && S_ISREG(sb.st_mode) && access(out, X_OK) == 0)
                return 0;
        }
        if (!e)
            return -1;
        p = e;
    }
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

char **sgx_sandbox_argv(sg_arena *a, const sgx_sandbox *s, const char *const *inner)
{
    size_t ni = 0;
    while (inner[ni])
        ni++;
    size_t cap = 32 + 3 * s->nrw + 3 * s->nro + ni;
    char **v = sg_arena_alloc(a, cap * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
#define A(x) (v[k++] = (char *)(x))
    A(s->bwrap);
    A("--ro-bind"); A("/"); A("/");
    A("--dev"); A("/dev");
    A("--proc"); A("/proc");
    A("--tmpfs"); A("/tmp");
    if (is_dir("/var/tmp")) {
        A("--tmpfs"); A("/var/tmp");
    }
    /* the workspace after the private /tmp, so a workspace under /tmp is the
     * real one, bound over the empty tmpfs */
    for (size_t i = 0; i < s->nro; i++) {
        A("--ro-bind"); A(s->ro[i]); A(s->ro[i]);
    }
    for (size_t i = 0; i < s->nrw; i++) {
        A("--bind"); A(s->rw[i]); A(s->rw[i]);
    }
    A("--unshare-all");
    if (s->network)
        A("--share-net");
    A("--die-with-parent");
    A("--new-session");
    A("--cap-drop"); A("ALL");
    A("--chdir"); A(s->cwd);
    A("--");
    for (size_t i = 0; i < ni; i++)
        A(inner[i]);
    A(NULL);
#undef A
    return v;
}

/* How long the probe may take to start and end. */
#define SGX_PROBE_SECONDS 10

int sgx_sandbox_probe(const sgx_sandbox *s, const char *const *probe, char *err, size_t errlen)
{
    sg_arena a;
    sg_arena_init(&a, 4096);
    char **argv = sgx_sandbox_argv(&a, s, probe);
    int ep[2];
    if (!argv || pipe2(ep, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot probe the sandbox: %s", argv ? strerror(errno) : "out of memory");
        sg_arena_free(&a);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(ep[1], 2);
        close_range(3, ~0U, 0);
        setpgid(0, 0);                 /* its own group, so a stuck probe ends whole */
        /* the probe runs nothing of the caller's: none of its environment either */
        static char *const probe_env[] = { (char *)"PATH=/usr/bin:/bin", NULL };
        execve(argv[0], argv, probe_env);
        dprintf(2, "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(ep[1]);
    char msg[1024];
    size_t n = 0;
    int stuck = 0;
    if (pid > 0) {
        /* a sandbox that does not start within SGX_PROBE_SECONDS is one that does
         * not start: never a run that hangs before it begins */
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (;;) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            long left = SGX_PROBE_SECONDS * 1000L - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000L);
            struct pollfd pf = { ep[0], POLLIN, 0 };
            int pr = left > 0 ? poll(&pf, 1, (int)left) : 0;
            if (pr < 0 && errno == EINTR)
                continue;
            if (pr <= 0) {
                stuck = pr == 0;
                break;
            }
            char spill[64];            /* past what is kept: read and dropped */
            ssize_t k = n < sizeof msg - 1 ? read(ep[0], msg + n, sizeof msg - 1 - n) : read(ep[0], spill, sizeof spill);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            if (n < sizeof msg - 1)
                n += (size_t)k;
        }
        if (stuck) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
    }
    msg[n] = '\0';
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    close(ep[0]);
    int st = 0, rc = -1;
    if (pid < 0)
        snprintf(err, errlen, "cannot start %s: %s", s->bwrap, strerror(errno));
    else if (stuck && waitpid(pid, &st, 0) >= 0)
        snprintf(err, errlen, "%s did not start within %d seconds", s->bwrap, SGX_PROBE_SECONDS);
    else if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        rc = 0;
    else
        snprintf(err, errlen, "%s does not start here (%s %d)%s%s", s->bwrap,
                 WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
                 n ? ": " : "", msg);
    sg_arena_free(&a);
    return rc;
}
