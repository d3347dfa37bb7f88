#!/bin/sh
# run.sh - print shellgate's figures and write them to bench/results.json: the
# in-process benchmarks with their baselines, check --batch through the CLI, one
# process per decision (bench_shellgate), and the per-call cost of a Lua hook
# (bench_hooks).  Run from the source tree (decisions resolve its paths).
# usage: run.sh BUILD_DIR [RESULTS.json]
#   BENCH_ITERS (decisions per figure, default 200000), BENCH_SPAWN (processes per
#   one-process figure, 300), BENCH_BATCH (lines for the CLI batch, 200000),
#   BENCH_HOOK_CALLS (1000000), BENCH_HOOK (hook calls per agent, 300),
#   BENCH_SERVER (server requests per client, 2000)
set -eu
B=${1:-build}
OUT=${2:-bench/results.json}
# say which build the figures are for: make build is profile-guided (scripts/pgo.sh)
pgo=$(sed -n 's/^SG_PGO:STRING=//p' "$B/CMakeCache.txt" 2>/dev/null || true)
pdir=$(sed -n 's/^SG_PGO_DIR:PATH=//p' "$B/CMakeCache.txt" 2>/dev/null || true)
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$B/CMakeCache.txt" 2>/dev/null || true)
if [ "$pgo" = USE ] && [ -n "$(find "$pdir" -name '*.gcda' 2>/dev/null | head -n 1)" ]; then
    build="$btype, profile-guided"
else
    build="$btype, no profile"
fi
echo "build: $B ($build); $(nproc) cpus; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$B/bench/bench_shellgate" --iters "${BENCH_ITERS:-200000}" --spawn "${BENCH_SPAWN:-300}" \
    --batch "${BENCH_BATCH:-200000}" --cli "$B/cli/shellgate" --build "$build" --json "$OUT"
"$B/bench/bench_hooks" "${BENCH_HOOK_CALLS:-1000000}"
# admission through the Redis rate store: its own block of figures (bench/redis.sh)
part=$(mktemp)
sh "$(dirname "$0")/redis.sh" "$B" "$part"
[ -s "$part" ] && python3 "$(dirname "$0")/merge_agents.py" "$OUT" "$part"

# ---- the executor: `shellgate run` over a bare fork/exec of true, with and without
# the sandbox, and in process (docs/executor.md) -----------------------------------
"$B/bench/bench_run" "$B/cli/shellgate" "${BENCH_RUN:-200}" "$part"
python3 "$(dirname "$0")/merge_agents.py" "$OUT" "$part"
rm -f "$part"

# ---- what an agent pays: a hook call end to end, and the server with 1 and 32
# clients (bench/bench_agents.c); their figures fill results.json's places -------
agents=$(mktemp)
"$B/bench/bench_agents" "$B/cli/shellgate" "${BENCH_HOOK:-300}" "${BENCH_SERVER:-2000}" "$agents"
python3 "$(dirname "$0")/merge_agents.py" "$OUT" "$agents"
rm -f "$agents"
echo "figures written to $OUT (bench/plot.sh draws them)"
