/* json_ref.h - the reference for the one writer of a decision's JSON
 * (lib/batch.c sg_batch_write): the same object built as a cJSON tree, whose
 * cJSON_PrintUnformatted the writer must match byte for byte.  Test machinery,
 * kept out of the product: tests/test_batch.c and fuzz/fuzz_batch.c include it. */
#ifndef SG_TEST_JSON_REF_H
#define SG_TEST_JSON_REF_H
#include <cjson/cJSON.h>
#include "lib/batch.h"

/* The verdict v on the command r decided under table t, with r's segments; NULL
 * when memory runs out. */
static inline cJSON *ref_result_json(const sgr_table *t, const sgr_result *r, const sg_batch_out *v)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "decision", sgr_decision_name(v->decision));
    cJSON_AddStringToObject(o, "rule", v->rule);
    cJSON_AddStringToObject(o, "message", v->message);
    cJSON_AddStringToObject(o, "hint", v->hint);
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
        cJSON_AddStringToObject(so, "rule", sgr_rule_name(t, r->seg_rule[i]));
        if (s->nest != SGR_NEST_TOP)
            cJSON_AddStringToObject(so, "nested", sgr_nest_names[s->nest]);
        if (s->flags & SGR_SEG_DYNAMIC)
            cJSON_AddStringToObject(so, "dynamic", s->dyn_reason ? s->dyn_reason : "");
        cJSON_AddItemToArray(segs, so);
    }
    cJSON_AddBoolToObject(o, "rate_limited", v->rate_limited);
    /* to the microsecond, so the printed figure is the exact wait, not float noise */
    cJSON_AddNumberToObject(o, "wait_time_seconds", (double)(long long)(v->wait_s * 1e6 + 0.5) / 1e6);
    if (v->approval_id && v->approval_id[0])
        cJSON_AddStringToObject(o, "approval_id", v->approval_id);
    if (v->approved)
        cJSON_AddStringToObject(o, "approved", v->approved);
    if (v->error)
        cJSON_AddStringToObject(o, "error", v->error);
    return o;
}

/* {"decision": "deny", "error": err}; NULL when memory runs out. */
static inline cJSON *ref_error_json(const char *err)
{
    cJSON *eo = cJSON_CreateObject();
    if (eo) {
        cJSON_AddStringToObject(eo, "decision", "deny");
        cJSON_AddStringToObject(eo, "error", err);
    }
    return eo;
}

#endif
