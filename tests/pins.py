#!/usr/bin/env python3
"""pins.py - every shipped pack's compiled listing, pinned: `shellgate dump PACK`
from its "meta" section on (the header's sizes, offsets and checksums, and each
automaton's data offset, change with any edit and are left out) must equal
tests/packs/pins/PACK.dump.  A change to a pack or the stdlib then shows in review
as the change to what the table holds: its sets, rules as bytecode, index,
program specs and inline tests.

usage: pins.py SHELLGATE PACK...   [--update: write the pins instead]"""
import difflib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PINS = os.path.join(HERE, "packs", "pins")


def listing(sg, pack):
    out = subprocess.run([sg, "dump", pack], capture_output=True, text=True, timeout=120, check=True).stdout
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l == "meta")
    return "".join(re.sub(r", data \+\d+$", "", l) + "\n" for l in lines[start:])


def main():
    args = [a for a in sys.argv[1:] if a != "--update"]
    update = "--update" in sys.argv
    sg, packs = args[0], args[1:]
    bad = 0
    for pack in packs:
        got = listing(sg, pack)
        path = os.path.join(PINS, pack + ".dump")
        if update:
            with open(path, "w") as f:
                f.write(got)
            print(f"{pack}: pinned {got.count(chr(10))} lines")
            continue
        want = open(path).read() if os.path.exists(path) else ""
        if got != want:
            bad += 1
            diff = list(difflib.unified_diff(want.splitlines(), got.splitlines(), path, f"dump {pack}", lineterm="", n=1))
            print(f"FAIL: {pack}: the compiled pack differs from its pin ({len(diff)} diff lines; the first 40):")
            print("\n".join(diff[:40]))
            print(f"If the change is meant, pin it: python3 tests/pins.py {sg} {pack} --update, and commit the pin.")
        else:
            print(f"{pack}: as pinned ({got.count(chr(10))} lines)")
    sys.exit(1 if bad else 0)


main()
