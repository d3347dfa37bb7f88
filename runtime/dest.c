/* dest.c - the syntax of a place a program connects to (dest.h). */
#include <string.h>
#include "dest.h"
#include "shparse.h"

static int is_alpha(unsigned char ch) { return (ch | 0x20) >= 'a' && (ch | 0x20) <= 'z'; }
static int is_digit(unsigned char ch) { return ch >= '0' && ch <= '9'; }
static unsigned char lower(unsigned char ch) { return ch >= 'A' && ch <= 'Z' ? (unsigned char)(ch | 0x20) : ch; }

size_t sgr_dest_scheme_len(const char *w, size_t n)
{
    /* RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
    if (!n || !is_alpha((unsigned char)w[0]))
        return 0;
    size_t i = 1;
    while (i < n && (is_alpha((unsigned char)w[i]) || is_digit((unsigned char)w[i])
                     || w[i] == '+' || w[i] == '-' || w[i] == '.'))
        i++;
    return i + 3 <= n && memcmp(w + i, "://", 3) == 0 ? i : 0;
}

/* The port a scheme connects to when none is written ("" none known). */
static const char *default_port(const char *s, size_t n)
{
    static const struct { const char *scheme, *port; } known[] = {
        { "http", "80" }, { "https", "443" }, { "ftp", "21" }, { "ftps", "990" },
        { "ssh", "22" }, { "sftp", "22" }, { "git+ssh", "22" }, { "ssh+git", "22" },
        { "git", "9418" }, { "ws", "80" }, { "wss", "443" }, { "rsync", "873" },
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strlen(known[i].scheme) == n && memcmp(known[i].scheme, s, n) == 0)
            return known[i].port;
    return "";
}

static int set_sv(sgr_sv *v, const char *s, size_t n)
{
    v->s = s;
    v->len = (uint32_t)n;
    return 0;
}

/* A lower-case copy of s[0..n) (NULL: out of memory). */
static char *lower_dup(sg_arena *a, const char *s, size_t n)
{
    char *d = sg_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++)
        d[i] = (char)lower((unsigned char)s[i]);
    d[n] = '\0';
    return d;
}

/* Read an authority [user@]host[:port] (a[0..n)) into d's host and port: 1 both
 * as known as they can be, -1 out of memory.  A part with a character outside the
 * host alphabet is unknown: an expansion ($, `), a glob or brace ({ * ? [), a
 * percent-encoding or a backslash (which parsers read in different ways), a blank
 * a quote kept in the word.  More than one '@' is unknown too: curl, browsers and
 * git take different ones for the host. */
static int authority(sg_arena *a, const char *s, size_t n, int scp, sgr_dest *d)
{
    const char *at = NULL;
    unsigned nat = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '@') {
            at = s + i;
            nat++;
        }
    if (nat > 1)
        return 1;
    if (at) {
        n -= (size_t)(at + 1 - s);
        s = at + 1;
    }
    const char *host = s, *port = NULL;
    size_t hl = n, pl = 0;
    if (n && s[0] == '[') {
        /* [v6 address] */
        const char *close = memchr(s, ']', n);
        if (!close)
            return 1;
        for (const char *p = s + 1; p < close; p++)
            if (!is_digit((unsigned char)*p) && !((lower((unsigned char)*p) >= 'a' && lower((unsigned char)*p) <= 'f'))
                && *p != ':' && *p != '.')
                return 1;
        hl = (size_t)(close + 1 - s);
        if (hl < n) {
            if (s[hl] != ':')
                return 1;
            port = s + hl + 1;
            pl = n - hl - 1;
        }
    } else if (!scp) {
        const char *colon = memchr(s, ':', n);
        if (colon) {
            hl = (size_t)(colon - s);
            port = colon + 1;
            pl = n - hl - 1;
        }
    }
    if (s[0] != '[')
        for (size_t i = 0; i < hl; i++) {
            unsigned char ch = (unsigned char)host[i];
            if (!is_alpha(ch) && !is_digit(ch) && ch != '.' && ch != '-' && ch != '_')
                return 1;
        }
    if (hl && host[hl - 1] == '.' && s[0] != '[')
        hl--;                                /* a fully qualified name: the same host */
    if (!hl)
        return 1;
    char *h = lower_dup(a, host, hl);
    if (!h)
        return -1;
    set_sv(&d->host, h, hl);
    if (port && pl) {
        size_t z = 0;
        for (size_t i = 0; i < pl; i++)
            if (!is_digit((unsigned char)port[i]))
                goto unknown;                /* host:443:other (curl --connect-to) */
        while (z + 1 < pl && port[z] == '0')
            z++;
        if (pl - z > 5 || (pl - z == 5 && memcmp(port + z, "65535", 5) > 0))
            goto unknown;
        set_sv(&d->port, port + z, pl - z);
    }
    /* (host: with nothing after the ':' is the scheme's own port, as with none) */
    return 1;
unknown:
    d->host.s = NULL;
    d->host.len = 0;
    return 1;
}

int sgr_dest_parse(sg_arena *a, const char *w, uint32_t n, uint32_t flags, int how, sgr_dest *out)
{
    memset(out, 0, sizeof *out);
    out->word.s = w;
    out->word.len = n;
    if (how == SGR_DEST_UNKNOWN)
        return 1;
    size_t sl = sgr_dest_scheme_len(w, n);
    if (!sl && how == SGR_DEST_SCHEMED)
        return 0;
    if (sl) {
        char *sc = lower_dup(a, w, sl);
        if (!sc)
            return -1;
        set_sv(&out->scheme, sc, sl);
        const char *auth = w + sl + 3, *end = w + n;
        const char *ae = auth;
        while (ae < end && *ae != '/' && *ae != '?' && *ae != '#')
            ae++;
        if (authority(a, auth, (size_t)(ae - auth), 0, out) < 0)
            return -1;
        if (!out->port.s && out->host.s) {
            const char *dp = default_port(sc, sl);
            if (*dp)
                set_sv(&out->port, dp, strlen(dp));
        }
        /* the URL is known when the whole word is and its host is */
        if (out->host.s && !(flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE))) {
            int explicit_port = out->port.s && out->port.s >= auth && out->port.s < ae;
            size_t ul = sl + 3 + out->host.len + (explicit_port ? 1 + out->port.len : 0) + (size_t)(end - ae);
            char *u = sg_arena_alloc(a, ul + 1);
            if (!u)
                return -1;
            char *p = u;
            memcpy(p, sc, sl), p += sl;
            memcpy(p, "://", 3), p += 3;
            memcpy(p, out->host.s, out->host.len), p += out->host.len;
            if (explicit_port) {
                *p++ = ':';
                memcpy(p, out->port.s, out->port.len), p += out->port.len;
            }
            memcpy(p, ae, (size_t)(end - ae)), p += end - ae;
            *p = '\0';
            set_sv(&out->url, u, ul);
        }
        return 1;
    }
    if (how == SGR_DEST_SSH) {
        if (!n)
            return 0;
        if (authority(a, w, n, 1, out) < 0)
            return -1;
        set_sv(&out->scheme, "ssh", 3);
        return 1;
    }
    if (how == SGR_DEST_REMOTE) {
        /* scp's [user@]host:path: a ':' with no '/' before it (git: "This syntax is
         * only recognized if there are no slashes before the first colon") */
        const char *colon = memchr(w, ':', n);
        if (!colon || memchr(w, '/', (size_t)(colon - w)) || colon == w)
            return 0;
        if (authority(a, w, (size_t)(colon - w), 1, out) < 0)
            return -1;
        set_sv(&out->scheme, "ssh", 3);
        return 1;
    }
    /* [user@]host[:port][/path] */
    const char *ae = w, *end = w + n;
    while (ae < end && *ae != '/' && *ae != '?' && *ae != '#')
        ae++;
    if (ae == w)
        return n ? 1 : 0;                    /* /path: no host it names */
    if (authority(a, w, (size_t)(ae - w), 0, out) < 0)
        return -1;
    return 1;
}

int sgr_dest_proxy_var(const char *name, size_t n)
{
    /* NAME_proxy, NAME.proxy; no_proxy lists the hosts that go around one */
    static const char suffix[] = "_proxy";
    size_t sl = sizeof suffix - 1;
    if (n < sl || (name[n - sl] != '_' && name[n - sl] != '.'))
        return 0;
    for (size_t i = 1; i < sl; i++)
        if (lower((unsigned char)name[n - sl + i]) != suffix[i])
            return 0;
    return !(n == 8 && lower((unsigned char)name[0]) == 'n' && lower((unsigned char)name[1]) == 'o');
}
