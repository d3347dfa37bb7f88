/* session.h - what persists between the runs of one agent: the directory it is
 * in and the variables it exported.
 *
 * A session is a file DIR/ID.json, written whole to a temporary file and renamed
 * over the old one (a crash leaves the old state or the new one, never half), and
 * a lock DIR/ID.lock held (flock, never waited for) for as long as a run or a
 * `session` command uses it: a second caller gets SGX_SESSION_BUSY at once.  It
 * records only what the agent changed against the caller's allowlisted
 * environment -- variables set (exported) and inherited ones unset -- never what a
 * program's own bookkeeping would show, because nothing is read back from a
 * shell: the executor's own export/unset are the only writers.  Sessions unused
 * for longer than a TTL, and past a count the least recently used, are removed
 * (sgx_session_evict), skipping any that is in use.
 *
 * Ownership: a sgx_session owns its strings (sg_malloc) until sgx_session_close. */
#ifndef SGX_SESSION_H
#define SGX_SESSION_H
#include <stddef.h>
#include <stdint.h>
#include "env.h"

#define SGX_SESSION_ID_MAX 64
#define SGX_SESSIONS_DEFAULT 64          /* --max-sessions */
#define SGX_SESSION_TTL_DEFAULT 86400    /* --session-ttl, seconds */

enum { SGX_SESSION_OK = 0, SGX_SESSION_ERROR = -1, SGX_SESSION_BUSY = -2 };

typedef struct sgx_session {
    char id[SGX_SESSION_ID_MAX + 1];
    char *dir;
    int lockfd;
    int existed;                 /* state was there when opened */
    char *cwd;                   /* NULL: none recorded */
    char **roots;                /* the workspace roots the session was started with */
    uint32_t nroots;
    sgx_vars set;                /* what the agent set: name, value (all exported) */
    char **unset;                /* inherited names it unset */
    uint32_t nunset;
    int64_t created, used;       /* seconds since the epoch */
} sgx_session;

/* Is id a session id: 1-64 of [A-Za-z0-9._-], not starting with '.'. */
int sgx_session_id_ok(const char *id);
/* The sessions directory: given, else $XDG_STATE_HOME/shellgate/sessions, else
 * ~/.local/state/shellgate/sessions.  0, or -1 when none can be named. */
int sgx_session_dir(char *buf, size_t n, const char *given);

/* Lock session id in dir (creating dir 0700) and read its state (none: empty).
 * SGX_SESSION_OK, SGX_SESSION_BUSY (another caller holds it), or
 * SGX_SESSION_ERROR with a message in err. */
int sgx_session_open(sgx_session *s, const char *dir, const char *id, char *err, size_t errlen);
/* Write the state (used = now).  0, or -1 with err. */
int sgx_session_save(sgx_session *s, char *err, size_t errlen);
/* Forget the state (the file goes; the lock stays held until close). */
int sgx_session_reset(sgx_session *s, char *err, size_t errlen);
/* Release the lock and the memory. */
void sgx_session_close(sgx_session *s);

/* Put the session's variables on top of base (set ones exported, unset ones gone). */
int sgx_session_apply(const sgx_session *s, sgx_vars *v);
/* Record what the agent changed: the exported variables of final against base
 * (new or different: set; in base and gone from final: unset).  0, -1 OOM. */
int sgx_session_record(sgx_session *s, const sgx_vars *base, const sgx_vars *final);
/* Set or unset one variable in the record (the `session set/unset` commands). */
int sgx_session_set_var(sgx_session *s, const char *name, const char *value);
int sgx_session_unset_var(sgx_session *s, const char *name);
int sgx_session_set_cwd(sgx_session *s, const char *cwd);
int sgx_session_set_roots(sgx_session *s, const char *const *roots, size_t n);

/* The state as JSON ({"session", "cwd", "roots", "env", "unset", "created",
 * "used"}), sg_malloc'd; NULL on OOM. */
char *sgx_session_json(const sgx_session *s);

/* Remove sessions of dir unused for more than ttl_s seconds (0: no TTL), then the
 * least recently used ones past max (0: no limit); never keep_id, never one in
 * use.  Returns how many were removed. */
uint32_t sgx_session_evict(const char *dir, const char *keep_id, uint32_t max, int64_t ttl_s);

/* Call fn for every session of dir (unlocked reads): id, cwd (or ""), last use. */
int sgx_session_list(const char *dir, void (*fn)(void *ud, const char *id, const char *cwd, int64_t used), void *ud);

#endif
