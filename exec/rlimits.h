/* rlimits.h - resource limits every process of a run starts under.
 *
 * Set in each child between fork and exec (setrlimit, soft and hard alike, so a
 * command cannot raise them again).  Note RLIMIT_NPROC counts every process of
 * the real user and is not enforced for root (the kernel lets CAP_SYS_RESOURCE /
 * CAP_SYS_ADMIN past it); the others hold for root too. */
#ifndef SGX_RLIMITS_H
#define SGX_RLIMITS_H
#include <stddef.h>
#include <stdint.h>

/* ORDER SGX_RLIMITS: option name (--rlimit NAME=VALUE), resource, unit for docs */
#define SGX_RLIMITS(X) \
    X(CPU,    "cpu",    RLIMIT_CPU,    "seconds of CPU time") \
    X(AS,     "as",     RLIMIT_AS,     "bytes of address space") \
    X(NOFILE, "nofile", RLIMIT_NOFILE, "open files") \
    X(NPROC,  "nproc",  RLIMIT_NPROC,  "processes of the user") \
    X(FSIZE,  "fsize",  RLIMIT_FSIZE,  "bytes a file may grow to")

enum {
#define X(id, name, res, unit) SGX_RL_##id,
    SGX_RLIMITS(X)
#undef X
    SGX_RL__COUNT
};

#define SGX_RL_UNSET (UINT64_MAX - 1)     /* RLIM_INFINITY is UINT64_MAX: "unlimited" */

typedef struct sgx_rlimits {
    uint64_t v[SGX_RL__COUNT];       /* SGX_RL_UNSET: inherit */
} sgx_rlimits;

extern const char *const sgx_rlimit_names[SGX_RL__COUNT];

/* Every limit unset except the defaults: nofile 4096. */
void sgx_rlimits_default(sgx_rlimits *r);
/* Parse "NAME=VALUE" (VALUE a number with an optional k, m or g suffix, or
 * "unlimited") into r.  0, or -1 with a message in err. */
int sgx_rlimits_parse(sgx_rlimits *r, const char *spec, char *err, size_t errlen);
/* Apply r to the calling process (a child after fork).  0, or -1 (errno set). */
int sgx_rlimits_apply(const sgx_rlimits *r);

#endif
