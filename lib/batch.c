/* batch.c - the JSON face of check --batch and check --json (batch.h). */
#include <string.h>
#include "batch.h"

/* Does the JSON text hold a NUL character: a raw one, or a \u0000 escape (the
 * backslash itself not escaped)?  cJSON ends its strings at a NUL, so the command
 * evaluated would not be the command sent. */
static int has_nul(const char *s, size_t n)
{
    if (memchr(s, '\0', n))
        return 1;
    for (size_t i = 0; i + 6 <= n; i++) {
        if (s[i] != '\\')
            continue;
        if (s[i + 1] == 'u' && s[i + 2] == '0' && s[i + 3] == '0' && s[i + 4] == '0' && s[i + 5] == '0')
            return 1;
        i++;                                    /* an escaped character, maybe '\\' */
    }
    return 0;
}

const char *sg_batch_parse(const char *line, size_t n, sg_batch_req *req)
{
    memset(req, 0, sizeof *req);
    if (has_nul(line, n))
        return "a NUL character in the input line: the command cannot be checked as sent";
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
    if (!err && roots) {
        const cJSON *it;
        cJSON_ArrayForEach(it, roots) {
            if (!cJSON_IsString(it) || it->valuestring[0] != '/' || req->nroots == SG_BATCH_MAX_ROOTS) {
                err = "\"roots\" must be a list of at most 64 absolute paths";
                break;
            }
            req->roots[req->nroots++] = it->valuestring;
        }
    }
    if (err) {
        cJSON_Delete(in);
        memset(req, 0, sizeof *req);
        return err;
    }
    req->json = in;
    req->cmd = cmd->valuestring;
    req->cwd = cwd ? cwd->valuestring : NULL;
    return NULL;
}

void sg_batch_req_free(sg_batch_req *req)
{
    cJSON_Delete(req->json);
    memset(req, 0, sizeof *req);
}

cJSON *sg_batch_result_json(const sgr_table *t, const sgr_result *r, const sg_batch_out *v)
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

cJSON *sg_batch_error_json(const char *err)
{
    cJSON *eo = cJSON_CreateObject();
    if (eo) {
        cJSON_AddStringToObject(eo, "decision", "deny");
        cJSON_AddStringToObject(eo, "error", err);
    }
    return eo;
}
