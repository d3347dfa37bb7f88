/* sandbox.h - running a command under bubblewrap (bwrap, Debian's bubblewrap).
 *
 * The sandbox sees the whole filesystem read-only, the workspace roots read-
 * write, a private /tmp (and /var/tmp, /dev/shm), its own /dev and /proc, no
 * network unless the pack allows it, no capabilities, and its own user, pid, ipc,
 * uts and cgroup namespaces; it dies with the process that started it
 * (--die-with-parent), and when its first process ends the kernel ends every
 * other in its pid namespace.  A sandbox that cannot start is an error the caller
 * must report -- never a reason to run without it.
 *
 * Ownership: argv arrays live in the given arena. */
#ifndef SGX_SANDBOX_H
#define SGX_SANDBOX_H
#include <stddef.h>
#include "common/arena.h"

enum { SGX_SANDBOX_NONE, SGX_SANDBOX_BWRAP, SGX_SANDBOX_AUTO };

typedef struct sgx_sandbox {
    const char *bwrap;                /* the bwrap program (absolute) */
    const char *const *rw;            /* bound read-write (the workspace roots) */
    size_t nrw;
    const char *const *ro;            /* bound read-only at their own paths after the
                                       * private /tmp: what the run inside must read
                                       * (the policy, its include dirs, a key) */
    size_t nro;
    const char *cwd;                  /* where the command starts */
    int network;                      /* keep the network (the pack's run_sandbox set) */
} sgx_sandbox;

/* "none", "bwrap", "auto" -> SGX_SANDBOX_*, -1 otherwise. */
int sgx_sandbox_mode(const char *s);
/* Find bwrap: given (a path, or a name searched in PATH), or "bwrap" in PATH.
 * 0 with out, or -1. */
int sgx_sandbox_find(const char *given, char *out, size_t n);
/* bwrap's argv running inner (NULL-terminated) in the sandbox; NULL on OOM. */
char **sgx_sandbox_argv(sg_arena *a, const sgx_sandbox *s, const char *const *inner);
/* Start the sandbox around `true`-like probe (argv, NULL-terminated) and wait:
 * 0 when it ran and exited 0, else -1 with what bwrap said in err. */
int sgx_sandbox_probe(const sgx_sandbox *s, const char *const *probe, char *err, size_t errlen);

#endif
