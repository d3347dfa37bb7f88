#!/usr/bin/env python3
"""check.py - `shellgate fuzz` finds each class of spelling it is meant to generate.

    python3 tests/fuzzverb/check.py SHELLGATE

weak.rules matches by spelling: an option by its text, a command by the line's
text, a path by its name.  Fuzzing it must report, for each rule, variants made by
the transformation that class of spelling gets around it with: long-abbrev (a
getopt_long prefix of an option the table names), heredoc (a here-document before
the line, in a delimiter form bash ends), path-up/path-dot/path-slash (other names
of the same file), and, from the declarations of which options take a value,
opt-join (kubectl -n=prod, which `arg prod` does not see as the value prod) and
option-move (-n prod moved before the subcommand, which `arg at 1` tests), and url (a
URL spelled to the same place, which a regex over its text misses), and, under the
#platform macos of macos.cases, program-case (RM, which finds rm there).  strong.rules is the same pack written by meaning, and fuzzing
it must report nothing, from several seeds: what weak.rules shows is the
weakness of its rules, not noise of the fuzzer.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def fuzz(sg, pack, seed, most, cases=None):
    r = subprocess.run([sg, "fuzz", "--seed", str(seed), "--max", str(most), "--json",
                        os.path.join(HERE, pack)] + ([os.path.join(HERE, cases)] if cases else []),
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("fuzz %s exited %d: %s" % (pack, r.returncode, r.stderr))
    j = json.loads(r.stdout)
    if (r.returncode == 1) != bool(j["findings"]):
        sys.exit("fuzz %s: exit status %d does not say whether it found something" % (pack, r.returncode))
    return j


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check.py SHELLGATE")
    sg = sys.argv[1]
    failed = 0
    want = {
        "weak:tool_text": {"long-abbrev"},
        "weak:rm_text": {"heredoc"},
        "weak:shadow_text": {"path-up", "path-dot", "path-slash"},
        # from std/programs' declaration of kubectl's -n as taking a value
        "weak:kube_arg": {"opt-join"},
        "weak:kube_place": {"option-move"},
        "weak:host_text": {"url"},
    }
    j = fuzz(sg, "weak.rules", 1, 64)
    seen = {}
    for f in j["findings"]:
        seen.setdefault(f["rule"], set()).update(f["chain"].split(" > "))
        if f["variant_decision"] not in ("allow", "ask"):
            print("FAIL a finding not laxer than %s: %s" % (f["decision"], f))
            failed += 1
    for rule, transforms in sorted(want.items()):
        for t in sorted(transforms):
            if t not in seen.get(rule, set()):
                print("FAIL fuzz of weak.rules found no %s variant getting around %s" % (t, rule))
                failed += 1
    abbrev = [f for f in j["findings"] if f["chain"] == "long-abbrev"]
    for f in abbrev:
        # the variant names a proper prefix of the option, still unique among the table's
        word = f["variant"].split()[1].split("=")[0]
        if not ("--delete-everything".startswith(word) and len(word) < len("--delete-everything")
                and len(word) > len("--d")):
            print("FAIL long-abbrev made %r of --delete-everything" % word)
            failed += 1
    # arg prod still sees the value of -nprod and --namespace=prod; what it misses is
    # -n=prod, a value attached the way pflag (kubectl) reads it
    for f in j["findings"]:
        if f["rule"] == "weak:kube_arg" and f["chain"] == "opt-join" and "-n=prod" not in f["variant"]:
            print("FAIL opt-join got around kube_arg otherwise than by -n=prod: %s" % f["variant"])
            failed += 1
    # on a platform that folds case (macos.cases: #platform macos), RM finds rm: a rule
    # on argv[0] as written misses it, `program` does not
    m = fuzz(sg, "weak.rules", 1, 64, "macos.cases")
    if not any(f["rule"] == "weak:argv0_text" and "program-case" in f["chain"].split(" > ")
               for f in m["findings"]):
        print("FAIL fuzz of weak.rules under #platform macos found no program-case variant getting around argv0_text")
        failed += 1
    for f in fuzz(sg, "weak.rules", 1, 64)["findings"]:
        if "program-case" in f["chain"]:
            print("FAIL program-case on linux, which finds programs as written: %s" % f)
            failed += 1
    for seed in (1, 2):
        for f in fuzz(sg, "strong.rules", seed, 200, "macos.cases")["findings"]:
            print("FAIL strong.rules under macos, seed %d: %s -> %s by %s" % (seed, f["command"], f["variant"], f["chain"]))
            failed += 1
    for seed in (1, 2, 3):
        s = fuzz(sg, "strong.rules", seed, 200)
        for f in s["findings"]:
            print("FAIL strong.rules, seed %d: %s -> %s (%s) by %s" % (seed, f["command"], f["variant"],
                                                                       f["variant_decision"], f["chain"]))
            failed += 1
        if s["variants"] < 400:
            print("FAIL strong.rules, seed %d: only %d variants" % (seed, s["variants"]))
            failed += 1
    print("%d findings in weak.rules (%d long-abbrev); %s" % (len(j["findings"]), len(abbrev),
                                                             "FAILED" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
