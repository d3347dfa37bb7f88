/* face_int.h - inside the library face (include/shellgate.h): what a checker, a
 * result and an admission hold.  Only lib/ and its tests include it. */
#ifndef SG_FACE_INT_H
#define SG_FACE_INT_H
#include <limits.h>
#include "lib/policy.h"
#include "lib/batch.h"
#include "admit/admit.h"

struct sg_result {
    const sg_policy *p;
    const sgr_result *r;               /* in the checker's context */
    sga_verdict v;                     /* the decision as admitted (or as checked) */
    sg_batch_buf json;                 /* sg_result_json, built on first use */
    int json_ok;                       /* json holds this result's object */
    /* sg_explain (lib/explain.c): the rules tried, and the strings handed out
     * about segments (copies, freed by the checker's next call) */
    struct sg_tried *tried;
    size_t ntried, captried;
    int traced, trace_oom;
    char **held;
    size_t nheld, capheld;
};
/* Forget what sg_explain and the segment accessors kept (lib/explain.c). */
void sg_result_drop(sg_result *r);

struct sg_checker {
    sgr_ctx *ctx;
    const sg_policy *p;
    char *line;                        /* the command, NUL-terminated */
    size_t linecap;
    char cwd[PATH_MAX];
    sg_result res;
};

struct sg_admission {
    sga *a;
    sga_approval ap;                   /* the last sg_admission_approve's */
    sg_diag_fn diag;
    void *diag_ud;
};

/* The answer to one batch line, as sg_batch writes it: parse, decide (ctx), admit
 * (a NULL: a pure check), write, log. */
typedef struct sg_line_defaults {
    const sg_policy *p;
    sga *a;
    const char *cwd;                   /* NULL: lines without "cwd" are refused */
    const char *const *roots;
    size_t nroots;
    sga_who who;
    sgr_platform platform;
} sg_line_defaults;
int sg_answer_line(const sg_line_defaults *d, sgr_ctx *ctx, char *line, size_t n, sg_batch_buf *out);

#endif
