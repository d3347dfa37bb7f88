/* shparse.c - POSIX sh / bash command-line parser: one line becomes flat segments (shparse.h). */
#include "shparse.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A hand-written recursive-descent parser in one pass over the bytes.  Words are
 * lexed on demand; $(...), <(...) and the like are parsed inline by recursing into
 * the list parser, so their commands become segments as soon as they are seen.
 * A simple command reserves its segment slot before its words are read, which is
 * how nested segments get a parent index smaller than their own.
 *
 * Recursion: every construct that can recurse (compound commands, $(...), `...`,
 * <(...), ${...}, $((...))) goes through enter(), which refuses nesting deeper than
 * lim->max_depth (capped at HARD_DEPTH), so hostile input cannot exhaust the stack.
 *
 * Choices the header leaves open (documented here, pinned by tests/shparse/):
 * - segment.depth counts substitution levels ($(), ``, <(), heredoc, script): it
 *   goes up exactly when parent changes.  Subshells and compound commands do not
 *   change depth; they set SUBSHELL / CONTROL / FUNCDEF instead.
 * - Words of compound-command headers (`for x in WORDS`, `case WORD in`, case
 *   patterns, `for ((...))`) belong to no segment: commands nested in them get
 *   parent = the parent of the list the compound sits in (-1 at top level).
 * - Redirections after a compound command (`{ ls; } >out`, `done <f`) are appended
 *   to every segment at the compound's depth inside it, so a pack sees the write
 *   on each command that can perform it.
 * - A compound command that is an element of a pipeline (`curl x | (sh)`) lends its
 *   pipeline id and position to the segments inside it whose own pipeline has
 *   length 1; inner multi-command pipelines keep their own ids.
 * - connector is the operator that follows the simple command in its own list
 *   (a newline counts as ';'); nothing is recorded after a compound command.
 * - An unquoted \r separates commands like a newline (bash would glue it into the
 *   word; splitting can only show more commands), but does not start heredoc bodies.
 * - `[[ ... ]]` and `(( ... ))` become segments whose argv starts with "[[" / "((".
 * - Heredoc bodies are stored after backslash processing (\$ \` \\ \newline) with
 *   expansions verbatim; quoted-delimiter bodies verbatim.  <<- strips leading tabs.
 *   The delimiter line is found as bash finds it (heredoc_lines), and a \r is a
 *   byte of the delimiter word.  Commands in a body's $(...) get nest HEREDOC and
 *   are moved to follow the segment owning the heredoc.
 * - `>&word` with a non-numeric literal word is stored as BOTH (bash: &>word).
 * - What bash evaluates as code in values (arithmetic, NAME operands, prompts) is
 *   read as it is lexed and, for variables, at the end of the parse ("code in
 *   values"); an unquoted $IFS splits its word into fields; a line that changes
 *   IFS makes its SPLITS segments dynamic; fork bombs are found from the functions
 *   the line defines (fork_code). */

#define HARD_DEPTH 200u

typedef struct ctx {
    int32_t parent;   /* parent of the segments created in this list */
    uint8_t nest;     /* sgr_nest_kind of those segments */
    uint16_t depth;   /* their depth */
    uint32_t segflags;/* SGR_SEG_* every segment here inherits */
} ctx;

typedef struct hd_pending {
    const char *mark;     /* delimiter text: unique pointer, placeholder in target */
    uint32_t dlen;
    uint8_t quoted, strip;
    uint32_t from;        /* first segment index that may hold the redirection */
    ctx hc;               /* list the redirection was written in */
    sgr_span span;        /* the operator and delimiter, for errors */
} hd_pending;

enum tok_kind {
    T_EOF, T_NL, T_CR, T_SEMI, T_DSEMI, T_SEMIAMP, T_DSEMIAMP, T_AMP, T_AND, T_OR,
    T_PIPE, T_PIPEAMP, T_LPAREN, T_RPAREN, T_REDIR, T_WORD
};

typedef struct tok {
    int kind;
    size_t start, len;    /* for T_REDIR: fd digits + operator */
} tok;

typedef struct vec {
    void *p;
    uint32_t n, cap;
} vec;

/* Code bash finds in values (see "code in values" below): a variable whose value
 * it evaluates, and a text to read as the code it is. */
enum ref_kind {
    REF_ARITH,    /* the value is an arithmetic expression: `$((x))`, `[[ $x -eq 1 ]]` */
    REF_NAME,     /* the value is a variable name, subscript included: `${!x}` */
    REF_PROMPT,   /* the value is prompt-expanded: `${x@P}` */
    REF_OUTPUT    /* no variable: a command's output is evaluated as arithmetic */
};
enum scan_mode {
    SC_ARITH,     /* an arithmetic expression (let, [[ -eq ]], declare -i values) */
    SC_NAME,      /* a NAME operand (test -v, read, unset, printf -v, declare NAME=) */
    SC_PROMPT,    /* a prompt string (${x@P}) */
    SC_SCRIPT,    /* a command string bash evaluates (mapfile -C) */
    SC_WORDS      /* a compound array assignment's words (declare -a a='(...)') */
};
typedef struct vref {
    const char *name;     /* not NUL-terminated; NULL for REF_OUTPUT */
    uint32_t nlen;
    int32_t owner;        /* the segment that evaluates it, -1 for none (a header) */
    uint8_t kind;         /* ref_kind */
} vref;
typedef struct vscan {
    const char *text;
    uint32_t len;
    int32_t owner;
    uint8_t mode;         /* scan_mode */
    sgr_span span;        /* the word it came from */
} vscan;
/* A command in the body of a function the line defines (for fork bombs). */
typedef struct vcall {
    const char *fn, *callee;  /* the function, the command's program word */
    uint32_t fnlen, clen;
    int32_t seg;
    uint8_t spawn;        /* it runs in a new process: pipeline, &, ( ), $( ) */
} vcall;
typedef struct codeq {
    vec refs, scans;      /* vref, vscan */
    vec funcs;            /* vcall with callee NULL: the functions defined */
    vec calls;            /* vcall */
} codeq;

typedef struct parser {
    sg_arena *a;
    sgr_cmdline *cl;
    const sgr_sh_limits *lim;
    uint32_t maxdepth;
    const char *s;        /* current input: s[pos..end) */
    size_t end, pos;
    char *dup;            /* a copy of the whole input s that the texts of words
                           * read by lex_simple_word point into, or NULL */
    int ovr;              /* spans are all ospan (nested scripts, `...`, <<- bodies) */
    sgr_span ospan;
    char *buf;            /* word-building stack; use offsets, it moves when grown */
    size_t bcap, blen;
    char *tpool;          /* free part of the chunk text_dup cuts word texts from */
    size_t tleft;
    hd_pending *hd;       /* heredocs waiting for their body; [hd_base, hd_n) is */
    uint32_t hd_n, hd_cap, hd_base; /* the current substitution level's share */
    uint32_t seg0;        /* segments before it were there before this parse (a
                           * nested script's line): they never move */
    int32_t *track[8];    /* indices of segments still being built while heredoc
                           * bodies are read (a newline inside [[ ]]): move_tail
                           * keeps them pointing at the same segment */
    uint32_t ntrack;
    sgr_segment *seg0v;   /* room for cl's first SEG_CAP0 segments, or NULL */
    uint32_t rdepth;
    uint32_t in_comsub;   /* $(...) / <(...) levels open around pos: bash's rule for a
                           * heredoc line that starts with the delimiter and has a ')' */
    const char *kw_s;     /* keyword_at's last answer: kw, for the word at */
    size_t kw_pos, kw_end;/* kw_s[kw_pos] in the input that ends at kw_end */
    int kw;
    uint32_t arith;       /* > 0 while lexing text bash evaluates as arithmetic */
    int split_ok;         /* lexing an argv word of a simple command: field splitting */
    int unq_exp;          /* ... and it held an unquoted expansion */
    vec pieces;           /* split_piece's fields of the word being lexed */
    vec split;            /* sgr_word: the fields of the last word lexed, when its
                           * unquoted $IFS split it (parse_simple takes them) */
    int split_done;       /* ... it did */
    int ifs_set;          /* an expansion or arithmetic on the line assigns IFS */
    uint8_t refkind;      /* ref_kind of the $NAME expansions lexed now (value scans) */
    codeq *q;             /* where refs and scans go (never NULL while parsing) */
    int err;              /* 0, -1 syntax/limit, -2 out of memory */
    const char *msg;
    sgr_span espan;
} parser;

/* terminators a list may stop at */
enum {
    TM_RPAREN = 1 << 0, TM_CASE = 1 << 1, TM_THEN = 1 << 2, TM_ELIF = 1 << 3,
    TM_ELSE = 1 << 4, TM_FI = 1 << 5, TM_DO = 1 << 6, TM_DONE = 1 << 7,
    TM_ESAC = 1 << 8, TM_RBRACE = 1 << 9
};

/* Reserved words: the enum, keyword_in's compares and kwlen_tab (which lengths a
 * reserved word starting with a given byte has) all come from this list.  X(name, text, a) gets a of
 * KEYWORDS(X, a) passed through. */
#define KEYWORDS(X, a) \
    X(IF, "if", a) X(THEN, "then", a) X(ELIF, "elif", a) X(ELSE, "else", a)          \
    X(FI, "fi", a) X(WHILE, "while", a) X(UNTIL, "until", a) X(DO, "do", a)          \
    X(DONE, "done", a) X(FOR, "for", a) X(SELECT, "select", a) X(CASE, "case", a)    \
    X(ESAC, "esac", a) X(FUNCTION, "function", a) X(LBRACE, "{", a)                 \
    X(RBRACE, "}", a) X(BANG, "!", a) X(DLBRACK, "[[", a) X(IN, "in", a)

enum kw {
    KW_NONE,
#define X(name, text, a) KW_##name,
    KEYWORDS(X, 0)
#undef X
};

#define TRY(e) do { if ((e) < 0) return -1; } while (0)
#define INHERIT (SGR_SEG_CONTROL | SGR_SEG_FUNCDEF)

static int parse_list(parser *p, const ctx *c, unsigned terms, int *count, tok *nt);
static int lex_word(parser *p, const ctx *c, int32_t owner, uint8_t nest, sgr_word *w);
static int lex_word_loop(parser *p, const ctx *c, int32_t owner, uint8_t nest, sgr_word *w);
static int dollar(parser *p, const ctx *c, int32_t owner, uint8_t nest, int in_dq,
                  uint32_t *fl);
static int backtick(parser *p, const ctx *c, int32_t owner, uint8_t nest, int in_dq,
                    uint32_t *fl);
static int dquote(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl);

/* ---- errors, spans, memory ------------------------------------------------ */

static sgr_span mkspan(const parser *p, size_t off, size_t len)
{
    if (p->ovr)
        return p->ospan;
    sgr_span sp = {(uint32_t)off, (uint32_t)len};
    return sp;
}

/* Record the first error (later ones are consequences); always returns -1. */
static int oom(parser *p)
{
    if (!p->err) {
        p->err = -2;
        p->msg = "out of memory";
        p->espan = mkspan(p, 0, 0);
    }
    return -1;
}

static int fail(parser *p, size_t off, size_t len, const char *fmt, ...)
{
    if (p->err)
        return -1;
    char tmp[200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof tmp)
        n = sizeof tmp - 1;
    char *m = sg_arena_strndup(p->a, tmp, (size_t)n);
    if (!m)
        return oom(p);
    if (off > p->end)
        off = p->end;
    if (len > p->end - off)
        len = p->end - off;
    p->err = -1;
    p->msg = m;
    p->espan = mkspan(p, off, len);
    return -1;
}

static int grow_buf(parser *p, size_t need)
{
    size_t nc = p->bcap * 2 + need + 64;
    char *nb = sg_arena_alloc(p->a, nc);
    if (!nb)
        return oom(p);
    if (p->blen)
        memcpy(nb, p->buf, p->blen);
    p->buf = nb;
    p->bcap = nc;
    return 0;
}

static int put(parser *p, char ch)
{
    if (p->blen + 1 >= p->bcap)
        TRY(grow_buf(p, 1));
    p->buf[p->blen++] = ch;
    return 0;
}

static int putn(parser *p, const char *src, size_t n)
{
    if (p->blen + n + 1 >= p->bcap)
        TRY(grow_buf(p, n + 1));
    memcpy(p->buf + p->blen, src, n);
    p->blen += n;
    return 0;
}

/* vgrow's slow path: v is full; give it room, then append as vgrow does. */
__attribute__((noinline))
static void *vgrow_room(parser *p, vec *v, size_t esz)
{
    uint32_t nc = v->cap ? v->cap * 2 : 8;   /* most commands: one allocation */
    void *q = sg_arena_alloc(p->a, (size_t)nc * esz);
    if (!q) {
        oom(p);
        return NULL;
    }
    if (v->n)
        memcpy(q, v->p, (size_t)v->n * esz);
    v->p = q;
    v->cap = nc;
    return (char *)v->p + esz * v->n++;
}

/* Append one element of esz bytes to v, not initialised: for elements the caller
 * writes in full (sgr_word: text, len, flags, span).  NULL (and p->err set) on OOM.
 * A push per word: the common case, room left, is inline. */
static inline void *vgrow(parser *p, vec *v, size_t esz)
{
    if (v->n < v->cap)
        return (char *)v->p + esz * v->n++;
    return vgrow_room(p, v, esz);
}

/* Append one zeroed element of esz bytes to v; NULL (and p->err set) on OOM. */
static void *vpush(parser *p, vec *v, size_t esz)
{
    void *e = vgrow(p, v, esz);
    if (e)
        memset(e, 0, esz);
    return e;
}

/* Record that owner's command evaluates the variable name[0..n) as kind; a
 * REF_OUTPUT (name NULL) that it evaluates a command's output.  The post-pass
 * (resolve_code) decides what that runs.  -1 on OOM. */
static int add_ref(parser *p, int32_t owner, const char *name, size_t n, int kind)
{
    vref *r = vgrow(p, &p->q->refs, sizeof *r);
    if (!r)
        return -1;
    r->name = name;
    r->nlen = (uint32_t)n;
    r->owner = owner;
    r->kind = (uint8_t)kind;
    return 0;
}

#define REF_NONE 0xff

/* The ref_kind a $NAME lexed now gets: arithmetic text evaluates what it expands
 * to; a value scan, what its mode says; elsewhere none. */
static int ref_kind_now(const parser *p)
{
    return p->arith ? REF_ARITH : p->refkind;
}

#define TEXT_CHUNK 256

/* Copy text[0..n) and a NUL into the arena.  Word texts are many and short, so
 * they are cut from a TEXT_CHUNK taken from the arena rather than allocated one by
 * one (char needs no alignment); longer ones get their own allocation.  Every
 * text has bytes of its own, so its address is unique: heredocs find their
 * redirection by it.  NULL on OOM. */
static char *text_dup(parser *p, const char *text, size_t n)
{
    if (n >= TEXT_CHUNK / 4)
        return sg_arena_strndup(p->a, text, n);
    if (n + 1 > p->tleft) {
        p->tpool = sg_arena_alloc(p->a, TEXT_CHUNK);
        if (!p->tpool) {
            p->tleft = 0;
            return NULL;
        }
        p->tleft = TEXT_CHUNK;
    }
    char *t = p->tpool;
    memcpy(t, text, n);
    t[n] = '\0';
    p->tpool += n + 1;
    p->tleft -= n + 1;
    return t;
}

/* Make *w from text[0..n) with flags and a span; the text is copied. */
static int mkword(parser *p, const char *text, size_t n, uint32_t flags, size_t off,
                  size_t len, sgr_word *w)
{
    char *t = text_dup(p, text, n);
    if (!t)
        return oom(p);
    w->text = t;
    w->len = (uint32_t)n;
    w->flags = flags;
    w->span = mkspan(p, off, len);
    return 0;
}

static int enter(parser *p, size_t off)
{
    if (++p->rdepth > p->maxdepth)
        return fail(p, off, 1, "nesting deeper than %u", p->maxdepth);
    return 0;
}

static void leave(parser *p)
{
    p->rdepth--;
}

/* ---- segments ------------------------------------------------------------- */

/* Segments a line's first vector has room for. */
#define SEG_CAP0 8

/* Make room for one more segment in cl; -1 on OOM. */
static int seg_room(sg_arena *a, sgr_cmdline *cl)
{
    if (cl->nseg < cl->cap)
        return 0;
    uint32_t nc = cl->cap ? cl->cap * 2 : SEG_CAP0;
    sgr_segment *ns = sg_arena_alloc(a, (size_t)nc * sizeof *ns);
    if (!ns)
        return -1;
    if (cl->nseg)
        memcpy(ns, cl->seg, (size_t)cl->nseg * sizeof *ns);
    cl->seg = ns;
    cl->cap = nc;
    return 0;
}

sgr_segment *sgr_sh_add_segment(sg_arena *a, sgr_cmdline *cl, const sgr_sh_limits *lim)
{
    static const sgr_sh_limits defl = SGR_SH_DEFAULT_LIMITS;
    if (!lim)
        lim = &defl;
    if (cl->nseg >= lim->max_segments || seg_room(a, cl) < 0)
        return NULL;
    sgr_segment *sg = &cl->seg[cl->nseg++];
    memset(sg, 0, sizeof *sg);
    sg->parent = -1;
    sg->nest = SGR_NEST_TOP;
    sg->connector = SGR_CONN_END;
    sg->pipe_len = 1;
    return sg;
}

/* seg_new's slow path: the segment limit, or a full vector. */
__attribute__((noinline))
static int seg_new_room(parser *p)
{
    sgr_cmdline *cl = p->cl;
    if (cl->nseg >= p->lim->max_segments)
        return fail(p, p->pos, 1, "more than %u commands", p->lim->max_segments);
    if (!cl->cap && p->seg0v) {
        cl->seg = p->seg0v;     /* alloc_buf's */
        cl->cap = SEG_CAP0;
        return 0;
    }
    if (seg_room(p->a, cl) < 0)
        return oom(p);
    return 0;
}

/* Reserve the next segment for a command of list c at pipeline plid, position k.
 * Inline, its slow path apart: once per command, and the common case needs no
 * register saved. */
static inline int seg_new(parser *p, const ctx *c, uint32_t plid, uint32_t k, int32_t *idx)
{
    sgr_cmdline *cl = p->cl;
    if (cl->nseg >= p->lim->max_segments || cl->nseg == cl->cap)
        TRY(seg_new_room(p));
    /* every field stored once (a memset of the whole would store most twice); the
     * padding is never read */
    sgr_segment *sg = &cl->seg[cl->nseg];
    sg->argv = NULL;
    sg->argc = 0;
    sg->assigns = NULL;
    sg->nassigns = 0;
    sg->values = NULL;
    sg->nvalues = 0;
    sg->redirs = NULL;
    sg->nredirs = 0;
    sg->pipeline = plid;
    sg->pipe_index = k;
    sg->pipe_len = 1;
    sg->parent = c->parent;
    sg->nest = c->nest;
    sg->connector = SGR_CONN_END;
    sg->depth = c->depth;
    sg->flags = c->segflags;
    sg->dyn_reason = NULL;
    sg->span.off = sg->span.len = 0;
    *idx = (int32_t)cl->nseg++;
    return 0;
}

static void set_conn(parser *p, int32_t idx, int conn)
{
    if (idx >= 0)
        p->cl->seg[idx].connector = (uint8_t)conn;
}

/* check_dynamic for a program word that has an expansion, a brace or a glob, or
 * is "eval".  Out of line: most are none, and its buffer is large. */
__attribute__((noinline))
static int check_dynamic_slow(parser *p, int32_t idx)
{
    sgr_segment *sg = &p->cl->seg[idx];
    const sgr_word *w = &sg->argv[0];
    const char *why = NULL;
    if (w->flags & SGR_W_UNKNOWN)
        why = "program name comes from an expansion";
    else if (w->flags & SGR_W_BRACE)
        why = "brace expansion in program name";
    else if (w->flags & SGR_W_GLOB)
        why = "glob in program name";
    else if (w->len == 4 && memcmp(w->text, "eval", 4) == 0) {
        sg->flags |= SGR_SEG_DYNAMIC;
        sg->dyn_reason = "eval runs a string as code";
        return 0;
    }
    if (!why)
        return 0;
    char tmp[160];
    int n = snprintf(tmp, sizeof tmp, "%s: %.*s%s", why, w->len > 80 ? 80 : (int)w->len,
                     w->text, w->len > 80 ? "..." : "");
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof tmp)
        n = sizeof tmp - 1;
    char *r = sg_arena_strndup(p->a, tmp, (size_t)n);
    if (!r)
        return oom(p);
    sg = &p->cl->seg[idx];
    sg->flags |= SGR_SEG_DYNAMIC;
    sg->dyn_reason = r;
    return 0;
}

/* Mark segment idx DYNAMIC when its program word is not known statically. */
static inline int check_dynamic(parser *p, int32_t idx)
{
    const sgr_segment *sg = &p->cl->seg[idx];
    if (!sg->argc)
        return 0;
    const sgr_word *w = &sg->argv[0];
    if (!(w->flags & (SGR_W_UNKNOWN | SGR_W_BRACE | SGR_W_GLOB))
        && !(w->len == 4 && memcmp(w->text, "eval", 4) == 0))
        return 0;
    return check_dynamic_slow(p, idx);
}

/* Append redirections r[0..n) to every segment in [start, nseg) at depth. */
static int attach_redirs(parser *p, uint32_t start, uint16_t depth, const sgr_redir *r,
                         uint32_t n)
{
    if (!n)
        return 0;
    for (uint32_t j = start; j < p->cl->nseg; j++) {
        sgr_segment *sg = &p->cl->seg[j];
        if (sg->depth != depth)
            continue;
        sgr_redir *nr = sg_arena_alloc(p->a, (sg->nredirs + n) * sizeof *nr);
        if (!nr)
            return oom(p);
        if (sg->nredirs)
            memcpy(nr, sg->redirs, sg->nredirs * sizeof *nr);
        memcpy(nr + sg->nredirs, r, n * sizeof *nr);
        sg->redirs = nr;
        sg->nredirs += n;
    }
    return 0;
}

/* Move segments [n0, nseg) to right after owner and its descendants, fixing parent
 * indices.  Used for heredoc bodies, which are read after later commands exist.
 * An owner before seg0 (no segment holds the heredoc, as in `case x in esac <<E`,
 * so owner is the nested script's parent) already has every segment from seg0 on
 * as a descendant: nothing moves, so sgr_sh_parse_nested's rollback to seg0 drops
 * exactly the script's segments and no earlier command of the line. */
/* Where segment index x is after move_tail moved [n0, n0 + k) to i. */
static int32_t moved_index(int32_t x, uint32_t i, uint32_t n0, uint32_t k)
{
    if (x >= (int32_t)n0 && x < (int32_t)(n0 + k))
        return x - (int32_t)(n0 - i);
    if (x >= (int32_t)i && x < (int32_t)n0)
        return x + (int32_t)k;
    return x;
}

static int move_tail(parser *p, int32_t owner, uint32_t n0)
{
    sgr_cmdline *cl = p->cl;
    uint32_t n1 = cl->nseg, k = n1 - n0;
    if (!k || owner < (int32_t)p->seg0)
        return 0;
    uint32_t i = (uint32_t)owner + 1;
    /* descendants of owner are contiguous after it: their parent lies in [owner, i) */
    while (i < n0 && cl->seg[i].parent >= owner && cl->seg[i].parent < (int32_t)i)
        i++;
    if (i == n0)
        return 0;
    sgr_segment *tmp = sg_arena_alloc(p->a, k * sizeof *tmp);
    if (!tmp)
        return oom(p);
    memcpy(tmp, &cl->seg[n0], k * sizeof *tmp);
    memmove(&cl->seg[i + k], &cl->seg[i], (n0 - i) * sizeof *tmp);
    memcpy(&cl->seg[i], tmp, k * sizeof *tmp);
    for (uint32_t j = i; j < n1; j++)
        cl->seg[j].parent = moved_index(cl->seg[j].parent, i, n0, k);
    /* and every index the analysis of code in values holds */
    for (uint32_t j = 0; j < p->q->refs.n; j++)
        ((vref *)p->q->refs.p)[j].owner = moved_index(((vref *)p->q->refs.p)[j].owner, i, n0, k);
    for (uint32_t j = 0; j < p->q->scans.n; j++)
        ((vscan *)p->q->scans.p)[j].owner = moved_index(((vscan *)p->q->scans.p)[j].owner, i, n0, k);
    for (uint32_t j = 0; j < cl->nvars; j++)
        cl->vars[j].seg = moved_index(cl->vars[j].seg, i, n0, k);
    for (uint32_t j = 0; j < p->q->calls.n; j++)
        ((vcall *)p->q->calls.p)[j].seg = moved_index(((vcall *)p->q->calls.p)[j].seg, i, n0, k);
    for (uint32_t j = 0; j < p->ntrack; j++)
        *p->track[j] = moved_index(*p->track[j], i, n0, k);
    return 0;
}

/* ---- tokens --------------------------------------------------------------- */

/* Byte classes.  The lexer asks "is this byte one of ..." for nearly every byte of
 * the line; one lookup in a 256-entry table answers it.  The table is computed at
 * compile time from the predicates below, which stay the one definition of each
 * class (an argument c is a byte value 0..255). */
#define IS_BLANK(c)  ((c) == ' ' || (c) == '\t')
/* ends an unquoted word (is_meta) */
#define IS_META(c)   (IS_BLANK(c) || (c) == '\n' || (c) == '\r' || (c) == ';' || (c) == '&' \
                      || (c) == '|' || (c) == '(' || (c) == ')' || (c) == '<' || (c) == '>')
#define IS_DIGIT(c)  ((c) >= '0' && (c) <= '9')
#define IS_NAME1(c)  (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || (c) == '_')
/* quoting and expansion: a word holding one is not a literal (lit_len) */
#define IS_QUOTE(c)  ((c) == '\'' || (c) == '"' || (c) == '\\' || (c) == '$' || (c) == '`')
/* lex_word's cases that change its state whatever the state is */
#define IS_WSTATE(c) ((c) == '*' || (c) == '?' || (c) == '[' || (c) == '{')

enum {
    C_META  = 1 << 0,   /* IS_META */
    C_SKIP  = 1 << 1,   /* skip_blanks must look at it: blank, '\\', '#' */
    C_DIGIT = 1 << 2,
    C_NAME1 = 1 << 3,   /* may start a NAME */
    C_NAME  = 1 << 4,   /* may continue a NAME */
    C_LIT   = 1 << 5,   /* part of a literal word: neither meta nor quoting */
    C_PLAIN = 1 << 6,   /* lex_word only copies it, given no '[' or '{' is open and
                         * it is not the word's first byte (see lex_simple_word) */
    C_DQ    = 1 << 7    /* dquote treats it specially: '"' '\\' '$' '`' */
};

#define CCLASS(c) ((IS_META(c) ? C_META : 0)                                          \
                   | (IS_BLANK(c) || (c) == '\\' || (c) == '#' ? C_SKIP : 0)          \
                   | (IS_DIGIT(c) ? C_DIGIT : 0)                                       \
                   | (IS_NAME1(c) ? C_NAME1 | C_NAME : 0)                              \
                   | (IS_DIGIT(c) ? C_NAME : 0)                                        \
                   | (!IS_META(c) && !IS_QUOTE(c) ? C_LIT : 0)                         \
                   | (!IS_META(c) && !IS_QUOTE(c) && !IS_WSTATE(c) ? C_PLAIN : 0)      \
                   | ((c) == '"' || (c) == '\\' || (c) == '$' || (c) == '`' ? C_DQ : 0))
#define CC4(c)   CCLASS(c), CCLASS((c) + 1), CCLASS((c) + 2), CCLASS((c) + 3)
#define CC16(c)  CC4(c), CC4((c) + 4), CC4((c) + 8), CC4((c) + 12)
#define CC64(c)  CC16(c), CC16((c) + 16), CC16((c) + 32), CC16((c) + 48)
static const uint8_t cclass_tab[256] = { CC64(0), CC64(64), CC64(128), CC64(192) };
#undef CCLASS

/* kwlen_tab[c]: bit n set when a reserved word of n bytes starts with byte c, so
 * most command words (git, grep, ls) are found to be none by one lookup, and most
 * of the rest (find, cat, sort) once their length is known.  (text[0] of a
 * literal is a constant to GCC and Clang.) */
#define KW_LENBIT(name, text, c) | ((c) == (unsigned char)(text)[0] ? 1u << (sizeof text - 1) : 0)
#define CCLASS(c) (0 KEYWORDS(KW_LENBIT, c))
static const uint16_t kwlen_tab[256] = { CC64(0), CC64(64), CC64(128), CC64(192) };
#undef CCLASS
#undef KW_LENBIT
#undef CC64
#undef CC16
#undef CC4
#define KW_SHORT(name, text, a) _Static_assert(sizeof text - 1 < 16, "kwlen_tab: " text);
KEYWORDS(KW_SHORT, 0)
#undef KW_SHORT

static unsigned cclass(char ch)
{
    return cclass_tab[(unsigned char)ch];
}

static int is_meta(char ch)
{
    return (cclass(ch) & C_META) != 0;
}

static int is_name_start(char ch)
{
    return (cclass(ch) & C_NAME1) != 0;
}

static int is_name_char(char ch)
{
    return (cclass(ch) & C_NAME) != 0;
}

/* Skip blanks, backslash-newline and a comment (# at a token start) on this line. */
static void skip_blanks(parser *p)
{
    /* most calls find a word or operator at once: one lookup decides */
    while (p->pos < p->end && (cclass(p->s[p->pos]) & C_SKIP)) {
        char ch = p->s[p->pos];
        if (ch == ' ' || ch == '\t')
            p->pos++;
        else if (ch == '\\' && p->pos + 1 < p->end && p->s[p->pos + 1] == '\n')
            p->pos += 2;
        else if (ch == '#') {
            const char *nl = memchr(p->s + p->pos, '\n', p->end - p->pos);
            p->pos = nl ? (size_t)(nl - p->s) : p->end;
        } else
            break;
    }
}

/* Length of a redirection operator at s[i] (no fd digits), its kind in *kind; 0 if
 * none.  `<(` and `>(` are process substitutions, not redirections. */
static size_t redir_op(const parser *p, size_t i, int *kind)
{
    const char *s = p->s;
    size_t e = p->end;
#define AT(k, ch) (i + (k) < e && s[i + (k)] == (ch))
    if (AT(0, '&') && AT(1, '>')) {
        *kind = AT(2, '>') ? SGR_REDIR_BOTH_APPEND : SGR_REDIR_BOTH;
        return AT(2, '>') ? 3 : 2;
    }
    if (AT(0, '<')) {
        if (AT(1, '<')) {
            if (AT(2, '<')) { *kind = SGR_REDIR_HERESTRING; return 3; }
            *kind = SGR_REDIR_HEREDOC;
            return AT(2, '-') ? 3 : 2;
        }
        if (AT(1, '>')) { *kind = SGR_REDIR_RDWR; return 2; }
        if (AT(1, '&')) { *kind = SGR_REDIR_DUP_IN; return 2; }
        if (AT(1, '(')) return 0;
        *kind = SGR_REDIR_READ;
        return 1;
    }
    if (AT(0, '>')) {
        if (AT(1, '>')) { *kind = SGR_REDIR_APPEND; return 2; }
        if (AT(1, '|')) { *kind = SGR_REDIR_CLOBBER; return 2; }
        if (AT(1, '&')) { *kind = SGR_REDIR_DUP_OUT; return 2; }
        if (AT(1, '(')) return 0;
        *kind = SGR_REDIR_WRITE;
        return 1;
    }
#undef AT
    return 0;
}

/* peek for any next token: operators, fd digits, a comment or backslash-newline
 * first.  Out of line, so that peek's common path saves no registers. */
__attribute__((noinline))
static void peek_any(parser *p, tok *t)
{
    if (p->pos < p->end && (cclass(p->s[p->pos]) & C_SKIP))
        skip_blanks(p);
    const char *s = p->s;
    size_t i = p->pos, e = p->end;
    int kind;
    t->start = i;
    t->len = 1;
    if (i >= e) {
        t->kind = T_EOF;
        t->len = 0;
        return;
    }
    char ch = s[i], n1 = i + 1 < e ? s[i + 1] : 0, n2 = i + 2 < e ? s[i + 2] : 0;
    switch (ch) {
    case '\n': t->kind = T_NL; return;
    case '\r': t->kind = T_CR; return;
    case '(': t->kind = T_LPAREN; return;
    case ')': t->kind = T_RPAREN; return;
    case ';':
        if (n1 == ';') {
            t->kind = n2 == '&' ? T_DSEMIAMP : T_DSEMI;
            t->len = n2 == '&' ? 3 : 2;
        } else if (n1 == '&') {
            t->kind = T_SEMIAMP;
            t->len = 2;
        } else
            t->kind = T_SEMI;
        return;
    case '|':
        if (n1 == '|') { t->kind = T_OR; t->len = 2; }
        else if (n1 == '&') { t->kind = T_PIPEAMP; t->len = 2; }
        else t->kind = T_PIPE;
        return;
    case '&':
        if (n1 == '&') { t->kind = T_AND; t->len = 2; return; }
        if ((t->len = redir_op(p, i, &kind)) != 0) { t->kind = T_REDIR; return; }
        t->kind = T_AMP;
        t->len = 1;
        return;
    case '<': case '>':
        if ((t->len = redir_op(p, i, &kind)) != 0) { t->kind = T_REDIR; return; }
        t->kind = T_WORD;
        t->len = 0;
        return;
    }
    if (ch >= '0' && ch <= '9') {
        size_t j = i;
        while (j < e && s[j] >= '0' && s[j] <= '9')
            j++;
        size_t ol = (j < e && (s[j] == '<' || s[j] == '>')) ? redir_op(p, j, &kind) : 0;
        if (ol) {
            t->kind = T_REDIR;
            t->len = j - i + ol;
            return;
        }
    }
    t->kind = T_WORD;
    t->len = 0;
}

/* Look at the next token without consuming it (blanks and comments are skipped).
 * It is asked several times per word and per command, and the answer is most
 * often "blanks, then a word" or "the end": those cases are decided here, the
 * rest by peek_any.  A byte that is neither meta (the only bytes peek_any's
 * switch looks at), nor a digit (fd of a redirection), nor one skip_blanks would
 * skip is a word's. */
static void peek(parser *p, tok *t)
{
    const char *s = p->s;
    size_t i = p->pos, e = p->end;
    while (i < e && (s[i] == ' ' || s[i] == '\t'))
        i++;
    p->pos = i;
    t->start = i;
    t->len = 0;
    if (i >= e) {
        t->kind = T_EOF;
        return;
    }
    if (!(cclass(s[i]) & (C_META | C_DIGIT | C_SKIP))) {
        t->kind = T_WORD;
        return;
    }
    peek_any(p, t);
}

static int read_heredocs(parser *p);

/* Consume token t; after a real newline, read the pending heredoc bodies. */
static int consume(parser *p, const tok *t)
{
    p->pos = t->start + t->len;
    if (t->kind == T_NL && p->hd_n > p->hd_base)
        return read_heredocs(p);
    return 0;
}

/* linebreak -> (NEWLINE | CR)*   inline: most find none, and peek is inline */
static inline int skip_linebreaks(parser *p, tok *t)
{
    for (;;) {
        peek(p, t);
        if (t->kind != T_NL && t->kind != T_CR)
            return 0;
        TRY(consume(p, t));
    }
}

/* Text of token t for messages. */
static int tok_text(const parser *p, const tok *t, const char **txt)
{
    switch (t->kind) {
    case T_EOF: *txt = "end of input"; return 12;
    case T_NL: *txt = "newline"; return 7;
    case T_CR: *txt = "carriage return"; return 15;
    default: break;
    }
    size_t n = t->len;
    if (t->kind == T_WORD) {
        n = 0;
        while (t->start + n < p->end && n < 30 && !is_meta(p->s[t->start + n]))
            n++;
        if (!n)
            n = 1;
    }
    *txt = p->s + t->start;
    return (int)n;
}

static int unexpected(parser *p, const tok *t)
{
    const char *txt;
    int n = tok_text(p, t, &txt);
    if (t->kind == T_EOF)
        return fail(p, t->start, 0, "syntax error: unexpected end of input");
    return fail(p, t->start, t->len ? t->len : (size_t)n,
                "syntax error near unexpected token '%.*s'", n, txt);
}

/* Length of the word at pos if it is written without quoting or expansion (so it
 * can be a reserved word), else 0. */
static size_t lit_len(const parser *p)
{
    size_t i = p->pos;
    while (i < p->end && (cclass(p->s[i]) & C_LIT))
        i++;
    if (i < p->end && !is_meta(p->s[i]))
        return 0;                       /* stopped at quoting or expansion */
    return i - p->pos;
}

/* keyword_in for a word that a reserved word's first byte and length fit. */
__attribute__((noinline))
static int keyword_cmp(const char *w, size_t n)
{
    /* a compare per reserved word of that length, each of constant size: inline
     * loads, no memcmp call */
#define KW_IS(name, text, a) \
    if (n == sizeof text - 1 && memcmp(w, text, sizeof text - 1) == 0) \
        return KW_##name;
    KEYWORDS(KW_IS, 0)
#undef KW_IS
    return KW_NONE;
}

/* The reserved word w[0..n) is, or KW_NONE; w[0] may be any byte.  Inline up to
 * the first test, which rejects most command words. */
static inline int keyword_in(const char *w, size_t n)
{
    unsigned lens = kwlen_tab[(unsigned char)w[0]];
    if (n >= 16 || !(lens >> n & 1))
        return KW_NONE;                 /* no reserved word starts so: most words */
    return keyword_cmp(w, n);
}

/* The reserved word at pos (only meaningful in command position), or KW_NONE.
 * parse_list, parse_pipeline and parse_command ask in turn about the same command
 * word, so the last answer is kept in p->kw_*.  It is keyed by input, position and
 * end, which fix the answer: no input's bytes change while it is being parsed. */
static int keyword_at(parser *p)
{
    const char *s = p->s;
    size_t i = p->pos, e = p->end;
    unsigned lens;
    if (i >= e || !(lens = kwlen_tab[(unsigned char)s[i]]))
        return KW_NONE;                 /* no reserved word starts so: most words */
    if (p->kw_s == s && p->kw_pos == i && p->kw_end == e)
        return p->kw;
    int kw = KW_NONE;
    /* lit_len, except that a run of 16 bytes is longer than any reserved word
     * (lens has no bit 16), so the scan stops there */
    size_t m = e - i < 16 ? e - i : 16, n = 0;
    while (n < m && (cclass(s[i + n]) & C_LIT))
        n++;
    if (i + n == e || is_meta(s[i + n]))
        kw = keyword_in(s + i, n);
    p->kw_s = p->s;
    p->kw_pos = p->pos;
    p->kw_end = p->end;
    p->kw = kw;
    return kw;
}

/* NAME '(' ')' at pos: a function definition; *nl = length of NAME. */
static int funcdef_at(const parser *p, size_t *nl)
{
    size_t n = lit_len(p), i = p->pos + n;
    if (!n)
        return 0;
    while (i < p->end && (p->s[i] == ' ' || p->s[i] == '\t'))
        i++;
    if (i >= p->end || p->s[i] != '(')
        return 0;
    i++;
    while (i < p->end && (p->s[i] == ' ' || p->s[i] == '\t'))
        i++;
    if (i >= p->end || p->s[i] != ')')
        return 0;
    *nl = n;
    return 1;
}

/* Length of NAME in a NAME=... or NAME+=... word at pos (the '=' excluded), else 0. */
static size_t assign_len(const parser *p)
{
    size_t i = p->pos;
    if (i >= p->end || !is_name_start(p->s[i]))
        return 0;
    while (i < p->end && is_name_char(p->s[i]))
        i++;
    size_t n = i - p->pos;
    if (i < p->end && p->s[i] == '+')
        i++;
    return i < p->end && p->s[i] == '=' ? n : 0;
}

/* ---- words ---------------------------------------------------------------- */

/* Word [start, pos) whose text is buf[b0, blen): copy it into *w and pop the stack. */
static int word_finish(parser *p, size_t b0, size_t start, uint32_t fl, sgr_word *w)
{
    int r = mkword(p, p->buf + b0, p->blen - b0, fl, start, p->pos - start, w);
    p->blen = b0;
    return r;
}

/* squote -> "'" [^']* "'" */
static int squote(parser *p)
{
    size_t q = p->pos;
    const char *e = memchr(p->s + q + 1, '\'', p->end - q - 1);
    if (!e)
        return fail(p, q, p->end - q, "unterminated single quote");
    size_t n = (size_t)(e - (p->s + q + 1));
    TRY(putn(p, p->s + q + 1, n));
    p->pos = q + 2 + n;
    return 0;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static int put_utf8(parser *p, uint32_t v)
{
    char b[4];
    size_t n;
    if (v > 0x10FFFF)
        v = 0xFFFD;
    if (v < 0x80) { b[0] = (char)v; n = 1; }
    else if (v < 0x800) { b[0] = (char)(0xC0 | v >> 6); b[1] = (char)(0x80 | (v & 0x3F)); n = 2; }
    else if (v < 0x10000) {
        b[0] = (char)(0xE0 | v >> 12); b[1] = (char)(0x80 | ((v >> 6) & 0x3F));
        b[2] = (char)(0x80 | (v & 0x3F)); n = 3;
    } else {
        b[0] = (char)(0xF0 | v >> 18); b[1] = (char)(0x80 | ((v >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((v >> 6) & 0x3F)); b[3] = (char)(0x80 | (v & 0x3F)); n = 4;
    }
    return putn(p, b, n);
}

/* ansic -> "$'" (char | '\' escape)* "'"   decoded as bash does; a NUL ends the
 * value (bash truncates there), so word text never holds a NUL. */
static int ansic(parser *p, uint32_t *fl)
{
    size_t st = p->pos;
    int cut = 0;
    p->pos += 2;
    for (;;) {
        if (p->pos >= p->end)
            return fail(p, st, p->end - st, "unterminated $' quote");
        char ch = p->s[p->pos];
        if (ch == '\'') {
            p->pos++;
            break;
        }
        if (ch != '\\') {
            if (!cut)
                TRY(put(p, ch));
            p->pos++;
            continue;
        }
        if (p->pos + 1 >= p->end)
            return fail(p, st, p->end - st, "unterminated $' quote");
        char e = p->s[p->pos + 1];
        p->pos += 2;
        uint32_t v = 0;
        int utf = 0, have = 1;
        switch (e) {
        case 'a': v = 7; break;
        case 'b': v = 8; break;
        case 'e': case 'E': v = 27; break;
        case 'f': v = 12; break;
        case 'n': v = 10; break;
        case 'r': v = 13; break;
        case 't': v = 9; break;
        case 'v': v = 11; break;
        case '\\': case '\'': case '"': case '?': v = (unsigned char)e; break;
        case 'x': case 'u': case 'U': {
            int maxd = e == 'x' ? 2 : e == 'u' ? 4 : 8, d = 0;
            while (d < maxd && p->pos < p->end && hexval(p->s[p->pos]) >= 0) {
                v = v * 16 + (uint32_t)hexval(p->s[p->pos++]);
                d++;
            }
            if (!d)
                have = 0;
            utf = e != 'x';
            break;
        }
        case 'c':
            if (p->pos < p->end && p->s[p->pos] != '\'')
                v = (unsigned char)p->s[p->pos++] & 0x1F;
            else
                have = 0;
            break;
        default:
            if (e >= '0' && e <= '7') {
                v = (uint32_t)(e - '0');
                for (int d = 1; d < 3 && p->pos < p->end && p->s[p->pos] >= '0'
                                && p->s[p->pos] <= '7'; d++)
                    v = v * 8 + (uint32_t)(p->s[p->pos++] - '0');
                v &= 0xFF;
            } else
                have = 0;
        }
        if (!have) {
            /* unknown escape: kept as written */
            if (!cut) {
                TRY(put(p, '\\'));
                TRY(put(p, e));
            }
            continue;
        }
        if (v == 0)
            cut = 1;
        if (cut)
            continue;
        TRY(utf ? put_utf8(p, v) : put(p, (char)v));
    }
    *fl |= SGR_W_ANSIC | SGR_W_QUOTED;
    return 0;
}

/* Parse a nested list for $(...) / <(...) whose opener (len ol) is at pos; the
 * commands become segments with parent owner and the given nest kind. */
static int subst_list(parser *p, const ctx *c, int32_t owner, uint8_t nest, size_t ol,
                      const char *what)
{
    size_t st = p->pos;
    p->pos += ol;
    TRY(enter(p, st));
    ctx sub = {owner, nest, (uint16_t)(c->depth + 1), c->segflags & INHERIT};
    uint32_t hb = p->hd_base, ar = p->arith;
    uint8_t rk = p->refkind;
    p->hd_base = p->hd_n;
    p->in_comsub++;
    p->arith = 0;           /* the commands inside are commands */
    p->refkind = REF_NONE;
    int sok = p->split_ok, unq = p->unq_exp;
    p->split_ok = 0;
    int n = 0;
    tok t;
    TRY(parse_list(p, &sub, TM_RPAREN, &n, &t));
    p->split_ok = sok;
    p->unq_exp = unq;
    if (t.kind == T_EOF)
        return fail(p, st, p->end - st, "unterminated %s", what);
    if (t.kind != T_RPAREN)
        return unexpected(p, &t);
    /* heredocs still waiting at the ')' (`$(cat <<EOF)`) stay pending: bash 5.2 warns
     * and reads their bodies after the next newline outside, in order */
    p->hd_base = hb;
    p->in_comsub--;
    p->arith = ar;
    p->refkind = rk;
    p->pos++;
    leave(p);
    return 0;
}

/* cmdsub -> '$(' list ')' ; procsub -> ('<(' | '>(') list ')'   kept verbatim */
static int cmdsub(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl,
                  int proc)
{
    size_t st = p->pos, b0 = p->blen;
    if (p->arith)
        TRY(add_ref(p, owner, NULL, 0, REF_OUTPUT));
    TRY(subst_list(p, c, owner, proc ? SGR_NEST_PROCSUB : nest, 2, proc ? "<(" : "$("));
    p->blen = b0;
    TRY(putn(p, p->s + st, p->pos - st));
    *fl |= proc ? SGR_W_PROCSUB : SGR_W_CMDSUB;
    return 0;
}

/* 1 when the '(' whose body starts at i closes with "))": bash's test for $((...))
 * and ((...)) arithmetic versus $( (...) ) and ( (...) ); 0 when it closes with
 * ')' and something else; -1 when the input ends first. */
static int arith_prescan(const parser *p, size_t i)
{
    int depth = 0;
    while (i < p->end) {
        char ch = p->s[i];
        if (ch == '\\') {
            i += 2;
            continue;
        }
        if (ch == '\'' || ch == '"') {
            size_t j = i + 1;
            while (j < p->end && p->s[j] != ch) {
                if (ch == '"' && p->s[j] == '\\')
                    j++;
                j++;
            }
            if (j >= p->end)
                return -1;
            i = j + 1;
            continue;
        }
        if (ch == '(')
            depth++;
        else if (ch == ')') {
            if (depth == 0)
                return i + 1 < p->end && p->s[i + 1] == ')';
            depth--;
        }
        i++;
    }
    return -1;
}

/* ---- arithmetic ------------------------------------------------------------ */

/* What ends an arithmetic text (arith_text). */
enum { AT_DPAREN, AT_BRACKET, AT_BRACE, AT_END };

static int arith_text(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl,
                      size_t st, int term, const char *what);

/* A single quote in arithmetic text: bash ends it at the next ' as a quote, but
 * expands what is inside and removes no quote, so `(( 'a[$(rm x)]' ))` runs rm.
 * The inside is read as arithmetic text of its own. */
static int arith_squote(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl)
{
    size_t q = p->pos;
    const char *e = memchr(p->s + q + 1, '\'', p->end - q - 1);
    if (!e)
        return fail(p, q, p->end - q, "unterminated single quote");
    size_t en = (size_t)(e - p->s), oend = p->end;
    p->end = en;
    p->pos = q + 1;
    int r = arith_text(p, c, owner, nest, fl, q, AT_END, "'");
    p->end = oend;
    TRY(r);
    p->pos = en + 1;
    return 0;
}

/* arith -> (NAME | number | '(' arith ')' | '[' arith ']' | squote | dquote | dollar
 *          | backtick | '\' char | char)*
 * Text bash evaluates as an arithmetic expression, up to term: "))" (pos just
 * after the opening "(("), the ']' of $[ or of a subscript, the '}' of ${x:o:l}
 * (left for the caller), or the end of the input (a value).  It is read as bash
 * reads it: like double-quoted text, except that a single quote quotes nothing
 * (arith_squote); $(...) and `...` inside are commands (whose output is then
 * code: REF_OUTPUT), and every variable named, bare or by $, is one whose value
 * is evaluated (REF_ARITH).  A number's letters (0x1f, 16#ff) name nothing.
 * Nothing goes to the word stack that stays there. */
static int arith_text(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl,
                      size_t st, int term, const char *what)
{
    int paren = 0, brack = 0;
    p->arith++;
    for (;;) {
        if (p->pos >= p->end) {
            if (term == AT_END)
                break;
            return fail(p, st, p->end - st, "unterminated %s", what);
        }
        char ch = p->s[p->pos];
        switch (ch) {
        case '(':
            paren++;
            break;
        case ')':
            if (!paren && term == AT_DPAREN) {
                if (p->pos + 1 < p->end && p->s[p->pos + 1] == ')') {
                    p->pos += 2;
                    p->arith--;
                    return 0;
                }
                return fail(p, st, p->pos + 1 - st, "unterminated %s", what);
            }
            if (paren)
                paren--;
            break;
        case '[':
            brack++;
            break;
        case ']':
            if (!brack && term == AT_BRACKET) {
                p->pos++;
                p->arith--;
                return 0;
            }
            if (brack)
                brack--;
            break;
        case '}':
            if (term == AT_BRACE && !paren && !brack) {
                p->arith--;
                return 0;
            }
            break;
        case '$':
            TRY(dollar(p, c, owner, nest, 1, fl));
            continue;
        case '`':
            TRY(backtick(p, c, owner, nest, 1, fl));
            continue;
        case '"':
            TRY(dquote(p, c, owner, nest, fl));
            continue;
        case '\'':
            TRY(arith_squote(p, c, owner, nest, fl));
            continue;
        case '\\':
            if (p->pos + 1 < p->end)
                p->pos++;
            break;
        default:
            if (is_name_start(ch)) {
                size_t i = p->pos;
                while (i < p->end && is_name_char(p->s[i]))
                    i++;
                TRY(add_ref(p, owner, p->s + p->pos, i - p->pos, REF_ARITH));
                p->pos = i;
                continue;
            }
            if (ch >= '0' && ch <= '9') {
                size_t i = p->pos;
                while (i < p->end && (is_name_char(p->s[i]) || p->s[i] == '#' || p->s[i] == '@'))
                    i++;
                p->pos = i;
                continue;
            }
        }
        p->pos++;
    }
    p->arith--;
    return 0;
}

/* arith -> arith_text '))'   (pos just after the opening "((") */
static int scan_arith(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl,
                      size_t st, const char *what)
{
    return arith_text(p, c, owner, nest, fl, st, AT_DPAREN, what);
}

/* param -> '${' ['!' | '#'] (NAME | digits | special) ['[' arith ']'] ['@P']
 *          [':' arith | rest] '}'   kept verbatim.
 * A subscript and the offset and length of ${x:o:l} are arithmetic (arith_text);
 * the rest is text with quoting and expansions, up to the matching '}'.  ${!x}
 * uses x's value as a name (REF_NAME), ${x@P} prompt-expands it (REF_PROMPT);
 * in arithmetic the value of any ${x...} is code (ref_kind_now). */
static int param_sub(parser *p, const ctx *c, int32_t owner, uint8_t nest, int in_dq,
                     uint32_t *fl)
{
    size_t st = p->pos, b0 = p->blen;
    int depth = 1, bang = 0, k = ref_kind_now(p);
    TRY(enter(p, st));
    p->pos += 2;
    const char *s = p->s;
    size_t e = p->end;
    if (p->pos + 1 < e && (s[p->pos] == '!' || s[p->pos] == '#') && s[p->pos + 1] != '}') {
        bang = s[p->pos] == '!';
        p->pos++;
    }
    size_t ns = p->pos;
    if (p->pos < e && is_name_start(s[p->pos])) {
        while (p->pos < e && is_name_char(s[p->pos]))
            p->pos++;
    } else if (p->pos < e && s[p->pos] >= '0' && s[p->pos] <= '9') {
        while (p->pos < e && s[p->pos] >= '0' && s[p->pos] <= '9')
            p->pos++;
    } else if (p->pos < e && s[p->pos] && strchr("@*#?$!-", s[p->pos]))
        p->pos++;
    size_t nl = p->pos - ns;
    if (nl && k != REF_NONE)
        TRY(add_ref(p, owner, s + ns, nl, k));
    if (nl && bang)
        TRY(add_ref(p, owner, s + ns, nl, REF_NAME));
    if (nl && p->pos < e && s[p->pos] == '[') {
        p->pos++;
        TRY(arith_text(p, c, owner, nest, fl, st, AT_BRACKET, "${"));
    }
    if (nl && p->pos + 1 < e && s[p->pos] == '@' && s[p->pos + 1] == 'P')
        TRY(add_ref(p, owner, s + ns, nl, REF_PROMPT));
    if (nl && p->pos < e && s[p->pos] == ':'
        && !(p->pos + 1 < e && strchr("-=?+", s[p->pos + 1]) && s[p->pos + 1])) {
        p->pos++;
        TRY(arith_text(p, c, owner, nest, fl, st, AT_BRACE, "${"));
    }
    while (depth) {
        if (p->pos >= p->end)
            return fail(p, st, p->end - st, "unterminated ${");
        char ch = p->s[p->pos];
        switch (ch) {
        case '}':
            depth--;
            break;
        case '{':
            depth++;
            break;
        case '\\':
            if (p->pos + 1 < p->end)
                p->pos++;
            break;
        case '\'':
            if (in_dq)   /* POSIX: literal inside "${...}" */
                break;
            TRY(squote(p));
            continue;
        case '"':
            TRY(dquote(p, c, owner, nest, fl));
            continue;
        case '$':
            TRY(dollar(p, c, owner, nest, in_dq, fl));
            continue;
        case '`':
            TRY(backtick(p, c, owner, nest, in_dq, fl));
            continue;
        }
        p->pos++;
    }
    leave(p);
    p->blen = b0;
    TRY(putn(p, p->s + st, p->pos - st));
    *fl |= SGR_W_VAR;
    return 0;
}

/* old_arith -> '$[' arith ']'   (bash's deprecated $[...] arithmetic: one word,
 * blanks included) */
static int old_arith(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl)
{
    size_t st = p->pos, b0 = p->blen;
    TRY(enter(p, st));
    p->pos += 2;
    TRY(arith_text(p, c, owner, nest, fl, st, AT_BRACKET, "$["));
    leave(p);
    p->blen = b0;
    TRY(putn(p, p->s + st, p->pos - st));
    *fl |= SGR_W_ARITH;
    return 0;
}

/* dollar -> '$(' list ')' | '$((' arith '))' | '${' param '}' | "$'" ansic "'"
 *         | '$[' old_arith ']' | '$"' dq '"' | '$' NAME | '$' special | '$'   (literal) */
static int dollar(parser *p, const ctx *c, int32_t owner, uint8_t nest, int in_dq,
                  uint32_t *fl)
{
    size_t st = p->pos;
    if (st + 1 >= p->end) {
        p->pos++;
        return put(p, '$');
    }
    char n = p->s[st + 1];
    if (n == '(') {
        int ar = st + 2 < p->end && p->s[st + 2] == '(' ? arith_prescan(p, st + 3) : 0;
        if (ar < 0)
            return fail(p, st, p->end - st, "unterminated $((");
        if (ar > 0) {
            size_t b0 = p->blen;
            TRY(enter(p, st));
            p->pos += 3;
            TRY(scan_arith(p, c, owner, nest, fl, st, "$(("));
            leave(p);
            p->blen = b0;
            TRY(putn(p, p->s + st, p->pos - st));
            *fl |= SGR_W_ARITH;
            return 0;
        }
        return cmdsub(p, c, owner, nest, fl, 0);
    }
    if (n == '{')
        return param_sub(p, c, owner, nest, in_dq, fl);
    if (n == '[')
        return old_arith(p, c, owner, nest, fl);
    if (n == '\'' && !in_dq)
        return ansic(p, fl);
    if (n == '"' && !in_dq) {
        p->pos++;
        return dquote(p, c, owner, nest, fl);
    }
    int k = ref_kind_now(p);
    if (is_name_start(n)) {
        size_t i = st + 1;
        while (i < p->end && is_name_char(p->s[i]))
            i++;
        if (k != REF_NONE)
            TRY(add_ref(p, owner, p->s + st + 1, i - st - 1, k));
        TRY(putn(p, p->s + st, i - st));
        p->pos = i;
        *fl |= SGR_W_VAR;
        return 0;
    }
    if ((n >= '0' && n <= '9') || strchr("@*#?$!-", n)) {
        if (k != REF_NONE && ((n >= '0' && n <= '9') || n == '@' || n == '*'))
            TRY(add_ref(p, owner, p->s + st + 1, 1, k));
        TRY(putn(p, p->s + st, 2));
        p->pos += 2;
        *fl |= SGR_W_VAR;
        return 0;
    }
    p->pos++;
    return put(p, '$');
}

/* dquote -> '"' (char | '\' [$`"\\\n] | dollar | backtick)* '"' */
static int dquote(parser *p, const ctx *c, int32_t owner, uint8_t nest, uint32_t *fl)
{
    size_t q = p->pos;
    p->pos++;
    for (;;) {
        if (p->pos >= p->end)
            return fail(p, q, p->end - q, "unterminated double quote");
        char ch = p->s[p->pos];
        if (ch == '"') {
            p->pos++;
            break;
        }
        if (ch == '\\' && p->pos + 1 < p->end) {
            char n = p->s[p->pos + 1];
            if (n == '\n') {
                p->pos += 2;
                continue;
            }
            if (n == '$' || n == '`' || n == '"' || n == '\\') {
                TRY(put(p, n));
                p->pos += 2;
                continue;
            }
        } else if (ch == '$') {
            TRY(dollar(p, c, owner, nest, 1, fl));
            continue;
        } else if (ch == '`') {
            TRY(backtick(p, c, owner, nest, 1, fl));
            continue;
        }
        TRY(put(p, ch));
        p->pos++;
    }
    *fl |= SGR_W_QUOTED;
    return 0;
}

/* Saved input while parsing text that is not a slice of the current input. */
typedef struct input_save {
    const char *s;
    char *dup;
    size_t end, pos;
    int ovr;
    sgr_span ospan;
    uint32_t hd_base;
} input_save;

static void input_push(parser *p, input_save *sv, const char *s, size_t pos, size_t end,
                       int ovr, sgr_span ospan)
{
    sv->s = p->s; sv->dup = p->dup; sv->end = p->end; sv->pos = p->pos;
    sv->ovr = p->ovr; sv->ospan = p->ospan; sv->hd_base = p->hd_base;
    p->s = s; p->dup = NULL; p->pos = pos; p->end = end;
    if (ovr && !p->ovr) {
        p->ovr = 1;
        p->ospan = ospan;
    }
    p->hd_base = p->hd_n;
}

static void input_pop(parser *p, const input_save *sv)
{
    p->s = sv->s; p->dup = sv->dup; p->end = sv->end; p->pos = sv->pos;
    p->ovr = sv->ovr; p->ospan = sv->ospan; p->hd_base = sv->hd_base;
}

/* Parse text[0..n) as a complete list in context sub; spans are forced to ospan.
 * Used for `...` bodies. */
static int parse_text(parser *p, const ctx *sub, const char *text, size_t n, sgr_span ospan)
{
    input_save sv;
    input_push(p, &sv, text, 0, n, 1, ospan);
    /* bash parses a `...` body as a string of its own when it runs it: no
     * substitution is open around it there */
    uint32_t ic = p->in_comsub, ar = p->arith;
    uint8_t rk = p->refkind;
    p->in_comsub = 0;
    p->arith = 0;
    p->refkind = REF_NONE;
    int sok = p->split_ok, unq = p->unq_exp;
    p->split_ok = 0;
    int cnt = 0;
    tok t;
    TRY(parse_list(p, sub, 0, &cnt, &t));
    p->split_ok = sok;
    p->unq_exp = unq;
    if (t.kind != T_EOF)
        return unexpected(p, &t);
    if (p->hd_n > p->hd_base)
        TRY(read_heredocs(p));      /* the end of the text ends them (bash warns) */
    p->in_comsub = ic;
    p->arith = ar;
    p->refkind = rk;
    input_pop(p, &sv);
    return 0;
}

/* backtick -> '`' (char | '\' char)* '`'   body de-escaped (\\ \` \$, and \" in
 * double quotes) and parsed as a list; spans of its words are the backtick span. */
static int backtick(parser *p, const ctx *c, int32_t owner, uint8_t nest, int in_dq,
                    uint32_t *fl)
{
    size_t st = p->pos, i = st + 1, b0 = p->blen;
    while (i < p->end && p->s[i] != '`')
        i += (p->s[i] == '\\' && i + 1 < p->end) ? 2 : 1;
    if (i >= p->end)
        return fail(p, st, p->end - st, "unterminated backquote");
    size_t en = i;
    char *in = sg_arena_alloc(p->a, en - st);
    if (!in)
        return oom(p);
    size_t n = 0;
    for (size_t j = st + 1; j < en; j++) {
        char d = j + 1 < en ? p->s[j + 1] : 0;
        if (p->s[j] == '\\' && (d == '\\' || d == '`' || d == '$' || (in_dq && d == '"'))) {
            in[n++] = d;
            j++;
        } else
            in[n++] = p->s[j];
    }
    if (p->arith)
        TRY(add_ref(p, owner, NULL, 0, REF_OUTPUT));
    TRY(enter(p, st));
    ctx sub = {owner, nest, (uint16_t)(c->depth + 1), c->segflags & INHERIT};
    TRY(parse_text(p, &sub, in, n, mkspan(p, st, en + 1 - st)));
    leave(p);
    p->pos = en + 1;
    p->blen = b0;
    TRY(putn(p, p->s + st, p->pos - st));
    *fl |= SGR_W_CMDSUB;
    return 0;
}

/* Does an unquoted word end at i?  lex_word's stop condition: the end of input, or
 * an operator character that does not open a <(...) / >(...) inside the word. */
static inline int word_ends(const char *s, size_t e, size_t i)
{
    if (i >= e)
        return 1;
    char ch = s[i];
    if (!is_meta(ch))
        return 0;
    return !((ch == '<' || ch == '>') && i + 1 < e && s[i + 1] == '(');
}

static inline int word_ends_at(const parser *p, size_t i)
{
    return word_ends(p->s, p->end, i);
}

/* End of the run of C_PLAIN bytes at s[i..). */
static size_t plain_end(const parser *p, size_t i)
{
    while (i < p->end && (cclass(p->s[i]) & C_PLAIN))
        i++;
    return i;
}

/* Make *w the word written at s[off..off+len) whose text is the slice s[ts..ts+tn):
 * the same slice of dup with a NUL stored after it (see lex_simple_word), or a
 * copy when dup is NULL.  ovr and dup are p's, passed in so that callers keep them
 * in registers.  -1 on OOM. */
static inline int slice_word(parser *p, char *dup, int ovr, const char *s, size_t ts,
                             size_t tn, uint32_t fl, size_t off, size_t len, sgr_word *w)
{
    char *t;
    if (dup) {
        t = dup + ts;
        t[tn] = '\0';
    } else if (!(t = text_dup(p, s + ts, tn)))
        return oom(p);
    w->text = t;
    w->len = (uint32_t)tn;
    w->flags = fl;
    if (ovr)
        w->span = p->ospan;
    else {
        w->span.off = (uint32_t)off;
        w->span.len = (uint32_t)len;
    }
    return 0;
}

/* Most words are written as one plain run (-rf, src/x.c, HEAD~3) or as one quoted
 * string with nothing in it to decode ('a b', "a b").  Then the word's text is a
 * slice of the input, and needs no copy byte by byte through buf: it is the same
 * slice of p->dup, the input's copy, ended by a NUL written over the byte after
 * it.  That byte is the word's closing quote, or the blank or operator byte (or
 * the end) that ends an unquoted word, so it is in no other such word's text:
 * tokens do not overlap, nothing inside these words is lexed again, and none of
 * them starts with an operator byte.  (Other words' texts are built in buf and
 * copied, and everything else reads the input itself, never p->dup.)  Without
 * p->dup the slice is copied.
 * Returns 1 with *w made and pos past the word; 0 (nothing consumed) for any
 * other word, which lex_word's loop then reads; -1 on OOM.  The result is what the
 * loop would compute for the same word:
 * - C_PLAIN bytes are only copied while no '[' or '{' is open ('*' '?' '[' '{' are
 *   not C_PLAIN; ']' '}' ',' '.' matter only inside those), and '~' only as the
 *   first byte, where it gives TILDE as in the loop;
 * - squote copies the quoted bytes verbatim, and dquote does too for a body free
 *   of '\\', '$' and '`' (C_DQ); either marks the word QUOTED. */
static int lex_simple_word(parser *p, sgr_word *w)
{
    const char *s = p->s;
    size_t start = p->pos, ts, tn, e;
    uint32_t fl;
    char ch = s[start];
    if (cclass(ch) & C_PLAIN) {
        e = plain_end(p, start);
        ts = start;
        tn = e - start;
        fl = ch == '~' ? SGR_W_TILDE : 0;
    } else if (ch == '\'' || ch == '"') {
        size_t q = start + 1;
        if (ch == '\'') {
            const char *z = memchr(s + q, '\'', p->end - q);
            q = z ? (size_t)(z - s) : p->end;
        } else
            while (q < p->end && !(cclass(s[q]) & C_DQ))
                q++;
        if (q >= p->end || s[q] != ch)
            return 0;       /* unterminated, or something to decode: the loop */
        e = q + 1;
        ts = start + 1;
        tn = q - ts;
        fl = SGR_W_QUOTED;
    } else
        return 0;
    if (!word_ends_at(p, e))
        return 0;
    p->pos = e;
    TRY(slice_word(p, p->dup, p->ovr, s, ts, tn, fl, start, e - start, w));
    return 1;
}

/* word -> (literal | '\' char | squote | dquote | dollar | backtick | procsub)+
 * ending at an unquoted blank or operator character.  Commands found inside become
 * segments with parent owner (nest for $(...) and `...`). */
static int lex_word(parser *p, const ctx *c, int32_t owner, uint8_t nest, sgr_word *w)
{
    if (p->pos < p->end) {
        int r = lex_simple_word(p, w);
        if (r)
            return r < 0 ? -1 : 0;
    }
    return lex_word_loop(p, c, owner, nest, w);
}

/* lex_word for any word, byte by byte: what lex_word does for one that
 * lex_simple_word does not take (parse_simple calls it directly for those). */
/* One field of a word that an unquoted $IFS splits: its text buf[tb, te), its
 * bytes in the input [sb, se), its flags. */
typedef struct piece {
    size_t tb, te, sb, se;
    uint32_t flags;
} piece;

/* Length of an unquoted $IFS or ${IFS} at pos (bash splits the word there: with
 * IFS as bash starts, blank, tab and newline, the expansion is whitespace only,
 * so it separates fields and leaves nothing), or 0.  Sets p->ifs_set for an
 * expansion that may assign IFS (${IFS=...}, ${IFS:=...}). */
static size_t ifs_len(parser *p)
{
    const char *s = p->s + p->pos;
    size_t n = p->end - p->pos;
    if (n >= 4 && memcmp(s, "$IFS", 4) == 0 && !(n > 4 && is_name_char(s[4])))
        return 4;
    if (n >= 6 && memcmp(s, "${IFS}", 6) == 0)
        return 6;
    if (n >= 6 && memcmp(s, "${IFS", 5) == 0 && (s[5] == '=' || (s[5] == ':' && n > 6 && s[6] == '=')))
        p->ifs_set = 1;
    return 0;
}

/* Is the unquoted expansion at pos one of IFS that is not plain ($IFS, ${IFS}):
 * ${IFS:0:1}, ${IFS%?}, whose value, some of IFS's whitespace, splits the word at
 * run time where this parser cannot tell? */
static int ifs_other(const parser *p)
{
    const char *s = p->s + p->pos;
    size_t n = p->end - p->pos;
    return n > 5 && memcmp(s, "${", 2) == 0 && (memcmp(s + 2, "IFS", 3) == 0
                                                || (n > 6 && memcmp(s + 2, "!IFS", 4) == 0))
           && (n == 5 || !is_name_char(s[5]));
}

/* Hand the fields of the word that started at start, text from b0, to p->split:
 * each field a word, an unquoted empty one dropped (`${IFS}x` is one field). */
static int split_fields(parser *p, size_t b0, size_t start, uint32_t pbase, sgr_word *w)
{
    piece *pc = p->pieces.p;
    for (uint32_t k = pbase; k < p->pieces.n; k++) {
        if (pc[k].te == pc[k].tb && !(pc[k].flags & SGR_W_QUOTED))
            continue;
        sgr_word *f = vgrow(p, &p->split, sizeof *f);
        if (!f)
            return -1;
        TRY(mkword(p, p->buf + pc[k].tb, pc[k].te - pc[k].tb, pc[k].flags, pc[k].sb,
                   pc[k].se - pc[k].sb, f));
    }
    p->pieces.n = pbase;
    p->blen = b0;
    p->split_done = 1;
    /* *w is a placeholder: parse_simple puts the fields in its place */
    return mkword(p, "", 0, 0, start, p->pos - start, w);
}

static int lex_word_loop(parser *p, const ctx *c, int32_t owner, uint8_t nest, sgr_word *w)
{
    size_t start = p->pos, b0 = p->blen;
    uint32_t fl = 0;
    uint64_t bmark = 0;     /* per brace level: saw ',' or '..' */
    unsigned bdepth = 0;
    int bracket = 0;
    /* an argv word is split at an unquoted $IFS: the field so far */
    const int split = p->split_ok;
    uint32_t pbase = p->pieces.n;
    size_t fs = start, fb = b0;
    while (p->pos < p->end) {
        char ch = p->s[p->pos];
        if ((cclass(ch) & C_PLAIN) && !bdepth && !bracket && p->pos != start) {
            /* bytes that are only copied in this state (see lex_simple_word):
             * copy the whole run at once */
            size_t e = plain_end(p, p->pos);
            TRY(putn(p, p->s + p->pos, e - p->pos));
            p->pos = e;
            continue;
        }
        switch (ch) {
        case ' ': case '\t': case '\n': case '\r': case ';': case '&': case '|':
        case '(': case ')':
            goto done;
        case '<': case '>':
            if (p->pos + 1 < p->end && p->s[p->pos + 1] == '(') {
                TRY(cmdsub(p, c, owner, nest, &fl, 1));
                continue;
            }
            goto done;
        case '\\':
            if (p->pos + 1 >= p->end)
                break;      /* a trailing backslash is literal */
            if (p->s[p->pos + 1] == '\n') {
                p->pos += 2;    /* a line continuation quotes nothing: <<E\<nl>OF is <<EOF */
                continue;
            }
            TRY(put(p, p->s[p->pos + 1]));
            p->pos += 2;
            fl |= SGR_W_QUOTED;
            continue;
        case '\'':
            TRY(squote(p));
            fl |= SGR_W_QUOTED;
            continue;
        case '"':
            TRY(dquote(p, c, owner, nest, &fl));
            continue;
        case '$':
            if (split) {
                size_t n = ifs_len(p);
                if (n) {
                    piece *f = vgrow(p, &p->pieces, sizeof *f);
                    if (!f)
                        return -1;
                    *f = (piece){fb, p->blen, fs, p->pos, fl};
                    p->pos += n;
                    fs = p->pos;
                    fb = p->blen;
                    fl = 0;
                    bmark = 0;
                    bdepth = 0;
                    bracket = 0;
                    continue;
                }
                char d = p->pos + 1 < p->end ? p->s[p->pos + 1] : 0;
                /* an expansion ($'...' and $"..." are quotes, a lone $ a byte) */
                if (d && (strchr("({[@*#?$!-", d) || is_name_char(d)))
                    p->unq_exp = ifs_other(p) ? 2 : p->unq_exp ? p->unq_exp : 1;
            }
            TRY(dollar(p, c, owner, nest, 0, &fl));
            continue;
        case '`':
            if (split && !p->unq_exp)
                p->unq_exp = 1;
            TRY(backtick(p, c, owner, nest, 0, &fl));
            continue;
        case '*': case '?':
            fl |= SGR_W_GLOB;
            break;
        case '[':
            bracket = 1;
            break;
        case ']':
            if (bracket)
                fl |= SGR_W_GLOB;
            break;
        case '{':
            if (bdepth < 64)
                bmark &= ~((uint64_t)1 << bdepth);
            bdepth++;
            break;
        case ',':
            if (bdepth && bdepth <= 64)
                bmark |= (uint64_t)1 << (bdepth - 1);
            break;
        case '.':
            if (bdepth && bdepth <= 64 && p->pos + 1 < p->end && p->s[p->pos + 1] == '.')
                bmark |= (uint64_t)1 << (bdepth - 1);
            break;
        case '}':
            if (bdepth) {
                bdepth--;
                if (bdepth >= 64 || (bmark & ((uint64_t)1 << bdepth)))
                    fl |= SGR_W_BRACE;
            }
            break;
        case '~':
            if (p->pos == start)
                fl |= SGR_W_TILDE;
            break;
        }
        TRY(put(p, ch));
        p->pos++;
    }
done:
    if (p->pieces.n > pbase) {
        piece *f = vgrow(p, &p->pieces, sizeof *f);
        if (!f)
            return -1;
        *f = (piece){fb, p->blen, fs, p->pos, fl};
        return split_fields(p, b0, start, pbase, w);
    }
    return word_finish(p, b0, start, fl, w);
}

static int array_word(parser *p, const ctx *c, int32_t owner, uint32_t *fl);

/* assignment -> NAME ['+'] '=' word | NAME ['+'] '=' '(' word* ')'   (arrays kept
 * verbatim; the commands in their words are still parsed) */
static int lex_assign(parser *p, const ctx *c, int32_t owner, size_t nl, sgr_word *w)
{
    size_t start = p->pos, eq = start + nl + (p->s[start + nl] == '+' ? 1 : 0);
    if (eq + 1 >= p->end || p->s[eq + 1] != '(') {
        /* bash expands a leading ~ of the value but never globs or brace-expands it */
        TRY(lex_word(p, c, owner, SGR_NEST_CMDSUB, w));
        w->flags &= ~(uint32_t)(SGR_W_GLOB | SGR_W_BRACE);
        if (eq + 1 < p->end && p->s[eq + 1] == '~')
            w->flags |= SGR_W_TILDE;
        return 0;
    }
    size_t b0 = p->blen;
    uint32_t fl = 0;
    p->pos = eq + 2;
    for (;;) {
        skip_blanks(p);
        if (p->pos >= p->end)
            return fail(p, start, p->end - start, "unterminated array assignment");
        char ch = p->s[p->pos];
        if (ch == ')') {
            p->pos++;
            break;
        }
        if (ch == '\n' && p->hd_n > p->hd_base)
            return fail(p, p->pos, 1, "here-document pending at a newline in an array "
                        "assignment: bash reads it inconsistently");
        if (ch == '\n' || ch == '\r') {
            p->pos++;
            continue;
        }
        if (is_meta(ch) && !((ch == '<' || ch == '>') && p->pos + 1 < p->end
                             && p->s[p->pos + 1] == '('))
            return fail(p, p->pos, 1, "syntax error near unexpected token '%c'", ch);
        TRY(array_word(p, c, owner, &fl));
    }
    p->blen = b0;
    TRY(putn(p, p->s + start, p->pos - start));
    return word_finish(p, b0, start, fl | SGR_W_ARRAY, w);
}

/* array_word -> '[' arith ']' word? | word   an element of a compound array
 * assignment: a subscript is arithmetic, as bash reads it (`a=(['$(rm x)']=1)`
 * runs rm); flags of what it holds go to *fl. */
static int array_word(parser *p, const ctx *c, int32_t owner, uint32_t *fl)
{
    uint32_t f = 0;
    size_t b0 = p->blen;
    if (p->s[p->pos] == '[') {
        size_t st = p->pos++;
        TRY(arith_text(p, c, owner, SGR_NEST_CMDSUB, &f, st, AT_BRACKET, "["));
        p->blen = b0;
        if (word_ends_at(p, p->pos)) {
            *fl |= f;
            return 0;
        }
    }
    sgr_word tmp = {0};
    TRY(lex_word(p, c, owner, SGR_NEST_CMDSUB, &tmp));
    *fl |= f | tmp.flags;
    return 0;
}

/* ---- redirections and heredocs -------------------------------------------- */

/* here_end -> word ('\r' word?)*   A heredoc's delimiter as bash reads it: a carriage
 * return is a word byte to bash (`<<EOF<CR>x` waits for the line EOF<CR>x), and
 * nothing in the word is expanded, so a $(...) in it runs nothing: the segments
 * lexing it made are dropped. */
static int heredoc_word(parser *p, const ctx *c, int32_t owner, sgr_word *w)
{
    codeq *q = p->q;
    uint32_t n0 = p->cl->nseg, pl0 = p->cl->npipelines, h0 = p->hd_n, v0 = p->cl->nvars;
    uint32_t r0 = q->refs.n, s0 = q->scans.n, f0 = q->funcs.n, k0 = q->calls.n;
    size_t start = p->pos;
    TRY(lex_word(p, c, owner, SGR_NEST_CMDSUB, w));
    if (p->pos < p->end && p->s[p->pos] == '\r') {
        size_t b0 = p->blen;
        uint32_t fl = w->flags;
        TRY(putn(p, w->text, w->len));
        while (p->pos < p->end && p->s[p->pos] == '\r') {
            TRY(put(p, '\r'));
            p->pos++;
            if (p->pos < p->end && !is_meta(p->s[p->pos])) {
                sgr_word part = {0};
                TRY(lex_word(p, c, owner, SGR_NEST_CMDSUB, &part));
                TRY(putn(p, part.text, part.len));
                fl |= part.flags;
            }
        }
        TRY(word_finish(p, b0, start, fl, w));
    }
    /* and what the analysis of code in values recorded for them */
    p->cl->nseg = n0;
    p->cl->npipelines = pl0;
    p->hd_n = h0;
    p->cl->nvars = v0;
    q->refs.n = r0;
    q->scans.n = s0;
    q->funcs.n = f0;
    q->calls.n = k0;
    return 0;
}

/* redirect -> [fd] op word   (heredoc bodies are read when the line ends) */
static int parse_redir(parser *p, const ctx *c, int32_t owner, const tok *t, sgr_redir *r,
                       uint32_t from)
{
    size_t i = t->start;
    int64_t fd = -1;
    if (i < p->end && p->s[i] >= '0' && p->s[i] <= '9') {
        fd = 0;
        while (i < p->end && p->s[i] >= '0' && p->s[i] <= '9') {
            fd = fd * 10 + (p->s[i++] - '0');
            if (fd > INT32_MAX)
                return fail(p, t->start, t->len, "file descriptor out of range");
        }
    }
    int kind = 0;
    size_t ol = redir_op(p, i, &kind);
    r->fd = (int32_t)fd;
    r->kind = (uint8_t)kind;
    r->strip_tabs = kind == SGR_REDIR_HEREDOC && ol == 3;
    p->pos = t->start + t->len;
    tok w;
    peek(p, &w);
    if (w.kind != T_WORD) {
        const char *txt;
        int n = tok_text(p, &w, &txt);
        return fail(p, t->start, t->len, "redirection '%.*s' has no target (found %.*s)",
                    (int)t->len, p->s + t->start, n, txt);
    }
    if (kind == SGR_REDIR_HEREDOC)
        TRY(heredoc_word(p, c, owner, &r->target));
    else
        TRY(lex_word(p, c, owner, kind == SGR_REDIR_HERESTRING ? SGR_NEST_HEREDOC
                                                                : SGR_NEST_CMDSUB, &r->target));
    if (kind == SGR_REDIR_DUP_OUT && fd == -1 && !(r->target.flags & SGR_W_UNKNOWN)) {
        int digits = r->target.len > 0;
        for (uint32_t k = 0; k < r->target.len; k++)
            if (r->target.text[k] < '0' || r->target.text[k] > '9')
                digits = 0;
        if (!digits && strcmp(r->target.text, "-") != 0)
            r->kind = SGR_REDIR_BOTH;
    }
    if (kind == SGR_REDIR_HEREDOC) {
        if (p->hd_n == p->hd_cap) {
            uint32_t nc = p->hd_cap ? p->hd_cap * 2 : 4;
            hd_pending *nh = sg_arena_alloc(p->a, nc * sizeof *nh);
            if (!nh)
                return oom(p);
            if (p->hd_n)
                memcpy(nh, p->hd, p->hd_n * sizeof *nh);
            p->hd = nh;
            p->hd_cap = nc;
        }
        hd_pending *h = &p->hd[p->hd_n++];
        h->mark = r->target.text;
        h->dlen = r->target.len;
        h->quoted = (r->target.flags & SGR_W_QUOTED) != 0;
        h->strip = r->strip_tabs;
        h->from = from;
        h->hc = *c;
        h->span = mkspan(p, t->start, p->pos - t->start);
        r->quoted_delim = h->quoted;
    }
    return 0;
}

/* End of the heredoc body line that starts at ls: its newline, or the end of input.
 * Under an unquoted delimiter bash reads logical lines: a backslash escapes the
 * byte after it, and an escaped newline joins the next physical line (`EO\`,
 * newline, `F` is the line EOF); under a quoted one, physical lines (join 0). */
static size_t hd_line_end(const parser *p, size_t ls, int join)
{
    size_t i = ls;
    while (i < p->end && p->s[i] != '\n')
        i += join && p->s[i] == '\\' && i + 1 < p->end ? 2 : 1;
    return i;
}

/* Is the logical line [ls, le) h's delimiter, as bash compares it: escaped newlines
 * removed (join), leading tabs stripped (<<-), then exactly the delimiter's bytes
 * (a carriage return is a byte like any other)?  1: it is.  2: inside $(...) or
 * <(...), the line starts with the delimiter and has a ')' after it: bash 5.2 ends
 * the heredoc there and reads on from just after the delimiter, *after (it warns;
 * `x=$(cat <<EOF` newline `EOF; rm x )` runs rm).  0: neither. */
static int hd_delim(const parser *p, const hd_pending *h, size_t ls, size_t le, int join,
                    size_t *after)
{
    size_t k = 0;
    int lead = h->strip;
    for (size_t i = ls; i < le;) {
        size_t n = 1;
        if (join && p->s[i] == '\\' && i + 1 < le) {
            if (p->s[i + 1] == '\n') {
                i += 2;
                continue;
            }
            n = 2;
        }
        for (size_t j = i; j < i + n; j++) {
            char ch = p->s[j];
            if (lead && ch == '\t')
                continue;
            lead = 0;
            if (k == h->dlen) {
                if (p->in_comsub && memchr(p->s + j, ')', le - j)) {
                    *after = j;
                    return 2;
                }
                return 0;
            }
            if (ch != h->mark[k++])
                return 0;
        }
        i += n;
    }
    return k == h->dlen;
}

/* Read one heredoc body at pos: logical lines up to the delimiter line (hd_delim).
 * Sets *bs and *be to the body and pos past the delimiter line.  Input that ends
 * first ends the body: bash warns and takes the rest as the body. */
static void heredoc_lines(parser *p, const hd_pending *h, size_t *bs, size_t *be)
{
    int join = !h->quoted;
    *bs = p->pos;
    while (p->pos < p->end) {
        size_t ls = p->pos, le = hd_line_end(p, ls, join), after = 0;
        int d = hd_delim(p, h, ls, le, join, &after);
        p->pos = d == 2 ? after : le < p->end ? le + 1 : le;
        if (d) {
            *be = ls;
            return;
        }
    }
    *be = p->end;
}

/* heredoc body -> (char | '\' [$`\\\n] | dollar | backtick)*   for unquoted
 * delimiters; input is the body only. */
static int heredoc_scan(parser *p, const ctx *c, int32_t owner, uint32_t *fl)
{
    while (p->pos < p->end) {
        char ch = p->s[p->pos];
        if (ch == '\\' && p->pos + 1 < p->end) {
            char n = p->s[p->pos + 1];
            if (n == '\n') {
                p->pos += 2;
                continue;
            }
            if (n == '$' || n == '`' || n == '\\') {
                TRY(put(p, n));
                p->pos += 2;
                continue;
            }
        } else if (ch == '$') {
            TRY(dollar(p, c, owner, SGR_NEST_HEREDOC, 1, fl));
            continue;
        } else if (ch == '`') {
            TRY(backtick(p, c, owner, SGR_NEST_HEREDOC, 1, fl));
            continue;
        }
        TRY(put(p, ch));
        p->pos++;
    }
    return 0;
}

/* Read the bodies of this level's pending heredocs, in order, starting at pos
 * (just after a newline), and store them in the redirections that await them. */
static int read_heredocs(parser *p)
{
    uint32_t base = p->hd_base, n = p->hd_n;
    for (uint32_t q = base; q < n; q++) {
        hd_pending h = p->hd[q];
        size_t bs = 0, be = 0;
        heredoc_lines(p, &h, &bs, &be);
        size_t after = p->pos;
        /* find the owner and the redirections holding the placeholder */
        int32_t owner = -1;
        for (uint32_t j = h.from; j < p->cl->nseg && owner < 0; j++)
            for (uint32_t k = 0; k < p->cl->seg[j].nredirs; k++)
                if (p->cl->seg[j].redirs[k].target.text == h.mark)
                    owner = (int32_t)j;
        const char *text = p->s + bs;
        size_t tn = be - bs;
        char *strip = NULL;
        if (h.strip) {
            strip = sg_arena_alloc(p->a, tn + 1);
            if (!strip)
                return oom(p);
            /* from the start of each logical line (hd_line_end): a newline a
             * backslash escapes joins lines, so the tabs after it stay */
            size_t o = 0;
            int bol = 1;
            for (size_t k = 0; k < tn; k++) {
                if (bol && text[k] == '\t')
                    continue;
                bol = 0;
                if (!h.quoted && text[k] == '\\' && k + 1 < tn) {
                    strip[o++] = text[k++];
                    strip[o++] = text[k];
                    continue;
                }
                bol = text[k] == '\n';
                strip[o++] = text[k];
            }
            text = strip;
            tn = o;
        }
        sgr_word body;
        size_t b0 = p->blen;
        uint32_t fl = 0;
        if (h.quoted) {
            TRY(putn(p, text, tn));
        } else {
            /* commands in the body: parent is the owner, depth one below it */
            ctx oc = h.hc;
            if (owner >= 0)
                oc.depth = p->cl->seg[owner].depth;
            uint32_t n0 = p->cl->nseg;
            input_save sv;
            input_push(p, &sv, strip ? strip : p->s, strip ? 0 : bs, strip ? tn : be,
                       strip != NULL, mkspan(p, bs, be - bs));
            TRY(heredoc_scan(p, &oc, owner >= 0 ? owner : h.hc.parent, &fl));
            input_pop(p, &sv);
            TRY(move_tail(p, owner >= 0 ? owner : h.hc.parent, n0));
        }
        TRY(mkword(p, p->buf + b0, p->blen - b0, fl, bs, be - bs, &body));
        p->blen = b0;
        p->pos = after;
        for (uint32_t j = h.from; j < p->cl->nseg; j++)
            for (uint32_t k = 0; k < p->cl->seg[j].nredirs; k++)
                if (p->cl->seg[j].redirs[k].target.text == h.mark)
                    p->cl->seg[j].redirs[k].target = body;
    }
    p->hd_n = base;
    return 0;
}

/* redirect* after a compound command starting at segment start */
static int compound_redirs(parser *p, const ctx *c, uint32_t start)
{
    vec rd = {0};
    tok t;
    for (;;) {
        peek(p, &t);
        if (t.kind != T_REDIR)
            break;
        sgr_redir *r = vpush(p, &rd, sizeof *r);
        if (!r)
            return -1;
        TRY(parse_redir(p, c, c->parent, &t, r, start));
    }
    return attach_redirs(p, start, c->depth, rd.p, rd.n);
}

/* ---- code in values ----------------------------------------------------------
 *
 * Bash evaluates some values as code: arithmetic expressions (and in them every
 * array subscript is expanded, $(...) included, and every variable's value is
 * evaluated again), the NAME operands of builtins (a subscript in `a[$(cmd)]` is
 * arithmetic, even from a single-quoted word), prompt strings (${x@P}).  What is
 * written on the line is read as it is lexed (arith_text); what builtins take as
 * code is found when their segment is complete (code_segment); what a variable
 * holds is looked up at the end, among the line's assignments (resolve_code):
 * a value assigned on the line is read as the code it is, one only known at run
 * time makes the segment dynamic, one from the environment is taken as harmless.
 * The builtins' operands are bash's grammar, so they are here, not in the stdlib. */

static void parser_init(parser *p, sg_arena *a, sgr_cmdline *cl, const sgr_sh_limits *lim,
                        const char *s, size_t len);
static int alloc_buf(parser *p, size_t len);
static int parse_program(parser *p, const ctx *c);

/* Make segment idx dynamic for reason (static, or arena text), keeping a reason it
 * has; idx -1 (a compound command's header) adds an empty dynamic segment of its
 * own, as its commands are (nest CMDSUB, parent -1). */
static int mark_dynamic(parser *p, int32_t idx, const char *reason)
{
    if (idx < 0) {
        sgr_segment *sg = sgr_sh_add_segment(p->a, p->cl, p->lim);
        if (!sg)
            return p->cl->nseg >= p->lim->max_segments
                       ? fail(p, 0, 0, "more than %u commands", p->lim->max_segments)
                       : oom(p);
        sg->pipeline = p->cl->npipelines++;
        sg->nest = SGR_NEST_CMDSUB;
        sg->depth = 1;
        sg->span = p->ovr ? p->ospan : mkspan(p, 0, 0);
        idx = (int32_t)(p->cl->nseg - 1);
    }
    sgr_segment *sg = &p->cl->seg[idx];
    if (!(sg->flags & SGR_SEG_DYNAMIC)) {
        sg->flags |= SGR_SEG_DYNAMIC;
        sg->dyn_reason = reason;
    }
    return 0;
}

/* mark_dynamic with "FMT" formatted around a name n[0..len). */
static int mark_dynamic_name(parser *p, int32_t idx, const char *fmt, const char *n, size_t len)
{
    char tmp[200];
    int k = snprintf(tmp, sizeof tmp, fmt, len > 40 ? 40 : (int)len, n);
    if (k < 0)
        k = 0;
    if ((size_t)k >= sizeof tmp)
        k = sizeof tmp - 1;
    char *r = sg_arena_strndup(p->a, tmp, (size_t)k);
    if (!r)
        return oom(p);
    return mark_dynamic(p, idx, r);
}

static int add_scan(parser *p, int32_t owner, const char *text, size_t len, int mode,
                    sgr_span span)
{
    vscan *v = vgrow(p, &p->q->scans, sizeof *v);
    if (!v)
        return -1;
    v->text = text;
    v->len = (uint32_t)len;
    v->owner = owner;
    v->mode = (uint8_t)mode;
    v->span = span;
    return 0;
}

/* Record an assignment of name[0..nl) (value NULL: known only at run time). */
static int add_var(parser *p, int32_t seg, const char *name, size_t nl, const char *value,
                   size_t vl, uint32_t vflags, uint32_t flags, sgr_span span)
{
    sgr_cmdline *cl = p->cl;
    if (cl->nvars == cl->varcap) {
        uint32_t nc = cl->varcap ? cl->varcap * 2 : 8;
        sgr_shvar *nv = sg_arena_alloc(p->a, nc * sizeof *nv);
        if (!nv)
            return oom(p);
        if (cl->nvars)
            memcpy(nv, cl->vars, cl->nvars * sizeof *nv);
        cl->vars = nv;
        cl->varcap = nc;
    }
    sgr_shvar *v = &cl->vars[cl->nvars++];
    v->name = name;
    v->nlen = (uint32_t)nl;
    v->value = value;
    v->vlen = (uint32_t)vl;
    v->vflags = vflags;
    v->flags = flags | (value ? 0 : SGR_VAR_UNKNOWN);
    v->seg = seg;
    v->span = span;
    return 0;
}

/* A word whose value is a command's output, a process substitution's name or a
 * file name: code bash reads in it is only known at run time. */
#define W_RUNTIME (SGR_W_CMDSUB | SGR_W_PROCSUB)

/* w's text is a NAME=value or NAME+=value assignment (word of a declaration or
 * of a command's prefix): record it; *vs, *vn: the value. */
static int assign_word(parser *p, int32_t seg, const sgr_word *w, uint32_t flags,
                       const char **vs, size_t *vn)
{
    const char *t = w->text, *eq = memchr(t, '=', w->len);
    size_t nl = eq ? (size_t)(eq - t) : w->len;
    int append = nl && t[nl - 1] == '+';
    *vs = eq ? eq + 1 : NULL;
    *vn = eq ? w->len - nl - 1 : 0;
    const char *sub = memchr(t, '[', nl);
    size_t name_len = sub ? (size_t)(sub - t) : nl - (size_t)append;
    if (!name_len)
        return 0;
    if (!eq)    /* `declare x` assigns nothing; `declare -i x` makes x an integer */
        return flags & SGR_VAR_INTEGER ? add_var(p, seg, t, name_len, "", 0, 0, flags, w->span) : 0;
    int unknown = (w->flags & W_RUNTIME) != 0;
    return add_var(p, seg, t, name_len, unknown ? NULL : *vs, unknown ? 0 : *vn, w->flags,
                   flags | (append ? SGR_VAR_APPEND : 0), w->span);
}

/* Operand w of segment si is code of scan mode (SC_NAME, SC_ARITH): queue its text
 * for reading, or make si dynamic when what bash reads is only known at run time
 * (for a name: any expansion; for arithmetic: a command's output). */
static int code_operand(parser *p, int32_t si, const sgr_word *w, const char *t, size_t n,
                        int mode)
{
    if (mode == SC_NAME) {
        if (w->flags & SGR_W_UNKNOWN)
            return mark_dynamic_name(p, si, "bash looks up the name '%.*s' and evaluates a "
                                     "subscript in it, and it is only known at run time", t, n);
        return memchr(t, '[', n) ? add_scan(p, si, t, n, SC_NAME, w->span) : 0;
    }
    if (w->flags & W_RUNTIME)
        return mark_dynamic_name(p, si, "'%.*s' is evaluated as arithmetic, and a command's "
                                 "output in it is code known only at run time", t, n);
    /* most are numbers and names: their names are refs, nothing else to read */
    for (size_t i = 0; i < n; i++)
        if (strchr("$`['\"\\", t[i]) && t[i])
            return add_scan(p, si, t, n, SC_ARITH, w->span);
    for (size_t i = 0; i < n;) {
        if (is_name_start(t[i])) {
            size_t j = i;
            while (j < n && is_name_char(t[j]))
                j++;
            TRY(add_ref(p, si, t + i, j - i, REF_ARITH));
            i = j;
        } else if (t[i] >= '0' && t[i] <= '9') {
            while (i < n && (is_name_char(t[i]) || t[i] == '#' || t[i] == '@'))
                i++;
        } else
            i++;
    }
    return 0;
}

/* The builtins whose operands are code (or assign variables), and the reserved
 * words and builtins that run a builtin named after them. */
enum {
    BI_NONE, BI_TEST, BI_READ, BI_PRINTF, BI_UNSET, BI_DECLARE, BI_LET, BI_MAPFILE,
    BI_WAIT, BI_GETOPTS, BI_COMMAND, BI_BUILTIN, BI_TIME
};
#define CODE_BUILTINS(X, a) \
    X(TEST, "test", a) X(TEST, "[", a) X(READ, "read", a) X(PRINTF, "printf", a)         \
    X(UNSET, "unset", a) X(DECLARE, "declare", a) X(DECLARE, "typeset", a)             \
    X(DECLARE, "local", a) X(DECLARE, "export", a) X(DECLARE, "readonly", a)           \
    X(LET, "let", a) X(MAPFILE, "mapfile", a) X(MAPFILE, "readarray", a)               \
    X(WAIT, "wait", a) X(GETOPTS, "getopts", a) X(COMMAND, "command", a)               \
    X(BUILTIN, "builtin", a) X(TIME, "time", a) X(TEST, "[[", a)

/* bilen_tab[c]: bit n set when a name above of n bytes starts with byte c, so
 * that code_segment's caller rejects most commands with one lookup. */
#define BI_LENBIT(id, text, c) | ((c) == (unsigned char)(text)[0] ? 1u << (sizeof text - 1) : 0)
#define CCLASS(c) (0 CODE_BUILTINS(BI_LENBIT, c))
#define CC4(c)   CCLASS(c), CCLASS((c) + 1), CCLASS((c) + 2), CCLASS((c) + 3)
#define CC16(c)  CC4(c), CC4((c) + 4), CC4((c) + 8), CC4((c) + 12)
#define CC64(c)  CC16(c), CC16((c) + 16), CC16((c) + 32), CC16((c) + 48)
static const uint16_t bilen_tab[256] = { CC64(0), CC64(64), CC64(128), CC64(192) };
#undef CCLASS
#undef CC64
#undef CC16
#undef CC4
#undef BI_LENBIT

/* May segment sg hold code_segment's business: assignments, or a program word
 * of a builtin above (by its first byte and length)? */
static inline int code_candidate(const sgr_segment *sg)
{
    if (sg->nassigns)
        return 1;
    if (!sg->argc)
        return 0;
    const sgr_word *w = &sg->argv[0];
    return w->len < 16 && (bilen_tab[(unsigned char)w->text[0]] >> w->len & 1);
}

/* builtin_of: the BI_* of program word w.  Asked for every command, so by length
 * first: most program names have none of these lengths' first bytes. */
static int builtin_of(const sgr_word *w)
{
#define BI_IS(lit) (w->len == sizeof lit - 1 && memcmp(w->text, lit, sizeof lit - 1) == 0)
    if (w->flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE))
        return BI_NONE;
    switch (w->len) {
    case 1: return BI_IS("[") ? BI_TEST : BI_NONE;
    case 3: return BI_IS("let") ? BI_LET : BI_NONE;
    case 4:
        return BI_IS("test") ? BI_TEST : BI_IS("read") ? BI_READ : BI_IS("wait") ? BI_WAIT
             : BI_IS("time") ? BI_TIME : BI_NONE;
    case 5: return BI_IS("unset") ? BI_UNSET : BI_IS("local") ? BI_DECLARE : BI_NONE;
    case 6: return BI_IS("printf") ? BI_PRINTF : BI_IS("export") ? BI_DECLARE : BI_NONE;
    case 7:
        return BI_IS("declare") || BI_IS("typeset") ? BI_DECLARE : BI_IS("mapfile") ? BI_MAPFILE
             : BI_IS("getopts") ? BI_GETOPTS : BI_IS("command") ? BI_COMMAND
             : BI_IS("builtin") ? BI_BUILTIN : BI_NONE;
    case 8: return BI_IS("readonly") ? BI_DECLARE : BI_NONE;
    case 9: return BI_IS("readarray") ? BI_MAPFILE : BI_NONE;
    default: return BI_NONE;
    }
#undef BI_IS
}

/* Which options of builtin bi take a value (the next word, or the rest of the
 * word): getopt as bash's builtins read it. */
static const char *builtin_value_opts(int bi)
{
    switch (bi) {
    case BI_READ: return "adinNptu";
    case BI_PRINTF: return "v";
    case BI_MAPFILE: return "CcdnOsu";
    case BI_WAIT: return "p";
    default: return "";
    }
}

/* The option letters of builtin bi given on segment sg from argv[*k + 1] on, up to
 * the first operand or "--": flags[c] = 1 for each letter c (declare's +x too),
 * and for a value option its word (vals[c], *voff[c] where the value starts).
 * *k becomes the index of the first operand. */
typedef struct bopts {
    uint8_t on[128];
    const sgr_word *val[128];
    uint32_t voff[128];
} bopts;

static void builtin_opts(const sgr_segment *sg, int bi, uint32_t *k, bopts *o)
{
    const char *vo = builtin_value_opts(bi);
    uint32_t i = *k + 1;
    memset(o->on, 0, sizeof o->on);
    for (; i < sg->argc; i++) {
        const sgr_word *w = &sg->argv[i];
        const char *t = w->text;
        if (w->len == 2 && t[0] == '-' && t[1] == '-') {
            i++;
            break;
        }
        if (w->len < 2 || !(t[0] == '-' || (bi == BI_DECLARE && t[0] == '+'))
            || (w->flags & SGR_W_UNKNOWN))
            break;
        for (uint32_t j = 1; j < w->len; j++) {
            unsigned char c = (unsigned char)t[j];
            if (c >= 128)
                continue;
            o->on[c] = 1;
            if (strchr(vo, c)) {
                if (j + 1 < w->len) {
                    o->val[c] = w;
                    o->voff[c] = j + 1;
                } else if (i + 1 < sg->argc) {
                    o->val[c] = &sg->argv[++i];
                    o->voff[c] = 0;
                } else
                    o->on[c] = 0;
                break;
            }
        }
    }
    *k = i;
}

/* [[ ... ]]: both sides of -eq -ne -lt -le -gt -ge are arithmetic; -v takes a name. */
static int dbrack_code(parser *p, int32_t si)
{
    static const char *const ops[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
    for (uint32_t i = 1; i + 1 < p->cl->seg[si].argc; i++) {
        const sgr_segment *sg = &p->cl->seg[si];
        const sgr_word *w = &sg->argv[i];
        if (w->flags)
            continue;
        if (w->len == 2 && memcmp(w->text, "-v", 2) == 0) {
            const sgr_word *o = &sg->argv[i + 1];
            TRY(code_operand(p, si, o, o->text, o->len, SC_NAME));
            continue;
        }
        if (w->len == 2 && memcmp(w->text, "=~", 2) == 0) {
            /* the match's groups come from the operand's value */
            TRY(add_var(p, si, "BASH_REMATCH", 12, NULL, 0, 0, 0, sg->span));
            continue;
        }
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            if (w->len != 3 || memcmp(w->text, ops[k], 3) != 0)
                continue;
            if (i >= 2) {
                const sgr_word *l = &sg->argv[i - 1];
                TRY(code_operand(p, si, l, l->text, l->len, SC_ARITH));
            }
            const sgr_word *r = &p->cl->seg[si].argv[i + 1];
            TRY(code_operand(p, si, r, r->text, r->len, SC_ARITH));
        }
    }
    return 0;
}

/* A value option's value: the rest of its word, or the next word. */
static void opt_value(const bopts *o, int c, const char **t, size_t *n)
{
    *t = o->val[c]->text + o->voff[c];
    *n = o->val[c]->len - o->voff[c];
}

/* Segment si is complete: record what it assigns and queue the code in its
 * operands (see the top of this section).  Called for every simple command, so
 * the common case (no assignment, no builtin of interest) decides in a few
 * compares. */
static int code_segment(parser *p, int32_t si)
{
    const sgr_segment *sg = &p->cl->seg[si];
    for (uint32_t a = 0; a < sg->nassigns; a++) {
        const char *vs;
        size_t vn;
        TRY(assign_word(p, si, &p->cl->seg[si].assigns[a], sg->argc ? SGR_VAR_PREFIX : 0, &vs, &vn));
        sg = &p->cl->seg[si];
    }
    if (!sg->argc)
        return 0;
    if (sg->argv[0].len == 2 && !sg->argv[0].flags && memcmp(sg->argv[0].text, "[[", 2) == 0)
        return dbrack_code(p, si);
    uint32_t k = 0;
    int bi = builtin_of(&sg->argv[0]);
    if (bi == BI_NONE)
        return 0;
    bopts o;
    /* command [-p] / builtin / time [-p] run the builtin that follows */
    while (bi == BI_COMMAND || bi == BI_BUILTIN || bi == BI_TIME) {
        builtin_opts(sg, bi, &k, &o);
        if (bi == BI_COMMAND && (o.on['v'] || o.on['V']))
            return 0;       /* command -v describes, runs nothing */
        if (k >= sg->argc || (bi = builtin_of(&sg->argv[k])) == BI_NONE)
            return 0;
    }
    if (bi == BI_TEST) {
        /* test's -v NAME wherever the expression has it (no getopt) */
        for (uint32_t i = k + 1; i + 1 < sg->argc; i++) {
            const sgr_word *w = &p->cl->seg[si].argv[i];
            if (w->len == 2 && !(w->flags & SGR_W_UNKNOWN) && memcmp(w->text, "-v", 2) == 0) {
                const sgr_word *v = &p->cl->seg[si].argv[i + 1];
                TRY(code_operand(p, si, v, v->text, v->len, SC_NAME));
            }
        }
        return 0;
    }
    /* declare, typeset and local take -i and -n; export and readonly do not */
    int decl = bi == BI_DECLARE && (sg->argv[k].len == 7 || sg->argv[k].len == 5);
    builtin_opts(sg, bi, &k, &o);
    const char *t;
    size_t n;
    switch (bi) {
    case BI_READ:
        if (o.on['a']) {
            opt_value(&o, 'a', &t, &n);
            TRY(add_var(p, si, t, n, NULL, 0, o.val['a']->flags, 0, o.val['a']->span));
        }
        for (uint32_t i = k; i < p->cl->seg[si].argc; i++) {
            const sgr_word *w = &p->cl->seg[si].argv[i];
            TRY(code_operand(p, si, w, w->text, w->len, SC_NAME));
            TRY(add_var(p, si, w->text, w->len, NULL, 0, w->flags, 0, w->span));
        }
        if (k >= p->cl->seg[si].argc && !o.on['a'])
            TRY(add_var(p, si, "REPLY", 5, NULL, 0, 0, 0, sg->span));
        return 0;
    case BI_PRINTF:
    case BI_WAIT:
        if (o.on[bi == BI_PRINTF ? 'v' : 'p']) {
            int c = bi == BI_PRINTF ? 'v' : 'p';
            opt_value(&o, c, &t, &n);
            TRY(code_operand(p, si, o.val[c], t, n, SC_NAME));
            TRY(add_var(p, si, t, n, NULL, 0, o.val[c]->flags, 0, o.val[c]->span));
        }
        return 0;
    case BI_UNSET:
        if (o.on['f'] || o.on['n'])
            return 0;
        for (uint32_t i = k; i < p->cl->seg[si].argc; i++) {
            const sgr_word *w = &p->cl->seg[si].argv[i];
            TRY(code_operand(p, si, w, w->text, w->len, SC_NAME));
        }
        return 0;
    case BI_LET:
        for (uint32_t i = k; i < p->cl->seg[si].argc; i++) {
            const sgr_word *w = &p->cl->seg[si].argv[i];
            TRY(code_operand(p, si, w, w->text, w->len, SC_ARITH));
        }
        return 0;
    case BI_MAPFILE:
        if (o.on['C']) {
            opt_value(&o, 'C', &t, &n);
            if (o.val['C']->flags & SGR_W_UNKNOWN)
                TRY(mark_dynamic(p, si, "mapfile -C runs a callback that is only known at run time"));
            else
                TRY(add_scan(p, si, t, n, SC_SCRIPT, o.val['C']->span));
        }
        if (k < p->cl->seg[si].argc) {
            const sgr_word *w = &p->cl->seg[si].argv[k];
            TRY(code_operand(p, si, w, w->text, w->len, SC_NAME));
            TRY(add_var(p, si, w->text, w->len, NULL, 0, w->flags, 0, w->span));
        } else
            TRY(add_var(p, si, "MAPFILE", 7, NULL, 0, 0, 0, sg->span));
        return 0;
    case BI_GETOPTS:
        /* getopts OPTSTRING NAME: NAME and OPTARG come from the arguments */
        if (k + 1 < p->cl->seg[si].argc) {
            const sgr_word *w = &p->cl->seg[si].argv[k + 1];
            TRY(add_var(p, si, w->text, w->len, NULL, 0, w->flags, 0, w->span));
        }
        return add_var(p, si, "OPTARG", 6, NULL, 0, 0, 0, sg->span);
    case BI_DECLARE:
        if (o.on['f'] || o.on['F'] || o.on['p'])
            return 0;       /* functions, or a listing */
        for (uint32_t i = k; i < p->cl->seg[si].argc; i++) {
            const sgr_word *w = &p->cl->seg[si].argv[i];
            const char *eq = memchr(w->text, '=', w->len), *vs;
            size_t nl = eq ? (size_t)(eq - w->text) : w->len, vn;
            if (nl && w->text[nl - 1] == '+')
                nl--;
            /* the name: its subscript is arithmetic; a name from an expansion
             * may hold one */
            int name_dyn = (w->flags & SGR_W_UNKNOWN)
                           && (memchr(w->text, '$', nl) || memchr(w->text, '`', nl));
            if (name_dyn)
                TRY(mark_dynamic_name(p, si, "bash looks up the name '%.*s' and evaluates a "
                                      "subscript in it, and it is only known at run time",
                                      w->text, nl));
            else if (memchr(w->text, '[', nl))
                TRY(add_scan(p, si, w->text, nl, SC_NAME, w->span));
            TRY(assign_word(p, si, w, decl && o.on['i'] ? SGR_VAR_INTEGER : 0, &vs, &vn));
            w = &p->cl->seg[si].argv[i];
            if (!vs)
                continue;
            if (decl && o.on['n'])
                TRY(code_operand(p, si, w, vs, vn, SC_NAME));   /* a nameref names */
            else if (vn && vs[0] == '(' && !(w->flags & SGR_W_ARRAY)) {
                /* a compound assignment given as a string is parsed again */
                if (w->flags & W_RUNTIME)
                    TRY(mark_dynamic(p, si, "an array assignment bash parses from a "
                                     "value only known at run time"));
                else
                    TRY(add_scan(p, si, vs, vn, SC_WORDS, w->span));
            }
        }
        return 0;
    }
    return 0;
}

/* name -> chars* ['[' arith]   A NAME operand: a subscript is arithmetic; an
 * expansion before it gives the name, whose value is then a name too. */
static int name_text(parser *p, const ctx *c, int32_t owner, uint32_t *fl)
{
    p->refkind = REF_NAME;
    while (p->pos < p->end) {
        char ch = p->s[p->pos];
        if (ch == '[') {
            p->pos++;
            p->refkind = REF_NONE;
            return arith_text(p, c, owner, SGR_NEST_CMDSUB, fl, 0, AT_END, "[");
        }
        if (ch == '$') {
            TRY(dollar(p, c, owner, SGR_NEST_CMDSUB, 1, fl));
            continue;
        }
        if (ch == '`') {
            TRY(backtick(p, c, owner, SGR_NEST_CMDSUB, 1, fl));
            continue;
        }
        p->pos++;
    }
    return 0;
}

/* prompt -> (char | '\' char | dollar | backtick)*   ${x@P}: bash expands a prompt
 * string as double-quoted text (\$ \` \\ and the prompt escapes are literal) */
static int prompt_text(parser *p, const ctx *c, int32_t owner, uint32_t *fl)
{
    p->refkind = REF_PROMPT;
    while (p->pos < p->end) {
        char ch = p->s[p->pos];
        if (ch == '\\' && p->pos + 1 < p->end) {
            p->pos += 2;
            continue;
        }
        if (ch == '$') {
            TRY(dollar(p, c, owner, SGR_NEST_CMDSUB, 1, fl));
            continue;
        }
        if (ch == '`') {
            TRY(backtick(p, c, owner, SGR_NEST_CMDSUB, 1, fl));
            continue;
        }
        p->pos++;
    }
    return 0;
}

static int array_word(parser *p, const ctx *c, int32_t owner, uint32_t *fl);

/* words -> '(' (blank | newline | array_word)* ')'   a compound array assignment
 * that declare parses from a value ('(a $(b) [$(c)]=d)') */
static int words_text(parser *p, const ctx *c, int32_t owner, uint32_t *fl)
{
    if (p->pos < p->end && p->s[p->pos] == '(')
        p->pos++;
    for (;;) {
        while (p->pos < p->end && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'
                                   || p->s[p->pos] == '\n'))
            p->pos++;
        if (p->pos >= p->end || p->s[p->pos] == ')')
            return 0;
        if (is_meta(p->s[p->pos]) && !((p->s[p->pos] == '<' || p->s[p->pos] == '>')
                                       && p->pos + 1 < p->end && p->s[p->pos + 1] == '('))
            return fail(p, p->pos, 1, "syntax error near unexpected token '%c'", p->s[p->pos]);
        TRY(array_word(p, c, owner, fl));
    }
}

/* Read v->text as the code bash evaluates (v->mode) for segment v->owner: its
 * commands become segments nested in the owner, its variables refs in the queue.
 * A text that does not parse makes the owner dynamic, with what it made undone. */
static int run_scan(parser *p, const vscan *v)
{
    sgr_cmdline *cl = p->cl;
    codeq *q = p->q;
    int32_t o = v->owner;
    ctx c = {-1, SGR_NEST_TOP, 0, 0};
    if (o >= 0) {
        const sgr_segment *os = &cl->seg[o];
        c.parent = os->parent;
        c.nest = os->nest;
        c.depth = os->depth;
        c.segflags = os->flags & INHERIT;
    }
    parser sp;
    parser_init(&sp, p->a, cl, p->lim, v->text, v->len);
    sp.ovr = 1;
    sp.ospan = v->span;
    sp.rdepth = c.depth;
    sp.seg0 = cl->nseg;
    sp.q = q;
    sp.refkind = REF_NONE;
    uint32_t n0 = cl->nseg, pl0 = cl->npipelines, v0 = cl->nvars, r0 = q->refs.n, s0 = q->scans.n;
    uint32_t f0 = q->funcs.n, k0 = q->calls.n, fl = 0;
    if ((uint32_t)c.depth + 1 > sp.maxdepth)
        fail(&sp, 0, 0, "nesting deeper than %u", sp.maxdepth);
    else if (alloc_buf(&sp, v->len) == 0) {
        switch (v->mode) {
        case SC_ARITH:
            arith_text(&sp, &c, o, SGR_NEST_CMDSUB, &fl, 0, AT_END, "arithmetic");
            break;
        case SC_NAME:
            name_text(&sp, &c, o, &fl);
            break;
        case SC_PROMPT:
            prompt_text(&sp, &c, o, &fl);
            break;
        case SC_WORDS:
            words_text(&sp, &c, o, &fl);
            break;
        default: {
            /* the script's commands are one level down, as sgr_sh_parse_nested's */
            ctx sc = {o, SGR_NEST_SCRIPT, (uint16_t)(c.depth + 1), c.segflags};
            sp.rdepth = sc.depth;
            if (parse_program(&sp, &sc) == 0)
                for (uint32_t j = n0; j < cl->nseg; j++)
                    if (cl->seg[j].depth == sc.depth)
                        cl->seg[j].flags |= SGR_SEG_MOREARGS;   /* mapfile -C appends two */
            break;
        }
        }
    }
    if (!sp.err)
        return 0;
    if (sp.err == -2)
        return oom(p);
    cl->nseg = n0;
    cl->npipelines = pl0;
    cl->nvars = v0;
    q->refs.n = r0;
    q->scans.n = s0;
    q->funcs.n = f0;
    q->calls.n = k0;
    return mark_dynamic(p, o, sp.msg);
}

static int same_name(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && memcmp(a, b, an) == 0;
}

/* A small set of (name, kind) pairs, open addressing in the arena. */
typedef struct nameset {
    vref *slot;
    uint32_t cap, n;
} nameset;

static uint32_t name_hash(const char *s, size_t n, int kind)
{
    uint32_t h = 2166136261u ^ (uint32_t)kind;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* Add (r->name, r->kind) to set; 1 if it was new, 0 if there, -1 OOM. */
static int nameset_add(parser *p, nameset *set, const vref *r)
{
    if (set->n * 2 >= set->cap) {
        uint32_t nc = set->cap ? set->cap * 2 : 32;
        vref *ns = sg_arena_alloc(p->a, nc * sizeof *ns);
        if (!ns)
            return oom(p);
        memset(ns, 0, nc * sizeof *ns);
        for (uint32_t i = 0; i < set->cap; i++) {
            const vref *e = &set->slot[i];
            if (!e->name)
                continue;
            uint32_t h = name_hash(e->name, e->nlen, e->kind) & (nc - 1);
            while (ns[h].name)
                h = (h + 1) & (nc - 1);
            ns[h] = *e;
        }
        set->slot = ns;
        set->cap = nc;
    }
    uint32_t h = name_hash(r->name, r->nlen, r->kind) & (set->cap - 1);
    while (set->slot[h].name) {
        const vref *e = &set->slot[h];
        if (e->kind == r->kind && e->nlen == r->nlen && memcmp(e->name, r->name, r->nlen) == 0)
            return 0;
        h = (h + 1) & (set->cap - 1);
    }
    set->slot[h] = *r;
    set->n++;
    return 1;
}

/* What the variable of ref r holds, as a value of r's kind: each value the line
 * assigns it (vars[0..nv)), or a NAME=value word of a command around it (env x=1
 * sh -c ...), is read as code for r's owner; one only known at run time makes the
 * owner dynamic.  A variable the line does not assign comes from the environment. */
static int resolve_ref(parser *p, const vref *r, uint32_t nv)
{
    static const int mode[] = {SC_ARITH, SC_NAME, SC_PROMPT};
    const char *n = r->name;
    if (r->kind == REF_OUTPUT)
        return mark_dynamic(p, r->owner, "a command's output is evaluated as arithmetic: "
                            "code known only at run time");
    static const char *const unknown[] = {
        "'%.*s' is evaluated as arithmetic, and its value is only known at run time",
        "'%.*s' is used as a variable name, and its value is only known at run time",
        "'%.*s' is expanded as a prompt, and its value is only known at run time",
    };
    const char *fmt = unknown[r->kind];
    if ((n[0] >= '0' && n[0] <= '9') || n[0] == '@' || n[0] == '*' || (r->nlen == 1 && n[0] == '_'))
        return mark_dynamic_name(p, r->owner, fmt, n, r->nlen);
    /* an integer variable holds a number: what it was given was read as
     * arithmetic when it was given (resolve_code) */
    for (uint32_t i = 0; i < nv; i++)
        if ((p->cl->vars[i].flags & SGR_VAR_INTEGER) && same_name(p->cl->vars[i].name, p->cl->vars[i].nlen, n, r->nlen))
            return 0;
    int found = 0;
    for (uint32_t i = 0; i < nv; i++) {
        const sgr_shvar *v = &p->cl->vars[i];
        if (v->nlen != r->nlen || memcmp(v->name, n, r->nlen) != 0)
            continue;
        found = 1;
        /* x+=... joins values this analysis does not join: unknown */
        if (v->flags & (SGR_VAR_UNKNOWN | SGR_VAR_APPEND))
            return mark_dynamic_name(p, r->owner, fmt, n, r->nlen);
        TRY(add_scan(p, r->owner, v->value, v->vlen, mode[r->kind], v->span));
    }
    if (found)
        return 0;
    /* NAME=value operands of the commands this one is nested in (env, wrappers) */
    for (int32_t a = r->owner >= 0 ? p->cl->seg[r->owner].parent : -1; a >= 0;
         a = p->cl->seg[a].parent) {
        for (uint32_t i = 1; i < p->cl->seg[a].argc; i++) {
            const sgr_word *w = &p->cl->seg[a].argv[i];
            if (w->len <= r->nlen || w->text[r->nlen] != '=' || memcmp(w->text, n, r->nlen) != 0)
                continue;
            if (w->flags & W_RUNTIME)
                return mark_dynamic_name(p, r->owner, fmt, n, r->nlen);
            TRY(add_scan(p, r->owner, w->text + r->nlen + 1, w->len - r->nlen - 1, mode[r->kind],
                         w->span));
        }
    }
    return 0;
}

/* Is name[0..n) a function the line defines? */
static int is_func(const parser *p, const char *name, size_t n)
{
    const vcall *f = p->q->funcs.p;
    for (uint32_t i = 0; i < p->q->funcs.n; i++)
        if (same_name(f[i].fn, f[i].fnlen, name, n))
            return 1;
    return 0;
}

/* Does function `from` run function `to` (itself included), through the calls
 * the bodies of the line's functions make?  A search over names, each function
 * visited once (seen: one byte per call). */
static int reaches(parser *p, const char *from, size_t fl, const char *to, size_t tl, uint8_t *seen)
{
    if (same_name(from, fl, to, tl))
        return 1;
    const vcall *k = p->q->calls.p;
    for (uint32_t i = 0; i < p->q->calls.n; i++) {
        if (seen[i] || !same_name(k[i].fn, k[i].fnlen, from, fl) || !is_func(p, k[i].callee, k[i].clen))
            continue;
        seen[i] = 1;
        if (reaches(p, k[i].callee, k[i].clen, to, tl, seen))
            return 1;
    }
    return 0;
}

/* A fork bomb, found by its structure, not its spelling: a function whose body
 * runs, in a new process (a pipeline, &, ( ), $( )), a function that runs it
 * again (:(){ :|:& };: and any other name or spacing) multiplies processes
 * without end.  Such a call is dynamic. */
static int fork_code(parser *p)
{
    uint32_t n = p->q->calls.n;
    if (!n)
        return 0;
    uint8_t *seen = sg_arena_alloc(p->a, n);
    if (!seen)
        return oom(p);
    for (uint32_t i = 0; i < n; i++) {
        const vcall *k = &((const vcall *)p->q->calls.p)[i];
        if (!k->spawn || !is_func(p, k->callee, k->clen))
            continue;
        memset(seen, 0, n);
        if (!reaches(p, k->callee, k->clen, k->fn, k->fnlen, seen))
            continue;
        TRY(mark_dynamic_name(p, k->seg, "fork bomb: function '%.*s' runs itself again in "
                              "a new process, without end", k->fn, k->fnlen));
    }
    return 0;
}

/* IFS changed on the line: bash splits every unquoted expansion by it from there
 * on, and where that is this flow-blind pass does not tell, so every segment of
 * this parse whose words hold one (SPLITS) is dynamic.  An IFS=... before a
 * command is its own, unless the command is a function (bash keeps it for the
 * body); IFS changed in arithmetic or by ${IFS=...} counts too. */
static int ifs_code(parser *p, uint32_t seg0, uint32_t var0)
{
    sgr_cmdline *cl = p->cl;
    int changed = p->ifs_set;
    for (uint32_t i = var0; i < cl->nvars && !changed; i++) {
        const sgr_shvar *v = &cl->vars[i];
        if (!same_name(v->name, v->nlen, "IFS", 3))
            continue;
        if (!(v->flags & SGR_VAR_PREFIX))
            changed = 1;
        else if (v->seg >= 0 && cl->seg[v->seg].argc
                 && is_func(p, cl->seg[v->seg].argv[0].text, cl->seg[v->seg].argv[0].len))
            changed = 1;
    }
    const vref *r = p->q->refs.p;
    for (uint32_t i = 0; i < p->q->refs.n && !changed; i++)
        if (r[i].kind == REF_ARITH && same_name(r[i].name, r[i].nlen, "IFS", 3))
            changed = 1;
    if (!changed)
        return 0;
    for (uint32_t j = seg0; j < cl->nseg; j++)
        if (cl->seg[j].flags & SGR_SEG_SPLITS)
            TRY(mark_dynamic(p, (int32_t)j, "IFS is changed on this line: the unquoted "
                             "expansions in this command split into words at run time"));
    return 0;
}

/* The end of a parse: read everything queued (scans first: they queue refs), the
 * values of this parse's integer variables, and the variables refs name, until
 * nothing is left.  var0: the first of this parse's variables. */
static int resolve_code(parser *p, uint32_t var0)
{
    codeq *q = p->q;
    sgr_cmdline *cl = p->cl;
    uint32_t nv = cl->nvars;
    if (!q->refs.n && !q->scans.n && nv == var0 && !q->calls.n && !p->ifs_set)
        return 0;       /* most lines */
    TRY(fork_code(p));
    TRY(ifs_code(p, p->seg0, var0));
    /* declare -i x: every value x is given on the line is arithmetic */
    for (uint32_t i = var0; i < nv; i++) {
        if (!(cl->vars[i].flags & SGR_VAR_INTEGER))
            continue;
        for (uint32_t j = var0; j < nv; j++) {
            const sgr_shvar *v = &cl->vars[j], *d = &cl->vars[i];
            if (v->nlen != d->nlen || memcmp(v->name, d->name, d->nlen) != 0 || !v->value)
                continue;
            if (v->vflags & W_RUNTIME)
                TRY(mark_dynamic_name(p, v->seg, "'%.*s' is an integer variable: the command "
                                      "output it is given is evaluated as arithmetic",
                                      v->name, v->nlen));
            else
                TRY(add_scan(p, v->seg, v->value, v->vlen, SC_ARITH, v->span));
        }
        for (uint32_t j = var0; j < nv; j++) {
            const sgr_shvar *v = &cl->vars[j], *d = &cl->vars[i];
            if (v->nlen == d->nlen && memcmp(v->name, d->name, d->nlen) == 0
                && (v->flags & SGR_VAR_UNKNOWN))
                TRY(mark_dynamic_name(p, v->seg, "'%.*s' is an integer variable, and a value "
                                      "it is given is only known at run time", v->name, v->nlen));
        }
    }
    nameset seen = {0};
    uint32_t si = 0, ri = 0;
    while (si < q->scans.n || ri < q->refs.n) {
        if (si < q->scans.n) {
            vscan v = ((vscan *)q->scans.p)[si++];
            TRY(run_scan(p, &v));
            continue;
        }
        vref r = ((vref *)q->refs.p)[ri++];
        if (r.kind != REF_OUTPUT) {
            int fresh = nameset_add(p, &seen, &r);
            if (fresh <= 0) {
                if (fresh < 0)
                    return -1;
                continue;
            }
        }
        TRY(resolve_ref(p, &r, nv));
    }
    return 0;
}

/* ---- commands ------------------------------------------------------------- */

/* Fill segment idx from the collected parts and its source range.  Inline: once
 * per command, and its arguments are the caller's locals. */
static inline int seg_finish(parser *p, int32_t idx, vec *argv, vec *asg, vec *rd, size_t start)
{
    sgr_segment *sg = &p->cl->seg[idx];
    sg->argv = argv->p;
    sg->argc = argv->n;
    sg->assigns = asg->p;
    sg->nassigns = asg->n;
    sg->redirs = rd->p;
    sg->nredirs = rd->n;
    sg->span = mkspan(p, start, p->pos - start);
    TRY(check_dynamic(p, idx));
    return code_candidate(sg) ? code_segment(p, idx) : 0;
}

static int too_many_words(parser *p, size_t start)
{
    return fail(p, start, p->pos - start, "more than %u words in one command",
                p->lim->max_words);
}

/* The word at i, whose first byte s[i] is C_PLAIN (class cc): *je = the end of its
 * run of C_PLAIN bytes.  When asg, returns what assign_len does for it (the NAME's
 * length for NAME= and NAME+=, *je then the NAME's end), else 0.  NAME bytes are C_PLAIN,
 * so the run goes on where the NAME stops and one scan answers both. */
static inline size_t plain_scan(const char *s, size_t i, size_t e, unsigned cc, int asg,
                                size_t *je)
{
    size_t j = i + 1;
    if (asg && (cc & C_NAME1)) {
        while (j < e && (cclass(s[j]) & C_NAME))
            j++;
        if (j < e && (s[j] == '=' || (s[j] == '+' && j + 1 < e && s[j + 1] == '='))) {
            *je = j;
            return j - i;
        }
    }
    /* four bytes per bound check while four are left */
    while (j + 4 <= e) {
        if (!(cclass(s[j]) & C_PLAIN))
            goto out;
        if (!(cclass(s[j + 1]) & C_PLAIN)) {
            j += 1;
            goto out;
        }
        if (!(cclass(s[j + 2]) & C_PLAIN)) {
            j += 2;
            goto out;
        }
        if (!(cclass(s[j + 3]) & C_PLAIN)) {
            j += 3;
            goto out;
        }
        j += 4;
    }
    while (j < e && (cclass(s[j]) & C_PLAIN))
        j++;
out:
    *je = j;
    return 0;
}

/* Is the word at i, in a command whose first `done` words are argv's, a NAME=(...) array
 * assignment bash reads as one: an operand of declare, typeset, local, export or
 * readonly, the only commands whose operands it parses as assignments? */
static int decl_array(const parser *p, const vec *argv, uint32_t done, size_t i)
{
    if (!done)
        return 0;
    const sgr_word *w0 = argv->p;
    int bi = builtin_of(w0);
    if (bi != BI_DECLARE)
        return 0;
    size_t pos = i;
    while (pos < p->end && is_name_char(p->s[pos]))
        pos++;
    if (pos < p->end && p->s[pos] == '+')
        pos++;
    return pos > i && is_name_start(p->s[i]) && pos + 1 < p->end && p->s[pos] == '='
           && p->s[pos + 1] == '(';
}

/* Length of NAME[...] in a NAME[subscript]=... or NAME[subscript]+=... word at pos,
 * the subscript found as bash finds it (quotes and escapes skipped, blanks
 * included: `a[ 1 ]=x` is one word), else 0. */
static size_t subscript_assign_len(const parser *p)
{
    size_t i = p->pos;
    if (i >= p->end || !is_name_start(p->s[i]))
        return 0;
    while (i < p->end && is_name_char(p->s[i]))
        i++;
    if (i >= p->end || p->s[i] != '[')
        return 0;
    int depth = 0;
    for (; i < p->end; i++) {
        char ch = p->s[i];
        if (ch == '\\')
            i++;
        else if (ch == '\'' || ch == '"') {
            size_t j = i + 1;
            while (j < p->end && p->s[j] != ch)
                j += ch == '"' && p->s[j] == '\\' ? 2 : 1;
            if (j >= p->end)
                return 0;
            i = j;
        } else if (ch == '[')
            depth++;
        else if (ch == ']' && --depth == 0)
            break;
        else if (ch == '\n')
            return 0;
    }
    if (i >= p->end)
        return 0;
    size_t n = i + 1 - p->pos;
    i++;
    if (i < p->end && p->s[i] == '+')
        i++;
    return i < p->end && p->s[i] == '=' ? n : 0;
}

/* subscript_assign -> NAME '[' arith ']' ['+'] '=' word   one program word, as the
 * command's first: assigning an array element is left unanalysed (dynamic), but
 * its subscript is read as the arithmetic it is. */
static int lex_subscript_assign(parser *p, const ctx *c, int32_t idx, size_t n, sgr_word *w)
{
    size_t start = p->pos, b0 = p->blen;
    const char *open = memchr(p->s + start, '[', n);
    uint32_t fl = 0;
    p->pos = (size_t)(open - p->s) + 1;
    TRY(arith_text(p, c, idx, SGR_NEST_CMDSUB, &fl, start, AT_BRACKET, "["));
    sgr_word rest = {0};
    TRY(lex_word(p, c, idx, SGR_NEST_CMDSUB, &rest));
    p->blen = b0;
    TRY(putn(p, p->s + start, p->pos - start));
    TRY(word_finish(p, b0, start, fl | rest.flags, w));
    return mark_dynamic(p, idx, "assigns an array element (NAME[...]=): not analysed");
}

/* After an argv word of segment idx was lexed (its slot is argv's last): put the
 * fields an unquoted $IFS split it into in its place, and note on the segment
 * that an unquoted expansion in its words splits at run time (for the IFS
 * analysis at the end of the parse: SPLITS). */
static int take_fields(parser *p, int32_t idx, vec *argv, uint32_t *wleft, size_t start)
{
    if (p->unq_exp) {
        p->cl->seg[idx].flags |= SGR_SEG_SPLITS;
        if (p->unq_exp == 2)
            TRY(mark_dynamic(p, idx, "the value of IFS splits a word here at run time"));
        p->unq_exp = 0;
    }
    if (!p->split_done)
        return 0;
    p->split_done = 0;
    p->cl->seg[idx].flags |= SGR_SEG_SPLITS;
    argv->n--;                  /* the placeholder, whose count the fields take */
    ++*wleft;
    const sgr_word *f = p->split.p;
    for (uint32_t k = 0; k < p->split.n; k++) {
        if (!(*wleft)--)
            return too_many_words(p, start);
        sgr_word *w = vgrow(p, argv, sizeof *w);
        if (!w)
            return -1;
        *w = f[k];
    }
    p->split.n = 0;
    return 0;
}

/* Words a simple command keeps on the C stack before its argv needs the arena:
 * most commands have fewer, and then argv is allocated once at its final size.
 * More spill into an arena vector of twice as many, which then grows as vgrow
 * does; either way no more arena bytes than vectors grown from 8. */
#define ARGV_LOCAL 16

/* simple_command -> (assignment | redirect)* (word | redirect)*
 * Most words are one plain run or one quoted string (lex_simple_word): parse_simple
 * reads those itself, plain runs with plain_scan, which also answers assign_len for
 * a word before the program name, and pushes them without a call (a quoted string
 * is no NAME=).  The result is what peek, assign_len and
 * lex_word give.  wend is 0, or the end of the plain run of the word at pos,
 * which parse_command found to be no assignment: it is not scanned again.
 * The input (s, end, dup, ovr) is the same on return from every call made here
 * (input_push and input_pop pair up), so it is kept in locals: the NUL stores into
 * dup would otherwise make the compiler reload it for every word. */
static int parse_simple(parser *p, const ctx *c, uint32_t plid, uint32_t k, int32_t *last,
                        size_t wend, tok *nt)
{
    int32_t idx;
    TRY(seg_new(p, c, plid, k, &idx));
    sgr_word loc[ARGV_LOCAL];
    vec argv = {loc, 0, ARGV_LOCAL}, asg = {0}, rd = {0};
    const char *const s = p->s;
    char *const dup = p->dup;
    const size_t e = p->end, start = p->pos;
    const int ovr = p->ovr;
    const int own = dup && !ovr;    /* words are slices of dup with their own spans */
    size_t i = start, endp = start;
    uint32_t wleft = p->lim->max_words;     /* max_words - argv.n - asg.n */
    unsigned cc;
    for (;;) {
        /* peek, with its "blanks, then a word" case decided here */
        while (i < e && (s[i] == ' ' || s[i] == '\t'))
            i++;
        if (i >= e) {
            nt->kind = T_EOF;
            nt->start = i;
            nt->len = 0;
            break;
        }
        cc = cclass(s[i]);
        if (cc & (C_META | C_DIGIT | C_SKIP)) {
            /* peek_any's answer for the commonest end of a command, a lone '|' */
            if (s[i] == '|' && (i + 1 >= e || (s[i + 1] != '|' && s[i + 1] != '&'))) {
                nt->kind = T_PIPE;
                nt->start = i;
                nt->len = 1;
                break;
            }
            p->pos = i;
            peek_any(p, nt);
            if (nt->kind == T_REDIR) {
                sgr_redir *r = vpush(p, &rd, sizeof *r);
                if (!r)
                    return -1;
                TRY(parse_redir(p, c, idx, nt, r, (uint32_t)idx));
                i = endp = p->pos;
                continue;
            }
            if (nt->kind != T_WORD)
                break;
            i = p->pos;
            cc = cclass(s[i]);
        }
    word:
        if (!wleft--) {
            p->pos = i;
            return too_many_words(p, start);
        }
        sgr_word *w;
        if (cc & C_PLAIN) {
            size_t j = i == start ? wend : 0, nl;
            if (!j && (nl = plain_scan(s, i, e, cc, !argv.n, &j)) != 0) {
                if (!(w = vgrow(p, &asg, sizeof *w)))
                    return -1;
                p->pos = i;
                TRY(lex_assign(p, c, idx, nl, w));
                i = endp = p->pos;
                continue;
            }
            if (!argv.n && j < e && s[j] == '[') {
                size_t sa;
                p->pos = i;
                if ((sa = subscript_assign_len(p)) != 0) {
                    if (!(w = vgrow(p, &argv, sizeof *w)))
                        return -1;
                    TRY(lex_subscript_assign(p, c, idx, sa, w));
                    i = endp = p->pos;
                    continue;
                }
            }
        plain:      /* j is the end of the plain run at i, which is no NAME= */
            if (!(w = vgrow(p, &argv, sizeof *w)))
                return -1;
            /* most words end at one blank, which word_ends need not look at */
            int blank = j < e && s[j] == ' ';
            if (!blank && !word_ends(s, e, j)) {
                p->pos = i;
                p->split_ok = 1;
                TRY(lex_word_loop(p, c, idx, SGR_NEST_CMDSUB, w));
                p->split_ok = 0;
                TRY(take_fields(p, idx, &argv, &wleft, start));
                i = endp = p->pos;
                continue;
            }
            if (j < e && s[j] == '(' && s[j - 1] == '=' && decl_array(p, &argv, argv.n - 1, i)) {
                /* declare a=(1 2): an array assignment, as bash reads it there */
                p->pos = i;
                TRY(lex_assign(p, c, idx, assign_len(p), w));
                i = endp = p->pos;
                continue;
            }
            /* lex_simple_word's plain case; slice_word's for a word of the line */
            if (own) {
                w->text = dup + i;
                w->len = (uint32_t)(j - i);
                w->flags = s[i] == '~' ? SGR_W_TILDE : 0;
                w->span.off = (uint32_t)i;
                w->span.len = (uint32_t)(j - i);
                dup[j] = '\0';
            } else
                TRY(slice_word(p, dup, ovr, s, i, j - i, s[i] == '~' ? SGR_W_TILDE : 0, i,
                               j - i, w));
            endp = j;
            /* and the next word follows: argv has a word, so it is no NAME= */
            if (blank && j + 1 < e && !((cc = cclass(s[j + 1])) & (C_META | C_DIGIT | C_SKIP))) {
                i = j + 1;
                if (!(cc & C_PLAIN))
                    goto word;
                if (!wleft--) {
                    p->pos = i;
                    return too_many_words(p, start);
                }
                plain_scan(s, i, e, cc, 0, &j);
                goto plain;
            }
            i = j;
            continue;
        }
        if (s[i] == '\'' || s[i] == '"') {
            /* lex_simple_word's quoted case: no NAME, so an argv word */
            size_t q = i + 1;
            if (s[i] == '\'') {
                const char *z = memchr(s + q, '\'', e - q);
                q = z ? (size_t)(z - s) : e;
            } else
                while (q < e && !(cclass(s[q]) & C_DQ))
                    q++;
            size_t j = q + 1;
            if (q < e && s[q] == s[i] && word_ends(s, e, j)) {
                if (!(w = vgrow(p, &argv, sizeof *w)))
                    return -1;
                TRY(slice_word(p, dup, ovr, s, i + 1, q - i - 1, SGR_W_QUOTED, i, j - i, w));
                i = endp = j;
                continue;
            }
        }
        p->pos = i;
        size_t nl = argv.n ? 0 : assign_len(p), sa = argv.n || nl ? 0 : subscript_assign_len(p);
        if (sa) {
            if (!(w = vgrow(p, &argv, sizeof *w)))
                return -1;
            TRY(lex_subscript_assign(p, c, idx, sa, w));
            i = endp = p->pos;
            continue;
        }
        int da = decl_array(p, &argv, argv.n, i);
        if (!(w = vgrow(p, nl ? &asg : &argv, sizeof *w)))
            return -1;
        if (nl || da)
            TRY(lex_assign(p, c, idx, da ? assign_len(p) : nl, w));
        else {
            p->split_ok = 1;
            TRY(lex_word(p, c, idx, SGR_NEST_CMDSUB, w));
            p->split_ok = 0;
            TRY(take_fields(p, idx, &argv, &wleft, start));
        }
        i = endp = p->pos;
    }
    p->pos = endp;
    *last = idx;
    if (argv.p == loc) {
        /* the words fitted in loc: argv at its final size */
        if (!argv.n)
            argv.p = NULL;
        else if (!(argv.p = sg_arena_alloc(p->a, argv.n * sizeof *loc)))
            return oom(p);
        else
            memcpy(argv.p, loc, argv.n * sizeof *loc);
    }
    TRY(seg_finish(p, idx, &argv, &asg, &rd, start));
    p->pos = nt->start;     /* where peek leaves it */
    return 0;
}

/* dbrack -> '[[' (word | operator)* ']]' redirect*   one segment, argv "[[" ... "]]" */
static int parse_dbrack(parser *p, const ctx *c, uint32_t plid, uint32_t k, int32_t *last,
                        tok *nt)
{
    int32_t idx;
    size_t start = p->pos;
    TRY(seg_new(p, c, plid, k, &idx));
    vec argv = {0}, asg = {0}, rd = {0};
    sgr_word *w = vgrow(p, &argv, sizeof *w);
    if (!w)
        return -1;
    TRY(mkword(p, "[[", 2, 0, start, 2, w));
    p->pos += 2;
    for (;;) {
        skip_blanks(p);
        if (p->pos >= p->end)
            return fail(p, start, p->end - start, "'[[' without matching ']]'");
        char ch = p->s[p->pos];
        if (ch == '\n' || ch == '\r') {
            p->pos++;     /* bash reads pending heredocs at a newline inside [[ ]] too */
            if (ch == '\n' && p->hd_n > p->hd_base) {
                /* their commands go after the heredoc's owner, which may move this
                 * segment: follow it */
                if (p->ntrack == sizeof p->track / sizeof *p->track)
                    return fail(p, start, p->pos - start, "here-documents pending inside [[ ]] nested too deeply");
                p->track[p->ntrack++] = &idx;
                int r = read_heredocs(p);
                p->ntrack--;
                TRY(r);
            }
            continue;
        }
        if (argv.n >= p->lim->max_words)
            return too_many_words(p, start);
        w = vgrow(p, &argv, sizeof *w);
        if (!w)
            return -1;
        if (lit_len(p) == 2 && memcmp(p->s + p->pos, "]]", 2) == 0) {
            TRY(mkword(p, "]]", 2, 0, p->pos, 2, w));
            p->pos += 2;
            break;
        }
        int proc = (ch == '<' || ch == '>') && p->pos + 1 < p->end && p->s[p->pos + 1] == '(';
        if (is_meta(ch) && !proc) {
            size_t n = (p->pos + 1 < p->end && (ch == '&' || ch == '|')
                        && p->s[p->pos + 1] == ch) ? 2 : 1;
            TRY(mkword(p, p->s + p->pos, n, 0, p->pos, n, w));
            p->pos += n;
            continue;
        }
        TRY(lex_word(p, c, idx, SGR_NEST_CMDSUB, w));
    }
    for (;;) {
        size_t endp = p->pos;
        peek(p, nt);
        if (nt->kind != T_REDIR) {
            p->pos = endp;
            break;
        }
        sgr_redir *r = vpush(p, &rd, sizeof *r);
        if (!r)
            return -1;
        TRY(parse_redir(p, c, idx, nt, r, (uint32_t)idx));
    }
    *last = idx;
    TRY(seg_finish(p, idx, &argv, &asg, &rd, start));
    p->pos = nt->start;     /* where peek leaves it */
    return 0;
}

/* arith_command -> '((' arith '))' redirect*   one segment, argv "((" EXPR "))" */
static int parse_arith_cmd(parser *p, const ctx *c, uint32_t plid, uint32_t k, int32_t *last,
                           tok *nt)
{
    int32_t idx;
    size_t start = p->pos;
    TRY(seg_new(p, c, plid, k, &idx));
    vec argv = {0}, asg = {0}, rd = {0};
    sgr_word *w = vgrow(p, &argv, sizeof *w);
    if (!w)
        return -1;
    TRY(mkword(p, "((", 2, 0, start, 2, w));
    size_t b0 = p->blen;
    uint32_t fl = 0;
    TRY(enter(p, start));
    p->pos += 2;
    TRY(scan_arith(p, c, idx, SGR_NEST_CMDSUB, &fl, start, "(("));
    leave(p);
    p->blen = b0;
    if (!(w = vgrow(p, &argv, sizeof *w)))
        return -1;
    TRY(mkword(p, p->s + start + 2, p->pos - start - 4, fl | SGR_W_ARITH, start + 2,
               p->pos - start - 4, w));
    if (!(w = vgrow(p, &argv, sizeof *w)))
        return -1;
    TRY(mkword(p, "))", 2, 0, p->pos - 2, 2, w));
    for (;;) {
        size_t endp = p->pos;
        peek(p, nt);
        if (nt->kind != T_REDIR) {
            p->pos = endp;
            break;
        }
        sgr_redir *r = vpush(p, &rd, sizeof *r);
        if (!r)
            return -1;
        TRY(parse_redir(p, c, idx, nt, r, (uint32_t)idx));
    }
    *last = idx;
    TRY(seg_finish(p, idx, &argv, &asg, &rd, start));
    p->pos = nt->start;     /* where peek leaves it */
    return 0;
}

/* Expect reserved word kw in command position; opened is where the construct began. */
static int expect_kw(parser *p, int kw, size_t opened, const char *msg)
{
    tok t;
    TRY(skip_linebreaks(p, &t));
    if (t.kind == T_WORD && keyword_at(p) == kw) {
        p->pos += lit_len(p);
        return 0;
    }
    if (t.kind == T_EOF)
        return fail(p, opened, p->end - opened, "%s", msg);
    return unexpected(p, &t);
}

/* A list that bash requires to hold at least one command. */
static int nonempty_list(parser *p, const ctx *c, unsigned terms, size_t opened,
                         const char *msg)
{
    int n = 0;
    tok t;
    TRY(parse_list(p, c, terms, &n, &t));
    if (n)
        return 0;
    if (t.kind == T_EOF)
        return fail(p, opened, p->end - opened, "%s", msg);
    return unexpected(p, &t);
}

/* Words of a compound-command header (for ... in WORDS, case WORD): their commands
 * are nested in c's parent. */
static int header_word(parser *p, const ctx *c)
{
    sgr_word w;
    return lex_word(p, c, c->parent, SGR_NEST_CMDSUB, &w);
}

/* if_clause -> 'if' list 'then' list ('elif' list 'then' list)* ['else' list] 'fi' */
static int parse_if(parser *p, const ctx *c, size_t st)
{
    static const char nofi[] = "'if' without matching 'fi'";
    p->pos += 2;
    TRY(nonempty_list(p, c, TM_THEN, st, "'if' without matching 'then'"));
    TRY(expect_kw(p, KW_THEN, st, "'if' without matching 'then'"));
    TRY(nonempty_list(p, c, TM_ELIF | TM_ELSE | TM_FI, st, nofi));
    for (;;) {
        tok t;
        TRY(skip_linebreaks(p, &t));
        int kw = t.kind == T_WORD ? keyword_at(p) : KW_NONE;
        if (kw == KW_ELIF) {
            p->pos += 4;
            TRY(nonempty_list(p, c, TM_THEN, st, "'elif' without matching 'then'"));
            TRY(expect_kw(p, KW_THEN, st, "'elif' without matching 'then'"));
            TRY(nonempty_list(p, c, TM_ELIF | TM_ELSE | TM_FI, st, nofi));
        } else if (kw == KW_ELSE) {
            p->pos += 4;
            TRY(nonempty_list(p, c, TM_FI, st, nofi));
            return expect_kw(p, KW_FI, st, nofi);
        } else if (kw == KW_FI) {
            p->pos += 2;
            return 0;
        } else if (t.kind == T_EOF)
            return fail(p, st, p->end - st, "%s", nofi);
        else
            return unexpected(p, &t);
    }
}

/* do_group -> linebreak 'do' list 'done' */
static int parse_do_group(parser *p, const ctx *c, size_t st, const char *what)
{
    char m1[48], m2[48];
    snprintf(m1, sizeof m1, "'%s' without matching 'do'", what);
    snprintf(m2, sizeof m2, "'%s' without matching 'done'", what);
    TRY(expect_kw(p, KW_DO, st, m1));
    TRY(nonempty_list(p, c, TM_DONE, st, m2));
    return expect_kw(p, KW_DONE, st, m2);
}

/* Append the name s[pos..pos+nl) to a list of names (cl->funcs, cl->loopvars). */
static int add_name(parser *p, sgr_word **v, uint32_t *n, uint32_t *cap, size_t pos, size_t nl)
{
    if (*n == *cap) {
        uint32_t nc = *cap ? *cap * 2 : 4;
        sgr_word *nv = *cap ? sg_arena_grow(p->a, *v, sizeof *nv * *cap, sizeof *nv * nc)
                            : sg_arena_alloc(p->a, sizeof *nv * nc);
        if (!nv)
            return oom(p);
        *v = nv;
        *cap = nc;
    }
    char *t = sg_arena_strndup(p->a, p->s + pos, nl);
    if (!t)
        return oom(p);
    sgr_word *w = &(*v)[(*n)++];
    memset(w, 0, sizeof *w);
    w->text = t;
    w->len = (uint32_t)nl;
    w->span = mkspan(p, pos, nl);
    return 0;
}

/* The name of a function the input defines. */
static int add_func(parser *p, size_t pos, size_t nl)
{
    return add_name(p, &p->cl->funcs, &p->cl->nfuncs, &p->cl->capfuncs, pos, nl);
}

/* for_clause -> ('for' | 'select') NAME [linebreak 'in' word* (';' | NL)] [';'] do_group
 *             | 'for' '((' arith '))' [';'] do_group */
static int parse_for(parser *p, const ctx *c, const ctx *body, size_t st, size_t kwlen)
{
    const char *what = kwlen == 3 ? "for" : "select";
    p->pos += kwlen;
    skip_blanks(p);
    tok t;
    if (kwlen == 3 && p->pos + 1 < p->end && p->s[p->pos] == '(' && p->s[p->pos + 1] == '(') {
        size_t a0 = p->pos, b0 = p->blen;
        uint32_t fl = 0;
        TRY(enter(p, a0));
        p->pos += 2;
        TRY(scan_arith(p, c, c->parent, SGR_NEST_CMDSUB, &fl, a0, "(("));
        leave(p);
        p->blen = b0;
        peek(p, &t);
        if (t.kind == T_SEMI)
            TRY(consume(p, &t));
        return parse_do_group(p, body, st, what);
    }
    peek(p, &t);
    if (t.kind != T_WORD || assign_len(p) || !is_name_start(p->s[p->pos]))
        return fail(p, st, p->pos - st + 1, "'%s' needs a variable name", what);
    size_t nl = 0;
    while (p->pos + nl < p->end && is_name_char(p->s[p->pos + nl]))
        nl++;
    if (p->pos + nl < p->end && !is_meta(p->s[p->pos + nl]))
        return fail(p, p->pos, nl + 1, "'%s' needs a variable name", what);
    TRY(add_name(p, &p->cl->loopvars, &p->cl->nloopvars, &p->cl->caploopvars, p->pos, nl));
    const char *name = p->s + p->pos;
    sgr_span nsp = mkspan(p, p->pos, nl);
    p->pos += nl;
    if (kwlen != 3)
        TRY(add_var(p, -1, "REPLY", 5, NULL, 0, 0, 0, nsp));    /* select reads a reply */
    TRY(skip_linebreaks(p, &t));
    if (t.kind == T_WORD && keyword_at(p) == KW_IN) {
        p->pos += 2;
        /* The words are the values of the variable, and the names the body reads
         * through it: one segment of the loop's own (SGR_SEG_LOOP, argc 0) holds
         * them as its words, so every one reaches the checks of paths, whatever
         * the body does with "$NAME".  Made at the first word, before its
         * substitutions' segments, which nest in it. */
        int32_t idx = -1;
        size_t hs = p->pos, he = p->pos;
        vec asg = {0};
        for (;;) {
            peek(p, &t);
            if (t.kind == T_WORD) {
                if (idx < 0) {
                    hs = p->pos;
                    TRY(seg_new(p, body, p->cl->npipelines++, 0, &idx));
                    p->cl->seg[idx].flags |= SGR_SEG_LOOP;
                }
                if (asg.n >= p->lim->max_words)
                    return too_many_words(p, hs);
                /* each word is a value of the variable; a file name from a glob
                 * or brace word is only known at run time */
                sgr_word w = {0};
                TRY(lex_word(p, c, idx, SGR_NEST_CMDSUB, &w));
                int unknown = (w.flags & (W_RUNTIME | SGR_W_GLOB | SGR_W_BRACE)) != 0;
                TRY(add_var(p, -1, name, nl, unknown ? NULL : w.text, unknown ? 0 : w.len,
                            w.flags, 0, w.span));
                sgr_word *a = vgrow(p, &asg, sizeof *a);
                if (!a)
                    return -1;
                *a = w;
                he = p->pos;
                continue;
            }
            if (t.kind == T_SEMI || t.kind == T_NL || t.kind == T_CR) {
                if (idx >= 0) {
                    /* finished before the newline, which may read here-documents
                     * whose commands move segments */
                    sgr_segment *sg = &p->cl->seg[idx];
                    sg->values = asg.p;
                    sg->nvalues = asg.n;
                    sg->span = mkspan(p, hs, he - hs);
                }
                TRY(consume(p, &t));
                break;
            }
            if (t.kind == T_EOF)
                return fail(p, st, p->end - st, "'%s' without matching 'do'", what);
            return unexpected(p, &t);
        }
        TRY(parse_do_group(p, body, st, what));
        if (idx >= 0) {
            /* the header's span runs on to 'done', so the body is what lies between
             * its last word and its end; here-documents read since may have moved it */
            for (uint32_t k = p->cl->nseg; k-- > 0;)
                if (p->cl->seg[k].values == asg.p && (p->cl->seg[k].flags & SGR_SEG_LOOP)) {
                    p->cl->seg[k].span = mkspan(p, hs, p->pos - hs);
                    break;
                }
        }
        return 0;
    }
    /* for x; do: the positional parameters, only known at run time */
    TRY(add_var(p, -1, name, nl, NULL, 0, 0, 0, nsp));
    if (t.kind == T_SEMI)
        TRY(consume(p, &t));
    return parse_do_group(p, body, st, what);
}

/* case_clause -> 'case' word linebreak 'in' linebreak case_item* 'esac'
 * case_item   -> ['('] word ('|' word)* ')' list [';;' | ';&' | ';;&'] linebreak */
static int parse_case(parser *p, const ctx *c, const ctx *body, size_t st)
{
    static const char noesac[] = "'case' without matching 'esac'";
    tok t;
    p->pos += 4;
    peek(p, &t);
    if (t.kind != T_WORD)
        return t.kind == T_EOF ? fail(p, st, p->end - st, "'case' needs a word")
                               : unexpected(p, &t);
    TRY(header_word(p, c));
    TRY(skip_linebreaks(p, &t));
    if (!(t.kind == T_WORD && keyword_at(p) == KW_IN))
        return t.kind == T_EOF ? fail(p, st, p->end - st, "'case' without 'in'")
                               : unexpected(p, &t);
    p->pos += 2;
    for (;;) {
        TRY(skip_linebreaks(p, &t));
        if (t.kind == T_WORD && keyword_at(p) == KW_ESAC) {
            p->pos += 4;
            return 0;
        }
        if (t.kind == T_EOF)
            return fail(p, st, p->end - st, "%s", noesac);
        if (t.kind == T_LPAREN) {
            TRY(consume(p, &t));
            peek(p, &t);
        }
        for (;;) {
            if (t.kind != T_WORD)
                return t.kind == T_EOF ? fail(p, st, p->end - st, "%s", noesac) : unexpected(p, &t);
            TRY(header_word(p, c));
            peek(p, &t);
            if (t.kind == T_PIPE) {
                TRY(consume(p, &t));
                peek(p, &t);
                continue;
            }
            if (t.kind == T_RPAREN) {
                TRY(consume(p, &t));
                break;
            }
            return t.kind == T_EOF ? fail(p, st, p->end - st, "%s", noesac) : unexpected(p, &t);
        }
        int n = 0;
        TRY(parse_list(p, body, TM_CASE | TM_ESAC, &n, &t));
        if (t.kind == T_DSEMI || t.kind == T_SEMIAMP || t.kind == T_DSEMIAMP)
            TRY(consume(p, &t));
        else if (!(t.kind == T_WORD && keyword_at(p) == KW_ESAC))
            return t.kind == T_EOF ? fail(p, st, p->end - st, "%s", noesac) : unexpected(p, &t);
    }
}

static int parse_compound(parser *p, const ctx *c, int kw, int lparen);

/* The function name[0..nl) was defined with body segments [start, nseg): record
 * it and the commands its body runs, for fork_code. */
static int func_calls(parser *p, const char *name, size_t nl, uint32_t start)
{
    vcall *f = vgrow(p, &p->q->funcs, sizeof *f);
    if (!f)
        return -1;
    *f = (vcall){name, NULL, (uint32_t)nl, 0, -1, 0};
    for (uint32_t j = start; j < p->cl->nseg; j++) {
        const sgr_segment *sg = &p->cl->seg[j];
        if (!sg->argc || (sg->argv[0].flags & (SGR_W_UNKNOWN | SGR_W_GLOB | SGR_W_BRACE)))
            continue;
        vcall *k = vgrow(p, &p->q->calls, sizeof *k);
        if (!k)
            return -1;
        int spawn = sg->pipe_len > 1 || (sg->flags & (SGR_SEG_BACKGROUND | SGR_SEG_SUBSHELL))
                    || sg->nest == SGR_NEST_CMDSUB || sg->nest == SGR_NEST_PROCSUB;
        *k = (vcall){name, sg->argv[0].text, (uint32_t)nl, sg->argv[0].len, (int32_t)j,
                     (uint8_t)spawn};
    }
    return 0;
}

/* function_def -> NAME '(' ')' linebreak compound_command redirect*
 *               | 'function' NAME ['(' ')'] linebreak compound_command redirect* */
static int parse_function(parser *p, const ctx *c, size_t st, int keyword)
{
    if (keyword) {
        p->pos += 8;
        skip_blanks(p);
    }
    size_t nl = lit_len(p);
    if (!nl)
        return fail(p, st, p->pos - st + 1, "function definition needs a name");
    TRY(add_func(p, p->pos, nl));
    const char *name = p->s + p->pos;
    p->pos += nl;
    skip_blanks(p);
    if (p->pos < p->end && p->s[p->pos] == '(') {
        p->pos++;
        skip_blanks(p);
        if (p->pos >= p->end || p->s[p->pos] != ')')
            return fail(p, st, p->pos - st, "function definition: '(' without ')'");
        p->pos++;
    }
    tok t;
    TRY(skip_linebreaks(p, &t));
    int kw = t.kind == T_WORD ? keyword_at(p) : KW_NONE;
    int ok = t.kind == T_LPAREN || kw == KW_LBRACE || kw == KW_IF || kw == KW_WHILE
          || kw == KW_UNTIL || kw == KW_FOR || kw == KW_SELECT || kw == KW_CASE
          || kw == KW_DLBRACK;
    if (!ok)
        return t.kind == T_EOF ? fail(p, st, p->end - st, "function definition without a body")
                               : fail(p, t.start, 1, "function body must be a compound command");
    ctx fc = *c;
    fc.segflags |= SGR_SEG_CONTROL | SGR_SEG_FUNCDEF;
    uint32_t start = p->cl->nseg;
    TRY(enter(p, st));
    if (kw == KW_DLBRACK) {
        int32_t last;
        tok nt;
        TRY(parse_dbrack(p, &fc, p->cl->npipelines++, 0, &last, &nt));
    } else
        TRY(parse_compound(p, &fc, kw, t.kind == T_LPAREN));
    leave(p);
    TRY(compound_redirs(p, &fc, start));
    return func_calls(p, name, nl, start);
}

/* compound_command -> brace_group | subshell | if_clause | while_clause
 *                   | for_clause | case_clause   (pos at its first token) */
static int parse_compound(parser *p, const ctx *c, int kw, int lparen)
{
    size_t st = p->pos;
    ctx in = *c;
    TRY(enter(p, st));
    if (lparen) {
        /* subshell -> '(' list ')' */
        in.segflags |= SGR_SEG_SUBSHELL;
        p->pos++;
        TRY(nonempty_list(p, &in, TM_RPAREN, st, "'(' without matching ')'"));
        tok t;
        peek(p, &t);
        if (t.kind != T_RPAREN)
            return t.kind == T_EOF ? fail(p, st, p->end - st, "'(' without matching ')'")
                                   : unexpected(p, &t);
        p->pos++;
    } else if (kw == KW_LBRACE) {
        /* brace_group -> '{' list '}' */
        p->pos++;
        TRY(nonempty_list(p, &in, TM_RBRACE, st, "'{' without matching '}'"));
        TRY(expect_kw(p, KW_RBRACE, st, "'{' without matching '}'"));
    } else {
        in.segflags |= SGR_SEG_CONTROL;
        switch (kw) {
        case KW_IF:
            TRY(parse_if(p, &in, st));
            break;
        case KW_WHILE: case KW_UNTIL: {
            /* while_clause -> ('while' | 'until') list do_group */
            const char *what = kw == KW_WHILE ? "while" : "until";
            p->pos += 5;
            char m[48];
            snprintf(m, sizeof m, "'%s' without matching 'do'", what);
            TRY(nonempty_list(p, &in, TM_DO, st, m));
            TRY(parse_do_group(p, &in, st, what));
            break;
        }
        case KW_FOR:
            TRY(parse_for(p, c, &in, st, 3));
            break;
        case KW_SELECT:
            TRY(parse_for(p, c, &in, st, 6));
            break;
        case KW_CASE:
            TRY(parse_case(p, c, &in, st));
            break;
        default:
            return fail(p, st, 1, "internal error: not a compound command");
        }
    }
    leave(p);
    return 0;
}

/* command -> simple_command | compound_command redirect* | function_def
 *          | '[[' ... ']]' | '((' arith '))'
 * *nt is the command's first token as peek gives it (pos at its start), and
 * becomes the token after the command, pos at its start, as peek would give it. */
static int parse_command(parser *p, const ctx *c, uint32_t plid, uint32_t k, int32_t *last,
                         tok *nt)
{
    const tok t = *nt;
    *last = -1;
    uint32_t start = p->cl->nseg;
    size_t st = t.start;
    int fn = 0;     /* function definitions attach their own redirections */
    if (t.kind == T_LPAREN) {
        int ar = p->pos + 1 < p->end && p->s[p->pos + 1] == '(' ? arith_prescan(p, p->pos + 2)
                                                                 : 0;
        if (ar < 0)
            return fail(p, p->pos, p->end - p->pos, "unterminated ((");
        if (ar > 0)
            return parse_arith_cmd(p, c, plid, k, last, nt);
        TRY(parse_compound(p, c, KW_NONE, 1));
    } else if (t.kind == T_WORD) {
        /* A word whose first byte is C_PLAIN is scanned once, here: a reserved word
         * starting so (all but '{' and '[[') is all C_PLAIN bytes, so keyword_at's
         * literal run for it is the plain run, ended by an operator byte or the end;
         * a NAME= word is none ('=' is no operator byte).  plain: the word is that
         * run (word_ends_at), no assignment: parse_simple need not scan it again. */
        const char *s = p->s;
        size_t i = p->pos, e = p->end, j = 0, nl;
        unsigned cc = cclass(s[i]);
        int kw = KW_NONE, plain = 0;
        if (!(cc & C_PLAIN))
            kw = keyword_at(p);
        else if (!plain_scan(s, i, e, cc, 1, &j) && (j == e || is_meta(s[j]))) {
            kw = keyword_in(s + i, j - i);
            plain = word_ends_at(p, j);
        }
        switch (kw) {
        case KW_THEN: case KW_ELIF: case KW_ELSE: case KW_FI: case KW_DO: case KW_DONE:
        case KW_ESAC: case KW_RBRACE: case KW_BANG:
            return unexpected(p, &t);
        case KW_DLBRACK:
            return parse_dbrack(p, c, plid, k, last, nt);
        case KW_FUNCTION:
            TRY(parse_function(p, c, st, 1));
            fn = 1;
            break;
        case KW_LBRACE: case KW_IF: case KW_WHILE: case KW_UNTIL: case KW_FOR:
        case KW_SELECT: case KW_CASE:
            TRY(parse_compound(p, c, kw, 0));
            break;
        default: {
            /* When the program word is a plain run that ends it, funcdef_at's
             * lit_len is that run (the byte after it is an operator or the end),
             * so a function definition needs '(' after the blanks that follow;
             * parse_simple then starts from plain_scan's answer. */
            if (plain) {
                size_t q = j;
                while (q < e && (s[q] == ' ' || s[q] == '\t'))
                    q++;
                if (q >= e || s[q] != '(')
                    return parse_simple(p, c, plid, k, last, j, nt);
            }
            if (funcdef_at(p, &nl)) {
                TRY(parse_function(p, c, st, 0));
                fn = 1;
                break;
            }
            return parse_simple(p, c, plid, k, last, 0, nt);
        }
        }
    } else if (t.kind == T_REDIR)
        return parse_simple(p, c, plid, k, last, 0, nt);
    else
        return unexpected(p, &t);
    if (!fn)
        TRY(compound_redirs(p, c, start));
    /* the compound's lone commands take its place in the pipeline */
    for (uint32_t j = start; j < p->cl->nseg; j++) {
        sgr_segment *sg = &p->cl->seg[j];
        if (sg->depth == c->depth && sg->pipe_len == 1) {
            sg->pipeline = plid;
            sg->pipe_index = k;
        }
    }
    peek(p, nt);
    return 0;
}

/* pipeline -> ['!'] command (('|' | '|&') linebreak command)*
 * *nt: in and out as for parse_command. */
static int parse_pipeline(parser *p, const ctx *c, int32_t *last, tok *nt)
{
    int neg = 0;
    while (p->pos < p->end && p->s[p->pos] == '!' && keyword_at(p) == KW_BANG) {
        neg = 1;
        p->pos++;
        skip_blanks(p);
    }
    if (neg)
        peek(p, nt);
    uint32_t plid = p->cl->npipelines++, first = p->cl->nseg, k = 0;
    for (;;) {
        TRY(parse_command(p, c, plid, k++, last, nt));
        if (nt->kind != T_PIPE && nt->kind != T_PIPEAMP)
            break;
        tok t = *nt;
        set_conn(p, *last, t.kind == T_PIPE ? SGR_CONN_PIPE : SGR_CONN_PIPE_ERR);
        TRY(consume(p, &t));
        TRY(skip_linebreaks(p, nt));
        if (nt->kind == T_EOF)
            return fail(p, t.start, t.len, "syntax error: '%.*s' must be followed by a command",
                        (int)t.len, p->s + t.start);
    }
    /* a lone command that is not negated changes nothing: pipe_len is 1 from
     * seg_new and parse_command's compound case takes only pipe_len 1 segments */
    if (k == 1 && !neg)
        return 0;
    for (uint32_t j = first; j < p->cl->nseg; j++) {
        sgr_segment *sg = &p->cl->seg[j];
        if (sg->pipeline == plid) {
            sg->pipe_len = k;
            if (neg)
                sg->flags |= SGR_SEG_NEGATED;
        }
    }
    return 0;
}

/* and_or -> pipeline (('&&' | '||') linebreak pipeline)*
 * *nt: in and out as for parse_command. */
static int parse_and_or(parser *p, const ctx *c, int32_t *last, tok *nt)
{
    TRY(parse_pipeline(p, c, last, nt));
    for (;;) {
        tok t = *nt;
        if (t.kind != T_AND && t.kind != T_OR)
            return 0;
        set_conn(p, *last, t.kind == T_AND ? SGR_CONN_AND : SGR_CONN_OR);
        TRY(consume(p, &t));
        TRY(skip_linebreaks(p, nt));
        if (nt->kind == T_EOF)
            return fail(p, t.start, t.len, "syntax error: '%s' must be followed by a command",
                        t.kind == T_AND ? "&&" : "||");
        TRY(parse_pipeline(p, c, last, nt));
    }
}

/* Is the next token one of the terminators in terms? */
static int at_terminator(parser *p, const tok *t, unsigned terms)
{
    switch (t->kind) {
    case T_RPAREN: return (terms & TM_RPAREN) != 0;
    case T_DSEMI: case T_SEMIAMP: case T_DSEMIAMP: return (terms & TM_CASE) != 0;
    case T_WORD: break;
    default: return 0;
    }
    if (!(terms & ~(unsigned)(TM_RPAREN | TM_CASE)))
        return 0;                       /* no reserved word ends this list */
    switch (keyword_at(p)) {
    case KW_THEN: return (terms & TM_THEN) != 0;
    case KW_ELIF: return (terms & TM_ELIF) != 0;
    case KW_ELSE: return (terms & TM_ELSE) != 0;
    case KW_FI: return (terms & TM_FI) != 0;
    case KW_DO: return (terms & TM_DO) != 0;
    case KW_DONE: return (terms & TM_DONE) != 0;
    case KW_ESAC: return (terms & TM_ESAC) != 0;
    case KW_RBRACE: return (terms & TM_RBRACE) != 0;
    default: return 0;
    }
}

/* list -> linebreak (and_or ((';' | '&' | NL) linebreak and_or)* [';' | '&'])?
 * Stops (without consuming) at end of input, at a terminator in terms, or at a
 * token that cannot continue the list; the caller decides whether that is an
 * error.  *count gets the number of and_or lists parsed, *nt the token it stopped
 * at, as peek gives it (pos at its start): callers need not peek it again. */
static int parse_list(parser *p, const ctx *c, unsigned terms, int *count, tok *nt)
{
    for (;;) {
        tok t;
        TRY(skip_linebreaks(p, &t));
        if (t.kind == T_EOF || at_terminator(p, &t, terms)) {
            *nt = t;
            return 0;
        }
        uint32_t first = p->cl->nseg;
        int32_t last;
        TRY(parse_and_or(p, c, &last, &t));
        (*count)++;
        switch (t.kind) {
        case T_AMP:
            set_conn(p, last, SGR_CONN_AMP);
            for (uint32_t j = first; j < p->cl->nseg; j++)
                p->cl->seg[j].flags |= SGR_SEG_BACKGROUND;
            break;
        case T_SEMI: case T_NL: case T_CR:
            set_conn(p, last, SGR_CONN_SEMI);
            break;
        default:
            *nt = t;
            return 0;
        }
        TRY(consume(p, &t));
    }
}

/* program -> list EOF */
static int parse_program(parser *p, const ctx *c)
{
    int n = 0;
    tok t;
    TRY(parse_list(p, c, 0, &n, &t));
    if (t.kind != T_EOF)
        return unexpected(p, &t);
    if (p->hd_n > p->hd_base)
        TRY(read_heredocs(p));      /* no newline after `cat <<EOF`: empty bodies, as bash */
    return 0;
}

/* ---- entry points --------------------------------------------------------- */

static void parser_init(parser *p, sg_arena *a, sgr_cmdline *cl, const sgr_sh_limits *lim,
                        const char *s, size_t len)
{
    memset(p, 0, sizeof *p);
    p->a = a;
    p->cl = cl;
    p->lim = lim;
    p->maxdepth = lim->max_depth < HARD_DEPTH ? lim->max_depth : HARD_DEPTH;
    p->s = s;
    p->end = len;
    p->refkind = REF_NONE;
}

/* Checks done before parsing: length and NUL bytes. */
static int precheck(parser *p, size_t len)
{
    if (len > p->lim->max_line)
        return fail(p, 0, len, "command longer than %u bytes", p->lim->max_line);
    const char *z = len ? memchr(p->s, 0, len) : NULL;
    if (z)
        return fail(p, (size_t)(z - p->s), 1, "NUL byte in command");
    return 0;
}

/* Allocate dup, the copy of the input that lex_simple_word's word texts point
 * into (with room for a NUL after its end), buf, the word-building stack, and
 * when cl has no segment vector yet, the one the first seg_room would make: one
 * arena allocation for the three. */
static int alloc_buf(parser *p, size_t len)
{
    size_t dn = (len + 1 + (SG_ARENA_ALIGN - 1)) & ~(SG_ARENA_ALIGN - 1);
    size_t sn = p->cl->cap ? 0 : SEG_CAP0 * sizeof(sgr_segment);
    p->bcap = (len < 4096 ? len : 4096) + 64;
    char *m = sg_arena_alloc(p->a, dn + sn + p->bcap);
    if (!m)
        return oom(p);
    p->dup = m;
    if (sn)
        p->seg0v = (sgr_segment *)(void *)(m + dn);
    p->buf = m + dn + sn;
    if (len)
        memcpy(p->dup, p->s, len);
    return 0;
}

int sgr_sh_parse(sg_arena *a, const char *line, size_t len, const sgr_sh_limits *lim,
                 sgr_cmdline *out)
{
    static const sgr_sh_limits defl = SGR_SH_DEFAULT_LIMITS;
    if (!lim)
        lim = &defl;
    memset(out, 0, sizeof *out);
    out->line = line;
    out->len = len;
    parser p;
    codeq q = {0};
    parser_init(&p, a, out, lim, line, len);
    p.q = &q;
    ctx top = {-1, SGR_NEST_TOP, 0, 0};
    if (precheck(&p, len) == 0 && alloc_buf(&p, len) == 0 && parse_program(&p, &top) == 0)
        resolve_code(&p, 0);
    if (!p.err)
        return 0;
    out->nseg = 0;
    out->npipelines = 0;
    out->nfuncs = 0;
    out->nloopvars = 0;
    out->error = p.msg;
    out->error_span = p.espan;
    return p.err;
}

int sgr_sh_parse_nested(sg_arena *a, sgr_cmdline *cl, const char *script, size_t len,
                        int32_t parent, sgr_nest_kind nest, uint16_t depth, sgr_span span,
                        const sgr_sh_limits *lim)
{
    static const sgr_sh_limits defl = SGR_SH_DEFAULT_LIMITS;
    if (!lim)
        lim = &defl;
    if (parent < 0 || parent >= (int32_t)cl->nseg)
        parent = -1;
    parser p;
    codeq q = {0};
    /* A script that is a single-quoted word of the line is those very bytes:
     * parsed in place, its words get their own spans (a loop's header and body
     * are told apart, as on the line).  Any other is parsed as a string of its
     * own, every span the script word's. */
    const char *ln = cl->line;
    size_t b = (size_t)span.off + 1;
    int inplace = ln && span.len == len + 2 && b + len < cl->len && ln[span.off] == '\''
                  && ln[b + len] == '\'' && memcmp(ln + b, script, len) == 0;
    if (inplace) {
        parser_init(&p, a, cl, lim, ln, b + len);
        p.pos = b;
    } else {
        parser_init(&p, a, cl, lim, script, len);
        p.ovr = 1;
        p.ospan = span;
    }
    p.rdepth = depth;
    p.q = &q;
    uint32_t n0 = cl->nseg, pl0 = cl->npipelines, v0 = cl->nvars;
    uint32_t nf0 = cl->nfuncs, nv0 = cl->nloopvars;
    p.seg0 = n0;
    ctx c = {parent, (uint8_t)nest, depth,
             parent >= 0 ? cl->seg[parent].flags & INHERIT : 0};
    if (precheck(&p, p.end) == 0) {
        if (depth > p.maxdepth)
            fail(&p, 0, 0, "nesting deeper than %u", p.maxdepth);
        else if (alloc_buf(&p, p.end) == 0 && parse_program(&p, &c) == 0)
            resolve_code(&p, v0);
    }
    if (!p.err)
        return 0;
    if (p.err == -2) {
        cl->nseg = 0;
        cl->npipelines = 0;
        cl->error = p.msg;
        cl->error_span = span;
        return -2;
    }
    cl->nseg = n0;
    cl->npipelines = pl0;
    cl->nfuncs = nf0;
    cl->nloopvars = nv0;
    cl->nvars = v0;
    if (parent >= 0) {
        cl->seg[parent].flags |= SGR_SEG_DYNAMIC;
        cl->seg[parent].dyn_reason = p.msg;
    }
    return -1;
}
