/* test_face.c - the library face (include/shellgate.h), through the public header
 * alone: every function, its errors, and one policy decided from 8 threads at once
 * giving the answers one thread gives.
 * Linked against libshellgate.so: only its exported symbols are reachable.
 * usage: test_face EMBEDDED_DIR  (the build's compiled packs: EMBEDDED_DIR/readonly.sgt)
 * Runs in tests/ (the packs' case files are the thread test's corpus). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <shellgate.h>
#include "check.h"
#include "slurp.h"

#define CWD "/home/agent/project"
#define HOME "/home/agent"

static char tmp[256];
static char diag_text[4096];
static int ndiag;

static void diag(void *ud, const char *text)
{
    (void)ud;
    ndiag++;
    snprintf(diag_text, sizeof diag_text, "%s", text);
}

static void diag_reset(void)
{
    ndiag = 0;
    diag_text[0] = '\0';
}

static const sg_check_options at_project = { CWD, NULL, 0, HOME, NULL, NULL, NULL, SG_PLATFORM_HOST };

static const sg_result *check(sg_checker *c, const char *cmd)
{
    return sg_check(c, cmd, strlen(cmd), &at_project);
}

/* ---- the JSON of a result, field by field against the accessors ------------------- */

static int same_str(const cJSON *o, const char *key, const char *want)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!want)
        return x == NULL;
    return cJSON_IsString(x) && strcmp(x->valuestring, want) == 0;
}

/* The object parses, prints back as itself (cJSON's canonical form, as check
 * --json prints), and says what the accessors say. */
static int json_agrees(const sg_result *r)
{
    size_t len;
    const char *js = sg_result_json(r, &len);
    if (!js || strlen(js) != len)
        return 0;
    cJSON *o = cJSON_ParseWithLength(js, len);
    char *back = o ? cJSON_PrintUnformatted(o) : NULL;
    int ok = back && strcmp(back, js) == 0;
    ok = ok && same_str(o, "decision", sg_decision_name(sg_result_decision(r)))
         && same_str(o, "rule", sg_result_rule(r)) && same_str(o, "message", sg_result_message(r))
         && same_str(o, "hint", sg_result_hint(r))
         && same_str(o, "approval_id", sg_result_approval_id(r)[0] ? sg_result_approval_id(r) : NULL)
         && same_str(o, "approved", sg_result_approved(r)) && same_str(o, "error", sg_result_error(r));
    const cJSON *rl = cJSON_GetObjectItemCaseSensitive(o, "rate_limited");
    const cJSON *wt = cJSON_GetObjectItemCaseSensitive(o, "wait_time_seconds");
    ok = ok && cJSON_IsBool(rl) && cJSON_IsTrue(rl) == (sg_result_rate_limited(r) != 0) && cJSON_IsNumber(wt)
         && wt->valuedouble >= sg_result_wait_seconds(r) - 1e-6 && wt->valuedouble <= sg_result_wait_seconds(r) + 1e-6;
    const cJSON *segs = cJSON_GetObjectItemCaseSensitive(o, "segments");
    ok = ok && cJSON_IsArray(segs) && (size_t)cJSON_GetArraySize(segs) == sg_result_segments(r);
    for (size_t i = 0; ok && i < sg_result_segments(r); i++) {
        const cJSON *s = cJSON_GetArrayItem(segs, (int)i);
        const cJSON *av = cJSON_GetObjectItemCaseSensitive(s, "argv");
        ok = cJSON_IsArray(av) && (size_t)cJSON_GetArraySize(av) == sg_result_segment_argc(r, i)
             && same_str(s, "decision", sg_decision_name(sg_result_segment_decision(r, i)))
             && same_str(s, "rule", sg_result_segment_rule(r, i))
             && same_str(s, "nested", sg_result_segment_nested(r, i))
             && same_str(s, "dynamic", sg_result_segment_dynamic(r, i));
        for (size_t k = 0; ok && k < sg_result_segment_argc(r, i); k++)
            ok = cJSON_IsString(cJSON_GetArrayItem(av, (int)k))
                 && strcmp(cJSON_GetArrayItem(av, (int)k)->valuestring, sg_result_segment_arg(r, i, k)) == 0;
    }
    cJSON_free(back);
    cJSON_Delete(o);
    return ok;
}

/* ---- versions, names ------------------------------------------------------------- */

static void test_version(void)
{
    CHECK_STR(sg_version(), SG_VERSION);
    CHECK(sg_version_number() == SG_VERSION_MAJOR * 10000 + SG_VERSION_MINOR * 100 + SG_VERSION_PATCH);
    CHECK_STR(sg_decision_name(SG_ALLOW), "allow");
    CHECK_STR(sg_decision_name(SG_DENY), "deny");
    CHECK_STR(sg_decision_name(SG_ASK), "ask");
}

/* ---- loading ---------------------------------------------------------------------- */

static const char demo_rules[] =
    "pack facedemo version 7\n"
    "use std/wrappers\n"
    "default deny \"'{program}' is not allowed\" hint \"ask for it\"\n"
    "allow program in { ls cat echo true }\n"
    "ask program git and subcommand push\n"
    "ask program in { bash }\n"
    "find_exec: deny program find and option in { -exec -delete } \"find {option} is refused\"\n"
    "limit twice 2 per 1h when program echo\n"
    "limit crew 2 per 1h per team when program true\n";

static void test_load(const char *embdir)
{
    sg_load_options lo = { NULL, 0, diag, NULL, NULL, NULL };
    sg_policy *p = NULL;
    /* embedded, by name and by default */
    CHECK(sg_policy_load("readonly", &lo, &p) == 0 && p);
    CHECK_STR(sg_policy_name(p), "readonly");
    CHECK(sg_policy_version(p) >= 1);
    sg_policy_free(p);
    CHECK(sg_policy_load(NULL, NULL, &p) == 0 && p);
    CHECK_STR(sg_policy_name(p), "default");
    sg_policy_free(p);
    /* errors: a name nobody embedded, a missing file, each said to the callback */
    diag_reset();
    CHECK(sg_policy_load("no-such-pack", &lo, &p) == SG_ENOINPUT && p == NULL);
    CHECK(ndiag == 1 && strstr(diag_text, "no-such-pack"));
    diag_reset();
    CHECK(sg_policy_load("/nonexistent/x.rules", &lo, &p) == SG_ENOINPUT && p == NULL && ndiag == 1);

    /* a table image in memory: the build's compiled readonly pack */
    char path[600];
    snprintf(path, sizeof path, "%s/readonly.sgt", embdir);
    size_t n;
    char *img = sg_slurp(path, &n);
    CHECK(img != NULL && n > 64);
    if (!img)
        return;
    CHECK(sg_policy_load_table(img, n, "readonly.sgt", &lo, &p) == 0 && p);
    CHECK_STR(sg_policy_name(p), "readonly");
    sg_checker *c = sg_checker_new(p);
    CHECK(c != NULL);
    memset(img, 0, n);                       /* the image was copied */
    const sg_result *r = check(c, "find . -delete");
    CHECK(sg_result_decision(r) == SG_DENY);
    CHECK(sg_result_decision(check(c, "ls -la")) == SG_ALLOW);
    sg_checker_free(c);
    sg_policy_free(p);
    free(img);
    /* corrupt and truncated images are refused, never an empty policy */
    img = sg_slurp(path, &n);
    diag_reset();
    CHECK(sg_policy_load_table(img, n / 2, NULL, &lo, &p) == SG_EDATA && p == NULL && ndiag == 1);
    CHECK(strstr(diag_text, "<memory>") != NULL);
    img[n / 2] ^= 0x40;
    CHECK(sg_policy_load_table(img, n, "x", &lo, &p) == SG_EDATA && p == NULL);
    img[n / 2] ^= 0x40;
    /* a signature requirement refuses what is no bundle */
    sg_load_options signed_only = { NULL, 0, diag, NULL, "/nonexistent/key.pub", NULL };
    diag_reset();
    CHECK(sg_policy_load_table(img, n, "x", &signed_only, &p) == SG_EDATA && p == NULL);
    CHECK(strstr(diag_text, "require-signature") != NULL);
    CHECK(sg_policy_load_rules(demo_rules, strlen(demo_rules), "d", &signed_only, &p) == SG_EDATA && p == NULL);
    free(img);

    /* rule text in memory, with the embedded stdlib behind `use` */
    CHECK(sg_policy_load_rules(demo_rules, strlen(demo_rules), "demo.rules", &lo, &p) == 0 && p);
    CHECK_STR(sg_policy_name(p), "facedemo");
    CHECK(sg_policy_version(p) == 7);
    sg_policy_free(p);
    diag_reset();
    const char bad[] = "pack broken version 1\nallow program in { ls\n";
    CHECK(sg_policy_load_rules(bad, strlen(bad), "broken.rules", &lo, &p) == SG_EDATA && p == NULL);
    CHECK(ndiag >= 1 && strstr(diag_text, "broken.rules") != NULL);
}

/* ---- a result ------------------------------------------------------------------------ */

static void test_result(void)
{
    sg_policy *p = NULL;
    sg_load_options lo = { NULL, 0, diag, NULL, NULL, NULL };
    CHECK(sg_policy_load_rules(demo_rules, strlen(demo_rules), "demo.rules", &lo, &p) == 0);
    sg_checker *c = sg_checker_new(p);
    CHECK(c != NULL);
    if (!c)
        return;
    const sg_result *r = check(c, "ls -la | cat");
    CHECK(sg_result_decision(r) == SG_ALLOW);
    CHECK_STR(sg_result_pack(r), "facedemo");
    CHECK(sg_result_segments(r) == 2);
    CHECK(sg_result_segment_argc(r, 0) == 2);
    CHECK_STR(sg_result_segment_arg(r, 0, 0), "ls");
    CHECK_STR(sg_result_segment_arg(r, 0, 1), "-la");
    CHECK(sg_result_segment_arg(r, 0, 2) == NULL && sg_result_segment_arg(r, 9, 0) == NULL);
    CHECK(sg_result_segment_argc(r, 9) == 0);
    size_t off = 99, len = 99;
    CHECK(sg_result_segment_span(r, 1, &off, &len) == 0 && off == 9 && len == 3);
    CHECK(sg_result_segment_span(r, 2, &off, &len) == -1);
    CHECK(sg_result_segment_parent(r, 0) == -1 && sg_result_segment_nested(r, 0) == NULL);
    CHECK(sg_result_segment_dynamic(r, 1) == NULL);
    CHECK(sg_result_admitted(r) == -1 && sg_result_approved(r) == NULL && sg_result_error(r) == NULL);
    CHECK(sg_result_rate_limited(r) == 0 && sg_result_wait_seconds(r) == 0);
    CHECK_STR(sg_result_approval_id(r), "");
    CHECK(json_agrees(r));

    /* a deny by a named rule, with its message filled */
    r = check(c, "find . -delete");
    CHECK(sg_result_decision(r) == SG_DENY);
    CHECK_STR(sg_result_rule(r), "facedemo:find_exec");
    CHECK_STR(sg_result_message(r), "find -delete is refused");
    CHECK_STR(sg_result_pack(r), "facedemo");
    CHECK(json_agrees(r));
    /* the default, its hint; a wrapper's inner command is a segment of its own */
    r = check(c, "sudo rm -rf /");
    CHECK(sg_result_decision(r) == SG_DENY);
    CHECK_STR(sg_result_rule(r), "default");
    CHECK_STR(sg_result_hint(r), "ask for it");
    CHECK(sg_result_segments(r) >= 2);
    int nested = 0;
    for (size_t i = 0; i < sg_result_segments(r); i++)
        nested += sg_result_segment_parent(r, i) >= 0 && sg_result_segment_nested(r, i) != NULL;
    CHECK(nested >= 1);
    CHECK(json_agrees(r));
    /* what cannot be analysed */
    r = check(c, "$(echo rm) -rf x");
    CHECK(sg_result_decision(r) == SG_DENY);
    int dyn = 0;
    for (size_t i = 0; i < sg_result_segments(r); i++)
        dyn += sg_result_segment_dynamic(r, i) != NULL;
    CHECK(dyn >= 1);
    CHECK(json_agrees(r));

    /* an ask carries its approval id: stable, and bound to the cwd */
    r = check(c, "git push origin main");
    CHECK(sg_result_decision(r) == SG_ASK);
    char id[64];
    snprintf(id, sizeof id, "%s", sg_result_approval_id(r));
    CHECK(strlen(id) == 32 && sg_is_approval_id(id));
    CHECK(json_agrees(r));
    CHECK_STR(sg_result_approval_id(check(c, "git push origin main")), id);
    sg_check_options root = { "/", NULL, 0, HOME, NULL, NULL, NULL, SG_PLATFORM_HOST };
    r = sg_check(c, "git push origin main", 20, &root);
    CHECK(strcmp(sg_result_approval_id(r), id) != 0);
    CHECK(!sg_is_approval_id("xyz") && !sg_is_approval_id(NULL) && !sg_is_approval_id("0123456789abcdef0123456789abcdeg"));

    /* the line need not end in NUL: only len bytes are the command */
    const char buf[] = "ls -la; rm -rf /";
    r = sg_check(c, buf, 6, &at_project);
    CHECK(sg_result_decision(r) == SG_ALLOW && sg_result_segments(r) == 1 && sg_result_segment_argc(r, 0) == 2);
    /* a relative cwd is taken from the process's (tests/) */
    char here[4096];
    CHECK(getcwd(here, sizeof here) != NULL);
    strncat(here, "/packs", sizeof here - strlen(here) - 1);
    sg_check_options dot = { "packs", NULL, 0, HOME, NULL, NULL, NULL, SG_PLATFORM_HOST }, abs = { here, NULL, 0, HOME, NULL, NULL, NULL, SG_PLATFORM_HOST };
    char id2[64];
    snprintf(id2, sizeof id2, "%s", sg_result_approval_id(sg_check(c, "git push x", 10, &abs)));
    CHECK_STR(sg_result_approval_id(sg_check(c, "git push x", 10, &dot)), id2);
    /* a NUL byte in the line is no end of it */
    r = sg_check(c, "ls\0rm -rf /", 11, &at_project);
    CHECK(sg_result_decision(r) == SG_DENY);
    /* NULL options: the process's cwd */
    CHECK(sg_result_decision(sg_check(c, "ls", 2, NULL)) == SG_ALLOW);
    sg_checker_free(c);
    sg_checker_free(NULL);
    sg_policy_free(p);
    sg_policy_free(NULL);
}

/* ---- admission ----------------------------------------------------------------------- */

static int64_t now_ns;
static int64_t test_clock(void *ud)
{
    (void)ud;
    return now_ns;
}

#define SEC 1000000000LL

static void test_admission(void)
{
    sg_policy *p = NULL;
    sg_load_options lo = { NULL, 0, diag, NULL, NULL, NULL };
    CHECK(sg_policy_load_rules(demo_rules, strlen(demo_rules), "demo.rules", &lo, &p) == 0);
    sg_checker *c = sg_checker_new(p);
    char state[400], logf[400], cfg[400];
    snprintf(state, sizeof state, "%s/state", tmp);
    snprintf(logf, sizeof logf, "%s/d.log", tmp);
    snprintf(cfg, sizeof cfg, "%s/cfg", tmp);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    sg_admission_options ao;
    memset(&ao, 0, sizeof ao);
    ao.store = 1;
    ao.state = state;
    ao.log = logf;
    ao.diag = diag;
    ao.clock = test_clock;
    sg_admission *a = NULL;
    CHECK(sg_admission_open(&ao, &a) == 0 && a);
    CHECK_STR(sg_admission_where(a), state);
    sg_check_options who = { CWD, NULL, 0, HOME, "agent-1", "s1", NULL, SG_PLATFORM_HOST };

    /* `limit twice 2 per 1h when program echo`: two admitted, the third waits */
    now_ns = 1000 * SEC;
    const sg_result *r = sg_decide(c, a, "echo a", 6, &who);
    CHECK(sg_result_decision(r) == SG_ALLOW && sg_result_admitted(r) == 1);
    now_ns = 1001 * SEC;
    r = sg_decide(c, a, "echo b", 6, &who);
    CHECK(sg_result_decision(r) == SG_ALLOW && sg_result_admitted(r) == 1);
    now_ns = 1002 * SEC;
    r = sg_decide(c, a, "echo c", 6, &who);
    CHECK(sg_result_decision(r) == SG_DENY && sg_result_rate_limited(r));
    CHECK_STR(sg_result_rule(r), "limit:twice");
    CHECK_STR(sg_result_pack(r), "facedemo");
    CHECK(sg_result_wait_seconds(r) == 3598.0);
    CHECK(json_agrees(r));
    /* a limit scoped by `when` leaves other programs alone; another agent has its own */
    CHECK(sg_result_decision(sg_decide(c, a, "ls", 2, &who)) == SG_ALLOW);
    sg_check_options other = { CWD, NULL, 0, HOME, "agent-2", NULL, NULL, SG_PLATFORM_HOST };
    CHECK(sg_result_decision(sg_decide(c, a, "echo d", 6, &other)) == SG_ALLOW);
    /* `limit crew 2 per 1h per team when program true`: the team's agents share it, another
     * team (and no team: "default") has its own */
    sg_check_options red1 = { CWD, NULL, 0, HOME, "agent-3", NULL, "red", SG_PLATFORM_HOST };
    sg_check_options red2 = { CWD, NULL, 0, HOME, "agent-4", NULL, "red", SG_PLATFORM_HOST };
    sg_check_options blue = { CWD, NULL, 0, HOME, "agent-4", NULL, "blue", SG_PLATFORM_HOST };
    CHECK(sg_result_decision(sg_decide(c, a, "true", 4, &red1)) == SG_ALLOW);
    CHECK(sg_result_decision(sg_decide(c, a, "true", 4, &red2)) == SG_ALLOW);
    r = sg_decide(c, a, "true", 4, &red1);
    CHECK(sg_result_decision(r) == SG_DENY && sg_result_rate_limited(r));
    CHECK_STR(sg_result_rule(r), "limit:crew");
    CHECK(sg_result_decision(sg_decide(c, a, "true", 4, &blue)) == SG_ALLOW);
    CHECK(sg_result_decision(sg_decide(c, a, "true", 4, &other)) == SG_ALLOW);
    /* a deny takes no slot and stays what the policy said */
    r = sg_decide(c, a, "rm x", 4, &who);
    CHECK(sg_result_decision(r) == SG_DENY && sg_result_admitted(r) == 0 && !sg_result_rate_limited(r));

    /* an ask waits; approved once it runs once */
    r = sg_decide(c, a, "git push origin main", 20, &who);
    CHECK(sg_result_decision(r) == SG_ASK && sg_result_admitted(r) == 0);
    char id[64];
    snprintf(id, sizeof id, "%s", sg_result_approval_id(r));
    sg_approval ap;
    CHECK(sg_admission_approve(a, id, SG_APPROVE_ONCE, NULL, &ap) == 0);
    CHECK_STR(ap.cmd, "git push origin main");
    CHECK_STR(ap.cwd, CWD);
    CHECK(ap.saved_to == NULL);
    r = sg_decide(c, a, "git push origin main", 20, &who);
    CHECK(sg_result_decision(r) == SG_ALLOW && sg_result_admitted(r) == 1);
    CHECK_STR(sg_result_approved(r), "once");
    CHECK(strstr(sg_result_message(r), "approved (once)") == sg_result_message(r));
    CHECK(json_agrees(r));
    CHECK(sg_result_decision(sg_decide(c, a, "git push origin main", 20, &who)) == SG_ASK);
    /* for the session it was asked from (found by the store when none is named) */
    sg_check_options s9 = { CWD, NULL, 0, HOME, "agent-1", "s9", NULL, SG_PLATFORM_HOST }, s8 = { CWD, NULL, 0, HOME, "agent-1", "s8", NULL, SG_PLATFORM_HOST };
    r = sg_decide(c, a, "git push origin dev", 19, &s9);
    CHECK(sg_result_decision(r) == SG_ASK);
    snprintf(id, sizeof id, "%s", sg_result_approval_id(r));
    CHECK(sg_admission_approve(a, id, SG_APPROVE_SESSION, NULL, &ap) == 0);
    CHECK_STR(ap.cmd, "git push origin dev");
    for (int i = 0; i < 2; i++) {
        r = sg_decide(c, a, "git push origin dev", 19, &s9);
        CHECK(sg_result_decision(r) == SG_ALLOW);
        CHECK_STR(sg_result_approved(r), "session");
    }
    CHECK(sg_result_decision(sg_decide(c, a, "git push origin dev", 19, &s8)) == SG_ASK);
    /* answers to what is not pending, and to what is no id */
    CHECK(sg_admission_approve(a, "0123456789abcdef0123456789abcdef", SG_APPROVE_ONCE, NULL, &ap) == 1);
    diag_reset();
    CHECK(sg_admission_approve(a, "nope", SG_APPROVE_ONCE, NULL, &ap) == -1 && ndiag == 1);
    /* for good: refused for a shell, saved to the overlay otherwise */
    r = sg_decide(c, a, "bash x.sh", 9, &who);
    CHECK(sg_result_decision(r) == SG_ASK);
    snprintf(id, sizeof id, "%s", sg_result_approval_id(r));
    diag_reset();
    CHECK(sg_admission_approve(a, id, SG_APPROVE_ALWAYS, NULL, &ap) == -1);
    CHECK(strstr(diag_text, "refusing to approve for good") != NULL);
    r = sg_decide(c, a, "git push origin x", 17, &who);
    snprintf(id, sizeof id, "%s", sg_result_approval_id(r));
    CHECK(sg_admission_approve(a, id, SG_APPROVE_ALWAYS, NULL, &ap) == 0);
    CHECK(ap.saved_to && strncmp(ap.saved_to, cfg, strlen(cfg)) == 0);
    r = sg_decide(c, a, "git push origin x", 17, &who);
    CHECK(sg_result_decision(r) == SG_ALLOW);
    CHECK_STR(sg_result_approved(r), "always");
    /* reset: the slots are free again */
    CHECK(sg_admission_reset(a) == 0);
    CHECK(sg_result_decision(sg_decide(c, a, "echo e", 6, &who)) == SG_ALLOW);
    sg_admission_free(a);
    /* the log got a JSON line a decision */
    size_t n;
    char *log = sg_slurp(logf, &n);
    CHECK(log && strstr(log, "\"agent\":\"agent-1\"") && strstr(log, "\"rule\":\"limit:twice\""));
    free(log);

    /* no store: non-interactive makes an ask a deny, nothing is kept */
    memset(&ao, 0, sizeof ao);
    ao.non_interactive = 1;
    ao.diag = diag;
    CHECK(sg_admission_open(&ao, &a) == 0);
    CHECK_STR(sg_admission_where(a), "");
    r = sg_decide(c, a, "git push origin main", 20, &who);
    CHECK(sg_result_decision(r) == SG_DENY && sg_result_admitted(r) == -1);
    CHECK(strstr(sg_result_message(r), "non-interactively") != NULL);
    CHECK(json_agrees(r));
    diag_reset();
    CHECK(sg_admission_reset(a) == -1 && ndiag == 1);
    sg_admission_free(a);
    sg_admission_free(NULL);

    /* a malformed store is an error of the options; lazy defers a broken one to the
     * commands that need it */
    memset(&ao, 0, sizeof ao);
    ao.store = 1;
    ao.rate_store = "http://nope";
    ao.diag = diag;
    diag_reset();
    CHECK(sg_admission_open(&ao, &a) == SG_EUSAGE && a == NULL && ndiag == 1);
    ao.lazy = 1;
    CHECK(sg_admission_open(&ao, &a) == 0 && a);
    sg_policy *plain = NULL;                 /* no limits: an allow needs no store */
    CHECK(sg_policy_load("readonly", NULL, &plain) == 0);
    sg_checker *pc = sg_checker_new(plain);
    r = sg_decide(pc, a, "ls", 2, &who);
    CHECK(sg_result_decision(r) == SG_ALLOW && sg_result_admitted(r) == 1);
    sg_checker_free(pc);
    sg_policy_free(plain);
    r = sg_decide(c, a, "echo x", 6, &who);  /* a policy with limits: refused, and says why */
    CHECK(sg_result_decision(r) == SG_DENY);
    CHECK_STR(sg_result_rule(r), "admission");
    CHECK(sg_result_error(r) && strstr(sg_result_error(r), "redis://"));
    sg_admission_free(a);
    sg_checker_free(c);
    sg_policy_free(p);
}

/* ---- JSON lines ------------------------------------------------------------------------ */

static char *batch_out(const sg_policy *p, sg_admission *a, const char *in, int threads)
{
    char ip[400], op[400];
    snprintf(ip, sizeof ip, "%s/in", tmp);
    snprintf(op, sizeof op, "%s/out", tmp);
    FILE *f = fopen(ip, "w");
    fputs(in, f);
    fclose(f);
    int ifd = open(ip, O_RDONLY), ofd = open(op, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    sg_batch_options bo = { CWD, NULL, 0, NULL, NULL, threads, NULL, SG_PLATFORM_HOST };
    int r = sg_batch(p, a, ifd, ofd, &bo);
    close(ifd);
    close(ofd);
    CHECK(r == 0);
    return sg_slurp(op, NULL);
}

static void test_batch(void)
{
    sg_policy *p = NULL;
    CHECK(sg_policy_load("default", NULL, &p) == 0);
    sg_checker *c = sg_checker_new(p);
    /* each answer is the result's JSON, in input order; bad lines get an error */
    const char *cmds[] = { "ls -la", "rm -rf /", "git push origin main", "cat README.md | wc -l", "sudo ls" };
    char in[4096] = "", want[65536] = "";
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        size_t k = strlen(in);
        snprintf(in + k, sizeof in - k, "{\"cmd\": \"%s\"}\n", cmds[i]);
        const sg_result *r = check(c, cmds[i]);
        k = strlen(want);
        snprintf(want + k, sizeof want - k, "%s\n", sg_result_json(r, NULL));
    }
    strcat(in, "not json\n");
    strcat(want, "{\"decision\":\"deny\",\"error\":\"input line is not a JSON object\"}\n");
    char *got = batch_out(p, NULL, in, 1);
    CHECK(got && strcmp(got, want) == 0);
    if (got && strcmp(got, want) != 0)
        fprintf(stderr, "batch:\n%s\nwant:\n%s\n", got, want);
    free(got);
    /* many lines on four threads answer as one thread does */
    size_t cap = 1 << 20, n = 0;
    char *big = malloc(cap);
    for (int i = 0; i < 3000; i++)
        n += (size_t)snprintf(big + n, cap - n, "{\"cmd\": \"%s %d\"}\n", cmds[i % 5], i);
    char *one = batch_out(p, NULL, big, 1), *four = batch_out(p, NULL, big, 4);
    CHECK(one && four && strcmp(one, four) == 0);
    free(one);
    free(four);
    free(big);
    /* through admission (non-interactive: an ask is a deny) */
    sg_admission_options ao;
    memset(&ao, 0, sizeof ao);
    ao.non_interactive = 1;
    sg_admission *a = NULL;
    CHECK(sg_admission_open(&ao, &a) == 0);
    got = batch_out(p, a, "{\"cmd\": \"git push origin main\"}\n", 0);
    CHECK(got && strstr(got, "\"decision\":\"deny\"") && strstr(got, "non-interactively"));
    free(got);
    sg_admission_free(a);
    sg_checker_free(c);
    sg_policy_free(p);
}

/* ---- one policy, eight threads ------------------------------------------------------------ */

#define NTHREADS 8

typedef struct corpus {
    char **cmd;
    char **want;                       /* one thread's JSON of each */
    size_t n;
} corpus;

typedef struct worker {
    const sg_policy *p;
    const corpus *cp;
    size_t start;
    long mismatches;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    sg_checker *c = sg_checker_new(w->p);
    if (!c) {
        w->mismatches = -1;
        return NULL;
    }
    /* every thread runs the whole corpus, each from its own place in it */
    for (size_t k = 0; k < w->cp->n; k++) {
        size_t i = (w->start + k) % w->cp->n;
        const char *js = sg_result_json(check(c, w->cp->cmd[i]), NULL);
        if (!js || strcmp(js, w->cp->want[i]) != 0)
            w->mismatches++;
    }
    sg_checker_free(c);
    return NULL;
}

/* Every line of the packs' case files (the command part), as a command. */
static void read_corpus(corpus *cp)
{
    const char *files[] = { "packs/default.cases", "packs/readonly.cases", "packs/gaia.cases", "packs/ironclaw.cases" };
    size_t cap = 0;
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char *text = sg_slurp(files[f], NULL);
        CHECK(text != NULL);
        for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
            if (!*line || *line == '#')
                continue;
            char *sep = strstr(line, " ; ");
            if (sep)
                *sep = '\0';
            if (cp->n == cap) {
                cap = cap ? cap * 2 : 1024;
                cp->cmd = realloc(cp->cmd, cap * sizeof *cp->cmd);
            }
            cp->cmd[cp->n++] = strdup(line);
        }
        free(text);
    }
}

static void test_threads(void)
{
    const char *packs[] = { "default", "readonly" };
    corpus cp = { NULL, NULL, 0 };
    read_corpus(&cp);
    CHECK(cp.n > 1000);
    cp.want = calloc(cp.n, sizeof *cp.want);
    for (size_t k = 0; k < sizeof packs / sizeof *packs; k++) {
        sg_policy *p = NULL;
        CHECK(sg_policy_load(packs[k], NULL, &p) == 0);
        sg_checker *c = sg_checker_new(p);
        for (size_t i = 0; i < cp.n; i++) {
            free(cp.want[i]);
            cp.want[i] = strdup(sg_result_json(check(c, cp.cmd[i]), NULL));
        }
        sg_checker_free(c);
        worker w[NTHREADS];
        pthread_t tid[NTHREADS];
        for (int i = 0; i < NTHREADS; i++) {
            w[i] = (worker){ p, &cp, cp.n * (size_t)i / NTHREADS, 0 };
            CHECK(pthread_create(&tid[i], NULL, work, &w[i]) == 0);
        }
        long bad = 0;
        for (int i = 0; i < NTHREADS; i++) {
            pthread_join(tid[i], NULL);
            bad += w[i].mismatches;
        }
        if (bad)
            fprintf(stderr, "%s: %ld answers of %d threads differ from one thread's\n", packs[k], bad, NTHREADS);
        CHECK(bad == 0);
        sg_policy_free(p);
    }
    for (size_t i = 0; i < cp.n; i++) {
        free(cp.cmd[i]);
        free(cp.want[i]);
    }
    free(cp.cmd);
    free(cp.want);
}


/* explain as data: the rules tried per segment and on the line, and each segment
 * as the rules saw it; a plain check after it carries no trace */
static void test_explain(void)
{
    sg_policy *p = NULL;
    CHECK(sg_policy_load_rules(demo_rules, strlen(demo_rules), "demo.rules", NULL, &p) == 0);
    sg_checker *c = sg_checker_new(p);
    const char *line = "ls -la /home/agent/project/src | sudo find . -delete";
    const sg_result *r = sg_explain(c, line, strlen(line), &at_project), *r2;
    CHECK(sg_result_decision(r) == SG_DENY);
    CHECK_STR(sg_result_rule(r), "facedemo:find_exec");
    CHECK(sg_result_rules_tried(r) > 0 && sg_result_rules_tried_all(r));
    size_t find_seg = (size_t)-1;
    for (size_t i = 0; i < sg_result_segments(r); i++)
        if (strcmp(sg_result_segment_program(r, i), "find") == 0)
            find_seg = i;
    CHECK(find_seg != (size_t)-1);
    CHECK_STR(sg_result_segment_program(r, 0), "ls");
    /* the subcommand is the first operand after the options, as `subcommand` sees it */
    CHECK_STR(sg_result_segment_subcommand(r, 0), "/home/agent/project/src");
    r2 = sg_explain(c, "ls -la", 6, &at_project);
    CHECK(sg_result_segment_subcommand(r2, 0) == NULL);
    r = sg_explain(c, line, strlen(line), &at_project);
    /* -la is -l and -a (and the cluster itself) */
    int l = 0, a = 0;
    for (size_t k = 0; k < sg_result_segment_options(r, 0); k++) {
        l |= strcmp(sg_result_segment_option(r, 0, k), "-l") == 0;
        a |= strcmp(sg_result_segment_option(r, 0, k), "-a") == 0;
    }
    CHECK(l && a);
    CHECK(sg_result_segment_option(r, 0, 99) == NULL && sg_result_segment_program(r, 99) == NULL);
    CHECK_STR(sg_result_segment_cwd(r, 0), CWD);
    /* the matched find_exec rule is in the trace, on the find segment, as a deny */
    int found = 0;
    for (size_t k = 0; k < sg_result_rules_tried(r); k++) {
        sg_rule_tried t;
        CHECK(sg_result_rule_tried(r, k, &t) == 0);
        if (t.matched && strcmp(t.rule, "facedemo:find_exec") == 0) {
            found = 1;
            CHECK(t.segment == (long)find_seg && t.decision == SG_DENY);
            CHECK_STR(t.pack, "facedemo");
        }
    }
    CHECK(found);
    sg_rule_tried t;
    CHECK(sg_result_rule_tried(r, sg_result_rules_tried(r), &t) == -1);
    /* git push: the subcommand as the rules saw it */
    r = sg_explain(c, "git -C sub push origin", 22, &at_project);
    CHECK(sg_result_decision(r) == SG_ASK);
    CHECK_STR(sg_result_segment_subcommand(r, 0), "push");
    /* paths the evaluation resolved are absolute */
    r = sg_explain(c, "cat ../x", 8, &at_project);
    for (size_t k = 0; k < sg_result_segment_paths(r, 0); k++)
        CHECK(sg_result_segment_path(r, 0, k)[0] == '/');
    /* the same answer as sg_check, and no trace after one */
    r = check(c, "ls -la");
    CHECK(sg_result_rules_tried(r) == 0 && !sg_result_rules_tried_all(r));
    CHECK(sg_result_rule_tried(r, 0, &t) == -1);
    sg_checker_free(c);
    sg_policy_free(p);
    /* the embedded packs, by name */
    int have_readonly = 0;
    size_t n = 0;
    for (; sg_embedded_pack(n); n++) {
        have_readonly |= strcmp(sg_embedded_pack(n), "readonly") == 0;
        CHECK(strncmp(sg_embedded_pack(n), "std/", 4) != 0);
        sg_policy *q = NULL;
        CHECK(sg_policy_load(sg_embedded_pack(n), NULL, &q) == 0 && q);
        sg_policy_free(q);
    }
    CHECK(n >= 4 && have_readonly);
}

static int nlisted, listed_pending, listed_session;
static char listed_cmd[256];

static void on_entry(void *ud, const sg_approval_entry *e)
{
    (void)ud;
    nlisted++;
    CHECK(sg_is_approval_id(e->id));
    if (e->scope == 0) {
        listed_pending++;
        snprintf(listed_cmd, sizeof listed_cmd, "%s", e->cmd);
        CHECK(e->created > 0);
    } else if (e->scope == SG_APPROVE_SESSION) {
        listed_session++;
        CHECK_STR(e->session, "s9");
    }
}

/* approvals listed and revoked: a pending ask, then a granted one, then none */
static void test_approvals(void)
{
    sg_policy *p = NULL;
    CHECK(sg_policy_load_rules(demo_rules, strlen(demo_rules), "demo.rules", NULL, &p) == 0);
    sg_checker *c = sg_checker_new(p);
    char state[400], cfg[400];
    snprintf(state, sizeof state, "%s/state-approvals", tmp);
    snprintf(cfg, sizeof cfg, "%s/cfg-approvals", tmp);
    setenv("XDG_CONFIG_HOME", cfg, 1);
    sg_admission_options ao;
    memset(&ao, 0, sizeof ao);
    ao.store = 1;
    ao.state = state;
    ao.diag = diag;
    sg_admission *a = NULL;
    CHECK(sg_admission_open(&ao, &a) == 0 && a);
    sg_check_options who = { CWD, NULL, 0, HOME, "agent-9", "s9", NULL, SG_PLATFORM_HOST };
    const sg_result *r = sg_decide(c, a, "git push origin", 15, &who);
    CHECK(sg_result_decision(r) == SG_ASK);
    char id[64];
    snprintf(id, sizeof id, "%s", sg_result_approval_id(r));
    nlisted = listed_pending = listed_session = 0;
    CHECK(sg_admission_list(a, on_entry, NULL) == 0);
    CHECK(nlisted == 1 && listed_pending == 1);
    CHECK_STR(listed_cmd, "git push origin");
    sg_approval ap;
    CHECK(sg_admission_approve(a, id, SG_APPROVE_SESSION, "s9", &ap) == 0);
    nlisted = listed_pending = listed_session = 0;
    CHECK(sg_admission_list(a, on_entry, NULL) == 0);
    CHECK(nlisted == 1 && listed_session == 1 && listed_pending == 0);
    CHECK(sg_result_decision(sg_decide(c, a, "git push origin", 15, &who)) == SG_ALLOW);
    /* revoked: the approval is gone and the command asks again */
    CHECK(sg_admission_revoke(a, id) == 0);
    CHECK(sg_admission_revoke(a, id) == 1);
    nlisted = 0;
    CHECK(sg_admission_list(a, on_entry, NULL) == 0);
    CHECK(nlisted == 0);
    CHECK(sg_result_decision(sg_decide(c, a, "git push origin", 15, &who)) == SG_ASK);
    diag_reset();
    CHECK(sg_admission_revoke(a, "not-an-id") == -1 && ndiag == 1);
    sg_admission_free(a);
    sg_checker_free(c);
    sg_policy_free(p);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_face EMBEDDED_DIR\n");
        return 64;
    }
    const char *t = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/sg_face_XXXXXX", t && t[0] == '/' && strlen(t) < 100 ? t : "/tmp");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    test_version();
    test_load(argv[1]);
    test_result();
    test_admission();
    test_explain();
    test_approvals();
    test_batch();
    test_threads();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return sg_test_summary();
}
