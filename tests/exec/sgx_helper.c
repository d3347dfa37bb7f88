/* sgx_helper.c - a harmless program for the executor's tests (tests/exec.py): each
 * mode does one observable thing -- detach, ignore SIGTERM, print a known pattern,
 * report its environment or limits, write a file, connect to a port -- so a test
 * can check what the executor let it do.  usage: sgx_helper MODE ARGS...; named
 * fake-bwrap it is a bubblewrap that cannot start. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void nap(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The byte at position i of the pattern the tests recompute: letters, a
 * newline every 64 bytes. */
static char pat(unsigned long long i)
{
    return i % 64 == 63 ? '\n' : (char)('a' + (i % 26));
}

static int spam(int fd, unsigned long long n)
{
    char buf[8192];
    unsigned long long done = 0;
    while (done < n) {
        size_t k = n - done < sizeof buf ? (size_t)(n - done) : sizeof buf;
        for (size_t j = 0; j < k; j++)
            buf[j] = pat(done + j);
        if (write(fd, buf, k) != (ssize_t)k)
            return 1;
        done += k;
    }
    return 0;
}

static int limit_of(const char *name)
{
    static const struct { const char *n; int r; } t[] = {
        { "cpu", RLIMIT_CPU }, { "as", RLIMIT_AS }, { "nofile", RLIMIT_NOFILE }, { "nproc", RLIMIT_NPROC },
        { "fsize", RLIMIT_FSIZE },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].n, name) == 0)
            return t[i].r;
    return -1;
}

int main(int argc, char **argv)
{
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (strcmp(base, "fake-bwrap") == 0) {
        /* a bubblewrap that cannot start, as where user namespaces are off */
        fprintf(stderr, "bwrap: No permissions to creating new namespace, likely because the kernel does not "
                        "allow non-privileged user namespaces\n");
        return 1;
    }
    const char *m = argc > 1 ? argv[1] : "";
    if (strcmp(m, "detach") == 0 && argc == 5) {
        /* detach PIDFILE PARENT_S CHILD_S: a child that leaves the process group
         * and the session and outlives its parent, as a daemon does; the
         * grandchild writes its pid, ignores SIGTERM and sleeps */
        pid_t p = fork();
        if (p == 0) {
            setsid();
            if (fork() == 0) {
                FILE *f = fopen(argv[2], "w");
                if (f) {
                    fprintf(f, "%d\n", (int)getpid());
                    fclose(f);
                }
                for (int fd = 0; fd < 3; fd++)
                    close(fd);
                signal(SIGTERM, SIG_IGN);
                nap(atof(argv[4]));
                _exit(0);
            }
            _exit(0);
        }
        nap(atof(argv[3]));
        return 0;
    }
    if (strcmp(m, "ignore-term") == 0 && argc == 3) {
        signal(SIGTERM, SIG_IGN);
        nap(atof(argv[2]));
        return 0;
    }
    if (strcmp(m, "sleep") == 0 && argc == 3) {
        nap(atof(argv[2]));
        return 0;
    }
    if (strcmp(m, "spam") == 0 && argc == 4)
        return spam(strcmp(argv[2], "err") == 0 ? 2 : 1, strtoull(argv[3], NULL, 10));
    if (strcmp(m, "bytes") == 0) {
        /* invalid UTF-8, a NUL, a control byte, valid UTF-8 */
        static const char b[] = "ok \xff\xfe \x00 \x01 \xc3\xa9 \xe2\x82 end\n";
        return write(1, b, sizeof b - 1) == (ssize_t)(sizeof b - 1) ? 0 : 1;
    }
    if (strcmp(m, "env") == 0) {
        for (char **e = environ; *e; e++)
            printf("%s\n", *e);
        return 0;
    }
    if (strcmp(m, "argv") == 0) {
        for (int i = 2; i < argc; i++)
            printf("[%s]", argv[i]);
        printf("\n");
        return 0;
    }
    if (strcmp(m, "rlimit") == 0 && argc == 3) {
        struct rlimit rl;
        int r = limit_of(argv[2]);
        if (r < 0 || getrlimit(r, &rl) != 0)
            return 2;
        if (rl.rlim_cur == RLIM_INFINITY)
            printf("unlimited\n");
        else
            printf("%llu\n", (unsigned long long)rl.rlim_cur);
        return 0;
    }
    if (strcmp(m, "fsize") == 0 && argc == 4) {
        signal(SIGXFSZ, SIG_IGN);          /* see EFBIG instead of dying */
        int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0)
            return 2;
        unsigned long long n = strtoull(argv[2], NULL, 10), done = 0;
        char buf[4096];
        memset(buf, 'x', sizeof buf);
        while (done < n) {
            size_t k = n - done < sizeof buf ? (size_t)(n - done) : sizeof buf;
            ssize_t w = write(fd, buf, k);
            if (w < 0) {
                printf("stopped at %llu: %s\n", done, strerror(errno));
                return 3;
            }
            done += (unsigned long long)w;
        }
        printf("wrote %llu\n", done);
        return 0;
    }
    if (strcmp(m, "nofile") == 0 && argc == 3) {
        int want = atoi(argv[2]), got = 0;
        while (got < want && open("/dev/null", O_RDONLY) >= 0)
            got++;
        printf("%d\n", got);
        return got == want ? 0 : 3;
    }
    if (strcmp(m, "alloc") == 0 && argc == 3) {
        size_t n = (size_t)strtoull(argv[2], NULL, 10);
        char *p = malloc(n);
        if (!p) {
            printf("malloc failed\n");
            return 3;
        }
        memset(p, 1, n);
        printf("allocated %zu\n", n);
        free(p);
        return 0;
    }
    if (strcmp(m, "spin") == 0) {
        volatile unsigned long x = 0;
        for (;;)
            x++;
    }
    if (strcmp(m, "write") == 0 && argc == 3) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "written\n", 8) != 8) {
            printf("cannot write %s: %s\n", argv[2], strerror(errno));
            return 3;
        }
        close(fd);
        printf("wrote %s\n", argv[2]);
        return 0;
    }
    if (strcmp(m, "connect") == 0 && argc == 3) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a;
        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)atoi(argv[2]));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
            printf("cannot connect: %s\n", strerror(errno));
            return 3;
        }
        printf("connected\n");
        close(s);
        return 0;
    }
    fprintf(stderr, "sgx_helper: unknown mode or arguments\n");
    return 2;
}
