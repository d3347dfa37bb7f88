#!/usr/bin/env python3
"""xargs_diff.py - the commands shellgate says xargs runs are the ones GNU xargs runs.

Where xargs reads input that is literal on the line, the unwrapper makes one segment
per call xargs makes (runtime/unwrap.c, "xargs fed on the line").  For lines built
from a few inputs and option sets, this runs each under bash with a stand-in program
`rec` on PATH that records its argv (nothing else runs: echo, printf, xargs and rec),
and compares the calls rec received with the `rec` segments of `shellgate check
--json`.  Lines whose input is not read through (quotes, -0, an expansion) must keep
one segment that gets more arguments: exactly the initial words.

usage: xargs_diff.py SHELLGATE
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

INPUTS = [
    "echo a",
    "echo a b c",
    "echo -n x y",
    "printf 'a\\nb\\n'",
    "printf 'a b\\nc d e\\n\\nf\\n'",
    "printf '%s\\n' one two three",
    "printf '  lead\\ttab\\n'",
]
OPTIONS = ["", "-n1", "-n 2", "--max-args=2", "-L1", "-L 2", "-l", "-I{} ", "-i ", "-I% ",
           "--replace=@ ", "-r", "-rn1", "-t", "-x -n1", "-P 2 -n1"]
# the command after the options; {} % @ are replaced only with their -I forms
COMMANDS = {"-I{} ": "rec pre-{} {}", "-i ": "rec {}", "-I% ": "rec %/x", "--replace=@ ": "rec @ @"}
NOT_READ = [
    "echo \"'a b'\" | xargs rec",
    "printf 'a\\0b' | xargs -0 rec",
    "echo \"$HOME\" | xargs rec",
    "echo a,b | xargs -d, rec",
    "echo 'a\\ b' | xargs rec",
]


def shellgate_calls(sg, line, cwd):
    out = subprocess.run([sg, "check", "--json", "--cwd", cwd, "--", line],
                         capture_output=True, text=True, timeout=30)
    if not out.stdout.strip():
        raise SystemExit("no answer for %r: %s" % (line, out.stderr))
    res = json.loads(out.stdout)
    return [s["argv"][1:] for s in res.get("segments", []) if s.get("argv", [None])[0] == "rec"]


def bash_calls(line, tmp, rec):
    log = os.path.join(tmp, "calls")
    if os.path.exists(log):
        os.unlink(log)
    env = {"PATH": tmp + ":/usr/bin:/bin", "REC": log, "HOME": tmp, "LC_ALL": "C"}
    subprocess.run(["bash", "-c", line], cwd=tmp, env=env, timeout=30,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    calls = []
    if os.path.exists(log):
        with open(log) as f:
            calls = [json.loads(l) for l in f if l.strip()]
    return calls


def main():
    sg = sys.argv[1]
    if not shutil.which("xargs") or not shutil.which("bash"):
        print("SKIP: xargs or bash missing")
        return 77
    tmp = tempfile.mkdtemp(prefix="sg-xargs-")
    rec = os.path.join(tmp, "rec")
    with open(rec, "w") as f:
        f.write("#!%s\nimport json, os, sys\n" % sys.executable)
        f.write("open(os.environ['REC'], 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n")
    os.chmod(rec, 0o755)
    bad = 0
    n = 0
    try:
        for inp in INPUTS:
            for opt in OPTIONS:
                cmd = COMMANDS.get(opt, "rec")
                line = "%s | xargs %s%s%s" % (inp, opt, "" if opt.endswith(" ") or not opt else " ", cmd)
                got, want = shellgate_calls(sg, line, tmp), bash_calls(line, tmp, rec)
                n += 1
                if "-P" in opt:          # parallel calls end in any order
                    got, want = sorted(got), sorted(want)
                if got != want:
                    bad += 1
                    print("FAIL: %s\n  shellgate: %s\n  xargs:     %s" % (line, got, want))
        for line in NOT_READ:
            got = shellgate_calls(sg, line, tmp)
            n += 1
            if got != [[]]:
                bad += 1
                print("FAIL: %s is not read through, yet shellgate made %s" % (line, got))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d lines, %d differ" % (n, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
