#!/bin/sh
# compile_errors.sh - golden diagnostics: each tests/compiler/X.rules must fail to
# compile with exit 65 and exactly the text in X.err (line, column, caret, notes).
# usage: compile_errors.sh SHELLGATE [--update]
set -u
SG=$1
cd "$(dirname "$0")/compiler" || exit 1
pass=0
fail=0
for f in *.rules; do
    want=${f%.rules}.err
    "$SG" compile --check "$f" >/dev/null 2>"/tmp/sg_err.$$"
    rc=$?
    if [ "${2:-}" = "--update" ]; then
        cp "/tmp/sg_err.$$" "$want"
    fi
    if [ "$rc" -ne 65 ]; then
        echo "FAIL: $f: exit $rc, want 65" >&2
        fail=$((fail + 1))
    elif ! cmp -s "/tmp/sg_err.$$" "$want"; then
        echo "FAIL: $f: diagnostics differ:" >&2
        diff "$want" "/tmp/sg_err.$$" >&2
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
done
rm -f "/tmp/sg_err.$$"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
