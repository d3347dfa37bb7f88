#!/bin/sh
# plot.sh - draw bench/results.json (written by `make bench`) as SVG figures with
# gnuplot (Debian's gnuplot-nox, installed by scripts/deps.sh):
#   latency.svg     decision latency against the number of rules, with the regex list
#   throughput.svg  decisions per second per pack and per path (in process, batch,
#                   one process per decision, a hook call, the server, run, admission
#                   through Redis, the regex list; per CPU-second unless marked wall)
#   compile.svg     compile, load+verify and context time against pack size, with regcomp
# usage: plot.sh [RESULTS.json] [OUTDIR]    (defaults: bench/results.json, docs/perf)
set -eu
IN=${1:-bench/results.json}
OUT=${2:-docs/perf}
command -v gnuplot >/dev/null 2>&1 || { echo "plot.sh: gnuplot is missing (sh scripts/deps.sh)" >&2; exit 1; }
mkdir -p "$OUT"
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
# the data files gnuplot reads, from the JSON (python3 is a build dependency)
python3 - "$IN" "$D" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = sys.argv[2]
packs = {p["rules"]: p for p in r["packs"]}
with open(f"{d}/latency.tsv", "w") as f:
    re = {b["rules"]: b for b in r["regex_baseline"]}
    dec = {(x["pack"], x["workload"]): x for x in r["decisions"]}
    for n in sorted(packs):
        x = dec[(f"generated-{n}", "realistic")]
        nt = dec.get((f"generated-{n}-notext", "realistic"), x)
        f.write(f'{n}\t{x["median_us"]}\t{x["p99_us"]}\t{x["ns_per_line"] / 1e3}\t{re[n]["us_per_line"]}'
                f'\t{nt["median_us"]}\t{nt["ns_per_line"] / 1e3}\n')
with open(f"{d}/compile.tsv", "w") as f:
    for n in sorted(packs):
        p = packs[n]
        f.write(f'{n}\t{p["compile_ms"]}\t{p["load_ms"]}\t{p["context_ms"]}\t{p["regcomp_ms"]}\n')
rows = []
for x in r["decisions"]:
    if x["workload"] == "realistic" and not x["pack"].endswith("-notext"):
        rows.append((f'{x["pack"]}, in process', x["per_cpu_second"]))
b = r["batch"]
rows.append(("check --batch, in process", b["in_process_lines_per_s"]))
for key, label in (("cli_lines_per_cpu_s", "check --batch CLI, realistic"),
                   ("cli_six_lines_per_cpu_s", "check --batch CLI, six commands")):
    if b.get(key, 0) > 0:
        rows.append((label, b[key]))
for p in r["process"]:
    if p["label"].startswith("shellgate check --"):
        rows.append(("one process per decision", 1e3 / p["cpu_ms"]))
        break
h = r.get("hook_adapters")
if h:
    for c in h["cases"]:
        if c["agent"] == "claude-code" and c["case"] == "allow":
            rows.append(("hook call (claude-code), a process each", 1e3 / c["cpu_ms"]))
s = r.get("server")
if s:
    for x in s["runs"]:
        rows.append((f'serve, {x["clients"]} client{"s" if x["clients"] > 1 else ""} (wall)', x["per_second"]))
x = r.get("run")
if x:
    for f in x["figures"]:
        if f["what"] == "shellgate run -- true" and f.get("us"):
            rows.append(("run -- true, a process each (wall)", 1e6 / f["us"]))
d_ = r.get("redis")
if d_:
    rows.append(("admission through Redis (wall)", d_["redis_per_s"]))
for p in r["regex_baseline"]:
    rows.append((f'regex list, {p["patterns"]} patterns', 1e6 / p["us_per_line"]))
with open(f"{d}/throughput.tsv", "w") as f:
    for i, (label, v) in enumerate(rows):
        f.write(f'{i}\t{v}\t"{label}"\n')
with open(f"{d}/title.txt", "w") as f:
    f.write(f'{r["when"][:10]}, {r["cpus"]} cpus')
PY
sub=$(cat "$D/title.txt")
gnuplot <<GP
set terminal svg size 760,480 dynamic enhanced font "sans,12" background rgb "white"
set grid
set key top left

set output "$OUT/latency.svg"
set title "Decision latency against the number of rules (realistic workload; $sub)"
set logscale xy
set xlabel "rules in the pack (generated)"
set ylabel "microseconds per line"
set xrange [70:14000]
set key outside below horizontal
plot "$D/latency.tsv" using 1:2 with linespoints lw 2 title "median", \
     "" using 1:3 with linespoints lw 2 title "p99", \
     "" using 1:4 with linespoints lw 2 title "mean", \
     "" using 1:6 with linespoints lw 2 title "median, no text rules", \
     "" using 1:7 with linespoints lw 2 title "mean, no text rules", \
     "" using 1:5 with linespoints lw 2 dt 2 title "POSIX regex list, mean"

set output "$OUT/compile.svg"
set title "Compile and load time against pack size ($sub)"
set key inside top left
set ylabel "milliseconds"
plot "$D/compile.tsv" using 1:2 with linespoints lw 2 title "compile (rules to verified table)", \
     "" using 1:3 with linespoints lw 2 title "load + verify", \
     "" using 1:4 with linespoints lw 2 title "context", \
     "" using 1:5 with linespoints lw 2 dt 2 title "regcomp of the regex list"

set output "$OUT/throughput.svg"
set title "Decisions per CPU-second by pack and path ($sub)"
unset logscale
set logscale x
unset xrange
set xlabel "decisions per second of CPU time (log scale)"
set xrange [10:1e7]
unset ylabel
set yrange [-1:*] reverse
set ytics nomirror
set key off
set style fill solid 0.6
set terminal svg size 760,560 dynamic enhanced font "sans,11" background rgb "white"
set output "$OUT/throughput.svg"
plot "$D/throughput.tsv" using 2:1:(1):2:(\$1-0.35):(\$1+0.35):ytic(3) with boxxyerror, \
     "" using 2:1:(sprintf(" %.0f", \$2)) with labels left
GP
echo "plot.sh: $OUT/latency.svg $OUT/throughput.svg $OUT/compile.svg"
