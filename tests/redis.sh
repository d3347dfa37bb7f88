#!/bin/sh
# redis.sh - the Redis rate store (admit/redis.c, docs/fleet.md) against a
# real redis-server on a free loopback port, without persistence, in a scratch
# directory: exact windows, 8 processes on each of 2 "hosts" (separate local state)
# against one limit, run, serve (its socket, tests/unixreq.py) and hook claude-code
# sharing one limit with check, a limit per team across hosts and verbs, the approve
# command each names, keys namespaced and expiring, EVALSHA with EVAL after SCRIPT
# FLUSH, the server stopped in the middle of 8 x 2 processes (fail closed: exactly the
# limit, then refusals that say why; local fallback: each host its own limit, with a
# warning), run, serve and hook while it is down, a stopped (slow) server bounded by
# the timeout, a restart, approvals granted on one host honoured on the other,
# `state reset`.
# usage: redis.sh SHELLGATE      (exit 77, skipped, only when redis-server is absent)
set -u
SG=$1
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
    echo "SKIP: redis-server/redis-cli are not installed (scripts/deps.sh installs the Debian package redis-server)"
    exit 77
fi
T=$(mktemp -d)
RPID=
stop_redis() {
    if [ -n "$RPID" ]; then
        kill -CONT "$RPID" 2>/dev/null
        kill "$RPID" 2>/dev/null
        wait "$RPID" 2>/dev/null
        RPID=
    fi
}
SPIDS=
stop_serves() { # the servers serve_start started, by their pids
    for p in $SPIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    SPIDS=
}
trap 'stop_serves; stop_redis; rm -rf "$T"' EXIT
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

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
start_redis() { # on $PORT, no persistence, data in $T/redis
    mkdir -p "$T/redis"
    redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$T/redis" \
        --logfile "$T/redis/log" --daemonize no 3>&- &
    RPID=$!
    i=0
    while [ $i -lt 100 ]; do
        [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    echo "redis-server did not start on port $PORT:" >&2
    cat "$T/redis/log" >&2
    return 1
}
rcli() { redis-cli -p "$PORT" "$@"; }
HERE=$(dirname "$0")
serve_start() { # socket stderr-file option...: `shellgate serve` in the background
    sock=$1; serr=$2; shift 2
    "$SG" serve --socket "$sock" "$@" 2>"$serr" 3>&- &
    SPIDS="$SPIDS $!"
}
ask_serve() { # socket requests-file: the answers in $T/sout, one a line (tests/unixreq.py)
    python3 "$HERE/unixreq.py" "$1" "$2" >"$T/sout" 2>"$T/serr" || { bad "serve on $1 did not answer"; cat "$T/serr" >&2; }
}
sreq() { # file id agent command: one check request for serve
    printf '{"id":%s,"op":"check","cmd":"%s","cwd":"/","agent":"%s"}\n' "$2" "$4" "$3" >"$1"
}
hookin() { # file session command: a Claude Code PreToolUse payload
    printf '{"session_id":"%s","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s"}}\n' \
        "$2" "$3" >"$1"
}

PORT=$(free_port)
start_redis || { PORT=$(free_port); start_redis; } || exit 1
U="redis://127.0.0.1:$PORT"

cat >"$T/adm.rules" <<'EOF'
pack adm version 3
use std/wrappers
default deny "'{program}' is not allowed"
allow program in { ls cat echo true }
allow program git and subcommand in { status log }
ask program git and subcommand push
limit burst 3 per 10s, 5 per 1m "Rate limit: max {count} commands per {per}. Wait {wait}s. Please wait {wait} seconds."
limit gitlim 2 per 1h when program git
EOF
P="$T/adm.rules"
at() { SHELLGATE_TEST_NOW=$1; export SHELLGATE_TEST_NOW; }

# ---- exact windows on an injected clock (database 1: a store made under the hook) ---
R1="$U/1"
at 1000; run 0 "1st" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" -- ls
at 1001; run 0 "2nd" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" -- ls
at 1002; run 0 "3rd" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" -- ls
at 1009.75; run 75 "4th inside 10 s" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --json -- ls
has "$T/out" '"rate_limited":true' "4th rate_limited"
has "$T/out" '"wait_time_seconds":0.25' "4th exact wait"
has "$T/out" '"rule":"limit:burst"' "4th rule"
has "$T/out" 'Rate limit: max 3 commands per 10 seconds. Wait 0.2s. Please wait 0.2 seconds.' "GAIA wording"
at 1010; run 0 "at the window edge the oldest leaves" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" -- ls
at 1012; run 0 "5th in the minute" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" -- ls
at 1031; run 75 "6th in the minute" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --json -- ls
has "$T/out" 'max 5 commands per minute. Wait 29.0s' "minute window message"
has "$T/out" '"wait_time_seconds":29' "minute wait exact"
at 100; run 75 "a clock stepped back frees nothing" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --json -- ls
has "$T/out" '"wait_time_seconds":29' "wait measured from the newest time seen"
run 0 "another agent has its own slots" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --agent other -- ls
at 2000; run 0 "git 1" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --agent g -- git status
at 2011; run 0 "git 2" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --agent g -- git log
at 2022; run 75 "git 3 in the hour (a when-limit)" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --agent g -- git status
at 2033; run 0 "ls is not limited by gitlim" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --agent g -- ls
at 3000; run 1 "a denied command takes no slot" "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --agent d -- rm x
for i in 1 2 3; do "$SG" check -p "$P" --rate-store "$R1" --state "$T/l1" --agent d -- ls >/dev/null; done
[ "$(rcli -n 1 llen shellgate:limit:adm:burst:d)" = 3 ] && ok || bad "only the 3 admitted commands are recorded"
unset SHELLGATE_TEST_NOW
[ ! -e "$T/l1" ] && ok || bad "a reachable Redis leaves the local state alone"

# the test clock cannot drive a store made without it (database 0)
printf 'pack one version 1\ndefault allow\nlimit one 1 per 1h\n' >"$T/one.rules"
run 0 "real clock: 1st" "$SG" check -p "$T/one.rules" --rate-store "$U" --state "$T/l0" -- true
SHELLGATE_TEST_NOW=9000000000 run 75 "a test clock stepped forward frees nothing in a real store" \
    "$SG" check -p "$T/one.rules" --rate-store "$U" --state "$T/l0" -- true

# ---- keys: namespaced by pack, limit and agent, escaped, expiring on their own -------
run 0 "an agent id with separators" "$SG" check -p "$T/one.rules" --rate-store "$U" --agent 'team a:7' -- true
rcli --scan --pattern 'shellgate:limit:*' >"$T/keys"
has "$T/keys" 'shellgate:limit:one:one:default' "key names pack, limit, agent"
has "$T/keys" 'shellgate:limit:one:one:team%20a%3A7' "agent escaped: it cannot forge another key"
ttl=$(rcli pttl 'shellgate:limit:one:one:default')
[ "$ttl" -gt 3590000 ] && [ "$ttl" -le 3601000 ] && ok || bad "limit key expires after its window (+1 s): pttl $ttl"

# ---- EVALSHA, and EVAL when the server has forgotten the script ----------------------
rcli script flush >/dev/null
run 0 "admission after SCRIPT FLUSH (EVAL fallback)" "$SG" check -p "$T/one.rules" --rate-store "$U" --agent f1 -- true
run 0 "then EVALSHA again" "$SG" check -p "$T/one.rules" --rate-store "$U" --agent f2 -- true
rcli info commandstats >"$T/stats"
evalsha=$(sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*failed_calls=\([0-9]*\).*/\1 \2/p' "$T/stats" | tr -d '\r')
set -- $evalsha
[ "${1:-0}" -gt "${2:-0}" ] && ok || bad "EVALSHA hits (our SHA-1 is the server's): $evalsha"
has "$T/stats" 'cmdstat_eval:' "EVAL ran after the flush"

# ---- 8 processes on each of 2 hosts, one limit: exactly the limit ----------------------
cat >"$T/c.rules" <<'EOF'
pack conc version 1
default allow
limit c 5 per 1h
EOF
mkdir -p "$T/hostA" "$T/hostB"
for round in 1 2 3; do
    i=0
    pids=
    while [ $i -lt 8 ]; do
        for h in A B; do
            ( XDG_STATE_HOME="$T/host$h" "$SG" check -p "$T/c.rules" --rate-store "$U" --state "$T/host$h/state" \
                --agent "r$round" -- true >/dev/null 2>&1; echo $? >"$T/rc.$round.$h.$i" ) &
            pids="$pids $!"
        done
        i=$((i + 1))
    done
    wait $pids                         # (a bare wait would wait for redis-server too)
    n=$(cat "$T"/rc.$round.* | grep -c '^0$')
    [ "$n" -eq 5 ] && ok || bad "round $round: $n of 16 admitted on 2 hosts, want exactly 5"
    # 75: refused by the limit (EX_TEMPFAIL)
    nf=$(cat "$T"/rc.$round.* | grep -vc '^\(0\|75\)$')
    [ "$nf" -eq 0 ] && ok || bad "round $round: $nf processes neither admitted nor refused"
done
[ ! -e "$T/hostA/state" ] && [ ! -e "$T/hostB/state" ] && ok || bad "the hosts' local state was not used"

# ---- run, serve and hook share one limit with check: exactly the limit -----------------
# (harmless commands only: what run admits, it runs)
printf '%s\n' 'pack fleet version 1' "default deny \"'{program}' is not allowed\"" 'allow program in { echo true }' \
    'limit shared 4 per 1h' >"$T/fl.rules"
FL="$T/fl.rules"
hookin "$T/hook.json" s1 "echo hi"
serve_start "$T/sg.sock" "$T/serve.err" -p "$FL" --rate-store "$U" --state "$T/hostB/sstate"
run 0 "1 of 4: check" "$SG" check -p "$FL" --rate-store "$U" --state "$T/hostA/state" --agent fl -- echo hi
run 0 "2 of 4: run" "$SG" run -p "$FL" --rate-store "$U" --state "$T/hostA/state" --agent fl --cwd / -- echo hi
[ "$(cat "$T/out")" = hi ] && ok || bad "run ran the admitted command: $(cat "$T/out")"
sreq "$T/req" 1 fl "echo hi"
ask_serve "$T/sg.sock" "$T/req"
has "$T/sout" '{"id":1,"decision":"allow"' "3 of 4: serve"
run 0 "4 of 4: hook claude-code" "$SG" hook claude-code -p "$FL" --rate-store "$U" --state "$T/hostB/state" --agent fl <"$T/hook.json"
has "$T/out" '"permissionDecision":"allow"' "the hook admits the 4th"
[ "$(rcli llen shellgate:limit:fleet:shared:fl)" = 4 ] && ok || bad "the four verbs recorded in one key"
run 75 "the 5th: check refuses" "$SG" check -p "$FL" --rate-store "$U" --state "$T/hostA/state" --agent fl --json -- echo hi
has "$T/out" '"rule":"limit:shared"' "check: the shared limit"
run 126 "the 5th: run refuses" "$SG" run -p "$FL" --rate-store "$U" --state "$T/hostA/state" --agent fl --cwd / --json -- echo hi
has "$T/out" '"rate_limited":true' "run: rate limited"
has "$T/out" '"rule":"limit:shared"' "run: the shared limit"
has "$T/out" '"stdout":""' "run: nothing ran"
sreq "$T/req" 2 fl "echo hi"
ask_serve "$T/sg.sock" "$T/req"
has "$T/sout" '"rule":"limit:shared"' "the 5th: serve refuses"
has "$T/sout" '"rate_limited":true' "serve: rate limited"
run 0 "the 5th: the hook answers" "$SG" hook claude-code -p "$FL" --rate-store "$U" --state "$T/hostB/state" --agent fl <"$T/hook.json"
has "$T/out" '"permissionDecision":"deny","permissionDecisionReason":"shellgate denied this command (limit:shared): Rate limit' "the hook refuses, in Claude Code's format"
[ ! -e "$T/hostA/state" ] && [ ! -e "$T/hostB/state" ] && [ ! -e "$T/hostB/sstate" ] && ok || bad "Redis up: no local state"
# all at once: 3 checks, 3 runs, 3 hooks and 3 serve clients, one limit of 4
i=0
pids=
while [ $i -lt 3 ]; do
    ( "$SG" check -p "$FL" --rate-store "$U" --agent mix -- echo hi >/dev/null 2>&1; echo $? >"$T/mix.check.$i" ) &
    pids="$pids $!"
    ( "$SG" run -p "$FL" --rate-store "$U" --agent mix --cwd / -- echo hi >"$T/mix.run.$i" 2>/dev/null ) &
    pids="$pids $!"
    ( "$SG" hook claude-code -p "$FL" --rate-store "$U" --agent mix <"$T/hook.json" >"$T/mix.hook.$i" 2>/dev/null ) &
    pids="$pids $!"
    sreq "$T/mixreq.$i" "$i" mix "echo hi"
    ( python3 "$HERE/unixreq.py" "$T/sg.sock" "$T/mixreq.$i" >"$T/mix.serve.$i" 2>/dev/null ) &
    pids="$pids $!"
    i=$((i + 1))
done
wait $pids
nc=$(cat "$T"/mix.check.* | grep -c '^0$')
nr=$(cat "$T"/mix.run.* | grep -c '^hi$')
nh=$(cat "$T"/mix.hook.* | grep -c '"permissionDecision":"allow"')
ns=$(cat "$T"/mix.serve.* | grep -c '^{"id":[0-9]*,"decision":"allow"')    # (not a segment's)
[ $((nc + nr + nh + ns)) -eq 4 ] && ok || bad "12 at once from 4 verbs: $nc + $nr + $nh + $ns admitted, want exactly 4"
nl=$(cat "$T"/mix.hook.* "$T"/mix.serve.* | grep -c 'limit:shared')
[ $((nh + ns + nl)) -eq 6 ] && ok || bad "every hook and serve answer not admitted names the limit ($nl)"
[ "$(rcli llen shellgate:limit:fleet:shared:mix)" = 4 ] && ok || bad "4 recorded"

# ---- a limit per team: every agent of the team on every host, beside each agent's own ------
printf '%s\n' 'pack tm version 1' 'default allow' 'limit agent 2 per 1m' 'limit team 5 per 1h per team' >"$T/tm.rules"
i=0
pids=
while [ $i -lt 8 ]; do
    for h in A B; do
        ( XDG_STATE_HOME="$T/host$h" "$SG" check -p "$T/tm.rules" --rate-store "$U" --state "$T/host$h/state" \
            --agent "$h$i" --team red -- true >/dev/null 2>&1; echo $? >"$T/trc.$h.$i" ) &
        pids="$pids $!"
    done
    i=$((i + 1))
done
wait $pids
n=$(cat "$T"/trc.* | grep -c '^0$')
[ "$n" -eq 5 ] && ok || bad "16 agents of one team on 2 hosts: $n admitted, want exactly the team's 5"
[ "$(rcli llen shellgate:team:tm:team:red)" = 5 ] && ok || bad "the team's key: shellgate:team:PACK:LIMIT:TEAM"
run 75 "the team is full for a new agent" "$SG" check -p "$T/tm.rules" --rate-store "$U" --agent new --team red --json -- true
has "$T/out" '"rule":"limit:team"' "refused by the team's limit"
run 0 "another team" "$SG" check -p "$T/tm.rules" --rate-store "$U" --agent new --team blue -- true
run 0 "blue: the agent's 2nd" "$SG" check -p "$T/tm.rules" --rate-store "$U" --agent new --team blue -- true
run 75 "blue: the agent's own limit first" "$SG" check -p "$T/tm.rules" --rate-store "$U" --agent new --team blue --json -- true
has "$T/out" '"rule":"limit:agent"' "refused by the agent's limit"
[ "$(rcli llen shellgate:team:tm:team:blue)" = 2 ] && ok || bad "a command the agent's limit refused took no team slot"
run 0 "a team name with separators" "$SG" check -p "$T/tm.rules" --rate-store "$U" --agent x --team 'a:b c' -- true
[ "$(rcli exists 'shellgate:team:tm:team:a%3Ab%20c')" = 1 ] && ok || bad "the team escaped in its key"
# serve's "team" field (and --team for requests without one), the hook's --team
serve_start "$T/tm.sock" "$T/tm.err" -p "$T/tm.rules" --rate-store "$U" --team green
TMP_SERVE=$!
: >"$T/treq"
for i in 1 2 3; do
    printf '{"id":%s,"op":"check","cmd":"true","cwd":"/","agent":"s%s"}\n' "$i" "$i" >>"$T/treq"
done
printf '%s\n' '{"id":4,"op":"check","cmd":"true","cwd":"/","agent":"s4","team":"teal"}' >>"$T/treq"
ask_serve "$T/tm.sock" "$T/treq"
[ "$(grep -c '^{"id":[0-9]*,"decision":"allow"' "$T/sout")" -eq 4 ] && ok || { bad "serve admits for its team"; cat "$T/sout" >&2; }
[ "$(rcli llen shellgate:team:tm:team:green)" = 3 ] && [ "$(rcli llen shellgate:team:tm:team:teal)" = 1 ] && ok \
    || bad "serve: --team for requests without one, the request's own team"
hookin "$T/thook.json" h1 "true"
run 0 "hook --team green: the 4th" "$SG" hook claude-code -p "$T/tm.rules" --rate-store "$U" --team green <"$T/thook.json"
has "$T/out" '"permissionDecision":"allow"' "hook: the team's 4th"
run 0 "run --team green: the 5th" "$SG" run -p "$T/tm.rules" --rate-store "$U" --agent r --team green --cwd / -- true
ask_serve "$T/tm.sock" "$T/treq"
[ "$(sed -n 1,3p "$T/sout" | grep -c '"rule":"limit:team"')" -eq 3 ] && ok || { bad "serve: the team is full"; cat "$T/sout" >&2; }
kill "$TMP_SERVE"; wait "$TMP_SERVE"

# ---- approvals granted on one host are honoured on the other ---------------------------
A="XDG_CONFIG_HOME=$T/hostA/cfg"
B="XDG_CONFIG_HOME=$T/hostB/cfg"
run 2 "host A asks" env "$A" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostA/state" --agent ag --json -- git push origin main
ID=$(sed -n 's/.*"approval_id":"\([0-9a-f]*\)".*/\1/p' "$T/out")
[ ${#ID} -eq 32 ] && ok || bad "approval id '$ID'"
[ "$(rcli exists "shellgate:pending:$ID")" = 1 ] && ok || bad "the ask waits in Redis"
ttl=$(rcli pttl "shellgate:pending:$ID")
[ "$ttl" -gt 0 ] && [ "$ttl" -le 86400000 ] && ok || bad "a pending ask expires (pttl $ttl)"
run 1 "approve an unknown id" env "$A" "$SG" approve 0123456789abcdef0123456789abcdef --rate-store "$U"
has "$T/err" "$U/0" "the message names the store"
run 0 "host A's operator approves once" env "$A" "$SG" approve "$ID" --once --rate-store "$U" --state "$T/hostA/state"
has "$T/out" "git push origin main" "approve echoes the command from Redis"
run 0 "host B admits it" env "$B" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostB/state" --agent ag --json -- git push origin main
has "$T/out" '"approved":"once"' "approved once, on the other host"
run 2 "once is used up on every host" env "$A" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostA/state" --agent ag -- git push origin main
SHELLGATE_SESSION=s1 run 2 "host A asks in session s1" env "$A" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostA/state" --agent ag -- git push origin main
run 0 "host B approves for the session it was asked from" env "$B" "$SG" approve "$ID" --session --rate-store "$U"
SHELLGATE_SESSION=s1 run 0 "session s1 on host A" env "$A" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostA/state" --agent ag2 -- git push origin main
SHELLGATE_SESSION=s1 run 0 "session s1 on host B" env "$B" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostB/state" --agent ag2 --json -- git push origin main
has "$T/out" '"approved":"session"' "the session approval holds on the other host"
SHELLGATE_SESSION=s1 run 75 "approved, and gitlim (2/h) still holds across hosts" env "$A" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostA/state" --agent ag2 --json -- git push origin main
has "$T/out" '"rate_limited":true' "approved commands obey the shared limits"
SHELLGATE_SESSION=s2 run 2 "another session asks again" env "$B" "$SG" check -p "$P" --rate-store "$U" --state "$T/hostB/state" --agent ag3 -- git push origin main

# ---- the approve command an ask names is the shared store's, in check, run and hooks -----
# (printf is asked for: harmless should the approved run go ahead)
printf '%s\n' 'pack hint version 1' "default deny \"'{program}' is not allowed\"" 'allow program echo' \
    'ask program printf' >"$T/hint.rules"
printf '%s\n' '{"session_id":"h1","cwd":"/","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"printf x"}}' \
    >"$T/hint.json"
run 2 "check: an ask under Redis" "$SG" check -p "$T/hint.rules" --rate-store "$U" --state "$T/hostA/state" --cwd / -- printf x
HID=$(sed -n 's/^  approval: \([0-9a-f]*\) .*/\1/p' "$T/out")
has "$T/out" "(shellgate approve $HID [--once | --session | --always] --rate-store $U)" "check names the store"
run 126 "run: the same ask" "$SG" run -p "$T/hint.rules" --rate-store "$U" --state "$T/hostA/state" --cwd / -- printf x
has "$T/err" "(shellgate approve $HID [--once | --session | --always] --rate-store $U)" "run names the store as check does"
hasnt "$T/err" "--state" "run: the local state is not where the ask waits"
run 0 "hook: the same ask" "$SG" hook claude-code -p "$T/hint.rules" --rate-store "$U" --state "$T/hostA/state" <"$T/hint.json"
has "$T/out" "shellgate approve $HID --once (or --session, --always) --rate-store $U\`" "the hook names the store as check does"
hasnt "$T/out" "--state" "hook: the local state is not where the ask waits"
run 0 "codex: the deny says the same" "$SG" hook codex -p "$T/hint.rules" --rate-store "$U" <"$T/hint.json"
has "$T/out" "--rate-store $U\`; then try again" "codex deny names the store"
run 0 "the hint's command, on host B" env "$B" "$SG" approve "$HID" --once --rate-store "$U"
run 0 "host A's run runs it" env "$A" "$SG" run -p "$T/hint.rules" --rate-store "$U" --state "$T/hostA/state" --cwd / -- printf x
[ "$(cat "$T/out")" = x ] && ok || bad "the approved run ran: $(cat "$T/out")"

# ---- state reset forgets the shared limits ------------------------------------------------
run 75 "limit exhausted" "$SG" check -p "$T/c.rules" --rate-store "$U" --agent r1 -- true
run 0 "state reset --rate-store" "$SG" state reset --rate-store "$U"
has "$T/out" "state reset: $U/0" "reset names the store"
run 0 "admitted after the reset" "$SG" check -p "$T/c.rules" --rate-store "$U" --agent r1 -- true
[ "$(rcli exists shellgate:clock)" = 1 ] && ok || bad "reset keeps the largest time seen"

# ---- the server stops mid-run: 8 processes on each of 2 hosts, both failure modes ---------
# Each host has its own local state; 16 loops of 16 checks admit against one limit of 24,
# and the server is stopped once 32 checks are done (25 done imply the limit was reached).
printf '%s\n' 'pack mid version 1' 'default allow' 'limit m 24 per 1h' >"$T/m.rules"
midrun() { # mode tag: the loops, Redis stopped mid-run; $T/TAG/{out,err,rc}.HOST.LOOP.K
    mkdir -p "$T/$2"
    pids=
    for h in A B; do
        mkdir -p "$T/$2/host$h"
        j=0
        while [ $j -lt 8 ]; do
            ( k=0
              while [ $k -lt 16 ]; do
                  XDG_STATE_HOME="$T/$2/host$h" "$SG" check -p "$T/m.rules" --rate-store "$U" --rate-store-down "$1" \
                      --state "$T/$2/host$h/state" --agent "$2" --json -- true >"$T/$2/out.$h.$j.$k" 2>"$T/$2/err.$h.$j.$k"
                  echo $? >"$T/$2/rc.$h.$j.$k"
                  k=$((k + 1))
              done ) 3>&- &
            pids="$pids $!"
            j=$((j + 1))
        done
    done
    i=0
    while [ "$(ls "$T/$2" | grep -c '^rc\.')" -lt 32 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
    stop_redis
    wait $pids
}
WARN="shellgate: warning: the rate store $U/0 cannot be used ("
# fail closed (the default mode): exactly 24 admitted, then the limit, then every check
# refused with the reason, and never admitted again
midrun deny closed
n0=0; n75=0; n1=0; other=0; why=0; order=0
for h in A B; do
    j=0
    while [ $j -lt 8 ]; do
        k=0; down=0
        while [ $k -lt 16 ]; do
            f="$T/closed/out.$h.$j.$k"
            c=$(cat "$T/closed/rc.$h.$j.$k")
            case $c in
                0) n0=$((n0 + 1)) ;;
                75) n75=$((n75 + 1)) ;;
                1) n1=$((n1 + 1))
                   if ! grep -qF '"rule":"admission"' "$f" || ! grep -qF "the shared rate store $U/0 cannot be used (" "$f" \
                       || ! grep -qF "it fails closed (--rate-store-down local would admit" "$f"; then
                       why=$((why + 1)); cat "$f" >&2
                   fi ;;
                *) other=$((other + 1)) ;;
            esac
            [ "$c" = 1 ] && down=1
            [ "$down" = 1 ] && [ "$c" != 1 ] && order=$((order + 1))
            k=$((k + 1))
        done
        j=$((j + 1))
    done
done
[ "$n0" -eq 24 ] && ok || bad "fail closed: $n0 admitted before the stop on 2 hosts, want exactly 24"
[ "$n75" -ge 8 ] && ok || bad "fail closed: the limit refused only $n75 before the stop"
[ "$n1" -ge 1 ] && ok || bad "fail closed: no check came after the stop"
[ "$other" -eq 0 ] && ok || bad "fail closed: $other checks neither admitted nor refused"
[ "$why" -eq 0 ] && ok || bad "fail closed: $why refusals do not say why"
[ "$order" -eq 0 ] && ok || bad "fail closed: $order checks admitted or counted after a refusal for the stop"
[ ! -e "$T/closed/hostA/state" ] && [ ! -e "$T/closed/hostB/state" ] && ok || bad "fail closed does not touch the local state"
# fall back (--rate-store-down local): 24 admitted by Redis, then each host admits against
# its own state with a warning, its own 24 and no more
start_redis || exit 1
midrun local fallback
nrA=0; nrB=0
for h in A B; do
    nr=0; nloc=0; nl0=0; bad1=0; order=0
    j=0
    while [ $j -lt 8 ]; do
        k=0; down=0
        while [ $k -lt 16 ]; do
            f="$h.$j.$k"
            c=$(cat "$T/fallback/rc.$f")
            if grep -qF "$WARN" "$T/fallback/err.$f"; then
                down=1
                nloc=$((nloc + 1))
                grep -qF "admitting against the local state $T/fallback/host$h/state instead" "$T/fallback/err.$f" \
                    || { bad1=$((bad1 + 1)); cat "$T/fallback/err.$f" >&2; }
                [ "$c" = 0 ] && nl0=$((nl0 + 1))
                if [ "$c" = 75 ] && ! grep -qF '"rule":"limit:m"' "$T/fallback/out.$f"; then bad1=$((bad1 + 1)); fi
            else
                [ "$down" = 1 ] && order=$((order + 1))
                [ "$c" = 0 ] && nr=$((nr + 1))
            fi
            case $c in 0|75) ;; *) bad1=$((bad1 + 1)); cat "$T/fallback/out.$f" "$T/fallback/err.$f" >&2 ;; esac
            k=$((k + 1))
        done
        j=$((j + 1))
    done
    if [ "$h" = A ]; then nrA=$nr; else nrB=$nr; fi
    want=$((nloc < 24 ? nloc : 24))
    [ "$nloc" -ge 1 ] && ok || bad "fallback: no check on host $h came after the stop"
    [ "$nl0" -eq "$want" ] && ok || bad "fallback: host $h admitted $nl0 locally of $nloc, want $want (its own limit)"
    [ "$bad1" -eq 0 ] && ok || bad "fallback: host $h: $bad1 checks refused, or warned without naming its state"
    [ "$order" -eq 0 ] && ok || bad "fallback: host $h: $order checks on Redis after the fallback began"
    [ -s "$T/fallback/host$h/state" ] && ok || bad "fallback: host $h's local state recorded its admissions"
done
[ $((nrA + nrB)) -eq 24 ] && ok || bad "fallback: $nrA + $nrB admitted by Redis before the stop, want exactly 24"
# one check at a time, on host A's state: the server is still down
run 1 "down: fail closed by default" "$SG" check -p "$T/c.rules" --rate-store "$U" --state "$T/hostA/state" -- true
has "$T/out" "cannot be used" "closed message"
run 0 "down: --rate-store-down local admits" "$SG" check -p "$T/c.rules" --rate-store "$U" --rate-store-down local --state "$T/hostA/state" -- true
has "$T/err" "warning: the rate store $U/0 cannot be used" "the fallback is warned"
has "$T/err" "admitting against the local state $T/hostA/state" "the warning names the local state"
[ -s "$T/hostA/state" ] && ok || bad "the local state recorded the command"
for i in 2 3 4 5; do "$SG" check -p "$T/c.rules" --rate-store "$U" --rate-store-down local --state "$T/hostA/state" -- true >/dev/null 2>&1; done
run 75 "the local store enforces the limit on its own" "$SG" check -p "$T/c.rules" --rate-store "$U" --rate-store-down local --state "$T/hostA/state" --json -- true
has "$T/out" '"rule":"limit:c"' "local limit"

# run, serve and hook while the server is down: fail closed by default, fall back with local
ask_serve "$T/sg.sock" "$T/req"
has "$T/sout" '"rule":"admission"' "serve (started while up) fails closed"
has "$T/sout" "the shared rate store $U/0 cannot be used (" "serve: the reason"
has "$T/sout" "it fails closed" "serve: the mode"
serve_start "$T/sgl.sock" "$T/servel.err" -p "$FL" --rate-store "$U" --rate-store-down local --state "$T/hostB/lstate"
: >"$T/req5"
for i in 1 2 3 4 5; do sreq "$T/r1" "$i" down "echo hi"; cat "$T/r1" >>"$T/req5"; done
ask_serve "$T/sgl.sock" "$T/req5"
[ "$(grep -c '^{"id":[0-9]*,"decision":"allow"' "$T/sout")" -eq 4 ] && ok || { bad "serve --rate-store-down local admits its limit"; cat "$T/sout" >&2; }
[ "$(sed -n 5p "$T/sout" | grep -c '"rule":"limit:shared"')" -eq 1 ] && ok || bad "serve: the local state keeps the limit"
has "$T/servel.err" "$WARN" "serve: the fallback is warned"
has "$T/servel.err" "admitting against the local state $T/hostB/lstate instead" "serve: the warning names the local state"
[ -s "$T/hostB/lstate" ] && ok || bad "serve: the local state recorded the commands"
run 126 "run fails closed" "$SG" run -p "$FL" --rate-store "$U" --state "$T/hostA/rstate" --agent down --cwd / -- echo hi
has "$T/err" "the shared rate store $U/0 cannot be used (" "run: the reason"
has "$T/err" "it fails closed" "run: the mode"
[ ! -s "$T/out" ] && [ ! -e "$T/hostA/rstate" ] && ok || bad "run: nothing ran, no local state"
run 0 "run --rate-store-down local" "$SG" run -p "$FL" --rate-store "$U" --rate-store-down local --state "$T/hostA/rstate" --agent down --cwd / -- echo hi
[ "$(cat "$T/out")" = hi ] && ok || bad "run: the fallback ran it"
has "$T/err" "$WARN" "run: the fallback is warned"
hasnt "$T/err" "warning: warning:" "run: one 'warning:'"
has "$T/err" "admitting against the local state $T/hostA/rstate instead" "run: the warning names the local state"
run 0 "the hook fails closed" "$SG" hook claude-code -p "$FL" --rate-store "$U" --state "$T/hostA/hstate" --agent down <"$T/hook.json"
has "$T/out" '"permissionDecision":"deny","permissionDecisionReason":"shellgate denied this command (admission)' "hook: a deny in Claude Code's format"
has "$T/out" "the shared rate store $U/0 cannot be used (" "hook: the reason"
has "$T/out" "it fails closed" "hook: the mode"
[ ! -e "$T/hostA/hstate" ] && ok || bad "hook: fail closed does not touch the local state"
run 0 "the hook with --rate-store-down local" "$SG" hook claude-code -p "$FL" --rate-store "$U" --rate-store-down local --state "$T/hostA/hstate" --agent down <"$T/hook.json"
has "$T/out" '"permissionDecision":"allow"' "hook: the fallback admits"
has "$T/err" "$WARN" "hook: the fallback is warned"
has "$T/err" "admitting against the local state $T/hostA/hstate instead" "hook: the warning names the local state"
[ -s "$T/hostA/hstate" ] && ok || bad "hook: the local state recorded it"

# ---- restarted: admission resumes --------------------------------------------------------
start_redis || exit 1
run 0 "restarted: admitted" "$SG" check -p "$T/c.rules" --rate-store "$U" --state "$T/hostB/state" -- true
[ ! -e "$T/hostB/state" ] && ok || bad "back on Redis, not the local state"

# ---- one long-running process: the server goes away and comes back ---------------------
# (a write to the dead connection raises SIGPIPE, which must not kill the process)
mkfifo "$T/fifo"
"$SG" check -p "$T/c.rules" --batch --rate-store "$U" --agent longrun <"$T/fifo" >"$T/bout" 2>"$T/berr" &
BP=$!
exec 3>"$T/fifo"
line='{"cmd": "true"}'
echo "$line" >&3; sleep 0.3
stop_redis
echo "$line" >&3; sleep 0.3
echo "$line" >&3; sleep 0.3
start_redis || exit 1
sleep 1.2                              # the store counts as down for a second after a failure
echo "$line" >&3
exec 3>&-
wait $BP
[ $? -eq 0 ] && ok || bad "the batch process survived the server going away"
[ "$(sed -n 1p "$T/bout" | grep -c '"decision":"allow"')" -eq 1 ] && ok || bad "batch: admitted while up"
[ "$(sed -n 2,3p "$T/bout" | grep -c '"rule":"admission"')" -eq 2 ] && ok || bad "batch: refused while down"
[ "$(sed -n 4p "$T/bout" | grep -c '"decision":"allow"')" -eq 1 ] && ok || { bad "batch: admitted once it is back"; cat "$T/bout" >&2; }
sreq "$T/req" 9 back "echo hi"
ask_serve "$T/sg.sock" "$T/req"
has "$T/sout" '{"id":9,"decision":"allow"' "serve (up, down, up again) admits once it is back"
[ "$(rcli llen shellgate:limit:fleet:shared:back)" = 1 ] && ok || bad "serve: back on Redis"
stop_serves

# ---- a stopped (slow) server: bounded by the timeout -----------------------------------
kill -STOP "$RPID"
start=$(date +%s%N)
run 1 "a stopped server is refused within the timeout" "$SG" check -p "$T/c.rules" --rate-store "$U" --rate-store-timeout 200 --agent slow -- true
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$ms" -lt 3000 ] && ok || bad "a stopped server took $ms ms (timeout 200 ms)"
has "$T/out" "no answer running the admission script within 200 ms" "the timeout is said"
run 0 "slow with local fallback" "$SG" check -p "$T/c.rules" --rate-store "$U" --rate-store-timeout 200 --rate-store-down local --state "$T/hostB/state" --agent slow -- true
has "$T/err" "warning:" "slow fallback warned"
kill -CONT "$RPID"
run 0 "resumed after the stall" "$SG" check -p "$T/c.rules" --rate-store "$U" --agent slow2 -- true

# ---- usage --------------------------------------------------------------------------------
run 64 "a malformed URL" "$SG" check -p "$P" --rate-store "redis://user:pw@host:1" -- ls
has "$T/err" "expected redis://HOST[:PORT][/DB]" "URL message"
run 64 "a bad failure mode" "$SG" check -p "$P" --rate-store "$U" --rate-store-down maybe -- ls
run 64 "another scheme" "$SG" check -p "$P" --rate-store "memcache://x" -- ls

stop_redis
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
