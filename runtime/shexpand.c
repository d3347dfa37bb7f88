/* shexpand.c - brace expansion and expansion extents of a word's text (shexpand.h). */
#include <string.h>
#include "shexpand.h"

static int name_start(char ch)
{
    return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int name_byte(char ch)
{
    return name_start(ch) || (ch >= '0' && ch <= '9');
}

/* The end of the group opened at w[i] (open, close: its brackets), skipping quotes,
 * escapes and nested expansions as bash reads them; n when it is not closed. */
static size_t group_end(const char *w, size_t n, size_t i, char open, char close)
{
    int depth = 0;
    while (i < n) {
        char ch = w[i];
        if (ch == '\\') {
            i += 2;
            continue;
        }
        if (ch == '\'' && open != '{') {
            const char *q = memchr(w + i + 1, '\'', n - i - 1);
            i = q ? (size_t)(q - w) + 1 : n;
            continue;
        }
        if (ch == '"') {
            size_t j = i + 1;
            while (j < n && w[j] != '"')
                j += w[j] == '\\' ? 2 : 1;
            i = j + 1;
            continue;
        }
        if ((ch == '$' || ch == '`') && !(ch == '$' && i + 1 < n && w[i + 1] == close) && depth > 0) {
            size_t l = ch == '`' || (i + 1 < n && (w[i + 1] == '(' || w[i + 1] == '{' || w[i + 1] == '['))
                       ? sgr_sx_expansion(w + i, n - i) : 0;
            if (l) {
                i += l;
                continue;
            }
        }
        if (ch == open)
            depth++;
        else if (ch == close && --depth == 0)
            return i;
        i++;
    }
    return n;
}

size_t sgr_sx_expansion(const char *w, size_t n)
{
    if (n < 2)
        return 0;
    if (w[0] == '`') {
        for (size_t i = 1; i < n; i++) {
            if (w[i] == '\\')
                i++;
            else if (w[i] == '`')
                return i + 1;
        }
        return n;
    }
    char k = w[1];
    if (k == '(' || k == '{' || k == '[') {
        size_t e = group_end(w, n, 1, k, k == '(' ? ')' : k == '{' ? '}' : ']');
        return e < n ? e + 1 : n;
    }
    if (name_start(k)) {
        size_t i = 2;
        while (i < n && name_byte(w[i]))
            i++;
        return i;
    }
    if ((k >= '0' && k <= '9') || strchr("?$!#@*-", k))
        return 2;
    return 0;
}

/* ---- brace expansion ---------------------------------------------------------- */

typedef struct bx {
    sg_arena *a;
    const char **words;
    uint32_t *lens;
    size_t n, max, bytes;
    int err;                                  /* -1 too many, -2 out of memory */
} bx;

#define BX_DEPTH 64                           /* braces within braces */
#define BX_BYTES ((size_t)1 << 20)            /* all words together */

/* Is w[0..n) a sequence x..y[..incr]?  Fills the bounds; letters in *alpha. */
static int parse_int(const char *s, size_t n, long *v, int *zpad)
{
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n || n - i > 9)
        return 0;
    *zpad = s[i] == '0' && n - i > 1;
    long x = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = neg ? -x : x;
    return 1;
}

static int is_letter(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* A sequence body x..y or x..y..incr: its first and last value, step and width. */
static int parse_seq(const char *s, size_t n, long *from, long *to, long *step, int *alpha, int *width)
{
    const char *d1 = NULL;
    for (size_t i = 0; i + 1 < n && !d1; i++)
        if (s[i] == '.' && s[i + 1] == '.')
            d1 = s + i;
    if (!d1)
        return 0;
    const char *y = d1 + 2, *end = s + n, *d2 = NULL;
    for (const char *p = y; p + 1 < end && !d2; p++)
        if (p[0] == '.' && p[1] == '.')
            d2 = p;
    size_t xl = (size_t)(d1 - s), yl = (size_t)((d2 ? d2 : end) - y);
    *step = 1;
    int z1 = 0, z2 = 0, z3 = 0;
    if (d2) {
        long st;
        if (!parse_int(d2 + 2, (size_t)(end - d2 - 2), &st, &z3))
            return 0;
        *step = st < 0 ? -st : st;
        if (*step == 0)
            *step = 1;
    }
    if (xl == 1 && yl == 1 && is_letter(s[0]) && is_letter(y[0])) {
        *alpha = 1;
        *from = (unsigned char)s[0];
        *to = (unsigned char)y[0];
        *width = 0;
        return 1;
    }
    *alpha = 0;
    if (!parse_int(s, xl, from, &z1) || !parse_int(y, yl, to, &z2))
        return 0;
    *width = z1 || z2 ? (int)(xl > yl ? xl : yl) : 0;
    return 1;
}

static void bx_expand(bx *b, const char *w, size_t n, int depth);

/* Expand pre + mid + post (one alternative) further, into b. */
static void bx_join(bx *b, const char *pre, size_t pl, const char *mid, size_t ml, const char *post, size_t sl,
                    int depth)
{
    if (b->err)
        return;
    size_t l = pl + ml + sl;
    char *s = sg_arena_alloc(b->a, l + 1);
    if (!s) {
        b->err = -2;
        return;
    }
    memcpy(s, pre, pl);
    memcpy(s + pl, mid, ml);
    memcpy(s + pl + ml, post, sl);
    s[l] = '\0';
    bx_expand(b, s, l, depth + 1);
}

static void bx_expand(bx *b, const char *w, size_t n, int depth)
{
    if (b->err)
        return;
    if (depth > BX_DEPTH) {
        b->err = -1;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (w[i] == '\\') {
            i++;
            continue;
        }
        if (w[i] == '$' || w[i] == '`') {
            size_t l = sgr_sx_expansion(w + i, n - i);
            if (l) {
                i += l - 1;                   /* ${...} is not a brace expansion */
                continue;
            }
        }
        if (w[i] != '{')
            continue;
        size_t close = group_end(w, n, i, '{', '}');
        if (close >= n)
            continue;                         /* not closed: maybe a later one is */
        /* a top-level comma: a list */
        const char *in = w + i + 1;
        size_t il = close - i - 1, parts = 0;
        int depth2 = 0;
        for (size_t j = 0; j < il; j++) {
            if (in[j] == '\\') {
                j++;
                continue;
            }
            if (in[j] == '$' || in[j] == '`') {
                size_t l = sgr_sx_expansion(in + j, il - j);
                if (l) {
                    j += l - 1;
                    continue;
                }
            }
            depth2 += in[j] == '{' ? 1 : in[j] == '}' ? -1 : 0;
            parts += depth2 == 0 && in[j] == ',';
        }
        const char *post = w + close + 1;
        size_t pl = n - close - 1;
        if (parts) {
            size_t start = 0;
            depth2 = 0;
            for (size_t j = 0; j <= il && !b->err; j++) {
                if (j < il && in[j] == '\\') {
                    j++;
                    continue;
                }
                if (j < il && (in[j] == '$' || in[j] == '`')) {
                    size_t l = sgr_sx_expansion(in + j, il - j);
                    if (l) {
                        j += l - 1;
                        continue;
                    }
                }
                if (j < il && in[j] != ',') {
                    depth2 += in[j] == '{' ? 1 : in[j] == '}' ? -1 : 0;
                    continue;
                }
                if (j < il && depth2)
                    continue;
                bx_join(b, w, i, in + start, j - start, post, pl, depth);
                start = j + 1;
            }
            return;
        }
        long from, to, step;
        int alpha, width;
        if (parse_seq(in, il, &from, &to, &step, &alpha, &width)) {
            long span = from <= to ? to - from : from - to;
            if ((size_t)(span / step) + 1 > b->max - b->n) {
                b->err = -1;
                return;
            }
            for (long v = from;; v += from <= to ? step : -step) {
                if ((from <= to && v > to) || (from > to && v < to) || b->err)
                    break;
                char num[32];
                size_t nl = 0;
                if (alpha) {
                    num[nl++] = (char)v;
                } else {
                    long a = v < 0 ? -v : v;
                    char dig[24];
                    size_t dl = 0;
                    do
                        dig[dl++] = (char)('0' + a % 10);
                    while ((a /= 10) && dl < sizeof dig);
                    if (v < 0)
                        num[nl++] = '-';
                    for (size_t z = dl + (v < 0); (int)z < width && nl < sizeof num - dl; z++)
                        num[nl++] = '0';
                    while (dl)
                        num[nl++] = dig[--dl];
                }
                bx_join(b, w, i, num, nl, post, pl, depth);
            }
            return;
        }
        /* not an expansion: look further, inside it too */
    }
    /* no (further) brace expansion: w is a word */
    if (n == 0)
        return;                               /* an empty word is dropped */
    if (b->n == b->max) {
        b->err = -1;
        return;
    }
    if ((b->bytes += n) > BX_BYTES) {
        b->err = -1;
        return;
    }
    b->words[b->n] = w;
    b->lens[b->n++] = (uint32_t)n;
}

int sgr_sx_braces(sg_arena *a, const char *w, size_t n, const char **words, uint32_t *lens, size_t max)
{
    bx b = { a, words, lens, 0, max, 0, 0 };
    /* a word with no brace expansion at all stands as it is: say so with 0 */
    bx_expand(&b, w, n, 0);
    if (b.err)
        return b.err;
    if (b.n == 1 && b.lens[0] == n && memcmp(b.words[0], w, n) == 0)
        return 0;
    return (int)b.n;
}

static int var_start(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int var_char(char ch)
{
    return var_start(ch) || (ch >= '0' && ch <= '9');
}

int sgr_sx_next_var(const char *w, size_t n, size_t *pos, const char **name, size_t *len)
{
    size_t i = *pos;
    while (i < n) {
        if (w[i] != '$' && w[i] != '`') {
            i++;
            continue;
        }
        size_t ext = sgr_sx_expansion(w + i, n - i);
        if (ext == 0) {
            i++;
            continue;
        }
        if (w[i] == '`' || (i + 1 < n && w[i + 1] == '(') || (i + 1 < n && w[i + 1] == '[')) {
            i += ext;                       /* a command, or arithmetic: $((x)) reads x
                                             * as a name too, but bash gives it no '$' */
            continue;
        }
        size_t k = i + 1, step;
        if (k < n && w[k] == '{') {
            k++;
            if (k < n && (w[k] == '!' || w[k] == '#') && k + 1 < n && var_start(w[k + 1]))
                k++;
            step = k - i;                   /* go on inside the braces */
        } else {
            step = ext;
        }
        if (k < n && var_start(w[k])) {
            size_t e = k;
            while (e < n && var_char(w[e]))
                e++;
            *name = w + k;
            *len = e - k;
            *pos = i + step;
            return 1;
        }
        i += step;
    }
    *pos = n;
    return 0;
}
