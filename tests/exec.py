#!/usr/bin/env python3
"""exec.py - `shellgate run` and `shellgate session` end to end, with real
subprocesses (no mocks): refused constructs run nothing, timeouts end a tree whose
children detach, exact truncation on both streams, bounded memory, environment
scrubbing, resource limits, sessions (persistence, busy, eviction), admission,
word expansion against bash, and the bwrap sandbox (a sandbox that cannot start
fails; inside, a write outside the workspace fails and the network is gone).

Every command run is a harmless stand-in (tests/exec/sgx_helper.c, echo, cat...),
given to shellgate as one argv element; bash is only ever run on the stand-in.
usage: exec.py SHELLGATE HELPER SRCDIR OUTSIDE_DIR"""
import ast
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

SG, HELPER, SRC, OUTSIDE = sys.argv[1:5]
PACK = os.path.join(SRC, "tests/exec/exec.rules")
PACK_NET = os.path.join(SRC, "tests/exec/exec_net.rules")
PACK_LIMIT = os.path.join(SRC, "tests/exec/exec_limit.rules")
PACK_OUT = os.path.join(SRC, "tests/exec/exec_outcomes.rules")
T = tempfile.mkdtemp(prefix="sgx-test-")
os.makedirs(OUTSIDE, exist_ok=True)
WS = os.path.join(T, "ws")
# programs outside /tmp: inside the sandbox /tmp is private (only the workspace shows)
BIN = os.path.join(OUTSIDE, "bin-%d" % os.getpid())
HOME = os.path.join(T, "home")
for d in (WS, os.path.join(WS, "src"), BIN, HOME, os.path.join(T, "state"), os.path.join(T, "config")):
    os.makedirs(d, exist_ok=True)
for f in ("a.c", "b.c", "notes.txt", "src/main.c", ".hidden"):
    open(os.path.join(WS, f), "w").close()
os.symlink(HELPER, os.path.join(BIN, "sgx_helper"))
os.symlink(HELPER, os.path.join(BIN, "fake-bwrap"))

ENV = {
    "PATH": BIN + ":/usr/bin:/bin",
    "HOME": HOME,
    "LANG": "C.UTF-8",
    "XDG_STATE_HOME": os.path.join(T, "state"),
    "XDG_CONFIG_HOME": os.path.join(T, "config"),
    "OPENAI_API_KEY": "sk-fake-0123456789",
    "AWS_SECRET_ACCESS_KEY": "fake-aws-secret",
    "GITHUB_TOKEN": "ghp_fake",
    "SGX_TEST_VISIBLE": "yes",
}
if os.environ.get("ASAN_OPTIONS"):
    ENV["ASAN_OPTIONS"] = os.environ["ASAN_OPTIONS"]

passed = failed = 0


def check(cond, what, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s%s" % (what, ("\n  " + str(detail)[:2000]) if detail else ""), file=sys.stderr)


def run(cmd, *opts, pack=PACK, js=True, cwd=WS, env=None, timeout=90):
    argv = [SG, "run", "-p", pack] + (["--json"] if js else []) + list(opts) + ["--", cmd]
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, cwd=cwd, env=env or ENV, timeout=timeout)
    dt = time.monotonic() - t0
    if not js:
        return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace"), dt
    try:
        j = json.loads(r.stdout)
    except ValueError:
        j = {"_raw": r.stdout[:400], "_err": r.stderr[:400]}
    return r.returncode, j, r.stderr.decode("utf-8", "replace"), dt


def session(*args, env=None):
    r = subprocess.run([SG, "session"] + list(args), capture_output=True, text=True, env=env or ENV, cwd=WS)
    return r.returncode, r.stdout, r.stderr


def gone(pid):
    """No process with this pid runs the helper any more, and it is no zombie either:
    ended and reaped (by the run that was its subreaper).  A moment is allowed for
    the reaping."""
    deadline = time.monotonic() + 2
    while True:
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                helper = b"sgx_helper" in f.read()
            if state != b"Z" and not helper:
                return True            # the pid was taken by another process
        except (OSError, IndexError):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def procs_with(token):
    """pids whose command line holds token."""
    found = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if token.encode() in f.read():
                    found.append(int(p))
        except OSError:
            pass
    return found


def pat(n, start=0):
    """sgx_helper spam's bytes start..start+n."""
    return bytes(10 if i % 64 == 63 else 97 + i % 26 for i in range(start, start + n))


# ---- the JSON result and the exit status ---------------------------------------------
rc, j, _, _ = run("echo hello world")
FIELDS = ["status", "command", "stdout", "stderr", "return_code", "has_errors", "duration_seconds", "timeout",
          "cwd", "output_truncated", "stdout_bytes", "stderr_bytes", "timed_out", "rate_limited",
          "wait_time_seconds", "sandboxed", "warnings", "decision", "rule", "message"]
check(all(k in j for k in FIELDS), "json has every field", [k for k in FIELDS if k not in j])
check(rc == 0 and j.get("status") == "success" and j.get("stdout") == "hello world\n" and j.get("return_code") == 0
      and j.get("has_errors") is False and j.get("timeout") == 30 and j.get("cwd") == WS
      and j.get("decision") == "allow" and j.get("rule") == "exec_test:tools", "json success", j)
rc, j, _, _ = run("false")
check(rc == 1 and j.get("return_code") == 1 and j.get("has_errors") is True and j.get("status") == "success",
      "exit status mirrors the command's", j)
rc, out, err, _ = run("sgx_helper argv 'a b' c; false", js=False)
check(rc == 1 and out == b"[a b][c]\n" and "shellgate: exit 1 in" in err, "streaming: output, summary, status",
      (rc, out, err))
rc, j, _, _ = run("sgx_helper spam err 10; echo x >&2")
check(j.get("stderr") == pat(10).decode() + "x\n" and j.get("stderr_bytes") == 12, "stderr captured", j)

# ---- a refused construct runs nothing -------------------------------------------------
for i, (line, word) in enumerate([
        ("sgx_helper write M && for x in a; do echo $x; done", "for"),
        ("sgx_helper write M && rm x", "rm is not run here"),
        ("sgx_helper write M; eval echo hi", "builtin 'eval'"),
        ("sgx_helper write M | cat; sgx_helper sleep 1 &", "background"),
        ("sgx_helper write M; cat <<EOF\nx\nEOF", "here-documents"),
        ("sgx_helper write M; f() { echo; }; f", "functions"),
        ("sgx_helper write M; echo {a,b}", "brace expansion"),
        ("sgx_helper write M; echo $((1+2))", "arithmetic"),
        ("sgx_helper write M; cat <(echo x)", "process substitution"),
        ("sgx_helper write M; { echo a; } > out", "redirection after"),
        ("sgx_helper write M; echo `echo x`", "backquoted"),
        ("sgx_helper write M; echo $1", "positional"),
        ("sgx_helper write M; export PATH=/tmp", "run_refused_vars"),
        ("sgx_helper write M; LD_PRELOAD=/x.so", "run_refused_vars"),
        ("sgx_helper write M; export PYTHONPATH=/tmp/lib", "run_refused_vars"),
        ("sgx_helper write M; cd -", "cd -"),
        ("sgx_helper write M; [[ -f x ]]", "[["),
        ]):
    m = os.path.join(WS, "M")
    rc, j, _, _ = run(line.replace(" M", " " + m))
    check(rc == 126 and j.get("status") == "error" and not os.path.exists(m) and word in j.get("message", "")
          and j.get("programs") == 0, "refused before anything runs: %r" % line, j)

rc, j, _, _ = run("echo made > $(echo sub.txt); cat sub.txt")
check(rc == 0 and j.get("stdout") == "made\n" and os.path.exists(os.path.join(WS, "sub.txt")),
      "a redirection target from $(...)", j)

# ---- a $(...) is decided with its line, before anything of the line runs ----------------
# (its command as a line of its own and as check reads it; a program or a name it
# would give is refused; so is a command using its output after a program ran)
M = os.path.join(WS, "M")
for line, word, decision in [
        ("sgx_helper write M; echo $(whoami)", "$(whoami) is not allowed on its own", "deny"),
        ("sgx_helper write M; echo $(echo $(whoami))", "$(whoami) is not allowed on its own", "deny"),
        ("sgx_helper write M; echo $(sgx_helper argv ask-me)", "not allowed on its own", "ask"),
        ("sgx_helper write M | cat $(whoami)", "not allowed on its own", "deny"),
        ("echo $(sgx_helper write M) $(whoami)", "not allowed on its own", "deny"),
        ("sgx_helper write M; X=$(echo eval); $X echo hi", "known only when it runs", "deny"),
        ("X=$(sgx_helper write M; echo eval); $X echo hi", "program name comes from a command substitution",
         "deny"),
        ("sgx_helper write M; export $(echo PATH)=/tmp", "known only when it runs", "deny"),
        ("export $(sgx_helper write M; echo PATH)=/tmp", "the name export sets comes from", "deny"),
        ("unset $(sgx_helper write M; echo HOME)", "the name unset removes comes from", "deny"),
        ("sgx_helper write M; sgx_helper argv $(echo ask-me)", "after an earlier command of the line", "deny"),
        ("sgx_helper write M; Y=$(echo ask-me); sgx_helper argv $Y", "after an earlier command", "deny"),
        ("X=$(echo ask-me); sgx_helper write M; sgx_helper argv $X", "`sgx_helper argv $X` uses what", "deny"),
        ("sgx_helper write M; cd $(echo src); sgx_helper argv *", "after an earlier command", "deny"),
        ("cd $(echo src); sgx_helper write M; sgx_helper argv *", "`sgx_helper argv *` uses what", "deny"),
        ]:
    if os.path.exists(M):
        os.unlink(M)
    rc, j, _, _ = run(line.replace(" M", " " + M))
    check(rc == 126 and j.get("status") == "error" and not os.path.exists(M) and word in j.get("message", "")
          and j.get("decision") == decision and j.get("programs") == 0 and j.get("stdout") == "",
          "a $(...) refused before anything runs: %r" % line, j)

# the line as check reads it is decided too: the default pack allows sh -c '' but not a
# script from a $(...)
rc, j, _, _ = run("sh -c \"$(echo echo PAYLOAD-RAN)\"", pack="default")
check(rc == 126 and "PAYLOAD-RAN" not in j.get("stdout", "") and j.get("decision") == "deny"
      and j.get("rule") == "dynamic" and j.get("programs") == 0, "a $(...) is decided as check decides it", j)

# a command whose substitutions come first is decided again with their output, before
# it (or anything after it) runs
rc, j, _, _ = run("sgx_helper argv $(echo ask-me); sgx_helper write %s" % M)
check(rc == 126 and j.get("stdout") == "" and "stopped before" in j.get("message", "") and not os.path.exists(M)
      and j.get("decision") == "ask", "a $(...) value is decided before its command runs", j)
# every outcome of an earlier command is decided before anything runs: the line is
# not stopped half run when a failure's $?, a cd that does not get there or a
# branch not taken gives a later command other words
# (other: the reading refused is not the one the line runs on if everything succeeds)
for line, decision, rule, other in [
        ("sgx_helper write M; false; sgx_helper argv code-$?", "ask", "exec_outcomes:status_ask", True),
        ("sgx_helper write M; sgx_helper argv x; sgx_helper argv code-$?", "ask", "exec_outcomes:status_ask", True),
        ("sgx_helper write M; cd missing-dir; sgx_helper argv *", "deny", "exec_outcomes:top_only", True),
        ("sgx_helper write M; cd src; sgx_helper argv *", "deny", "exec_outcomes:top_only", True),
        ("sgx_helper write M; cd src || sgx_helper argv *", "deny", "exec_outcomes:top_only", False),
        ("X=set-a; sgx_helper write M; false && X=b; sgx_helper argv $X", "deny", "exec_outcomes:branch_deny", True),
        ("X=set-a; sgx_helper write M; (false || export X=b; sgx_helper argv $X)", "deny",
         "exec_outcomes:branch_deny", True),
        ("sgx_helper write M; false | sgx_helper argv code-$?", "ask", "exec_outcomes:status_ask", True),
        ("sgx_helper write M; X=1; false | sgx_helper argv code-$?", "allow", None, False),
        ("sgx_helper write M; ! true; sgx_helper argv code-$? | cat", "ask", "exec_outcomes:status_ask", False)]:
    if os.path.exists(M):
        os.unlink(M)
    rc, j, _, _ = run(line.replace(" M", " " + M), pack=PACK_OUT)
    if decision == "allow":
        check(rc == 0 and os.path.exists(M) and j.get("stdout", "").endswith("\n[code-0]\n"), "every outcome allowed: %r" % line, (rc, j))
        continue
    check(rc == 126 and not os.path.exists(M) and j.get("programs") == 0 and j.get("decision") == decision
          and j.get("rule") == rule and other == any("another outcome" in w for w in j.get("warnings", [])),
          "another outcome of an earlier command is decided before anything runs: %r" % line, j)
# where every outcome is allowed, the line runs as bash runs it
rc, j, _, _ = run("false; echo rc=$?", pack=PACK_OUT)
check(rc == 0 and j.get("stdout") == "rc=1\n", "a failure's $? is read as it is", j)
rc, j, _, _ = run("cd src && sgx_helper argv *", pack=PACK_OUT)
check(rc == 0 and j.get("stdout") == "[main.c]\n", "a cd that gates its command with && decides one directory", j)
if os.path.exists(M):
    os.unlink(M)
rc, j, _, _ = run("sgx_helper write %s; cd src; sgx_helper argv *.c" % M, pack=PACK_OUT)
check(rc == 0 and os.path.exists(M) and j.get("stdout", "").endswith("\n[main.c]\n"), "both directories allowed: the line runs", (rc, j))
os.unlink(M)
rc, j, _, _ = run("sgx_helper argv x; sgx_helper argv x; sgx_helper argv x; sgx_helper argv x; echo $? $? $?",
                  pack=PACK_OUT)
check(rc == 0 and j.get("stdout") == "[x]\n[x]\n[x]\n[x]\n0 0 0\n", "many outcomes of one status read once", j)

rc, j, _, _ = run("X=$(echo hi); cd $(echo src) && sgx_helper argv $X \"$(echo b c)\" * $PWD")
check(rc == 0 and j.get("stdout") == "[hi][b c][main.c][%s]\n" % os.path.join(WS, "src"),
      "values of $(...) in the first commands run", j)

# ---- timeouts end the whole tree, detached children included -------------------------
pidf = os.path.join(T, "daemon.pid")
rc, j, _, dt = run("sgx_helper detach %s 30 30" % pidf, "--timeout", "1", "--grace", "0.5")
time.sleep(0.2)
pid = int(open(pidf).read()) if os.path.exists(pidf) else 0
check(rc == 124 and j.get("timed_out") is True and j.get("status") == "error" and dt < 5, "timeout", (rc, j, dt))
check(pid > 0 and gone(pid), "the detached grandchild is gone after a timeout", pid)
rc, j, _, dt = run("sgx_helper ignore-term 30", "--timeout", "1", "--grace", "0.5")
check(rc == 124 and j.get("timed_out") is True and dt < 4, "SIGKILL after the grace period", (rc, dt))
os.unlink(pidf)
rc, j, _, dt = run("sgx_helper detach %s 0.2 30" % pidf)
time.sleep(0.2)
pid = int(open(pidf).read()) if os.path.exists(pidf) else 0
check(rc == 0 and pid > 0 and gone(pid) and dt < 5 and any("left running" in w for w in j.get("warnings", [])),
      "a child left running after the command ends is ended", (rc, pid, j.get("warnings"), dt))
check(not procs_with(pidf), "no helper of these runs is left", procs_with(pidf))
os.unlink(pidf)
sig = subprocess.Popen([SG, "run", "-p", PACK, "--json", "--", "sgx_helper detach %s 30 30" % pidf], cwd=WS, env=ENV,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
for _ in range(100):
    if os.path.exists(pidf) and os.path.getsize(pidf):
        break
    time.sleep(0.05)
sig.send_signal(15)
out, _ = sig.communicate(timeout=30)
pid = int(open(pidf).read())
j = json.loads(out) if out else {}
check(sig.returncode == 128 + 15 and j.get("status") == "error" and gone(pid)
      and any("signal 15" in w for w in j.get("warnings", [])), "SIGTERM to shellgate ends the tree first",
      (sig.returncode, j, gone(pid)))
r = subprocess.run([SG, "run", "--inside", "7", "--", "echo hi"], capture_output=True, env=ENV, cwd=WS)
check(r.returncode == 64 and r.stdout == b"", "--inside without its report pipe is refused", r.stderr)
rc, j, _, _ = run("sgx_helper sleep 5", "--timeout", "700")
check(rc == 64, "--timeout is at most 600 s", rc)

# ---- output caps: exact, per stream, bounded memory, valid JSON -----------------------
CAP = 4096


def marker(dropped):
    return b"\n... [truncated %d bytes] ...\n" % dropped


rc, j, _, _ = run("sgx_helper spam out 100000; sgx_helper spam err 50000", "--max-output", str(CAP))
want_out = pat(CAP // 2) + marker(100000 - CAP) + pat(CAP // 2, 100000 - CAP // 2)
want_err = pat(CAP // 2) + marker(50000 - CAP) + pat(CAP // 2, 50000 - CAP // 2)
check(j.get("stdout", "").encode() == want_out and j.get("stderr", "").encode() == want_err
      and j.get("stdout_bytes") == 100000 and j.get("stderr_bytes") == 50000 and j.get("output_truncated") is True,
      "head+tail truncation, exact, both streams", {k: j.get(k) for k in ("stdout_bytes", "stderr_bytes")})
rc, j, _, _ = run("sgx_helper spam out %d" % CAP, "--max-output", str(CAP))
check(j.get("stdout", "").encode() == pat(CAP) and j.get("output_truncated") is False, "exactly at the cap: whole")
rc, j, _, _ = run("sgx_helper spam out %d" % (CAP + 1), "--max-output", str(CAP))
check(j.get("stdout", "").encode() == pat(CAP // 2) + marker(1) + pat(CAP // 2, CAP // 2 + 1),
      "one byte over the cap", j.get("stdout"))
rc, j, _, _ = run("sgx_helper spam out 10000", "--max-output", str(CAP), "--truncate", "head")
check(j.get("stdout", "").encode() == pat(CAP) + marker(10000 - CAP), "head-only truncation", j.get("stdout"))
rc, out, err, _ = run("sgx_helper spam out 100000", "--max-output", str(CAP), js=False)
check(out == pat(CAP // 2) + marker(100000 - CAP) + pat(CAP // 2, 100000 - CAP // 2) and "truncated" in err,
      "streaming truncation is the same bytes", (len(out), err))
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
rc, j, _, _ = run("sgx_helper spam out 300000000 | cat", timeout=120)
after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
check(j.get("stdout_bytes") == 300000000 and len(j.get("stdout", "")) < 70000 and after < 100 * 1024,
      "300 MB of output in bounded memory", (j.get("stdout_bytes"), before, after))
rc, j, _, _ = run("sgx_helper bytes")
check(j.get("stdout") == "ok \ufffd\ufffd \x00 \x01 \u00e9 \ufffd\ufffd end\n", "invalid UTF-8 made safe",
      j.get("stdout"))

# ---- the environment: an allowlist, no secrets ----------------------------------------
rc, j, _, _ = run("sgx_helper env")
env = dict(l.split("=", 1) for l in j.get("stdout", "").splitlines() if "=" in l)
check("OPENAI_API_KEY" not in env and "AWS_SECRET_ACCESS_KEY" not in env and "GITHUB_TOKEN" not in env,
      "secrets never reach the command", sorted(env))
check(env.get("HOME") == HOME and env.get("PATH") == ENV["PATH"] and env.get("LANG") == "C.UTF-8"
      and env.get("PWD") == WS and env.get("SGX_TEST_VISIBLE") == "yes", "the allowlist and the pack's run_env", env)
rc, j, _, _ = run("echo [$OPENAI_API_KEY]")
check(j.get("stdout") == "[]\n", "a secret does not expand either", j.get("stdout"))
rc, j, _, _ = run("printenv GITHUB_TOKEN", "--env", "GITHUB_TOKEN")
check(j.get("stdout") == "ghp_fake\n", "--env adds a name", j.get("stdout"))
rc, j, _, _ = run("A=1 sgx_helper env")
check("A=1" in j.get("stdout", "").splitlines(), "prefix assignments reach the command")

# ---- resource limits ---------------------------------------------------------------------
rc, j, _, _ = run("sgx_helper fsize 3000000 big.bin", "--rlimit", "fsize=1m")
check(rc == 3 and "File too large" in j.get("stdout", "") and os.path.getsize(os.path.join(WS, "big.bin")) <= 1 << 20,
      "fsize", j.get("stdout"))
os.unlink(os.path.join(WS, "big.bin"))
rc, j, _, _ = run("sgx_helper nofile 100", "--rlimit", "nofile=16")
check(rc == 3 and int(j.get("stdout", "99")) <= 13, "nofile", j.get("stdout"))
rc, j, _, _ = run("sgx_helper alloc 800000000", "--rlimit", "as=200m")
check(rc == 3 and "malloc failed" in j.get("stdout", ""), "address space", j.get("stdout"))
rc, j, _, dt = run("sgx_helper spin", "--rlimit", "cpu=1", "--timeout", "20")
check(rc == 128 + 24 and dt < 10, "cpu seconds (SIGXCPU)", (rc, dt))
rc, j, _, _ = run("sgx_helper rlimit nproc", "--rlimit", "nproc=77")
check(j.get("stdout") == "77\n", "nproc is set (root is not held to it)", j.get("stdout"))
rc, j, _, _ = run("sgx_helper rlimit nofile")
check(j.get("stdout") == "4096\n", "nofile defaults to 4096", j.get("stdout"))

# ---- word expansion: the same argv as bash gives (bash runs only the stand-in) ----------
EXPANSIONS = [
    "sgx_helper argv a 'b c' \"d e\" f\\ g ''",
    "sgx_helper argv *.c src/* *.none '*.c' \\*.c .*",
    "sgx_helper argv ~ ~/x \"~\" ~nouser/x a=~/b c:~/d a=x:~/e ~root ~+/x",
    "X='p  q'; sgx_helper argv $X \"$X\" ${X} \"${X}z\"",
    "X='*.c'; sgx_helper argv $X \"$X\"",
    "sgx_helper argv ${UNSET:-dflt} ${UNSET-d2} ${HOME:+set} ${UNSET:+no} ${#HOME} x${UNSET}y",
    "E=; sgx_helper argv $E \"$E\" a$E",
    "sgx_helper argv $'tab\\there' $'\\x41\\101\\u00e9' $\"dq\"",
    "false; sgx_helper argv $? ; true; sgx_helper argv $?",
    "sgx_helper argv $(sgx_helper argv in 'x y') \"$(sgx_helper argv q)\"",
    "cd src && sgx_helper argv * $PWD; sgx_helper argv *.c",
    "(cd src; sgx_helper argv *); sgx_helper argv *.c",
    "export V=1; sgx_helper env | grep ^V=",
    "sgx_helper argv a; ! true; sgx_helper argv $?",
    "sgx_helper argv x | tr x y |& cat",
    "sgx_helper argv \"$HOME\"/'$HOME' \\$HOME",
    "sgx_helper argv a\\\nb",
    "cat <<< \"$HOME here\"",
]
benv = {"PATH": ENV["PATH"], "HOME": HOME, "LC_ALL": "C.UTF-8"}
for line in EXPANSIONS:
    b = subprocess.run(["bash", "-c", line], capture_output=True, cwd=WS, env=benv, timeout=30)
    rc, j, _, _ = run(line, env=benv)
    check(j.get("stdout", "").encode() == b.stdout and rc == b.returncode, "expands as bash: %r" % line,
          (j.get("stdout"), b.stdout, j.get("message")))

# ---- sessions -------------------------------------------------------------------------------
SD = os.path.join(T, "sessions")
S = ["--session-dir", SD]
rc, j, _, _ = run("cd src && export FOO=bar", "--session", "s1", *S)
check(rc == 0 and j.get("session_cwd") == os.path.join(WS, "src"), "a session records cd", j)
rc, j, _, _ = run("pwd; printenv FOO; echo $FOO", "--session", "s1", *S)
check(j.get("stdout") == "%s\nbar\nbar\n" % os.path.join(WS, "src"), "cwd and variables persist", j.get("stdout"))
rc, out, _ = session("show", "--session", "s1", *S)
st = json.loads(out) if rc == 0 else {}
check(st.get("env") == {"FOO": "bar"} and st.get("cwd") == os.path.join(WS, "src") and st.get("roots") == [WS],
      "only what the agent changed is recorded", st)
rc, j, _, _ = run("echo hi; sgx_helper env > /dev/null", "--session", "s2", *S)
rc, out, _ = session("show", "--session", "s2", *S)
check(json.loads(out).get("env") == {} and json.loads(out).get("unset") == [], "a fresh session records nothing", out)
rc, out, err = session("set", "GREETING=hello world", "--session", "s1", *S)
check(rc == 0, "session set", err)
rc, j, _, _ = run("echo $GREETING; printenv GREETING", "--session", "s1", *S)
check(j.get("stdout") == "hello world\nhello world\n" and "'hello' 'world'" in j.get("expanded", ""),
      "a session variable expands, and the policy sees the value", j)
session("set", "CMD=rm", "--session", "s1", *S)
rc, j, _, _ = run("$CMD notes.txt", "--session", "s1", *S)
check(rc == 126 and j.get("rule") == "exec_test:no_rm" and os.path.exists(os.path.join(WS, "notes.txt")),
      "the policy decides on the expanded value", j)
for name in ("PATH", "LD_PRELOAD", "LD_ANYTHING", "PYTHONPATH", "NODE_PATH", "BASH_ENV", "ENV", "IFS", "PWD"):
    rc, _, err = session("set", name + "=/tmp/x", "--session", "s1", "-p", PACK, *S)
    check(rc == 1 and "refusing" in err, "session set refuses %s" % name, err)
# the names that make a JVM, .NET, a build tool or an interpreter run other code
# (std/sets code_vars, toolchain_vars, run_refused_vars)
for name in ("JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_OPTS", "GRADLE_OPTS", "JAVA_OPTS",
             "DOTNET_STARTUP_HOOKS", "CORECLR_PROFILER_PATH_64", "GOFLAGS", "GOENV", "CGO_LDFLAGS", "MAKEFLAGS",
             "MAKEFILES", "RUSTFLAGS", "RUSTC_WRAPPER", "CARGO_ENCODED_RUSTFLAGS", "CC", "CXX", "CFLAGS",
             "CMAKE_CXX_COMPILER_LAUNCHER", "npm_config_node_options", "NPM_CONFIG_NODE_OPTIONS",
             "PYTHONBREAKPOINT", "PERL5DB", "LUA_INIT", "TAR_OPTIONS", "JAVA_HOME"):
    rc, _, err = session("set", name + "=/nonexistent/PAYLOAD", "--session", "s1", "-p", PACK, *S)
    check(rc == 1 and "refusing" in err, "session set refuses %s" % name, err)
    for line in ("sgx_helper write %s; export %s=/nonexistent/PAYLOAD" % (M, name),
                 "sgx_helper write %s; %s=/nonexistent/PAYLOAD" % (M, name)):
        rc, j, _, _ = run(line)
        check(rc == 126 and not os.path.exists(M) and "run_refused_vars" in j.get("message", "")
              and j.get("programs") == 0, "refused before anything runs: %r" % line, j)
rc, j, _, _ = run("export CCX=1 MY_CC=2 GOFLAGSX=3; printenv CCX MY_CC GOFLAGSX")
check(rc == 0 and j.get("stdout") == "1\n2\n3\n", "names that only start or end alike are not refused", j)
rc, _, _ = session("unset", "GREETING", "--session", "s1", *S)
rc, j, _, _ = run("echo [$GREETING]", "--session", "s1", *S)
check(j.get("stdout") == "[]\n", "session unset", j.get("stdout"))
rc, j, _, _ = run("unset LANG; printenv LANG", "--session", "s3", *S)
rc, out, _ = session("show", "--session", "s3", *S)
check(json.loads(out).get("unset") == ["LANG"], "unsetting an inherited variable is recorded", out)
rc, j, _, _ = run("printenv LANG", "--session", "s3", *S)
check(rc == 1 and j.get("stdout") == "", "and stays unset", j)
rc, j, _, _ = run("cd /tmp", "--session", "s4", "--root", WS, *S)
rc, out, _ = session("show", "--session", "s4", *S)
check(json.loads(out).get("cwd") == WS and any("not applied" in w for w in j.get("warnings", [])),
      "a cd outside the roots is not applied", (out, j.get("warnings")))
# ... to the session; within the line it is, as the policy decided the rest of the line
# there (docs/executor.md, "Sessions")
rc, j, _, _ = run("cd %s && pwd" % OUTSIDE, "--session", "s4", "--root", WS, *S)
rc2, out, _ = session("show", "--session", "s4", *S)
check(rc == 0 and j.get("stdout") == os.path.realpath(OUTSIDE) + "\n" and json.loads(out).get("cwd") == WS
      and any("not applied" in w for w in j.get("warnings", [])), "a cd outside the roots holds for its line only",
      (j, out))
busy = subprocess.Popen([SG, "run", "-p", PACK, "--session", "busy", *S, "--", "sgx_helper sleep 3"], cwd=WS,
                        env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(0.8)
rc, j, _, dt = run("echo hi", "--session", "busy", *S)
check(rc == 75 and "session busy" in j.get("message", "") and dt < 2, "a second caller: session busy", (rc, j, dt))
rc, out, err = session("show", "--session", "busy", *S)
check(rc == 75 and "busy" in err, "session show on a busy session", err)
busy.wait()
rc, out, _ = session("reset", "--session", "s1", *S)
rc, out, _ = session("show", "--session", "s1", *S)
check(json.loads(out).get("cwd") is None and json.loads(out).get("env") == {}, "session reset", out)
SD2 = os.path.join(T, "lru")
for sid in ("l1", "l2", "l3"):
    run("echo %s" % sid, "--session", sid, "--session-dir", SD2, "--max-sessions", "2")
    time.sleep(0.05)
rc, out, _ = session("list", "--session-dir", SD2)
ids = [l.split("\t")[0] for l in out.splitlines()]
check(ids == ["l2", "l3"], "LRU eviction past --max-sessions", out)
run("echo", "--session", "l2", "--session-dir", SD2, "--max-sessions", "2")
run("echo", "--session", "l4", "--session-dir", SD2, "--max-sessions", "2")
rc, out, _ = session("list", "--session-dir", SD2)
check([l.split("\t")[0] for l in out.splitlines()] == ["l2", "l4"], "the least recently used goes first", out)
SD3 = os.path.join(T, "ttl")
run("cd src", "--session", "t1", "--session-dir", SD3)
time.sleep(2.2)
rc, j, _, _ = run("pwd", "--session", "t2", "--session-dir", SD3, "--session-ttl", "1")
rc, out, _ = session("list", "--session-dir", SD3)
check([l.split("\t")[0] for l in out.splitlines()] == ["t2"], "TTL eviction", out)
run("cd src", "--session", "t3", "--session-dir", SD3)
time.sleep(2.2)
rc, j, _, _ = run("pwd", "--session", "t3", "--session-dir", SD3, "--session-ttl", "1")
check(j.get("stdout") == WS + "\n" and any("expired" in w for w in j.get("warnings", [])),
      "an expired session starts afresh", j)

# a session's variables are checked against the pack of the run that uses them: one a
# laxer pack let `session set` store, or a hand-edited file, refuses the run
LAX = os.path.join(T, "lax.rules")
with open(LAX, "w") as f:
    f.write('pack lax version 1\nset run_refused_vars = { PATH }\ndefault allow "anything"\n')
SDX = os.path.join(T, "edited")
rc, _, err = session("set", "PAGER=/nonexistent/PAYLOAD", "--session", "x1", "--session-dir", SDX, "-p", LAX)
check(rc == 0, "a laxer pack lets session set store PAGER", err)
rc, j, _, _ = run("sgx_helper write %s" % M, "--session", "x1", "--session-dir", SDX)
check(rc == 126 and "PAGER" in j.get("message", "") and j.get("rule") == "session" and not os.path.exists(M)
      and j.get("programs") == 0 and j.get("status") == "error", "run refuses a session variable its pack refuses", j)
rc, j, _, _ = run("sgx_helper write %s" % M, "--session", "x1", "--session-dir", SDX, pack=LAX)
check(rc == 0 and os.path.exists(M), "the laxer pack's own run takes it", j)
os.unlink(M)
run("export FOO=bar", "--session", "x2", "--session-dir", SDX)
SF = os.path.join(SDX, "x2.json")
for name, where in (("LD_PRELOAD", "env"), ("PYTHONPATH", "env"), ("BASH_ENV", "env"), ("PATH", "unset"),
                    ("PWD", "env")):
    with open(SF) as f:
        orig = f.read()
    st = json.loads(orig)
    if where == "env":
        st["env"][name] = "/nonexistent/PAYLOAD.so"
    else:
        st["unset"].append(name)
    with open(SF, "w") as f:
        json.dump(st, f)
    rc, out, err, _ = run("sgx_helper write %s; sgx_helper env" % M, "--session", "x2", "--session-dir", SDX,
                          js=False)
    check(rc == 126 and not os.path.exists(M) and b"PAYLOAD" not in out and "not run" in err and name in err,
          "a hand-edited session that %s %s refuses the run" % (where, name), (rc, out, err))
    with open(SF, "w") as f:
        f.write(orig)
rc, j, _, _ = run("printenv FOO", "--session", "x2", "--session-dir", SDX)
check(rc == 0 and j.get("stdout") == "bar\n", "the session runs again once the name is gone", j)

# ---- admission: rate limits and approvals ----------------------------------------------------
STATE = os.path.join(T, "admission")
rc, j, _, _ = run("echo one", "--state", STATE, pack=PACK_LIMIT)
rc2, j2, _, _ = run("echo two", "--state", STATE, pack=PACK_LIMIT)
check(rc == 0 and rc2 == 126 and j2.get("rate_limited") is True and j2.get("wait_time_seconds", 0) > 3000
      and j2.get("stdout") == "" and j2.get("rule") == "limit:hourly", "a rate limit refuses the second run", j2)
rc, j, _, _ = run("sgx_helper argv ask-me", "--state", STATE)
aid = j.get("approval_id", "")
check(rc == 126 and j.get("decision") == "ask" and len(aid) == 32 and j.get("stdout") == "", "an ask waits", j)
a = subprocess.run([SG, "approve", aid, "--once", "--state", STATE], capture_output=True, text=True, env=ENV)
rc, j, _, _ = run("sgx_helper argv ask-me", "--state", STATE)
check(a.returncode == 0 and rc == 0 and j.get("stdout") == "[ask-me]\n", "approved once, it runs", (a.stderr, j))
rc, j, _, _ = run("sgx_helper argv ask-me", "--state", STATE)
check(rc == 126 and j.get("decision") == "ask", "and asks again", j)

# ---- a signed policy: run loads policies as check does --------------------------------------
KEY = os.path.join(T, "team")
BUNDLE = os.path.join(T, "exec.sgb")
steps = [[SG, "keygen", "-o", KEY], [SG, "bundle", "build", "-o", BUNDLE, PACK],
         [SG, "bundle", "sign", "--key", KEY, BUNDLE]]
made = all(subprocess.run(a, capture_output=True, env=ENV).returncode == 0 for a in steps)
rc, j, err, _ = run("echo signed", "--require-signature", KEY + ".pub", js=False)
check(made and rc == 65 and j == b"", "--require-signature refuses an unsigned policy, nothing runs", (rc, err))
rc, j, _, _ = run("echo signed", "--require-signature", KEY + ".pub", pack=BUNDLE)
check(rc == 0 and j.get("stdout") == "signed\n", "and runs a signed bundle", j)

# ---- the sandbox -----------------------------------------------------------------------------
mark = os.path.join(WS, "sandbox-marker")
rc, j, _, _ = run("sgx_helper write %s" % mark, "--sandbox", "bwrap", "--bwrap", os.path.join(BIN, "fake-bwrap"))
check(rc == 125 and j.get("status") == "error" and "sandbox did not run" in j.get("message", "")
      and "namespace" in j.get("message", "") and not os.path.exists(mark) and j.get("sandboxed") is False,
      "a sandbox that cannot start fails, and nothing runs", j)
rc, j, _, _ = run("sgx_helper write %s" % mark, "--sandbox", "bwrap", "--bwrap", "/nonexistent/bwrap")
check(rc == 125 and "not found" in j.get("message", "") and not os.path.exists(mark), "no bwrap at all", j)
rc, j, _, _ = run("sgx_helper write %s" % mark, "--sandbox", "auto", "--bwrap", os.path.join(BIN, "fake-bwrap"))
check(rc == 0 and j.get("sandboxed") is False and os.path.exists(mark)
      and any("no sandbox" in w for w in j.get("warnings", [])), "auto without a sandbox says so", j)
os.unlink(mark)
# the probe: none of the caller's environment, and a bwrap that never answers is one
# that does not start, within the probe's 10 s, never a run that hangs
stuck = os.path.join(BIN, "stuck-bwrap")
probe_env = os.path.join(T, "probe-env")
with open(stuck, "w") as f:
    f.write("#!%s\nimport os, sys, time\nopen(%r, 'w').write(repr(sorted(os.environ)))\n"
            "sys.stderr.write('stuck\\n'); sys.stderr.flush()\ntime.sleep(120)\n" % (sys.executable, probe_env))
os.chmod(stuck, 0o755)
rc, j, _, dt = run("sgx_helper write %s" % mark, "--sandbox", "auto", "--bwrap", stuck)
check(rc == 0 and j.get("sandboxed") is False and os.path.exists(mark) and dt < 40
      and any("did not start within 10 seconds" in w for w in j.get("warnings", [])),
      "auto: a probe that never ends is a sandbox that does not start", j)
seen = open(probe_env).read() if os.path.exists(probe_env) else ""
# (Python itself adds LC_CTYPE when no locale is set: PEP 538)
check(seen and set(ast.literal_eval(seen)) <= {"PATH", "LC_CTYPE"}, "the probe gets none of the caller's environment", seen)
if os.path.exists(mark):
    os.unlink(mark)
probe = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
                        "true"], capture_output=True, text=True) if shutil.which("bwrap") else None
if not probe or probe.returncode != 0:
    print("SKIP: bwrap cannot start here (%s): the sandboxed runs are not tested"
          % (probe.stderr.strip() if probe else "not installed"))
else:
    outside = os.path.join(OUTSIDE, "sgx-outside-%d" % os.getpid())
    rc, j, _, _ = run("sgx_helper write %s; sgx_helper write %s" % (outside, mark), "--sandbox", "bwrap")
    check(j.get("sandboxed") is True and "Read-only file system" in j.get("stdout", "") and not os.path.exists(outside)
          and os.path.exists(mark) and rc == 0, "inside the sandbox: the workspace writes, outside it does not", j)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    port = srv.getsockname()[1]
    rc, j, _, _ = run("sgx_helper connect %d" % port)
    check(rc == 0 and j.get("stdout") == "connected\n", "without a sandbox the port answers", j)
    rc, j, _, _ = run("sgx_helper connect %d" % port, "--sandbox", "bwrap")
    check(rc == 3 and j.get("sandboxed") is True and "cannot connect" in j.get("stdout", ""),
          "inside the sandbox the network is unreachable", j)
    rc, j, _, _ = run("sgx_helper connect %d" % port, "--sandbox", "bwrap", pack=PACK_NET)
    check(rc == 0 and j.get("stdout") == "connected\n", "a pack's run_sandbox { network } keeps it", j)
    srv.close()
    priv = "/tmp/sgx-private-%d" % os.getpid()
    rc, j, _, _ = run("echo x > %s; cat %s" % (priv, priv), "--sandbox", "bwrap")
    check(j.get("stdout") == "x\n" and not os.path.exists(priv), "a private /tmp, shared by the line", j)
    rc, j, _, _ = run("echo a; sgx_helper spam err 20", "--sandbox", "auto")
    check(rc == 0 and j.get("sandboxed") is True and j.get("stdout") == "a\n" and j.get("stderr_bytes") == 20,
          "auto uses bwrap when it works", j)
    tok = os.path.join(T, "sandboxed-daemon.pid")
    rc, j, _, dt = run("sgx_helper detach %s 30 30" % tok, "--sandbox", "bwrap", "--timeout", "1", "--grace", "0.5")
    time.sleep(0.3)
    check(rc == 124 and j.get("timed_out") is True and not procs_with(tok) and dt < 8,
          "the sandboxed tree ends with the sandbox", (rc, j, procs_with(tok)))
    rc, j, _, _ = run("cd src && export IN=sandbox", "--sandbox", "bwrap", "--session", "sb", *S)
    rc, j, _, _ = run("pwd; printenv IN", "--session", "sb", *S)
    check(j.get("stdout") == "%s\nsandbox\n" % os.path.join(WS, "src"), "a sandboxed run updates its session", j)
    rc, out, _ = session("show", "--session", "sb", *S)
    check(json.loads(out).get("env") == {"IN": "sandbox"}, "and records only what the agent changed", out)
    rc, j, _, _ = run("echo signed", "--sandbox", "bwrap", "--require-signature", KEY + ".pub", pack=BUNDLE)
    check(rc == 0 and j.get("stdout") == "signed\n" and j.get("sandboxed") is True,
          "a sandboxed run loads the signed bundle again inside", j)
    rc, out, err, _ = run("sgx_helper argv streamed", "--sandbox", "bwrap", js=False)
    check(rc == 0 and out == b"[streamed]\n" and "sandboxed" in err, "a sandboxed run streams", (out, err))

shutil.rmtree(T, ignore_errors=True)
shutil.rmtree(BIN, ignore_errors=True)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
