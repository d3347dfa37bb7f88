/* fuzz_batch.c - `shellgate check --batch` input: JSON lines in, JSON lines out.
 *
 * Input goes through the batch's own loop (sg_batch_run over a memfd, one
 * thread), and each line through lib/batch.c as lib/check.c sg_answer_line does:
 * sg_batch_parse (the fast reader, cJSON for the rest), sgr_eval
 * against the embedded default pack, sg_batch_write (admission is left out: no
 * state, no log).  Each step is held to its reference: the request must be the one
 * cJSON alone reads (sg_batch_parse_cjson), and the answer must be byte for byte
 * cJSON's print of ref_result_json (tests/json_ref.h), one line that parses
 * back.  The process cwd is replaced by --cwd /home/agent/project, as a batch run
 * would give it. */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz.h"
#include "lib/policy.h"
#include "lib/batch.h"
#include "common/alloc.h"
#include "common/utf8.h"
#include "tests/json_ref.h"

static sg_policy *pol;
static sgr_ctx *ctx;
static int devnull = -1;

static void teardown(void)
{
    sgr_ctx_free(ctx);
    sg_policy_free(pol);
    close(devnull);
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
    devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    FUZZ_CHECK(devnull >= 0);
    atexit(teardown);
}

/* the answer written for a line (b->s[start..len)): one line of JSON that parses
 * back, and what cJSON prints for the same object */
static void check_answer(const sg_batch_buf *b, size_t start, cJSON *want_obj)
{
    /* cJSON copies a byte that starts no UTF-8 sequence ($'\xff' decodes to one); the
     * writer puts U+FFFD there, as sg_utf8_repair does (common/utf8.h) */
    char *printed = want_obj ? cJSON_PrintUnformatted(want_obj) : NULL;
    char *want = printed ? sg_utf8_repair(printed, strlen(printed), NULL) : NULL;
    cJSON_free(printed);
    if (want) {
        const char *got = b->s + start;
        size_t wl = strlen(want), gl = b->len - start;
        FUZZ_CHECK(gl == wl + 1 && memcmp(got, want, wl) == 0 && got[wl] == '\n');
        FUZZ_CHECK(memchr(got, '\n', wl) == NULL);
        cJSON *back = cJSON_ParseWithLength(got, gl);          /* what we print parses back */
        FUZZ_CHECK(back != NULL);
        cJSON_Delete(back);
        sg_free(want);
    }
    cJSON_Delete(want_obj);
}

static int same_req(const sg_batch_req *a, const sg_batch_req *b)
{
    if (a->cmd_len != b->cmd_len || memcmp(a->cmd, b->cmd, a->cmd_len) != 0 || (!a->cwd) != (!b->cwd)
        || (a->cwd && strcmp(a->cwd, b->cwd) != 0) || a->nroots != b->nroots)
        return 0;
    for (size_t i = 0; i < a->nroots; i++)
        if (strcmp(a->roots[i], b->roots[i]) != 0)
            return 0;
    return 1;
}

/* one input line, as the CLI's batch_answer handles it (sg_batch_fn): its answer
 * appended to the batch's own output, and checked there */
static int batch_line(void *ud, sgr_ctx *c, char *line, size_t n, sg_batch_buf *bout)
{
    static const char *const default_roots[1];
    (void)ud;
    char *orig = malloc(n + 1);
    if (!orig)
        return -1;
    memcpy(orig, line, n);
    orig[n] = '\0';
    sg_batch_req req, ref;
    const char *err = sg_batch_parse(line, n, &req);
    const char *ref_err = sg_batch_parse_cjson(orig, n, &ref);
    FUZZ_CHECK((err == NULL) == (ref_err == NULL));
    FUZZ_CHECK(!err || strcmp(err, ref_err) == 0);
    size_t start = bout->len;
    int w;
    if (err) {
        FUZZ_CHECK(req.json == NULL);
        w = sg_batch_write_error(bout, err);
        if (w == 0)
            check_answer(bout, start, ref_error_json(err));
    } else {
        FUZZ_CHECK(same_req(&req, &ref));
        FUZZ_CHECK(req.cmd != NULL && req.nroots <= SG_BATCH_MAX_ROOTS && strlen(req.cmd) == req.cmd_len);
        sgr_opts so = { req.cwd ? req.cwd : SG_TEST_CWD, req.nroots ? req.roots : default_roots, req.nroots,
                        SG_TEST_HOME };
        const sgr_result *r = sgr_eval(c, req.cmd, req.cmd_len, &so);
        FUZZ_CHECK(r->decision < SGT_NDECISIONS && r->message && r->rule_id && r->hint);
        for (uint32_t i = 0; r->seg_rule && i < r->cl.nseg; i++) {
            int32_t ru = r->seg_rule[i];
            FUZZ_CHECK(ru == SGR_RULE_DEFAULT || ru == SGR_RULE_DYNAMIC || ru == SGR_RULE_NOTHING
                       || (ru >= 0 && (uint32_t)ru < pol->t->nrules));
        }
        sg_batch_out out = { r->decision, r->rule_id, r->message, r->hint, 0, 0.0, NULL, NULL, NULL };
        w = sg_batch_write(bout, pol->t, r, &out);
        if (w == 0)
            check_answer(bout, start, ref_result_json(pol->t, r, &out));
    }
    sg_batch_req_free(&ref);
    sg_batch_req_free(&req);
    free(orig);
    return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size > (1u << 17))
        return 0;
    int fd = memfd_create("fuzz_batch", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
        close(fd);
        return 0;
    }
    /* the loop users run (one thread: the fuzzer's process stays single-threaded),
     * its answers written to /dev/null */
    sg_batch_io io;
    sg_batch_io_init(&io, fd, devnull);
    FUZZ_CHECK(sg_batch_run(&io, pol->t, ctx, 1, batch_line, NULL) == 0);
    sg_batch_io_close(&io);
    close(fd);
    return 0;
}
