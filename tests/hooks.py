#!/usr/bin/env python3
"""`shellgate hook AGENT` against each agent's real payload shapes (tests/hooks/).

Every tests/hooks/AGENT/NAME.in is fed on standard input (from the file: no
command here passes through a shell), with the options in NAME.args, and the
answer must be byte for byte NAME.out with exit status 0.  Beside the goldens,
each answer is read back in the agent's own protocol and its decision checked
against what the case's name says (so a golden written wrong fails too), and
the admission path is exercised: rate limits and the decision log per agent
session, an ask approved with `shellgate approve`, and every --print-config
snippet run as the agent would run it.

usage: hooks.py SHELLGATE TESTS_DIR [--update]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SG, TESTS = sys.argv[1], sys.argv[2]
UPDATE = "--update" in sys.argv
HOOKS = os.path.join(TESTS, "hooks")
AGENTS = ["claude-code", "codex", "gemini-cli", "cursor", "copilot"]
failures = []
passed = 0


def check(ok, what):
    global passed
    if ok:
        passed += 1
    else:
        failures.append(what)
        print("FAIL:", what)


def env_for(tmp):
    e = {k: v for k, v in os.environ.items() if not k.startswith("SHELLGATE_")}
    e.update(HOME="/home/agent", XDG_STATE_HOME=os.path.join(tmp, "state"),
             XDG_CONFIG_HOME=os.path.join(tmp, "config"))
    return e


def hook(agent, data, args=(), env=None):
    return subprocess.run([SG, "hook", agent, *args], input=data, capture_output=True, env=env, timeout=60)


def decision_of(agent, out):
    """The decision an agent reads in our answer: allow, deny, ask or none."""
    o = json.loads(out)
    if o == {}:
        return "none"
    if agent in ("claude-code", "codex"):
        h = o["hookSpecificOutput"]
        assert h["hookEventName"] == "PreToolUse" and h["permissionDecisionReason"]
        return h["permissionDecision"]
    if agent == "gemini-cli":
        assert o["reason"]
        return o["decision"]
    if agent == "cursor":
        assert o["user_message"] and o["agent_message"]
        return o["permission"]
    assert o["permissionDecisionReason"]
    return o["permissionDecision"]


def expected(agent, name):
    """What the case's name promises, in that agent."""
    if name in ("allow", "readonly_pack", "dir_path_inside", "dir_path_up"):
        return "none" if agent == "codex" else "allow"      # Codex honours deny only
    if name in ("ask", "ask_mode_plan", "ask_mode_accept_edits"):
        return "deny" if agent == "codex" else "ask"
    if name in ("ask_pass", "other_tool", "mcp_tool", "other_event"):
        return "none"
    return "deny"                      # deny, hostile*, every malformed input, bad options


def golden():
    with tempfile.TemporaryDirectory(prefix="sg-hooks-") as tmp:
        env = env_for(tmp)
        for agent in AGENTS:
            d = os.path.join(HOOKS, agent)
            for f in sorted(os.listdir(d)):
                if not f.endswith(".in"):
                    continue
                name = f[:-3]
                args = []
                if os.path.exists(os.path.join(d, name + ".args")):
                    args = open(os.path.join(d, name + ".args")).read().split("\n")[:-1]
                data = open(os.path.join(d, f), "rb").read()
                p = hook(agent, data, args, env)
                outp = os.path.join(d, name + ".out")
                if UPDATE:
                    open(outp, "wb").write(p.stdout)
                want = open(outp, "rb").read() if os.path.exists(outp) else None
                check(p.returncode == 0, f"{agent}/{name}: exit {p.returncode}: {p.stderr!r}")
                check(p.stdout == want, f"{agent}/{name}: answer {p.stdout!r}, golden {want!r}")
                try:
                    got = decision_of(agent, p.stdout)
                except Exception as e:          # noqa: BLE001 - any shape error fails the case
                    got = f"unreadable ({e})"
                check(got == expected(agent, name), f"{agent}/{name}: decision {got}, want {expected(agent, name)}")
                if got == "deny" and name not in ("deny", "readonly_pack_deny", "dir_path", "args_object") \
                        and not name.startswith(("hostile", "ask_mode_")) and name != "ask" and name != "ask_as_deny" \
                        and name != "non_interactive":
                    check(p.stderr.strip() != b"", f"{agent}/{name}: an error of shellgate's own is on stderr too")


def payload(agent, cmd, session):
    if agent == "copilot":
        return {"timestamp": 1, "cwd": "/home/agent/project", "toolName": "bash", "sessionId": session,
                "toolArgs": json.dumps({"command": cmd})}
    if agent == "cursor":
        return {"conversation_id": session, "hook_event_name": "beforeShellExecution", "command": cmd,
                "cwd": "/home/agent/project"}
    tool = "run_shell_command" if agent == "gemini-cli" else "Bash"
    return {"session_id": session, "cwd": "/home/agent/project", "tool_name": tool, "tool_input": {"command": cmd}}


def admission():
    """Allowed commands are admitted: limits and the log per agent session."""
    with tempfile.TemporaryDirectory(prefix="sg-hooks-adm-") as tmp:
        env = env_for(tmp)
        state, log = os.path.join(tmp, "state.db"), os.path.join(tmp, "decisions.log")
        args = ["-p", "gaia", "--state", state, "--log", log]
        for agent in AGENTS:
            allow = "none" if agent == "codex" else "allow"
            got = [decision_of(agent, hook(agent, json.dumps(payload(agent, "ls", f"{agent}-s1")).encode(), args,
                                           env).stdout) for _ in range(4)]
            # gaia: 3 commands per 10 seconds, per session
            check(got == [allow] * 3 + ["deny"], f"{agent}: gaia's 3-per-10s limit in one session: {got}")
            p = hook(agent, json.dumps(payload(agent, "ls", f"{agent}-s1")).encode(), args, env)
            check(b"Rate limit" in p.stdout, f"{agent}: the rate limit's message reaches the agent: {p.stdout!r}")
            other = decision_of(agent, hook(agent, json.dumps(payload(agent, "ls", f"{agent}-s2")).encode(), args,
                                            env).stdout)
            check(other == allow, f"{agent}: another session has its own limit: {other}")
        lines = [json.loads(x) for x in open(log)]
        agents = {x.get("agent") for x in lines}
        check("claude-code:claude-code-s1" in agents and "cursor:cursor-s2" in agents,
              f"the decision log names agent and session: {sorted(agents)}")
        check(any(x.get("rate_limited") for x in lines), "the log records the rate-limited decisions")


def approval():
    """Codex cannot ask: the ask is a deny that says how to approve; once approved
    (`shellgate approve ID`), the same command is admitted."""
    with tempfile.TemporaryDirectory(prefix="sg-hooks-appr-") as tmp:
        env = env_for(tmp)
        state = os.path.join(tmp, "state.db")
        data = json.dumps(payload("codex", "git push origin main", "sess-a")).encode()
        p = hook("codex", data, ["--state", state], env)
        reason = json.loads(p.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
        check(decision_of("codex", p.stdout) == "deny" and "shellgate approve " in reason,
              f"codex: an ask is a deny with how to approve: {reason}")
        ident = reason.split("shellgate approve ")[1].split()[0]
        a = subprocess.run([SG, "approve", ident, "--once", "--state", state], capture_output=True, env=env)
        check(a.returncode == 0, f"approve {ident}: {a.stderr!r}")
        again = decision_of("codex", hook("codex", data, ["--state", state], env).stdout)
        check(again == "none", f"codex: the approved command now runs (no deny): {again}")
        third = decision_of("codex", hook("codex", data, ["--state", state], env).stdout)
        check(third == "deny", f"codex: an approval --once is used up: {third}")
        # a corrupt state file refuses every command that needs it (a limit applies,
        # or an ask), in the agent's format; a plain allow without limits never reads it
        open(state, "wb").write(b"\x00garbage\xff" * 50)
        for args, cmd in ((["-p", "gaia"], "ls"), ([], "git push origin main")):
            p = hook("claude-code", json.dumps(payload("claude-code", cmd, "s")).encode(), ["--state", state] + args,
                     env)
            check(decision_of("claude-code", p.stdout) == "deny" and b"admission" in p.stdout,
                  f"claude-code: a corrupt state file is a deny ({cmd}): {p.stdout!r}")


def print_config():
    """Each snippet names this binary by its absolute path, and its command, run as
    the agent runs it (sh -c, the payload on stdin), answers in that protocol."""
    real = os.path.realpath(SG)
    with tempfile.TemporaryDirectory(prefix="sg-hooks-cfg-") as tmp:
        env = env_for(tmp)
        for agent in AGENTS:
            p = subprocess.run([SG, "hook", agent, "--print-config", "-p", "readonly", "--state",
                                os.path.join(tmp, "st")], capture_output=True, env=env)
            text = p.stdout.decode()
            check(p.returncode == 0 and real in text, f"{agent}: --print-config names {real}: {text!r}")
            if agent == "codex":
                line = [x for x in text.splitlines() if x.startswith("command = ")][0]
                command = json.loads(line[len("command = "):])
            else:
                c = json.loads(text)["hooks"]
                ev = {"claude-code": "PreToolUse", "gemini-cli": "BeforeTool", "cursor": "beforeShellExecution",
                      "copilot": "preToolUse"}[agent]
                entry = c[ev][0]
                if agent in ("claude-code", "gemini-cli"):
                    check(entry["matcher"] in ("Bash", "run_shell_command"), f"{agent}: matcher {entry['matcher']}")
                    entry = entry["hooks"][0]
                command = entry.get("bash") or entry["command"]
            # shellgate gone (moved, not installed): the snippet's command still blocks
            gone = command.replace(real, os.path.join(tmp, "no-such-dir", "shellgate"))
            r = subprocess.run(["sh", "-c", gone], input=b"{}", capture_output=True, env=env)
            check(r.returncode == 2, f"{agent}: the snippet blocks (exit 2) when shellgate cannot run: {r.returncode}")
            for cmd, want in (("cat notes.txt", "allow"), ("rm -rf /", "deny")):
                data = json.dumps(payload(agent, cmd, "cfg")).encode()
                r = subprocess.run(["sh", "-c", command], input=data, capture_output=True, env=env)
                got = decision_of(agent, r.stdout)
                want = "none" if agent == "codex" and want == "allow" else want
                check(got == want, f"{agent}: the snippet's command answers {got} for {cmd!r}, want {want}")


def docs_snippets():
    """docs/integrations.md shows each snippet exactly as --print-config prints it
    for /usr/local/bin/shellgate."""
    doc = open(os.path.join(TESTS, "..", "docs", "integrations.md")).read()
    real = os.path.realpath(SG)
    for agent in AGENTS:
        p = subprocess.run([SG, "hook", agent, "--print-config"], capture_output=True)
        text = p.stdout.decode().replace(real, "/usr/local/bin/shellgate")
        check(text in doc, f"docs/integrations.md has {agent}'s snippet as printed:\n{text}")


def unknown_agent():
    p = subprocess.run([SG, "hook", "no-such-agent"], input=b"{}", capture_output=True)
    check(p.returncode == 2 and p.stdout == b"", f"an unknown agent exits 2 (a block) and says why: {p.returncode}")


golden()
admission()
approval()
print_config()
docs_snippets()
unknown_agent()
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
