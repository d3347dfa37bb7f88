/* fuzz_batch.c - `shellgate check --batch` input: JSON lines in, JSON lines out.
 *
 * run_batch and result_json are static in cli/main.c, so this harness MIRRORS
 * them (cJSON_ParseWithLength, the same field validation, sgr_eval against the
 * embedded default pack, the same result object printed and freed) instead of
 * calling them.  Keep it in step with cli/main.c; when the batch handling moves
 * into lib/, call it from here instead.  Stdout is replaced by a null sink, and
 * the process cwd by --cwd /home/agent/project, as a batch run would give it. */
#include <cjson/cJSON.h>
#include <string.h>
#include "fuzz.h"
#include "lib/policy.h"

static sg_policy *pol;
static sgr_ctx *ctx;

static void teardown(void)
{
    sgr_ctx_free(ctx);
    sg_policy_free(pol);
    ctx = NULL;
    pol = NULL;
}

static void setup(void)
{
    if (pol)
        return;
    if (sg_policy_load("default", NULL, &pol) != 0) {
        fprintf(stderr, "fuzz_batch: the embedded default pack does not load\n");
        abort();
    }
    ctx = sgr_ctx_new(pol->t);
    FUZZ_CHECK(ctx != NULL);
    atexit(teardown);
}

/* cli/main.c result_json, verbatim but for the names */
static cJSON *result_json(const sgr_table *t, const sgr_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "decision", sgr_decision_name(r->decision));
    cJSON_AddStringToObject(o, "rule", r->rule_id);
    cJSON_AddStringToObject(o, "message", r->message);
    cJSON_AddStringToObject(o, "hint", r->hint);
    cJSON *segs = cJSON_AddArrayToObject(o, "segments");
    for (uint32_t i = 0; segs && i < r->cl.nseg && r->seg_decision; i++) {
        const sgr_segment *s = &r->cl.seg[i];
        cJSON *so = cJSON_CreateObject();
        if (!so)
            break;
        cJSON *av = cJSON_AddArrayToObject(so, "argv");
        for (uint32_t k = 0; av && k < s->argc; k++)
            cJSON_AddItemToArray(av, cJSON_CreateString(s->argv[k].text));
        cJSON_AddStringToObject(so, "decision", sgr_decision_name(r->seg_decision[i]));
        int32_t ru = r->seg_rule[i];
        FUZZ_CHECK(ru == SGR_RULE_DEFAULT || ru == SGR_RULE_DYNAMIC || ru == SGR_RULE_NOTHING
                   || (ru >= 0 && (uint32_t)ru < t->nrules));
        cJSON_AddStringToObject(so, "rule", ru == SGR_RULE_DEFAULT ? "default" : ru == SGR_RULE_DYNAMIC ? "dynamic"
                                            : ru == SGR_RULE_NOTHING ? "no-command" : sgr_str(t, t->rules[ru].id));
        if (s->nest != SGR_NEST_TOP)
            cJSON_AddStringToObject(so, "nested", sgr_nest_names[s->nest]);
        if (s->flags & SGR_SEG_DYNAMIC)
            cJSON_AddStringToObject(so, "dynamic", s->dyn_reason ? s->dyn_reason : "");
        cJSON_AddItemToArray(segs, so);
    }
    cJSON_AddBoolToObject(o, "rate_limited", 0);
    cJSON_AddNumberToObject(o, "wait_time_seconds", 0);
    return o;
}

/* cli/main.c print_json, writing nowhere; the output must be one line of JSON */
static void print_json(cJSON *o)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    if (s) {
        FUZZ_CHECK(strchr(s, '\n') == NULL);
        cJSON *back = cJSON_Parse(s);            /* what we print parses back */
        FUZZ_CHECK(back != NULL);
        cJSON_Delete(back);
        cJSON_free(s);
    }
    cJSON_Delete(o);
}

/* one input line, as run_batch handles it after stripping the line ending */
static void batch_line(char *line, size_t n)
{
    static const char *const default_roots[1];
    const char *defcwd = SG_TEST_CWD;
    cJSON *in = cJSON_ParseWithLength(line, n);
    const cJSON *cmd = in ? cJSON_GetObjectItemCaseSensitive(in, "cmd") : NULL;
    const cJSON *cwd = in ? cJSON_GetObjectItemCaseSensitive(in, "cwd") : NULL;
    const cJSON *roots = in ? cJSON_GetObjectItemCaseSensitive(in, "roots") : NULL;
    const char *err = NULL;
    if (!in || !cJSON_IsObject(in))
        err = "input line is not a JSON object";
    else if (!cJSON_IsString(cmd))
        err = "\"cmd\" must be a string";
    else if (cwd && !(cJSON_IsString(cwd) && cwd->valuestring[0] == '/'))
        err = "\"cwd\" must be an absolute path";
    else if (roots && !cJSON_IsArray(roots))
        err = "\"roots\" must be a list of absolute paths";
    const char *rootv[64];
    size_t nroots = 0;
    if (!err && roots) {
        const cJSON *it;
        cJSON_ArrayForEach(it, roots) {
            if (!cJSON_IsString(it) || it->valuestring[0] != '/' || nroots == 64) {
                err = "\"roots\" must be a list of at most 64 absolute paths";
                break;
            }
            rootv[nroots++] = it->valuestring;
        }
    }
    if (err) {
        cJSON *eo = cJSON_CreateObject();
        if (eo) {
            cJSON_AddStringToObject(eo, "decision", "deny");
            cJSON_AddStringToObject(eo, "error", err);
        }
        print_json(eo);
        cJSON_Delete(in);
        return;
    }
    sgr_opts so = { cwd ? cwd->valuestring : defcwd, nroots ? rootv : default_roots, nroots, SG_TEST_HOME };
    const sgr_result *r = sgr_eval(ctx, cmd->valuestring, strlen(cmd->valuestring), &so);
    FUZZ_CHECK(r->decision < SGT_NDECISIONS && r->message && r->rule_id && r->hint);
    print_json(result_json(pol->t, r));
    cJSON_Delete(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size > (1u << 17))
        return 0;
    /* split like getline; each line in its own exact-size buffer */
    size_t start = 0;
    while (start < size) {
        const uint8_t *nl = memchr(data + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - data) + 1 : size;
        size_t n = end - start;
        char *line = malloc(n + 1);
        if (!line)
            return 0;
        memcpy(line, data + start, n);
        line[n] = '\0';                          /* getline terminates its buffer */
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n > 0)
            batch_line(line, n);
        free(line);
        start = end;
    }
    return 0;
}
