/* declog.c - the decision log (declog.h): masking, JSON lines, atomic appends
 * with rotation. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "admit/declog.h"
#include "common/alloc.h"

/* ---- masking -------------------------------------------------------------------- */

typedef struct ob {
    char *p;
    size_t n, cap;
    int full;
} ob;

static void emit(ob *o, const char *s, size_t n)
{
    if (o->n + n + 1 > o->cap) {
        o->full = 1;
        n = o->cap > o->n + 1 ? o->cap - o->n - 1 : 0;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = '\0';
}

#define STARS "***"

static int lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static int is_ident(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static int is_alnum(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int ci_has(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++) {
        size_t k = 0;
        while (k < m && lower((unsigned char)s[i + k]) == needle[k])
            k++;
        if (k == m)
            return 1;
    }
    return 0;
}

static int ci_eq(const char *s, size_t n, const char *w)
{
    size_t m = strlen(w);
    if (n != m)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s[i]) != w[i])
            return 0;
    return 1;
}

/* NAME in NAME=value (or --name=value) that names a secret */
static int secret_name(const char *s, size_t n)
{
    while (n && *s == '-')
        s++, n--;
    if (!n)
        return 0;
    if (ci_has(s, n, "token") || ci_has(s, n, "passw") || ci_has(s, n, "secret") || ci_has(s, n, "credential")
        || ci_has(s, n, "apikey") || ci_has(s, n, "api_key") || ci_has(s, n, "api-key") || ci_has(s, n, "private")
        || ci_has(s, n, "cookie") || ci_eq(s, n, "pass") || ci_eq(s, n, "pw"))
        return 1;
    if (ci_has(s, n, "auth") && !ci_has(s, n, "author"))
        return 1;
    return n >= 3 && lower((unsigned char)s[n - 3]) == 'k' && lower((unsigned char)s[n - 2]) == 'e'
        && lower((unsigned char)s[n - 1]) == 'y';
}

/* End of a value starting at i: a quoted run, or up to whitespace/quote/operator. */
static size_t value_end(const char *s, size_t i, size_t n, size_t *qopen)
{
    *qopen = 0;
    if (i < n && (s[i] == '"' || s[i] == '\'')) {
        char q = s[i];
        size_t j = i + 1;
        while (j < n && s[j] != q)
            j++;
        *qopen = 1;
        return j;                              /* at the closing quote (or n) */
    }
    size_t j = i;
    while (j < n && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '"' && s[j] != '\'' && s[j] != ';'
           && s[j] != '&' && s[j] != '|' && s[j] != ')')
        j++;
    return j;
}

typedef struct keyfmt {
    const char *prefix;
    int min, max;                              /* length of the rest */
    const char *alphabet;                      /* "U": [A-Z0-9], "A": [A-Za-z0-9], "W": + _ -, "P": + _ */
} keyfmt;

static const keyfmt keys[] = {
    { "AKIA", 16, 16, "U" }, { "ASIA", 16, 16, "U" }, { "AGPA", 16, 16, "U" }, { "AIDA", 16, 16, "U" },
    { "AROA", 16, 16, "U" }, { "ANPA", 16, 16, "U" },
    { "ghp_", 20, 255, "A" }, { "gho_", 20, 255, "A" }, { "ghu_", 20, 255, "A" }, { "ghs_", 20, 255, "A" },
    { "ghr_", 20, 255, "A" }, { "github_pat_", 20, 255, "P" },
    { "sk-", 16, 255, "W" }, { "xoxb-", 10, 255, "W" }, { "xoxp-", 10, 255, "W" }, { "xoxa-", 10, 255, "W" },
    { "xoxr-", 10, 255, "W" }, { "xoxs-", 10, 255, "W" }, { "glpat-", 20, 255, "W" }, { "AIza", 35, 35, "W" },
};

static int in_alpha(int c, char a)
{
    if (a == 'U')
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (a == 'A')
        return is_alnum(c);
    if (a == 'P')
        return is_alnum(c) || c == '_';
    return is_alnum(c) || c == '_' || c == '-';
}

/* A known key format at s[i]: its whole length, prefix length in *pl; else 0. */
static size_t key_at(const char *s, size_t i, size_t n, size_t *pl)
{
    if (i > 0 && is_alnum((unsigned char)s[i - 1]))
        return 0;
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        size_t m = strlen(keys[k].prefix);
        if (n - i < m || memcmp(s + i, keys[k].prefix, m) != 0)
            continue;
        size_t j = i + m;
        while (j < n && (int)(j - i - m) < keys[k].max && in_alpha((unsigned char)s[j], keys[k].alphabet[0]))
            j++;
        if ((int)(j - i - m) >= keys[k].min && !(j < n && is_alnum((unsigned char)s[j]))) {
            *pl = m;
            return j - i;
        }
    }
    return 0;
}

static const char *const headers[] = {
    "authorization:", "proxy-authorization:", "cookie:", "set-cookie:", "x-api-key:", "x-auth-token:",
    "api-key:", "private-token:", "x-amz-security-token:",
};
static const char *const schemes[] = { "bearer", "basic", "token", "digest", "negotiate", "ntlm", "bot" };

/* Mask secrets inside one piece of text.  Returns 1 when the text ends with a
 * credential header whose value must be the next word. */
static int mask_text(ob *o, const char *s, size_t n)
{
    int want_next = 0;
    size_t i = 0;
    while (i < n) {
        int boundary = i == 0 || !is_ident((unsigned char)s[i - 1]);
        /* PEM private key blocks */
        if (s[i] == '-' && n - i >= 10 && memcmp(s + i, "-----BEGIN", 10) == 0) {
            const char *e = NULL;
            for (size_t j = i + 10; j + 5 <= n && !e; j++)
                if (memcmp(s + j, "-----", 5) == 0)
                    e = s + j;
            if (e && ci_has(s + i, (size_t)(e - s - i), "private key")) {
                /* through the END line's closing dashes, or to the end of the text */
                size_t end = n;
                for (size_t j = (size_t)(e - s) + 5; j + 8 <= n; j++)
                    if (memcmp(s + j, "-----END", 8) == 0) {
                        for (size_t x = j + 8; x + 5 <= n; x++)
                            if (memcmp(s + x, "-----", 5) == 0) {
                                end = x + 5;
                                break;
                            }
                        break;
                    }
                emit(o, "-----BEGIN PRIVATE KEY-----" STARS, 30);
                i = end;
                continue;
            }
        }
        size_t pl, kl = key_at(s, i, n, &pl);
        if (kl) {
            emit(o, s + i, pl);
            emit(o, STARS, 3);
            i += kl;
            continue;
        }
        if (boundary) {
            size_t h = 0;
            for (size_t k = 0; k < sizeof headers / sizeof *headers && !h; k++) {
                size_t m = strlen(headers[k]);
                if (n - i >= m && ci_eq(s + i, m, headers[k]))
                    h = m;
            }
            if (h) {
                size_t j = i + h;
                while (j < n && s[j] == ' ')
                    j++;
                size_t w = j;
                while (w < n && is_alnum((unsigned char)s[w]))
                    w++;
                for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++)
                    if (w < n && s[w] == ' ' && ci_eq(s + j, w - j, schemes[k])) {
                        j = w;
                        while (j < n && s[j] == ' ')
                            j++;
                        break;
                    }
                size_t end = j;
                while (end < n && s[end] != '"' && s[end] != '\'' && s[end] != '\n')
                    end++;
                emit(o, s + i, j - i);
                if (end > j)
                    emit(o, STARS, 3);
                else
                    want_next = 1;
                i = end;
                continue;
            }
            /* NAME=value, --name=value */
            size_t j = i;
            while (j < n && is_ident((unsigned char)s[j]))
                j++;
            if (j > i && j < n && s[j] == '=' && secret_name(s + i, j - i)) {
                size_t q, e = value_end(s, j + 1, n, &q);
                emit(o, s + i, j + 1 - i + q);
                emit(o, STARS, 3);
                i = e;
                continue;
            }
        }
        /* scheme://user:password@host */
        if (s[i] == ':' && n - i > 3 && s[i + 1] == '/' && s[i + 2] == '/') {
            size_t j = i + 3, colon = 0;
            while (j < n && s[j] != '@' && s[j] != '/' && s[j] != ' ' && s[j] != '"' && s[j] != '\'') {
                if (s[j] == ':' && !colon)
                    colon = j;
                j++;
            }
            if (j < n && s[j] == '@' && colon) {
                emit(o, s + i, colon + 1 - i);
                emit(o, STARS, 3);
                i = j;
                continue;
            }
        }
        emit(o, s + i, 1);
        i++;
    }
    return want_next;
}

static const char *const secret_opts[] = {
    "--password", "--passwd", "--pass", "--token", "--api-key", "--apikey", "--secret", "--client-secret",
    "--access-token", "--auth-token", "--private-key", "--secret-key", "--access-key", "--pw",
};
/* programs whose -p (and -pVALUE) is a password, not a port or a flag */
static const char *const pw_progs[] = {
    "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mariadb", "mariadb-dump",
    "mariadb-admin", "sshpass", "mongo", "mongosh", "mongodump", "mongorestore", "smbclient", "htpasswd",
};

static int word_in(const char *w, size_t n, const char *const *v, size_t nv)
{
    for (size_t i = 0; i < nv; i++)
        if (strlen(v[i]) == n && memcmp(v[i], w, n) == 0)
            return 1;
    return 0;
}

typedef struct mstate {
    int cmd_start, mask_next, pw_prog;
} mstate;

/* Mask one word w (raw: quotes still in it) in context. */
static void mask_word(ob *o, mstate *m, const char *w, size_t n, int raw)
{
    const char *u = w;
    size_t un = n;
    if (raw && n >= 2 && (w[0] == '"' || w[0] == '\'') && w[n - 1] == w[0]) {
        u = w + 1;
        un = n - 2;
    }
    if (m->mask_next == 2) {
        /* after a bare "Authorization:" word: keep a scheme word, mask what follows */
        m->mask_next = 0;
        for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++)
            if (ci_eq(u, un, schemes[k])) {
                emit(o, w, n);
                m->mask_next = 1;
                return;
            }
        m->mask_next = 1;
    }
    if (m->mask_next) {
        m->mask_next = 0;
        if (u != w)
            emit(o, w, 1);
        emit(o, STARS, 3);
        if (u != w)
            emit(o, w, 1);
        return;
    }
    if (m->cmd_start) {
        const char *eq = memchr(u, '=', un);
        int assign = eq && eq > u;
        for (const char *p = u; assign && p < eq; p++)
            assign = is_ident((unsigned char)*p) && *p != '-';
        if (!assign) {
            m->cmd_start = 0;
            const char *b = u;
            for (size_t i = 0; i < un; i++)
                if (u[i] == '/')
                    b = u + i + 1;
            m->pw_prog = word_in(b, un - (size_t)(b - u), pw_progs, sizeof pw_progs / sizeof *pw_progs);
        }
    }
    if (word_in(u, un, secret_opts, sizeof secret_opts / sizeof *secret_opts)
        || (m->pw_prog && un == 2 && memcmp(u, "-p", 2) == 0)) {
        emit(o, w, n);
        m->mask_next = 1;
        return;
    }
    if (m->pw_prog && un > 2 && u[0] == '-' && u[1] == 'p' && u[2] != '-') {
        emit(o, w, (size_t)(u - w) + 2);
        emit(o, STARS, 3);
        if (u != w)
            emit(o, w, 1);
        return;
    }
    if (mask_text(o, w, n))
        m->mask_next = 2;
}

size_t sga_mask_line(const char *in, size_t n, char *out, size_t cap)
{
    ob o = { out, 0, cap, 0 };
    if (cap == 0)
        return 0;
    out[0] = '\0';
    mstate m = { 1, 0, 0 };
    size_t i = 0;
    while (i < n) {
        char c = in[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            if (c == '\n')
                m.cmd_start = 1;
            emit(&o, in + i, 1);
            i++;
            continue;
        }
        if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
            emit(&o, in + i, 1);
            m.cmd_start = 1;
            m.mask_next = 0;
            i++;
            continue;
        }
        size_t j = i;
        char q = 0;
        while (j < n) {
            char d = in[j];
            if (q) {
                if (d == '\\' && q == '"' && j + 1 < n)
                    j++;
                else if (d == q)
                    q = 0;
            } else if (d == '\\' && j + 1 < n) {
                j++;
            } else if (d == '"' || d == '\'') {
                q = d;
            } else if (d == ' ' || d == '\t' || d == '\n' || d == ';' || d == '&' || d == '|' || d == '(' || d == ')') {
                break;
            }
            j++;
        }
        mask_word(&o, &m, in + i, j - i, 1);
        i = j;
    }
    return o.n;
}

int sga_mask_argv(const sgr_word *argv, uint32_t argc, char *buf, size_t cap, const char **out)
{
    mstate m = { 1, 0, 0 };
    size_t at = 0;
    for (uint32_t i = 0; i < argc; i++) {
        if (at >= cap)
            return -1;
        ob o = { buf + at, 0, cap - at, 0 };
        o.p[0] = '\0';
        mask_word(&o, &m, argv[i].text, argv[i].len, 0);
        if (o.full)
            return -1;
        out[i] = o.p;
        at += o.n + 1;
    }
    return 0;
}

/* ---- JSON lines ------------------------------------------------------------------- */

typedef struct jb {
    char *p;
    size_t n, cap;
    int oom;
} jb;

static void jput(jb *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (nc < b->n + n + 1)
            nc *= 2;
        char *np = sg_realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void jlit(jb *b, const char *s)
{
    jput(b, s, strlen(s));
}

static void jstr(jb *b, const char *s, size_t n)
{
    jput(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char hex[8];
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\t')
            esc = "\\t";
        else if (c == '\r')
            esc = "\\r";
        else if (c < 0x20 || c == 0x7f) {
            snprintf(hex, sizeof hex, "\\u%04x", c);
            esc = hex;
        }
        if (esc) {
            jput(b, s + i - run, run);
            run = 0;
            jlit(b, esc);
        } else {
            run++;
        }
    }
    jput(b, s + n - run, run);
    jput(b, "\"", 1);
}

static void jkey(jb *b, const char *k)
{
    if (b->n > 1)
        jput(b, ",\"", 2);
    else
        jput(b, "\"", 1);
    jlit(b, k);
    jlit(b, "\":");
}

static void jmasked(jb *b, const char *s, size_t n)
{
    size_t cap = 3 * n + 16;
    char *m = sg_malloc(cap);
    if (!m) {
        b->oom = 1;
        return;
    }
    size_t k = sga_mask_line(s, n, m, cap);
    jstr(b, m, k);
    sg_free(m);
}

int sga_declog_format(const sga_declog_entry *e, char **line, size_t *len)
{
    jb b = { NULL, 0, 0, 0 };
    char tmp[128];
    jlit(&b, "{");
    uint8_t rnd[8] = { 0 };
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        uint64_t x = (uint64_t)e->now_ns ^ ((uint64_t)getpid() << 40);
        memcpy(rnd, &x, 8);
    }
    int k = 0;
    for (int i = 0; i < 8; i++)
        k += snprintf(tmp + k, sizeof tmp - (size_t)k, "%02x", rnd[i]);
    jkey(&b, "id");
    jstr(&b, tmp, (size_t)k);
    time_t secs = (time_t)(e->now_ns / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    k = (int)strftime(tmp, sizeof tmp, "%Y-%m-%dT%H:%M:%S", &tm);
    k += snprintf(tmp + k, sizeof tmp - (size_t)k, ".%06ldZ", (long)(e->now_ns % 1000000000 / 1000));
    jkey(&b, "time");
    jstr(&b, tmp, (size_t)k);
    jkey(&b, "agent");
    const char *agent = e->agent ? e->agent : "default";
    jstr(&b, agent, strlen(agent));
    if (e->team) {
        jkey(&b, "team");
        jstr(&b, e->team, strlen(e->team));
    }
    if (e->t) {
        const char *pn = sgr_str(e->t, e->t->meta->pack_name);
        jkey(&b, "pack");
        jstr(&b, pn, strlen(pn));
        jkey(&b, "pack_version");
        snprintf(tmp, sizeof tmp, "%u", e->t->meta->pack_version);
        jlit(&b, tmp);
        k = 0;
        for (int i = 0; i < 32; i++)
            k += snprintf(tmp + k, sizeof tmp - (size_t)k, "%02x", e->t->hdr->source_sha256[i]);
        jkey(&b, "table_sha256");
        jstr(&b, tmp, (size_t)k);
    }
    if (e->cwd) {
        jkey(&b, "cwd");
        jstr(&b, e->cwd, strlen(e->cwd));
    }
    jkey(&b, "command");
    jmasked(&b, e->cmd ? e->cmd : "", e->cmd ? e->cmdlen : 0);
    jkey(&b, "decision");
    jlit(&b, "\"");
    jlit(&b, sgr_decision_name(e->decision));
    jlit(&b, "\"");
    jkey(&b, "rule");
    jstr(&b, e->rule_id ? e->rule_id : "", e->rule_id ? strlen(e->rule_id) : 0);
    jkey(&b, "message");
    jmasked(&b, e->message ? e->message : "", e->message ? strlen(e->message) : 0);
    const sgr_result *r = e->r;
    jkey(&b, "segments");
    jlit(&b, "[");
    for (uint32_t i = 0; r && r->seg_decision && i < r->cl.nseg; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        jlit(&b, i ? ",{\"argv\":[" : "{\"argv\":[");
        size_t total = 0;
        for (uint32_t a = 0; a < s->argc; a++)
            total += s->argv[a].len;
        size_t cap = 3 * total + 16 * (size_t)s->argc + 16;
        char *buf = sg_malloc(cap);
        const char **mv = sg_malloc(sizeof *mv * (s->argc ? s->argc : 1));
        if (!buf || !mv || sga_mask_argv(s->argv, s->argc, buf, cap, mv) < 0) {
            sg_free(buf);
            sg_free(mv);
            b.oom = 1;
            break;
        }
        for (uint32_t a = 0; a < s->argc; a++) {
            if (a)
                jlit(&b, ",");
            jstr(&b, mv[a], strlen(mv[a]));
        }
        sg_free(buf);
        sg_free(mv);
        jlit(&b, "],\"decision\":\"");
        jlit(&b, sgr_decision_name(r->seg_decision[i]));
        jlit(&b, "\",\"rule\":");
        const char *rn = e->t ? sgr_rule_name(e->t, r->seg_rule[i]) : "";
        jstr(&b, rn, strlen(rn));
        jlit(&b, "}");
    }
    jlit(&b, "]");
    jkey(&b, "admission");
    jlit(&b, e->admission < 0 ? "\"none\"" : e->admission ? "\"admitted\"" : "\"refused\"");
    jkey(&b, "rate_limited");
    jlit(&b, e->rate_limited ? "true" : "false");
    jkey(&b, "wait_time_seconds");
    snprintf(tmp, sizeof tmp, "%.3f", e->wait_s);
    jlit(&b, e->wait_s > 0 ? tmp : "0");
    if (e->approval_id) {
        jkey(&b, "approval_id");
        jstr(&b, e->approval_id, strlen(e->approval_id));
    }
    if (e->approved) {
        jkey(&b, "approved");
        jstr(&b, e->approved, strlen(e->approved));
    }
    if (e->error) {
        jkey(&b, "error");
        jstr(&b, e->error, strlen(e->error));
    }
    jlit(&b, "}\n");
    if (b.oom) {
        sg_free(b.p);
        return -1;
    }
    *line = b.p;
    *len = b.n;
    return 0;
}

/* ---- appending ---------------------------------------------------------------------- */

struct sga_declog {
    char *path, *rot;
    uint64_t max;
    int fd;
};

static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

sga_declog *sga_declog_open(const char *path, uint64_t max_bytes, char *err, size_t errlen)
{
    sga_declog *l = sg_calloc(1, sizeof *l);
    size_t n = strlen(path);
    if (!l || !(l->path = sg_strndup(path, n)) || !(l->rot = sg_malloc(n + 3))) {
        if (l) {
            sg_free(l->path);
            sg_free(l);
        }
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(l->rot, path, n);
    memcpy(l->rot + n, ".1", 3);
    l->max = max_bytes;
    l->fd = open_log(path);
    if (l->fd < 0) {
        snprintf(err, errlen, "decision log %s: %s", path, strerror(errno));
        sga_declog_close(l);
        return NULL;
    }
    return l;
}

void sga_declog_close(sga_declog *l)
{
    if (!l)
        return;
    if (l->fd >= 0)
        close(l->fd);
    sg_free(l->path);
    sg_free(l->rot);
    sg_free(l);
}

/* Lock the file that is at path now (reopening when another writer rotated it). */
static int lock_current(sga_declog *l, struct stat *st)
{
    for (int tries = 0; tries < 8; tries++) {
        while (flock(l->fd, LOCK_EX) != 0)
            if (errno != EINTR)
                return -1;
        struct stat at;
        if (fstat(l->fd, st) != 0)
            return -1;
        if (!S_ISREG(st->st_mode))
            return 0;                          /* a device or a pipe: nothing to rotate */
        if (stat(l->path, &at) == 0 && at.st_ino == st->st_ino && at.st_dev == st->st_dev)
            return 0;
        flock(l->fd, LOCK_UN);
        close(l->fd);
        if ((l->fd = open_log(l->path)) < 0)
            return -1;
    }
    return -1;
}

int sga_declog_append(sga_declog *l, const char *line, size_t len, char *err, size_t errlen)
{
    struct stat st;
    if (lock_current(l, &st) < 0) {
        snprintf(err, errlen, "decision log %s: %s", l->path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode) && l->max && st.st_size > 0 && (uint64_t)st.st_size + len > l->max) {
        /* rotate: FILE -> FILE.1; we hold the lock on the old inode, and any writer
         * that locks it after us sees it is no longer FILE and reopens */
        int nfd;
        if (rename(l->path, l->rot) != 0 || (nfd = open_log(l->path)) < 0) {
            snprintf(err, errlen, "decision log %s: cannot rotate: %s", l->path, strerror(errno));
            flock(l->fd, LOCK_UN);
            return -1;
        }
        flock(l->fd, LOCK_UN);
        close(l->fd);
        l->fd = nfd;
        while (flock(l->fd, LOCK_EX) != 0)
            if (errno != EINTR)
                break;
    }
    ssize_t w;
    do
        w = write(l->fd, line, len);
    while (w < 0 && errno == EINTR);
    int e = errno;
    if (w >= 0 && (size_t)w < len && S_ISREG(st.st_mode)) {
        /* a short write (disk filled mid-line): cut the partial line off so the
         * log stays one valid object a line */
        struct stat now;
        if (fstat(l->fd, &now) == 0 && now.st_size >= w)
            (void)!ftruncate(l->fd, now.st_size - w);
        e = ENOSPC;
    }
    flock(l->fd, LOCK_UN);
    if (w < 0 || (size_t)w < len) {
        snprintf(err, errlen, "decision log %s: cannot write: %s", l->path, strerror(e));
        return -1;
    }
    return 0;
}
