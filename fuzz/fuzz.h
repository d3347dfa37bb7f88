/* fuzz.h - what every harness in fuzz/ shares: the libFuzzer entry point's
 * prototype (our warnings want one) and a check that fails loudly.
 *
 * A harness is built twice: linked with -fsanitize=fuzzer (fuzz/CMakeLists.txt,
 * clang only) and linked with fuzz/replay_main.c (tests/CMakeLists.txt, any
 * compiler), which feeds it every corpus file.  So a harness must not depend on
 * libFuzzer, must not print on success, and must free everything per input
 * (LeakSanitizer runs on the replays). */
#ifndef SG_FUZZ_H
#define SG_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant the code under test promised; abort() makes libFuzzer save the
 * input as a crash and makes the replay test fail. */
#define FUZZ_CHECK(cond)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__,        \
                    __LINE__, #cond);                                              \
            abort();                                                               \
        }                                                                          \
    } while (0)

/* Read every byte of s[0..n): lets ASan see an out-of-bounds or dangling
 * pointer the harness would otherwise never dereference. */
static inline unsigned fuzz_touch(const void *s, size_t n)
{
    const volatile unsigned char *p = s;
    unsigned h = 0;
    for (size_t i = 0; i < n; i++)
        h = h * 31 + p[i];
    return h;
}

#endif
