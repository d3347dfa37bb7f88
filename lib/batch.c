/* batch.c - the JSON face of check --batch and check --json (batch.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include "batch.h"
#include "common/alloc.h"
#include "common/jsontext.h"
#include "common/utf8.h"

/* ---- reading a request ---------------------------------------------------- */

/* What a JSON escape \c decodes to, for the escapes the fast path takes (cJSON's
 * set less \u); 0: leave the line to cJSON. */
static char unescape(char c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '/': return '/';
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    default: return 0;
    }
}

/* cJSON's whitespace: every byte up to the space, but NUL (which the fast path
 * leaves to the slow one, so every byte of a line it takes is known not NUL) */
static size_t skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && (unsigned char)s[i] <= ' ' && s[i])
        i++;
    return i;
}

/* The string that starts at s[*i] == '"': its content is s[a..b), *esc when it
 * holds an escape, *i moved past the closing quote.  -1: not one the fast path
 * takes (unterminated, a NUL, \u, or an escape cJSON refuses). */
static int scan_string(const char *s, size_t n, size_t *i, size_t *a, size_t *b, int *esc)
{
    size_t j = *i + 1;
    *a = j;
    *esc = 0;
    while (j < n) {
        uint64_t w;
        if (j + 8 <= n) {                   /* a word of none of '"', '\\', NUL */
            const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
            memcpy(&w, s + j, 8);
            uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
            if (!((((q - ones) & ~q) | ((bs - ones) & ~bs) | ((w - ones) & ~w)) & high)) {
                j += 8;
                continue;
            }
        }
        char c = s[j];
        if (c == '"') {
            *b = j;
            *i = j + 1;
            return 0;
        }
        if (c == '\\') {
            if (j + 1 >= n || !unescape(s[j + 1]))
                return -1;
            *esc = 1;
            j += 2;
        } else if (c) {
            j++;
        } else {
            return -1;
        }
    }
    return -1;
}

/* s[a..b) decoded in place and NUL-terminated (at most at b, the closing quote);
 * its decoded length */
static size_t decode_in_place(char *s, size_t a, size_t b, int esc)
{
    if (!esc) {
        s[b] = '\0';
        return b - a;
    }
    size_t w = a;
    for (size_t r = a; r < b; w++) {
        if (s[r] == '\\') {
            s[w] = unescape(s[r + 1]);
            r += 2;
        } else {
            s[w] = s[r++];
        }
    }
    s[w] = '\0';
    return w - a;
}

/* The common shape, without a tree: an object of a "cmd" string and at most one
 * "cwd" string that starts with '/', keys in any order, cJSON's whitespace
 * anywhere between tokens and after the object, no \u escape.  Anything else
 * (other keys, duplicates, a BOM, other values, trailing text) returns -1 with the
 * line untouched, for cJSON to read or to word the error. */
static int parse_fast(char *s, size_t n, sg_batch_req *req)
{
    size_t ka, kb, va[2] = { 0, 0 }, vb[2] = { 0, 0 };
    int kesc, vesc[2] = { 0, 0 }, seen[2] = { 0, 0 };
    size_t i = skip_ws(s, 0, n);
    if (i >= n || s[i] != '{')
        return -1;
    i = skip_ws(s, i + 1, n);
    for (;;) {
        if (i >= n || s[i] != '"' || scan_string(s, n, &i, &ka, &kb, &kesc) < 0 || kesc || kb - ka != 3
            || s[ka] != 'c')
            return -1;
        int k = s[ka + 1] == 'm' && s[ka + 2] == 'd' ? 0 : s[ka + 1] == 'w' && s[ka + 2] == 'd' ? 1 : -1;
        if (k < 0 || seen[k])
            return -1;
        seen[k] = 1;
        i = skip_ws(s, i, n);
        if (i >= n || s[i] != ':')
            return -1;
        i = skip_ws(s, i + 1, n);
        if (i >= n || s[i] != '"' || scan_string(s, n, &i, &va[k], &vb[k], &vesc[k]) < 0)
            return -1;
        i = skip_ws(s, i, n);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, i + 1, n);
            continue;
        }
        if (i < n && s[i] == '}')
            break;
        return -1;
    }
    if (skip_ws(s, i + 1, n) != n || !seen[0])
        return -1;
    if (seen[1]) {                          /* the first byte the value decodes to */
        char first = va[1] == vb[1] ? 0 : s[va[1]] == '\\' ? unescape(s[va[1] + 1]) : s[va[1]];
        if (first != '/')
            return -1;
    }
    /* accepted: from here on the line is rewritten */
    req->cmd_len = decode_in_place(s, va[0], vb[0], vesc[0]);
    req->cmd = s + va[0];
    if (seen[1]) {
        decode_in_place(s, va[1], vb[1], vesc[1]);
        req->cwd = s + va[1];
    }
    req->fast = 1;
    return 0;
}

/* The fast path first: it takes no line with a NUL byte or a \u escape, so none
 * that sg_json_has_nul would refuse (it sees every byte of the lines it takes). */
const char *sg_batch_parse(char *line, size_t n, sg_batch_req *req)
{
    req->json = NULL;                       /* the rest is filled by either path */
    req->cwd = NULL;
    req->nroots = 0;
    req->fast = 0;
    if (!sg_utf8_valid(line, n))
        return "the input line is not UTF-8, as JSON text is: the command cannot be checked as sent";
    if (parse_fast(line, n, req) == 0)
        return NULL;
    return sg_batch_parse_cjson(line, n, req);
}

/* cJSON's parser records every parse's error position in one global: threads
 * that answer batch lines (sg_batch_run) take turns at it.  The common lines never
 * come here. */
static pthread_mutex_t cjson_parse_mu = PTHREAD_MUTEX_INITIALIZER;

const char *sg_batch_parse_cjson(const char *line, size_t n, sg_batch_req *req)
{
    memset(req, 0, sizeof *req);
    /* UTF-8 first, as sg_batch_parse tests it before its fast path: one answer */
    if (!sg_utf8_valid(line, n))
        return "the input line is not UTF-8, as JSON text is: the command cannot be checked as sent";
    if (sg_json_has_nul(line, n))
        return "a NUL character in the input line: the command cannot be checked as sent";
    pthread_mutex_lock(&cjson_parse_mu);
    cJSON *in = cJSON_ParseWithLength(line, n);
    pthread_mutex_unlock(&cjson_parse_mu);
    const cJSON *cmd = in ? cJSON_GetObjectItemCaseSensitive(in, "cmd") : NULL;
    const cJSON *cwd = in ? cJSON_GetObjectItemCaseSensitive(in, "cwd") : NULL;
    const cJSON *roots = in ? cJSON_GetObjectItemCaseSensitive(in, "roots") : NULL;
    const char *err = NULL;
    if (!in || !cJSON_IsObject(in))
        err = "input line is not a JSON object";
    else if (!cJSON_IsString(cmd))
        err = "\"cmd\" must be a string";
    else if (cwd && !(cJSON_IsString(cwd) && cwd->valuestring[0] == '/'))
        err = "\"cwd\" must be an absolute path";
    else if (roots && !cJSON_IsArray(roots))
        err = "\"roots\" must be a list of absolute paths";
    if (!err && roots) {
        const cJSON *it;
        cJSON_ArrayForEach(it, roots) {
            if (!cJSON_IsString(it) || it->valuestring[0] != '/' || req->nroots == SG_BATCH_MAX_ROOTS) {
                err = "\"roots\" must be a list of at most 64 absolute paths";
                break;
            }
            req->roots[req->nroots++] = it->valuestring;
        }
    }
    if (err) {
        cJSON_Delete(in);
        memset(req, 0, sizeof *req);
        return err;
    }
    req->json = in;
    req->cmd = cmd->valuestring;
    req->cmd_len = strlen(req->cmd);
    req->cwd = cwd ? cwd->valuestring : NULL;
    return NULL;
}

void sg_batch_req_free(sg_batch_req *req)
{
    if (req->json)
        cJSON_Delete(req->json);
    req->json = NULL;
    req->cmd = req->cwd = NULL;
    req->cmd_len = req->nroots = 0;
}

/* ---- writing an answer ------------------------------------------------------ */

static int grow(sg_batch_buf *b, size_t more)
{
    size_t nc = b->cap ? b->cap : 4096;
    while (nc - b->len < more) {
        if (nc > ((size_t)-1) / 2)
            return -1;
        nc *= 2;
    }
    char *ns = sg_realloc(b->s, nc);
    if (!ns)
        return -1;
    b->s = ns;
    b->cap = nc;
    return 0;
}

/* Room for `more` bytes past b->len; -1 when memory runs out. */
static inline int reserve(sg_batch_buf *b, size_t more)
{
    return b->cap - b->len >= more ? 0 : grow(b, more);
}

static inline int put(sg_batch_buf *b, const char *s, size_t n)
{
    if (reserve(b, n) < 0)
        return -1;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    return 0;
}

#define PUT_LIT(b, lit) put((b), (lit), sizeof(lit) - 1)

/* How cJSON prints each byte inside a string: 0 as it is, 'u' as \u00xx, any
 * other byte c as \c. */
static const char esc_of[256] = {
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
    'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
    ['"'] = '"', ['\\'] = '\\',
};

/* Does any byte of w need an escape (below 0x20, '"' or '\\') or a look (0x80 and
 * above: a byte of a UTF-8 sequence, or one that starts none)?  The word tests
 * "some byte below n" and "some byte zero" of Bit Twiddling Hacks (hasless,
 * haszero), exact as answers for the whole word. */
static inline int word_needs_escape(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t lt20 = (w - ones * 0x20) & ~w & high;          /* a byte below 0x20 */
    uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
    return ((lt20 | ((q - ones) & ~q) | ((bs - ones) & ~bs) | w) & high) != 0;
}

/* s as cJSON prints a string: quoted, escaped as print_string_ptr escapes; and, where
 * cJSON would copy a byte that starts no UTF-8 sequence (a command given on the
 * command line or kept in a state file may hold any), U+FFFD, so that the text is
 * JSON (RFC 8259 8.1) */
static int put_str(sg_batch_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (reserve(b, 6 * n + 2) < 0)
        return -1;
    char *o = b->s + b->len;
    *o++ = '"';
    size_t i = 0;
    while (i < n) {
        uint64_t w;
        if (i + 8 <= n) {
            memcpy(&w, s + i, 8);
            if (!word_needs_escape(w)) {
                memcpy(o, &w, 8);
                o += 8;
                i += 8;
                continue;
            }
        } else if (n >= 8) {
            /* the tail, as the word that ends the string: when none of its bytes
             * needs an escape, those before i went out as themselves and are the
             * last bytes written, so writing them again changes nothing */
            memcpy(&w, s + n - 8, 8);
            if (!word_needs_escape(w)) {
                memcpy(o - (8 - (n - i)), &w, 8);
                o += n - i;
                break;
            }
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t k = sg_utf8_seq((const unsigned char *)s + i, n - i);
            if (k) {
                memcpy(o, s + i, k);
                o += k;
                i += k;
            } else {
                memcpy(o, "\xef\xbf\xbd", 3);   /* U+FFFD, as sg_utf8_repair writes it */
                o += 3;
                i++;
            }
            continue;
        }
        i++;
        char e = esc_of[c];
        if (!e) {
            *o++ = (char)c;
        } else if (e != 'u') {
            *o++ = '\\';
            *o++ = e;
        } else {
            static const char hex[] = "0123456789abcdef";
            memcpy(o, "\\u00", 4);
            o[4] = hex[c >> 4];
            o[5] = hex[c & 15];
            o += 6;
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->s);
    return 0;
}

/* ,"key":"value" (lead is "," or "{"); nothing for a NULL value, which
 * cJSON_AddStringToObject leaves out */
static int put_kv(sg_batch_buf *b, const char *lead_key, size_t lk, const char *value)
{
    if (!value)
        return 0;
    return put(b, lead_key, lk) < 0 || put_str(b, value) < 0 ? -1 : 0;
}

#define PUT_KV(b, lead_key, value) put_kv((b), (lead_key), sizeof(lead_key) - 1, (value))

/* A number as cJSON prints it: the common 0 directly, any other through cJSON
 * itself (rare: a rate-limited answer's wait). */
static int put_number(sg_batch_buf *b, double d)
{
    if (d == 0)
        return PUT_LIT(b, "0");
    cJSON *num = cJSON_CreateNumber(d);
    char *s = num ? cJSON_PrintUnformatted(num) : NULL;
    int r = s ? put(b, s, strlen(s)) : -1;
    cJSON_free(s);
    cJSON_Delete(num);
    return r;
}

int sg_batch_write(sg_batch_buf *b, const sgr_table *t, const sgr_result *r, const sg_batch_out *v)
{
    size_t start = b->len;
    /* the keys in the order docs/library.md "The API" lists; a NULL string leaves its key out */
    if (PUT_LIT(b, "{\"decision\":") < 0 || put_str(b, sgr_decision_name(v->decision)) < 0
        || PUT_KV(b, ",\"rule\":", v->rule) < 0 || PUT_KV(b, ",\"message\":", v->message) < 0
        || PUT_KV(b, ",\"hint\":", v->hint) < 0 || PUT_LIT(b, ",\"segments\":[") < 0)
        goto oom;
    for (uint32_t i = 0; i < r->cl.nseg && r->seg_decision; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        if ((i && PUT_LIT(b, ",") < 0) || PUT_LIT(b, "{\"argv\":[") < 0)
            goto oom;
        int fa = 1;
        for (uint32_t k = 0; k < s->argc; k++) {
            if (!s->argv[k].text)
                continue;
            if ((!fa && PUT_LIT(b, ",") < 0) || put_str(b, s->argv[k].text) < 0)
                goto oom;
            fa = 0;
        }
        if (PUT_LIT(b, "]") < 0 || PUT_KV(b, ",\"decision\":", sgr_decision_name(r->seg_decision[i])) < 0
            || PUT_KV(b, ",\"rule\":", sgr_rule_name(t, r->seg_rule[i])) < 0
            || (s->nest != SGR_NEST_TOP && PUT_KV(b, ",\"nested\":", sgr_nest_names[s->nest]) < 0)
            || ((s->flags & SGR_SEG_DYNAMIC) && PUT_KV(b, ",\"dynamic\":", s->dyn_reason ? s->dyn_reason : "") < 0)
            || PUT_LIT(b, "}") < 0)
            goto oom;
    }
    if ((v->rate_limited ? PUT_LIT(b, "],\"rate_limited\":true") : PUT_LIT(b, "],\"rate_limited\":false")) < 0
        || PUT_LIT(b, ",\"wait_time_seconds\":") < 0
        || put_number(b, (double)(long long)(v->wait_s * 1e6 + 0.5) / 1e6) < 0)
        goto oom;
    if ((v->approval_id && v->approval_id[0] && PUT_KV(b, ",\"approval_id\":", v->approval_id) < 0)
        || PUT_KV(b, ",\"approved\":", v->approved) < 0 || PUT_KV(b, ",\"error\":", v->error) < 0
        || PUT_LIT(b, "}\n") < 0)
        goto oom;
    return 0;
oom:
    b->len = start;
    return -1;
}

int sg_batch_write_error(sg_batch_buf *b, const char *err)
{
    size_t start = b->len;
    if (PUT_LIT(b, "{\"decision\":\"deny\"") < 0 || PUT_KV(b, ",\"error\":", err) < 0 || PUT_LIT(b, "}\n") < 0) {
        b->len = start;
        return -1;
    }
    return 0;
}

/* ---- the batch's input and output -------------------------------------------- */

#define SG_BATCH_BLOCK ((size_t)1 << 16)        /* bytes a read asks for, at least */
#define SG_BATCH_OUT_HIGH ((size_t)1 << 18)     /* answers gathered before a write */

void sg_batch_io_init(sg_batch_io *io, int in_fd, int out_fd)
{
    memset(io, 0, sizeof *io);
    io->in_fd = in_fd;
    io->out_fd = out_fd;
}

int sg_batch_flush(sg_batch_io *io)
{
    size_t off = 0;
    while (off < io->out.len && !io->err) {
        ssize_t k = write(io->out_fd, io->out.s + off, io->out.len - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            io->err = 1;
        else
            off += (size_t)k;
    }
    io->out.len = 0;
    return io->err ? -1 : 0;
}

/* The next non-empty line already in the buffer (or the last one, unended, at the
 * end of input): 1 with *line and *n, 0 when a read is needed first. */
static int take_line(sg_batch_io *io, char **line, size_t *n)
{
    while (io->have > io->pos) {
        char *s = io->in + io->pos;
        char *nl = memchr(s, '\n', io->have - io->pos);
        if (!nl && !io->eof)
            return 0;
        size_t len = nl ? (size_t)(nl - s) : io->have - io->pos;
        io->pos += len + (nl != NULL);
        while (len > 0 && (s[len - 1] == '\r' || s[len - 1] == '\n'))
            len--;
        if (len) {
            *line = s;
            *n = len;
            return 1;
        }
    }
    return 0;
}

/* No whole line left: answer what came so far, then wait for more input (lines
 * handed out before are invalid from here on).  0, or -1 when memory runs out or
 * the read fails. */
static int fill(sg_batch_io *io)
{
    sg_batch_flush(io);
    if (io->pos > 0) {
        memmove(io->in, io->in + io->pos, io->have - io->pos);
        io->have -= io->pos;
        io->pos = 0;
    }
    if (io->cap - io->have < SG_BATCH_BLOCK) {
        size_t nc = io->cap ? io->cap * 2 : 4 * SG_BATCH_BLOCK;
        while (nc - io->have < SG_BATCH_BLOCK)
            nc *= 2;
        char *ni = sg_realloc(io->in, nc);
        if (!ni)
            return -1;
        io->in = ni;
        io->cap = nc;
    }
    for (;;) {
        ssize_t k = read(io->in_fd, io->in + io->have, io->cap - io->have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            io->err = 1;
            return -1;
        }
        if (k == 0)
            io->eof = 1;
        io->have += (size_t)k;
        return 0;
    }
}

int sg_batch_next_line(sg_batch_io *io, char **line, size_t *n)
{
    if (io->out.len >= SG_BATCH_OUT_HIGH)
        sg_batch_flush(io);
    for (;;) {
        if (take_line(io, line, n))
            return 1;
        if (io->eof)
            return 0;
        if (fill(io) < 0)
            return -1;
    }
}

/* ---- answering lines on several threads ------------------------------------------ */

/* Lines are answered in parallel only in runs of at least this many per thread:
 * below it a thread costs more than it saves, and a client that sends a line and
 * waits is answered on the calling thread at once. */
#define SG_BATCH_PAR_MIN 64
#define SG_BATCH_MAX_THREADS 16

typedef struct batch_line {
    char *s;
    size_t n;
} batch_line;

typedef struct batch_pool batch_pool;

typedef struct batch_worker {
    batch_pool *pool;
    pthread_t tid;
    int started;
    sgr_ctx *ctx;                   /* its own, made by the thread */
    size_t from, to;                /* its lines of the current run */
    sg_batch_buf out;
    size_t stop;                    /* first of its lines it left unanswered (to: none) */
} batch_worker;

struct batch_pool {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;              /* bumped for every run */
    int quit, pending;
    const sgr_table *t;
    sg_batch_fn fn;
    void *ud;
    batch_line *lines;
    int n;                          /* workers */
    batch_worker w[SG_BATCH_MAX_THREADS];
};

/* lines[from..to) answered into out, a line whose answer cannot be written
 * answered with the out-of-memory line; the index of the first line left
 * unanswered (to: none) when not even that line fits */
static size_t answer_range(sg_batch_fn fn, void *ud, sgr_ctx *ctx, const batch_line *lines, size_t from, size_t to,
                           sg_batch_buf *out)
{
    for (size_t i = from; i < to; i++)
        if (fn(ud, ctx, lines[i].s, lines[i].n, out) < 0 && put(out, SG_BATCH_OOM_LINE, sizeof SG_BATCH_OOM_LINE - 1) < 0)
            return i;
    return to;
}

static void *worker_main(void *arg)
{
    batch_worker *w = arg;
    batch_pool *p = w->pool;
    w->ctx = sgr_ctx_new(p->t);
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->gen == seen)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        w->stop = w->ctx ? answer_range(p->fn, p->ud, w->ctx, p->lines, w->from, w->to, &w->out) : w->from;
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    sgr_ctx_free(w->ctx);
    return NULL;
}

static void pool_stop(batch_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++) {
        if (p->w[i].started)
            pthread_join(p->w[i].tid, NULL);
        sg_free(p->w[i].out.s);
    }
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
}

/* io->out must take b; -1 when it cannot, even after a flush */
static int put_out(sg_batch_io *io, const char *s, size_t n)
{
    if (put(&io->out, s, n) == 0)
        return 0;
    return sg_batch_flush(io) < 0 || put(&io->out, s, n) < 0 ? -1 : 0;
}

/* lines[0..n) answered into io->out in order: the first share on the calling
 * thread (ctx), the others by the workers, each into its own buffer, appended
 * after.  What a worker left unanswered (it has no context, or memory ran out) is
 * answered here, so every line is answered exactly once: a line whose answer
 * failed gets the out-of-memory line (its bytes may have been decoded in place),
 * the lines after it their answers. */
static int answer_parallel(batch_pool *p, sg_batch_io *io, sgr_ctx *ctx, batch_line *lines, size_t n)
{
    size_t parts = (size_t)p->n + 1;
    if (parts > n / SG_BATCH_PAR_MIN)
        parts = n / SG_BATCH_PAR_MIN;
    size_t per = (n + parts - 1) / parts;
    pthread_mutex_lock(&p->mu);
    p->lines = lines;
    p->pending = p->n;
    for (int i = 0; i < p->n; i++) {
        batch_worker *w = &p->w[i];
        size_t a = per * (size_t)(i + 1);
        w->from = a < n ? a : n;
        w->to = a + per < n ? a + per : n;
        w->stop = w->to;
        w->out.len = 0;
    }
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    size_t mine = per < n ? per : n;
    int r = answer_range(p->fn, p->ud, ctx, lines, 0, mine, &io->out) == mine ? 0 : -1;
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n && r == 0; i++) {
        batch_worker *w = &p->w[i];
        if (w->from >= w->to)
            continue;
        if (w->out.len && put_out(io, w->out.s, w->out.len) < 0)
            return -1;
        size_t k = w->stop;
        if (k < w->to && w->ctx) {          /* its answer failed midway */
            if (put_out(io, SG_BATCH_OOM_LINE, sizeof SG_BATCH_OOM_LINE - 1) < 0)
                return -1;
            k++;
        }
        if (answer_range(p->fn, p->ud, ctx, lines, k, w->to, &io->out) != w->to)
            r = -1;
        if (io->out.len >= SG_BATCH_OUT_HIGH)
            sg_batch_flush(io);
    }
    return r;
}

int sg_batch_run(sg_batch_io *io, const sgr_table *t, sgr_ctx *ctx, int threads, sg_batch_fn fn, void *ud)
{
    batch_pool *p = NULL;
    batch_line *lines = NULL;
    size_t n = 0, cap = 0;
    int r = 0;
    if (threads > SG_BATCH_MAX_THREADS + 1)
        threads = SG_BATCH_MAX_THREADS + 1;
    for (;;) {
        /* every whole line read so far, then one answer after another or in parallel */
        char *s;
        size_t len;
        n = 0;
        while (take_line(io, &s, &len)) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                batch_line *nl = sg_realloc(lines, sizeof *nl * nc);
                if (!nl) {
                    r = -1;
                    goto out;
                }
                lines = nl;
                cap = nc;
            }
            lines[n].s = s;
            lines[n++].n = len;
        }
        if (n >= 2 * SG_BATCH_PAR_MIN && threads > 1 && !p) {
            p = sg_calloc(1, sizeof *p);
            if (p) {
                pthread_mutex_init(&p->mu, NULL);
                pthread_cond_init(&p->go, NULL);
                pthread_cond_init(&p->done, NULL);
                p->t = t;
                p->fn = fn;
                p->ud = ud;
                for (int i = 0; i < threads - 1; i++) {
                    p->w[i].pool = p;
                    p->w[i].started = pthread_create(&p->w[i].tid, NULL, worker_main, &p->w[i]) == 0;
                    if (!p->w[i].started)
                        break;
                    p->n = i + 1;
                }
                if (p->n == 0) {
                    pool_stop(p);
                    sg_free(p);
                    p = NULL;
                    threads = 1;
                }
            }
        }
        if (p && n >= 2 * SG_BATCH_PAR_MIN)
            r = answer_parallel(p, io, ctx, lines, n);
        else
            r = answer_range(fn, ud, ctx, lines, 0, n, &io->out) == n ? 0 : -1;
        if (r < 0)
            break;
        if (io->out.len >= SG_BATCH_OUT_HIGH)
            sg_batch_flush(io);
        if (io->eof && io->pos >= io->have)
            break;
        if (fill(io) < 0) {
            r = -1;
            break;
        }
    }
out:
    if (p) {
        pool_stop(p);
        sg_free(p);
    }
    sg_free(lines);
    return r < 0 || io->err ? -1 : 0;
}

int sg_batch_io_close(sg_batch_io *io)
{
    int r = sg_batch_flush(io);
    sg_free(io->in);
    sg_free(io->out.s);
    io->in = io->out.s = NULL;
    return r;
}
