/* expand.c - word expansion as bash does it, for the words the executor runs.
 *
 * One pass over the word's bytes as written.  The field being built keeps, per
 * byte, whether it may act as a glob character (unquoted * ? [); expansion results
 * outside double quotes are split on blanks and newlines (IFS is never changed:
 * the executor refuses to set it).  Grammar read here (bash(1) EXPANSION):
 *   word      -> part*
 *   part      -> '\' c | '...' | "dq*" | $'ansi' | $"dq*" | $NAME | ${param} | $? | $(list)
 *              | ~ (at the start, and after = or : in an assignment) | c
 *   param     -> NAME | #NAME | NAME (:- | - | :+ | +) word */
#include "expand.h"
#include <dirent.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "common/alloc.h"

#define DEFAULT_MAX_FIELDS 4096u

typedef struct fb {
    sgx_expander *e;
    int ctx;
    char *buf;                   /* the current field (heap, grown) */
    uint8_t *gl;                 /* [len]: this byte may act as a glob character */
    size_t len, cap;
    int started;                 /* the field exists (a quote or a byte was seen) */
    int has_glob;
    int colon_tilde;             /* a tilde prefix may follow an unquoted ':' (and
                                  * ends at one): an assignment's value */
    char **fv;                   /* finished fields (arena strings, heap array) */
    uint32_t fn, fcap;
    int err;                     /* SGX_EX_* once something failed */
} fb;

static int fail(fb *f, int code, const char *msg)
{
    if (!f->err) {
        f->err = code;
        if (code == SGX_EX_UNSUPPORTED)
            f->e->error = msg;
    }
    return -1;
}

static int put(fb *f, char c, int quoted)
{
    if (f->len == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 64;
        char *nb = sg_realloc(f->buf, nc);
        if (!nb)
            return fail(f, SGX_EX_OOM, NULL);
        f->buf = nb;
        uint8_t *ng = sg_realloc(f->gl, nc);
        if (!ng)
            return fail(f, SGX_EX_OOM, NULL);
        f->gl = ng;
        f->cap = nc;
    }
    int g = !quoted && (c == '*' || c == '?' || c == '[');
    f->buf[f->len] = c;
    f->gl[f->len++] = (uint8_t)g;
    f->has_glob |= g;
    f->started = 1;
    return 0;
}

static int push(fb *f, const char *s, size_t n)
{
    uint32_t max = f->e->max_fields ? f->e->max_fields : DEFAULT_MAX_FIELDS;
    if (f->fn >= max)
        return fail(f, SGX_EX_UNSUPPORTED, "the word expands to too many fields");
    if (f->fn == f->fcap) {
        uint32_t nc = f->fcap ? f->fcap * 2 : 8;
        char **nv = sg_realloc(f->fv, nc * sizeof *nv);
        if (!nv)
            return fail(f, SGX_EX_OOM, NULL);
        f->fv = nv;
        f->fcap = nc;
    }
    char *d = sg_arena_strndup(f->e->a, n ? s : "", n);   /* an empty field has no buffer yet */
    if (!d)
        return fail(f, SGX_EX_OOM, NULL);
    f->fv[f->fn++] = d;
    return 0;
}

/* Pathname expansion, one path component at a time (bash's own way): a component
 * with no glob character is taken as it is, one with some is matched (fnmatch,
 * FNM_PERIOD) against the entries of its directory; the results, sorted by bytes
 * (bash in the C and C.UTF-8 locales), replace the field, and no match leaves the
 * field as it is.  bash 5.2's globskipdots: . and .. never match.  The work is
 * bounded: past GLOB_BUDGET directory entries read the word is refused, so a line
 * cannot make the executor walk the filesystem before the policy has seen it. */
#define GLOB_BUDGET 65536u

typedef struct gcomp {
    const char *lit;             /* the component's bytes (no glob: taken as they are) */
    size_t len;
    char *pat;                   /* for fnmatch: quoted specials escaped; NULL: no glob */
} gcomp;

typedef struct gwalk {
    fb *f;
    gcomp *c;
    size_t nc;
    int rel;                     /* relative to the cwd */
    char *abs, *disp;            /* the path being built, for syscalls and as shown */
    size_t acap, dcap;
    char **res;
    uint32_t nres, rcap;
    size_t budget;
    int over, oom;
} gwalk;

static int gput(char **b, size_t *cap, size_t at, const char *s, size_t n)
{
    if (at + n + 1 > *cap) {
        size_t nc = *cap ? *cap : 256;
        while (nc < at + n + 1)
            nc *= 2;
        char *nb = sg_realloc(*b, nc);
        if (!nb)
            return -1;
        *b = nb;
        *cap = nc;
    }
    memcpy(*b + at, s, n);
    (*b)[at + n] = '\0';
    return 0;
}

static void gresult(gwalk *g, size_t dlen)
{
    if (g->nres == g->rcap) {
        uint32_t nc = g->rcap ? g->rcap * 2 : 16;
        char **nr = sg_realloc(g->res, nc * sizeof *nr);
        if (!nr) {
            g->oom = 1;
            return;
        }
        g->res = nr;
        g->rcap = nc;
    }
    if (!(g->res[g->nres] = sg_strndup(g->disp, dlen)))
        g->oom = 1;
    else
        g->nres++;
}

/* Component ci onward, the directory so far abs[0..alen) (shown disp[0..dlen)). */
static void gstep(gwalk *g, size_t ci, size_t alen, size_t dlen)
{
    if (g->over || g->oom)
        return;
    int last = ci + 1 == g->nc;
    const gcomp *c = &g->c[ci];
    /* the separator before this component */
    if (ci > 0 || g->rel) {
        if (!alen || g->abs[alen - 1] != '/') {
            if (gput(&g->abs, &g->acap, alen, "/", 1) < 0) {
                g->oom = 1;
                return;
            }
            alen++;
        }
        if (ci > 0) {
            if (gput(&g->disp, &g->dcap, dlen, "/", 1) < 0) {
                g->oom = 1;
                return;
            }
            dlen++;
        }
    }
    struct stat sb;
    if (!c->pat) {
        if (gput(&g->abs, &g->acap, alen, c->lit, c->len) < 0 || gput(&g->disp, &g->dcap, dlen, c->lit, c->len) < 0) {
            g->oom = 1;
            return;
        }
        if (!last)
            gstep(g, ci + 1, alen + c->len, dlen + c->len);
        else if (c->len ? lstat(g->abs, &sb) == 0 : stat(g->abs, &sb) == 0 && S_ISDIR(sb.st_mode))
            gresult(g, dlen + c->len);
        return;
    }
    DIR *d = opendir(alen ? g->abs : "/");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && !g->over && !g->oom) {
        if (g->budget-- == 0) {
            g->over = 1;
            break;
        }
        const char *nm = e->d_name;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0 || fnmatch(c->pat, nm, FNM_PERIOD) != 0)
            continue;
        size_t nl = strlen(nm);
        if (gput(&g->abs, &g->acap, alen, nm, nl) < 0 || gput(&g->disp, &g->dcap, dlen, nm, nl) < 0) {
            g->oom = 1;
            break;
        }
        if (last)
            gresult(g, dlen + nl);
        else
            gstep(g, ci + 1, alen + nl, dlen + nl);
    }
    closedir(d);
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int glob_field(fb *f)
{
    gwalk g;
    memset(&g, 0, sizeof g);
    g.f = f;
    g.budget = GLOB_BUDGET;
    g.rel = !(f->len && f->buf[0] == '/');
    size_t ncomp = 1;
    for (size_t i = 0; i < f->len; i++)
        ncomp += f->buf[i] == '/';
    g.c = sg_calloc(ncomp, sizeof *g.c);
    int rc = g.c ? 0 : -1;
    for (size_t i = 0, st = 0; rc == 0 && i <= f->len; i++) {
        if (i < f->len && f->buf[i] != '/')
            continue;
        gcomp *c = &g.c[g.nc++];
        c->lit = f->buf + st;
        c->len = i - st;
        int any = 0;
        for (size_t k = st; k < i; k++)
            any |= f->gl[k];
        if (any) {
            char *p = sg_malloc(2 * c->len + 1), *o = p;
            if (!p) {
                rc = -1;
                break;
            }
            for (size_t k = st; k < i; k++) {
                if (!f->gl[k] && strchr("*?[]\\", f->buf[k]))
                    *o++ = '\\';
                *o++ = f->buf[k];
            }
            *o = '\0';
            c->pat = p;
        }
        st = i + 1;
    }
    const char *cwd = f->e->cwd ? f->e->cwd : "/";
    if (rc == 0 && g.rel && gput(&g.abs, &g.acap, 0, cwd, strlen(cwd)) < 0)
        rc = -1;
    if (rc == 0)
        gstep(&g, 0, g.rel ? strlen(cwd) : 0, 0);
    if (rc < 0 || g.oom)
        rc = fail(f, SGX_EX_OOM, NULL);
    else if (g.over)
        rc = fail(f, SGX_EX_UNSUPPORTED, "the glob reads more than 65536 directory entries; the executor does not "
                                         "expand it");
    if (rc == 0 && g.nres) {
        qsort(g.res, g.nres, sizeof *g.res, by_bytes);
        for (uint32_t i = 0; i < g.nres && rc == 0; i++)
            rc = push(f, g.res[i], strlen(g.res[i]));
    } else if (rc == 0) {
        rc = push(f, f->buf, f->len);
    }
    for (uint32_t i = 0; i < g.nres; i++)
        sg_free(g.res[i]);
    for (size_t i = 0; i < g.nc; i++)
        sg_free(g.c[i].pat);
    sg_free(g.res);
    sg_free(g.c);
    sg_free(g.abs);
    sg_free(g.disp);
    return rc;
}

static int end_field(fb *f)
{
    if (!f->started)
        return 0;
    int r;
    if (f->has_glob && (f->ctx == SGX_CTX_ARGV || f->ctx == SGX_CTX_REDIR))
        r = glob_field(f);
    else
        r = push(f, f->buf, f->len);
    f->len = 0;
    f->started = f->has_glob = 0;
    return r;
}

/* An expansion's result s[0..n): inside double quotes (or where no splitting is
 * done) it joins the field as quoted bytes; else it is split on blanks. */
static int put_expansion(fb *f, const char *s, size_t n, int in_dq)
{
    int split = !in_dq && (f->ctx == SGX_CTX_ARGV || f->ctx == SGX_CTX_REDIR);
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (split && (c == ' ' || c == '\t' || c == '\n')) {
            if (end_field(f) < 0)
                return -1;
            continue;
        }
        if (put(f, c, !split) < 0)
            return -1;
    }
    return 0;
}

/* ---- finding the end of nested constructs ----------------------------------- */

static size_t skip_paren(const char *s, size_t i, size_t end);

/* s[i] is the byte after an opening '"': the index of the closing '"', or end */
static size_t skip_dq(const char *s, size_t i, size_t end)
{
    while (i < end) {
        if (s[i] == '\\')
            i += 2;
        else if (s[i] == '"')
            return i;
        else if (s[i] == '$' && i + 1 < end && s[i + 1] == '(') {
            i = skip_paren(s, i + 2, end);
            if (i < end)
                i++;
        } else
            i++;
    }
    return end;
}

/* s[i] is the byte after "$(": the index of the matching ')', or end */
static size_t skip_paren(const char *s, size_t i, size_t end)
{
    int depth = 1;
    size_t start = i;
    while (i < end) {
        char c = s[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == '\'') {
            const char *q = memchr(s + i + 1, '\'', end - i - 1);
            i = q ? (size_t)(q - s) + 1 : end;
            continue;
        }
        if (c == '"') {
            i = skip_dq(s, i + 1, end);
            if (i < end)
                i++;
            continue;
        }
        if (c == '`') {
            const char *q = memchr(s + i + 1, '`', end - i - 1);
            i = q ? (size_t)(q - s) + 1 : end;
            continue;
        }
        if (c == '#' && (i == start || s[i - 1] == ' ' || s[i - 1] == '\t' || s[i - 1] == '\n')) {
            const char *q = memchr(s + i, '\n', end - i);
            i = q ? (size_t)(q - s) : end;
            continue;
        }
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            return i;
        i++;
    }
    return end;
}

/* s[i] is the byte after "${": the index of the matching '}', or end */
static size_t skip_brace(const char *s, size_t i, size_t end, int in_dq)
{
    int depth = 1;
    while (i < end) {
        char c = s[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == '\'' && !in_dq) {
            const char *q = memchr(s + i + 1, '\'', end - i - 1);
            i = q ? (size_t)(q - s) + 1 : end;
            continue;
        }
        if (c == '"') {
            i = skip_dq(s, i + 1, end);
            if (i < end)
                i++;
            continue;
        }
        if (c == '$' && i + 1 < end && s[i + 1] == '(') {
            i = skip_paren(s, i + 2, end);
            if (i < end)
                i++;
            continue;
        }
        if (c == '$' && i + 1 < end && s[i + 1] == '{') {
            depth++;
            i += 2;
            continue;
        }
        if (c == '}' && --depth == 0)
            return i;
        i++;
    }
    return end;
}

/* ---- the parts of a word ------------------------------------------------------ */

static int lex(fb *f, const char *s, size_t i, size_t end, int in_dq, int tilde_ok);

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int put_utf8(fb *f, uint32_t cp)
{
    char b[4];
    int n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xc0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | cp >> 12);
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        if (cp > 0x10ffff)
            cp = 0xfffd;
        b[0] = (char)(0xf0 | cp >> 18);
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    for (int k = 0; k < n; k++)
        if (put(f, b[k], 1) < 0)
            return -1;
    return 0;
}

/* $'...' from s[i] (after the quote): decoded bytes join the field quoted; a
 * decoded NUL ends the string's value (bash drops the rest).  Returns the index
 * after the closing quote. */
static size_t ansic(fb *f, const char *s, size_t i, size_t end)
{
    int cut = 0;
    f->started = 1;
    while (i < end && s[i] != '\'') {
        uint32_t v;
        int byte = 1;                   /* v is a byte (else a code point) */
        if (s[i] != '\\' || i + 1 >= end) {
            v = (uint8_t)s[i++];
        } else {
            char c = s[i + 1];
            i += 2;
            switch (c) {
            case 'a': v = 7; break;
            case 'b': v = 8; break;
            case 'e': case 'E': v = 27; break;
            case 'f': v = 12; break;
            case 'n': v = 10; break;
            case 'r': v = 13; break;
            case 't': v = 9; break;
            case 'v': v = 11; break;
            case '\\': case '\'': case '"': case '?': v = (uint8_t)c; break;
            case 'c':
                if (i >= end) {
                    v = '\\';
                    break;
                }
                v = (uint8_t)s[i++] & 0x1f;
                break;
            case 'x': case 'u': case 'U': {
                int maxd = c == 'x' ? 2 : c == 'u' ? 4 : 8, d = 0;
                v = 0;
                while (d < maxd && i < end && hexval(s[i]) >= 0) {
                    v = v * 16 + (uint32_t)hexval(s[i++]);
                    d++;
                }
                if (!d) {                 /* no digits: the text stays */
                    if (!cut && (put(f, '\\', 1) < 0 || put(f, c, 1) < 0))
                        return end;
                    continue;
                }
                byte = c == 'x';
                break;
            }
            default:
                if (c >= '0' && c <= '7') {
                    v = (uint32_t)(c - '0');
                    for (int d = 1; d < 3 && i < end && s[i] >= '0' && s[i] <= '7'; d++)
                        v = v * 8 + (uint32_t)(s[i++] - '0');
                    v &= 0xff;
                    break;
                }
                if (!cut && (put(f, '\\', 1) < 0 || put(f, c, 1) < 0))
                    return end;
                continue;
            }
        }
        if (v == 0)
            cut = 1;
        if (cut)
            continue;
        if (byte ? put(f, (char)v, 1) < 0 : put_utf8(f, v) < 0)
            return end;
    }
    return i < end ? i + 1 : end;
}

static const char *var_value(fb *f, const char *name, size_t n)
{
    return f->e->var ? f->e->var(f->e->ud, name, n) : NULL;
}

static int name_len(const char *s, size_t i, size_t end)
{
    size_t j = i;
    if (j < end && ((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z') || s[j] == '_'))
        for (j++; j < end && ((s[j] >= 'A' && s[j] <= 'Z') || (s[j] >= 'a' && s[j] <= 'z')
                              || (s[j] >= '0' && s[j] <= '9') || s[j] == '_'); j++)
            ;
    return (int)(j - i);
}

/* ${...}: s[i..j) is what stands between the braces. */
static int braced(fb *f, const char *s, size_t i, size_t j, int in_dq)
{
    if (i < j && s[i] == '#') {
        int nl = name_len(s, i + 1, j);
        if (nl == 0 || i + 1 + (size_t)nl != j)
            return fail(f, SGX_EX_UNSUPPORTED, "this ${#...} form is not expanded by the executor");
        const char *v = var_value(f, s + i + 1, (size_t)nl);
        char num[24];
        int k = snprintf(num, sizeof num, "%zu", v ? strlen(v) : (size_t)0);
        return put_expansion(f, num, (size_t)k, in_dq);
    }
    int nl = name_len(s, i, j);
    if (nl == 0)
        return fail(f, SGX_EX_UNSUPPORTED, "positional and special parameters (${1}, ${@}, ...) are not expanded by the executor");
    const char *v = var_value(f, s + i, (size_t)nl);
    size_t k = i + (size_t)nl;
    if (k == j)
        return v ? put_expansion(f, v, strlen(v), in_dq) : 0;
    int colon = s[k] == ':';
    char op = s[k + (size_t)colon];
    if (k + (size_t)colon >= j || (op != '-' && op != '+'))
        return fail(f, SGX_EX_UNSUPPORTED, "this ${NAME...} operator is not expanded by the executor (only :- - :+ +)");
    size_t w = k + (size_t)colon + 1;
    int set = v != NULL && (!colon || v[0]);
    if (op == '-') {
        if (set)
            return put_expansion(f, v, strlen(v), in_dq);
        if (in_dq)
            f->started = 1;
        return lex(f, s, w, j, in_dq, 0);
    }
    if (!set) {
        if (in_dq)
            f->started = 1;
        return 0;
    }
    return lex(f, s, w, j, in_dq, 0);
}

/* A $(...) with its text s[i..j). */
static int cmdsub(fb *f, const char *s, size_t i, size_t j, int in_dq)
{
    f->e->used_cmdsub = 1;
    if (in_dq)
        f->started = 1;
    if (!f->e->cmdsub)
        return 0;                       /* not run: as if it printed nothing */
    char *out = NULL;
    size_t n = 0;
    if (f->e->cmdsub(f->e->ud, s + i, j - i, &out, &n) != 0)
        return fail(f, SGX_EX_ABORT, NULL);
    if (f->e->dry)
        return 0;                       /* only looked at: as if it printed nothing */
    while (n && out[n - 1] == '\n')
        n--;
    return put_expansion(f, out, n, in_dq);
}

/* s[i] == '$'.  Returns the index after the expansion, or end on failure. */
static size_t dollar(fb *f, const char *s, size_t i, size_t end, int in_dq)
{
    if (i + 1 >= end)
        return put(f, '$', in_dq) < 0 ? end : i + 1;
    char n = s[i + 1];
    if (n == '\'' && !in_dq)
        return ansic(f, s, i + 2, end);
    if (n == '"' && !in_dq) {           /* $"..." : a translated string; no catalog here */
        size_t q = skip_dq(s, i + 2, end);
        f->started = 1;
        if (lex(f, s, i + 2, q, 1, 0) < 0)
            return end;
        return q < end ? q + 1 : end;
    }
    if (n == '(') {
        if (i + 2 < end && s[i + 2] == '(') {
            fail(f, SGX_EX_UNSUPPORTED, "arithmetic expansion $((...)) is not done by the executor");
            return end;
        }
        size_t q = skip_paren(s, i + 2, end);
        if (q >= end) {
            fail(f, SGX_EX_UNSUPPORTED, "unterminated $(");
            return end;
        }
        return cmdsub(f, s, i + 2, q, in_dq) < 0 ? end : q + 1;
    }
    if (n == '{') {
        size_t q = skip_brace(s, i + 2, end, in_dq);
        if (q >= end) {
            fail(f, SGX_EX_UNSUPPORTED, "unterminated ${");
            return end;
        }
        return braced(f, s, i + 2, q, in_dq) < 0 ? end : q + 1;
    }
    if (n == '?') {
        char num[16];
        int k = snprintf(num, sizeof num, "%d", f->e->status);
        f->e->used_status = 1;
        return put_expansion(f, num, (size_t)k, in_dq) < 0 ? end : i + 2;
    }
    int nl = name_len(s, i + 1, end);
    if (nl) {
        const char *v = var_value(f, s + i + 1, (size_t)nl);
        if (v && put_expansion(f, v, strlen(v), in_dq) < 0)
            return end;
        return i + 1 + (size_t)nl;
    }
    if ((n >= '0' && n <= '9') || strchr("@*#$!-", n)) {
        fail(f, SGX_EX_UNSUPPORTED, "positional and special parameters ($1, $@, $#, $$, $!, ...) are not expanded by the executor");
        return end;
    }
    if (n == '[') {
        fail(f, SGX_EX_UNSUPPORTED, "arithmetic expansion $[...] is not done by the executor");
        return end;
    }
    return put(f, '$', in_dq) < 0 ? end : i + 1;
}

/* ~ at s[i], where a tilde prefix may start: ~ is $HOME, ~+ $PWD, ~- $OLDPWD,
 * ~user that user's home directory; one that names nothing stays as written.
 * Returns the index after what was taken (i itself when the ~ is an ordinary
 * byte). */
static size_t tilde(fb *f, const char *s, size_t i, size_t end)
{
    size_t j = i + 1;
    while (j < end && s[j] != '/' && !(f->colon_tilde && s[j] == ':')) {
        if (strchr("\\'\"$`*?[", s[j]))
            return i;                   /* a quoted tilde prefix is no prefix */
        j++;
    }
    const char *dir = NULL;
    size_t ul = j - i - 1;
    char user[256];
    if (ul == 0)
        dir = var_value(f, "HOME", 4);
    else if (ul == 1 && s[i + 1] == '+')
        dir = var_value(f, "PWD", 3);
    else if (ul == 1 && s[i + 1] == '-')
        dir = var_value(f, "OLDPWD", 6);
    else if (ul < sizeof user) {
        memcpy(user, s + i + 1, ul);
        user[ul] = '\0';
        struct passwd *pw = getpwnam(user);
        dir = pw ? pw->pw_dir : NULL;
    }
    if (!dir)
        return i;
    f->started = 1;
    for (const char *p = dir; *p; p++)
        if (put(f, *p, 1) < 0)
            return end;
    return j;
}

/* Read s[i..end) into the field(s).  tilde_ok: a tilde prefix may start at i. */
static int lex(fb *f, const char *s, size_t i, size_t end, int in_dq, int tilde_ok)
{
    while (i < end && !f->err) {
        char c = s[i];
        if (in_dq) {
            if (c == '\\' && i + 1 < end && strchr("$`\"\\\n", s[i + 1])) {
                if (s[i + 1] != '\n' && put(f, s[i + 1], 1) < 0)
                    return -1;
                i += 2;
            } else if (c == '$') {
                i = dollar(f, s, i, end, 1);
            } else if (c == '`') {
                return fail(f, SGX_EX_UNSUPPORTED, "backquoted command substitution is not run by the executor: write $(...)");
            } else {
                if (put(f, c, 1) < 0)
                    return -1;
                i++;
            }
            continue;
        }
        if (c == '~' && tilde_ok) {
            size_t j = tilde(f, s, i, end);
            tilde_ok = 0;
            if (j != i) {
                i = j;
                continue;
            }
        }
        tilde_ok = 0;
        if (c == '\\') {
            if (i + 1 >= end) {
                if (put(f, '\\', 1) < 0)
                    return -1;
                i++;
            } else {
                if (s[i + 1] != '\n' && put(f, s[i + 1], 1) < 0)
                    return -1;
                i += 2;
            }
        } else if (c == '\'') {
            const char *q = memchr(s + i + 1, '\'', end - i - 1);
            size_t e = q ? (size_t)(q - s) : end;
            f->started = 1;
            for (size_t k = i + 1; k < e; k++)
                if (put(f, s[k], 1) < 0)
                    return -1;
            i = e < end ? e + 1 : end;
        } else if (c == '"') {
            size_t q = skip_dq(s, i + 1, end);
            f->started = 1;
            if (lex(f, s, i + 1, q, 1, 0) < 0)
                return -1;
            i = q < end ? q + 1 : end;
        } else if (c == '$') {
            i = dollar(f, s, i, end, 0);
        } else if (c == '`') {
            return fail(f, SGX_EX_UNSUPPORTED, "backquoted command substitution is not run by the executor: write $(...)");
        } else {
            if (put(f, c, 0) < 0)
                return -1;
            if (c == ':' && f->colon_tilde)
                tilde_ok = 1;
            i++;
        }
    }
    return f->err ? -1 : 0;
}

int sgx_word_is_assign(const char *src, size_t len)
{
    int nl = name_len(src, 0, len);
    return nl > 0 && (size_t)nl < len && src[nl] == '=';
}

int sgx_expand(sgx_expander *e, const char *src, size_t len, int ctx, sgx_fields *out)
{
    fb f;
    memset(&f, 0, sizeof f);
    f.e = e;
    f.ctx = ctx;
    e->error = NULL;
    e->used_cmdsub = e->used_status = 0;
    out->v = NULL;
    out->n = 0;
    if (memchr(src, '\0', len)) {
        e->error = "a NUL byte in a word";
        return SGX_EX_UNSUPPORTED;
    }
    size_t i = 0;
    if (ctx == SGX_CTX_ASSIGN) {
        int nl = name_len(src, 0, len);
        if (!nl || (size_t)nl >= len || src[nl] != '=') {
            e->error = "NAME+=value and other assignment forms are not done by the executor";
            return SGX_EX_UNSUPPORTED;
        }
        for (i = 0; i <= (size_t)nl; i++)
            put(&f, src[i], 1);
        f.colon_tilde = 1;
    } else if (ctx == SGX_CTX_ARGV && sgx_word_is_assign(src, len)) {
        /* bash (not in POSIX mode) expands ~ after the = and the :s of an argument
         * that looks like an assignment: --prefix is not one, a=~/b is */
        int nl = name_len(src, 0, len);
        for (i = 0; i <= (size_t)nl; i++)
            put(&f, src[i], 0);
        f.colon_tilde = 1;
    }
    if (!f.err)
        lex(&f, src, i, len, 0, 1);
    if (!f.err && (ctx == SGX_CTX_ASSIGN || ctx == SGX_CTX_HERESTR))
        f.started = 1;                  /* one field, even empty */
    if (!f.err)
        end_field(&f);
    int rc = f.err;
    if (!rc && ctx == SGX_CTX_REDIR && f.fn == 0 && e->used_cmdsub && (!e->cmdsub || e->dry))
        push(&f, "", 0);                /* a $(...) not run yet: one field, decided again */
    rc = f.err;
    if (!rc && (ctx == SGX_CTX_REDIR) && f.fn != 1) {
        e->error = "ambiguous redirect: the target expands to more or fewer than one word";
        rc = SGX_EX_UNSUPPORTED;
    }
    if (!rc) {
        char **v = sg_arena_alloc(e->a, (f.fn + 1) * sizeof *v);
        if (!v)
            rc = SGX_EX_OOM;
        else {
            if (f.fn)
                memcpy(v, f.fv, f.fn * sizeof *v);
            v[f.fn] = NULL;
            out->v = v;
            out->n = f.fn;
        }
    }
    sg_free(f.buf);
    sg_free(f.gl);
    sg_free(f.fv);
    return rc;
}

char *sgx_quote(sg_arena *a, const char *s, size_t n)
{
    size_t k = 2;
    for (size_t i = 0; i < n; i++)
        k += s[i] == '\'' ? 4 : 1;
    char *d = sg_arena_alloc(a, k + 1), *o = d;
    if (!d)
        return NULL;
    *o++ = '\'';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = s[i];
        }
    }
    *o++ = '\'';
    *o = '\0';
    return d;
}
