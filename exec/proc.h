/* proc.h - the processes of a run: spawning them, waiting while their output is
 * read, and ending the whole tree.
 *
 * The calling process becomes a child subreaper (PR_SET_CHILD_SUBREAPER): a
 * process that detaches (double fork, setsid) is re-parented to it instead of to
 * init, so every process a run starts stays its descendant until it is reaped.
 * Each child starts a session and process group of its own (setsid, no
 * controlling terminal), with the signal mask and dispositions reset, only fds
 * 0-2 open plus what its redirections open, its resource limits set.  Ending the
 * tree -- on timeout, and after every run for whatever is left -- signals every
 * process group the run started and every descendant found in /proc (SIGTERM,
 * then SIGKILL after the grace period) until none is left, reaping as it goes:
 * no process and no zombie outlives a run.
 *
 * One sgx_proc per run, in a process that has no other children (it reaps with
 * waitpid(-1)): the CLI.  Waiting always reads the registered output pipes, so a
 * command that prints more than a pipe holds never blocks.  Not thread-safe;
 * from sgx_proc_init to sgx_proc_done SIGCHLD and the signals that would end this
 * process (SIGINT, SIGTERM, SIGHUP, SIGQUIT) are blocked and read through a
 * signalfd -- one of the latter ends the tree as a timeout does, so interrupting
 * the executor never leaves its commands running -- and SIGPIPE is ignored (a
 * reader of our output that went away must not kill us before the tree ends). */
#ifndef SGX_PROC_H
#define SGX_PROC_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include "capture.h"
#include "rlimits.h"

/* A redirection as the child performs it (targets already expanded; paths
 * absolute).  kind: sgr_redir_kind. */
typedef struct sgx_redir_op {
    int fd;                      /* the descriptor it sets (defaults resolved) */
    uint8_t kind;
    int dupfd;                   /* DUP_*: the source descriptor, -1 to close */
    const char *path;            /* files: absolute path */
    const char *data;            /* HERESTRING: the text with its newline */
    size_t dlen;
} sgx_redir_op;

/* Decides whether a redirection may open path with flags (open(2) flags); -1 with
 * errno set refuses it.  Called in the child. */
typedef int (*sgx_open_check_fn)(void *ud, const char *path, int flags);

typedef struct sgx_spawn {
    const char *path;            /* the program file (absolute or relative to cwd) */
    const char *name;            /* for messages */
    char *const *argv;
    char *const *envp;
    const char *cwd;
    int fd[3];                   /* what the child gets as 0, 1, 2 */
    const sgx_redir_op *redirs;
    uint32_t nredirs;
    const sgx_rlimits *rl;
    sgx_open_check_fn open_check;
    void *ud;
    const int *keep;             /* more descriptors the child keeps, as 3, 4, ... */
    uint32_t nkeep;              /* at most 8 */
} sgx_spawn;

/* Where the bytes read from a pipe go: a capture, or a growable buffer. */
typedef struct sgx_reader {
    int fd;                      /* read end (non-blocking), -1 when closed */
    sgx_cap *cap;                /* or */
    char *buf;                   /* sg_malloc'd, grown up to max */
    size_t len, bcap, max;
    int overflow;                /* more than max arrived (the rest is dropped) */
} sgx_reader;

#define SGX_MAX_READERS 24

typedef struct sgx_kid {
    pid_t pid;
    int status;                  /* as from waitpid, once done */
    uint8_t done;
    uint8_t execd;               /* its program started (execve succeeded) */
    int sfd;                     /* read end of its close-on-exec status pipe: end of
                                  * file without a byte means execve succeeded; -1
                                  * once known */
} sgx_kid;

typedef struct sgx_proc {
    sigset_t oldmask;
    int sigfd;
    sgx_kid *kids;
    uint32_t nkids, capkids;
    sgx_reader rd[SGX_MAX_READERS];
    uint32_t nrd;
    int64_t deadline_ns;         /* CLOCK_MONOTONIC; 0: none */
    int64_t grace_ns;
    int timed_out;
    int signo;                   /* SIGINT, SIGTERM, SIGHUP or SIGQUIT arrived: like the
                                  * deadline, the run ends with its tree */
    void (*oldpipe)(int);
    uint32_t started;            /* children spawned */
    uint32_t execd;              /* of them, those whose program started */
    uint32_t leftovers;          /* processes still there after the run, ended */
    int subreaper;               /* PR_SET_CHILD_SUBREAPER took */
} sgx_proc;

int64_t sgx_now_ns(void);        /* CLOCK_MONOTONIC */

/* Make the calling process ready: fds 0-2 open, every other inherited descriptor
 * close-on-exec, subreaper, SIGCHLD blocked and read through a signalfd.
 * timeout_s 0: none.  0, or -1 with errno. */
int sgx_proc_init(sgx_proc *p, double timeout_s, double grace_s);
/* Restore the signal mask; close everything.  Children must all be gone. */
void sgx_proc_done(sgx_proc *p);

/* Register a reader; returns its index or -1 (too many). */
int sgx_proc_add_reader(sgx_proc *p, int fd, sgx_cap *cap, size_t max);
/* Read what is left on reader i without blocking, close it, unregister it (readers
 * registered after it move down one). */
void sgx_proc_close_reader(sgx_proc *p, int i);

/* Start a program.  Returns its pid, or -1 with errno (fork failed).  Whether
 * the program itself started (a redirection or execve can fail in the child) is
 * known once the child has exec'd or exited: see execd. */
pid_t sgx_proc_spawn(sgx_proc *p, const sgx_spawn *s);
/* Wait for every pid in pids[0..n) while reading the pipes; statuses (waitpid
 * form) into st.  0; -1 when the deadline passed (the whole tree has then been
 * ended and p->timed_out is set). */
int sgx_proc_wait(sgx_proc *p, const pid_t *pids, uint32_t n, int *st);
/* Read the pipes for up to ms milliseconds (0: only what is there). -1 past the
 * deadline (nothing is ended here). */
int sgx_proc_pump(sgx_proc *p, int ms);
/* Wait until reader i reaches end of file, up to the deadline.  0 EOF, -1 deadline. */
int sgx_proc_drain(sgx_proc *p, int i);
/* End every descendant: SIGTERM, grace, SIGKILL, reap, until none is left.  Returns
 * how many there were. */
uint32_t sgx_proc_end_tree(sgx_proc *p, int64_t grace_ns);
/* Every descendant of this process now alive (zombies left out), into out[0..max);
 * returns the count (which may exceed max). */
uint32_t sgx_proc_descendants(pid_t *out, uint32_t max);

/* The exit status a shell reports for a waitpid status. */
static inline int sgx_status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 1;
}

#endif
