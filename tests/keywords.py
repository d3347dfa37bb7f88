#!/usr/bin/env python3
"""keywords.py - the rule language's one keyword list (compiler/keywords.h) is known
everywhere it must be: each spelling is an entry of the fuzz dictionaries of the
rule and lexer harnesses (fuzz/rules.dict, fuzz/lexer.dict), so the fuzzers try it,
and is written in a code span of docs/language.md, so the reference names it.  (The
lexer and the grammar's %fallback line are made from the list itself.)

    python3 tests/keywords.py SRCDIR
"""
import re
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: keywords.py SRCDIR")
    src = sys.argv[1]
    with open(src + "/compiler/keywords.h") as f:
        words = re.findall(r'X\(([A-Z0-9_]+), +"([a-z0-9]+)"\)', f.read())
    if len(words) < 50:
        sys.exit("FAIL compiler/keywords.h: only %d keywords read" % len(words))
    failed = 0
    for d in ("fuzz/rules.dict", "fuzz/lexer.dict"):
        with open(src + "/" + d) as f:
            entries = set(re.findall(r'^"([^"\n]*)"\s*$', f.read(), re.M))
        for _, w in words:
            if w not in entries:
                print('FAIL %s has no entry "%s"' % (d, w))
                failed += 1
    with open(src + "/docs/language.md") as f:
        spans = " ".join(re.findall(r"`([^`\n]+)`", f.read()))
    for _, w in words:
        if not re.search(r"(?<![A-Za-z0-9_-])%s(?![A-Za-z0-9_-])" % re.escape(w), spans):
            print("FAIL docs/language.md names keyword '%s' in no code span" % w)
            failed += 1
    print("%d keywords; %s" % (len(words), "FAILED" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
