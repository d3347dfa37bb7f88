/* diag.c - compiler diagnostics: file:line:col: error: message, the source line,
 * a caret under the span (STYLE 8); line numbers are computed lazily. */
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

static void vreport(sgc_comp *c, sgc_loc loc, const char *note, const char *fmt, va_list ap)
{
    char buf[2048];
    size_t n = 0;
    c->nerrors++;
    if (!c->opt || !c->opt->diag)
        return;
    if (loc.file < c->nfiles) {
        sgc_source *s = &c->files[loc.file];
        uint32_t line = sgc_line_of(c, loc.file, loc.off);
        uint32_t ls = line ? s->lines[line - 1] : 0;
        uint32_t col = loc.off - ls + 1;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s:%u:%u: error: ", s->name, line, col);
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
        n += (size_t)snprintf(buf + n, sizeof buf - n, "shellgate: error: ");
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
    vreport(c, loc, NULL, fmt, ap);
    va_end(ap);
}

void sgc_error_note(sgc_comp *c, sgc_loc loc, const char *note, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, loc, note, fmt, ap);
    va_end(ap);
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
