#!/bin/sh
# pgo.sh - the profile for a profile-guided build of shellgate (SG_PGO=USE).
# usage: pgo.sh GEN_TREE PROFILE_DIR
#
# Builds the CLI in GEN_TREE with SG_PGO=GENERATE, then trains it on the packs'
# case files (tests/packs/PACK.cases: benign agent commands and bypass attempts,
# about 1,900 lines; not the measuring corpora beside them), through `shellgate
# test` and through `check --batch`.  The benchmark's commands (bench/bench.c) are
# not in the training set, so `make bench` measures the build on commands it was
# not tuned for.
#
# A profile only steers the optimiser: the code and its results are the same
# with or without one, and the whole test suite runs on the profiled build.
# If any step fails, the profile is removed and the build goes on without one
# (it says so): a slower binary, never a broken one.
set -eu
G=${1:?usage: pgo.sh GEN_TREE PROFILE_DIR}
P=${2:?usage: pgo.sh GEN_TREE PROFILE_DIR}
JOBS=${JOBS:-2}

no_profile() {
    echo "pgo: $1; building without a profile" >&2
    rm -rf "$P"
    exit 0
}

# counts from an earlier run would add up with this one's (the build itself runs the
# instrumented compiler to embed the packs, which writes a profile too)
rm -rf "$P"
cmake -S . -B "$G" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_PGO=GENERATE -DSG_PGO_DIR="$P" \
    ${CMAKE_FLAGS:-} >/dev/null || no_profile "configuring $G failed"
cmake --build "$G" -j "$JOBS" --target shellgate >/dev/null || no_profile "building $G failed"
rm -rf "$P"
mkdir -p "$P"
SG="$G/cli/shellgate"
B=$(mktemp)
trap 'rm -f "$B"' EXIT
# the case files' commands as batch lines (JSON-escaped), each with this tree as cwd
python3 - "$PWD" tests/packs/default.cases tests/packs/gaia.cases tests/packs/ironclaw.cases \
    tests/packs/readonly.cases >"$B" <<'EOF' || no_profile "writing the batch input failed"
import json, sys
cwd = sys.argv[1]
for name in sys.argv[2:]:
    cases = []
    for line in open(name, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if cases and (line == "|" or line.startswith("| ")):
            cases[-1] += "\n" + line[2:]      # a continuation line
        else:
            cases.append(line)
    for line in cases:
        if not line.strip() or line.startswith("#"):
            continue
        cmd = line.rsplit(" ; ", 2)[0]
        print(json.dumps({"cmd": cmd, "cwd": cwd}))
EOF
for round in 1 2 3; do
    for pack in default gaia ironclaw readonly; do
        "$SG" test -p "$pack" "tests/packs/$pack.cases" >/dev/null || no_profile "training on $pack.cases failed"
        "$SG" check -p "$pack" --batch <"$B" >/dev/null || no_profile "batch training on $pack failed"
    done
done
n=$(find "$P" -name '*.gcda' | wc -l)
[ "$n" -gt 0 ] || no_profile "the training wrote no profile"
echo "pgo: profile of $n files in $P"
