/* fuzz_lexer.c - the rule lexer (compiler/lex.re) alone: tokens until the end.
 *
 * Driven as sgc_parse_file drives it: the source NUL-terminated at src[len], a bad
 * token reported and lexing resumed after it.  Invariants: every call moves the
 * cursor forward and stays inside the source (a lexer that stops moving would hang
 * the parser), every token's location lies inside the source, every token's text
 * is readable for its length, and a bad token comes with a message. */
#include <string.h>
#include "fuzz.h"
#include "compiler/parse.h"
#include "common/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    char *src = malloc(size + 1);
    if (!src)
        return 0;
    memcpy(src, data, size);
    src[size] = '\0';

    sgc_options opt;
    memset(&opt, 0, sizeof opt);
    sgc_comp c;
    memset(&c, 0, sizeof c);
    c.opt = &opt;
    sg_arena_init(&c.arena, 4096);

    sgc_lexer lx = { src, size, src, 0, NULL };
    size_t steps = 0;
    for (;;) {
        const char *before = lx.cur;
        sgc_tok tok;
        memset(&tok, 0, sizeof tok);
        lx.error = NULL;
        int code = sgc_lex(&lx, &c, &tok);
        FUZZ_CHECK(lx.cur >= before && lx.cur <= src + size);
        if (code == 0)
            break;
        FUZZ_CHECK(lx.cur > before);        /* progress: no endless token stream */
        FUZZ_CHECK(++steps <= size + 1);
        FUZZ_CHECK(tok.loc.file == 0);
        FUZZ_CHECK(tok.loc.off <= size && tok.loc.len <= size - tok.loc.off);
        if (code < 0) {
            FUZZ_CHECK(lx.error != NULL);
            fuzz_touch(lx.error, strlen(lx.error));
            continue;
        }
        FUZZ_CHECK(sgc_token_name(code) != NULL);
        if (tok.len)
            FUZZ_CHECK(tok.text != NULL);
        if (tok.text)
            fuzz_touch(tok.text, tok.len);
    }
    sg_arena_free(&c.arena);
    free(src);
    return 0;
}
