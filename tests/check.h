/* check.h - the tiny assertion kit the unit tests share: CHECK counts failures
 * and reports file:line; sg_test_summary prints "N passed, N failed". */
#ifndef SG_TESTS_CHECK_H
#define SG_TESTS_CHECK_H
#include <stdio.h>
#include <string.h>

static int sg_t_pass, sg_t_fail;
#define CHECK(cond) do { if (cond) sg_t_pass++; else { sg_t_fail++; \
    fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_STR(a, b) do { const char *sg_a = (a), *sg_b = (b); \
    if (sg_a && sg_b && strcmp(sg_a, sg_b) == 0) sg_t_pass++; else { sg_t_fail++; \
    fprintf(stderr, "%s:%d: %s: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, #a, \
            sg_a ? sg_a : "(null)", sg_b ? sg_b : "(null)"); } } while (0)
static inline int sg_test_summary(void)
{
    printf("%d passed, %d failed\n", sg_t_pass, sg_t_fail);
    return sg_t_fail ? 1 : 0;
}
#endif
