/* example.c - shellgate as a library: load a policy, decide command lines, read
 * the result and its explanation, print its JSON.  docs/library.md walks through
 * it; tests/install.sh builds it against an installed shellgate with nothing but
 * `pkg-config --cflags --libs shellgate` (and with CMake's find_package) and runs it.
 *
 *   cc -o example example.c $(pkg-config --cflags --libs shellgate)
 *   ./example [POLICY] [COMMAND]...
 *
 * POLICY: an embedded pack name ("readonly"), a .rules file or a .sgt table;
 * "default" when none is given.  Exit status: that of the strictest decision
 * (0 allow, 1 deny, 2 ask), as `shellgate check` has it. */
#include <stdio.h>
#include <string.h>
#include <shellgate.h>

static void print_error(void *ud, const char *text)
{
    (void)ud;
    fprintf(stderr, "example: %s\n", text);
}

/* One command: the decision, then each segment and the rules that matched it. */
static int decide(sg_checker *c, const char *cmd)
{
    sg_check_options o = { 0 };        /* cwd: this process's; roots: the cwd */
    const sg_result *r = sg_explain(c, cmd, strlen(cmd), &o);
    sg_decision d = sg_result_decision(r);
    printf("%s: %s\n  rule: %s (pack %s)\n", sg_decision_name(d), cmd, sg_result_rule(r), sg_result_pack(r));
    printf("  message: %s\n", sg_result_message(r));
    for (size_t i = 0; i < sg_result_segments(r); i++) {
        const char *sub = sg_result_segment_subcommand(r, i);
        printf("  segment %zu: program %s%s%s, %s by %s\n", i, sg_result_segment_program(r, i),
               sub ? ", subcommand " : "", sub ? sub : "", sg_decision_name(sg_result_segment_decision(r, i)),
               sg_result_segment_rule(r, i));
    }
    for (size_t k = 0; k < sg_result_rules_tried(r); k++) {
        sg_rule_tried t;
        if (sg_result_rule_tried(r, k, &t) == 0 && t.matched)
            printf("  matched: %s %s on segment %ld\n", sg_decision_name(t.decision), t.rule, t.segment);
    }
    const char *json = sg_result_json(r, NULL);
    printf("  json: %s\n", json ? json : "(out of memory)");
    return d == SG_ALLOW ? 0 : d == SG_ASK ? 2 : 1;
}

int main(int argc, char **argv)
{
    const char *policy = argc > 1 ? argv[1] : "default";
    static const char *const samples[] = { "ls -la", "git push origin main", "rm -rf /" };
    sg_load_options lo = { 0 };
    lo.diag = print_error;
    sg_policy *p = NULL;
    int status = sg_policy_load(policy, &lo, &p);
    if (status)
        return status;
    printf("shellgate %s, pack %s version %u\n", sg_version(), sg_policy_name(p), sg_policy_version(p));
    sg_checker *c = sg_checker_new(p);
    if (!c) {
        sg_policy_free(p);
        return SG_ESOFTWARE;
    }
    int worst = 0;
    if (argc > 2) {
        for (int i = 2; i < argc; i++) {
            int e = decide(c, argv[i]);
            worst = e == 1 || worst == 1 ? 1 : e > worst ? e : worst;
        }
    } else {
        for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
            int e = decide(c, samples[i]);
            worst = e == 1 || worst == 1 ? 1 : e > worst ? e : worst;
        }
    }
    sg_checker_free(c);
    sg_policy_free(p);
    return worst;
}
