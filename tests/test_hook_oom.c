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

/* The decision an answer carries, read in the agent's own format: allow, deny,
 * ask, "none" (no opinion) or "unreadable". */
static const char *decision(const char *agent, const char *out, char *buf, size_t n)
{
    cJSON *j = cJSON_Parse(out);
    const cJSON *d = NULL;
    if (strcmp(agent, "claude-code") == 0 || strcmp(agent, "codex") == 0)
        d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "hookSpecificOutput"),
                                             "permissionDecision");
    else if (strcmp(agent, "gemini-cli") == 0)
        d = cJSON_GetObjectItemCaseSensitive(j, "decision");
    else if (strcmp(agent, "cursor") == 0)
        d = cJSON_GetObjectItemCaseSensitive(j, "permission");
    else
        d = cJSON_GetObjectItemCaseSensitive(j, "permissionDecision");
    snprintf(buf, n, "%s", cJSON_IsString(d) ? d->valuestring
             : cJSON_IsObject(j) && !cJSON_GetArraySize(j) ? "none" : "unreadable");
    cJSON_Delete(j);
    return buf;
}

/* The payload for cmd in agent's protocol. */
static void payload(const char *agent, const char *cmd, char *out, size_t n)
{
    if (strcmp(agent, "copilot") == 0)
        snprintf(out, n, "{\"timestamp\":1,\"cwd\":\"/home/agent/project\",\"toolName\":\"bash\","
                 "\"sessionId\":\"s\",\"toolArgs\":\"{\\\"command\\\":\\\"%s\\\"}\"}", cmd);
    else if (strcmp(agent, "cursor") == 0)
        snprintf(out, n, "{\"conversation_id\":\"s\",\"hook_event_name\":\"beforeShellExecution\","
                 "\"command\":\"%s\",\"cwd\":\"/home/agent/project\"}", cmd);
    else
        snprintf(out, n, "{\"session_id\":\"s\",\"cwd\":\"/home/agent/project\",\"hook_event_name\":"
                 "\"%s\",\"tool_name\":\"%s\",\"tool_input\":{\"command\":\"%s\"}}",
                 strcmp(agent, "gemini-cli") == 0 ? "BeforeTool" : "PreToolUse",
                 strcmp(agent, "gemini-cli") == 0 ? "run_shell_command" : "Bash", cmd);
}

static void sweep(const char *agent, const char *cmd, const char *want)
{
    char in[1024], out[8192], d[64];
    long made = 0;
    payload(agent, cmd, in, sizeof in);
    run(agent, in, 0, out, sizeof out, &made);
    CHECK_STR(decision(agent, out, d, sizeof d), want);
    long total = made;
    for (long nth = 1; nth <= total; nth++) {
        int rc = run(agent, in, nth, out, sizeof out, &made);
        decision(agent, out, d, sizeof d);
        CHECK(rc == 0);
        /* a deny stays a deny; an allow may become a deny, never nothing */
        int ok = strcmp(d, "deny") == 0 || strcmp(d, want) == 0;
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "%s: allocation %ld of %ld failing: %s\n", agent, nth, total, out);
    }
    printf("%s %s: %ld allocations swept\n", agent, want, total);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    setenv("XDG_CONFIG_HOME", dir, 1);
    /* cJSON allocates through the funnel, as in the shellgate binary */
    cJSON_InitHooks(&(cJSON_Hooks){ .malloc_fn = sg_malloc, .free_fn = sg_free });
    static const char *const agents[] = { "claude-code", "codex", "gemini-cli", "cursor", "copilot" };
    for (size_t i = 0; i < sizeof agents / sizeof *agents; i++) {
        int codex = strcmp(agents[i], "codex") == 0;
        sweep(agents[i], "rm -rf / | cat", "deny");
        sweep(agents[i], "ls -la | wc -l", codex ? "none" : "allow");     /* Codex: allow is no opinion */
        sweep(agents[i], "git push origin main", codex ? "deny" : "ask");
    }
    char p[200];
    snprintf(p, sizeof p, "%s/in", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    return sg_test_summary();
}
