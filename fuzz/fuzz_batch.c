/* fuzz_batch.c - `shellgate check --batch` input: JSON lines in, JSON lines out.
 *
 * Each line goes through lib/batch.c, as in cli/main.c run_batch: sg_batch_parse,
 * sgr_eval against the embedded default pack, sg_batch_result_json (admission is
 * left out: no state, no log), printed and freed.  Stdout is replaced by a check
 * that the output is one line of JSON that parses back, and the process cwd by
 * --cwd /home/agent/project, as a batch run would give it. */
#include <cjson/cJSON.h>
#include <string.h>
#include "fuzz.h"
#include "lib/policy.h"
#include "lib/batch.h"

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

/* print_json of cli/main.c, writing nowhere; the output must be one line of JSON */
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
    sg_batch_req req;
    const char *err = sg_batch_parse(line, n, &req);
    if (err) {
        FUZZ_CHECK(req.json == NULL);
        print_json(sg_batch_error_json(err));
        return;
    }
    FUZZ_CHECK(req.cmd != NULL && req.nroots <= SG_BATCH_MAX_ROOTS);
    sgr_opts so = { req.cwd ? req.cwd : SG_TEST_CWD, req.nroots ? req.roots : default_roots, req.nroots,
                    SG_TEST_HOME };
    const sgr_result *r = sgr_eval(ctx, req.cmd, strlen(req.cmd), &so);
    FUZZ_CHECK(r->decision < SGT_NDECISIONS && r->message && r->rule_id && r->hint);
    for (uint32_t i = 0; r->seg_rule && i < r->cl.nseg; i++) {
        int32_t ru = r->seg_rule[i];
        FUZZ_CHECK(ru == SGR_RULE_DEFAULT || ru == SGR_RULE_DYNAMIC || ru == SGR_RULE_NOTHING
                   || (ru >= 0 && (uint32_t)ru < pol->t->nrules));
    }
    sg_batch_out out = { r->decision, r->rule_id, r->message, r->hint, 0, 0.0, NULL, NULL, NULL };
    print_json(sg_batch_result_json(pol->t, r, &out));
    sg_batch_req_free(&req);
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
