/* run.c - the executor: expand, decide, and run a line's validated structure
 * (run.h).  The stages of one line: parse -> plan -> expand (as a dry walk that
 * assumes success) -> render the literal line -> decide -> walk the plan for real,
 * deciding again where a word's real expansion differs. */
#include "run.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/alloc.h"
#include "expand.h"
#include "plan.h"

#define SGX_STOP (-1)                    /* an exec_* return: stop the whole run */
#define MAX_CMDSUB_DEPTH 8
#define MAX_DECIDED 64
#define ST_FAILED (-1)                   /* a dry world's $?: some status from 1 to 255 */
#define MAX_WORLDS 256                   /* the dry walk's states at one point of a line */
#define MAX_DRY 8192                     /* its expansions of commands, in one run */

/* what expansion may leave different from the text the parser saw */
#define EXPMASK (SGR_W_VAR | SGR_W_CMDSUB | SGR_W_ARITH | SGR_W_PROCSUB | SGR_W_GLOB | SGR_W_BRACE | SGR_W_TILDE)

typedef struct state {
    char *cwd;                           /* sg_malloc'd, absolute */
    sgx_vars vars;
    int status;                          /* $? */
    /* the dry walk's: what holds a value known only once a $(...) has run */
    sgx_vars dyn;                        /* names of variables set from one */
    int cwd_dyn;                         /* the directory (a cd to one) */
} state;

typedef struct wexp {                    /* one word, expanded */
    sgx_fields f;
    const char *render;                  /* its literal spelling; NULL: as written */
    int dynw;                            /* its value is known only once a $(...) ran:
                                          * it holds one, reads a variable set from one,
                                          * or is a glob after a cd to one */
} wexp;

typedef struct cexp {                    /* one command's words, expanded */
    wexp *argv, *asg, *rd;               /* [argc], [nassigns], [nredirs] */
    char **fields;                       /* argv's fields, in order */
    uint32_t nfields;
    int dyn;                             /* a $(...) or $? was read */
    int cdyn;                            /* a word is dynw */
    int ustatus;                         /* $? was read */
} cexp;

typedef struct vredir {
    int fd;                              /* defaults resolved */
    uint8_t kind;
    const char *target;
} vredir;

typedef struct vform {                   /* a command as the policy allowed it */
    char **argv;
    uint32_t argc;
    char **asg;                          /* "NAME=value" */
    uint32_t nasg;
    vredir *rd;
    uint32_t nrd;
} vform;

typedef struct cmd {
    const sgr_segment *seg;              /* in the line's parse */
    cexp stat, real;
    int use_real;                        /* render real (a decision taken again) */
    int has_stat;                        /* the dry walk reached it: stat is set */
    const cexp *alt;                     /* render this (another outcome's reading) */
    vform v;
} cmd;

/* Another reading of a group of commands (one, or a pipeline's, expanded in one
 * world): what they are where an earlier command's outcome differs from the one
 * stat was read in. */
typedef struct reading {
    uint32_t n;
    uint32_t *cmd;                       /* their numbers in the line */
    cexp *x;                             /* their expansions */
} reading;

typedef struct line {                    /* the top line, or a $(...)'s text */
    const char *text;
    size_t len;
    sgr_cmdline cl;
    sgx_node *root;
    cmd *cmds;
    uint32_t ncmds;
    const char *start_cwd;               /* where its evaluation starts */
    int depth;                           /* $(...) nesting */
    int ran;                             /* the dry walk: a command of this line before
                                          * the one walked may have started a program
                                          * or opened a file */
    const char *decided_text;            /* its rendering whose commands run */
    reading *readings;                   /* the dry walk's other readings (arena) */
    uint32_t nreadings, capreadings;
} line;

struct sgx_run {
    sgx_opts o;
    sg_arena a;
    sgx_proc proc;
    int proc_ready;
    line top;
    state st;
    int prepared, stopped;
    sgx_result res;
    int null_fd, out_wr, err_wr;
    int code_set;                        /* sgx_refused_vars_set, -1: none */
    const sgr_result *last;              /* the prepared evaluation */
    const char *decided[MAX_DECIDED];
    uint32_t ndecided;
    uint32_t nexpanded;                  /* the dry walks' expansions (MAX_DRY) */
};

typedef struct xctx {                    /* what an expansion's callbacks see */
    sgx_run *r;
    line *L;
    state *st;
    int errfd;
    int read_dyn;                        /* the word read a variable in st->dyn */
} xctx;

/* ---- small helpers ------------------------------------------------------------ */

static char *afmt(sg_arena *a, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return sg_arena_strndup(a, buf, strlen(buf));
}

void sgx_warn(sgx_run *r, const char *fmt, ...)
{
    if (r->res.nwarnings == SGX_MAX_WARNINGS)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *w = afmt(&r->a, fmt, ap);
    va_end(ap);
    if (w)
        r->res.warnings[r->res.nwarnings++] = w;
}

/* Stop the run (or refuse it, before anything ran) with this verdict; the first
 * reason given is the one reported. */
static int stop(sgx_run *r, uint32_t decision, const char *rule, const char *fmt, ...)
{
    if (!r->stopped) {
        r->stopped = 1;
        va_list ap;
        va_start(ap, fmt);
        char *m = afmt(&r->a, fmt, ap);
        va_end(ap);
        if (r->res.state != SGX_ST_TIMEOUT && r->res.state != SGX_ST_ERROR)
            r->res.state = SGX_ST_REFUSED;
        r->res.decision = decision;
        r->res.rule = rule ? rule : "executor";
        r->res.message = m ? m : "refused";
        r->res.hint = "";
    }
    return SGX_STOP;
}

static int oom(sgx_run *r)
{
    r->res.state = SGX_ST_ERROR;
    return stop(r, SGT_DENY, "executor", "out of memory");
}

static char *join_path(sg_arena *a, const char *dir, const char *name)
{
    if (name[0] == '/')
        return sg_arena_strndup(a, name, strlen(name));
    size_t dl = strlen(dir), nl = strlen(name);
    char *s = sg_arena_alloc(a, dl + nl + 2);
    if (!s)
        return NULL;
    memcpy(s, dir, dl);
    size_t k = dl;
    if (!dl || dir[dl - 1] != '/')
        s[k++] = '/';
    memcpy(s + k, name, nl + 1);
    return s;
}

static int state_copy(state *d, const state *s)
{
    memset(d, 0, sizeof *d);
    d->cwd = sg_strndup(s->cwd, strlen(s->cwd));
    d->status = s->status;
    d->cwd_dyn = s->cwd_dyn;
    if (!d->cwd || sgx_vars_copy(&d->vars, &s->vars) < 0 || sgx_vars_copy(&d->dyn, &s->dyn) < 0) {
        sg_free(d->cwd);
        d->cwd = NULL;
        sgx_vars_free(&d->vars);
        sgx_vars_free(&d->dyn);
        return -1;
    }
    return 0;
}

static void state_free(state *s)
{
    sg_free(s->cwd);
    s->cwd = NULL;
    sgx_vars_free(&s->vars);
    sgx_vars_free(&s->dyn);
}

int sgx_refused_vars_set(const sgr_table *t)
{
    int code = -1;
    for (uint32_t i = 0; t && i < t->nsets; i++) {
        const char *n = sgr_str(t, t->sets[i].name);
        if (strcmp(n, "run_refused_vars") == 0)
            return (int)i;
        if (strcmp(n, "code_vars") == 0)
            code = (int)i;
    }
    return code;
}

int sgx_refused_var(const sgr_table *t, int set, const char *name, size_t len)
{
    if (len == 3 && memcmp(name, "PWD", 3) == 0)
        return 1;                       /* the executor's own */
    if (set < 0)
        return 1;                       /* no such set in the policy: refuse every name */
    return sgr_set_match(t, (uint32_t)set, name, len);
}

static int is_code_var(const sgx_run *r, const char *name, size_t len)
{
    return sgx_refused_var(r->o.t, r->code_set, name, len);
}

/* Write a builtin's or the executor's message to fd (one of the run's capture
 * pipes: straight into the capture, after what is already in the pipe). */
static void say(sgx_run *r, int fd, const char *fmt, ...)
{
    char buf[1200];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (k <= 0)
        return;
    size_t n = (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1;
    if (fd == r->out_wr || fd == r->err_wr) {
        sgx_proc_pump(&r->proc, 0);
        sgx_cap_add(fd == r->out_wr ? &r->res.out : &r->res.err, buf, n);
        return;
    }
    if (fd >= 0)
        (void)!write(fd, buf, n);
}

/* ---- builtins ------------------------------------------------------------------ */

enum { BI_NONE, BI_CD, BI_EXPORT, BI_UNSET, BI_COLON, BI_REFUSED };

/* Bash builtins and keywords with no program of the same name to run, which the
 * executor does not do itself: a line that uses one is refused. */
static const char *const refused_builtins[] = {
    "alias", "bg", "bind", "break", "builtin", "caller", "command", "compgen", "complete", "compopt",
    "continue", "coproc", "declare", "dirs", "disown", "enable", "eval", "exec", "exit", "fc", "fg",
    "function", "getopts", "hash", "help", "history", "jobs", "let", "local", "logout", "mapfile",
    "popd", "pushd", "read", "readarray", "readonly", "return", "select", "set", "shift", "shopt",
    "source", ".", "suspend", "times", "trap", "type", "typeset", "ulimit", "umask", "unalias",
    "wait", NULL
};

static int builtin_of(const char *name)
{
    if (!name)
        return BI_NONE;
    if (strcmp(name, "cd") == 0)
        return BI_CD;
    if (strcmp(name, "export") == 0)
        return BI_EXPORT;
    if (strcmp(name, "unset") == 0)
        return BI_UNSET;
    if (strcmp(name, ":") == 0)
        return BI_COLON;
    for (size_t i = 0; refused_builtins[i]; i++)
        if (strcmp(name, refused_builtins[i]) == 0)
            return BI_REFUSED;
    return BI_NONE;
}

/* Lexically normalise an absolute path: no "." or "..", no doubled '/'. */
static char *normalise(sg_arena *a, const char *p)
{
    size_t n = strlen(p);
    char *o = sg_arena_alloc(a, n + 2);
    if (!o)
        return NULL;
    size_t k = 0;
    const char *s = p;
    while (*s) {
        while (*s == '/')
            s++;
        const char *e = s;
        while (*e && *e != '/')
            e++;
        size_t l = (size_t)(e - s);
        if (l == 0 || (l == 1 && s[0] == '.')) {
            /* nothing */
        } else if (l == 2 && s[0] == '.' && s[1] == '.') {
            while (k > 0 && o[k - 1] != '/')
                k--;
            if (k > 0)
                k--;
        } else {
            o[k++] = '/';
            memcpy(o + k, s, l);
            k += l;
        }
        s = e;
    }
    if (!k)
        o[k++] = '/';
    o[k] = '\0';
    return o;
}

/* cd's new directory for args[0..n) from st: 0 and *out, or -1 with *err.
 * lexical: where no such directory is there now, the one it names (the dry
 * walk's world in which the cd succeeds: an earlier command may make it). */
static int cd_target(sgx_run *r, const state *st, char *const *args, uint32_t n, char **out, const char **err,
                     int lexical)
{
    int physical = 0;
    uint32_t i = 0;
    for (; i < n && args[i][0] == '-' && args[i][1]; i++) {
        if (strcmp(args[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(args[i], "-L") == 0)
            physical = 0;
        else if (strcmp(args[i], "-P") == 0)
            physical = 1;
        else {
            *err = "an option the executor's cd does not take";
            return -1;
        }
    }
    if (n - i > 1) {
        *err = "too many arguments";
        return -1;
    }
    const char *dir;
    if (i == n) {
        const sgx_var *h = sgx_vars_get(&st->vars, "HOME", 4);
        if (!h || !h->value[0]) {
            *err = "HOME not set";
            return -1;
        }
        dir = h->value;
    } else {
        dir = args[i];
    }
    if (!dir[0]) {
        *out = sg_arena_strndup(&r->a, st->cwd, strlen(st->cwd));
        return *out ? 0 : -1;
    }
    char *full = join_path(&r->a, st->cwd, dir);
    char *lex = full ? normalise(&r->a, full) : NULL;
    if (!lex) {
        *err = "out of memory";
        return -1;
    }
    struct stat sb;
    char real[PATH_MAX];
    if (!physical && stat(lex, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        *out = lex;
    } else if (realpath(full, real) && stat(real, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        *out = sg_arena_strndup(&r->a, real, strlen(real));
    } else if (lexical && i < n) {
        *out = lex;
        return 0;
    } else {
        *err = errno == ENOTDIR || (stat(full, &sb) == 0 && !S_ISDIR(sb.st_mode)) ? "Not a directory"
                                                                                  : "No such file or directory";
        return -1;
    }
    if (access(*out, X_OK) != 0) {
        *err = "Permission denied";
        return -1;
    }
    return *out ? 0 : -1;
}

/* ---- expansion of a command ---------------------------------------------------- */

static int prepare_line(sgx_run *r, line *L, state *st);
static int exec_node(sgx_run *r, line *L, sgx_node *n, state *st, const int io[3]);

static const char *var_cb(void *ud, const char *name, size_t n)
{
    xctx *x = ud;
    if (n == 3 && memcmp(name, "PWD", 3) == 0) {
        x->read_dyn |= x->st->cwd_dyn;
        return x->st->cwd;
    }
    if (sgx_vars_get(&x->st->dyn, name, n))
        x->read_dyn = 1;
    const sgx_var *v = sgx_vars_get(&x->st->vars, name, n);
    return v ? v->value : NULL;
}

/* A $(...)'s text as a line of its own, in a copy *sub of the state: parsed,
 * expanded, decided (prepare_line), and stopped unless allowed (why_more ends the
 * message).  SGX_EX_ABORT with nothing to free (too deep, no memory); else the
 * rc of the decision (0 or SGX_STOP, never SGX_EX_ABORT), with *S and *sub for the
 * caller to run or free. */
static int sub_decide(xctx *x, const char *text, size_t len, line **S, state *sub, const char *why_more)
{
    sgx_run *r = x->r;
    if (x->L->depth + 1 > MAX_CMDSUB_DEPTH) {
        stop(r, SGT_DENY, "executor", "command substitutions nested more than %d deep", MAX_CMDSUB_DEPTH);
        return SGX_EX_ABORT;
    }
    *S = sg_arena_zalloc(&r->a, sizeof **S);
    if (!*S || state_copy(sub, x->st) < 0) {
        oom(r);
        return SGX_EX_ABORT;
    }
    (*S)->text = text;
    (*S)->len = len;
    (*S)->depth = x->L->depth + 1;
    int rc = prepare_line(r, *S, sub);
    if (rc == 0 && r->last->decision != SGT_ALLOW) {
        const char *rule = sg_arena_strndup(&r->a, r->last->rule_id, strlen(r->last->rule_id));
        rc = stop(r, r->last->decision, rule ? rule : "executor", "the command substitution $(%.*s) is not allowed on "
                  "its own%s: %s", (int)(len > 200 ? 200 : len), text, why_more, r->last->message);
    }
    return rc;
}

/* A $(...) while a command is expanded for real: its text is a line of its own,
 * decided and run through this same path, in a copy of the state, its output
 * read into a buffer. */
static int cmdsub_cb(void *ud, const char *text, size_t len, char **out, size_t *outlen)
{
    xctx *x = ud;
    sgx_run *r = x->r;
    line *S;
    state sub;
    int rc = sub_decide(x, text, len, &S, &sub, "");
    if (rc == SGX_EX_ABORT)
        return SGX_EX_ABORT;
    int pfd[2] = { -1, -1 };
    int ri = -1;
    if (rc == 0 && (pipe2(pfd, O_CLOEXEC) != 0 || (ri = sgx_proc_add_reader(&r->proc, pfd[0], NULL, SGX_CMDSUB_MAX)) < 0)) {
        if (pfd[0] >= 0) {
            close(pfd[0]);
            close(pfd[1]);
        }
        r->res.state = SGX_ST_ERROR;
        rc = stop(r, SGT_DENY, "executor", "cannot run a command substitution: %s", ri < 0 && pfd[0] >= 0
                  ? "too many nested readers" : strerror(errno));
    }
    if (rc == 0) {
        int io[3] = { r->null_fd, pfd[1], x->errfd };
        rc = exec_node(r, S, S->root, &sub, io);
        close(pfd[1]);
        if (rc >= 0 && sgx_proc_drain(&r->proc, ri) < 0) {
            if (!r->proc.signo)
                r->proc.timed_out = 1;
            rc = SGX_STOP;
        }
        sgx_reader *rd = &r->proc.rd[ri];
        int over = rd->overflow;
        size_t n = 0;
        char *o = sg_arena_alloc(&r->a, rd->len + 1);
        if (o)
            for (size_t i = 0; i < rd->len; i++)
                if (rd->buf[i])
                    o[n++] = rd->buf[i];    /* bash drops NUL bytes too */
        sg_free(rd->buf);
        rd->buf = NULL;
        sgx_proc_close_reader(&r->proc, ri);
        if (rc >= 0 && !o)
            rc = oom(r);
        if (rc >= 0 && over)
            rc = stop(r, SGT_DENY, "executor", "the command substitution $(%.*s) printed more than %u bytes",
                      (int)(len > 200 ? 200 : len), text, SGX_CMDSUB_MAX);
        if (rc >= 0) {
            x->st->status = sub.status;
            *out = o;
            *outlen = n;
        }
    }
    state_free(&sub);
    return rc < 0 ? SGX_EX_ABORT : 0;
}

/* A $(...) on the dry walk, before anything runs: its text is a line of its own,
 * decided now with the state it would start from (the dry walk's), as it will be
 * again when it runs; anything but allow refuses the whole line.  It stands for
 * the empty string. */
static int dry_cmdsub_cb(void *ud, const char *text, size_t len, char **out, size_t *outlen)
{
    xctx *x = ud;
    line *S;
    state sub;
    int rc = sub_decide(x, text, len, &S, &sub, ", so none of the line runs");
    if (rc == SGX_EX_ABORT)
        return SGX_EX_ABORT;
    state_free(&sub);
    if (rc < 0)
        return SGX_EX_ABORT;
    static char empty[] = "";
    *out = empty;
    *outlen = 0;
    return 0;
}

/* The spelling of a word whose fields are f: each as a quoted literal. */
static const char *render_fields(sgx_run *r, const sgx_fields *f)
{
    size_t n = 1;
    char **q = sg_arena_alloc(&r->a, (f->n ? f->n : 1) * sizeof *q);
    if (!q)
        return NULL;
    for (uint32_t i = 0; i < f->n; i++) {
        if (!(q[i] = sgx_quote(&r->a, f->v[i], strlen(f->v[i]))))
            return NULL;
        n += strlen(q[i]) + 1;
    }
    char *s = sg_arena_alloc(&r->a, n), *o = s;
    if (!s)
        return NULL;
    for (uint32_t i = 0; i < f->n; i++) {
        if (i)
            *o++ = ' ';
        size_t l = strlen(q[i]);
        memcpy(o, q[i], l);
        o += l;
    }
    *o = '\0';
    return s;
}

/* NAME=value as NAME='value' */
static const char *render_assign(sgx_run *r, const char *f)
{
    const char *eq = strchr(f, '=');
    char *q = sgx_quote(&r->a, eq + 1, strlen(eq + 1));
    if (!q)
        return NULL;
    size_t nl = (size_t)(eq - f) + 1, ql = strlen(q);
    char *s = sg_arena_alloc(&r->a, nl + ql + 1);
    if (!s)
        return NULL;
    memcpy(s, f, nl);
    memcpy(s + nl, q, ql + 1);
    return s;
}

static int is_fd_word(const char *s)
{
    if (strcmp(s, "-") == 0)
        return 1;
    if (!*s || strlen(s) > 4)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* Expand word w of c's segment in context ctx into *x; the parser's own reading of
 * a word with nothing to expand must be what this reading gives. */
static int expand_word(sgx_run *r, line *L, sgx_expander *e, const sgr_word *w, int ctx, wexp *x)
{
    const char *src = L->text + w->span.off;
    xctx *xc = e->ud;
    xc->read_dyn = 0;
    int rc = sgx_expand(e, src, w->span.len, ctx, &x->f);
    x->dynw = e->used_cmdsub || xc->read_dyn || ((w->flags & SGR_W_GLOB) && xc->st->cwd_dyn);
    if (rc == SGX_EX_OOM)
        return oom(r);
    if (rc == SGX_EX_ABORT)
        return SGX_STOP;
    if (rc == SGX_EX_UNSUPPORTED)
        return stop(r, SGT_DENY, "executor", "%s: %.*s", e->error, (int)(w->span.len > 200 ? 200 : w->span.len), src);
    /* the parser marks no tilde in an assignment-like argument (a=~/b), which bash
     * expands: such a word is rendered, like any other it would change */
    int tilde_arg = ctx == SGX_CTX_ARGV && memchr(src, '~', w->span.len) && sgx_word_is_assign(src, w->span.len);
    if (!(w->flags & EXPMASK) && !tilde_arg) {
        if (x->f.n != 1 || strcmp(x->f.v[0], w->text) != 0)
            return stop(r, SGT_DENY, "executor", "the executor reads the word %.*s differently from the parser, "
                        "so it runs none of the line", (int)(w->span.len > 200 ? 200 : w->span.len), src);
        x->render = NULL;
        return 0;
    }
    if (ctx == SGX_CTX_ASSIGN)
        x->render = render_assign(r, x->f.v[0]);
    else
        x->render = render_fields(r, &x->f);
    return x->render ? 0 : oom(r);
}

static int expand_cmd(sgx_run *r, line *L, cmd *c, state *st, int real, int errfd, cexp *x)
{
    const sgr_segment *s = c->seg;
    xctx xc = { r, L, st, errfd, 0 };
    sgx_expander e;
    memset(&e, 0, sizeof e);
    e.a = &r->a;
    e.var = var_cb;
    e.cmdsub = real ? cmdsub_cb : dry_cmdsub_cb;
    e.dry = !real;
    e.ud = &xc;
    e.cwd = st->cwd;
    e.status = st->status;
    memset(x, 0, sizeof *x);
    x->argv = sg_arena_zalloc(&r->a, (s->argc + 1) * sizeof *x->argv);
    x->asg = sg_arena_zalloc(&r->a, (s->nassigns + 1) * sizeof *x->asg);
    x->rd = sg_arena_zalloc(&r->a, (s->nredirs + 1) * sizeof *x->rd);
    if (!x->argv || !x->asg || !x->rd)
        return oom(r);
    int decl = s->argc && strcmp(s->argv[0].text, "export") == 0;
    if (s->argc && (s->argv[0].flags & SGR_W_CMDSUB))
        return stop(r, SGT_DENY, "executor", "the program name comes from a command substitution: %.*s; the "
                    "executor runs only programs the policy can see", (int)(s->argv[0].span.len > 200 ? 200
                    : s->argv[0].span.len), L->text + s->argv[0].span.off);
    uint32_t total = 0;
    for (uint32_t k = 0; k < s->argc; k++) {
        const sgr_word *w = &s->argv[k];
        int ctx = decl && k > 0 && sgx_word_is_assign(L->text + w->span.off, w->span.len) ? SGX_CTX_ASSIGN
                                                                                          : SGX_CTX_ARGV;
        if (expand_word(r, L, &e, w, ctx, &x->argv[k]) < 0)
            return SGX_STOP;
        x->dyn |= e.used_cmdsub | e.used_status;
        x->ustatus |= e.used_status;
        x->cdyn |= x->argv[k].dynw;
        total += x->argv[k].f.n;
    }
    /* the program is the first field: a word up to the one that gives it whose
     * value is known only at run time may name any program (X=$(...); $X) */
    for (uint32_t k = 0; !real && k < s->argc; k++) {
        if (x->argv[k].dynw)
            return stop(r, SGT_DENY, "executor", "the program name comes from a command substitution: %.*s is "
                        "known only when it runs, so the executor runs none of the line", (int)(s->argv[k].span.len
                        > 200 ? 200 : s->argv[k].span.len), L->text + s->argv[k].span.off);
        if (x->argv[k].f.n)
            break;
    }
    if (total > 4096)
        return stop(r, SGT_DENY, "executor", "a command of more than 4096 words");
    x->fields = sg_arena_alloc(&r->a, (total + 2) * sizeof *x->fields);
    if (!x->fields)
        return oom(r);
    for (uint32_t k = 0; k < s->argc; k++)
        for (uint32_t i = 0; i < x->argv[k].f.n; i++)
            x->fields[x->nfields++] = x->argv[k].f.v[i];
    for (uint32_t k = 0; k < s->nassigns; k++) {
        if (expand_word(r, L, &e, &s->assigns[k], SGX_CTX_ASSIGN, &x->asg[k]) < 0)
            return SGX_STOP;
        x->dyn |= e.used_cmdsub | e.used_status;
        x->ustatus |= e.used_status;
        x->cdyn |= x->asg[k].dynw;
    }
    for (uint32_t k = 0; k < s->nredirs; k++) {
        const sgr_redir *rd = &s->redirs[k];
        if (rd->kind == SGR_REDIR_DUP_OUT || rd->kind == SGR_REDIR_DUP_IN) {
            if ((rd->target.flags & EXPMASK) || !is_fd_word(rd->target.text))
                return stop(r, SGT_DENY, "executor", "the executor copies only literal descriptor numbers "
                            "(2>&1, <&0, >&-)");
        }
        if (rd->fd > 255)
            return stop(r, SGT_DENY, "executor", "a redirection of descriptor %d", rd->fd);
        int ctx = rd->kind == SGR_REDIR_HERESTRING ? SGX_CTX_HERESTR : SGX_CTX_REDIR;
        if (expand_word(r, L, &e, &rd->target, ctx, &x->rd[k]) < 0)
            return SGX_STOP;
        x->dyn |= e.used_cmdsub | e.used_status;
        x->ustatus |= e.used_status;
        x->cdyn |= x->rd[k].dynw;
    }
    if (!x->nfields && s->argc && !s->nassigns && !s->nredirs) {
        /* every word expanded to nothing: bash runs nothing; the policy is shown
         * (and the executor runs) the no-op builtin ':' */
        static char colon[] = ":";
        x->fields[x->nfields++] = colon;
        x->argv[0].render = ":";
    }
    x->fields[x->nfields] = NULL;
    return 0;
}

static int same_fields(const sgx_fields *a, const sgx_fields *b)
{
    if (a->n != b->n)
        return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return 0;
    return 1;
}

/* Do a and b, two expansions of segment s, give the same words? */
static int same_cexp(const sgr_segment *s, const cexp *a, const cexp *b)
{
    if (a->nfields != b->nfields)
        return 0;
    for (uint32_t i = 0; i < a->nfields; i++)
        if (strcmp(a->fields[i], b->fields[i]) != 0)
            return 0;
    for (uint32_t k = 0; k < s->nassigns; k++)
        if (!same_fields(&a->asg[k].f, &b->asg[k].f))
            return 0;
    for (uint32_t k = 0; k < s->nredirs; k++)
        if (!same_fields(&a->rd[k].f, &b->rd[k].f))
            return 0;
    return 1;
}

static int same_exp(const cmd *c)
{
    return same_cexp(c->seg, &c->stat, &c->real);
}

/* ---- the literal line and its decision --------------------------------------- */

typedef struct repl {
    uint32_t off, len;
    const char *text;
} repl;

/* L with each word rendered as it expanded (the real expansion where use_real);
 * checklike: a word known only at run time (dynw) stays as written. */
static char *render(sgx_run *r, line *L, size_t *outlen, int checklike)
{
    uint32_t n = 0, cap = 0;
    for (uint32_t i = 0; i < L->ncmds; i++)
        cap += L->cmds[i].seg->argc + L->cmds[i].seg->nassigns + L->cmds[i].seg->nredirs;
    repl *v = sg_arena_alloc(&r->a, (cap ? cap : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (uint32_t i = 0; i < L->ncmds; i++) {
        const cmd *c = &L->cmds[i];
        const cexp *x = c->alt ? c->alt : c->use_real ? &c->real : &c->stat;
        const sgr_segment *s = c->seg;
        for (uint32_t k = 0; k < s->argc; k++)
            if (x->argv[k].render && !(checklike && x->argv[k].dynw))
                v[n++] = (repl){ s->argv[k].span.off, s->argv[k].span.len, x->argv[k].render };
        for (uint32_t k = 0; k < s->nassigns; k++)
            if (x->asg[k].render && !(checklike && x->asg[k].dynw))
                v[n++] = (repl){ s->assigns[k].span.off, s->assigns[k].span.len, x->asg[k].render };
        for (uint32_t k = 0; k < s->nredirs; k++)
            if (x->rd[k].render && !(checklike && x->rd[k].dynw))
                v[n++] = (repl){ s->redirs[k].target.span.off, s->redirs[k].target.span.len, x->rd[k].render };
    }
    for (uint32_t i = 1; i < n; i++) {  /* insertion sort by offset: few words */
        repl t = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1].off > t.off; j--)
            v[j] = v[j - 1];
        v[j] = t;
    }
    size_t total = L->len + 1;
    for (uint32_t i = 0; i < n; i++)
        total += strlen(v[i].text);
    char *out = sg_arena_alloc(&r->a, total), *o = out;
    if (!out)
        return NULL;
    size_t pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (v[i].off < pos)
            return NULL;                /* overlapping words: never from the parser */
        memcpy(o, L->text + pos, v[i].off - pos);
        o += v[i].off - pos;
        size_t tl = strlen(v[i].text);
        memcpy(o, v[i].text, tl);
        o += tl;
        pos = v[i].off + v[i].len;
    }
    memcpy(o, L->text + pos, L->len - pos);
    o += L->len - pos;
    *o = '\0';
    *outlen = (size_t)(o - out);
    return out;
}

static const sgr_result *decide(sgx_run *r, line *L, const char *text, size_t len, const state *st)
{
    const sgx_var *h = sgx_vars_get(&st->vars, "HOME", 4);
    sgr_opts so = { L->start_cwd, r->o.roots, r->o.nroots, h ? h->value : NULL };
    const sgr_result *res = sgr_eval(r->o.ctx, text, len, &so);
    if (r->ndecided < MAX_DECIDED)
        r->decided[r->ndecided++] = text;
    return res;
}

static int default_fd(uint8_t kind)
{
    switch (kind) {
    case SGR_REDIR_READ: case SGR_REDIR_RDWR: case SGR_REDIR_DUP_IN: case SGR_REDIR_HERESTRING: case SGR_REDIR_HEREDOC:
        return 0;
    default:
        return 1;
    }
}

static const char *const mismatch = "the policy read the expanded line differently from the executor, so none of "
                                    "it runs";

/* Copy each command's validated form out of res (the evaluation of a rendering of
 * L); only those with use_real when only_real.  Checks the evaluator's segments
 * are the commands the executor expanded. */
static int take_forms(sgx_run *r, line *L, const sgr_result *res, int only_real)
{
    if (res->oom)
        return oom(r);
    uint32_t k = 0;
    for (uint32_t i = 0; i < res->cl.nseg; i++) {
        const sgr_segment *s = &res->cl.seg[i];
        if (s->nest != SGR_NEST_TOP)
            continue;
        if (k >= L->ncmds)
            return stop(r, SGT_DENY, "executor", "%s", mismatch);
        cmd *c = &L->cmds[k++];
        if (only_real && !c->use_real)
            continue;
        const cexp *x = c->use_real ? &c->real : &c->stat;
        if (s->argc != x->nfields || s->nassigns != c->seg->nassigns || s->nredirs != c->seg->nredirs
            || s->connector != c->seg->connector || s->pipe_index != c->seg->pipe_index
            || s->pipe_len != c->seg->pipe_len)
            return stop(r, SGT_DENY, "executor", "%s", mismatch);
        vform *v = &c->v;
        v->argc = s->argc;
        v->nasg = s->nassigns;
        v->nrd = s->nredirs;
        v->argv = sg_arena_alloc(&r->a, (s->argc + 1) * sizeof *v->argv);
        v->asg = sg_arena_alloc(&r->a, (s->nassigns + 1) * sizeof *v->asg);
        v->rd = sg_arena_alloc(&r->a, (s->nredirs + 1) * sizeof *v->rd);
        if (!v->argv || !v->asg || !v->rd)
            return oom(r);
        for (uint32_t j = 0; j < s->argc; j++) {
            if (strcmp(s->argv[j].text, x->fields[j]) != 0)
                return stop(r, SGT_DENY, "executor", "%s", mismatch);
            if (!(v->argv[j] = sg_arena_strndup(&r->a, s->argv[j].text, s->argv[j].len)))
                return oom(r);
        }
        v->argv[s->argc] = NULL;
        for (uint32_t j = 0; j < s->nassigns; j++) {
            if (strcmp(s->assigns[j].text, x->asg[j].f.v[0]) != 0)
                return stop(r, SGT_DENY, "executor", "%s", mismatch);
            if (!(v->asg[j] = sg_arena_strndup(&r->a, s->assigns[j].text, s->assigns[j].len)))
                return oom(r);
        }
        for (uint32_t j = 0; j < s->nredirs; j++) {
            const sgr_redir *rd = &s->redirs[j];
            if (rd->kind != c->seg->redirs[j].kind || strcmp(rd->target.text, x->rd[j].f.v[0]) != 0)
                return stop(r, SGT_DENY, "executor", "%s", mismatch);
            v->rd[j].fd = rd->fd >= 0 ? rd->fd : default_fd(rd->kind);
            v->rd[j].kind = rd->kind;
            if (!(v->rd[j].target = sg_arena_strndup(&r->a, rd->target.text, rd->target.len)))
                return oom(r);
        }
    }
    if (k != L->ncmds)
        return stop(r, SGT_DENY, "executor", "%s", mismatch);
    return 0;
}

/* ---- effects of builtins and assignments ------------------------------------- */

static int apply_assigns(sgx_run *r, state *st, char *const *asg, uint32_t n, int check)
{
    for (uint32_t i = 0; i < n; i++) {
        const char *eq = strchr(asg[i], '=');
        if (!eq)
            continue;
        size_t nl = (size_t)(eq - asg[i]);
        if (check && is_code_var(r, asg[i], nl))
            return stop(r, SGT_DENY, "executor", "setting %.*s changes which programs run or how; the executor "
                        "refuses it (the policy's run_refused_vars)", (int)nl, asg[i]);
        if (sgx_vars_set(&st->vars, asg[i], nl, eq + 1, 0) < 0)
            return oom(r);
    }
    return 0;
}

/* export/unset arguments the executor refuses whatever they say: options, and
 * the names that change which code runs.  0 or SGX_STOP. */
static int check_names(sgx_run *r, int bi, char *const *args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const char *a = args[i];
        if (a[0] == '-') {
            if (bi == BI_UNSET && strcmp(a, "-v") == 0)
                continue;
            return stop(r, SGT_DENY, "executor", "the executor's %s takes no option %s",
                        bi == BI_EXPORT ? "export" : "unset", a);
        }
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (sgx_is_name(a, nl) && is_code_var(r, a, nl))
            return stop(r, SGT_DENY, "executor", "%s %.*s changes which programs run or how; the executor refuses "
                        "it (the policy's run_refused_vars)", bi == BI_EXPORT ? "export" : "unset", (int)nl, a);
    }
    if (bi == BI_EXPORT && !n)
        return stop(r, SGT_DENY, "executor", "export without names lists variables: use env or printenv");
    return 0;
}

/* What the executor refuses about a command whatever its state: 0 or SGX_STOP. */
static int check_cmd(sgx_run *r, const line *L, const cmd *c, const cexp *x)
{
    const char *name = x->nfields ? x->fields[0] : NULL;
    int bi = builtin_of(name);
    if (bi == BI_REFUSED)
        return stop(r, SGT_DENY, "executor", "the executor does not run the shell builtin '%s'", name);
    if (bi == BI_NONE && !name)
        return 0;
    if (bi == BI_NONE)
        return 0;
    if (c->seg->nassigns)
        return stop(r, SGT_DENY, "executor", "the executor does not run assignments before the builtin '%s'", name);
    for (uint32_t k = 0; k < c->seg->nredirs; k++) {
        const sgr_redir *rd = &c->seg->redirs[k];
        int fd = rd->fd >= 0 ? rd->fd : default_fd(rd->kind);
        if (fd > 2 || (rd->kind == SGR_REDIR_DUP_OUT || rd->kind == SGR_REDIR_DUP_IN ? !is_fd_word(rd->target.text)
                       || (strcmp(rd->target.text, "-") != 0 && atoi(rd->target.text) > 2) : 0))
            return stop(r, SGT_DENY, "executor", "the executor redirects only descriptors 0-2 of the builtin '%s'", name);
    }
    /* a name known only at run time could be any, a refused one too; a value is
     * the policy's to decide (export A=$(...)) */
    for (uint32_t k = 0; (bi == BI_EXPORT || bi == BI_UNSET) && k < c->seg->argc; k++) {
        const sgr_word *w = &c->seg->argv[k];
        const char *src = L->text + w->span.off;
        if (x->argv[k].dynw && !(bi == BI_EXPORT && sgx_word_is_assign(src, w->span.len)))
            return stop(r, SGT_DENY, "executor", "the name %s comes from a command substitution: %.*s is known only "
                        "when it runs, so the executor runs none of the line", bi == BI_EXPORT ? "export sets"
                        : "unset removes", (int)(w->span.len > 200 ? 200 : w->span.len), src);
    }
    if (bi == BI_EXPORT || bi == BI_UNSET)
        return check_names(r, bi, x->fields + 1, x->nfields - 1);
    if (bi == BI_CD)
        for (uint32_t i = 1; i < x->nfields && x->fields[i][0] == '-' && x->fields[i][1]; i++) {
            if (strcmp(x->fields[i], "--") == 0)
                break;
            if (strcmp(x->fields[i], "-L") != 0 && strcmp(x->fields[i], "-P") != 0)
                return stop(r, SGT_DENY, "executor", "the executor's cd takes only -L and -P, not %s", x->fields[i]);
        }
    if (bi == BI_CD && x->nfields == 2 && strcmp(x->fields[1], "-") == 0)
        return stop(r, SGT_DENY, "executor", "the executor does not run cd - (name the directory)");
    return 0;
}

/* The effect of a builtin or an assignment-only command on st (the dry walk and
 * the real one alike); errors only matter for real (the caller reports them). */
static int apply_effect(sgx_run *r, const cmd *c, char *const *argv, uint32_t argc, char *const *asg, uint32_t nasg,
                        state *st, const char **err, const char **errarg, int dry)
{
    *err = NULL;
    if (!argc)
        return apply_assigns(r, st, asg, nasg, 1);
    int bi = builtin_of(argv[0]);
    if (bi == BI_CD) {
        char *nd;
        if (cd_target(r, st, argv + 1, argc - 1, &nd, err, dry) < 0) {
            *errarg = argc > 1 ? argv[argc - 1] : "";
            return 0;
        }
        if (sgx_vars_set(&st->vars, "OLDPWD", 6, st->cwd, 0) < 0)
            return oom(r);
        char *d = sg_strndup(nd, strlen(nd));
        if (!d)
            return oom(r);
        sg_free(st->cwd);
        st->cwd = d;
        return 0;
    }
    if (bi == BI_EXPORT || bi == BI_UNSET) {
        if (check_names(r, bi, argv + 1, argc - 1) < 0)
            return SGX_STOP;
        for (uint32_t i = 1; i < argc; i++) {
            const char *a = argv[i];
            if (bi == BI_UNSET && strcmp(a, "-v") == 0)
                continue;
            const char *eq = bi == BI_EXPORT ? strchr(a, '=') : NULL;
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            if (!sgx_is_name(a, nl)) {
                *err = "not a valid identifier";
                *errarg = a;
                continue;
            }
            if (bi == BI_UNSET) {
                sgx_vars_unset(&st->vars, a, nl);
                continue;
            }
            if ((eq || sgx_vars_get(&st->vars, a, nl)) && sgx_vars_set(&st->vars, a, nl, eq ? eq + 1 : NULL, 1) < 0)
                return oom(r);
        }
    }
    (void)c;
    return 0;
}

/* The name of the NAME=value (or NAME) f: its length. */
static size_t name_part(const char *f)
{
    const char *eq = strchr(f, '=');
    return eq ? (size_t)(eq - f) : strlen(f);
}

static int mark_dyn(sgx_run *r, state *st, const char *name, size_t len, int dyn)
{
    if (!dyn) {
        sgx_vars_unset(&st->dyn, name, len);
        return 0;
    }
    return sgx_vars_set(&st->dyn, name, len, "", 0) < 0 ? oom(r) : 0;
}

/* ---- the dry walk: every outcome, before anything runs ------------------------
 *
 * Whether a command succeeds is known only when it runs: a program may exit 0 or
 * any status from 1 to 255, a cd may not reach its directory, a builtin's
 * redirection may fail; what runs next, the directory it runs in, the variables
 * set on the way and the $? it reads depend on it.  The dry walk follows every
 * outcome.  A world is the state one sequence of outcomes leaves (its $? possibly
 * ST_FAILED: some failure); the worlds at a point of the line are kept without
 * duplicates, and each command is expanded in every world that reaches it (with
 * every status a failed world's $? may hold, where it reads $?).  Its first
 * expansion is stat, the reading the line is decided and run on; each other one
 * is a reading (L->readings) that prepare_line decides too, so a decision taken
 * again when the command runs meets one already taken -- the line is not stopped
 * half run by it, unless the files changed while it ran.  Assignments, export,
 * unset and ':' without redirections always succeed; a cd in its world of
 * success goes where it names even when that is not there yet (an earlier
 * command may make it). */

typedef struct worlds {
    state *v;
    uint64_t *h;
    uint32_t n, cap;
} worlds;

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h * 0x100000001b3ull;
}

/* Order-free: a variable set in another order is the same state. */
static uint64_t vars_hash(const sgx_vars *v)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < v->n; i++)
        sum += fnv(fnv(0xcbf29ce484222325ull, v->v[i].name), v->v[i].value ? v->v[i].value : "\1")
               + v->v[i].exported;
    return sum;
}

static uint64_t state_hash(const state *s)
{
    return fnv(0xcbf29ce484222325ull, s->cwd) ^ ((uint64_t)(s->status + 2) << 40) ^ (uint64_t)s->cwd_dyn
           ^ vars_hash(&s->vars) ^ (vars_hash(&s->dyn) * 3);
}

static int vars_equal(const sgx_vars *a, const sgx_vars *b)
{
    if (a->n != b->n)
        return 0;
    for (uint32_t i = 0; i < a->n; i++) {
        const sgx_var *o = sgx_vars_get(b, a->v[i].name, strlen(a->v[i].name));
        if (!o || o->exported != a->v[i].exported || !a->v[i].value != !o->value
            || (o->value && strcmp(o->value, a->v[i].value) != 0))
            return 0;
    }
    return 1;
}

static int state_equal(const state *a, const state *b)
{
    return a->status == b->status && a->cwd_dyn == b->cwd_dyn && strcmp(a->cwd, b->cwd) == 0
           && vars_equal(&a->vars, &b->vars) && vars_equal(&a->dyn, &b->dyn);
}

static void worlds_free(worlds *w)
{
    for (uint32_t i = 0; i < w->n; i++)
        state_free(&w->v[i]);
    sg_free(w->v);
    sg_free(w->h);
    memset(w, 0, sizeof *w);
}

/* Add *s to w, which takes it over (a world already there: *s is freed). */
static int worlds_add(sgx_run *r, line *L, worlds *w, state *s)
{
    uint64_t h = state_hash(s);
    for (uint32_t i = 0; i < w->n; i++)
        if (w->h[i] == h && state_equal(&w->v[i], s)) {
            state_free(s);
            return 0;
        }
    if (w->n == MAX_WORLDS) {
        state_free(s);
        return stop(r, SGT_DENY, "executor", "`%.200s` has more than %d outcomes to decide before it runs (each "
                    "command may succeed or fail, and $? may hold any status): send it as shorter lines",
                    L->text, MAX_WORLDS);
    }
    if (w->n == w->cap) {
        uint32_t nc = w->cap ? 2 * w->cap : 4;
        state *nv = sg_realloc(w->v, nc * sizeof *nv);
        if (nv)
            w->v = nv;
        uint64_t *nh = nv ? sg_realloc(w->h, nc * sizeof *nh) : NULL;
        if (!nh) {
            state_free(s);
            return oom(r);
        }
        w->h = nh;
        w->cap = nc;
    }
    w->h[w->n] = h;
    w->v[w->n++] = *s;
    return 0;
}

/* A copy of *s with status st, added to w. */
static int worlds_add_copy(sgx_run *r, line *L, worlds *w, const state *s, int st)
{
    state c;
    if (state_copy(&c, s) < 0)
        return oom(r);
    c.status = st;
    return worlds_add(r, L, w, &c);
}

/* Move every world of from into to. */
static int worlds_join(sgx_run *r, line *L, worlds *to, worlds *from)
{
    int rc = 0;
    for (uint32_t i = 0; i < from->n; i++)
        if (rc < 0)
            state_free(&from->v[i]);
        else
            rc = worlds_add(r, L, to, &from->v[i]);
    from->n = 0;
    worlds_free(from);
    return rc;
}

/* The readings of commands cs[0..n), expanded in one world as xs: the first of
 * each command is its stat; a group reading otherwise is kept once. */
static int record_reading(sgx_run *r, line *L, const uint32_t *cs, const cexp *xs, uint32_t n)
{
    int differs = 0;
    for (uint32_t i = 0; i < n; i++) {
        cmd *c = &L->cmds[cs[i]];
        if (!c->has_stat) {
            c->stat = xs[i];
            c->has_stat = 1;
        } else if (!same_cexp(c->seg, &c->stat, &xs[i])) {
            differs = 1;
        }
    }
    if (!differs)
        return 0;
    for (uint32_t g = 0; g < L->nreadings; g++) {
        const reading *o = &L->readings[g];
        int same = o->n == n;
        for (uint32_t i = 0; same && i < n; i++)
            same = o->cmd[i] == cs[i] && same_cexp(L->cmds[cs[i]].seg, &o->x[i], &xs[i]);
        if (same)
            return 0;
    }
    if (L->nreadings == L->capreadings) {
        uint32_t nc = L->capreadings ? 2 * L->capreadings : 8;
        reading *nv = sg_arena_alloc(&r->a, nc * sizeof *nv);
        if (!nv)
            return oom(r);
        if (L->nreadings)
            memcpy(nv, L->readings, L->nreadings * sizeof *nv);
        L->readings = nv;
        L->capreadings = nc;
    }
    reading *g = &L->readings[L->nreadings];
    g->n = n;
    g->cmd = sg_arena_alloc(&r->a, n * sizeof *g->cmd);
    g->x = sg_arena_alloc(&r->a, n * sizeof *g->x);
    if (!g->cmd || !g->x)
        return oom(r);
    memcpy(g->cmd, cs, n * sizeof *cs);
    memcpy(g->x, xs, n * sizeof *xs);
    L->nreadings++;
    return 0;
}

/* The dry walk: what a builtin or an assignment-only command (expanded as x)
 * leaves known only at run time in st -- a variable set from a word that is
 * (dynw), the directory after a cd to one (and what is relative to such a
 * directory). */
static int dry_taint(sgx_run *r, const cmd *c, const cexp *x, state *st)
{
    if (!x->nfields) {
        for (uint32_t k = 0; k < c->seg->nassigns; k++) {
            const char *f = x->asg[k].f.v[0];
            if (mark_dyn(r, st, f, name_part(f), x->asg[k].dynw) < 0)
                return SGX_STOP;
        }
        return 0;
    }
    int bi = builtin_of(x->fields[0]), argdyn = 0;
    const char *last = NULL;
    uint32_t fi = 0;
    for (uint32_t k = 0; k < c->seg->argc; k++)
        for (uint32_t i = 0; i < x->argv[k].f.n; i++, fi++) {
            const char *f = x->argv[k].f.v[i];
            if (!fi)
                continue;               /* the builtin's own name */
            last = f;
            if (bi == BI_UNSET && strcmp(f, "-v") != 0 && mark_dyn(r, st, f, strlen(f), 0) < 0)
                return SGX_STOP;
            if (bi == BI_EXPORT && strchr(f, '=') && mark_dyn(r, st, f, name_part(f), x->argv[k].dynw) < 0)
                return SGX_STOP;
        }
    if (bi == BI_CD) {
        for (uint32_t k = 0; k < c->seg->argc; k++)
            argdyn |= x->argv[k].dynw;  /* one may give no field: cd $(...) is cd ~ */
        if (!last && !argdyn)
            argdyn = sgx_vars_get(&st->dyn, "HOME", 4) != NULL;
        if (mark_dyn(r, st, "OLDPWD", 6, st->cwd_dyn) < 0)
            return SGX_STOP;
        st->cwd_dyn = argdyn || (st->cwd_dyn && last && last[0] != '/');
    }
    return 0;
}

/* Command c expanded as x in world *s: what the executor refuses of it, and
 * whether it may start a program or open a file (*runs).  ran0: a command of the
 * line before the decision it is part of may have. */
static int check_reading(sgx_run *r, line *L, cmd *c, const cexp *x, int ran0, int *runs)
{
    if (++r->nexpanded > MAX_DRY)
        return stop(r, SGT_DENY, "executor", "`%.200s` has more outcomes to decide before it runs than the executor "
                    "reads (%d commands expanded): send it as shorter lines", L->text, MAX_DRY);
    if (check_cmd(r, L, c, x) < 0)
        return SGX_STOP;
    /* Its words are known only once a $(...) has run, so it is decided again then,
     * with their values; after a program of the line or a file it opened, a
     * refusal then would leave the line half run. */
    if (x->cdyn && ran0)
        return stop(r, SGT_DENY, "executor", "`%.*s` uses what a command substitution prints, known only when it "
                    "runs, after an earlier command of the line has started a program or opened a file: the executor "
                    "decides a whole line before any of it runs, so it runs none of it (put the substitution in the "
                    "line's first command, or send the commands as separate lines)", (int)(c->seg->span.len > 200
                    ? 200 : c->seg->span.len), L->text + c->seg->span.off);
    int bi = builtin_of(x->nfields ? x->fields[0] : NULL);
    if (c->seg->nredirs || (x->nfields && bi == BI_NONE))
        *runs = 1;
    return 0;
}

/* The worlds command c (expanded as x in *s, which this takes over) leaves, added
 * to out: a program's success and failure; a builtin's effect, and for a cd or a
 * builtin with a redirection also its failure (no effect, status 1). */
static int outcomes(sgx_run *r, line *L, cmd *c, const cexp *x, state *s, worlds *out)
{
    /* success first: the first world to reach a command is the one in which every
     * command before it succeeded, where it can */
    int bi = builtin_of(x->nfields ? x->fields[0] : NULL);
    state f;
    int may_fail = (x->nfields && bi == BI_NONE) || bi == BI_CD || c->seg->nredirs;
    if (may_fail && state_copy(&f, s) < 0) {
        state_free(s);
        return oom(r);
    }
    int rc = 0;
    if (!(x->nfields && bi == BI_NONE)) {
        char **asg = sg_arena_alloc(&r->a, (c->seg->nassigns + 1) * sizeof *asg);
        const char *err = NULL, *arg;
        for (uint32_t k = 0; asg && k < c->seg->nassigns; k++)
            asg[k] = x->asg[k].f.v[0];
        rc = !asg ? oom(r)
             : apply_effect(r, c, x->fields, x->nfields, asg, c->seg->nassigns, s, &err, &arg, 1) < 0
                   || dry_taint(r, c, x, s) < 0 ? SGX_STOP : 0;
        s->status = err ? 1 : 0;
    } else {
        s->status = 0;
    }
    if (rc < 0)
        state_free(s);
    else
        rc = worlds_add(r, L, out, s);
    if (may_fail) {
        /* a program's failure: any status; a builtin's: 1, and no effect */
        f.status = x->nfields && bi == BI_NONE ? ST_FAILED : 1;
        if (rc < 0)
            state_free(&f);
        else
            rc = worlds_add(r, L, out, &f);
    }
    return rc < 0 ? SGX_STOP : 0;
}

static int walk(sgx_run *r, line *L, sgx_node *n, worlds *in, worlds *out);

/* The $? values a world's commands are expanded with: its own, or where it is
 * ST_FAILED, 1 and -- when the expansion with 1 read $? -- each up to 255 (-1:
 * no more). */
static int first_status(const state *w)
{
    return w->status == ST_FAILED ? 1 : w->status;
}

static int next_status(const state *w, int v, int read_status)
{
    return w->status == ST_FAILED && read_status && v < 255 ? v + 1 : -1;
}

/* Command ci (a CMD node) in every world of in; the worlds after it in out. */
static int walk_cmd(sgx_run *r, line *L, uint32_t ci, worlds *in, worlds *out)
{
    cmd *c = &L->cmds[ci];
    int runs = 0, ran0 = L->ran;
    for (uint32_t i = 0; i < in->n; i++) {
        const state *w = &in->v[i];
        int read_status = 0;
        for (int v = first_status(w); v >= 0; v = next_status(w, v, read_status)) {
            state s;
            if (state_copy(&s, w) < 0)
                return oom(r);
            s.status = v;
            cexp x;
            if (expand_cmd(r, L, c, &s, 0, -1, &x) < 0 || check_reading(r, L, c, &x, ran0, &runs) < 0
                || record_reading(r, L, &ci, &x, 1) < 0) {
                state_free(&s);
                return SGX_STOP;
            }
            read_status = x.ustatus;
            if (outcomes(r, L, c, &x, &s, out) < 0)
                return SGX_STOP;
        }
    }
    L->ran |= runs;
    return 0;
}

/* A pipeline of more than one element, in every world of in: every element runs
 * in a subshell; as exec_pipe runs it, the commands are expanded and decided
 * (again) together, then start, and then the ( ) or { } part runs. */
static int walk_pipe(sgx_run *r, line *L, sgx_node *n, worlds *in, worlds *out)
{
    uint32_t *cs = sg_arena_alloc(&r->a, n->nkids * sizeof *cs), ncs = 0;
    cexp *xs = sg_arena_alloc(&r->a, n->nkids * sizeof *xs);
    if (!cs || !xs)
        return oom(r);
    for (uint32_t i = 0; i < n->nkids; i++)
        if (n->kids[i]->kind == SGX_N_CMD)
            cs[ncs++] = n->kids[i]->cmd;
    int ran0 = L->ran, runs = 0;
    for (uint32_t wi = 0; wi < in->n; wi++) {
        const state *w = &in->v[wi];
        int read_status = 0;
        for (int v = first_status(w); v >= 0; v = next_status(w, v, read_status)) {
            read_status = 0;
            for (uint32_t i = 0; i < ncs; i++) {
                state s;
                if (state_copy(&s, w) < 0)
                    return oom(r);
                s.status = v;
                int rc = expand_cmd(r, L, &L->cmds[cs[i]], &s, 0, -1, &xs[i]);
                state_free(&s);
                if (rc < 0 || check_reading(r, L, &L->cmds[cs[i]], &xs[i], ran0, &runs) < 0)
                    return SGX_STOP;
                read_status |= xs[i].ustatus;
            }
            if (record_reading(r, L, cs, xs, ncs) < 0)
                return SGX_STOP;
            L->ran |= runs;
            for (uint32_t i = 0; i < n->nkids; i++) {
                if (n->kids[i]->kind == SGX_N_CMD)
                    continue;
                worlds one = { 0 }, res = { 0 };
                int rc = worlds_add_copy(r, L, &one, w, v) < 0 ? SGX_STOP : walk(r, L, n->kids[i], &one, &res);
                worlds_free(&one);
                worlds_free(&res);
                if (rc < 0)
                    return SGX_STOP;
            }
            L->ran |= runs;
        }
        /* its status is the last element's: success or failure (! turns them) */
        if (worlds_add_copy(r, L, out, w, n->negated ? 1 : 0) < 0
            || worlds_add_copy(r, L, out, w, n->negated ? 0 : ST_FAILED) < 0)
            return SGX_STOP;
    }
    return 0;
}

/* Node n in every world of in (freed); the worlds after it in out. */
static int walk(sgx_run *r, line *L, sgx_node *n, worlds *in, worlds *out)
{
    int rc = 0;
    switch (n->kind) {
    case SGX_N_CMD:
        rc = walk_cmd(r, L, n->cmd, in, out);
        break;
    case SGX_N_GROUP:
        rc = walk(r, L, n->kids[0], in, out);
        break;
    case SGX_N_LIST: {
        worlds cur = *in;
        memset(in, 0, sizeof *in);
        for (uint32_t i = 0; i < n->nkids && rc == 0; i++) {
            sgx_node *x = n->kids[i];
            worlds take = { 0 }, skip = { 0 }, res = { 0 };
            /* an && item runs in the worlds where $? is 0, an || item in the others */
            for (uint32_t k = 0; k < cur.n; k++) {
                int runs = i == 0 || x->op == SGX_OP_SEQ || (x->op == SGX_OP_AND) == (cur.v[k].status == 0);
                if (rc == 0)
                    rc = worlds_add(r, L, runs ? &take : &skip, &cur.v[k]);
                else
                    state_free(&cur.v[k]);
            }
            cur.n = 0;
            worlds_free(&cur);
            if (rc == 0 && !take.n) {
                /* no outcome reaches it (`: || cmd`): read it in those that skip
                 * it, for the line's text, and drop what it leaves */
                worlds cp = { 0 };
                for (uint32_t k = 0; k < skip.n && rc == 0; k++)
                    rc = worlds_add_copy(r, L, &cp, &skip.v[k], skip.v[k].status);
                if (rc == 0)
                    rc = walk(r, L, x, &cp, &res);
                worlds_free(&cp);
                worlds_free(&res);
            } else if (rc == 0) {
                rc = walk(r, L, x, &take, &res);
            }
            worlds_free(&take);
            if (rc == 0)
                rc = worlds_join(r, L, &res, &skip);
            else
                worlds_free(&skip);
            cur = res;
        }
        if (rc == 0)
            rc = worlds_join(r, L, out, &cur);
        else
            worlds_free(&cur);
        break;
    }
    case SGX_N_PIPE:
        if (n->nkids == 1) {
            worlds res = { 0 };
            rc = walk(r, L, n->kids[0], in, &res);
            for (uint32_t k = 0; k < res.n && rc == 0; k++)
                if (n->negated)
                    res.v[k].status = res.v[k].status == 0;
            if (rc == 0)
                rc = worlds_join(r, L, out, &res);
            else
                worlds_free(&res);
        } else {
            rc = walk_pipe(r, L, n, in, out);
        }
        break;
    case SGX_N_SUBSHELL:
        /* its state is a copy: only its status comes out */
        for (uint32_t k = 0; k < in->n && rc == 0; k++) {
            worlds one = { 0 }, res = { 0 };
            rc = worlds_add_copy(r, L, &one, &in->v[k], in->v[k].status);
            if (rc == 0)
                rc = walk(r, L, n->kids[0], &one, &res);
            for (uint32_t j = 0; j < res.n && rc == 0; j++)
                rc = worlds_add_copy(r, L, out, &in->v[k], res.v[j].status);
            worlds_free(&one);
            worlds_free(&res);
        }
        break;
    }
    worlds_free(in);
    return rc < 0 ? SGX_STOP : 0;
}

/* Parse, plan, expand and decide line L starting in state st (not changed). 0: the
 * decision is in r->last; SGX_STOP: refused by the executor. */
static int prepare_line(sgx_run *r, line *L, state *st)
{
    sgr_sh_limits lim = SGR_SH_DEFAULT_LIMITS;
    int pr = sgr_sh_parse(&r->a, L->text, L->len, &lim, &L->cl);
    if (pr == -2)
        return oom(r);
    const char *why;
    uint32_t *cmdseg, ncmds = 0;
    L->root = sgx_plan(&r->a, &L->cl, L->text, L->len, &cmdseg, &ncmds, &why);
    if (!L->root)
        return stop(r, SGT_DENY, "executor", "%s", why);
    L->ncmds = ncmds;
    L->cmds = sg_arena_zalloc(&r->a, (ncmds ? ncmds : 1) * sizeof *L->cmds);
    L->start_cwd = sg_arena_strndup(&r->a, st->cwd, strlen(st->cwd));
    if (!L->cmds || !L->start_cwd)
        return oom(r);
    for (uint32_t k = 0; k < ncmds; k++)
        L->cmds[k].seg = &L->cl.seg[cmdseg[k]];
    worlds in = { 0 }, out = { 0 };
    int rc = worlds_add_copy(r, L, &in, st, st->status) < 0 ? SGX_STOP : walk(r, L, L->root, &in, &out);
    worlds_free(&in);
    worlds_free(&out);
    if (rc < 0)
        return SGX_STOP;
    for (uint32_t k = 0; k < L->ncmds; k++)
        if (!L->cmds[k].has_stat)
            return stop(r, SGT_DENY, "executor", "%s", mismatch);
    /* Two readings of the line are decided before anything runs: the one whose
     * commands run (every $(...) as the empty string, decided again with its
     * output), and the one check sees, where each word known only at run time
     * stays as written -- its $(...) commands nested segments, decided as check
     * decides them, a program or a name from one dynamic.  So is each other
     * reading the dry walk found: the line as it is when a command before one of
     * its commands failed (a cd that did not get there, a $? of 3, an assignment on
     * a branch not taken).  The strictest verdict is the line's. */
    size_t n, na;
    char *text = render(r, L, &n, 0);
    char *atext = text ? render(r, L, &na, 1) : NULL;
    if (!text || !atext)
        return oom(r);
    const char *worst = NULL;
    size_t wn = 0;
    int ws = -1, worst_other = 0;
    if (na != n || memcmp(atext, text, n) != 0) {
        const sgr_result *ra = decide(r, L, atext, na, st);
        if (ra->oom)
            return oom(r);
        ws = sgt_strictness(ra->decision);
        worst = atext;
        wn = na;
    }
    for (uint32_t g = 0; g < L->nreadings; g++) {
        const reading *rd = &L->readings[g];
        for (uint32_t i = 0; i < rd->n; i++)
            L->cmds[rd->cmd[i]].alt = &rd->x[i];
        size_t gn, gan;
        char *gt = render(r, L, &gn, 0);
        char *gat = gt ? render(r, L, &gan, 1) : NULL;
        for (uint32_t i = 0; i < rd->n; i++)
            L->cmds[rd->cmd[i]].alt = NULL;
        if (!gat)
            return oom(r);
        for (int form = 0; form < 2; form++) {
            const char *t = form ? gat : gt;
            size_t tl = form ? gan : gn;
            if (form && tl == gn && memcmp(gat, gt, gn) == 0)
                break;
            const sgr_result *rg = decide(r, L, t, tl, st);
            if (rg->oom)
                return oom(r);
            if (sgt_strictness(rg->decision) > ws) {
                ws = sgt_strictness(rg->decision);
                worst = t;
                wn = tl;
                worst_other = 1;
            }
        }
    }
    const sgr_result *res = decide(r, L, text, n, st);
    if (take_forms(r, L, res, 0) < 0)
        return SGX_STOP;
    L->decided_text = text;
    if (ws > sgt_strictness(res->decision)) {
        res = decide(r, L, worst, wn, st);  /* the result admission reads */
        if (res->oom)
            return oom(r);
        if (worst_other)
            sgx_warn(r, "decided as the line would run after another outcome of an earlier command (a failure, "
                     "a cd that does not get there, another $?): %.300s", worst);
    }
    r->last = res;
    return 0;
}

/* ---- running -------------------------------------------------------------------- */

/* Decide again for the commands cs[0..n) whose real expansion differs from the
 * dry one; 0 when nothing differs or the new decision allows. */
static int revalidate(sgx_run *r, line *L, cmd **cs, uint32_t n, const state *st)
{
    uint32_t diff = 0;
    for (uint32_t i = 0; i < n; i++)
        if (!same_exp(cs[i])) {
            cs[i]->use_real = 1;
            diff++;
        }
    if (!diff)
        return 0;
    size_t len;
    char *text = render(r, L, &len, 0);
    int rc = 0;
    if (!text) {
        rc = oom(r);
    } else {
        r->res.nrevalidated++;
        const sgr_result *res = decide(r, L, text, len, st);
        if (res->decision != SGT_ALLOW)
            rc = stop(r, res->decision, res->rule_id, "stopped before `%.300s`: with the values it has when it runs, "
                      "the line is not allowed: %s", text, res->message);
        else
            rc = take_forms(r, L, res, 1);
    }
    for (uint32_t i = 0; i < n; i++)
        cs[i]->use_real = 0;
    return rc;
}

/* Perform a builtin's (or a failed lookup's) redirections in this process: fds
 * 0-2 of io as they end up in bio; files opened are listed in opened. */
static int emulate_redirs(sgx_run *r, const vform *v, const state *st, const int io[3], int bio[3], int *opened,
                          uint32_t *nopened)
{
    memcpy(bio, io, 3 * sizeof *bio);
    for (uint32_t k = 0; k < v->nrd; k++) {
        const vredir *rd = &v->rd[k];
        int flags = -1;
        switch (rd->kind) {
        case SGR_REDIR_READ: flags = O_RDONLY; break;
        case SGR_REDIR_WRITE: case SGR_REDIR_CLOBBER: case SGR_REDIR_BOTH: flags = O_WRONLY | O_CREAT | O_TRUNC; break;
        case SGR_REDIR_APPEND: case SGR_REDIR_BOTH_APPEND: flags = O_WRONLY | O_CREAT | O_APPEND; break;
        case SGR_REDIR_RDWR: flags = O_RDWR | O_CREAT; break;
        case SGR_REDIR_DUP_OUT: case SGR_REDIR_DUP_IN:
            if (rd->fd <= 2)
                bio[rd->fd] = strcmp(rd->target, "-") == 0 ? r->null_fd : bio[atoi(rd->target) % 3];
            continue;
        default:
            continue;                   /* a here-string: a builtin reads no input */
        }
        char *path = join_path(&r->a, st->cwd, rd->target);
        if (!path)
            return oom(r);
        int fd = -1;
        if (r->o.open_check && r->o.open_check(r->o.hook_ud, path, flags) < 0)
            fd = -1;
        else
            fd = open(path, flags | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd < 0) {
            say(r, bio[2], "shellgate: %s: %s\n", rd->target, strerror(errno));
            return 1;
        }
        opened[(*nopened)++] = fd;
        if (rd->kind == SGR_REDIR_BOTH || rd->kind == SGR_REDIR_BOTH_APPEND)
            bio[1] = bio[2] = fd;
        else if (rd->fd <= 2)
            bio[rd->fd] = fd;
    }
    return 0;
}

static int run_builtin(sgx_run *r, cmd *c, state *st, const int io[3])
{
    const vform *v = &c->v;
    int bio[3], opened[260];
    uint32_t nopened = 0;
    int er = emulate_redirs(r, v, st, io, bio, opened, &nopened);
    int rc = 0;
    if (er < 0) {
        rc = SGX_STOP;
    } else if (er > 0) {
        st->status = 1;
    } else {
        const char *err, *arg = "";
        rc = apply_effect(r, c, v->argv, v->argc, v->asg, v->nasg, st, &err, &arg, 0);
        if (rc >= 0) {
            st->status = err ? 1 : 0;
            if (err)
                say(r, bio[2], "shellgate: %s: %s: %s\n", v->argv[0], arg, err);
        }
    }
    for (uint32_t i = 0; i < nopened; i++)
        close(opened[i]);
    return rc < 0 ? SGX_STOP : st->status;
}

static const char *env_path(char *const *env)
{
    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], "PATH=", 5) == 0)
            return env[i] + 5;
    return NULL;
}

/* 0 found (out), 1 only non-executable files, -1 none */
static int default_lookup(const char *name, const char *path, const char *cwd, char *out, size_t n)
{
    struct stat sb;
    int seen = 0;
    if (strchr(name, '/')) {
        int k = name[0] == '/' ? snprintf(out, n, "%s", name) : snprintf(out, n, "%s/%s", cwd, name);
        if (k <= 0 || (size_t)k >= n || stat(out, &sb) != 0)
            return -1;
        return S_ISREG(sb.st_mode) && access(out, X_OK) == 0 ? 0 : 1;
    }
    if (!path)
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    for (const char *p = path;; p++) {
        const char *e = strchr(p, ':');
        size_t dl = e ? (size_t)(e - p) : strlen(p);
        int k;
        if (!dl)
            k = snprintf(out, n, "%s/%s", cwd, name);
        else if (p[0] == '/')
            k = snprintf(out, n, "%.*s/%s", (int)dl, p, name);
        else
            k = snprintf(out, n, "%s/%.*s/%s", cwd, (int)dl, p, name);
        if (k > 0 && (size_t)k < n && stat(out, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            seen = 1;
        }
        if (!e)
            break;
        p = e;
    }
    return seen ? 1 : -1;
}

/* Start c as a program with io; 0 when it could not start (its status is in
 * *status, a message written), the pid when it did, SGX_STOP. */
static pid_t start_program(sgx_run *r, cmd *c, state *st, const int io[3], int *status)
{
    const vform *v = &c->v;
    char **env = sgx_env_block(&r->a, &st->vars, st->cwd, v->asg, v->nasg);
    char file[PATH_MAX];
    if (!env)
        return oom(r);
    int found = r->o.lookup ? r->o.lookup(r->o.hook_ud, v->argv[0], env_path(env), st->cwd, file, sizeof file)
                            : default_lookup(v->argv[0], env_path(env), st->cwd, file, sizeof file);
    if (found != 0) {
        int bio[3], opened[260];
        uint32_t nopened = 0;
        int er = emulate_redirs(r, v, st, io, bio, opened, &nopened);
        if (er == 0)
            say(r, bio[2], "shellgate: %s: %s\n", v->argv[0], found > 0 ? "Permission denied" : "command not found");
        for (uint32_t i = 0; i < nopened; i++)
            close(opened[i]);
        if (er < 0)
            return SGX_STOP;
        *status = er > 0 ? 1 : found > 0 ? 126 : 127;
        return 0;
    }
    sgx_redir_op *ops = sg_arena_zalloc(&r->a, (v->nrd + 1) * sizeof *ops);
    if (!ops)
        return oom(r);
    for (uint32_t k = 0; k < v->nrd; k++) {
        const vredir *rd = &v->rd[k];
        ops[k].fd = rd->fd;
        ops[k].kind = rd->kind;
        ops[k].dupfd = -1;
        if (rd->kind == SGR_REDIR_DUP_OUT || rd->kind == SGR_REDIR_DUP_IN) {
            ops[k].dupfd = strcmp(rd->target, "-") == 0 ? -1 : atoi(rd->target);
        } else if (rd->kind == SGR_REDIR_HERESTRING) {
            size_t tl = strlen(rd->target);
            char *d = sg_arena_alloc(&r->a, tl + 2);
            if (!d)
                return oom(r);
            memcpy(d, rd->target, tl);
            d[tl] = '\n';
            d[tl + 1] = '\0';
            ops[k].data = d;
            ops[k].dlen = tl + 1;
        } else if (!(ops[k].path = join_path(&r->a, st->cwd, rd->target))) {
            return oom(r);
        }
    }
    sgx_spawn sp = { file, v->argv[0], v->argv, env, st->cwd, { io[0], io[1], io[2] }, ops, v->nrd, &r->o.rl,
                     r->o.open_check, r->o.hook_ud, NULL, 0 };
    pid_t pid = sgx_proc_spawn(&r->proc, &sp);
    if (pid < 0) {
        say(r, io[2], "shellgate: %s: cannot start: %s\n", v->argv[0], strerror(errno));
        *status = 126;
        return 0;
    }
    return pid;
}

/* The deadline passed, or a signal told this process to end: the tree has been
 * ended, the run stops. */
static int timed_out(sgx_run *r)
{
    if (r->proc.signo) {
        r->res.state = SGX_ST_ERROR;
    } else {
        r->res.timed_out = 1;
        r->res.state = SGX_ST_TIMEOUT;
    }
    r->stopped = 1;
    return SGX_STOP;
}

/* A command of its own (not in a longer pipeline): in st. */
static int exec_cmd(sgx_run *r, line *L, cmd *c, state *st, const int io[3])
{
    if (expand_cmd(r, L, c, st, 1, io[2], &c->real) < 0)
        return r->proc.timed_out || r->proc.signo ? timed_out(r) : SGX_STOP;
    if (check_cmd(r, L, c, &c->real) < 0 || revalidate(r, L, &c, 1, st) < 0)
        return SGX_STOP;
    if (!c->v.argc || builtin_of(c->v.argv[0]) != BI_NONE)
        return run_builtin(r, c, st, io);
    int status = 0;
    pid_t pid = start_program(r, c, st, io, &status);
    if (pid < 0)
        return SGX_STOP;
    if (pid > 0) {
        int ws;
        if (sgx_proc_wait(&r->proc, &pid, 1, &ws) < 0)
            return timed_out(r);
        status = sgx_status_code(ws);
    }
    st->status = status;
    return status;
}

static int exec_pipe(sgx_run *r, line *L, sgx_node *n, state *st, const int io[3])
{
    uint32_t k = n->nkids;
    int rc;
    if (k == 1) {
        sgx_node *e = n->kids[0];
        rc = e->kind == SGX_N_CMD ? exec_cmd(r, L, &L->cmds[e->cmd], st, io) : exec_node(r, L, e, st, io);
        if (rc < 0)
            return rc;
        if (n->negated)
            st->status = !st->status;
        return st->status;
    }
    cmd **cs = sg_arena_alloc(&r->a, k * sizeof *cs);
    int (*pfd)[2] = sg_arena_alloc(&r->a, k * sizeof *pfd);
    pid_t *pids = sg_arena_alloc(&r->a, k * sizeof *pids);
    int *status = sg_arena_zalloc(&r->a, k * sizeof *status);
    if (!cs || !pfd || !pids || !status)
        return oom(r);
    uint32_t ncs = 0;
    for (uint32_t i = 0; i < k; i++) {
        pfd[i][0] = pfd[i][1] = -1;
        pids[i] = 0;
        if (n->kids[i]->kind != SGX_N_CMD)
            continue;
        cmd *c = &L->cmds[n->kids[i]->cmd];
        if (expand_cmd(r, L, c, st, 1, io[2], &c->real) < 0)
            return r->proc.timed_out || r->proc.signo ? timed_out(r) : SGX_STOP;
        if (check_cmd(r, L, c, &c->real) < 0)
            return SGX_STOP;
        cs[ncs++] = c;
    }
    if (revalidate(r, L, cs, ncs, st) < 0)
        return SGX_STOP;
    rc = 0;
    for (uint32_t i = 0; i + 1 < k && rc == 0; i++)
        if (pipe2(pfd[i], O_CLOEXEC) != 0) {
            r->res.state = SGX_ST_ERROR;
            rc = stop(r, SGT_DENY, "executor", "cannot make a pipe: %s", strerror(errno));
        }
    int ci = -1, cio[3] = { -1, -1, -1 };
    for (uint32_t i = 0; i < k && rc == 0; i++) {
        int eio[3] = { i ? pfd[i - 1][0] : io[0], i + 1 < k ? pfd[i][1] : io[1],
                       n->kids[i]->pipe_err && i + 1 < k ? pfd[i][1] : io[2] };
        if (n->kids[i]->kind != SGX_N_CMD) {
            ci = (int)i;
            memcpy(cio, eio, sizeof cio);
            continue;
        }
        cmd *c = &L->cmds[n->kids[i]->cmd];
        if (!c->v.argc || builtin_of(c->v.argv[0]) != BI_NONE) {
            state cp;               /* a pipeline's builtin runs in a subshell: no effect */
            if (state_copy(&cp, st) < 0) {
                rc = oom(r);
                break;
            }
            int b = run_builtin(r, c, &cp, eio);
            status[i] = cp.status;
            state_free(&cp);
            if (b < 0)
                rc = SGX_STOP;
            continue;
        }
        pid_t pid = start_program(r, c, st, eio, &status[i]);
        if (pid < 0)
            rc = SGX_STOP;
        else
            pids[i] = pid;
    }
    /* this process keeps only the ends the ( ) or { } part uses */
    for (uint32_t i = 0; i + 1 < k; i++) {
        if (pfd[i][0] >= 0 && ci != (int)i + 1)
            close(pfd[i][0]);
        if (pfd[i][1] >= 0 && ci != (int)i)
            close(pfd[i][1]);
    }
    if (ci >= 0 && rc == 0) {
        state cp;
        if (state_copy(&cp, st) < 0) {
            rc = oom(r);
        } else {
            rc = exec_node(r, L, n->kids[ci], &cp, cio);
            status[ci] = cp.status;
            state_free(&cp);
        }
    }
    if (ci >= 0) {
        if (ci > 0)
            close(pfd[ci - 1][0]);
        if ((uint32_t)ci + 1 < k)
            close(pfd[ci][1]);
    }
    if (rc < 0)
        return SGX_STOP;
    pid_t wp[256];
    uint32_t nw = 0, at[256];
    for (uint32_t i = 0; i < k; i++)
        if (pids[i] > 0 && nw < 256) {
            at[nw] = i;
            wp[nw++] = pids[i];
        }
    int ws[256];
    if (nw && sgx_proc_wait(&r->proc, wp, nw, ws) < 0)
        return timed_out(r);
    for (uint32_t i = 0; i < nw; i++)
        status[at[i]] = sgx_status_code(ws[i]);
    st->status = status[k - 1];
    if (n->negated)
        st->status = !st->status;
    return st->status;
}

static int exec_node(sgx_run *r, line *L, sgx_node *n, state *st, const int io[3])
{
    switch (n->kind) {
    case SGX_N_LIST:
        for (uint32_t i = 0; i < n->nkids; i++) {
            sgx_node *x = n->kids[i];
            if ((x->op == SGX_OP_AND && st->status != 0) || (x->op == SGX_OP_OR && st->status == 0))
                continue;
            if (exec_node(r, L, x, st, io) < 0)
                return SGX_STOP;
        }
        return st->status;
    case SGX_N_PIPE:
        return exec_pipe(r, L, n, st, io);
    case SGX_N_GROUP:
        return exec_node(r, L, n->kids[0], st, io);
    case SGX_N_SUBSHELL: {
        state cp;
        if (state_copy(&cp, st) < 0)
            return oom(r);
        int rc = exec_node(r, L, n->kids[0], &cp, io);
        st->status = cp.status;
        state_free(&cp);
        return rc < 0 ? SGX_STOP : st->status;
    }
    case SGX_N_CMD:
        return exec_cmd(r, L, &L->cmds[n->cmd], st, io);
    }
    return SGX_STOP;
}

/* ---- the face ------------------------------------------------------------------- */

sgx_run *sgx_run_new(const sgx_opts *o)
{
    sgx_run *r = sg_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->o = *o;
    if (r->o.timeout_s <= 0)
        r->o.timeout_s = SGX_TIMEOUT_DEFAULT;
    if (r->o.timeout_s > SGX_TIMEOUT_MAX)
        r->o.timeout_s = SGX_TIMEOUT_MAX;
    if (r->o.grace_s <= 0)
        r->o.grace_s = SGX_GRACE_DEFAULT;
    sg_arena_init(&r->a, 1 << 16);
    r->null_fd = r->out_wr = r->err_wr = -1;
    r->code_set = sgx_refused_vars_set(o->t);
    r->res.decision = SGT_DENY;
    r->res.rule = "executor";
    r->res.message = "";
    r->res.hint = "";
    r->res.return_code = SGX_RC_REFUSED;
    r->res.state = SGX_ST_REFUSED;
    size_t cap = o->max_output ? o->max_output : SGX_CAP_DEFAULT;
    r->st.cwd = sg_strndup(o->cwd ? o->cwd : "/", strlen(o->cwd ? o->cwd : "/"));
    if (!r->st.cwd || sgx_cap_init(&r->res.out, cap, o->trunc, o->stream ? 1 : -1) < 0
        || sgx_cap_init(&r->res.err, cap, o->trunc, o->stream ? 2 : -1) < 0
        || (o->vars && sgx_vars_copy(&r->st.vars, o->vars) < 0)) {
        sgx_run_free(r);
        return NULL;
    }
    return r;
}

void sgx_run_free(sgx_run *r)
{
    if (!r)
        return;
    state_free(&r->st);
    sgx_cap_free(&r->res.out);
    sgx_cap_free(&r->res.err);
    sg_arena_free(&r->a);
    sg_free(r);
}

int sgx_prepare(sgx_run *r, const char *text, size_t len)
{
    r->top.text = text;
    r->top.len = len;
    if (memchr(text, '\0', len))
        return stop(r, SGT_DENY, "executor", "the line holds a NUL byte");
    if (prepare_line(r, &r->top, &r->st) < 0)
        return -1;
    const sgr_result *res = r->last;
    r->prepared = 1;
    r->res.expanded = r->top.decided_text;
    r->res.decision = res->decision;
    r->res.rule = sg_arena_strndup(&r->a, res->rule_id, strlen(res->rule_id));
    r->res.message = sg_arena_strndup(&r->a, res->message, strlen(res->message));
    r->res.hint = sg_arena_strndup(&r->a, res->hint ? res->hint : "", strlen(res->hint ? res->hint : ""));
    if (!r->res.rule || !r->res.message || !r->res.hint)
        return oom(r);
    return 0;
}

const sgr_result *sgx_prepared(const sgx_run *r)
{
    return r->prepared ? r->last : NULL;
}

void sgx_refuse(sgx_run *r, uint32_t decision, const char *rule, const char *message)
{
    r->stopped = 0;
    stop(r, decision, rule ? rule : "executor", "%s", message ? message : "refused");
}

int sgx_execute(sgx_run *r)
{
    if (!r->prepared || r->stopped) {
        errno = EINVAL;
        return -1;
    }
    int64_t t0 = sgx_now_ns();
    if (sgx_proc_init(&r->proc, r->o.timeout_s, r->o.grace_s) < 0)
        return -1;
    int outp[2], errp[2];
    r->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (r->null_fd < 0 || pipe2(outp, O_CLOEXEC) != 0) {
        sgx_proc_done(&r->proc);
        return -1;
    }
    if (pipe2(errp, O_CLOEXEC) != 0) {
        close(outp[0]);
        close(outp[1]);
        sgx_proc_done(&r->proc);
        return -1;
    }
    r->out_wr = outp[1];
    r->err_wr = errp[1];
    sgx_proc_add_reader(&r->proc, outp[0], &r->res.out, 0);
    sgx_proc_add_reader(&r->proc, errp[0], &r->res.err, 0);
    r->res.state = SGX_ST_SUCCESS;
    if (!r->proc.subreaper)
        sgx_warn(r, "cannot become a child subreaper: processes that detach may outlive the run");
    int io[3] = { r->null_fd, r->out_wr, r->err_wr };
    int rc = exec_node(r, &r->top, r->top.root, &r->st, io);
    /* whatever is still running belongs to no command any more */
    r->res.leftovers = sgx_proc_end_tree(&r->proc, r->res.timed_out ? r->proc.grace_ns : 100000000);
    if (r->res.leftovers && !r->res.timed_out)
        sgx_warn(r, "%u process%s left running by the command %s ended", r->res.leftovers,
                 r->res.leftovers == 1 ? "" : "es", r->res.leftovers == 1 ? "was" : "were");
    close(r->out_wr);
    close(r->err_wr);
    r->out_wr = r->err_wr = -1;
    for (int i = 0; i < 2; i++)
        if (r->proc.nrd > (uint32_t)i)
            sgx_proc_drain(&r->proc, i);
    sgx_proc_done(&r->proc);
    r->res.nexec = r->proc.execd;
    r->res.nfailed = r->proc.started - r->proc.execd;
    close(r->null_fd);
    r->null_fd = -1;
    sgx_cap_finish_stream(&r->res.out);
    sgx_cap_finish_stream(&r->res.err);
    r->res.duration_s = (double)(sgx_now_ns() - t0) / 1e9;
    if (r->proc.signo) {
        r->res.state = SGX_ST_ERROR;
        r->res.return_code = 128 + r->proc.signo;
        r->res.decision = SGT_ALLOW;
        sgx_warn(r, "interrupted by signal %d: every process of the command was ended", r->proc.signo);
    } else if (r->res.timed_out || r->proc.timed_out) {
        r->res.timed_out = 1;
        r->res.state = SGX_ST_TIMEOUT;
        r->res.return_code = SGX_RC_TIMEOUT;
        sgx_warn(r, "timed out after %.3g seconds: every process of the command was ended", r->o.timeout_s);
    } else if (rc < 0) {
        r->res.return_code = r->res.state == SGX_ST_ERROR ? SGX_RC_FAILED : SGX_RC_REFUSED;
    } else {
        r->res.return_code = r->st.status;
    }
    return 0;
}

const sgx_result *sgx_result_of(const sgx_run *r)
{
    return &r->res;
}

const char *sgx_final_cwd(const sgx_run *r)
{
    return r->st.cwd;
}

const sgx_vars *sgx_final_vars(const sgx_run *r)
{
    return &r->st.vars;
}

const char *const *sgx_decided_lines(const sgx_run *r, uint32_t *n)
{
    *n = r->ndecided;
    return r->decided;
}
