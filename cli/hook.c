/* hook.c - `shellgate hook AGENT`: a coding agent's pre-tool hook.  Standard input
 * is the agent's hook JSON, standard output the agent's answer, in each agent's
 * own protocol (docs/integrations.md says which documentation each follows).
 *
 * Fail closed: whatever goes wrong in shellgate itself -- input that is not JSON,
 * a missing field, a policy that does not load, a corrupt state file, no memory --
 * is answered with a deny in the agent's format, with the reason.  Only a tool
 * that is not the agent's shell passes with no opinion ("{}").  Decisions come
 * from the gate (gate_seam.h) alone: allowed commands are admitted (rate limits,
 * approvals) and logged per agent session. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli/verbs.h"
#include "cli/gateopt.h"
#include "cli/help.h"
#include "common/alloc.h"
#include "common/jsontext.h"
#include "common/utf8.h"

/* cJSON would end the command at the NUL: the part decided would not be all
 * that runs */
#define NUL_WHY "a NUL character in the hook input: the command cannot be checked as sent"
#define UTF8_WHY "the hook input is not UTF-8, as JSON text is: the command cannot be checked as sent"

#define HOOK_MAX_INPUT (8u << 20)      /* a hook payload larger than this is refused */

/* What the policy's answer becomes in an agent that cannot ask (ORDER HOOK_ASK). */
enum { HOOK_ASK_ASK, HOOK_ASK_DENY, HOOK_ASK_PASS };

typedef struct hook_agent hook_agent;

/* One answer, before it is spelled in the agent's protocol. */
typedef struct answer {
    int opinion;                       /* 0: no opinion ("{}") */
    int decision;                      /* SG_GATE_* */
    const char *reason;                /* for the model and the person */
} answer;

struct hook_agent {
    const char *name;
    const char *event;                 /* the event it answers; others: no opinion */
    const char *const *shell_tools;    /* tool names that are the shell; NULL: every event is */
    int can_ask;
    int (*spell)(const answer *a, cJSON *out);
    const char *oom_deny;              /* the deny when even that cannot be built */
    const char *config_file;           /* where --print-config's snippet goes */
    int (*config)(const char *command, FILE *f);
};

/* ---- answers, one per protocol ------------------------------------------------- */

static const char *const decision_word[] = { "allow", "deny", "ask" };   /* ORDER SGT_DECISION */

/* Claude Code and Codex: {"hookSpecificOutput": {"hookEventName": "PreToolUse",
 * "permissionDecision": ..., "permissionDecisionReason": ...}}. */
static int spell_pretooluse(const answer *a, cJSON *out)
{
    cJSON *h = cJSON_AddObjectToObject(out, "hookSpecificOutput");
    return !h || !cJSON_AddStringToObject(h, "hookEventName", "PreToolUse")
        || !cJSON_AddStringToObject(h, "permissionDecision", decision_word[a->decision])
        || !cJSON_AddStringToObject(h, "permissionDecisionReason", a->reason) ? -1 : 0;
}

/* Codex runs a call unless a hook denies it: an allow is no opinion there. */
static int spell_codex(const answer *a, cJSON *out)
{
    return a->decision == SG_GATE_ALLOW ? 0 : spell_pretooluse(a, out);
}

/* Gemini CLI BeforeTool: {"decision": "allow"|"deny"|"ask", "reason": ...}. */
static int spell_gemini(const answer *a, cJSON *out)
{
    return !cJSON_AddStringToObject(out, "decision", decision_word[a->decision])
        || !cJSON_AddStringToObject(out, "reason", a->reason) ? -1 : 0;
}

/* Cursor beforeShellExecution: {"permission", "user_message", "agent_message"}. */
static int spell_cursor(const answer *a, cJSON *out)
{
    return !cJSON_AddStringToObject(out, "permission", decision_word[a->decision])
        || !cJSON_AddStringToObject(out, "user_message", a->reason)
        || !cJSON_AddStringToObject(out, "agent_message", a->reason) ? -1 : 0;
}

/* Copilot CLI preToolUse: {"permissionDecision", "permissionDecisionReason"}. */
static int spell_copilot(const answer *a, cJSON *out)
{
    return !cJSON_AddStringToObject(out, "permissionDecision", decision_word[a->decision])
        || !cJSON_AddStringToObject(out, "permissionDecisionReason", a->reason) ? -1 : 0;
}

/* ---- install snippets (--print-config) ------------------------------------------ */

/* s as a JSON string literal. */
static void put_json_string(FILE *f, const char *s)
{
    cJSON *j = cJSON_CreateString(s);
    char *p = j ? cJSON_PrintUnformatted(j) : NULL;
    fputs(p ? p : "\"\"", f);
    cJSON_free(p);
    cJSON_Delete(j);
}

static int config_claude(const char *command, FILE *f)
{
    fputs("{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\n        \"matcher\": \"Bash\",\n"
          "        \"hooks\": [{ \"type\": \"command\", \"command\": ", f);
    put_json_string(f, command);
    fputs(", \"timeout\": 30 }]\n      }\n    ]\n  }\n}\n", f);
    return 0;
}

static int config_codex(const char *command, FILE *f)
{
    fputs("[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = ", f);
    put_json_string(f, command);             /* a TOML basic string is a JSON string */
    fputs("\ntimeout = 30\n", f);
    return 0;
}

static int config_gemini(const char *command, FILE *f)
{
    fputs("{\n  \"hooks\": {\n    \"BeforeTool\": [\n      {\n        \"matcher\": \"run_shell_command\",\n"
          "        \"hooks\": [{ \"name\": \"shellgate\", \"type\": \"command\", \"command\": ", f);
    put_json_string(f, command);
    fputs(", \"timeout\": 30000 }]\n      }\n    ]\n  }\n}\n", f);
    return 0;
}

static int config_cursor(const char *command, FILE *f)
{
    fputs("{\n  \"version\": 1,\n  \"hooks\": {\n    \"beforeShellExecution\": [\n      { \"command\": ", f);
    put_json_string(f, command);
    fputs(" }\n    ]\n  }\n}\n", f);
    return 0;
}

static int config_copilot(const char *command, FILE *f)
{
    fputs("{\n  \"version\": 1,\n  \"hooks\": {\n    \"preToolUse\": [\n      { \"type\": \"command\", \"bash\": ", f);
    put_json_string(f, command);
    fputs(", \"timeoutSec\": 30 }\n    ]\n  }\n}\n", f);
    return 0;
}

static const char *const claude_shell[] = { "Bash", NULL };
static const char *const gemini_shell[] = { "run_shell_command", NULL };
static const char *const copilot_shell[] = { "bash", NULL };

#define OOM_REASON "shellgate: out of memory, so the command is refused"
static const hook_agent agents[] = {
    { "claude-code", "PreToolUse", claude_shell, 1, spell_pretooluse,
      "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\","
      "\"permissionDecisionReason\":\"" OOM_REASON "\"}}",
      "~/.claude/settings.json (or .claude/settings.json in a project)", config_claude },
    { "codex", "PreToolUse", claude_shell, 0, spell_codex,
      "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\","
      "\"permissionDecisionReason\":\"" OOM_REASON "\"}}",
      "~/.codex/config.toml", config_codex },
    { "gemini-cli", "BeforeTool", gemini_shell, 1, spell_gemini,
      "{\"decision\":\"deny\",\"reason\":\"" OOM_REASON "\"}",
      "~/.gemini/settings.json (or .gemini/settings.json in a project)", config_gemini },
    { "cursor", "beforeShellExecution", NULL, 1, spell_cursor,
      "{\"permission\":\"deny\",\"user_message\":\"" OOM_REASON "\",\"agent_message\":\"" OOM_REASON "\"}",
      "~/.cursor/hooks.json (or .cursor/hooks.json in a project)", config_cursor },
    { "copilot", NULL, copilot_shell, 1, spell_copilot,
      "{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"" OOM_REASON "\"}",
      ".github/hooks/shellgate.json in the repository", config_copilot },
};

static const hook_agent *find_agent(const char *name)
{
    for (size_t i = 0; i < sizeof agents / sizeof *agents; i++)
        if (strcmp(agents[i].name, name) == 0)
            return &agents[i];
    return NULL;
}

/* ---- the exchange ----------------------------------------------------------------- */

/* Write all of s and a newline to standard output.  0, or -1. */
static int put_all(const char *s)
{
    size_t n = strlen(s);
    while (n) {
        ssize_t w = write(1, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return write(1, "\n", 1) == 1 ? 0 : -1;
}

/* Answer the agent and return the exit status.  A deny that cannot be written
 * goes to standard error with exit 2, which every one of these agents takes as
 * a block. */
static int reply(const hook_agent *ag, const answer *a)
{
    cJSON *out = cJSON_CreateObject();
    char *s = NULL;
    if (out && (!a->opinion || ag->spell(a, out) == 0))
        s = cJSON_PrintUnformatted(out);
    cJSON_Delete(out);
    int refused = a->opinion && a->decision != SG_GATE_ALLOW;
    int ok = put_all(s ? s : a->opinion ? ag->oom_deny : "{}") == 0;
    cJSON_free(s);
    if (!ok && refused) {
        fprintf(stderr, "%s\n", a->reason);
        return 2;
    }
    return ok ? 0 : 2;
}

static int deny(const hook_agent *ag, const char *why)
{
    char reason[1500];
    snprintf(reason, sizeof reason, "shellgate: %s, so the command is refused", why);
    fprintf(stderr, "%s\n", reason);
    answer a = { 1, SG_GATE_DENY, reason };
    return reply(ag, &a);
}

/* Read all of standard input (at most HOOK_MAX_INPUT bytes).  NULL with *why. */
static char *read_input(size_t *len, const char **why)
{
    size_t cap = 1 << 14, n = 0;
    char *b = sg_malloc(cap);
    while (b) {
        if (n + 1 >= cap) {
            if (cap >= HOOK_MAX_INPUT) {
                sg_free(b);
                *why = "the hook input is larger than 8 MiB";
                return NULL;
            }
            char *nb = sg_realloc(b, cap * 2);
            if (!nb)
                break;
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(0, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            sg_free(b);
            *why = "cannot read the hook input";
            return NULL;
        }
        if (r == 0) {
            b[n] = '\0';
            *len = n;
            return b;
        }
        n += (size_t)r;
    }
    sg_free(b);
    *why = "out of memory";
    return NULL;
}

static const char *str_field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Does Claude Code put a hook's ask before a person in this permission mode?
 * The modes it documents as asking; any other (bypassPermissions, dontAsk, one
 * added later) gets a refusal with the way to approve instead. */
static int mode_asks(const char *mode)
{
    static const char *const asking[] = { "default", "acceptEdits", "plan" };
    for (size_t i = 0; i < sizeof asking / sizeof *asking; i++)
        if (strcmp(mode, asking[i]) == 0)
            return 1;
    return 0;
}

/* What the payload asks: the command, where, and for whom. */
typedef struct request {
    const char *cmd, *cwd, *session;
    const char *mode;                  /* Claude Code's permission_mode, or NULL */
    const char *roots[16];             /* Cursor's workspace_roots; none: the cwd */
    size_t nroots;
    char *args_owned;                  /* Copilot's toolArgs, parsed (cJSON text) */
    cJSON *args;
} request;

/* Read the agent's payload into r: 1 a shell command to decide, 0 a tool or event
 * that is not ours (no opinion), -1 with *why. */
static int read_request(const hook_agent *ag, cJSON *in, request *r, const char **why)
{
    if (!cJSON_IsObject(in)) {
        *why = "the hook input is not a JSON object";
        return -1;
    }
    const char *ev = str_field(in, "hook_event_name");
    if (ag->event && ev && strcmp(ev, ag->event) != 0)
        return 0;                       /* wired to another event: not a decision */
    const cJSON *input;
    if (strcmp(ag->name, "copilot") == 0) {
        const char *tool = str_field(in, "toolName");
        if (!tool) {
            *why = "the hook input has no toolName";
            return -1;
        }
        if (strcmp(tool, "bash") != 0)
            return 0;
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(in, "toolArgs");
        if (cJSON_IsString(a)) {        /* the CLI sends the arguments as JSON text */
            if (sg_json_has_nul(a->valuestring, strlen(a->valuestring))) {
                *why = NUL_WHY;
                return -1;
            }
            if (!sg_utf8_valid(a->valuestring, strlen(a->valuestring))) {
                *why = UTF8_WHY;
                return -1;
            }
            a = r->args = cJSON_Parse(a->valuestring);
        }
        if (!cJSON_IsObject(a)) {
            *why = "the hook input's toolArgs is not a JSON object";
            return -1;
        }
        input = a;
        r->session = str_field(in, "sessionId");
    } else if (ag->shell_tools) {
        const char *tool = str_field(in, "tool_name");
        if (!tool) {
            *why = "the hook input has no tool_name";
            return -1;
        }
        size_t k = 0;
        while (ag->shell_tools[k] && strcmp(ag->shell_tools[k], tool) != 0)
            k++;
        if (!ag->shell_tools[k])
            return 0;
        input = cJSON_GetObjectItemCaseSensitive(in, "tool_input");
        if (!cJSON_IsObject(input)) {
            *why = "the hook input has no tool_input object";
            return -1;
        }
        r->session = str_field(in, "session_id");
        r->mode = str_field(in, "permission_mode");
    } else {
        input = in;                     /* Cursor: the command is at the top */
        r->session = str_field(in, "conversation_id");
        const cJSON *wr, *ws = cJSON_GetObjectItemCaseSensitive(in, "workspace_roots");
        cJSON_ArrayForEach(wr, ws)
            if (cJSON_IsString(wr) && wr->valuestring[0] == '/' && r->nroots < 16)
                r->roots[r->nroots++] = wr->valuestring;
    }
    r->cmd = str_field(input, "command");
    if (!r->cmd) {
        *why = ag->shell_tools ? "the hook input has no tool_input.command string"
                               : "the hook input has no command string";
        return -1;
    }
    r->cwd = str_field(in, "cwd");
    if (!r->cwd || r->cwd[0] != '/') {
        *why = "the hook input has no absolute cwd";
        return -1;
    }
    return 1;
}

typedef struct hopts {
    sg_gateopt go;
    int ask;                           /* HOOK_ASK_*, -1: the agent's default */
    int print_config;
} hopts;

/* Diagnostics go to standard error, and the first is kept for the answer. */
static void diag_stderr(void *ud, const char *msg)
{
    char *first = ud;
    fprintf(stderr, "%s\n", msg);
    if (!first[0])
        snprintf(first, 600, "%s", msg);
}

/* The working directory the command runs in: Gemini CLI's dir_path (or the older
 * directory) resolved against cwd. */
static const char *run_dir(const hook_agent *ag, const cJSON *in, const char *cwd, char *buf, size_t n)
{
    if (strcmp(ag->name, "gemini-cli") != 0)
        return cwd;
    const cJSON *ti = cJSON_GetObjectItemCaseSensitive(in, "tool_input");
    const char *d = str_field(ti, "dir_path");
    if (!d)
        d = str_field(ti, "directory");
    if (!d || !*d)
        return cwd;
    int k = d[0] == '/' ? snprintf(buf, n, "%s", d) : snprintf(buf, n, "%s/%s", cwd, d);
    return k > 0 && (size_t)k < n ? buf : NULL;
}

static int decide(const hook_agent *ag, const hopts *o, cJSON *in)
{
    request rq;
    memset(&rq, 0, sizeof rq);
    const char *why = NULL;
    int k = read_request(ag, in, &rq, &why);
    if (k <= 0) {
        int rc;
        if (k == 0) {
            answer a = { 0, SG_GATE_ALLOW, "" };
            rc = reply(ag, &a);
        } else {
            rc = deny(ag, why);
        }
        cJSON_Delete(rq.args);
        return rc;
    }
    char dirbuf[PATH_MAX + 8];
    const char *cwd = run_dir(ag, in, rq.cwd, dirbuf, sizeof dirbuf);
    if (!cwd) {
        cJSON_Delete(rq.args);
        return deny(ag, "the command's directory is too long");
    }
    /* rate limits and approvals per agent and session (docs/integrations.md) */
    char agent[256];
    const char *sess = rq.session && *rq.session ? rq.session : "default";
    snprintf(agent, sizeof agent, "%s:%.200s", ag->name, sess);
    sg_gate_opts go = o->go.g;
    go.admit = 1;
    char first[600] = "", why_open[700];
    go.diag = diag_stderr;
    go.diag_ud = first;
    sg_gate *g = NULL;
    int st = sg_gate_open(&go, &g);
    if (st) {
        cJSON_Delete(rq.args);
        const char *f = strncmp(first, "shellgate: ", 11) == 0 ? first + 11 : first;
        snprintf(why_open, sizeof why_open, "%s", st == 70 ? "out of memory" : f[0] ? f
                 : "the policy or the state store cannot be opened");
        return deny(ag, why_open);
    }
    /* the workspace is the agent's project directory; Gemini CLI may run the
     * command in a directory below it */
    const char *proj[1] = { rq.cwd };
    sg_gate_where where = { cwd, rq.nroots ? rq.roots : proj, rq.nroots ? rq.nroots : 1,
                            o->go.agent ? o->go.agent : agent, agent, o->go.team };
    sg_gate_verdict v;
    sg_gate_decide(g, rq.cmd, strlen(rq.cmd), &where, &v);
    char reason[3000 + PATH_MAX], approve[PATH_MAX + 600] = "", no_ask[200] = "";
    int ask = HOOK_ASK_ASK;
    if (o->ask >= 0) {
        ask = o->ask;
        snprintf(no_ask, sizeof no_ask, "this hook answers asks with a refusal (--ask deny)");
    } else if (!ag->can_ask) {
        ask = HOOK_ASK_DENY;
        snprintf(no_ask, sizeof no_ask, "%s cannot ask", ag->name);
    } else if (rq.mode && !mode_asks(rq.mode)) {
        /* bypassPermissions may run an ask unseen, dontAsk refuses it without
         * the way to approve, and a mode this hook does not know is neither */
        ask = HOOK_ASK_DENY;
        snprintf(no_ask, sizeof no_ask, "in permission mode '%.60s' this hook cannot count on a person being asked", rq.mode);
    }
    no_ask[0] = (char)toupper((unsigned char)no_ask[0]);   /* it begins a sentence */
    answer a = { 1, v.decision, reason };
    if (v.decision == SG_GATE_ASK) {
        /* the options of the store the ask waits in, as check prints them */
        char store[PATH_MAX + 32];
        sg_store_words(store, sizeof store, go.state, go.rate_store);
        snprintf(approve, sizeof approve, "shellgate approve %s --once (or --session, --always)%s", v.approval_id,
                 store);
    }
    if (v.decision == SG_GATE_ALLOW) {
        snprintf(reason, sizeof reason, "shellgate: allowed by %s", v.rule);
    } else if (v.decision == SG_GATE_DENY) {
        size_t ml = strlen(v.message);
        int stop = ml && strchr(".!?", v.message[ml - 1]);
        snprintf(reason, sizeof reason, "shellgate denied this command (%s): %s%s%s", v.rule, v.message,
                 !v.hint[0] ? "" : stop ? " Hint: " : ". Hint: ", v.hint);
    } else if (ask == HOOK_ASK_DENY) {
        a.decision = SG_GATE_DENY;
        snprintf(reason, sizeof reason, "shellgate: this command needs a person's approval (%s): %s. %s, "
                 "so it is refused until someone runs `%s`; then try again.", v.rule, v.message, no_ask, approve);
    } else if (ask == HOOK_ASK_PASS) {
        a.opinion = 0;                  /* the agent's own approval flow decides */
        reason[0] = '\0';
    } else {
        snprintf(reason, sizeof reason, "shellgate asks for approval (%s): %s (approval id %s; to approve it for "
                 "later runs: `%s`)", v.rule, v.message, v.approval_id, approve);
    }
    int rc = reply(ag, &a);
    sg_gate_free(g);
    cJSON_Delete(rq.args);
    return rc;
}

static int print_config(const hook_agent *ag, const hopts *o)
{
    char self[PATH_MAX], command[8192];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "shellgate: cannot find this binary's path: %s\n", strerror(errno));
        return 1;
    }
    self[n] = '\0';
    snprintf(command, sizeof command, "'%s' hook %s", self, ag->name);
    if (o->ask >= 0) {
        static const char *const w[] = { "ask", "deny", "pass" };
        snprintf(command + strlen(command), sizeof command - strlen(command), " --ask %s", w[o->ask]);
    }
    /* "|| exit 2": should shellgate not run at all (moved, killed), the shell's
     * status 2 still blocks the command in every one of these agents */
    static const char tail[] = " || exit 2";
    if (strchr(self, '\'') || sg_gateopt_words(&o->go, command, sizeof command) < 0
        || strlen(command) + sizeof tail > sizeof command) {
        fprintf(stderr, "shellgate: the hook's path or options cannot be written as a command\n");
        return 1;
    }
    strcat(command, tail);
    fprintf(stderr, "# %s: put this in %s\n", ag->name, ag->config_file);
    ag->config(command, stdout);
    return fflush(stdout) == 0 ? 0 : 1;
}

static void usage(FILE *f)
{
    cli_print_usage(f, "hook");            /* the one text, cli/help.c */
}

int cli_hook(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) {
        usage(argc < 1 ? stderr : stdout);
        return argc < 1 ? 2 : 0;       /* no agent named: block, as for an unknown one */
    }
    const hook_agent *ag = find_agent(argv[0]);
    if (!ag) {
        const char *names[sizeof agents / sizeof *agents];
        for (size_t i = 0; i < sizeof agents / sizeof *agents; i++)
            names[i] = agents[i].name;
        const char *near = cli_nearest(argv[0], names, sizeof agents / sizeof *agents);
        fprintf(stderr, "shellgate: hook: unknown agent '%s'%s%s%s\n", argv[0], near ? "; did you mean '" : "",
                near ? near : "", near ? "'?" : "");
        usage(stderr);
        return 2;                      /* blocks, in the agents that read exit codes */
    }
    hopts o;
    memset(&o, 0, sizeof o);
    o.ask = -1;
    char err[300];
    for (int i = 1; i < argc; i++) {
        int t = sg_gateopt_take(&o.go, argc, argv, &i, err, sizeof err);
        if (t < 0)
            return deny(ag, err);
        if (t)
            continue;
        if (strcmp(argv[i], "--print-config") == 0) {
            o.print_config = 1;
        } else if (strcmp(argv[i], "--ask") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            o.ask = strcmp(v, "ask") == 0 ? HOOK_ASK_ASK : strcmp(v, "deny") == 0 ? HOOK_ASK_DENY
                  : strcmp(v, "pass") == 0 ? HOOK_ASK_PASS : -2;
            if (o.ask == -2 || (o.ask == HOOK_ASK_ASK && !ag->can_ask)) {
                snprintf(err, sizeof err, "--ask takes %s (got '%s')", ag->can_ask ? "ask, deny or pass" : "deny or pass",
                         v);
                return deny(ag, err);
            }
        } else {
            static const char *const own[] = { "--ask", "--print-config", "--help" };
            const char *near = sg_gateopt_nearest(argv[i], own, sizeof own / sizeof *own);
            snprintf(err, sizeof err, "hook %s: unknown option '%s'%s%s%s", ag->name, argv[i],
                     near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
            return deny(ag, err);
        }
    }
    if (o.print_config)
        return print_config(ag, &o);
    size_t len;
    const char *why = NULL;
    char *text = read_input(&len, &why);
    if (!text)
        return deny(ag, why);
    if (sg_json_has_nul(text, len)) {
        sg_free(text);
        return deny(ag, NUL_WHY);
    }
    if (!sg_utf8_valid(text, len)) {
        sg_free(text);
        return deny(ag, UTF8_WHY);
    }
    cJSON *in = cJSON_ParseWithLength(text, len);
    sg_free(text);
    if (!in)
        return deny(ag, "the hook input is not valid JSON");
    int rc = decide(ag, &o, in);
    cJSON_Delete(in);
    return rc;
}
