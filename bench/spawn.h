/* spawn.h - start a program and time it from outside (bench/spawn.c). */
#ifndef BENCH_SPAWN_H
#define BENCH_SPAWN_H

typedef struct bench_spawn_res {
    int runs;
    int status;                     /* the exit status every run had */
    double min, median, p99;        /* seconds, spawn to reaped */
    double cpu_median;              /* seconds of CPU the child used (user + system) */
} bench_spawn_res;

/* Run argv (argv[0] a path) once with stdin from `in` (NULL: /dev/null) and stdout and
 * stderr to /dev/null; *status its exit status (-1 killed), *secs the wall time, *cpu
 * (if not NULL) the CPU time it used.  0, or -1 when it could not be started or
 * waited for. */
int bench_spawn_run(char *const argv[], const char *in, int *status, double *secs, double *cpu);
/* n timed runs of argv after a warm-up; -1 when a run fails or its exit status
 * differs from the first's. */
int bench_spawn_stats(char *const argv[], int n, bench_spawn_res *res);

#endif
