#!/bin/sh
# run.sh - run every libFuzzer harness for a while and report what it did.
#   sh fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]      (make fuzz FUZZ_SECONDS=N)
# BUILD_DIR is a clang build with -DSG_FUZZ=ON (make build-fuzz).  Each harness runs
# alone (one process, no -jobs) for SECONDS with its dictionary, starting from its
# seed corpus plus what earlier runs found.  New corpus entries and crash files go
# to a scratch directory, never into fuzz/corpus: $FUZZ_WORK, default
# BUILD_DIR/fuzz-work/NAME/{corpus,crashes,log}.  Prints one line per harness:
# executions, execs/s, coverage at start and end, new units, and any crash.
# Exits 1 when a harness crashed (see fuzz/README.md to turn it into a test).
set -u
if [ $# -lt 2 ]; then
    echo "usage: sh fuzz/run.sh BUILD_DIR SECONDS [HARNESS...]" >&2
    exit 64
fi
build=$1
secs=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
work=${FUZZ_WORK:-$build/fuzz-work}
harnesses=${*:-"lexer rules table shparse eval batch diff hooks exec"}
status=0

printf '%-8s %10s %9s %7s %7s %6s  %s\n' harness execs execs/s cov0 cov new result
for h in $harnesses; do
    bin=$build/fuzz/fuzz_$h
    if [ ! -x "$bin" ]; then
        echo "$h: $bin not built (make build-fuzz)" >&2
        status=1
        continue
    fi
    dir=$work/$h
    mkdir -p "$dir/corpus" "$dir/crashes"
    # seeds: the committed corpus (and, for tables, the packs compiled by this build)
    cp -p "$src/corpus/$h"/* "$dir/corpus/" 2>/dev/null
    if [ "$h" = table ]; then
        for t in "$build"/embedded/*.sgt; do
            [ -f "$t" ] && cp -p "$t" "$dir/corpus/pack_$(basename "$t")"
        done
    fi
    log=$dir/log
    "$bin" -max_total_time="$secs" -dict="$src/$h.dict" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$dir/crashes/" "$dir/corpus" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
    cov0=$(sed -n 's/.*INITED cov: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        result=ok
    else
        result="FAILED (exit $rc) ${crash:-see $log}"
        status=1
    fi
    printf '%-8s %10s %9s %7s %7s %6s  %s\n' "$h" "${execs:-?}" "${rate:-?}" "${cov0:-?}" "${cov:-?}" \
        "${added:-?}" "$result"
    if [ $rc -ne 0 ]; then
        grep -m1 -A12 'ERROR:\|fuzz invariant failed\|runtime error' "$log" | sed 's/^/    /'
    fi
done
echo "(corpus, crashes and logs in $work; fuzz/corpus is not written)"
if [ $status -ne 0 ]; then
    cat <<'MSG'
A crash becomes a regression test once it is fixed:
  BIN -minimize_crash=1 -runs=100000 -exact_artifact_path=min CRASH   # shrink it
  cp min fuzz/corpus/NAME/crash-WHAT                                   # name what it hits
  ctest -R 'replay_NAME'                                               # replays it everywhere
MSG
fi
exit $status
