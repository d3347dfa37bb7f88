#!/bin/sh
# admission.sh - admission through the CLI (docs/admission.md): exact windows on
# an injected clock, 8 concurrent processes, kill -9 mid-update, corrupt state and
# `state reset`, a clock stepped back, approval scopes, refusal of over-broad
# approvals, --non-interactive, the decision log (masking, rotation, full disk), the
# approve command an ask names, limits per team beside limits per agent (--team).
# usage: admission.sh SHELLGATE
set -u
SG=$1
SRC=${2:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/xdg"
unset SHELLGATE_SESSION SHELLGATE_TEST_NOW SHELLGATE_TEST_CRASH
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
hasnt() {
    if grep -qF -- "$2" "$1"; then bad "$3: '$2' in $1"; cat "$1" >&2; else ok; fi
}

cat >"$T/adm.rules" <<'EOF'
pack adm version 3
use std/wrappers
default deny "'{program}' is not allowed"
allow program in { ls cat echo true }
allow program git and subcommand in { status log }
ask program git and subcommand push
ask program in { python3 bash sudo }
limit burst 3 per 10s, 5 per 1m "Rate limit: max {count} commands per {per}. Wait {wait}s. Please wait {wait} seconds."
limit gitlim 2 per 1h when program git
EOF
P="$T/adm.rules"
S="$T/state"
at() { SHELLGATE_TEST_NOW=$1; export SHELLGATE_TEST_NOW; }

# ---- exact windows (injected clock) ---------------------------------------------
at 1000; run 0 "1st" "$SG" check -p "$P" --state "$S" -- ls
at 1001; run 0 "2nd" "$SG" check -p "$P" --state "$S" -- ls
at 1002; run 0 "3rd" "$SG" check -p "$P" --state "$S" -- ls
at 1009.75; run 75 "4th inside 10 s" "$SG" check -p "$P" --state "$S" --json -- ls
has "$T/out" '"rate_limited":true' "4th rate_limited"
has "$T/out" '"wait_time_seconds":0.25' "4th exact wait"
has "$T/out" '"rule":"limit:burst"' "4th rule"
has "$T/out" 'Rate limit: max 3 commands per 10 seconds. Wait 0.2s. Please wait 0.2 seconds.' "GAIA wording"
at 1010; run 0 "at the window edge the oldest leaves" "$SG" check -p "$P" --state "$S" -- ls
# a denied command and a plain (pure) check take no slot
at 1011; run 1 "denied" "$SG" check -p "$P" --state "$S" -- rm x
run 0 "pure check" "$SG" check -p "$P" -- ls
run 0 "pure check" "$SG" check -p "$P" -- ls
# the minute window: 1000 1001 1002 1010 1012 are 5 in a minute; the 6th waits
# for 1000 to be 60 s old
at 1012; run 0 "5th in the minute" "$SG" check -p "$P" --state "$S" -- ls
at 1031; run 75 "6th in the minute" "$SG" check -p "$P" --state "$S" --json -- ls
has "$T/out" 'max 5 commands per minute. Wait 29.0s' "minute window message and wait"
has "$T/out" '"wait_time_seconds":29' "minute wait exact"
# limits are per agent
run 0 "another agent has its own slots" "$SG" check -p "$P" --state "$S" --agent other -- ls
# a `when` condition scopes a limit: git has 2 per hour of its own
at 2000; run 0 "git 1" "$SG" check -p "$P" --state "$S" --agent g -- git status
at 2011; run 0 "git 2" "$SG" check -p "$P" --state "$S" --agent g -- git log
at 2022; run 75 "git 3 in the hour" "$SG" check -p "$P" --state "$S" --agent g -- git status
has "$T/out" 'Rate limit: max 2 commands per 3600 seconds' "default message"
at 2033; run 0 "ls is not limited by gitlim" "$SG" check -p "$P" --state "$S" --agent g -- ls
# --batch admits line by line
at 3000
printf '%s\n' '{"cmd":"ls"}' '{"cmd":"ls"}' '{"cmd":"ls"}' '{"cmd":"ls"}' |
    "$SG" check -p "$P" --state "$S" --agent batch --batch >"$T/b"
[ "$(grep -c '"rate_limited":false' "$T/b")" -eq 3 ] && ok || bad "batch: 3 admitted"
[ "$(sed -n 4p "$T/b" | grep -c '"rate_limited":true')" -eq 1 ] && ok || bad "batch: 4th limited"

# ---- the clock steps back ---------------------------------------------------------
S2="$T/state2"
at 5000; for i in 1 2 3; do "$SG" check -p "$P" --state "$S2" -- ls >/dev/null; done
at 100; run 75 "clock back an hour: no extra slots" "$SG" check -p "$P" --state "$S2" --json -- ls
has "$T/out" '"wait_time_seconds":10' "wait measured from the newest time seen"
at 5010; run 0 "real time catches up" "$SG" check -p "$P" --state "$S2" -- ls
unset SHELLGATE_TEST_NOW

# ---- 8 processes at once: exactly the limit ----------------------------------------
cat >"$T/c.rules" <<'EOF'
pack conc version 1
default allow
limit c 5 per 1h
EOF
for round in 1 2 3; do
    i=0
    while [ $i -lt 8 ]; do
        ( "$SG" check -p "$T/c.rules" --state "$T/cs" --agent "r$round" -- true >/dev/null 2>&1; echo $? >"$T/rc.$round.$i" ) &
        i=$((i + 1))
    done
    wait
    n=$(cat "$T"/rc.$round.* | grep -c '^0$')
    [ "$n" -eq 5 ] && ok || bad "round $round: $n of 8 admitted, want exactly 5"
done

# ---- the test clock cannot drive a real state file ------------------------------------
printf 'pack one version 1\ndefault allow\nlimit one 1 per 1h\n' >"$T/one.rules"
run 0 "real clock: 1st" "$SG" check -p "$T/one.rules" --state "$T/real" -- true
SHELLGATE_TEST_NOW=9000000000 run 75 "a test clock stepped forward frees nothing in a real state file" \
    "$SG" check -p "$T/one.rules" --state "$T/real" -- true

# ---- kill -9 in the middle of an update -------------------------------------------
S3="$T/state3"
at 7000; run 0 "before the crash" "$SG" check -p "$P" --state "$S3" -- ls
at 7001; SHELLGATE_TEST_CRASH=1 "$SG" check -p "$P" --state "$S3" -- ls >/dev/null 2>&1
[ $? -eq 137 ] && ok || bad "crash point 1 did not kill"
[ -s "$S3.tmp" ] && ok || bad "crash point 1 left no half-written temporary file"
at 7002; SHELLGATE_TEST_CRASH=2 "$SG" check -p "$P" --state "$S3" -- ls >/dev/null 2>&1
[ $? -eq 137 ] && ok || bad "crash point 2 did not kill"
# the state is the last complete version: the two killed admissions never happened
at 7003; run 0 "2nd after crashes" "$SG" check -p "$P" --state "$S3" -- ls
at 7004; run 0 "3rd after crashes" "$SG" check -p "$P" --state "$S3" -- ls
at 7005; run 75 "4th after crashes is limited" "$SG" check -p "$P" --state "$S3" -- ls
unset SHELLGATE_TEST_NOW
# random kill -9 of real processes hammering one state file: it stays readable
cat >"$T/k.rules" <<'EOF'
pack kill version 1
default allow
limit k 100000 per 1h
EOF
( while :; do "$SG" check -p "$T/k.rules" --state "$T/ks" -- true >/dev/null 2>&1; done ) &
loop=$!
for i in 1 2 3 4 5 6 7 8 9 10; do
    "$SG" check -p "$T/k.rules" --state "$T/ks" -- true >/dev/null 2>&1 &
    victim=$!
    sleep 0.0$i
    kill -9 $victim 2>/dev/null
    wait $victim 2>/dev/null
done
kill $loop 2>/dev/null
wait $loop 2>/dev/null
run 0 "state readable after kill -9 storms" "$SG" check -p "$T/k.rules" --state "$T/ks" -- true

# ---- corrupt state: refused, then `state reset` ------------------------------------
printf 'garbage' | dd of="$S" bs=1 seek=70 conv=notrunc 2>/dev/null
run 1 "corrupt state refuses" "$SG" check -p "$P" --state "$S" --json -- ls
has "$T/out" 'corrupt' "corrupt message"
has "$T/out" 'state reset' "corrupt message says how to recover"
has "$T/out" '"rule":"admission"' "corrupt rule"
run 0 "state reset" "$SG" state reset --state "$S"
run 0 "after reset" "$SG" check -p "$P" --state "$S" -- ls
run 64 "state without reset" "$SG" state
# the default state file lives under XDG_STATE_HOME
run 0 "--admit uses the default state" "$SG" check -p "$P" --admit -- ls
[ -f "$XDG_STATE_HOME/shellgate/state" ] && ok || bad "default state path"

# ---- approvals ------------------------------------------------------------------------
S4="$T/state4"
at 10000
run 2 "ask" "$SG" check -p "$P" --state "$S4" --json -- git push origin main
ID=$(sed -n 's/.*"approval_id":"\([0-9a-f]*\)".*/\1/p' "$T/out")
[ ${#ID} -eq 32 ] && ok || bad "approval id '$ID'"
run 2 "plain check carries the same id" "$SG" check -p "$P" --json -- git push origin main
has "$T/out" "\"approval_id\":\"$ID\"" "id is stable"
run 2 "another cwd, another id" "$SG" check -p "$P" --cwd / --json -- git push origin main
hasnt "$T/out" "$ID" "id covers the cwd"
run 2 "text output names the id" "$SG" check -p "$P" --state "$S4" -- git push origin main
has "$T/out" "approval: $ID" "text approval line"
run 64 "approve needs an id" "$SG" approve --state "$S4"
run 1 "approve an unknown id" "$SG" approve 0123456789abcdef0123456789abcdef --state "$S4"
# once
run 0 "approve --once" "$SG" approve "$ID" --once --state "$S4"
has "$T/out" "git push origin main" "approve echoes the command"
at 10001; run 0 "approved once" "$SG" check -p "$P" --state "$S4" --json -- git push origin main
has "$T/out" '"approved":"once"' "approved field"
has "$T/out" '"decision":"allow"' "approved decision"
at 10002; run 2 "once is used up" "$SG" check -p "$P" --state "$S4" -- git push origin main
# session (from SHELLGATE_SESSION when the ask was made)
at 10020
SHELLGATE_SESSION=s1 "$SG" check -p "$P" --state "$S4" -- git push origin main >/dev/null
run 0 "approve --session" "$SG" approve "$ID" --session --state "$S4"
at 10030; SHELLGATE_SESSION=s1 run 0 "session approval 1" "$SG" check -p "$P" --state "$S4" -- git push origin main
at 10040; SHELLGATE_SESSION=s1 run 75 "approved commands still obey limits (gitlim: 2/h)" "$SG" check -p "$P" --state "$S4" --json -- git push origin main
has "$T/out" '"rate_limited":true' "approved but limited"
at 10050; SHELLGATE_SESSION=s2 run 2 "another session asks again" "$SG" check -p "$P" --state "$S4" --agent a2 -- git push origin main
# always: written to the overlay, admitted with any state file, plain check still asks
run 2 "ask for always" "$SG" check -p "$P" --state "$S4" --agent a3 -- git push origin main
run 0 "approve --always" "$SG" approve "$ID" --always --state "$S4"
has "$XDG_CONFIG_HOME/shellgate/approved" "approve $ID \"git push origin main\"" "overlay line"
at 20000; run 0 "always-approved" "$SG" check -p "$P" --state "$T/fresh" --agent a4 --json -- git push origin main
has "$T/out" '"approved":"always"' "approved always"
run 2 "plain check stays pure" "$SG" check -p "$P" -- git push origin main
run 1 "always never lifts a deny" "$SG" check -p "$P" --state "$T/fresh" -- 'git push origin main && rm x'
# a compound command is approved as a whole: its id differs from its parts'
run 2 "compound ask" "$SG" check -p "$P" --state "$S4" --json -- 'ls && git push origin main'
CID=$(sed -n 's/.*"approval_id":"\([0-9a-f]*\)".*/\1/p' "$T/out")
[ -n "$CID" ] && [ "$CID" != "$ID" ] && ok || bad "compound id '$CID' vs '$ID'"
# over-broad approvals are refused for good, allowed once
for c in "python3 tool.py" "bash x.sh" "sudo git push origin main"; do
    run 2 "ask $c" "$SG" check -p "$P" --state "$S4" --json -- $c
    BID=$(sed -n 's/.*"approval_id":"\([0-9a-f]*\)".*/\1/p' "$T/out")
    run 1 "refuse --always for $c" "$SG" approve "$BID" --always --state "$S4"
    has "$T/err" "refusing to approve for good" "refusal message for $c"
    run 0 "--once is fine for $c" "$SG" approve "$BID" --once --state "$S4"
done
unset SHELLGATE_TEST_NOW
# --non-interactive: ask becomes deny, with or without state
run 75 "non-interactive" "$SG" check -p "$P" --non-interactive --json -- git push origin main
has "$T/out" 'non-interactively' "non-interactive message"
run 75 "non-interactive with state" "$SG" check -p "$P" --state "$T/ni" --non-interactive -- git push --force origin x
# the ask was recorded: the text names the approve command, not "recorded only with --state"
has "$T/out" "--state $T/ni)" "a non-interactive ask with a state names its approve command"
hasnt "$T/out" "recorded only with" "a recorded ask is not called unrecorded"
NI_ID=$(sed -n 's/^  approval: \([0-9a-f]*\) .*/\1/p' "$T/out")
run 0 "approve the non-interactive ask" "$SG" approve "$NI_ID" --once --state "$T/ni"
run 0 "the approved ask passes" "$SG" check -p "$P" --state "$T/ni" --non-interactive -- git push --force origin x
has "$T/out" "  approved: once (approval $NI_ID)" "an approved ask says it was approved"
hasnt "$T/out" "  approval:" "an approved ask shows no approve command"

# ---- the decision log -------------------------------------------------------------------
L="$T/d.log"
run 0 "log allow" "$SG" check -p "$P" --state "$T/ls" --agent logger --log "$L" -- echo --password hunter2
run 1 "log deny" "$SG" check -p "$P" --log "$L" -- "curl -H 'Authorization: Bearer abc.def' https://x"
run 1 "log deny, header split into words" "$SG" check -p "$P" --log "$L" -- curl -H Authorization: Bearer abc.ghi x
run 0 "log token" "$SG" check -p "$P" --log "$L" -- 'GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ ls'
[ "$(wc -l <"$L")" -eq 4 ] && ok || bad "4 log lines"
hasnt "$L" hunter2 "password masked"
hasnt "$L" abc.def "authorization masked"
hasnt "$L" abc.ghi "authorization masked across words"
hasnt "$L" 0123456789abcdefghij "token masked"
has "$L" '"agent":"logger"' "log agent"
has "$L" '"pack":"adm","pack_version":3,"table_sha256":"' "log pack"
has "$L" '"decision":"deny","rule":"default"' "log rule"
has "$L" '"admission":"admitted"' "log admission"
has "$L" '"rate_limited":false' "log rate state"
if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$L" && ok || bad "log lines are JSON"
fi
# rotation: never over the cap, older lines in FILE.1
R="$T/r.log"
i=0
while [ $i -lt 12 ]; do "$SG" check -p "$P" --log "$R" --log-max-bytes 2000 -- ls >/dev/null; i=$((i + 1)); done
[ -f "$R.1" ] && ok || bad "rotated file"
[ "$(wc -c <"$R")" -le 2000 ] && [ "$(wc -c <"$R.1")" -le 2000 ] && ok || bad "rotation cap"
# concurrent writers: whole lines only
i=0
while [ $i -lt 8 ]; do "$SG" check -p "$P" --log "$T/c.log" -- ls >/dev/null & i=$((i + 1)); done
wait
[ "$(grep -c '^{.*}$' "$T/c.log")" -eq 8 ] && ok || bad "8 whole lines from 8 writers"
# a full disk: a clear error, the decision and exit code unchanged
run 0 "full disk keeps the decision" "$SG" check -p "$P" --log /dev/full -- ls
has "$T/out" "allow:" "decision printed"
has "$T/err" "No space left on device" "full disk error"
run 1 "full disk keeps a deny" "$SG" check -p "$P" --log /dev/full -- rm x

# ---- the approve command an ask names: the store it waits in, in check, run and hooks ----
# (printf is asked for: harmless should the approved run go ahead)
printf '%s\n' 'pack hint version 1' "default deny \"'{program}' is not allowed\"" 'allow program echo' \
    'ask program printf' >"$T/hint.rules"
printf '%s\n' '{"session_id":"h1","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"printf x"}}' \
    >"$T/hint.json"
mkdir -p "$T/with space"
HS="$T/with space/st"
run 2 "check names the state file" "$SG" check -p "$T/hint.rules" --state "$HS" --cwd / -- printf x
ID=$(sed -n 's/^  approval: \([0-9a-f]*\) .*/\1/p' "$T/out")
has "$T/out" "(shellgate approve $ID [--once | --session | --always] --state '$HS')" "check: the hint, the path quoted"
run 126 "run names the state file as check does" "$SG" run -p "$T/hint.rules" --state "$HS" --cwd / -- printf x
has "$T/err" "(shellgate approve $ID [--once | --session | --always] --state '$HS')" "run: the same hint"
run 0 "a hook names the state file as check does" "$SG" hook claude-code -p "$T/hint.rules" --state "$HS" <"$T/hint.json"
has "$T/out" "shellgate approve $ID --once (or --session, --always) --state '$HS'" "hook: the same store"
run 0 "codex: the deny says the same" "$SG" hook codex -p "$T/hint.rules" --state "$HS" <"$T/hint.json"
has "$T/out" "--state '$HS'\`; then try again" "codex deny: the same store"
run 0 "the hint's command approves it" "$SG" approve "$ID" --once --state "$HS"
run 0 "then run runs it" "$SG" run -p "$T/hint.rules" --state "$HS" --cwd / -- printf x
[ "$(cat "$T/out")" = x ] && ok || bad "the approved run ran: $(cat "$T/out")"
run 2 "the default state: check names no file" "$SG" check -p "$T/hint.rules" --admit --cwd / -- printf x
has "$T/out" "[--once | --session | --always])" "check: no store option for the default state"
run 126 "the default state: run names no file" "$SG" run -p "$T/hint.rules" --cwd / -- printf x
has "$T/err" "[--once | --session | --always]), then run it again" "run: no store option for the default state"
run 0 "the default state: the hook names no file" "$SG" hook claude-code -p "$T/hint.rules" <"$T/hint.json"
has "$T/out" "--once (or --session, --always)\`)" "hook: no store option for the default state"

# ---- per team beside per agent: "30 a minute per agent, 300 an hour per team", scaled ------
printf '%s\n' 'pack tm version 1' 'default allow' 'limit agent 2 per 1m' 'limit team 3 per 1h per team' >"$T/tm.rules"
TS="$T/team.state"
tm() { "$SG" check -p "$T/tm.rules" --state "$TS" --json "$@" -- true; }
run 0 "a1 of red: 1" tm --agent a1 --team red
run 0 "a1 of red: 2" tm --agent a1 --team red
run 75 "a1 of red: 3, its own limit" tm --agent a1 --team red
has "$T/out" '"rule":"limit:agent"' "refused by the agent's limit"
run 0 "a2 of red: the team's 3rd (a refused command took no team slot)" tm --agent a2 --team red
run 75 "a2 of red: the team's limit" tm --agent a2 --team red
has "$T/out" '"rule":"limit:team"' "refused by the team's limit"
has "$T/out" 'max 3 commands per 3600 seconds' "the team limit's message"
run 75 "a3 of red: never admitted yet, the team is full" tm --agent a3 --team red
has "$T/out" '"rule":"limit:team"' "a new agent of a full team"
run 0 "a3 of blue: another team" tm --agent a3 --team blue --log "$T/team.log"
has "$T/team.log" '"agent":"a3","team":"blue"' "the decision log names the team"
run 0 "no team given, none in the log" "$SG" check -p "$T/tm.rules" --log "$T/team2.log" -- true
hasnt "$T/team2.log" '"team"' "a line without --team names no team"
run 0 "no --team: the team 'default'" tm --agent a4
run 0 "the team 'default' by name" tm --agent a5 --team default
run 0 "the team 'default': 3rd" tm --agent a6
run 75 "the team 'default' is full" tm --agent a7
run 64 "--team takes 1 to 200 bytes" "$SG" check -p "$T/tm.rules" --state "$TS" --team '' -- true
has "$T/err" "--team takes 1 to 200 bytes" "the usage message"
# 8 processes, 8 agents of one team: exactly the team's limit
i=0
pids=
while [ $i -lt 8 ]; do
    ( "$SG" check -p "$T/tm.rules" --state "$TS" --agent "g$i" --team green -- true >/dev/null 2>&1; echo $? >"$T/team.rc.$i" ) &
    pids="$pids $!"
    i=$((i + 1))
done
wait $pids
[ "$(cat "$T"/team.rc.* | grep -c '^0$')" -eq 3 ] && ok || bad "8 agents of one team at once: $(cat "$T"/team.rc.* | tr '\n' ' ')"
# run, serve and the hooks take --team too
printf '%s\n' '{"session_id":"t1","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"true"}}' \
    >"$T/team.json"
run 0 "run --team: the team's 1st" "$SG" run -p "$T/tm.rules" --state "$TS" --agent r1 --team ops --cwd / -- true
run 0 "hook --team: the 2nd" "$SG" hook claude-code -p "$T/tm.rules" --state "$TS" --team ops <"$T/team.json"
has "$T/out" '"permissionDecision":"allow"' "hook --team admits"
run 0 "hook --team: another session, the 3rd" "$SG" hook codex -p "$T/tm.rules" --state "$TS" --team ops <"$T/team.json"
run 0 "hook --team: the team is full" "$SG" hook claude-code -p "$T/tm.rules" --state "$TS" --team ops <"$T/team.json"
has "$T/out" '"permissionDecision":"deny","permissionDecisionReason":"shellgate denied this command (limit:team)' "hook: refused by the team"
run 126 "run --team: the team is full" "$SG" run -p "$T/tm.rules" --state "$TS" --agent r2 --team ops --cwd / -- true
has "$T/err" "(deny, rule limit:team)" "run: refused by the team"
run 0 "the hook's snippet keeps --team" "$SG" hook claude-code -p "$T/tm.rules" --team ops --print-config
has "$T/out" "--team 'ops'" "--print-config repeats --team"

# ---- the worked deployment pack's limit (docs/language.md "Writing a deployment pack"):
# what its relax lifted is counted, 60 a minute
if [ -n "$SRC" ]; then
    AP="$SRC/tests/packs/deploy/acme_default.rules"
    AS="$T/acme.state"
    i=0
    at 5000
    while [ $i -lt 60 ]; do
        "$SG" check -p "$AP" --state "$AS" -- 'curl -s https://git.corp.example/api/x' >/dev/null 2>&1 || break
        i=$((i + 1))
    done
    [ $i -eq 60 ] && ok || bad "acme: curl admitted $i times, want 60"
    at 5030; run 75 "acme: the 61st curl in the minute" "$SG" check -p "$AP" --state "$AS" -- 'curl -s https://git.corp.example/api/x'
    has "$T/out" "at most 60 curl calls a minute" "acme: the limit's message"
    run 0 "acme: other commands are not counted" "$SG" check -p "$AP" --state "$AS" -- 'ls -la'
    at 5061; run 0 "acme: a minute later" "$SG" check -p "$AP" --state "$AS" -- 'curl -s https://git.corp.example/api/x'
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
