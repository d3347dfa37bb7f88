/* redis.c - the Redis store of admission (admit_int.h): rate
 * limits and approvals shared by every host of a fleet.
 *
 * One admission is one server-side Lua script (ADMIT_LUA below), run with EVALSHA
 * and, when the server does not know the script yet (a restart, SCRIPT FLUSH, a
 * failover), with EVAL, which also caches it.  Redis runs a script atomically, so
 * the approval lookup, every window check, the recording of the command in every
 * limit and the consumption of a one-time approval happen as one step however many
 * processes on however many hosts admit at once: exactly the limit is admitted.
 *
 * Keys (PREFIX is "shellgate" unless the options say otherwise; every name part is
 * escaped: bytes outside [A-Za-z0-9_.-] become %XX, so no part can forge another):
 *   PREFIX:clock                      hash {max, test}: the largest time seen, and
 *                                     whether the injected test clock drives it
 *   PREFIX:limit:PACK:LIMIT:AGENT     list of admission times, newest first, at
 *                                     most max(count) long; expires its longest
 *                                     window (+1 s) after the newest admission
 *   PREFIX:pending:ID                 hash {cmd, cwd, session, progs, risky,
 *                                     created}: an ask waiting for `approve`; 1 day
 *   PREFIX:once:ID                    a one-time approval; 7 days
 *   PREFIX:session:ID:SESSION         a session approval; 7 days
 * Times are nanoseconds since the epoch written as decimal strings; the script
 * splits them into seconds and nanoseconds, because Redis's Lua numbers are
 * doubles, exact to 2^53 (104 days of nanoseconds) and no further.
 *
 * The clock is the Redis server's (TIME), never the caller's: one clock for the
 * whole fleet, so a host whose clock is wrong can neither free slots nor lock
 * them.  As in the file store, the store never runs behind the largest time it has
 * seen, and the injected test clock drives only a store created under it.
 *
 * Never a hang: connecting and every command are bounded by the timeout; a
 * connection that failed is dropped, and for a second the store is treated as down
 * without trying again (a long-running caller does not pay the timeout per
 * command).  Down or slow: refuse (the default) or use the local state file,
 * warned (admit.h).  SIGPIPE from a peer that went away is blocked and
 * swallowed around each exchange, so it cannot kill the caller. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "admit/admit_int.h"
#include "common/alloc.h"

#define MAX_RING SGT_MAX_LIMIT_COUNT   /* timestamps per key: the largest count of a limit (runtime/sgt.h) */
#define MAX_LIMITS 64
#define MAX_ARGS (6 + MAX_LIMITS + 12 + MAX_LIMITS * (3 + 2 * SGT_MAX_WINDOWS))
#define KEY_MAX 2048
#define PENDING_TTL_MS 86400000LL       /* 1 day */
#define APPROVAL_TTL_MS 604800000LL     /* 7 days */
#define RETRY_NS 1000000000LL           /* after a failure, the store is down for 1 s */

/* KEYS: 1 clock, 2 once, 3 session, 4 pending, 5.. one per limit.
 * ARGV: 1 caller's seconds, 2 its nanoseconds, 3 injected ("1"/"0"), 4 ask,
 *       5 pending ttl ms, 6 cmd, 7 cwd, 8 session, 9 programs, 10 risky,
 *       11 number of limits, then per limit: ring size, ttl ms, windows, and per
 *       window: count, seconds.
 * Returns {0, 0, now}: an ask recorded as pending; {1, approved, now}: admitted
 * and recorded; {2, approved, now, limit, window, entry, ...}: refused by every
 * (limit, window) listed, entry being the count-th newest admission ("" for
 * `0 per W`), from which the caller computes the exact wait. */
static const char ADMIT_LUA[] =
    "-- shellgate admission: one atomic check-and-record (admit/redis.c)\n"
    "local function split(e) return tonumber(string.sub(e, 1, -10)), tonumber(string.sub(e, -9)) end\n"
    "local clock = redis.call('HMGET', KEYS[1], 'max', 'test')\n"
    "local injected = ARGV[3] == '1'\n"
    "local test = clock[2] == '1' or (not clock[1] and injected)\n"
    "local s, n\n"
    "if test and injected then\n"
    "  s, n = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "else\n"
    "  local t = redis.call('TIME')\n"
    "  s, n = tonumber(t[1]), tonumber(t[2]) * 1000\n"
    "end\n"
    "if clock[1] then\n"
    "  local ms, mn = split(clock[1])\n"
    "  if ms > s or (ms == s and mn > n) then s, n = ms, mn end\n"
    "end\n"
    "local now = string.format('%d%09d', s, n)\n"
    "redis.call('HSET', KEYS[1], 'max', now, 'test', test and '1' or '0')\n"
    "local approved = 0\n"
    "if ARGV[4] == '1' then\n"
    "  if redis.call('EXISTS', KEYS[2]) == 1 then approved = 1\n"
    "  elseif redis.call('EXISTS', KEYS[3]) == 1 then approved = 2 end\n"
    "  if approved == 0 then\n"
    "    redis.call('HSET', KEYS[4], 'cmd', ARGV[6], 'cwd', ARGV[7], 'session', ARGV[8],\n"
    "               'progs', ARGV[9], 'risky', ARGV[10], 'created', now)\n"
    "    redis.call('PEXPIRE', KEYS[4], ARGV[5])\n"
    "    return {0, 0, now}\n"
    "  end\n"
    "end\n"
    "local nl, a, refused, plan = tonumber(ARGV[11]), 12, {}, {}\n"
    "for i = 1, nl do\n"
    "  local key, nw = KEYS[4 + i], tonumber(ARGV[a + 2])\n"
    "  plan[i] = {key, tonumber(ARGV[a]), ARGV[a + 1]}\n"
    "  a = a + 3\n"
    "  for w = 1, nw do\n"
    "    local c, secs = tonumber(ARGV[a]), tonumber(ARGV[a + 1])\n"
    "    a = a + 2\n"
    "    if c == 0 then\n"
    "      refused[#refused + 1] = i - 1; refused[#refused + 1] = w - 1; refused[#refused + 1] = ''\n"
    "    else\n"
    "      local e = redis.call('LINDEX', key, c - 1)\n"
    "      if e then\n"
    "        local es, en = split(e)\n"
    "        es = es + secs\n"
    "        if es > s or (es == s and en > n) then\n"
    "          refused[#refused + 1] = i - 1; refused[#refused + 1] = w - 1; refused[#refused + 1] = e\n"
    "        end\n"
    "      end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "if #refused > 0 then\n"
    "  local r = {2, approved, now}\n"
    "  for k = 1, #refused do r[#r + 1] = refused[k] end\n"
    "  return r\n"
    "end\n"
    "for i = 1, nl do\n"
    "  local p = plan[i]\n"
    "  redis.call('LPUSH', p[1], now)\n"
    "  redis.call('LTRIM', p[1], 0, p[2] - 1)\n"
    "  redis.call('PEXPIRE', p[1], p[3])\n"
    "end\n"
    "if approved == 1 then redis.call('DEL', KEYS[2]) end\n"
    "return {1, approved, now}\n";

/* KEYS: 1 pending, 2 the approval to record.  ARGV: 1 record ("1") or only look
 * ("0"), 2 its ttl ms.  Returns the pending hash (field, value, ...), or {} when
 * no such command waits; recording consumes the pending entry. */
static const char APPROVE_LUA[] =
    "-- shellgate approval (admit/redis.c)\n"
    "local p = redis.call('HGETALL', KEYS[1])\n"
    "if #p == 0 then return {} end\n"
    "if ARGV[1] == '1' then\n"
    "  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])\n"
    "  redis.call('DEL', KEYS[1])\n"
    "end\n"
    "return p\n";

typedef struct script {
    const char *text;
    size_t len;
    char sha[41];
} script;

/* One exchange's arguments, kept in the backend so admission allocates nothing. */
typedef struct args {
    const char *v[MAX_ARGS];
    size_t l[MAX_ARGS];
    int n;
    char keys[(MAX_LIMITS + 4) * KEY_MAX];
    size_t keys_at;
    char nums[MAX_ARGS * 24];
    size_t nums_at;
} args;

typedef struct radmit {
    sga_store base;
    char *url, *host, *prefix, *state;
    int port, db, down;
    uint32_t timeout_ms;
    sga_warn_fn warn;
    void *warn_ud;
    redisContext *c;
    int64_t retry_at;                   /* CLOCK_MONOTONIC ns: down until then */
    char last_why[400];
    int on_local;                       /* the last operation went to the local store */
    sga_store *local;                   /* the fallback, opened on first need */
    script admit, approve;
    args *a;
} radmit;

static const sga_backend redis_backend;

/* ---- SHA-1 (FIPS 180-4), only to name a script for EVALSHA ------------------------ */

static uint32_t rol(uint32_t x, int k)
{
    return x << k | x >> (32 - k);
}

static void sha1_block(uint32_t h[5], const uint8_t *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8
             | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5a827999u;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ed9eba1u;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8f1bbcdcu;
        } else {
            f = b ^ c ^ d;
            k = 0xca62c1d6u;
        }
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

static void sha1_hex(const char *s, size_t n, char out[41])
{
    uint32_t h[5] = { 0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u };
    uint8_t blk[64];
    size_t i = 0;
    for (; i + 64 <= n; i += 64)
        sha1_block(h, (const uint8_t *)s + i);
    size_t r = n - i;
    memset(blk, 0, sizeof blk);
    memcpy(blk, s + i, r);
    blk[r] = 0x80;
    if (r >= 56) {
        sha1_block(h, blk);
        memset(blk, 0, sizeof blk);
    }
    uint64_t bits = (uint64_t)n * 8;
    for (int k = 0; k < 8; k++)
        blk[63 - k] = (uint8_t)(bits >> (8 * k));
    sha1_block(h, blk);
    for (int k = 0; k < 5; k++)
        snprintf(out + 8 * k, 9, "%08x", h[k]);
}

/* ---- small helpers ---------------------------------------------------------------- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *dup0(const char *s)
{
    return s ? sg_strndup(s, strlen(s)) : NULL;
}

static void args_reset(args *a)
{
    a->n = 0;
    a->keys_at = 0;
    a->nums_at = 0;
}

static void arg(args *a, const char *s, size_t n)
{
    if (a->n < MAX_ARGS) {
        a->v[a->n] = s;
        a->l[a->n++] = n;
    }
}

static void arg_str(args *a, const char *s)
{
    arg(a, s ? s : "", s ? strlen(s) : 0);
}

static void arg_num(args *a, long long v)
{
    char *p = a->nums + a->nums_at;
    int k = snprintf(p, 24, "%lld", v);
    a->nums_at += (size_t)k + 1;
    arg(a, p, (size_t)k);
}

/* Append s[0..n) to the key under construction, escaped; 0, or -1 when too long. */
static int key_part(args *a, size_t start, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        int plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'
                 || ch == '.' || ch == '-';
        if (a->keys_at + 3 - start >= KEY_MAX - 1)
            return -1;
        if (plain) {
            a->keys[a->keys_at++] = (char)ch;
        } else {
            a->keys[a->keys_at++] = '%';
            a->keys[a->keys_at++] = hex[ch >> 4];
            a->keys[a->keys_at++] = hex[ch & 15];
        }
    }
    return 0;
}

static int key_lit(args *a, size_t start, const char *s)
{
    size_t n = strlen(s);
    if (a->keys_at + n - start >= KEY_MAX - 1)
        return -1;
    memcpy(a->keys + a->keys_at, s, n);
    a->keys_at += n;
    return 0;
}

/* A key PREFIX:kind[:part]... as the next argument; -1 when too long. */
static int key(radmit *r, const char *kind, const char *p1, size_t l1, const char *p2, size_t l2, const char *p3,
               size_t l3)
{
    args *a = r->a;
    size_t start = a->keys_at;
    if (key_lit(a, start, r->prefix) || key_lit(a, start, ":") || key_lit(a, start, kind))
        return -1;
    const char *p[3] = { p1, p2, p3 };
    size_t l[3] = { l1, l2, l3 };
    for (int i = 0; i < 3 && p[i]; i++)
        if (key_lit(a, start, ":") || key_part(a, start, p[i], l[i]))
            return -1;
    arg(a, a->keys + start, a->keys_at - start);
    a->keys_at++;                        /* keep keys apart (no NUL needed: lengths) */
    return 0;
}

static void hex_id(const uint8_t id[SGA_APPROVAL_LEN], char out[2 * SGA_APPROVAL_LEN + 1])
{
    for (int i = 0; i < SGA_APPROVAL_LEN; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* "1700000000123456789" -> ns; -1 when it is not a plain decimal number. */
static int64_t parse_ns(const char *s, size_t n)
{
    if (n == 0 || n > 19)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* ---- the connection --------------------------------------------------------------- */

/* SIGPIPE blocked for one exchange, and one it raised swallowed (hiredis writes
 * with write(2); a server that closed the socket would otherwise kill us). */
typedef struct nopipe {
    sigset_t old;
    int was_pending;
} nopipe;

static void nopipe_begin(nopipe *np)
{
    sigset_t set, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigemptyset(&pend);
    sigpending(&pend);
    np->was_pending = sigismember(&pend, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &set, &np->old);
}

static void nopipe_end(nopipe *np)
{
    sigset_t set, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigemptyset(&pend);
    if (!np->was_pending && sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE) == 1) {
        struct timespec zero = { 0, 0 };
        while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &np->old, NULL);
}

static void drop(radmit *r, const char *why)
{
    if (r->c)
        redisFree(r->c);
    r->c = NULL;
    snprintf(r->last_why, sizeof r->last_why, "%s", why);
    r->retry_at = mono_ns() + RETRY_NS;
}

/* The text for a failed exchange: a timeout said as one. */
static void io_why(radmit *r, const redisContext *c, char *why, size_t n, const char *doing)
{
    int timeout = c->err == REDIS_ERR_IO && (strstr(c->errstr, "temporarily unavailable") || strstr(c->errstr, "timed out"));
    if (timeout)
        snprintf(why, n, "no answer %s within %u ms", doing, r->timeout_ms);
    else
        snprintf(why, n, "%s: %s", doing, c->errstr[0] ? c->errstr : "connection lost");
}

/* Connected, or -1 with why (the store is down: the caller's failure mode applies). */
static int rconnect(radmit *r, char *why, size_t n)
{
    if (r->c)
        return 0;
    if (r->retry_at && mono_ns() < r->retry_at) {
        snprintf(why, n, "%s", r->last_why);
        return -1;
    }
    struct timeval tv = { (time_t)(r->timeout_ms / 1000), (suseconds_t)(r->timeout_ms % 1000) * 1000 };
    redisContext *c = redisConnectWithTimeout(r->host, r->port, tv);
    if (!c) {
        snprintf(why, n, "out of memory connecting");
        return -1;
    }
    if (c->err) {
        io_why(r, c, why, n, "connecting");
        redisFree(c);
        drop(r, why);
        return -1;
    }
    if (redisSetTimeout(c, tv) != REDIS_OK) {
        snprintf(why, n, "cannot set the command timeout");
        redisFree(c);
        drop(r, why);
        return -1;
    }
    r->c = c;
    if (r->db) {
        nopipe np;
        nopipe_begin(&np);
        redisReply *rep = redisCommand(c, "SELECT %d", r->db);
        nopipe_end(&np);
        int ok = rep && rep->type == REDIS_REPLY_STATUS;
        if (!rep)
            io_why(r, c, why, n, "selecting the database");
        else if (!ok)
            snprintf(why, n, "SELECT %d: %.200s", r->db, rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
        if (rep)
            freeReplyObject(rep);
        if (!ok) {
            drop(r, why);
            return -1;
        }
    }
    r->retry_at = 0;
    return 0;
}

/* Run script s with the prepared arguments (r->a, from index 3 on: numkeys, keys,
 * argv).  EVALSHA first; on NOSCRIPT, EVAL (which caches it).  The reply, or NULL
 * with why (the connection is dropped: the store counts as down). */
static redisReply *run(radmit *r, const script *s, char *why, size_t n)
{
    if (rconnect(r, why, n) < 0)
        return NULL;
    args *a = r->a;
    if (a->n >= MAX_ARGS) {
        snprintf(why, n, "too many arguments for one admission");
        return NULL;
    }
    a->v[0] = "EVALSHA";
    a->l[0] = 7;
    a->v[1] = s->sha;
    a->l[1] = 40;
    redisReply *rep = NULL;
    nopipe np;
    nopipe_begin(&np);
    for (int attempt = 0; attempt < 2; attempt++) {
        rep = redisCommandArgv(r->c, a->n, a->v, a->l);
        if (!rep || rep->type != REDIS_REPLY_ERROR || strncmp(rep->str, "NOSCRIPT", 8) != 0 || attempt)
            break;
        freeReplyObject(rep);
        a->v[0] = "EVAL";
        a->l[0] = 4;
        a->v[1] = s->text;
        a->l[1] = s->len;
    }
    nopipe_end(&np);
    if (!rep) {
        io_why(r, r->c, why, n, "running the admission script");
        drop(r, why);
        return NULL;
    }
    if (rep->type == REDIS_REPLY_ERROR) {
        snprintf(why, n, "the server answered: %.200s", rep->str);
        freeReplyObject(rep);
        drop(r, why);
        return NULL;
    }
    return rep;
}

/* ---- admission ---------------------------------------------------------------------- */

static int warn_local(radmit *r, const char *why)
{
    if (!r->local) {
        char err[600];
        r->local = sga_file_open(r->state, err, sizeof err);
        if (!r->local) {
            snprintf(r->last_why, sizeof r->last_why, "%.290s", err);
            return -1;
        }
    }
    if (!r->on_local && r->warn) {
        char msg[1200];
        snprintf(msg, sizeof msg, "warning: the rate store %s cannot be used (%s); admitting against the local "
                 "state %s instead: limits hold per host, and approvals granted on other hosts are not seen, "
                 "until it is back", r->url, why, sga_file_path(r->local));
        r->warn(r->warn_ud, msg);
    }
    r->on_local = 1;
    return 0;
}

static void note_back(radmit *r)
{
    if (r->on_local && r->warn) {
        char msg[600];
        snprintf(msg, sizeof msg, "the rate store %s is back: admitting against it again", r->url);
        r->warn(r->warn_ud, msg);
    }
    r->on_local = 0;
}

/* The store is down: refuse, or go local (1: the caller should use r->local). */
static int down(radmit *r, const char *why, char *err, size_t errlen)
{
    if (r->down == SGA_STORE_DOWN_LOCAL && warn_local(r, why) == 0)
        return 1;
    snprintf(err, errlen, "the shared rate store %s cannot be used (%s); it fails closed "
             "(--rate-store-down local would admit against the local state instead)", r->url, why);
    return -1;
}

static uint32_t ring_of(const sga_limit *l, int64_t *ttl_ms)
{
    uint32_t cap = 1, span = 0;
    for (uint32_t w = 0; w < l->nwindows && w < SGT_MAX_WINDOWS; w++) {
        cap = l->count[w] > cap ? l->count[w] : cap;
        span = l->seconds[w] > span ? l->seconds[w] : span;
    }
    *ttl_ms = (int64_t)span * 1000 + 1000;
    return cap > MAX_RING ? MAX_RING : cap;
}

/* The arguments of ADMIT_LUA for q; -1 with err when a name is too long. */
static int admit_args(radmit *r, const sga_req *q, uint32_t nl, char *err, size_t errlen)
{
    args *a = r->a;
    args_reset(a);
    a->n = 2;                            /* EVALSHA sha */
    arg_num(a, 4 + (long long)nl);
    char id[2 * SGA_APPROVAL_LEN + 1];
    hex_id(q->approval, id);
    const char *sess = q->session ? q->session : "";
    const char *agent = q->agent ? q->agent : "default", *pack = q->pack ? q->pack : "";
    const char *team = q->team ? q->team : "default";
    int bad = key(r, "clock", NULL, 0, NULL, 0, NULL, 0) || key(r, "once", id, strlen(id), NULL, 0, NULL, 0)
           || key(r, "session", id, strlen(id), sess, strlen(sess), NULL, 0)
           || key(r, "pending", id, strlen(id), NULL, 0, NULL, 0);
    for (uint32_t i = 0; i < nl && !bad; i++) {
        const char *ln = q->limits[i].name ? q->limits[i].name : "";
        /* a per-team limit: shellgate:team:PACK:LIMIT:TEAM, apart from every agent's */
        bad = q->limits[i].per_team ? key(r, "team", pack, strlen(pack), ln, strlen(ln), team, strlen(team))
                                    : key(r, "limit", pack, strlen(pack), ln, strlen(ln), agent, strlen(agent));
    }
    if (bad) {
        snprintf(err, errlen, "agent id, team, session or limit name too long for a key");
        return -1;
    }
    int64_t t = q->now_ns < 0 ? 0 : q->now_ns;
    arg_num(a, t / 1000000000);
    arg_num(a, t % 1000000000);
    arg_str(a, q->clock_injected ? "1" : "0");
    arg_str(a, q->ask ? "1" : "0");
    arg_num(a, PENDING_TTL_MS);
    if (q->ask) {
        arg_str(a, q->cmd);
        arg_str(a, q->cwd);
        arg_str(a, sess);
        arg(a, q->progs ? q->progs : "", q->progs ? q->progs_len : 0);
        arg_str(a, q->risky ? "1" : "0");
    } else {
        for (int k = 0; k < 5; k++)
            arg_str(a, "");
    }
    arg_num(a, nl);
    for (uint32_t i = 0; i < nl; i++) {
        const sga_limit *l = &q->limits[i];
        int64_t ttl;
        uint32_t nw = l->nwindows < SGT_MAX_WINDOWS ? l->nwindows : SGT_MAX_WINDOWS;
        arg_num(a, ring_of(l, &ttl));
        arg_num(a, ttl);
        arg_num(a, nw);
        for (uint32_t w = 0; w < nw; w++) {
            arg_num(a, l->count[w]);
            arg_num(a, l->seconds[w]);
        }
    }
    return 0;
}

static int reply_int(const redisReply *e, long long *v)
{
    if (e->type == REDIS_REPLY_INTEGER) {
        *v = e->integer;
        return 0;
    }
    return -1;
}

/* Read ADMIT_LUA's reply into res; -1 when it is not what the script returns. */
static int admit_result(const redisReply *rep, const sga_req *q, uint32_t nl, sga_res *res)
{
    long long status, approved;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 || (rep->elements - 3) % 3
        || reply_int(rep->element[0], &status) || reply_int(rep->element[1], &approved)
        || rep->element[2]->type != REDIS_REPLY_STRING || status < 0 || status > 2 || approved < 0 || approved > 2)
        return -1;
    int64_t now = parse_ns(rep->element[2]->str, rep->element[2]->len);
    if (now < 0)
        return -1;
    res->now_ns = now;
    res->approved = (int)approved;
    res->admitted = status == 1;
    for (size_t k = 3; k < rep->elements; k += 3) {
        long long li, wi;
        const redisReply *e = rep->element[k + 2];
        if (reply_int(rep->element[k], &li) || reply_int(rep->element[k + 1], &wi) || e->type != REDIS_REPLY_STRING
            || li < 0 || (uint64_t)li >= nl || wi < 0 || wi >= SGT_MAX_WINDOWS
            || (uint32_t)wi >= q->limits[li].nwindows)
            return -1;
        int64_t span = (int64_t)q->limits[li].seconds[wi] * 1000000000, wait;
        if (e->len == 0) {
            wait = span > 0 ? span : 1;   /* `0 per W` admits nothing */
        } else {
            int64_t ts = parse_ns(e->str, e->len);
            if (ts < 0)
                return -1;
            wait = ts + span - now;
        }
        if (wait > res->wait_ns) {
            res->rate_limited = 1;
            res->wait_ns = wait;
            res->limit = (uint32_t)li;
            res->window = (uint32_t)wi;
        }
    }
    if (status == 2 && !res->rate_limited)
        return -1;
    return 0;
}

static int redis_check(sga_store *ad, const sga_req *q, sga_res *res, char *err, size_t errlen)
{
    radmit *r = (radmit *)ad;
    memset(res, 0, sizeof *res);
    uint32_t nl = q->nlimits < MAX_LIMITS ? q->nlimits : MAX_LIMITS;
    if (admit_args(r, q, nl, err, errlen) < 0)
        return -1;
    char why[400];
    redisReply *rep = run(r, &r->admit, why, sizeof why);
    if (rep) {
        int bad = admit_result(rep, q, nl, res);
        freeReplyObject(rep);
        if (!bad) {
            note_back(r);
            return 0;
        }
        memset(res, 0, sizeof *res);
        snprintf(why, sizeof why, "the admission script returned something unexpected");
    }
    if (down(r, why, err, errlen) == 1)
        return sga_store_check(r->local, q, res, err, errlen);
    return -1;
}

static void copy_field(char *dst, size_t cap, const redisReply *v)
{
    size_t n = v->len < cap - 1 ? v->len : cap - 1;
    memcpy(dst, v->str, n);
    dst[n] = '\0';
}

static int redis_approve(sga_store *ad, const uint8_t id[SGA_APPROVAL_LEN], int scope, const char *session,
                         int64_t now_ns, sga_pending *p, char *err, size_t errlen)
{
    radmit *r = (radmit *)ad;
    char sess[sizeof p->agent];          /* session may point into *p, cleared next */
    snprintf(sess, sizeof sess, "%s", session ? session : "");
    memset(p, 0, sizeof *p);
    args *a = r->a;
    args_reset(a);
    a->n = 2;
    arg_num(a, 2);
    char hid[2 * SGA_APPROVAL_LEN + 1];
    hex_id(id, hid);
    int bad = key(r, "pending", hid, strlen(hid), NULL, 0, NULL, 0);
    if (!bad && scope == SGA_APPROVE_SESSION)
        bad = key(r, "session", hid, strlen(hid), sess, strlen(sess), NULL, 0);
    else if (!bad)
        bad = key(r, "once", hid, strlen(hid), NULL, 0, NULL, 0);
    if (bad) {
        snprintf(err, errlen, "session too long for a key");
        return -1;
    }
    arg_str(a, scope == SGA_APPROVE_ONCE || scope == SGA_APPROVE_SESSION ? "1" : "0");
    arg_num(a, APPROVAL_TTL_MS);
    char why[400];
    redisReply *rep = run(r, &r->approve, why, sizeof why);
    if (!rep) {
        if (down(r, why, err, errlen) == 1)
            return r->local->be->approve(r->local, id, scope, sess, now_ns, p, err, errlen);
        return -1;
    }
    note_back(r);
    int rc = 1;
    if (rep->type == REDIS_REPLY_ARRAY && rep->elements % 2 == 0 && rep->elements) {
        rc = 0;
        for (size_t k = 0; k + 1 < rep->elements; k += 2) {
            const redisReply *f = rep->element[k], *v = rep->element[k + 1];
            if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
                continue;
            if (strcmp(f->str, "cmd") == 0)
                copy_field(p->cmd, sizeof p->cmd, v);
            else if (strcmp(f->str, "cwd") == 0)
                copy_field(p->cwd, sizeof p->cwd, v);
            else if (strcmp(f->str, "session") == 0)
                copy_field(p->agent, sizeof p->agent, v);
            else if (strcmp(f->str, "risky") == 0)
                p->risky = v->len == 1 && v->str[0] == '1';
            else if (strcmp(f->str, "created") == 0)
                p->when_ns = parse_ns(v->str, v->len);
            else if (strcmp(f->str, "progs") == 0) {
                p->progs_len = (uint32_t)(v->len < sizeof p->progs ? v->len : sizeof p->progs);
                memcpy(p->progs, v->str, p->progs_len);
            }
        }
    } else if (rep->type != REDIS_REPLY_ARRAY) {
        snprintf(err, errlen, "the approval script returned something unexpected");
        rc = -1;
    }
    freeReplyObject(rep);
    return rc;
}

/* Forget every key of the prefix but the clock (so a reset cannot combine with a
 * clock stepped back).  Not one transaction: admissions racing a reset may keep a
 * slot they took while it ran.  Never falls back: the operator means the shared
 * store. */
static int redis_reset(sga_store *ad, char *err, size_t errlen)
{
    radmit *r = (radmit *)ad;
    char why[400], pat[128], clock[128];
    snprintf(pat, sizeof pat, "%s:*", r->prefix);
    snprintf(clock, sizeof clock, "%s:clock", r->prefix);
    if (rconnect(r, why, sizeof why) < 0) {
        snprintf(err, errlen, "the shared rate store %s cannot be used (%s): nothing was reset", r->url, why);
        return -1;
    }
    char cursor[32] = "0";
    nopipe np;
    nopipe_begin(&np);
    int rc = 0;
    do {
        redisReply *rep = redisCommand(r->c, "SCAN %s MATCH %s COUNT 1000", cursor, pat);
        if (!rep || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2
            || rep->element[0]->type != REDIS_REPLY_STRING || rep->element[1]->type != REDIS_REPLY_ARRAY) {
            if (!rep)
                io_why(r, r->c, why, sizeof why, "scanning the keys");
            else
                snprintf(why, sizeof why, "SCAN: %.200s", rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply");
            if (rep)
                freeReplyObject(rep);
            rc = -1;
            break;
        }
        snprintf(cursor, sizeof cursor, "%.30s", rep->element[0]->str);
        const redisReply *ks = rep->element[1];
        for (size_t k = 0; k < ks->elements && rc == 0; k++) {
            const redisReply *kk = ks->element[k];
            if (kk->type != REDIS_REPLY_STRING || strcmp(kk->str, clock) == 0)
                continue;
            const char *v[2] = { "DEL", kk->str };
            size_t l[2] = { 3, kk->len };
            redisReply *d = redisCommandArgv(r->c, 2, v, l);
            if (!d) {
                io_why(r, r->c, why, sizeof why, "deleting keys");
                rc = -1;
            } else {
                freeReplyObject(d);
            }
        }
        freeReplyObject(rep);
    } while (rc == 0 && strcmp(cursor, "0") != 0);
    nopipe_end(&np);
    if (rc < 0) {
        drop(r, why);
        snprintf(err, errlen, "resetting the shared rate store %s failed (%s)", r->url, why);
    }
    return rc;
}

static void redis_close(sga_store *ad)
{
    radmit *r = (radmit *)ad;
    if (r->c)
        redisFree(r->c);
    sga_store_close(r->local);
    sg_free(r->url);
    sg_free(r->host);
    sg_free(r->prefix);
    sg_free(r->state);
    sg_free(r->a);
    sg_free(r);
}

static const sga_backend redis_backend = {
    "redis", redis_check, redis_approve, redis_reset, redis_close, NULL, NULL,
};

/* ---- opening ------------------------------------------------------------------------ */

/* redis://HOST[:PORT][/DB], HOST a name, an IPv4 address or [IPv6]. */
static int parse_url(const char *url, char *host, size_t hn, int *port, int *db, char *err, size_t errlen)
{
    const char *p = url + 8, *h = p;
    size_t len;
    if (*p == '[') {
        const char *e = strchr(p, ']');
        if (!e)
            goto bad;
        h = p + 1;
        len = (size_t)(e - h);
        p = e + 1;
        for (size_t i = 0; i < len; i++)
            if (!strchr("0123456789abcdefABCDEF:.", h[i]))
                goto bad;
    } else {
        while (*p && *p != ':' && *p != '/')
            p++;
        len = (size_t)(p - h);
        for (size_t i = 0; i < len; i++) {
            char c = h[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-'
                  || c == '_'))
                goto bad;
        }
    }
    if (len == 0 || len >= hn)
        goto bad;
    memcpy(host, h, len);
    host[len] = '\0';
    *port = 6379;
    *db = 0;
    if (*p == ':') {
        long v = 0;
        int nd = 0;
        for (p++; *p >= '0' && *p <= '9' && nd < 6; p++, nd++)
            v = v * 10 + (*p - '0');
        if (nd == 0 || v < 1 || v > 65535)
            goto bad;
        *port = (int)v;
    }
    if (*p == '/') {
        long v = 0;
        int nd = 0;
        for (p++; *p >= '0' && *p <= '9' && nd < 6; p++, nd++)
            v = v * 10 + (*p - '0');
        if (nd == 0 || v > 65535)
            goto bad;
        *db = (int)v;
    }
    if (*p == '\0')
        return 0;
bad:
    snprintf(err, errlen, "rate store '%.200s': expected redis://HOST[:PORT][/DB] (no user, password or query)", url);
    return -1;
}

sga_store *sga_redis_open(const sga_store_opts *o, char *err, size_t errlen)
{
    char host[256];
    int port, db;
    if (!o->url || strncmp(o->url, "redis://", 8) != 0) {
        snprintf(err, errlen, "not a redis:// URL");
        return NULL;
    }
    if (parse_url(o->url, host, sizeof host, &port, &db, err, errlen) < 0)
        return NULL;
    const char *prefix = o->prefix ? o->prefix : "shellgate";
    size_t pl = strlen(prefix);
    for (size_t i = 0; i < pl; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", prefix[i]))
            pl = 0;
    if (pl == 0 || pl > 64) {
        snprintf(err, errlen, "Redis key prefix must be 1 to 64 of [A-Za-z0-9_.-]");
        return NULL;
    }
    if (o->down != SGA_STORE_DOWN_DENY && o->down != SGA_STORE_DOWN_LOCAL) {
        snprintf(err, errlen, "unknown failure mode %d", o->down);
        return NULL;
    }
    radmit *r = sg_calloc(1, sizeof *r);
    char canon[400];
    snprintf(canon, sizeof canon, strchr(host, ':') ? "redis://[%s]:%d/%d" : "redis://%s:%d/%d", host, port, db);
    if (!r || !(r->url = dup0(canon)) || !(r->host = dup0(host)) || !(r->prefix = dup0(prefix))
        || (o->state && !(r->state = dup0(o->state))) || !(r->a = sg_malloc(sizeof *r->a))) {
        if (r)
            redis_close(&r->base);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->base.be = &redis_backend;
    r->port = port;
    r->db = db;
    r->down = o->down;
    r->timeout_ms = o->timeout_ms ? o->timeout_ms : SGA_STORE_TIMEOUT_MS;
    r->warn = o->warn;
    r->warn_ud = o->warn_ud;
    r->admit.text = ADMIT_LUA;
    r->admit.len = sizeof ADMIT_LUA - 1;
    sha1_hex(ADMIT_LUA, r->admit.len, r->admit.sha);
    r->approve.text = APPROVE_LUA;
    r->approve.len = sizeof APPROVE_LUA - 1;
    sha1_hex(APPROVE_LUA, r->approve.len, r->approve.sha);
    return &r->base;
}

const char *sga_redis_url(const sga_store *a)
{
    return a && a->be == &redis_backend ? ((const radmit *)a)->url : NULL;
}
