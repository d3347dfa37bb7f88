/* rlimits.c - parsing and applying a run's resource limits. */
#include "rlimits.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

const char *const sgx_rlimit_names[SGX_RL__COUNT] = {
#define X(id, name, res, unit) name,
    SGX_RLIMITS(X)
#undef X
};

static const int resources[SGX_RL__COUNT] = {
#define X(id, name, res, unit) res,
    SGX_RLIMITS(X)
#undef X
};

void sgx_rlimits_default(sgx_rlimits *r)
{
    for (int i = 0; i < SGX_RL__COUNT; i++)
        r->v[i] = SGX_RL_UNSET;
    r->v[SGX_RL_NOFILE] = 4096;
}

int sgx_rlimits_parse(sgx_rlimits *r, const char *spec, char *err, size_t errlen)
{
    const char *eq = strchr(spec, '=');
    int which = -1;
    for (int i = 0; eq && i < SGX_RL__COUNT; i++)
        if (strlen(sgx_rlimit_names[i]) == (size_t)(eq - spec) && memcmp(spec, sgx_rlimit_names[i], (size_t)(eq - spec)) == 0)
            which = i;
    if (which < 0) {
        snprintf(err, errlen, "--rlimit takes NAME=VALUE with NAME one of cpu, as, nofile, nproc, fsize");
        return -1;
    }
    const char *v = eq + 1;
    if (strcmp(v, "unlimited") == 0) {
        r->v[which] = (uint64_t)RLIM_INFINITY;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1024;
    else if (*end == 'm' || *end == 'M')
        mul = 1024 * 1024;
    else if (*end == 'g' || *end == 'G')
        mul = 1024ull * 1024 * 1024;
    if (mul != 1)
        end++;
    if (end == v || *end || errno || v[0] == '-' || n > UINT64_MAX / mul / 2) {
        snprintf(err, errlen, "--rlimit %s: '%s' is not a number (optionally k, m or g) or \"unlimited\"",
                 sgx_rlimit_names[which], v);
        return -1;
    }
    r->v[which] = (uint64_t)n * mul;
    return 0;
}

int sgx_rlimits_apply(const sgx_rlimits *r)
{
    for (int i = 0; i < SGX_RL__COUNT; i++) {
        if (r->v[i] == SGX_RL_UNSET)
            continue;
        struct rlimit rl = { (rlim_t)r->v[i], (rlim_t)r->v[i] };
        /* CPU: the soft limit sends SIGXCPU, the hard one SIGKILL; a second apart,
         * so the command sees the first (and may say so) */
        if (i == SGX_RL_CPU && rl.rlim_max != RLIM_INFINITY)
            rl.rlim_max++;
        struct rlimit cur;
        /* never raise a hard limit the caller already has (that needs privilege
         * and would loosen what the caller set) */
        if (getrlimit(resources[i], &cur) == 0 && cur.rlim_max != RLIM_INFINITY && rl.rlim_max > cur.rlim_max)
            rl.rlim_cur = rl.rlim_max = cur.rlim_max;
        if (setrlimit(resources[i], &rl) != 0)
            return -1;
    }
    return 0;
}
