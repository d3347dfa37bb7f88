#!/bin/sh
# redis.sh - admission through the Redis rate store (docs/fleet.md): admissions/s
# of `check --batch` against a local redis-server (one client, and 4 at once), and
# the latency admission adds to a decision, next to the local state file on tmpfs.
# usage: redis.sh BUILD_DIR [JSON_OUT]   (BENCH_ADMIT lines per run, default 20000)
#   JSON_OUT gets {"redis": {...}} for bench/results.json (bench/merge_agents.py)
set -eu
B=${1:-build}
JS=${2:-}
N=${BENCH_ADMIT:-20000}
SG="$B/cli/shellgate"
if ! command -v redis-server >/dev/null 2>&1; then
    echo "admission (Redis): skipped, redis-server is not installed (scripts/deps.sh installs it)"
    exit 0
fi
T=$(mktemp -d)
S=$(mktemp -d /dev/shm/sgbench.XXXXXX 2>/dev/null || mktemp -d)
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$T" --logfile "$T/log" --daemonize no &
RPID=$!
trap 'kill $RPID 2>/dev/null; wait $RPID 2>/dev/null; rm -rf "$T" "$S"' EXIT
i=0
until [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i + 1)); done
printf 'pack bench version 1\ndefault allow\nlimit shell 100000 per 1h, 100000 per 1m\n' >"$T/b.rules"
"$SG" compile -o "$T/b.sgt" "$T/b.rules" >/dev/null
awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) print "{\"cmd\": \"ls -la src\", \"cwd\": \"/home/agent/project\"}" }' >"$T/in"
secs() { # command...: wall seconds
    s=$(date +%s.%N)
    "$@" <"$T/in" >/dev/null
    e=$(date +%s.%N)
    echo "$e - $s" | bc
}
pure=$(secs "$SG" check -p "$T/b.sgt" --batch)
file=$(secs "$SG" check -p "$T/b.sgt" --batch --state "$S/state")
redis=$(secs "$SG" check -p "$T/b.sgt" --batch --rate-store "redis://127.0.0.1:$PORT" --agent one)
s=$(date +%s.%N)
for k in 1 2 3 4; do
    "$SG" check -p "$T/b.sgt" --batch --rate-store "redis://127.0.0.1:$PORT" --agent "c$k" <"$T/in" >/dev/null &
    eval "p$k=\$!"
done
wait "$p1" "$p2" "$p3" "$p4"
e=$(date +%s.%N)
four=$(echo "$e - $s" | bc)
echo "admission: $N lines of check --batch, one limit of two windows"
echo "  no admission:        $(echo "$N / $pure" | bc) decisions/s"
echo "  local state (tmpfs): $(echo "$N / $file" | bc) admissions/s, +$(echo "($file - $pure) * 1000000 / $N" | bc) us a decision (it rewrites every timestamp in the window: up to $N here)"
echo "  Redis (loopback):    $(echo "$N / $redis" | bc) admissions/s, +$(echo "($redis - $pure) * 1000000 / $N" | bc) us a decision"
echo "  Redis, 4 clients:    $(echo "4 * $N / $four" | bc) admissions/s together"
if [ -n "$JS" ]; then
    printf '{"redis": {"lines": %s, "pure_per_s": %s, "file_per_s": %s, "redis_per_s": %s, "redis_added_us": %s, "redis_4_clients_per_s": %s}}\n' \
        "$N" "$(echo "$N / $pure" | bc)" "$(echo "$N / $file" | bc)" "$(echo "$N / $redis" | bc)" \
        "$(echo "($redis - $pure) * 1000000 / $N" | bc)" "$(echo "4 * $N / $four" | bc)" >"$JS"
fi
