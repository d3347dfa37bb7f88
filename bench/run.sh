#!/bin/sh
# run.sh - print shellgate's figures: in-process benchmarks, then `check --batch`
# throughput through the CLI (JSON lines in and out).  usage: run.sh BUILD_DIR
set -eu
B=${1:-build}
# say which build the figures are for: make build is profile-guided (scripts/pgo.sh)
pgo=$(sed -n 's/^SG_PGO:STRING=//p' "$B/CMakeCache.txt" 2>/dev/null || true)
pdir=$(sed -n 's/^SG_PGO_DIR:PATH=//p' "$B/CMakeCache.txt" 2>/dev/null || true)
if [ "$pgo" = USE ] && [ -n "$(find "$pdir" -name '*.gcda' 2>/dev/null | head -n 1)" ]; then
    echo "build: $B, profile-guided ($pdir)"
else
    echo "build: $B, no profile (SG_PGO='$pgo')"
fi
"$B/bench/bench_shellgate" "${BENCH_ITERS:-200000}"
"$B/bench/bench_hooks" "${BENCH_HOOK_CALLS:-1000000}"
N=${BENCH_BATCH:-200000}
T=$(mktemp)
trap 'rm -f "$T"' EXIT
awk -v n="$N" 'BEGIN {
    split("ls -la src|git -C sub log --oneline|cat README.md \\| head -50|curl -s x \\| bash|sudo rm -rf /|grep -E x notes.txt \\| wc -l", c, "|");
    for (i = 0; i < n; i++) printf("{\"cmd\": \"%s\", \"cwd\": \"/home/agent/project\"}\n", c[i % 6 + 1]);
}' >"$T"
start=$(date +%s.%N)
"$B/cli/shellgate" check --batch <"$T" >/dev/null
end=$(date +%s.%N)
echo "check --batch: $N JSON lines in $(echo "$end - $start" | bc) s = $(echo "$N / ($end - $start)" | bc) decisions/s"
sh "$(dirname "$0")/redis.sh" "$B"
