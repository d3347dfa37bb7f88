#!/usr/bin/env python3
"""ln_diff.py - shellgate reads a symbolic link's text where the link will read it.

`ln -s TEXT LINK` writes TEXT into LINK; the kernel reads a relative TEXT from the
directory LINK is in, not from the cwd ln ran in (stdlib/wrappers.rules declares
ln's `links { -s --symbolic } unless { -r --relative }`; runtime/eval.c, "link
texts").  For every line built from the option spellings, sources and destinations
below, this runs GNU ln itself by argv (no shell) in a fresh copy of a small
workspace, follows every link it made with realpath, and compares with the default
pack's answer for the same line in a pristine copy: allowed exactly when every link
made (and the place it is made) lies inside the workspace, asked ('copy_outside')
otherwise.  Lines of the form `rm -rf DIR && ln -s SRC DIR` run both steps, each by
argv, in order: a directory the line removes first is the link itself when ln runs.
Nothing but ln, rm and rmdir runs, on the scratch copy; the links point at names that
hold nothing.

usage: ln_diff.py SHELLGATE
"""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

SYMBOLIC = ["-s", "--symbolic", "--sym", "-sf", "-fs", "-snf", "-s -f", "-sv", "-s -T"]
RELATIVE = ["-sr", "-s --relative", "-rs", "--relative -s"]
SOURCES = ["x", "../x", "../../x", "dist/index.js", "../dist/index.js", "../../dist/index.js",
           "./bin/../../x", "bin/../../x", "sub/../x", "deep/../../../x", "../../../x"]
DESTS = ["y", "bin/y", "bin/", "bin", "sub/deep/y", "sub/deep/", "sub/deep", "../y"]
TARGET_DIRS = ["-t bin", "--target-directory=sub/deep", "-t sub", "--target-directory ."]


def workspace(root):
    ws = os.path.join(root, "ws")
    for d in ("bin", "sub/deep", "dist"):
        os.makedirs(os.path.join(ws, d))
    with open(os.path.join(ws, "dist", "index.js"), "w") as f:
        f.write("//\n")
    return ws


def lines():
    for o in SYMBOLIC + RELATIVE:
        for s in SOURCES:
            for d in DESTS:
                if "-T" in o and d.endswith("/"):
                    continue
                yield "ln %s %s %s" % (o, s, d)
        for t in TARGET_DIRS:
            for s in SOURCES:
                if "-T" not in o:
                    yield "ln %s %s %s" % (o, t, s)
    for o in ["-s", "-sf"]:
        for d in ["bin", "sub/deep/", "sub"]:
            yield "ln %s ../dist/index.js ../../x %s" % (o, d)
            yield "ln %s dist/index.js x %s" % (o, d)
    # a directory an earlier command of the line removes is no directory when ln
    # runs: DEST is then the link itself (each step run by argv, in order)
    for pre in ["rm -rf bin", "rmdir bin", "rm -rf sub/deep", "rmdir sub/deep"]:
        d = pre.split()[-1]
        for s in SOURCES:
            yield "%s && ln -s %s %s" % (pre, s, d)


def made_outside(line, base):
    """Run ln; True when a link it made (or its place) is outside the workspace,
    None when ln failed (the case says nothing)."""
    if os.path.exists(base):
        shutil.rmtree(base)
    os.makedirs(base)
    ws = workspace(base)
    for step in line.split(" && "):             # no shell: each step by argv
        r = subprocess.run(shlex.split(step), cwd=ws, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                           capture_output=True, timeout=30)
        if r.returncode != 0:
            return None
    out = False
    made = 0
    for dp, dn, fn in os.walk(base):
        for n in dn + fn:
            p = os.path.join(dp, n)
            if not os.path.islink(p):           # (the workspace has no link of its own)
                continue
            made += 1
            real = os.path.realpath(p)
            inside = lambda q: os.path.commonpath([q, ws]) == ws
            if not inside(p) or not inside(real):
                out = True
    return out if made else None


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    sg = sys.argv[1]
    if not shutil.which("ln"):
        print("SKIP: no ln", file=sys.stderr)
        return 77
    tmp = tempfile.mkdtemp(prefix="sg-ln-")
    try:
        cases = list(lines())
        pristine = workspace(os.path.join(tmp, "p"))
        batch = "".join(json.dumps({"cmd": c}) + "\n" for c in cases)
        r = subprocess.run([sg, "check", "--cwd", pristine, "--root", pristine, "--batch"], input=batch,
                           capture_output=True, text=True, timeout=120,
                           env={"PATH": "/usr/bin:/bin", "HOME": os.path.join(tmp, "home"), "LC_ALL": "C"})
        answers = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
        if len(answers) != len(cases):
            print("shellgate answered %d of %d lines: %s" % (len(answers), len(cases), r.stderr))
            return 1
        bad = compared = 0
        outside_seen = inside_seen = 0
        for c, a in zip(cases, answers):
            out = made_outside(c, os.path.join(tmp, "run"))
            if out is None:
                continue
            compared += 1
            want = "ask" if out else "allow"
            if out:
                outside_seen += 1
            else:
                inside_seen += 1
            # the ln segment's own decision (an rm before it is the pack's business)
            seg = [g for g in a.get("segments", []) if g.get("argv", [""])[0] == "ln"]
            got = seg[0].get("decision") if seg else None
            rule = seg[0].get("rule") if seg else None
            if got != want or (out and rule != "default:copy_outside"):
                bad += 1
                print("MISMATCH %s: ln's links are %s the workspace; shellgate: %s (%s)"
                      % (c, "outside" if out else "inside", got, rule))
        print("ln_diff: %d lines, %d compared (%d inside, %d outside), %d mismatches"
              % (len(cases), compared, inside_seen, outside_seen, bad))
        if compared < 200 or not inside_seen or not outside_seen:
            print("too few lines compared to mean anything")
            return 1
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
