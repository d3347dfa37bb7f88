#!/bin/sh
# compile_errors.sh - golden diagnostics: each tests/compiler/X.rules must fail to
# compile with exit 65 and exactly the text in X.err (line, column, caret, notes).
# warn_X.rules compiles with warnings only: exit 0, the table written, X.err the
# warnings; strict_X.rules is compiled with --strict: exit 65, no table written.
# usage: compile_errors.sh SHELLGATE [--update]
set -u
SG=$1
cd "$(dirname "$0")/compiler" || exit 1
pass=0
fail=0
out=/tmp/sg_out.$$.sgt
for f in *.rules; do
    want=${f%.rules}.err
    rm -f "$out"
    case $f in
        warn_*) "$SG" compile -o "$out" "$f" >/dev/null 2>"/tmp/sg_err.$$"; rc=$?; wantrc=0 ;;
        strict_*) "$SG" compile --strict -o "$out" "$f" >/dev/null 2>"/tmp/sg_err.$$"; rc=$?; wantrc=65 ;;
        *) "$SG" compile --check "$f" >/dev/null 2>"/tmp/sg_err.$$"; rc=$?; wantrc=65 ;;
    esac
    if [ "${2:-}" = "--update" ]; then
        cp "/tmp/sg_err.$$" "$want"
    fi
    if [ "$rc" -ne "$wantrc" ]; then
        echo "FAIL: $f: exit $rc, want $wantrc" >&2
        fail=$((fail + 1))
    elif [ "$wantrc" -eq 0 ] && [ ! -s "$out" ]; then
        echo "FAIL: $f: compiled with warnings, but no table was written" >&2
        fail=$((fail + 1))
    elif [ "$wantrc" -ne 0 ] && [ -e "$out" ]; then
        echo "FAIL: $f: refused, but a table was written" >&2
        fail=$((fail + 1))
    elif ! cmp -s "/tmp/sg_err.$$" "$want"; then
        echo "FAIL: $f: diagnostics differ:" >&2
        diff "$want" "/tmp/sg_err.$$" >&2
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
done
rm -f "/tmp/sg_err.$$" "$out"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
