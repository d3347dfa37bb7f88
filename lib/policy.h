/* policy.h - what the CLI needs of a loaded policy beyond the public face: the
 * table itself, and running inline tests and case lines. */
#ifndef SG_POLICY_H
#define SG_POLICY_H
#include "include/shellgate.h"
#include "runtime/eval.h"

struct sg_policy {
    uint8_t *owned;                    /* compiled or read table bytes (sg_malloc) */
    const uint8_t *bytes;
    size_t len;
    sgr_table *t;
    char *name;
};

/* The cwd and home inline tests run in, so their paths are machine-independent. */
#define SG_TEST_CWD  "/home/agent/project"
#define SG_TEST_HOME "/home/agent"

/* Compile rule sources into a table (embedded stdlib available to `use`).  Returns
 * 0, 65 bad pack, 66 unreadable, 70 OOM; *out and *len sg_malloc'd on success. */
int sg_compile_files(const char *const *files, size_t n, const sg_load_options *opt,
                     uint8_t **out, size_t *len);
struct sgc_checked;
/* sg_compile_files that also hands back the compiled sources (compile.h
 * sgc_checked_source) in *keep, freed with sgc_checked_free; keep NULL: none. */
int sg_compile_files_keep(const char *const *files, size_t n, const sg_load_options *opt,
                          uint8_t **out, size_t *len, struct sgc_checked **keep);
/* Wrap verified table bytes (takes ownership of `owned` when non-NULL). */
int sg_policy_from_table(const uint8_t *bytes, size_t len, uint8_t *owned, const char *name,
                         sg_policy **out, char *err, size_t errlen);

typedef void (*sg_test_report_fn)(void *ud, const char *file, unsigned line, const char *cmd,
                                   const char *want, const char *want_rule, const char *got,
                                   const char *got_rule, const char *message);
/* Run one expectation; returns 1 pass, 0 fail (reported through fn). */
int sg_run_case(sgr_ctx *ctx, const sgr_table *t, const char *file, unsigned line, const char *cmd,
                uint32_t want, const char *want_rule, const char *cwd, sg_test_report_fn fn, void *ud);
/* Run a table's inline tests for platform plat (unwrap.h); adds to *pass and *fail. */
void sg_run_inline_tests(const sg_policy *p, sgr_platform plat, sg_test_report_fn fn, void *ud, unsigned *pass,
                         unsigned *fail);
/* Parse "allow"/"ask"/"deny"; -1 otherwise. */
int sg_parse_decision(const char *s, size_t n);

#endif
