/* diag.c - compiler diagnostics: file:line:col: error: message (or warning:), the
 * source line, a caret under the span (STYLE 8); line numbers are computed lazily. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "comp.h"
#include "common/alloc.h"

static void build_lines(sgc_comp *c, sgc_source *s)
{
    if (s->lines)
        return;
    uint32_t n = 1;
    for (size_t i = 0; i < s->len; i++)
        if (s->text[i] == '\n')
            n++;
    s->lines = sg_malloc(sizeof(uint32_t) * n);
    if (!s->lines) {
        c->oom = 1;
        return;
    }
    s->nlines = 0;
    s->lines[s->nlines++] = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->text[i] == '\n')
            s->lines[s->nlines++] = (uint32_t)i + 1;
}

/* Line (1-based) of byte off in file f; 0 if unknown. */
uint32_t sgc_line_of(sgc_comp *c, uint32_t f, uint32_t off);
uint32_t sgc_line_of(sgc_comp *c, uint32_t f, uint32_t off)
{
    if (f >= c->nfiles)
        return 0;
    sgc_source *s = &c->files[f];
    build_lines(c, s);
    if (!s->lines)
        return 0;
    uint32_t lo = 0, hi = s->nlines;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (s->lines[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    return lo + 1;
}

/* One diagnostic, an error or a warning (only an error fails the compilation). */
static void vreport(sgc_comp *c, sgc_loc loc, int warning, const char *note, const char *fmt, va_list ap)
{
    char buf[2048];
    size_t n = 0;
    const char *what = warning ? "warning" : "error";
    if (warning)
        c->nwarnings++;
    else
        c->nerrors++;
    if (!c->opt || !c->opt->diag)
        return;
    if (loc.file < c->nfiles) {
        sgc_source *s = &c->files[loc.file];
        uint32_t line = sgc_line_of(c, loc.file, loc.off);
        uint32_t ls = line ? s->lines[line - 1] : 0;
        uint32_t col = loc.off - ls + 1;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s:%u:%u: %s: ", s->name, line, col, what);
        if (n < sizeof buf)
            n += (size_t)vsnprintf(buf + n, sizeof buf - n, fmt, ap);
        const char *lp = s->text + ls, *le = lp;
        while (le < s->text + s->len && *le != '\n')
            le++;
        if (n < sizeof buf && le - lp < 400) {
            n += (size_t)snprintf(buf + n, sizeof buf - n, "\n%.*s\n", (int)(le - lp), lp);
            for (uint32_t i = 0; i + 1 < col && n + 2 < sizeof buf; i++)
                buf[n++] = lp[i] == '\t' ? '\t' : ' ';
            uint32_t w = loc.len ? loc.len : 1;
            if (loc.off + w > (uint32_t)(le - s->text))
                w = (uint32_t)(le - s->text) > loc.off ? (uint32_t)(le - s->text) - loc.off : 1;
            for (uint32_t i = 0; i < w && n + 2 < sizeof buf; i++)
                buf[n++] = i ? '~' : '^';
            buf[n < sizeof buf ? n : sizeof buf - 1] = '\0';
        }
    } else {
        n += (size_t)snprintf(buf + n, sizeof buf - n, "shellgate: %s: ", what);
        if (n < sizeof buf)
            n += (size_t)vsnprintf(buf + n, sizeof buf - n, fmt, ap);
    }
    if (note && n < sizeof buf)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "\nnote: %s", note);
    buf[sizeof buf - 1] = '\0';
    c->opt->diag(c->opt->diag_ud, buf);
}

void sgc_error(sgc_comp *c, sgc_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, loc, 0, NULL, fmt, ap);
    va_end(ap);
}

void sgc_error_note(sgc_comp *c, sgc_loc loc, const char *note, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, loc, 0, note, fmt, ap);
    va_end(ap);
}

void sgc_warning_note(sgc_comp *c, sgc_loc loc, const char *note, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, loc, 1, note, fmt, ap);
    va_end(ap);
}

int sgc_diag_is_warning(const char *text)
{
    /* the first line is "NAME:LINE:COL: warning: ..." or "shellgate: warning: ...";
     * NAME is a file name, so look for the first ": error: " or ": warning: " */
    const char *nl = strchr(text, '\n');
    size_t n = nl ? (size_t)(nl - text) : strlen(text);
    for (size_t i = 0; i + 2 < n; i++) {
        if (text[i] != ':' || text[i + 1] != ' ')
            continue;
        if (n - i >= 9 && memcmp(text + i, ": error: ", 9) == 0)
            return 0;
        if (n - i >= 11 && memcmp(text + i, ": warning: ", 11) == 0)
            return 1;
    }
    return 0;
}

void sgc_oom(sgc_comp *c)
{
    if (!c->oom) {
        c->oom = 1;
        sgc_loc none = { UINT32_MAX, 0, 0 };
        sgc_error(c, none, "out of memory");
    }
}

unsigned sgc_edit_distance(const char *a, size_t an, const char *b, size_t bn)
{
    unsigned row[65];
    if (an > 64 || bn > 64)
        return 99;
    for (size_t j = 0; j <= bn; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= an; i++) {
        unsigned prev = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= bn; j++) {
            unsigned cur = row[j];
            unsigned best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[bn];
}
