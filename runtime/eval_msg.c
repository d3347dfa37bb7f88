/* eval_msg.c - the messages of a decision: rule templates parsed once into a
 * pool, their placeholders filled from the deciding segment. */
#include <string.h>
#include "eval_int.h"

/* ---- messages ---------------------------------------------------------------- */

/* The piece of a template at p (*p != 0): a placeholder "{name}", or literal
 * text up to the next '{' after p (a brace naming no placeholder is text).
 * Returns its length; *kind is PIECE_*. */
static size_t tmpl_next(const char *p, uint32_t *kind)
{
    const char *close = *p == '{' ? strchr(p, '}') : NULL;
    *kind = PIECE_TEXT;
    if (close) {
        size_t k = (size_t)(close - p - 1);
#define X(id, name) \
        if (*kind == PIECE_TEXT && k == sizeof(name) - 1 && memcmp(p + 1, name, k) == 0) \
            *kind = PIECE_##id;
        SGT_PLACEHOLDERS(X)
#undef X
    }
    if (*kind != PIECE_TEXT)
        return (size_t)(close + 1 - p);
    const char *q = strchr(p + 1, '{');
    return q ? (size_t)(q - p) : strlen(p);
}

/* The pieces of template tmpl into out[0..max): their number, or SIZE_MAX when
 * they do not fit. */
static size_t tmpl_parse(const char *tmpl, sgr_piece *out, size_t max)
{
    size_t np = 0;
    for (const char *p = tmpl; *p; np++) {
        if (np == max)
            return SIZE_MAX;
        uint32_t kind;
        size_t k = tmpl_next(p, &kind);
        out[np] = (sgr_piece){ p, (uint32_t)k, kind };
        p += k;
    }
    return np;
}

/* Messages are parsed for fill as they are first filled (tmpl_for), into
 * a pool of PIECES_MAX pieces made with the context; a template that finds no
 * room left (thousands of rules have decided) stays for the generic fill. */
#define PIECES_MAX ((size_t)1 << 14)

int sgr_msg_build_tmpls(sgr_ctx *c)
{
    c->tmpl = sg_calloc((size_t)c->t->nrules + 2, sizeof *c->tmpl);
    c->pieces = sg_malloc(sizeof *c->pieces * PIECES_MAX);
    return c->tmpl && c->pieces ? 0 : -1;
}

/* Template i (a rule's message, then the default's and DYN_MSG) parsed into the
 * pool the first time it is filled: a context that decides once parses one. */
const sgr_tmpl *sgr_msg_tmpl_for(sgr_ctx *c, uint32_t i, const char *text)
{
    sgr_tmpl *tp = &c->tmpl[i];
    if (tp->parsed)
        return tp;
    size_t n = tmpl_parse(text, c->pieces + c->npieces, PIECES_MAX - c->npieces);
    if (n == SIZE_MAX) {
        tp->parsed = -1;                /* what it wrote is left for the next one */
        return tp;
    }
    tp->len = strlen(text);
    tp->off = (uint32_t)c->npieces;
    tp->n = (uint32_t)n;
    c->npieces += n;
    tp->parsed = 1;
    return tp;
}

/* What a piece of kind `kind` (its own text s[0..len)) stands for in the message
 * of segment si (-1: none).  Without a segment, {program} and {subcommand} stay
 * as written. */
static inline __attribute__((always_inline)) sgr_sv piece_value(const sgr_ctx *c, uint32_t kind, const char *s,
                                                               uint32_t len, int32_t si, const char *rule_id,
                                                               const char *reason)
{
    const sgr_norm *nm = si >= 0 ? &c->res.norm[si] : NULL;
    sgr_sv v = { s, len };
    switch (kind) {
    case PIECE_TEXT: break;
    case PIECE_PROGRAM:
        if (nm) {
            const sgr_segment *sg = &c->res.cl.seg[si];
            /* a dynamic name, or one given by path (./configure), as written */
            if (sg->argc && ((sg->flags & SGR_SEG_DYNAMIC) || memchr(sg->argv[0].text, '/', sg->argv[0].len))) {
                v.s = sg->argv[0].text;
                v.len = sg->argv[0].len;
            } else {
                v = nm->prog;
            }
        }
        break;
    case PIECE_SUBCOMMAND:
        if (nm)
            v = nm->subcmd;
        break;
    case PIECE_OPTION: v = c->m_option; break;
    case PIECE_ARG: v = c->m_arg.s ? c->m_arg : c->m_path; break;
    case PIECE_PATH: v = c->m_path.s ? c->m_path : c->m_arg; break;
    case PIECE_RULE:
        v.s = rule_id;
        v.len = (uint32_t)strlen(rule_id);
        break;
    default:
        v.s = reason ? reason : "";
        v.len = (uint32_t)strlen(v.s);
        break;
    }
    if (!v.s)
        v.len = 0;
    return v;
}

/* A message being written in the arena. */
typedef struct msg_buf {
    char *out;
    size_t n, cap;
} msg_buf;

static inline __attribute__((always_inline)) int msg_add(sgr_ctx *c, msg_buf *m, sgr_sv v)
{
    if (m->n + v.len + 1 >= m->cap) {
        size_t nc = (m->n + v.len + 1) * 2;
        char *no = sg_arena_grow(&c->arena, m->out, m->cap, nc);
        if (!no)
            return -1;
        m->out = no;
        m->cap = nc;
    }
    if (v.len)
        memcpy(m->out + m->n, v.s, v.len);
    m->n += v.len;
    return 0;
}

/* Piece kind (its own text s[0..len)) added to m: {command} is {program}, then
 * " " and {subcommand} when the program's declaration says its first operand
 * names a subcommand (`subcommands`: 'git clone', not 'cat file'). */
static int add_piece(sgr_ctx *c, msg_buf *m, uint32_t kind, const char *s, uint32_t len, int32_t si,
                     const char *rule_id, const char *reason)
{
    if (kind != PIECE_COMMAND)
        return msg_add(c, m, piece_value(c, kind, s, len, si, rule_id, reason));
    if (si < 0)
        return msg_add(c, m, (sgr_sv){ s, len });
    const sgr_norm *nm = &c->res.norm[si];
    if (msg_add(c, m, piece_value(c, PIECE_PROGRAM, s, len, si, rule_id, reason)) < 0)
        return -1;
    const sgt_progspec *ps = nm->prog.len ? sgr_table_progspec(c->t, nm->prog.s, nm->prog.len) : NULL;
    if (!ps || !(ps->flags & SGT_PROG_SUBCOMMANDS) || !nm->subcmd.s || !nm->subcmd.len)
        return 0;
    return msg_add(c, m, (sgr_sv){ " ", 1 }) < 0 ? -1 : msg_add(c, m, nm->subcmd);
}

/* Fill the placeholders of tmpl ({program} {subcommand} {command} {option} {arg}
 * {path} {rule} {reason}) for segment si (-1: none); tp: tmpl parsed (tmpl_for), NULL
 * or unparsed (a hook's message, or no room was left): read here piece by piece,
 * the same way.  Out of memory: tmpl as it is. */
const char *sgr_msg_fill(sgr_ctx *c, const char *tmpl, const sgr_tmpl *tp, int32_t si, const char *rule_id,
                         const char *reason)
{
    int parsed = tp && tp->parsed > 0;
    msg_buf m = { NULL, 0, (parsed ? tp->len : strlen(tmpl)) + 256 };
    if (!(m.out = sg_arena_alloc(&c->arena, m.cap)))
        return tmpl;
    if (parsed) {
        for (const sgr_piece *pc = c->pieces + tp->off, *end = pc + tp->n; pc < end; pc++)
            if (add_piece(c, &m, pc->kind, pc->s, pc->len, si, rule_id, reason) < 0)
                return tmpl;
    } else {
        for (const char *p = tmpl; *p;) {
            uint32_t kind;
            size_t k = tmpl_next(p, &kind);
            if (add_piece(c, &m, kind, p, (uint32_t)k, si, rule_id, reason) < 0)
                return tmpl;
            p += k;
        }
    }
    m.out[m.n] = '\0';
    return m.out;
}
