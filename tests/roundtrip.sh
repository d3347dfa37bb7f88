#!/bin/sh
# roundtrip.sh - the round-trip oracle: decompile a table to rule text (D1), compile
# it (T1), decompile again (D2), compile again (T2); D1 == D2 and T1 == T2 byte for
# byte, T1 passes the original pack's case file (same decisions and rule ids), and
# a table that text cannot express is refused with a message; limits per team.
# usage: roundtrip.sh SHELLGATE SRCDIR
set -u
SG=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

roundtrip() { # NAME POLICY [CASES]
    n=$1 pol=$2 cases=${3:-}
    mkdir -p "$T/$n"
    if ! "$SG" decompile "$pol" >"$T/$n/d1" 2>"$T/$n/err"; then
        bad "$n: decompile: $(cat "$T/$n/err")"
        return
    fi
    cp "$T/$n/d1" "$T/$n/p.rules"
    if ! (cd "$T/$n" && "$SG" compile -o t1.sgt p.rules) 2>"$T/$n/err"; then
        bad "$n: the decompiled text does not compile: $(head -5 "$T/$n/err")"
        return
    fi
    "$SG" decompile "$T/$n/t1.sgt" >"$T/$n/d2" 2>/dev/null
    cmp -s "$T/$n/d1" "$T/$n/d2" && ok || bad "$n: decompile(compile(text)) is not the same text"
    cp "$T/$n/d2" "$T/$n/p.rules"
    (cd "$T/$n" && "$SG" compile -o t2.sgt p.rules) 2>/dev/null
    cmp -s "$T/$n/t1.sgt" "$T/$n/t2.sgt" && ok || bad "$n: the second compile is not byte-identical"
    if [ -n "$cases" ]; then
        "$SG" test -p "$T/$n/t1.sgt" "$cases" >"$T/$n/out" 2>&1 && ok ||
            bad "$n: the decompiled table decides differently: $(tail -3 "$T/$n/out")"
    fi
}

for p in default readonly gaia ironclaw; do
    roundtrip "$p" "$p" "$SRC/tests/packs/$p.cases"
done
for f in "$SRC"/tests/packs/deploy/*.rules; do
    c=${f%.rules}.cases
    [ -f "$c" ] || c=
    roundtrip "deploy_$(basename "$f" .rules)" "$f" "$c"
done
roundtrip example "$SRC/docs/example.rules" "$SRC/docs/example.cases"
# limits per agent and per team (the header's team-limits flag), in text and table
printf '%s\n' 'pack tl version 1' 'default allow' 'limit agent 30 per 1m' 'limit team 300 per 1h per team' \
    'limit pushes 20 per 1d per team when program git' >"$T/tl.rules"
roundtrip teamlimits "$T/tl.rules"
[ "$(grep -c ' per team' "$T/teamlimits/d1")" -eq 2 ] && ok || bad "per team decompiled: $(cat "$T/teamlimits/d1")"
"$SG" dump "$T/teamlimits/t1.sgt" >"$T/tl.dump" 2>&1
grep -q '^flags team-limits$' "$T/tl.dump" && ok || bad "the dump shows the team-limits flag"
"$SG" dump default >"$T/default.dump" 2>&1
grep -q '^flags' "$T/default.dump" && bad "a table without team limits has a flag" || ok

# Lua hook sources would need files of their own: refused, not half-written
if "$SG" decompile "$SRC/tests/packs/hooks.rules" >/dev/null 2>"$T/err"; then
    bad "a table with hooks decompiled"
else
    grep -q "Lua hooks" "$T/err" && ok || bad "refusal does not say why: $(cat "$T/err")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
