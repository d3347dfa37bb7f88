/* compile.c - the compiler's driver: sources -> sema -> emit -> table image. */
#include <string.h>
#include "comp.h"
#include "sema.h"
#include "common/alloc.h"

int sgc_compile(const sgc_options *opt, const sgc_input *inputs, size_t ninputs,
                uint8_t **out, size_t *outlen)
{
    sgc_comp c;
    memset(&c, 0, sizeof c);
    c.opt = opt;
    sg_arena_init(&c.arena, 65536);
    sgc_program prog;
    memset(&prog, 0, sizeof prog);
    *out = NULL;
    *outlen = 0;
    int rc = sgc_sema(&c, inputs, ninputs, &prog);
    if (rc == 0 && !c.nerrors)
        sgc_emit(&c, &prog, out, outlen);
    int result = c.oom ? -1 : c.nerrors;
    if (result && *out) {
        sg_free(*out);
        *out = NULL;
        *outlen = 0;
    }
    sgc_program_free(&prog);
    for (uint32_t i = 0; i < c.nfiles; i++) {
        sg_free(c.files[i].name);
        sg_free(c.files[i].dir);
        sg_free(c.files[i].text);
        sg_free(c.files[i].lines);
    }
    sg_free(c.files);
    sg_arena_free(&c.arena);
    return result;
}
