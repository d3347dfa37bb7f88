/* capture.c - bounded head+tail capture of an output stream, and JSON strings. */
#include "capture.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common/utf8.h"
#include "common/alloc.h"

int sgx_cap_init(sgx_cap *c, size_t cap, int mode, int fwd)
{
    memset(c, 0, sizeof *c);
    if (cap < SGX_CAP_MIN)
        cap = SGX_CAP_MIN;
    if (cap > SGX_CAP_MAX)
        cap = SGX_CAP_MAX;
    c->cap = cap;
    c->mode = mode;
    c->fwd = fwd;
    c->hcap = mode == SGX_TRUNC_HEAD ? cap : cap / 2;
    c->tcap = mode == SGX_TRUNC_HEAD ? 0 : cap - c->hcap;
    c->head = sg_malloc(c->hcap);
    c->tail = c->tcap ? sg_malloc(c->tcap) : NULL;
    if (!c->head || (c->tcap && !c->tail)) {
        sgx_cap_free(c);
        return -1;
    }
    return 0;
}

void sgx_cap_free(sgx_cap *c)
{
    sg_free(c->head);
    sg_free(c->tail);
    c->head = c->tail = NULL;
}

/* write all of p[0..n) to fd, giving up on an error (a reader that went away) */
static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        p += k;
        n -= (size_t)k;
    }
}

void sgx_cap_add(sgx_cap *c, const char *p, size_t n)
{
    c->total += n;
    size_t h = c->hcap - c->hlen < n ? c->hcap - c->hlen : n;
    if (h) {
        memcpy(c->head + c->hlen, p, h);
        c->hlen += h;
        if (c->fwd >= 0)
            write_all(c->fwd, p, h);
        p += h;
        n -= h;
    }
    if (!n || !c->tcap)
        return;
    if (n >= c->tcap) {                 /* only the last tcap bytes can stay */
        memcpy(c->tail, p + n - c->tcap, c->tcap);
        c->tlen = c->tcap;
        c->tpos = 0;
        return;
    }
    size_t first = c->tcap - c->tpos < n ? c->tcap - c->tpos : n;
    memcpy(c->tail + c->tpos, p, first);
    memcpy(c->tail, p + first, n - first);
    c->tpos = (c->tpos + n) % c->tcap;
    c->tlen = c->tlen + n > c->tcap ? c->tcap : c->tlen + n;
}

uint64_t sgx_cap_dropped(const sgx_cap *c)
{
    return c->total - c->hlen - c->tlen;
}

size_t sgx_cap_marker(char *buf, size_t n, uint64_t dropped)
{
    int k = snprintf(buf, n, "\n... [truncated %llu bytes] ...\n", (unsigned long long)dropped);
    return k > 0 && (size_t)k < n ? (size_t)k : 0;
}

/* the tail in order, into out[0..tlen) */
static void tail_copy(const sgx_cap *c, char *out)
{
    if (c->tlen < c->tcap) {            /* not wrapped yet: it starts at 0 */
        memcpy(out, c->tail, c->tlen);
        return;
    }
    memcpy(out, c->tail + c->tpos, c->tcap - c->tpos);
    memcpy(out + c->tcap - c->tpos, c->tail, c->tpos);
}

char *sgx_cap_text(const sgx_cap *c, size_t *len)
{
    char mark[96];
    uint64_t drop = sgx_cap_dropped(c);
    size_t ml = drop ? sgx_cap_marker(mark, sizeof mark, drop) : 0;
    size_t n = c->hlen + ml + c->tlen;
    char *s = sg_malloc(n + 1);
    if (!s)
        return NULL;
    if (c->hlen)
        memcpy(s, c->head, c->hlen);
    memcpy(s + c->hlen, mark, ml);
    if (c->tlen)
        tail_copy(c, s + c->hlen + ml);
    s[n] = '\0';
    *len = n;
    return s;
}

void sgx_cap_finish_stream(sgx_cap *c)
{
    if (c->fwd < 0)
        return;
    uint64_t drop = sgx_cap_dropped(c);
    if (drop) {
        char mark[96];
        write_all(c->fwd, mark, sgx_cap_marker(mark, sizeof mark, drop));
    }
    if (c->tlen) {
        char buf[8192];
        size_t done = 0;
        /* in order, a piece at a time (no second buffer of tcap bytes) */
        size_t start = c->tlen < c->tcap ? 0 : c->tpos;
        while (done < c->tlen) {
            size_t at = (start + done) % c->tcap;
            size_t k = c->tcap - at < c->tlen - done ? c->tcap - at : c->tlen - done;
            if (k > sizeof buf)
                k = sizeof buf;
            memcpy(buf, c->tail + at, k);
            write_all(c->fwd, buf, k);
            done += k;
        }
    }
}

/* ---- JSON strings ---------------------------------------------------------- */

static int grow(char **out, size_t *len, size_t *cap, size_t more)
{
    if (*len + more <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 256;
    while (nc < *len + more)
        nc *= 2;
    char *p = sg_realloc(*out, nc);
    if (!p)
        return -1;
    *out = p;
    *cap = nc;
    return 0;
}

int sgx_json_string(char **out, size_t *len, size_t *cap, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    /* the worst case is 6 bytes out per byte in ("\u00XX"), plus the quotes */
    if (grow(out, len, cap, n > (SIZE_MAX - 2) / 6 ? SIZE_MAX : 6 * n + 2) < 0)
        return -1;
    char *o = *out + *len;
    *o++ = '"';
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            *o++ = (char)c;
            i++;
            continue;
        }
        if (c < 0x80) {
            const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\t' ? "\\t"
                            : c == '\r' ? "\\r" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
            if (esc) {
                memcpy(o, esc, 2);
                o += 2;
            } else {
                o += sprintf(o, "\\u%04x", c);
            }
            i++;
            continue;
        }
        size_t k = sg_utf8_seq(u + i, n - i);
        if (k) {
            memcpy(o, u + i, k);
            o += k;
            i += k;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);  /* U+FFFD for this byte */
            o += 3;
            i++;
        }
    }
    *o++ = '"';
    *len = (size_t)(o - *out);
    return 0;
}
