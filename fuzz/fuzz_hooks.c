/* fuzz_hooks.c - the Lua hook boundary (runtime/hook_lua.c) with hostile segment
 * data: the stdlib hooks (no_secrets, protect_branch, time_window) are called on a
 * segment built from the input — argv, options, paths, redirections, assignments,
 * cwd, workspace, line — with NUL bytes, huge words and many fields.
 *
 * Checked: every call ends in one of the four statuses, a decision is allow, ask or
 * deny, the message is a terminated string, and the state keeps answering (the
 * same input twice gives the same status). */
#include <string.h>
#include "fuzz.h"
#include "lib/embedded.h"
#include "compiler/compile.h"
#include "runtime/hook_lua.h"
#include "common/alloc.h"

static sgr_table *table;
static uint8_t *image;
static sgr_hooks *hooks;

static void setup(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    static const char pack[] =
        "pack fuzz_hooks version 1\n"
        "hooks \"std/no_secrets\"\nhooks \"std/protect_branch\"\nhooks \"std/time_window\"\n"
        "hooks limit { instructions 200000 memory 8000000 millis 1000 }\n"
        "default allow \"ok\"\n"
        "a: deny any and lua \"no_secrets\"\n"
        "b: deny any and lua \"protect_branch\"\n"
        "c: deny any and lua \"time_window\"\n";
    sgc_input in = { "fuzz_hooks.rules", pack, sizeof pack - 1 };
    sgc_options o;
    memset(&o, 0, sizeof o);
    o.embedded = sg_embedded_source;
    size_t len = 0;
    FUZZ_CHECK(sgc_compile(&o, &in, 1, &image, &len) == 0);
    char err[256];
    FUZZ_CHECK(sgr_table_load(image, len, &table, err, sizeof err) == 0);
    FUZZ_CHECK(table->nhooks == 3);
    hooks = sgr_hooks_new(table, NULL, err, sizeof err);
    FUZZ_CHECK(hooks != NULL);
}

/* Split data into up to max fields at '\n' (NUL bytes stay inside fields). */
static size_t split(const uint8_t *d, size_t n, sgr_hook_sv *out, size_t max)
{
    size_t k = 0, s = 0;
    for (size_t i = 0; i <= n && k < max; i++)
        if (i == n || d[i] == '\n') {
            out[k].s = (const char *)d + s;
            out[k].len = i - s;
            k++;
            s = i + 1;
        }
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (size > 65536)
        return 0;
    sgr_hook_sv f[256];
    size_t nf = split(data, size, f, 256);
    /* field 0 is the program; the first byte of the input picks how the rest is
     * shared out between argv, options, paths, assignments and redirections */
    size_t cut = nf ? (size_t)(size ? data[0] : 0) % (nf + 1) : 0;
    sgr_hook_redirect rd[8];
    size_t nrd = 0;
    for (size_t i = cut; i < nf && nrd < 8; i++, nrd++) {
        rd[nrd].op = (i & 1) ? ">" : "<";
        rd[nrd].fd = (int)(i % 3) - 1;
        rd[nrd].target = f[i];
    }
    sgr_hook_seg seg;
    memset(&seg, 0, sizeof seg);
    seg.program = nf ? f[0] : (sgr_hook_sv){ "", 0 };
    seg.path = seg.program;
    seg.argv = f;
    seg.argc = cut;
    seg.options = f + (cut > 1 ? 1 : 0);
    seg.noptions = cut > 1 ? cut / 2 : 0;
    seg.subcommand = cut > 1 ? f[1] : (sgr_hook_sv){ NULL, 0 };
    seg.paths = f;
    seg.npaths = nf;
    seg.redirects = rd;
    seg.nredirects = nrd;
    seg.assignments = f + cut;
    seg.nassignments = nf - cut;
    seg.cwd = (sgr_hook_sv){ "/home/agent/project", 19 };
    seg.workspace = &seg.cwd;
    seg.nworkspace = 1;
    seg.line = (sgr_hook_sv){ (const char *)data, size };
    seg.index = (uint32_t)nf;
    for (uint32_t h = 0; h < table->nhooks; h++) {
        sgr_hook_result a, b;
        sgr_hooks_call(hooks, h, &seg, &a);
        FUZZ_CHECK(a.status <= SGR_HOOK_ERROR);
        FUZZ_CHECK(memchr(a.message, '\0', sizeof a.message) != NULL);
        if (a.status == SGR_HOOK_DECIDE)
            FUZZ_CHECK(a.decision < SGT_NDECISIONS);
        sgr_hooks_call(hooks, h, &seg, &b);
        /* the wall clock may differ between calls; everything else must not */
        if (a.status != SGR_HOOK_ERROR && b.status != SGR_HOOK_ERROR)
            FUZZ_CHECK(a.status == b.status);
    }
    return 0;
}
