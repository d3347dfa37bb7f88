#!/usr/bin/env python3
"""abbrev.py - every long option in a pack's case files, in every abbreviation.

getopt_long, git's parse-options and Python's argparse/optparse take a unique prefix
of a long option for the option (`--outp` is `--output`), so a rule about `--output`
must hold for every prefix a program may accept.  This generates those spellings
for every unquoted long option of every case line (the class, not a list of cases)
and checks that each decides at least as strictly as the full spelling: deny stays
deny, ask stays ask or becomes deny, and nothing a rule stops becomes allowed.

A prefix that a program declaration lists as an option of its own (`pip --pre` is
not `--prefix`) is that option, not an abbreviation, and is skipped.  Nothing here is executed: commands go to
`shellgate check --batch` as JSON.

usage: abbrev.py SHELLGATE PACK CASEFILE...
"""
import json
import re
import subprocess
import sys

RANK = {"allow": 0, "ask": 1, "deny": 2}
LONG = re.compile(r"--[A-Za-z0-9][-A-Za-z0-9_.]*")


def declared_longopts(sg, pack):
    """Every long option the program declarations of the pack's compiled table
    list, from `shellgate dump` (its progspecs section)."""
    out = subprocess.run([sg, "dump", pack], capture_output=True, text=True, check=True).stdout
    known, inside = set(), False
    for line in out.splitlines():
        if not line.startswith(" "):
            inside = line.startswith("progspecs")
            continue
        if not inside:
            continue
        for body in re.findall(r"\{([^}]*)\}", line):
            for w in body.split():
                w = w.strip('"')
                if LONG.fullmatch(w):
                    known.add(w)
    return known


def unquoted_options(cmd):
    """(start, end) of each long option word outside quotes: at the start of a word,
    ending at '=', a blank or the end."""
    spans, q, i, n = [], None, 0, len(cmd)
    while i < n:
        c = cmd[i]
        if q:
            if c == q:
                q = None
            elif c == "\\" and q == '"':
                i += 1
            i += 1
            continue
        if c in "'\"":
            q = c
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if cmd.startswith("--", i) and (i == 0 or cmd[i - 1] in " \t"):
            m = LONG.match(cmd, i)
            if m and (m.end() == n or cmd[m.end()] in " \t="):
                spans.append((m.start(), m.end()))
                i = m.end()
                continue
        i += 1
    return spans


def read_cases(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.rsplit(" ; ", 2)
            if len(parts) >= 2 and parts[1].strip() in RANK:
                yield parts[0]
            elif len(parts) == 3 and parts[2].strip() in RANK:
                yield " ; ".join(parts[:2])


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    sg, pack, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    known = declared_longopts(sg, pack)
    pairs = []                      # (full command, abbreviated command)
    for path in files:
        for cmd in read_cases(path):
            for a, b in unquoted_options(cmd):
                word = cmd[a:b]
                for k in range(3, len(word)):
                    p = word[:k]
                    if p not in known:
                        pairs.append((cmd, cmd[:a] + p + cmd[b:]))
    cmds = sorted({c for pr in pairs for c in pr})
    feed = "".join(json.dumps({"cmd": c, "cwd": "/tmp"}) + "\n" for c in cmds)
    r = subprocess.run([sg, "check", "-p", pack, "--batch"], input=feed, capture_output=True, text=True)
    answers = [json.loads(l) for l in r.stdout.splitlines()]
    if len(answers) != len(cmds):
        sys.exit(f"abbrev: {len(cmds)} commands, {len(answers)} answers\n{r.stderr}")
    got = {c: a["decision"] for c, a in zip(cmds, answers)}
    bad = 0
    for full, ab in pairs:
        if RANK[got[ab]] < RANK[got[full]]:
            bad += 1
            if bad <= 20:
                print(f"FAIL: {ab!r} is {got[ab]}, but {full!r} is {got[full]}")
    print(f"abbrev {pack}: {len(pairs)} abbreviations of {len({f for f, _ in pairs})} commands, {bad} laxer")
    sys.exit(1 if bad or not pairs else 0)


if __name__ == "__main__":
    main()
