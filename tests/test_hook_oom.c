/* test_hook_oom.c - `shellgate hook` when memory runs out: the Nth allocation of
 * the allocation funnel fails, for every N until a call makes no more (STYLE 12),
 * and every answer is still one JSON object in the agent's format that never
 * allows what the policy denies, never nothing, never a crash or a leak (ASan). */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "cli/verbs.h"
#include "common/alloc.h"

static char dir[] = "/tmp/sg-hook-oom-XXXXXX";

/* Run cli_hook on payload with allocation nth failing; the answer in out. */
static int run(const char *agent, const char *payload, long nth, char *out, size_t n, long *made)
{
    char in[200], res[200];
    snprintf(in, sizeof in, "%s/in", dir);
    snprintf(res, sizeof res, "%s/out", dir);
    FILE *f = fopen(in, "w");
    fputs(payload, f);
    fclose(f);
    int save0 = dup(0), save1 = dup(1), save2 = dup(2);
    int fi = open(in, O_RDONLY), fo = open(res, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open("/dev/null", O_WRONLY);
    dup2(fi, 0);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fi);
    close(fo);
    close(fe);
    char *argv[] = { (char *)agent, (char *)"--state", (char *)"", NULL };
    char state[200];
    snprintf(state, sizeof state, "%s/state", dir);
    argv[2] = state;
    sg_alloc_fail_after(nth);
    int rc = cli_hook(3, argv);
    *made = sg_alloc_fail_after(0);
    dup2(save0, 0);
    dup2(save1, 1);
    dup2(save2, 2);
    close(save0);
    close(save1);
    close(save2);
    f = fopen(res, "r");
    size_t k = fread(out, 1, n - 1, f);
    fclose(f);
    out[k] = '\0';
    return rc;
}

static const char *decision(const char *out, char *buf, size_t n)
{
    cJSON *j = cJSON_Parse(out);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "hookSpecificOutput");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(h, "permissionDecision");
    snprintf(buf, n, "%s", cJSON_IsString(d) ? d->valuestring : cJSON_IsObject(j) && !h ? "none" : "unreadable");
    cJSON_Delete(j);
    return buf;
}

static void sweep(const char *payload, const char *want)
{
    char out[8192], d[64];
    long made = 0;
    run("claude-code", payload, 0, out, sizeof out, &made);
    CHECK_STR(decision(out, d, sizeof d), want);
    long total = made;
    for (long nth = 1; nth <= total; nth++) {
        int rc = run("claude-code", payload, nth, out, sizeof out, &made);
        decision(out, d, sizeof d);
        CHECK(rc == 0);
        /* a deny stays a deny; an allow may become a deny, never nothing */
        CHECK(strcmp(d, "deny") == 0 || strcmp(d, want) == 0);
        if (strcmp(d, "deny") != 0 && strcmp(d, want) != 0)
            fprintf(stderr, "allocation %ld of %ld failing: %s\n", nth, total, out);
    }
    printf("%s: %ld allocations swept\n", want, total);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    setenv("XDG_CONFIG_HOME", dir, 1);
    sweep("{\"session_id\":\"s\",\"cwd\":\"/home/agent/project\",\"hook_event_name\":\"PreToolUse\","
          "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf / | cat\"}}", "deny");
    sweep("{\"session_id\":\"s\",\"cwd\":\"/home/agent/project\",\"hook_event_name\":\"PreToolUse\","
          "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls -la | wc -l\"}}", "allow");
    sweep("{\"session_id\":\"s\",\"cwd\":\"/home/agent/project\",\"hook_event_name\":\"PreToolUse\","
          "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"git push origin main\"}}", "ask");
    char p[200];
    snprintf(p, sizeof p, "%s/in", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    return sg_test_summary();
}
