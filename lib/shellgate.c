/* shellgate.c - the library face (include/shellgate.h): loading policies (the one
 * place besides the CLI where compiler and runtime meet), versions, inline tests.
 * Deciding is lib/check.c, admission lib/admission.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "policy.h"
#include "embedded.h"
#include "bundle.h"
#include "compiler/compile.h"
#include "common/alloc.h"

const sg_embedded *sg_embedded_find(const sg_embedded *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

int sg_embedded_source(void *ud, const char *name, const char **text, size_t *len)
{
    (void)ud;
    const sg_embedded *e = sg_embedded_find(sg_embedded_sources, sg_embedded_nsources, name);
    if (!e)
        return 0;
    *text = (const char *)e->data;
    *len = e->len;
    return 1;
}

SG_API const char *sg_embedded_pack(size_t i)
{
    for (size_t k = 0; k < sg_embedded_nsources; k++)
        if (strncmp(sg_embedded_sources[k].name, "std/", 4) != 0 && i-- == 0)
            return sg_embedded_sources[k].name;
    return NULL;
}

int sg_compile_files(const char *const *files, size_t n, const sg_load_options *opt,
                     uint8_t **out, size_t *len)
{
    return sg_compile_files_keep(files, n, opt, out, len, NULL);
}

int sg_compile_files_keep(const char *const *files, size_t n, const sg_load_options *opt,
                          uint8_t **out, size_t *len, sgc_checked **keep)
{
    sgc_input in[64];
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++) {
        in[i].name = files[i];
        in[i].text = NULL;
        in[i].len = 0;
        if (access(files[i], R_OK) != 0) {
            if (opt && opt->diag) {
                char msg[600];
                snprintf(msg, sizeof msg, "%s: error: cannot read: %s", files[i], strerror(errno));
                opt->diag(opt->diag_ud, msg);
            }
            return 66;
        }
    }
    sgc_options co;
    memset(&co, 0, sizeof co);
    co.include_dirs = opt ? opt->include_dirs : NULL;
    co.ninclude = opt ? opt->ninclude : 0;
    co.embedded = sg_embedded_source;
    co.diag = opt ? opt->diag : NULL;
    co.diag_ud = opt ? opt->diag_ud : NULL;
    int r = keep ? sgc_compile_checked(&co, in, n, out, len, keep) : sgc_compile(&co, in, n, out, len);
    return r < 0 ? 70 : r > 0 ? 65 : 0;
}

/* Compile an embedded pack's source (when the binary carries no table for it). */
static int compile_embedded(const sg_embedded *e, const sg_load_options *opt, uint8_t **out, size_t *len)
{
    sgc_input in = { e->name, (const char *)e->data, e->len };
    char nm[300];
    snprintf(nm, sizeof nm, "<%s>", e->name);
    in.name = nm;
    sgc_options co;
    memset(&co, 0, sizeof co);
    co.embedded = sg_embedded_source;
    co.diag = opt ? opt->diag : NULL;
    co.diag_ud = opt ? opt->diag_ud : NULL;
    int r = sgc_compile(&co, &in, 1, out, len);
    return r < 0 ? 70 : r > 0 ? 65 : 0;
}

static int policy_from_table(const uint8_t *bytes, size_t len, unsigned flags, uint8_t *owned, const char *name,
                             sg_policy **out, char *err, size_t errlen);

int sg_policy_from_table(const uint8_t *bytes, size_t len, uint8_t *owned, const char *name,
                         sg_policy **out, char *err, size_t errlen)
{
    return policy_from_table(bytes, len, 0, owned, name, out, err, errlen);
}

static int policy_from_table(const uint8_t *bytes, size_t len, unsigned flags, uint8_t *owned, const char *name,
                             sg_policy **out, char *err, size_t errlen)
{
    sg_policy *p = sg_calloc(1, sizeof *p);
    if (!p) {
        sg_free(owned);
        snprintf(err, errlen, "out of memory");
        return 70;
    }
    p->owned = owned;
    p->bytes = bytes;
    p->len = len;
    p->name = sg_strndup(name, strlen(name));
    if (!p->name || sgr_table_load_flags(bytes, len, flags, &p->t, err, errlen) != 0) {
        int status = p->name ? 65 : 70;
        if (!p->name)
            snprintf(err, errlen, "out of memory");
        sg_policy_free(p);
        return status;
    }
    *out = p;
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static void diag_msg(const sg_load_options *opt, const char *fmt, const char *a, const char *b)
{
    if (opt && opt->diag) {
        char msg[1200];
        snprintf(msg, sizeof msg, fmt, a, b);
        opt->diag(opt->diag_ud, msg);
    }
}

/* A bundle (bundle.h): verified against the trusted key and the scope the options
 * give, then its table loaded like any other. */
static int load_bundle(const char *path, const sg_load_options *opt, sg_policy **out)
{
    char err[800];
    uint8_t pk[32];
    sg_bundle_trust tr = { NULL, opt && opt->scope ? opt->scope : "" };
    if (opt && opt->require_signature) {
        if (sg_key_read_public(opt->require_signature, pk, err, sizeof err) < 0) {
            diag_msg(opt, "shellgate: error: --require-signature: %s%s", err, "");
            return 66;
        }
        tr.public_key = pk;
    }
    uint8_t *bytes;
    size_t len;
    if (sg_read_file(path, (size_t)1 << 30, &bytes, &len) < 0) {
        diag_msg(opt, "%s: error: cannot read: %s", path, strerror(errno));
        return errno == ENOMEM ? 70 : 66;
    }
    sg_bundle_info *info = sg_malloc(sizeof *info);
    if (!info) {
        sg_free(bytes);
        return 70;
    }
    int r = sg_bundle_open(bytes, len, &tr, info, err, sizeof err);
    const uint8_t *table = info->table;
    size_t tlen = info->table_size;
    sg_free(info);
    if (r < 0) {
        diag_msg(opt, "%s: error: %s", path, err);
        sg_free(bytes);
        return 65;
    }
    r = sg_policy_from_table(table, tlen, bytes, path, out, err, sizeof err);
    if (r)
        diag_msg(opt, "%s: error: %s", path, err);
    return r;
}

SG_API int sg_policy_load(const char *policy, const sg_load_options *opt, sg_policy **out)
{
    char err[512];
    uint8_t *bytes = NULL;
    size_t len = 0;
    *out = NULL;
    if (!policy)
        policy = "default";
    if (ends_with(policy, ".sgb"))
        return load_bundle(policy, opt, out);
    if (opt && opt->require_signature) {
        /* a signature requirement is only as good as the refusal of everything else */
        diag_msg(opt, "%s: error: only a bundle signed by the key in %s is accepted (--require-signature), and this "
                 "policy is not a bundle (.sgb)", policy, opt->require_signature);
        return 65;
    }
    if (!strchr(policy, '/') && !ends_with(policy, ".rules") && !ends_with(policy, ".sgt")) {
        const sg_embedded *t = sg_embedded_find(sg_embedded_tables, sg_embedded_ntables, policy);
        if (t) {
            /* the build checked this very image in full (cli/CMakeLists.txt) */
            int r = policy_from_table(t->data, t->len, SGR_LOAD_TRUSTED, NULL, policy, out, err, sizeof err);
            if (r)
                diag_msg(opt, "embedded pack '%s': %s", policy, err);
            return r;
        }
        const sg_embedded *s = sg_embedded_find(sg_embedded_sources, sg_embedded_nsources, policy);
        if (!s || strncmp(policy, "std/", 4) == 0) {
            diag_msg(opt, "shellgate: error: no pack named '%s' (give a .rules or .sgt file, or an embedded pack name%s)",
                     policy, "");
            return 66;
        }
        int r = compile_embedded(s, opt, &bytes, &len);
        if (r)
            return r;
    } else if (ends_with(policy, ".sgt")) {
        FILE *f = fopen(policy, "rb");
        if (!f) {
            diag_msg(opt, "%s: error: cannot read: %s", policy, strerror(errno));
            return 66;
        }
        size_t cap = 1 << 16;
        bytes = sg_malloc(cap);
        while (bytes) {
            size_t k = fread(bytes + len, 1, cap - len, f);
            len += k;
            if (len < cap)
                break;
            if (cap >= (size_t)1 << 31) {
                sg_free(bytes);
                bytes = NULL;
                break;
            }
            uint8_t *nb = sg_realloc(bytes, cap * 2);
            if (!nb) {
                sg_free(bytes);
                bytes = NULL;
                break;
            }
            bytes = nb;
            cap *= 2;
        }
        int ferr = ferror(f);
        fclose(f);
        if (!bytes || ferr) {
            sg_free(bytes);
            diag_msg(opt, "%s: error: cannot read the table%s", policy, "");
            return bytes ? 66 : 70;
        }
    } else {
        const char *files[1] = { policy };
        int r = sg_compile_files(files, 1, opt, &bytes, &len);
        if (r)
            return r;
    }
    int r = sg_policy_from_table(bytes, len, bytes, policy, out, err, sizeof err);
    if (r)
        diag_msg(opt, "%s: error: %s", policy, err);
    return r;
}

SG_API void sg_policy_free(sg_policy *p)
{
    if (!p)
        return;
    sgr_table_free(p->t);
    sg_free(p->owned);
    sg_free(p->name);
    sg_free(p);
}

SG_API const char *sg_policy_name(const sg_policy *p)
{
    return sgr_str(p->t, p->t->meta->pack_name);
}

SG_API unsigned sg_policy_version(const sg_policy *p)
{
    return p->t->meta->pack_version;
}

/* Only a bundle file can carry a signature: a policy from memory is refused when
 * one is required. */
static int refuse_unsigned(const char *name, const sg_load_options *opt)
{
    if (!opt || !opt->require_signature)
        return 0;
    diag_msg(opt, "%s: error: only a bundle signed by the key in %s is accepted (--require-signature), and a "
             "policy in memory is not a bundle", name, opt->require_signature);
    return 65;
}

SG_API int sg_policy_load_table(const void *image, size_t len, const char *name, const sg_load_options *opt,
                                sg_policy **out)
{
    *out = NULL;
    if (!name)
        name = "<memory>";
    int r = refuse_unsigned(name, opt);
    if (r)
        return r;
    uint8_t *bytes = sg_malloc(len ? len : 1);
    if (!bytes) {
        diag_msg(opt, "%s: error: %s", name, "out of memory");
        return 70;
    }
    memcpy(bytes, image, len);
    char err[512];
    r = sg_policy_from_table(bytes, len, bytes, name, out, err, sizeof err);
    if (r)
        diag_msg(opt, "%s: error: %s", name, err);
    return r;
}

SG_API int sg_policy_load_rules(const char *text, size_t len, const char *name, const sg_load_options *opt,
                                sg_policy **out)
{
    *out = NULL;
    if (!name)
        name = "<memory>";
    int r = refuse_unsigned(name, opt);
    if (r)
        return r;
    sgc_input in = { name, text ? text : "", text ? len : 0 };   /* text NULL would read a file */
    sgc_options co;
    memset(&co, 0, sizeof co);
    co.include_dirs = opt ? opt->include_dirs : NULL;
    co.ninclude = opt ? opt->ninclude : 0;
    co.embedded = sg_embedded_source;
    co.diag = opt ? opt->diag : NULL;
    co.diag_ud = opt ? opt->diag_ud : NULL;
    uint8_t *bytes = NULL;
    size_t blen = 0;
    r = sgc_compile(&co, &in, 1, &bytes, &blen);
    if (r)
        return r < 0 ? 70 : 65;
    char err[512];
    r = sg_policy_from_table(bytes, blen, bytes, name, out, err, sizeof err);
    if (r)
        diag_msg(opt, "%s: error: %s", name, err);
    return r;
}

SG_API const char *sg_version(void)
{
    return SG_VERSION;
}

SG_API int sg_version_number(void)
{
    return SG_VERSION_MAJOR * 10000 + SG_VERSION_MINOR * 100 + SG_VERSION_PATCH;
}

SG_API const char *sg_decision_name(sg_decision d)
{
    return sgr_decision_name((uint32_t)d);
}

int sg_parse_decision(const char *s, size_t n)
{
    if (n == 5 && memcmp(s, "allow", 5) == 0)
        return SGT_ALLOW;
    if (n == 4 && memcmp(s, "deny", 4) == 0)
        return SGT_DENY;
    if (n == 3 && memcmp(s, "ask", 3) == 0)
        return SGT_ASK;
    return -1;
}

int sg_run_case(sgr_ctx *ctx, const sgr_table *t, const char *file, unsigned line, const char *cmd,
                uint32_t want, const char *want_rule, const char *cwd, sg_test_report_fn fn, void *ud)
{
    (void)t;
    sgr_opts so = { cwd && *cwd ? cwd : SG_TEST_CWD, NULL, 0, SG_TEST_HOME };
    const sgr_result *r = sgr_eval(ctx, cmd, strlen(cmd), &so);
    /* a rule is named by its full id or, within its pack, by its bare label */
    int rule_ok = !want_rule || !*want_rule || strcmp(want_rule, r->rule_id) == 0;
    if (!rule_ok && !strchr(want_rule, ':')) {
        const char *colon = strrchr(r->rule_id, ':');
        rule_ok = colon && strcmp(colon + 1, want_rule) == 0;
    }
    int ok = r->decision == want && rule_ok;
    if (!ok && fn)
        fn(ud, file, line, cmd, sgr_decision_name(want), want_rule, sgr_decision_name(r->decision),
           r->rule_id, r->message);
    return ok;
}

void sg_run_inline_tests(const sg_policy *p, sgr_platform plat, sg_test_report_fn fn, void *ud, unsigned *pass,
                         unsigned *fail)
{
    sgr_ctx *ctx = sgr_ctx_new(p->t);
    if (!ctx) {
        (*fail)++;
        return;
    }
    sgr_ctx_set_platform(ctx, plat);
    for (uint32_t i = 0; i < p->t->ntests; i++) {
        const sgt_test *tt = &p->t->tests[i];
        const char *rule = tt->rule ? sgr_str(p->t, tt->rule) : NULL;
        if (sg_run_case(ctx, p->t, sgr_str(p->t, tt->file), tt->line, sgr_str(p->t, tt->command),
                        tt->decision, rule, sgr_str(p->t, tt->cwd), fn, ud))
            (*pass)++;
        else
            (*fail)++;
    }
    sgr_ctx_free(ctx);
}
