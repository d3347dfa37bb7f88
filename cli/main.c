/* main.c - the shellgate command: the verbs dispatched, and those that still read
 * the compiled table itself (compile, test, explain, dump, decompile, fuzz;
 * docs/architecture.md lists them).  check, approve and state are cli/check.c,
 * over the library face.  The CLI is the only code that prints; exit codes are
 * part of the CLI contract (docs/shellgate.1, EXIT STATUS). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/policy.h"
#include "runtime/unwrap.h"
#include "common/alloc.h"
#include "common/utf8.h"
#include "cli/opts.h"
#include "cli/mutate.h"
#include "cli/bundle.h"
#include "cli/verbs.h"
#include "cli/help.h"

static char *abs_cwd(const char *given, char *buf, size_t n)
{
    if (given) {
        if (given[0] == '/')
            return (char *)given;
        char here[4096];
        if (!getcwd(here, sizeof here))
            return NULL;
        int k = snprintf(buf, n, "%s/%s", here, given);
        return k > 0 && (size_t)k < n ? buf : NULL;
    }
    return getcwd(buf, n);
}

/* ---- test reporting ------------------------------------------------------------ */

/* test --json and compile --check --json: the failures as objects, not text */
static cJSON *json_failures;

static void report_fail(void *ud, const char *file, unsigned line, const char *cmd, const char *want,
                        const char *want_rule, const char *got, const char *got_rule, const char *message)
{
    (void)ud;
    if (json_failures) {
        cJSON *f = cJSON_CreateObject();
        if (f && cJSON_AddItemToArray(json_failures, f)) {
            cJSON_AddStringToObject(f, "file", file);
            cJSON_AddNumberToObject(f, "line", line);
            cJSON_AddStringToObject(f, "command", cmd);
            cJSON_AddStringToObject(f, "want", want);
            if (want_rule)
                cJSON_AddStringToObject(f, "want_rule", want_rule);
            cJSON_AddStringToObject(f, "got", got);
            cJSON_AddStringToObject(f, "got_rule", got_rule);
            cJSON_AddStringToObject(f, "message", message);
        } else {
            cJSON_Delete(f);
        }
        return;
    }
    fprintf(stderr, "%s:%u: test failed: %s\n  want: %s%s%s\n  got:  %s (%s): %s\n", file, line, cmd, want,
            want_rule ? " rule " : "", want_rule ? want_rule : "", got, got_rule, message);
}

/* ---- compile ------------------------------------------------------------------ */

static int print_json(cJSON *o);

/* compile --json: what was compiled, the inline tests, what was written. */
static int compile_json(const cli *o, const sg_policy *p, unsigned pass, unsigned fail, const char *wrote)
{
    cJSON *j = cJSON_CreateObject(), *files = cJSON_AddArrayToObject(j, "files");
    for (int i = 0; files && i < o->nrest; i++)
        cJSON_AddItemToArray(files, cJSON_CreateString(o->rest[i]));
    if (p) {
        cJSON_AddStringToObject(j, "pack", sgr_str(p->t, p->t->meta->pack_name));
        cJSON_AddNumberToObject(j, "version", p->t->meta->pack_version);
        cJSON_AddNumberToObject(j, "rules", p->t->nrules);
        cJSON_AddNumberToObject(j, "bytes", (double)p->len);
    }
    cJSON_AddNumberToObject(j, "passed", pass);
    cJSON_AddNumberToObject(j, "failed", fail);
    cJSON_AddItemToObject(j, "failures", json_failures ? json_failures : cJSON_CreateArray());
    json_failures = NULL;
    if (wrote)
        cJSON_AddStringToObject(j, "wrote", wrote);
    else
        cJSON_AddNullToObject(j, "wrote");
    cJSON_AddBoolToObject(j, "ok", p && !fail);
    return print_json(j);
}

/* --strict: the pack compiled with warnings, which fail it as an error would. */
static void strict_refused(const char *verb, const char *file, unsigned warnings)
{
    fprintf(stderr, "%s %s: %s: %u warning%s, and --strict makes a warning an error\n", prog_name, verb, file,
            warnings, warnings == 1 ? "" : "s");
}

static int cmd_compile(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.verb = "compile";
    if (cli_parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest < 1) {
        cli_missing("compile", "the rule FILE to compile");
        return EX_USAGE;
    }
    if (o.nrest > 1 && !o.out && !o.check_only) {
        fprintf(stderr, "%s compile: %d files compile to one table only with -o OUT.sgt (one file writes "
                "FILE.sgt)\n", prog_name, o.nrest);
        return EX_USAGE;
    }
    if (o.json)
        json_failures = cJSON_CreateArray();
    unsigned warnings = 0;
    sg_load_options lo = { o.incs, o.ninc, cli_print_diag, &warnings, NULL, NULL };
    uint8_t *bytes = NULL;
    size_t len = 0;
    int r = sg_compile_files((const char *const *)o.rest, (size_t)o.nrest, &lo, &bytes, &len);
    if (!r && o.strict && warnings) {
        strict_refused("compile", o.rest[0], warnings);
        sg_free(bytes);
        r = EX_DATAERR;
    }
    if (r) {
        if (o.json)
            compile_json(&o, NULL, 0, 0, NULL);
        return r;
    }
    sg_policy *p = NULL;
    char err[512];
    r = sg_policy_from_table(bytes, len, bytes, o.rest[0], &p, err, sizeof err);
    if (r) {
        fprintf(stderr, "%s: internal error: the compiled table does not verify: %s\n", prog_name, err);
        return EX_SOFTWARE;
    }
    unsigned pass = 0, fail = 0;
    sg_run_inline_tests(p, SGR_PLATFORM_HOST, report_fail, NULL, &pass, &fail);
    if (fail) {
        if (o.json)
            compile_json(&o, p, pass, fail, NULL);
        else
            fprintf(stderr, "%s: %u of %u inline tests failed: the pack does not compile\n", o.rest[0], fail,
                    pass + fail);
        sg_policy_free(p);
        return EX_DATAERR;
    }
    const char *wrote = NULL;
    char def[4096];                    /* FILE.sgt: what one FILE compiles to */
    if (!o.check_only) {
        const char *out = o.out;
        if (!out) {
            snprintf(def, sizeof def, "%s", o.rest[0]);
            char *dot = strrchr(def, '.');
            if (dot && strcmp(dot, ".rules") == 0)
                *dot = '\0';
            strncat(def, ".sgt", sizeof def - strlen(def) - 1);
            out = def;
        }
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(p->bytes, 1, p->len, f) != p->len || fclose(f) != 0 || rename(tmp, out) != 0) {
            fprintf(stderr, "%s: cannot write %s: %s\n", prog_name, out, strerror(errno));
            unlink(tmp);
            sg_policy_free(p);
            return EX_CANTCREAT;
        }
        wrote = out;
    }
    if (o.json)
        compile_json(&o, p, pass, fail, wrote);
    else if (wrote)
        printf("wrote %s: pack %s version %u, %u rules, %zu bytes; %u inline tests passed\n", wrote,
               sgr_str(p->t, p->t->meta->pack_name), p->t->meta->pack_version, p->t->nrules, p->len, pass);
    else
        printf("%s: pack %s version %u, %u rules; %u inline tests passed; nothing written (--check)\n",
               o.rest[0], sgr_str(p->t, p->t->meta->pack_name), p->t->meta->pack_version, p->t->nrules, pass);
    sg_policy_free(p);
    return 0;
}

/* explain: the trace of every rule tried, kept to print under its segment */
typedef struct trace_ent {
    int32_t seg;
    uint32_t rule;
    int matched;
} trace_ent;

typedef struct trace_state {
    const sgr_table *t;
    trace_ent *v;
    size_t n, cap;
} trace_state;

static void trace_rule(void *ud, int32_t seg, uint32_t rule, int matched)
{
    trace_state *ts = ud;
    if (ts->n == ts->cap) {
        size_t nc = ts->cap ? ts->cap * 2 : 64;
        trace_ent *nv = realloc(ts->v, sizeof *nv * nc);
        if (!nv)
            return;
        ts->v = nv;
        ts->cap = nc;
    }
    ts->v[ts->n].seg = seg;
    ts->v[ts->n].rule = rule;
    ts->v[ts->n].matched = matched;
    ts->n++;
}

static void print_tried(const trace_state *ts, int32_t seg)
{
    size_t tried = 0, matched = 0;
    for (size_t i = 0; i < ts->n; i++) {
        if (ts->v[i].seg != seg)
            continue;
        tried++;
        if (!ts->v[i].matched)
            continue;
        const sgt_rule *r = &ts->t->rules[ts->v[i].rule];
        printf("  matched: %-5s %s (pack %s)\n", sgr_decision_name(r->decision), sgr_str(ts->t, r->id),
               sgr_str(ts->t, ts->t->packs[r->pack].name));
        matched++;
    }
    printf("  rules tried: %zu, matched: %zu\n", tried, matched);
}

static void explain_segments(const sgr_table *t, const sgr_result *r, const trace_state *ts)
{
    for (uint32_t i = 0; i < r->cl.nseg; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        const sgr_norm *nm = &r->norm[i];
        printf("segment %u", i);
        if (s->nest != SGR_NEST_TOP)
            printf(" (%s in segment %d)", sgr_nest_names[s->nest], s->parent);
        printf(": pipeline %u, position %u of %u\n  argv:", s->pipeline, s->pipe_index + 1, s->pipe_len);
        for (uint32_t k = 0; k < s->argc; k++)
            printf(" [%s]", s->argv[k].text);
        printf("\n  program: %.*s", (int)nm->prog.len, nm->prog.s);
        if (nm->subcmd.s)
            printf("  subcommand: %.*s", (int)nm->subcmd.len, nm->subcmd.s);
        if (nm->nopts) {
            printf("  options:");
            for (uint32_t k = 0; k < nm->nopts; k++)
                printf(" %.*s", (int)nm->opts[k].len, nm->opts[k].s);
        }
        printf("\n");
        for (uint32_t k = 0; k < s->nassigns; k++)
            printf("  assigns: %s\n", s->assigns[k].text);
        for (uint32_t k = 0; k < s->nredirs; k++)
            printf("  redirect: %s %s\n", sgr_redir_names[s->redirs[k].kind],
                   s->redirs[k].kind == SGR_REDIR_HEREDOC ? "(heredoc)" : s->redirs[k].target.text);
        if (s->flags & SGR_SEG_DYNAMIC)
            printf("  dynamic: %s\n", s->dyn_reason ? s->dyn_reason : "");
        print_tried(ts, (int32_t)i);
        int32_t ru = r->seg_rule ? r->seg_rule[i] : SGR_RULE_DEFAULT;
        printf("  decision: %s by %s\n", r->seg_decision ? sgr_decision_name(r->seg_decision[i]) : "deny",
               sgr_rule_name(t, ru));
    }
}

/* explain --json: the explanation as data through the face (sg_explain), one
 * object: the check's result, each segment as the rules saw it with the rules
 * tried on it, and the rules about the whole line. */
static int explain_json(const sg_policy *p, const cli *o)
{
    size_t len = 0;
    char *cmd = cli_command_line(o, &len);
    sg_checker *c = cmd ? sg_checker_new(p) : NULL;
    if (!c) {
        fprintf(stderr, "%s: out of memory\n", prog_name);
        free(cmd);
        return EX_SOFTWARE;
    }
    sg_check_options co = { o->cwd, o->roots, o->nroots, NULL, NULL, NULL, NULL, o->platform };
    const sg_result *r = sg_explain(c, cmd, len, &co);
    const char *rj = sg_result_json(r, NULL);
    cJSON *j = rj ? cJSON_Parse(rj) : NULL;
    if (!j) {
        fprintf(stderr, "%s: out of memory\n", prog_name);
        sg_checker_free(c);
        free(cmd);
        return EX_SOFTWARE;
    }
    cJSON_AddStringToObject(j, "command", cmd);
    cJSON_AddStringToObject(j, "pack", sg_policy_name(p));
    cJSON *segs = cJSON_GetObjectItem(j, "segments");
    cJSON *line = cJSON_AddArrayToObject(j, "line_rules");
    for (size_t i = 0; i < sg_result_segments(r); i++) {
        cJSON *s = cJSON_GetArrayItem(segs, (int)i);
        if (!s)
            break;
        const char *sub = sg_result_segment_subcommand(r, i), *cwd = sg_result_segment_cwd(r, i);
        cJSON_AddStringToObject(s, "program", sg_result_segment_program(r, i));
        if (sub)
            cJSON_AddStringToObject(s, "subcommand", sub);
        else
            cJSON_AddNullToObject(s, "subcommand");
        cJSON *opts = cJSON_AddArrayToObject(s, "options"), *paths = cJSON_AddArrayToObject(s, "paths");
        for (size_t k = 0; k < sg_result_segment_options(r, i); k++)
            cJSON_AddItemToArray(opts, cJSON_CreateString(sg_result_segment_option(r, i, k)));
        for (size_t k = 0; k < sg_result_segment_paths(r, i); k++)
            cJSON_AddItemToArray(paths, cJSON_CreateString(sg_result_segment_path(r, i, k)));
        if (cwd)
            cJSON_AddStringToObject(s, "cwd", cwd);
        cJSON_AddArrayToObject(s, "rules_tried");
    }
    for (size_t k = 0; k < sg_result_rules_tried(r); k++) {
        sg_rule_tried t;
        if (sg_result_rule_tried(r, k, &t) < 0)
            continue;
        cJSON *to = t.segment < 0 ? line : cJSON_GetObjectItem(cJSON_GetArrayItem(segs, (int)t.segment), "rules_tried");
        cJSON *e = cJSON_CreateObject();
        if (!to || !e || !cJSON_AddItemToArray(to, e)) {
            cJSON_Delete(e);
            continue;
        }
        cJSON_AddStringToObject(e, "rule", t.rule);
        cJSON_AddStringToObject(e, "pack", t.pack);
        cJSON_AddStringToObject(e, "decision", sg_decision_name(t.decision));
        cJSON_AddBoolToObject(e, "matched", t.matched);
    }
    cJSON_AddBoolToObject(j, "trace_complete", sg_result_rules_tried_all(r));
    int code = cli_exit_for(sg_result_decision(r));
    print_json(j);
    fflush(stdout);
    sg_checker_free(c);
    free(cmd);
    return code;
}

/* shellgate explain: the segments, the rules tried on each, and the decider (the
 * policy's decision; explain admits nothing).  --batch answers as check does. */
static int cmd_explain(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.verb = "explain";
    o.command_operands = 1;
    int status;
    sg_policy *p = cli_open_command_verb(&o, "explain", "the COMMAND to explain (after --)", argc, argv, &status);
    if (!p)
        return status;
    if (o.batch) {
        sg_batch_options bo = { o.cwd, o.roots, o.nroots, NULL, NULL, 0, NULL, o.platform };
        int r = sg_batch(p, NULL, 0, 1, &bo);
        if (r)
            fprintf(stderr, "%s: %s\n", prog_name, r == SG_EIO ? "cannot read standard input or write the answers"
                                                               : "out of memory in the batch");
        sg_policy_free(p);
        return r ? EX_SOFTWARE : 0;
    }
    if (o.json) {
        int code = explain_json(p, &o);
        sg_policy_free(p);
        return code;
    }
    char cwdbuf[8300];
    const char *cwd = abs_cwd(o.cwd, cwdbuf, sizeof cwdbuf);
    size_t len = 0;
    char *cmd = cli_command_line(&o, &len);
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (!cmd || !ctx || !cwd) {
        fprintf(stderr, "%s: %s\n", prog_name, !cwd ? "cannot determine the working directory" : "out of memory");
        free(cmd);
        sgr_ctx_free(ctx);
        sg_policy_free(p);
        return 1;
    }
    trace_state ts = { p->t, NULL, 0, 0 };
    printf("pack: %s version %u (%s)\ncommand: %s\ncwd: %s\n", sgr_str(p->t, p->t->meta->pack_name),
           p->t->meta->pack_version, p->name, cmd, cwd);
    sgr_ctx_set_trace(ctx, trace_rule, &ts);
    sgr_ctx_set_platform(ctx, (sgr_platform)o.platform);
    sgr_opts so = { cwd, o.roots, o.nroots, NULL };
    const sgr_result *r = sgr_eval(ctx, cmd, len, &so);
    explain_segments(p->t, r, &ts);
    if (p->t->meta->line_len) {
        printf("whole line:\n");
        print_tried(&ts, -1);
    }
    printf("decision: %s\nrule: %s\nmessage: %s\n", sgr_decision_name(r->decision), r->rule_id, r->message);
    if (r->hint && *r->hint)
        printf("hint: %s\n", r->hint);
    fflush(stdout);
    int code = cli_exit_for((sg_decision)r->decision);
    free(ts.v);
    free(cmd);
    sgr_ctx_free(ctx);
    sg_policy_free(p);
    return code;
}

/* ---- test ---------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Split a case line "command ; decision [; rule]" in place, from the right on
 * " ; " (so commands may contain ';'): the decision (SGT_*), with *cmd and *rule
 * (NULL when none) trimmed; -1 when there is no " ; ", -2 when no decision is
 * where one must be. */
static int split_case(char *s, char **cmd, char **rule)
{
    s = trim(s);
    char *last = NULL, *prev = NULL;
    for (char *q = strstr(s, " ; "); q; q = strstr(q + 1, " ; ")) {
        prev = last;
        last = q;
    }
    *cmd = s;
    *rule = NULL;
    if (!last)
        return -1;
    *last = '\0';
    char *tail = trim(last + 3);
    int d = sg_parse_decision(tail, strlen(tail));
    if (d < 0 && prev) {
        *prev = '\0';
        char *dec = trim(prev + 3);
        d = sg_parse_decision(dec, strlen(dec));
        *rule = tail;
    }
    *cmd = trim(s);
    return d < 0 ? -2 : d;
}

/* Read the next case of a case file into *line (getline's buffer and size): one
 * line, joined with the lines after it that start with "| " (or are "|"), each
 * after a newline, so that a command can span lines (a here-document).  *ln is
 * the number of the case's first line, *next the file's line count so far.  -1 at
 * the end.  *held keeps the line read ahead (getline-allocated), or NULL. */
static ssize_t case_getline(char **line, size_t *cap, FILE *f, char **held, unsigned *ln,
                            unsigned *next)
{
    ssize_t n;
    if (*held) {
        free(*line);
        *line = *held;
        *cap = strlen(*held) + 1;
        *held = NULL;
        n = (ssize_t)strlen(*line);
    } else if ((n = getline(line, cap, f)) < 0)
        return -1;
    *ln = ++*next;
    for (;;) {
        char *more = NULL;
        size_t mc = 0;
        ssize_t m = getline(&more, &mc, f);
        if (m < 0) {
            free(more);
            return n;
        }
        if (!(more[0] == '|' && (more[1] == ' ' || more[1] == '\n' || more[1] == '\0'))) {
            *held = more;
            return n;
        }
        ++*next;
        if (n && (*line)[n - 1] == '\n')
            n--;
        size_t add = more[1] == ' ' ? (size_t)m - 2 : 0;
        if (add && more[2 + add - 1] == '\n')
            add--;
        if ((size_t)n + add + 2 > *cap) {
            char *g = realloc(*line, (size_t)n + add + 2);
            if (!g) {
                free(more);
                return -1;
            }
            *line = g;
            *cap = (size_t)n + add + 2;
        }
        (*line)[n++] = '\n';
        memcpy(*line + n, more + 2, add);
        n += (ssize_t)add;
        (*line)[n] = '\0';
        free(more);
    }
}

/* cli_load_policy for `test`: under --strict, a policy compiled with warnings is
 * refused as one with errors (EX_DATAERR). */
static sg_policy *test_load_policy(const cli *o, int *status)
{
    unsigned before = o->warnings ? *o->warnings : 0;
    sg_policy *p = cli_load_policy(o, status);
    if (p && o->strict && o->warnings && *o->warnings > before) {
        strict_refused("test", o->policy ? o->policy : "default", *o->warnings - before);
        sg_policy_free(p);
        *status = EX_DATAERR;
        return NULL;
    }
    return p;
}

/* A case file: "command ; decision [; rule]" per line; '#' comments; a first
 * line "#policy NAME" names the policy unless -p does; "#cwd DIR" runs the lines
 * after it in DIR (relative to the case file's directory; "#cwd" alone: the
 * default again); "#platform NAME" decides them for that platform (linux, macos,
 * windows; "#platform" alone: o's, --platform's or the host's).  The command is
 * the text before the LAST two (or one) " ; " separators, so commands may
 * contain ';'. */
static int run_case_file(const char *path, const cli *o, sg_policy *shared, sgr_ctx *shared_ctx,
                         unsigned *pass, unsigned *fail)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return EX_NOINPUT;
    }
    char *line = NULL, *held = NULL, *case_cwd = NULL;
    size_t cap = 0;
    unsigned ln = 0, nread = 0;
    sg_policy *p = shared;
    sgr_ctx *ctx = shared_ctx;
    int rc = 0;
    cli po = *o;
    sg_platform plat = o->platform;
    while (case_getline(&line, &cap, f, &held, &ln, &nread) >= 0) {
        char *s = trim(line);
        if (strncmp(s, "#policy ", 8) == 0 && !p && !o->policy) {
            po.policy = trim(s + 8);
            po.policy = po.policy[0] ? po.policy : NULL;
            int st;
            char *pol = sg_strndup(po.policy ? po.policy : "default", strlen(po.policy ? po.policy : "default"));
            po.policy = pol;
            p = test_load_policy(&po, &st);
            sg_free(pol);
            if (!p) {
                rc = st;
                break;
            }
            continue;
        }
        if (strncmp(s, "#cwd", 4) == 0 && (s[4] == '\0' || s[4] == ' ' || s[4] == '\t')) {
            free(case_cwd);
            case_cwd = NULL;
            const char *d = trim(s + 4);
            if (*d) {
                const char *slash = strrchr(path, '/');
                int base = d[0] == '/' || !slash ? 0 : (int)(slash - path);
                char joined[PATH_MAX];
                int jn = snprintf(joined, sizeof joined, "%.*s%s%s", base, path, base ? "/" : "", d);
                if (jn < 0 || (size_t)jn >= sizeof joined || !(case_cwd = realpath(joined, NULL))) {
                    fprintf(stderr, "%s:%u: #cwd: cannot use '%s': %s\n", path, ln, d,
                            jn < 0 || (size_t)jn >= sizeof joined ? "name too long" : strerror(errno));
                    (*fail)++;
                    rc = EX_NOINPUT;
                    break;
                }
            }
            continue;
        }
        if (strncmp(s, "#platform", 9) == 0 && (s[9] == '\0' || s[9] == ' ' || s[9] == '\t')) {
            const char *name = trim(s + 9);
            int pl = *name ? sgr_platform_of(name, strlen(name)) : (int)o->platform;
            if (pl < 0) {
                fprintf(stderr, "%s:%u: #platform: '%s' is not a platform (%s)\n", path, ln, name, cli_platform_list());
                (*fail)++;
                rc = EX_DATAERR;
                break;
            }
            plat = (sg_platform)pl;
            continue;
        }
        if (!*s || *s == '#')
            continue;
        if (!p) {
            int st;
            p = test_load_policy(&po, &st);
            if (!p) {
                rc = st;
                break;
            }
        }
        if (!ctx && !(ctx = sgr_ctx_new(p->t))) {
            rc = EX_SOFTWARE;
            break;
        }
        char *cmd, *rule;
        int d = split_case(s, &cmd, &rule);
        if (d < 0) {
            fprintf(stderr, d == -1 ? "%s:%u: a case is 'command ; decision [; rule]'\n"
                                    : "%s:%u: expected allow, ask or deny\n", path, ln);
            (*fail)++;
            continue;
        }
        sgr_ctx_set_platform(ctx, (sgr_platform)plat);
        if (sg_run_case(ctx, p->t, path, ln, cmd, (uint32_t)d, rule, case_cwd, report_fail, NULL))
            (*pass)++;
        else
            (*fail)++;
    }
    free(case_cwd);
    free(line);
    free(held);
    fclose(f);
    if (!shared) {
        sgr_ctx_free(ctx);
        sg_policy_free(p);
    }
    return rc;
}

/* --coverage: which rules of the policy matched in some test */
typedef struct cover {
    uint8_t *hit;
} cover;

static void cover_trace(void *ud, int32_t seg, uint32_t rule, int matched)
{
    (void)seg;
    if (matched)
        ((cover *)ud)->hit[rule] = 1;
}

/* Run the policy's inline tests and the case files against one policy, then list
 * the rules of the policy's own pack that no test made match. */
static int run_coverage(const cli *o, unsigned *pass, unsigned *fail)
{
    cli po = *o;
    if (!po.policy)
        for (int i = 0; i < o->nrest && !po.policy; i++)
            if (ends_with(o->rest[i], ".rules"))
                po.policy = o->rest[i];
    int st;
    sg_policy *p = test_load_policy(&po, &st);
    if (!p)
        return st;
    cover cv = { calloc(p->t->nrules ? p->t->nrules : 1, 1) };
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (!cv.hit || !ctx) {
        free(cv.hit);
        sgr_ctx_free(ctx);
        sg_policy_free(p);
        return EX_SOFTWARE;
    }
    sgr_ctx_set_trace(ctx, cover_trace, &cv);
    sgr_ctx_set_platform(ctx, (sgr_platform)o->platform);
    for (uint32_t i = 0; i < p->t->ntests; i++) {
        const sgt_test *tt = &p->t->tests[i];
        if (sg_run_case(ctx, p->t, sgr_str(p->t, tt->file), tt->line, sgr_str(p->t, tt->command), tt->decision,
                        tt->rule ? sgr_str(p->t, tt->rule) : NULL, sgr_str(p->t, tt->cwd), report_fail, NULL))
            (*pass)++;
        else
            (*fail)++;
    }
    int rc = 0;
    for (int i = 0; i < o->nrest; i++)
        if (ends_with(o->rest[i], ".cases")) {
            int r = run_case_file(o->rest[i], &po, p, ctx, pass, fail);
            if (r)
                rc = r;
        }
    unsigned total = 0, missed = 0;
    for (uint32_t r = 0; r < p->t->nrules; r++) {
        if (p->t->rules[r].pack != 0)
            continue;                        /* the policy's own pack, not what it uses */
        total++;
        if (!cv.hit[r]) {
            missed++;
            printf("not covered: %s (line %u)\n", sgr_str(p->t, p->t->rules[r].id), p->t->rules[r].line);
        }
    }
    printf("coverage: %u of %u rules exercised\n", total - missed, total);
    if (missed && !rc)
        rc = 1;
    free(cv.hit);
    sgr_ctx_free(ctx);
    sg_policy_free(p);
    return rc;
}

/* test --json: one object, the counts and each failure. */
static void test_json(unsigned pass, unsigned fail)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "passed", pass);
    cJSON_AddNumberToObject(j, "failed", fail);
    cJSON_AddItemToObject(j, "failures", json_failures ? json_failures : cJSON_CreateArray());
    json_failures = NULL;
    print_json(j);
}

static int cmd_test(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.verb = "test";
    unsigned warnings = 0;
    o.warnings = &warnings;
    if (cli_parse_opts(&o, argc, argv) < 0)
        return EX_USAGE;
    if (o.nrest < 1) {
        cli_missing("test", "a FILE of tests (.rules: inline tests; .cases: a case file)");
        return EX_USAGE;
    }
    if (o.json && o.coverage) {
        fprintf(stderr, "%s test: --coverage prints a listing; it takes no --json\n", prog_name);
        return EX_USAGE;
    }
    unsigned pass = 0, fail = 0;
    int rc = 0;
    if (o.json)
        json_failures = cJSON_CreateArray();
    if (o.coverage) {
        rc = run_coverage(&o, &pass, &fail);
        printf("%u passed, %u failed\n", pass, fail);
        return rc ? rc : fail ? 1 : 0;
    }
    for (int i = 0; i < o.nrest; i++) {
        const char *f = o.rest[i];
        if (ends_with(f, ".cases")) {
            int r = run_case_file(f, &o, NULL, NULL, &pass, &fail);
            if (r)
                rc = r;
            continue;
        }
        cli po = o;
        po.policy = f;
        int st;
        sg_policy *p = test_load_policy(&po, &st);
        if (!p) {
            rc = st;
            fail++;
            continue;
        }
        sg_run_inline_tests(p, (sgr_platform)o.platform, report_fail, NULL, &pass, &fail);
        sg_policy_free(p);
    }
    if (o.json)
        test_json(pass, fail);
    else
        printf("%u passed, %u failed\n", pass, fail);
    if (rc)
        return rc;
    return fail ? 1 : 0;
}

/* o as one line of JSON; a command of a case file or the command line may hold
 * bytes that are no UTF-8, which cJSON copies as they are: U+FFFD instead (in a
 * string is the only place such a byte can stand in cJSON's text) */
static int print_json(cJSON *o)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    char *u = s ? sg_utf8_repair(s, strlen(s), NULL) : NULL;
    if (s)
        cJSON_free(s);
    if (!u) {
        fputs("{\"decision\":\"deny\",\"error\":\"out of memory\"}\n", stdout);
        cJSON_Delete(o);
        return -1;
    }
    fputs(u, stdout);
    fputc('\n', stdout);
    sg_free(u);
    cJSON_Delete(o);
    return 0;
}

/* ---- fuzz: meaning-keeping rewrites of the pack's deny/ask tests (cli/mutate.h) ---- */

/* One command the pack denies or asks about, and where it came from. */
typedef struct fz_cmd {
    char *cmd, *cwd, *where;           /* sg_malloc'd; cwd NULL: SG_TEST_CWD */
    sgr_platform platform;             /* its case file's #platform */
} fz_cmd;

typedef struct fz_set {
    fz_cmd *v;
    size_t n, cap;
} fz_set;

static int fz_add(fz_set *s, const char *cmd, const char *cwd, sgr_platform plat, const char *file, unsigned line)
{
    if (s->n == s->cap) {
        size_t c = s->cap ? s->cap * 2 : 64;
        fz_cmd *v = sg_realloc(s->v, c * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = c;
    }
    char where[4200];
    snprintf(where, sizeof where, "%s:%u", file, line);
    fz_cmd *c = &s->v[s->n];
    c->cmd = sg_strndup(cmd, strlen(cmd));
    c->cwd = cwd && *cwd ? sg_strndup(cwd, strlen(cwd)) : NULL;
    c->platform = plat;
    c->where = sg_strndup(where, strlen(where));
    if (!c->cmd || !c->where || (cwd && *cwd && !c->cwd)) {
        sg_free(c->cmd);
        sg_free(c->cwd);
        sg_free(c->where);
        return -1;
    }
    s->n++;
    return 0;
}

static void fz_free(fz_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        sg_free(s->v[i].cmd);
        sg_free(s->v[i].cwd);
        sg_free(s->v[i].where);
    }
    sg_free(s->v);
}

/* The deny/ask lines of a case file (format: see run_case_file). */
static int fz_read_cases(const char *path, fz_set *s)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return EX_NOINPUT;
    }
    char *line = NULL, *held = NULL;
    size_t cap = 0;
    unsigned ln = 0, nread = 0;
    int rc = 0;
    sgr_platform plat = SGR_PLATFORM_HOST;
    while (!rc && case_getline(&line, &cap, f, &held, &ln, &nread) >= 0) {
        char *t = trim(line);
        if (strncmp(t, "#platform", 9) == 0 && (t[9] == '\0' || t[9] == ' ' || t[9] == '\t')) {
            const char *name = trim(t + 9);
            int pl = sgr_platform_of(name, strlen(name));   /* `shellgate test` reports a bad one */
            plat = pl < 0 ? SGR_PLATFORM_HOST : (sgr_platform)pl;
            continue;
        }
        if (!*t || *t == '#')
            continue;
        char *cmd, *rule;
        int d = split_case(t, &cmd, &rule);   /* `shellgate test` reports malformed lines */
        if ((d == SGT_DENY || d == SGT_ASK) && fz_add(s, cmd, NULL, plat, path, ln) < 0)
            rc = EX_SOFTWARE;
    }
    free(line);
    free(held);
    fclose(f);
    return rc;
}

static void fz_chain(char *buf, size_t n, const sgm_variant *v)
{
    buf[0] = '\0';
    for (unsigned k = 0; k < v->nchain; k++) {
        strncat(buf, k ? " > " : "", n - strlen(buf) - 1);
        strncat(buf, sgm_names[v->chain[k]], n - strlen(buf) - 1);
    }
}

/* shellgate fuzz [-I DIR]... [--seed N] [--max N] [--json] PACK [CASES...] */
/* sgm_opts.optkind over a table: what prog's declaration says option opt is. */
static unsigned fz_optkind(void *ud, const char *prog, size_t plen, const char *opt, size_t olen)
{
    const sgr_table *t = ud;
    const sgt_progspec *ps = sgr_table_progspec(t, prog, plen);
    if (!ps)
        return 0;
    uint32_t bits = sgr_progopt_bits(t, ps, opt, olen);
    if (bits & SGR_OPT_VALUE)
        return SGM_OPT_VALUE;
    return bits & SGR_OPT_FLAG ? SGM_OPT_FLAG : 0;
}

static int cmd_fuzz(int argc, char **argv)
{
    cli o;
    memset(&o, 0, sizeof o);
    unsigned long long seed = 1, max = 64;
    /* --seed/--max are fuzz's own: take them out before the shared options */
    char **av = sg_calloc((size_t)argc + 1, sizeof *av);
    int ac = 0;
    if (!av)
        return EX_SOFTWARE;
    for (int i = 0; i < argc; i++) {
        int is_seed = strcmp(argv[i], "--seed") == 0;
        if (is_seed || strcmp(argv[i], "--max") == 0) {
            char *end;
            if (i + 1 >= argc || !argv[i + 1][0] || argv[i + 1][0] == '-') {
                fprintf(stderr, "%s: %s takes a number\n", prog_name, argv[i]);
                sg_free(av);
                return EX_USAGE;
            }
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (*end || (!is_seed && (v == 0 || v > 100000))) {
                fprintf(stderr, "%s: %s takes a number%s\n", prog_name, argv[i - 1], is_seed ? "" : " from 1 to 100000");
                sg_free(av);
                return EX_USAGE;
            }
            *(is_seed ? &seed : &max) = v;
            continue;
        }
        av[ac++] = argv[i];
    }
    o.verb = "fuzz";
    int pr = cli_parse_opts(&o, ac, av);    /* refuses what fuzz does not take (-p: PACK is the operand) */
    if (pr < 0 || o.nrest < 1) {
        if (pr == 0)
            cli_missing("fuzz", "the PACK to fuzz");
        sg_free(av);
        return EX_USAGE;
    }
    o.policy = o.rest[0];
    int st;
    sg_policy *p = cli_load_policy(&o, &st);
    if (!p) {
        sg_free(av);
        return st;
    }
    fz_set set = { 0 };
    int rc = 0;
    for (uint32_t i = 0; i < p->t->ntests && !rc; i++) {
        const sgt_test *tt = &p->t->tests[i];
        if ((tt->decision == SGT_DENY || tt->decision == SGT_ASK)
            && fz_add(&set, sgr_str(p->t, tt->command), sgr_str(p->t, tt->cwd), SGR_PLATFORM_HOST,
                      sgr_str(p->t, tt->file), tt->line) < 0)
            rc = EX_SOFTWARE;
    }
    for (int i = 1; i < o.nrest && !rc; i++)
        rc = fz_read_cases(o.rest[i], &set);
    sgr_ctx *ctx = rc ? NULL : sgr_ctx_new(p->t);
    cJSON *jfind = o.json ? cJSON_CreateArray() : NULL;
    if (!rc && (!ctx || (o.json && !jfind)))
        rc = EX_SOFTWARE;
    sgm_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.max = (unsigned)max;
    /* abbreviations of every long option the pack's rules and declarations name */
    const char **longopts = NULL;
    size_t nlong = 0;
    if (!rc && sgr_table_longopts_all(p->t) < 0)
        rc = EX_SOFTWARE;
    for (int ch = 0; !rc && ch < 256; ch++) {
        const sgr_longopts *lo = sgr_table_longopts(p->t, (unsigned char)ch);
        if (!lo) {
            rc = EX_SOFTWARE;
            break;
        }
        if (!lo->n)
            continue;
        const char **more = sg_realloc(longopts, sizeof *longopts * (nlong + lo->n));
        if (!more) {
            rc = EX_SOFTWARE;
            break;
        }
        longopts = more;
        for (uint32_t i = 0; i < lo->n; i++)   /* in c's order: strcmp order */
            longopts[nlong++] = sgr_str(p->t, lo->ref[i]);
    }
    if (!rc && nlong) {
        mo.longopts = longopts;
        mo.nlongopts = nlong;
        mo.optkind = fz_optkind;
        mo.ud = (void *)p->t;
    }
    unsigned long nvariants = 0, nfind = 0, nskipped = 0, ncmd_found = 0;
    for (size_t i = 0; i < set.n && !rc; i++) {
        fz_cmd *c = &set.v[i];
        sgr_opts so = { c->cwd ? c->cwd : SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
        sgr_ctx_set_platform(ctx, c->platform);
        sgr_platform pl = sgr_platform_resolve(c->platform);
        mo.fold_case = pl == SGR_PLATFORM_WINDOWS ? 2 : pl == SGR_PLATFORM_MACOS;
        const sgr_result *r = sgr_eval(ctx, c->cmd, strlen(c->cmd), &so);
        uint32_t base = r->decision;
        char base_rule[300];
        snprintf(base_rule, sizeof base_rule, "%s", r->rule_id);
        if (base == SGT_ALLOW) {
            nskipped++;                /* a failing test: `shellgate test` reports it */
            continue;
        }
        sgm_list vl = { 0 };
        if (sgm_variants(c->cmd, &mo, seed, &vl) < 0) {
            sgm_list_free(&vl);
            rc = EX_SOFTWARE;
            break;
        }
        unsigned found_here = 0;
        for (size_t k = 0; k < vl.n; k++) {
            const sgm_variant *v = &vl.v[k];
            nvariants++;
            r = sgr_eval(ctx, v->cmd, strlen(v->cmd), &so);
            if (sgt_strictness(r->decision) >= sgt_strictness(base))
                continue;
            char chain[256];
            fz_chain(chain, sizeof chain, v);
            nfind++;
            if (o.json) {
                cJSON *f = cJSON_CreateObject();
                if (!f || !cJSON_AddItemToArray(jfind, f)) {
                    cJSON_Delete(f);
                    rc = EX_SOFTWARE;
                    break;
                }
                cJSON_AddStringToObject(f, "source", c->where);
                cJSON_AddStringToObject(f, "command", c->cmd);
                cJSON_AddStringToObject(f, "decision", sgr_decision_name(base));
                cJSON_AddStringToObject(f, "rule", base_rule);
                cJSON_AddStringToObject(f, "variant", v->cmd);
                cJSON_AddStringToObject(f, "chain", chain);
                cJSON_AddStringToObject(f, "variant_decision", sgr_decision_name(r->decision));
                cJSON_AddStringToObject(f, "variant_rule", r->rule_id);
                continue;
            }
            if (!found_here++)
                printf("%s: %s\n  %s (%s)\n", c->where, c->cmd, sgr_decision_name(base), base_rule);
            printf("  -> %s (%s) by %s:\n       %s\n", sgr_decision_name(r->decision), r->rule_id, chain, v->cmd);
        }
        ncmd_found += found_here != 0;
        sgm_list_free(&vl);
    }
    if (!rc && o.json) {
        cJSON *j = cJSON_CreateObject();
        if (j) {
            cJSON_AddStringToObject(j, "pack", sgr_str(p->t, p->t->meta->pack_name));
            cJSON_AddNumberToObject(j, "seed", (double)seed);
            cJSON_AddNumberToObject(j, "commands", (double)(set.n - nskipped));
            cJSON_AddNumberToObject(j, "variants", (double)nvariants);
            cJSON_AddItemToObject(j, "findings", jfind);
            jfind = NULL;
            print_json(j);
        } else {
            rc = EX_SOFTWARE;
        }
    } else if (!rc) {
        printf("%s: %lu commands, %lu variants (seed %llu): %lu finding%s", sgr_str(p->t, p->t->meta->pack_name),
               (unsigned long)(set.n - nskipped), nvariants, seed, nfind, nfind == 1 ? "" : "s");
        if (nfind)
            printf(" in %lu command%s", ncmd_found, ncmd_found == 1 ? "" : "s");
        printf("\n");
        if (nskipped)
            printf("(%lu tests the pack already allows were skipped: run `shellgate test`)\n", nskipped);
    }
    if (rc == EX_SOFTWARE)
        fprintf(stderr, "%s: out of memory\n", prog_name);
    cJSON_Delete(jfind);
    sg_free(longopts);
    sgr_ctx_free(ctx);
    fz_free(&set);
    sg_policy_free(p);
    sg_free(av);
    return rc ? rc : nfind ? 1 : 0;
}

/* ---- dump ---------------------------------------------------------------------- */

static void out_stdout(void *ud, const char *text, size_t len)
{
    (void)ud;
    fwrite(text, 1, len, stdout);
}

/* dump --json: the table's header facts and its rules, one object. */
static int dump_json(const sg_policy *p)
{
    const sgr_table *t = p->t;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "pack", sgr_str(t, t->meta->pack_name));
    cJSON_AddNumberToObject(j, "version", t->meta->pack_version);
    cJSON_AddStringToObject(j, "source", p->name);
    cJSON_AddNumberToObject(j, "bytes", (double)p->len);
    cJSON *packs = cJSON_AddArrayToObject(j, "packs");
    for (uint32_t i = 0; i < t->npacks; i++)
        cJSON_AddItemToArray(packs, cJSON_CreateString(sgr_str(t, t->packs[i].name)));
    cJSON_AddNumberToObject(j, "sets", t->nsets);
    cJSON_AddNumberToObject(j, "programs", t->nprogs);
    cJSON_AddNumberToObject(j, "limits", t->nlimits);
    cJSON_AddNumberToObject(j, "hooks", t->nhooks);
    cJSON_AddNumberToObject(j, "tests", t->ntests);
    cJSON *rules = cJSON_AddArrayToObject(j, "rules");
    for (uint32_t i = 0; i < t->nrules; i++) {
        const sgt_rule *r = &t->rules[i];
        cJSON *e = cJSON_CreateObject();
        if (!e || !cJSON_AddItemToArray(rules, e)) {
            cJSON_Delete(e);
            break;
        }
        cJSON_AddStringToObject(e, "id", sgr_str(t, r->id));
        cJSON_AddStringToObject(e, "pack", sgr_str(t, t->packs[r->pack].name));
        cJSON_AddStringToObject(e, "decision", sgr_decision_name(r->decision));
        cJSON_AddNumberToObject(e, "line", r->line);
        cJSON_AddStringToObject(e, "message", sgr_str(t, r->msg));
        cJSON_AddStringToObject(e, "hint", r->hint ? sgr_str(t, r->hint) : "");
    }
    return print_json(j) < 0 ? EX_SOFTWARE : 0;
}

/* `dump POLICY` and `decompile POLICY`: load the one policy named, write it out. */
static int cmd_listing(int argc, char **argv, int decompile)
{
    cli o;
    memset(&o, 0, sizeof o);
    o.verb = decompile ? "decompile" : "dump";
    if (cli_parse_opts(&o, argc, argv) < 0)       /* decompile prints rule text: no --json */
        return EX_USAGE;
    if (o.nrest != 1) {
        if (o.nrest)
            fprintf(stderr, "%s %s: takes one POLICY, not %d\n", prog_name, o.verb, o.nrest);
        else
            cli_missing(o.verb, "the POLICY (a pack name, .rules, .sgt or .sgb)");
        return EX_USAGE;
    }
    o.policy = o.rest[0];
    int st;
    sg_policy *p = cli_load_policy(&o, &st);
    if (!p)
        return st;
    if (o.json) {
        int r = dump_json(p);
        sg_policy_free(p);
        return r;
    }
    char err[256];
    int r = decompile ? sgr_table_decompile(p->t, out_stdout, NULL, err, sizeof err)
                      : sgr_table_dump(p->t, out_stdout, NULL);
    fflush(stdout);
    if (r < 0)
        fprintf(stderr, "%s: %s\n", o.rest[0], err);
    sg_policy_free(p);
    return r < 0 ? EX_DATAERR : 0;
}

int main(int argc, char **argv)
{
    /* cJSON allocates through the funnel too, so a failure test reaches it */
    cJSON_InitHooks(&(cJSON_Hooks){ .malloc_fn = sg_malloc, .free_fn = sg_free });
    if (argc < 2) {
        cli_usage(stderr);
        return EX_USAGE;
    }
    const char *cmd = argv[1];
    /* `CMD --help`: that command's usage, from cli/help.c (`help --help` too) */
    if (cli_is_verb(cmd) && cli_wants_help(argc - 2, argv + 2))
        return cli_verb_usage(stdout, cmd) == 0 ? 0 : EX_USAGE;
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0)
        return cli_version();
    if (strcmp(cmd, "help") == 0)
        return cli_help(argc - 2, argv + 2);
    if (strcmp(cmd, "compile") == 0)
        return cmd_compile(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cli_check(argc - 2, argv + 2);
    if (strcmp(cmd, "explain") == 0)
        return cmd_explain(argc - 2, argv + 2);
    if (strcmp(cmd, "test") == 0)
        return cmd_test(argc - 2, argv + 2);
    if (strcmp(cmd, "dump") == 0)
        return cmd_listing(argc - 2, argv + 2, 0);
    if (strcmp(cmd, "decompile") == 0)
        return cmd_listing(argc - 2, argv + 2, 1);
    if (strcmp(cmd, "fuzz") == 0)
        return cmd_fuzz(argc - 2, argv + 2);
    if (strcmp(cmd, "approve") == 0)
        return cli_approve(argc - 2, argv + 2);
    if (strcmp(cmd, "state") == 0)
        return cli_state(argc - 2, argv + 2);
    if (strcmp(cmd, "approvals") == 0)
        return cli_approvals(argc - 2, argv + 2);
    if (strcmp(cmd, "revoke") == 0)
        return cli_revoke(argc - 2, argv + 2);
    if (strcmp(cmd, "bundle") == 0)
        return sg_cli_bundle(argc - 2, argv + 2);
    if (strcmp(cmd, "keygen") == 0)
        return sg_cli_keygen(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0)
        return cli_run(argc - 2, argv + 2);
    if (strcmp(cmd, "session") == 0)
        return cli_session(argc - 2, argv + 2);
    if (strcmp(cmd, "hook") == 0)
        return cli_hook(argc - 2, argv + 2);
    if (strcmp(cmd, "serve") == 0)
        return cli_serve(argc - 2, argv + 2);
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
        cli_usage(stdout);
        return 0;
    }
    return cli_unknown_verb(cmd);
}
