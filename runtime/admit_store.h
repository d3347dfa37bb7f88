/* admit_store.h - choosing an admission store: the local state file (admit_file.c)
 * or a Redis server shared by a fleet (admit_redis.c), with what to do when the
 * shared store cannot be reached.  Every verb that admits commands (`check
 * --state`, `approve`, `state reset`, and the runner, server and hooks) opens its
 * store here, from the same options, so they all read `--rate-store` alike
 * (docs/fleet.md).
 *
 * Ownership: the options' strings are copied; the store owns its connection and
 * is closed with sgr_admit_close.  Nothing here prints: warnings reach the
 * caller's callback, errors come back as text in caller-supplied buffers. */
#ifndef SGR_ADMIT_STORE_H
#define SGR_ADMIT_STORE_H
#include <stddef.h>
#include <stdint.h>
#include "admit.h"

/* What admission does when the shared store is down or slow (ORDER SGR_STORE_DOWN).
 * DENY refuses the command with a message that says why (fail closed, the
 * default); LOCAL admits it against the local state file and warns: limits then
 * hold per host, and approvals granted elsewhere are not seen, until it is back. */
#define SGR_STORE_DOWN(X) \
    X(DENY,  "deny")  \
    X(LOCAL, "local")

enum {
#define X(id, name) SGR_STORE_DOWN_##id,
    SGR_STORE_DOWN(X)
#undef X
};

#define SGR_STORE_TIMEOUT_MS 250u      /* connect, and each command, by default */

/* A warning for the operator (a fallback to the local store, the shared store
 * back again): one complete sentence, no newline. */
typedef void (*sgr_store_warn_fn)(void *ud, const char *msg);

typedef struct sgr_admit_store_opts {
    const char *url;                   /* NULL or "": the local state file alone;
                                        * "redis://HOST[:PORT][/DB]" */
    const char *state;                 /* the local state file; NULL: the default path */
    int down;                          /* SGR_STORE_DOWN_* */
    uint32_t timeout_ms;               /* 0: SGR_STORE_TIMEOUT_MS */
    const char *prefix;                /* Redis key prefix; NULL: "shellgate" */
    sgr_store_warn_fn warn;            /* may be NULL */
    void *warn_ud;
} sgr_admit_store_opts;

/* Open the store the options name.  Opening connects to nothing yet (the first
 * operation does, within the timeout) and creates no file.  NULL with err for a
 * malformed URL, no usable state path, or no memory. */
sgr_admit *sgr_admit_store_open(const sgr_admit_store_opts *o, char *err, size_t errlen);

/* Where the store keeps its state, for messages: the state file's path, or the
 * Redis URL in canonical form ("redis://127.0.0.1:6379/0"). */
const char *sgr_admit_store_where(const sgr_admit *a);

/* "deny" / "local" -> SGR_STORE_DOWN_*, -1 otherwise. */
int sgr_admit_store_down_parse(const char *s);

/* The Redis backend itself (admit_redis.c): see sgr_admit_store_open.  url must be
 * a redis:// URL; NULL with err otherwise. */
sgr_admit *sgr_admit_redis_open(const sgr_admit_store_opts *o, char *err, size_t errlen);
/* The canonical URL of a Redis store, NULL for any other backend. */
const char *sgr_admit_redis_url(const sgr_admit *a);

#endif
