/* fuzz_eval.c - the evaluator (runtime/eval.c, with the unwrapper) on hostile
 * command lines, against every pack embedded at build time (every pack in rules/:
 * default, and whatever packs exist).
 *
 * Checked for every pack: the decision is allow, ask or deny; the message, rule id
 * and hint are strings; a line the parser refused is denied; per-segment
 * decisions and rules are in range; and evaluating the same line again on the
 * same context gives the same answer (no state leaks from one call to the next). */
#include <string.h>
#include "fuzz.h"
#include "lib/policy.h"
#include "lib/embedded.h"

typedef struct pack {
    sg_policy *p;
    sgr_ctx *ctx;
} pack;

static pack packs[64];
static size_t npacks;

static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    for (size_t i = 0; i < sg_embedded_ntables && npacks < 64; i++) {
        sg_policy *p = NULL;
        if (sg_policy_load(sg_embedded_tables[i].name, NULL, &p) != 0) {
            fprintf(stderr, "fuzz_eval: embedded pack %s does not load\n", sg_embedded_tables[i].name);
            abort();
        }
        sgr_ctx *ctx = sgr_ctx_new(p->t);
        FUZZ_CHECK(ctx != NULL);
        packs[npacks].p = p;
        packs[npacks].ctx = ctx;
        npacks++;
    }
    FUZZ_CHECK(npacks > 0);
}

/* The contexts and policies live for the whole process; free them at exit so
 * LeakSanitizer stays quiet in the replay builds. */
static void teardown(void)
{
    for (size_t i = 0; i < npacks; i++) {
        sgr_ctx_free(packs[i].ctx);
        sg_policy_free(packs[i].p);
    }
    npacks = 0;
}

static void check_result(const sgr_table *t, const sgr_result *r)
{
    FUZZ_CHECK(r->decision < SGT_NDECISIONS);
    FUZZ_CHECK(r->message != NULL && r->rule_id != NULL && r->hint != NULL);
    fuzz_touch(r->message, strlen(r->message));
    fuzz_touch(r->rule_id, strlen(r->rule_id));
    fuzz_touch(r->hint, strlen(r->hint));
    if (r->cl.error || r->oom)
        FUZZ_CHECK(r->decision == SGT_DENY);
    FUZZ_CHECK(r->rule >= SGR_RULE_NOTHING && (r->rule < 0 || (uint32_t)r->rule < t->nrules));
    FUZZ_CHECK(r->seg >= -1 && (r->seg < 0 || (uint32_t)r->seg < r->cl.nseg));
    for (uint32_t i = 0; r->seg_decision && i < r->cl.nseg; i++) {
        FUZZ_CHECK(r->seg_decision[i] < SGT_NDECISIONS);
        int32_t ru = r->seg_rule[i];
        FUZZ_CHECK(ru >= SGR_RULE_NOTHING && (ru < 0 || (uint32_t)ru < t->nrules));
        /* the line is at least as strict as each of its segments */
        FUZZ_CHECK(sgt_strictness(r->decision) >= sgt_strictness(r->seg_decision[i]));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int registered;
    if (!registered) {
        registered = 1;
        atexit(teardown);
    }
    setup();
    if (size > (1u << 17))
        return 0;
    /* exact size, no NUL after the line: the evaluator must go by len */
    char *line = malloc(size ? size : 1);
    if (!line)
        return 0;
    memcpy(line, data, size);
    sgr_opts so = { SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
    for (size_t i = 0; i < npacks; i++) {
        const sgr_table *t = packs[i].p->t;
        const sgr_result *r = sgr_eval(packs[i].ctx, line, size, &so);
        check_result(t, r);
        uint32_t d = r->decision;
        int32_t rule = r->rule, seg = r->seg;
        r = sgr_eval(packs[i].ctx, line, size, &so);
        FUZZ_CHECK(r->decision == d && r->rule == rule && r->seg == seg);
    }
    free(line);
    return 0;
}
