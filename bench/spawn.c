/* spawn.c - one process per decision, timed from outside (spawn.h): the way an
 * agent hook runs shellgate.  Each run is posix_spawn of the real binary with its
 * output and errors to /dev/null, then wait4; the time is the wall clock around both,
 * and the child's own CPU time is kept beside it. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "spawn.h"

extern char **environ;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_spawn_run(char *const argv[], const char *in, int *status, double *secs, double *cpu)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    int bad = posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null", O_RDONLY, 0)
              || posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0)
              || posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now();
    if (!bad && posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
        bad = 1;
    int st = 0;
    struct rusage ru;
    if (!bad && wait4(pid, &st, 0, &ru) != pid)
        bad = 1;
    *secs = now() - t0;
    if (cpu && !bad)
        *cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    posix_spawn_file_actions_destroy(&fa);
    if (bad)
        return -1;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return 0;
}

int bench_spawn_stats(char *const argv[], int n, bench_spawn_res *res)
{
    memset(res, 0, sizeof *res);
    if (n < 1)
        n = 1;
    double *lat = malloc(sizeof *lat * (size_t)n * 2), *cpu = lat + n;
    if (!lat)
        return -1;
    int st = 0;
    for (int w = 0; w < (n < 20 ? 1 : 10); w++)      /* page cache, branch predictors */
        if (bench_spawn_run(argv, NULL, &st, &lat[0], NULL) < 0) {
            free(lat);
            return -1;
        }
    res->status = st;
    for (int i = 0; i < n; i++) {
        if (bench_spawn_run(argv, NULL, &st, &lat[i], &cpu[i]) < 0 || st != res->status) {
            free(lat);
            return -1;
        }
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp_d);
    qsort(cpu, (size_t)n, sizeof *cpu, cmp_d);
    res->cpu_median = cpu[n / 2];
    res->runs = n;
    res->min = lat[0];
    res->median = lat[n / 2];
    res->p99 = lat[(size_t)n * 99 / 100];
    free(lat);
    return 0;
}

#ifdef BENCH_SPAWN_MAIN
/* bench_spawn N PROGRAM [ARG...]: N runs, median and p99 printed. */
int main(int argc, char **argv)
{
    if (argc < 3 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: bench_spawn N PROGRAM [ARG...]\n");
        return 64;
    }
    bench_spawn_res r;
    if (bench_spawn_stats(argv + 2, atoi(argv[1]), &r) < 0) {
        fprintf(stderr, "bench_spawn: %s did not run, or exited differently between runs\n", argv[2]);
        return 1;
    }
    printf("%d runs of %s: median %.3f ms   p99 %.3f ms   min %.3f ms   CPU %.3f ms   (exit %d)\n", r.runs,
           argv[2], r.median * 1e3, r.p99 * 1e3, r.min * 1e3, r.cpu_median * 1e3, r.status);
    return 0;
}
#endif
