#!/bin/sh
# bundle.sh - signed bundles through the CLI (docs/fleet.md): keygen (modes, no
# overwrite), bundle build / sign / verify / show, a bundle decides exactly as its
# pack (the pack's case file through -p BUNDLE), --require-signature refusing an
# unsigned, wrongly signed or altered bundle and every policy that is not a bundle,
# scope match and mismatch, reproducible builds, a secret key others can read; in the
# hooks (a deny in the agent's format, with the reason) and in serve (it does not start
# on a refused bundle; a reload, by op or SIGHUP, that is refused keeps the last good one).
# usage: bundle.sh SHELLGATE SOURCE_DIR
set -u
SG=$1
SRC=$2
T=$(mktemp -d)
SPID=
trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
run() { # want_code description command... (stdout in $T/out, stderr in $T/err)
    want=$1; shift; what=$1; shift
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, want $want"; cat "$T/out" "$T/err" >&2; fi
}
has() { # file substring description
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1"; cat "$1" >&2; fi
}
flip() { # file offset: change one byte (python: no shell quoting of binary data)
    python3 -c 'import sys; p, i = sys.argv[1], int(sys.argv[2]); b = bytearray(open(p, "rb").read()); b[i] ^= 1; open(p, "wb").write(b)' "$1" "$2"
}
size() { wc -c <"$1" | tr -d ' '; }

# ---- keys -------------------------------------------------------------------------------
run 0 "keygen" "$SG" keygen -o "$T/team"
has "$T/out" "key " "keygen names the key id"
[ "$(stat -c %a "$T/team")" = 600 ] && ok || bad "secret key mode $(stat -c %a "$T/team")"
[ "$(stat -c %a "$T/team.pub")" = 644 ] && ok || bad "public key mode"
has "$T/team.pub" "shellgate-ed25519-public " "public key format"
run 73 "keygen never replaces a key" "$SG" keygen -o "$T/team"
run 0 "a second key" "$SG" keygen -o "$T/other"
run 64 "keygen usage" "$SG" keygen

# ---- build, sign, verify -------------------------------------------------------------------
RO="$SRC/rules/readonly.rules"
run 0 "bundle build" "$SG" bundle build -o "$T/ro.sgb" --scope 'prod/*' --scope ci "$RO"
has "$T/out" "pack readonly version" "build names the pack"
cp "$T/ro.sgb" "$T/unsigned.sgb"
run 0 "bundle show (unsigned)" "$SG" bundle show "$T/ro.sgb"
has "$T/out" "signature: none" "show: unsigned"
has "$T/out" "pack: readonly version" "manifest pack"
has "$T/out" "<std/wrappers>" "manifest lists the packs it uses"
has "$T/out" "scope: prod/* ci" "manifest scope"
run 0 "bundle sign" "$SG" bundle sign --key "$T/team" "$T/ro.sgb"
run 0 "bundle verify" "$SG" bundle verify --pub "$T/team.pub" "$T/ro.sgb"
has "$T/out" "signature: good, by the trusted key" "verify: good"
run 1 "verify with the wrong key" "$SG" bundle verify --pub "$T/other.pub" "$T/ro.sgb"
has "$T/err" "not by the trusted key" "wrong key message"
run 1 "verify an unsigned bundle" "$SG" bundle verify --pub "$T/team.pub" "$T/unsigned.sgb"
has "$T/err" "not signed" "unsigned message"
run 0 "verify with a scope" "$SG" bundle verify --pub "$T/team.pub" --scope prod/eu/web-3 "$T/ro.sgb"
run 1 "verify a scope mismatch" "$SG" bundle verify --pub "$T/team.pub" --scope dev/laptop "$T/ro.sgb"
has "$T/err" "not for 'dev/laptop'" "scope mismatch message"
run 64 "bundle usage" "$SG" bundle frobnicate

# ---- a bundle decides as its pack ------------------------------------------------------------
run 0 "the readonly cases through the signed bundle" "$SG" test -p "$T/ro.sgb" --require-signature "$T/team.pub" \
    --scope ci "$SRC/tests/packs/readonly.cases"
run 0 "check -p bundle" "$SG" check -p "$T/ro.sgb" --require-signature "$T/team.pub" --scope ci -- ls -la
run 1 "check -p bundle: a deny" "$SG" check -p "$T/ro.sgb" --require-signature "$T/team.pub" --scope ci -- rm -rf x
printf '%s\n' '{"cmd": "ls"}' '{"cmd": "rm x"}' >"$T/batch"
"$SG" check -p "$T/ro.sgb" --require-signature "$T/team.pub" --scope ci --batch <"$T/batch" >"$T/bout"
[ "$(grep -c '"decision":"allow"' "$T/bout")" -eq 1 ] && [ "$(grep -c '"decision":"deny"' "$T/bout")" -eq 1 ] && ok \
    || bad "batch through a bundle"
run 0 "explain -p bundle" "$SG" explain -p "$T/ro.sgb" --scope ci -- cat README.md
has "$T/out" "pack: readonly" "explain names the pack"

# ---- --require-signature refuses everything else ---------------------------------------------
run 65 "unsigned bundle refused" "$SG" check -p "$T/unsigned.sgb" --require-signature "$T/team.pub" --scope ci -- ls
has "$T/err" "not signed, and a signature by key" "unsigned refusal"
run 65 "wrong key refused" "$SG" check -p "$T/ro.sgb" --require-signature "$T/other.pub" --scope ci -- ls
has "$T/err" "not by the trusted key" "wrong key refusal"
n=$(size "$T/ro.sgb")
for off in 0 9 24 40 60 100 200 $((n / 2)) $((n - 89)) $((n - 80)) $((n - 70)) $((n - 1)); do
    cp "$T/ro.sgb" "$T/t.sgb"
    flip "$T/t.sgb" "$off"
    run 65 "one byte changed at $off: refused" "$SG" check -p "$T/t.sgb" --require-signature "$T/team.pub" --scope ci -- ls
done
head -c $((n - 1)) "$T/ro.sgb" >"$T/t.sgb"
run 65 "truncated: refused" "$SG" check -p "$T/t.sgb" --require-signature "$T/team.pub" --scope ci -- ls
run 65 "an embedded pack is not a bundle" "$SG" check -p readonly --require-signature "$T/team.pub" -- ls
has "$T/err" "is not a bundle" "non-bundle refusal"
run 65 "no -p: the embedded default is not a bundle" "$SG" check --require-signature "$T/team.pub" -- ls
run 65 "a .rules file is not a bundle" "$SG" check -p "$RO" --require-signature "$T/team.pub" -- ls
"$SG" compile -o "$T/ro.sgt" "$RO" >/dev/null 2>&1
run 65 "a .sgt table is not a bundle" "$SG" check -p "$T/ro.sgt" --require-signature "$T/team.pub" -- ls
run 65 "test refuses too" "$SG" test -p "$T/unsigned.sgb" --require-signature "$T/team.pub" --scope ci "$SRC/tests/packs/readonly.cases"
run 66 "an unreadable trusted key" "$SG" check -p "$T/ro.sgb" --require-signature "$T/nokey.pub" --scope ci -- ls
# the scope is checked by every loader
run 65 "scope mismatch refused" "$SG" check -p "$T/ro.sgb" --require-signature "$T/team.pub" --scope dev -- ls
has "$T/err" "built for the scope { prod/* ci }, not for 'dev'" "scope refusal"
run 65 "no scope given for a scoped bundle" "$SG" check -p "$T/ro.sgb" -- ls
has "$T/err" "names no scope" "no scope refusal"
run 0 "an unscoped bundle loads anywhere" "$SG" bundle build -o "$T/any.sgb" "$RO"
run 0 "unscoped, unsigned, no requirement" "$SG" check -p "$T/any.sgb" -- ls

# ---- reproducible, and the secret key's mode -------------------------------------------------
SOURCE_DATE_EPOCH=1700000000 "$SG" bundle build -o "$T/r1.sgb" "$RO" >/dev/null
SOURCE_DATE_EPOCH=1700000000 "$SG" bundle build -o "$T/r2.sgb" "$RO" >/dev/null
cmp -s "$T/r1.sgb" "$T/r2.sgb" && ok || bad "the same sources and SOURCE_DATE_EPOCH give the same bundle"
run 0 "show the build time" "$SG" bundle show "$T/r1.sgb"
has "$T/out" "built: 2023-11-14T22:13:20Z" "build time from SOURCE_DATE_EPOCH"
chmod 644 "$T/other"
run 66 "a secret key others can read is refused" "$SG" bundle sign --key "$T/other" "$T/any.sgb"
has "$T/err" "too open" "mode message"
printf 'pack bad version 1\ndefault deny "no"\nallow program ls\ntest allow "cat x"\n' >"$T/bad.rules"
run 65 "a pack whose inline tests fail is not bundled" "$SG" bundle build -o "$T/bad.sgb" "$T/bad.rules"
has "$T/err" "inline tests failed" "failing tests message"
[ ! -e "$T/bad.sgb" ] && ok || bad "no bundle written for a failing pack"
run 65 "a pack that does not compile is not bundled" "$SG" bundle build -o "$T/bad.sgb" "$SRC/tests/compiler/shadowed.rules"

# ---- --require-signature in the hooks: a refused bundle is a deny in the agent's format ------
printf '%s\n' '{"session_id":"s1","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}' \
    >"$T/claude.json"
printf '%s\n' '{"session_id":"g1","cwd":"/","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}' \
    >"$T/gemini.json"
cp "$T/ro.sgb" "$T/tampered.sgb"
flip "$T/tampered.sgb" $((n / 2))
run 0 "hook: the signed bundle decides" "$SG" hook claude-code -p "$T/ro.sgb" --require-signature "$T/team.pub" --scope ci <"$T/claude.json"
has "$T/out" '"permissionDecision":"allow","permissionDecisionReason":"shellgate: allowed by readonly:' "hook: signed, allowed"
run 0 "hook: an unsigned bundle" "$SG" hook claude-code -p "$T/unsigned.sgb" --require-signature "$T/team.pub" --scope ci <"$T/claude.json"
has "$T/out" '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"shellgate: ' "hook: unsigned, a Claude Code deny"
has "$T/out" "bundle: not signed, and a signature by key" "hook: unsigned, the reason"
run 0 "hook: a tampered bundle" "$SG" hook claude-code -p "$T/tampered.sgb" --require-signature "$T/team.pub" --scope ci <"$T/claude.json"
has "$T/out" '"permissionDecision":"deny"' "hook: tampered, a deny"
has "$T/out" "does not verify: the bundle was changed after it was signed" "hook: tampered, the reason"
run 0 "hook: the wrong key" "$SG" hook claude-code -p "$T/ro.sgb" --require-signature "$T/other.pub" --scope ci <"$T/claude.json"
has "$T/out" "not by the trusted key" "hook: wrong key, the reason"
run 0 "hook: a .rules file is not a bundle" "$SG" hook claude-code -p "$RO" --require-signature "$T/team.pub" <"$T/claude.json"
has "$T/out" '"permissionDecision":"deny"' "hook: a .rules file, a deny"
has "$T/out" "is not a bundle" "hook: a .rules file, the reason"
run 0 "gemini-cli: an unsigned bundle" "$SG" hook gemini-cli -p "$T/unsigned.sgb" --require-signature "$T/team.pub" --scope ci <"$T/gemini.json"
has "$T/out" '{"decision":"deny","reason":"shellgate: ' "gemini-cli: its own deny"
has "$T/out" "bundle: not signed, and a signature by key" "gemini-cli: the reason"
run 0 "gemini-cli: a tampered bundle" "$SG" hook gemini-cli -p "$T/tampered.sgb" --require-signature "$T/team.pub" --scope ci <"$T/gemini.json"
has "$T/out" '{"decision":"deny","reason":"shellgate: ' "gemini-cli: tampered, its own deny"
has "$T/out" "does not verify" "gemini-cli: tampered, the reason"

# ---- --require-signature in serve: a reload that fails keeps the last good bundle -----------
# (another signed bundle, of a pack that denies ls, shows that a good reload takes over)
printf '%s\n' 'pack other version 1' 'default deny "not in other"' 'allow program echo' >"$T/other.rules"
"$SG" bundle build -o "$T/other.sgb" --scope ci "$T/other.rules" >/dev/null
"$SG" bundle sign --key "$T/team" "$T/other.sgb" >/dev/null
printf '%s\n' '{"id":1,"op":"check","cmd":"ls","cwd":"/"}' '{"id":2,"op":"reload"}' '{"id":3,"op":"check","cmd":"ls","cwd":"/"}' \
    >"$T/reload.req"
printf '%s\n' '{"id":4,"op":"check","cmd":"ls","cwd":"/"}' '{"id":5,"op":"stats"}' >"$T/stats.req"
put() { cp "$1" "$T/live.tmp" && mv "$T/live.tmp" "$T/live.sgb"; }   # as a deployment would: a rename
ask_serve() { # requests-file: the answers in $T/sout
    python3 "$SRC/tests/unixreq.py" "$T/sg.sock" "$1" >"$T/sout" 2>"$T/serr" || { bad "serve did not answer"; cat "$T/serr" >&2; }
}
line() { sed -n "$1p" "$T/sout"; }
put "$T/unsigned.sgb"
run 65 "serve will not start on an unsigned bundle" timeout 20 "$SG" serve --socket "$T/sg.sock" -p "$T/live.sgb" --require-signature "$T/team.pub" --scope ci
has "$T/err" "not signed, and a signature by key" "serve: the reason it did not start"
put "$T/ro.sgb"
"$SG" serve --socket "$T/sg.sock" -p "$T/live.sgb" --require-signature "$T/team.pub" --scope ci 2>"$T/serve.err" &
SPID=$!
ask_serve "$T/reload.req"
line 1 | grep -qF '{"id":1,"decision":"allow","rule":"readonly:' && ok || bad "serve: the signed bundle decides"
line 2 | grep -qF '{"id":2,"ok":true,"pack":"readonly"}' && ok || bad "serve: a reload of the same signed bundle"
put "$T/unsigned.sgb"
ask_serve "$T/reload.req"
line 2 | grep -qF '"ok":false,"error":"' && line 2 | grep -qF 'not signed, and a signature by key' && line 2 | grep -qF '"kept":"readonly"' \
    && ok || bad "serve: an unsigned bundle is refused on reload, readonly kept: $(line 2)"
line 3 | grep -qF '{"id":3,"decision":"allow","rule":"readonly:' && ok || bad "serve: the last good bundle still decides"
put "$T/tampered.sgb"
ask_serve "$T/reload.req"
line 2 | grep -qF '"ok":false' && line 2 | grep -qF 'the bundle was changed after it was signed' && line 2 | grep -qF '"kept":"readonly"' \
    && ok || bad "serve: a tampered bundle is refused on reload: $(line 2)"
line 3 | grep -qF '{"id":3,"decision":"allow","rule":"readonly:' && ok || bad "serve: still the last good bundle"
head -c $(( $(size "$T/other.sgb") - 88 )) "$T/other.sgb" >"$T/other-unsigned.sgb"   # its signature cut off
put "$T/other-unsigned.sgb"
kill -HUP "$SPID"
i=0
while ! grep -qF "SIGHUP:" "$T/serve.err" && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
has "$T/serve.err" "SIGHUP: the old policy stays in force" "serve: SIGHUP says the old policy stays"
ask_serve "$T/stats.req"
line 1 | grep -qF '"rule":"readonly:' && ok || bad "serve: SIGHUP with the signature cut off keeps readonly: $(line 1)"
line 2 | grep -qF '"reload_failures":3' && ok || bad "serve: the failed reloads are counted: $(line 2)"
put "$T/other.sgb"
ask_serve "$T/reload.req"
line 2 | grep -qF '{"id":2,"ok":true,"pack":"other"}' && ok || bad "serve: another signed bundle loads: $(line 2)"
line 3 | grep -qF '{"id":3,"decision":"deny","rule":"default"' && ok || bad "serve: and decides: $(line 3)"
kill "$SPID"
wait "$SPID"
SPID=

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
