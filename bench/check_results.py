#!/usr/bin/env python3
"""check_results.py - the bench programs run, and results.json holds the fields
docs/performance.md documents (bench_smoke in CTest).  It asserts what the bench
writes, never how fast anything is.

usage: check_results.py BENCH_SHELLGATE SHELLGATE BENCH_SPAWN [RESULTS.json]
With RESULTS.json, only that file is checked (bench/results.json as committed).
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []
passes = 0


def check(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)


def number(obj, key, where, positive=True):
    v = obj.get(key)
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    check(ok, f"{where}: {key} is a number (got {v!r})")
    if ok and positive:
        check(v > 0, f"{where}: {key} > 0 (got {v!r})")


def check_results(r, quick):
    check(r.get("schema") == "shellgate-bench/1", "schema is shellgate-bench/1")
    for k in ("when", "build"):
        check(isinstance(r.get(k), str), f"{k} is a string")
    number(r, "cpus", "top")
    number(r, "iterations", "top")
    number(r, "load_start", "top", positive=False)
    number(r, "load_end", "top", positive=False)
    check(r.get("quick") in (0, 1), "quick is 0 or 1")
    w = r.get("workloads", {})
    for name in ("realistic", "hostile"):
        s = w.get(name)
        check(isinstance(s, dict), f"workloads.{name}")
        if isinstance(s, dict):
            for k in ("seed", "lines", "bytes_min", "bytes_mean", "bytes_max", "segments_mean"):
                number(s, k, f"workloads.{name}")
    if isinstance(w.get("realistic"), dict):
        rl = w["realistic"]
        check(rl.get("bytes_min", 0) >= 20 and rl.get("bytes_max", 1e9) <= 400, "realistic lines are 20-400 bytes")
    packs = r.get("packs", [])
    check(isinstance(packs, list) and len(packs) >= 2, "packs: at least two generated packs")
    sizes = set()
    for p in packs:
        for k in ("rules", "compile_ms", "table_bytes", "load_ms", "context_ms", "regex_patterns", "regcomp_ms"):
            number(p, k, f"packs[{p.get('name')}]")
        number(p, "text_rules", f"packs[{p.get('name')}]", positive=False)
        sizes.add(p.get("rules"))
    if not quick:
        check({100, 1000, 10000} <= sizes, "packs of 100, 1,000 and 10,000 rules")
    dec = r.get("decisions", [])
    check(isinstance(dec, list) and dec, "decisions")
    seen = set()
    for d in dec:
        where = f"decisions[{d.get('pack')}, {d.get('workload')}]"
        check(d.get("workload") in ("realistic", "hostile"), f"{where}: workload")
        for k in ("rules", "per_second", "per_cpu_second", "median_us", "p99_us", "ns_per_line", "floor_ns_per_line",
                  "eval_over_floor"):
            number(d, k, where)
        seen.add((d.get("pack"), d.get("workload")))
    for p in ("default", "readonly", "gaia", "ironclaw"):
        check((p, "realistic") in seen, f"decisions for the {p} pack")
    check(("default", "hostile") in seen, "decisions for the hostile workload")
    rb = r.get("regex_baseline", [])
    check(isinstance(rb, list) and len(rb) == len(packs), "regex_baseline: one per generated pack")
    for b in rb:
        for k in ("rules", "patterns", "lines", "us_per_line", "eval_us_per_line", "regex_over_eval"):
            number(b, k, f"regex_baseline[{b.get('pack')}]")
    cmds = r.get("commands", [])
    check(isinstance(cmds, list) and len(cmds) == 3, "commands: three named figures")
    for c in cmds:
        for k in ("commands", "bytes_min", "bytes_max", "median_us", "p99_us"):
            number(c, k, f"commands[{c.get('label')}]")
    b = r.get("batch", {})
    for k in ("in_process_lines_per_s", "decisions_alone_per_s", "cli_lines", "cli_lines_per_s",
              "cli_lines_per_cpu_s", "cli_1thread_lines_per_s", "cli_1thread_lines_per_cpu_s", "cli_six_lines_per_s",
              "cli_six_lines_per_cpu_s", "cli_six_1thread_lines_per_s", "cli_six_1thread_lines_per_cpu_s"):
        number(b, k, "batch")
    number(b, "json_ns_per_line", "batch", positive=False)
    proc = r.get("process", [])
    check(isinstance(proc, list) and len(proc) == 5, "process: /bin/true, start-up and three checks")
    for p in proc:
        for k in ("runs", "median_ms", "p99_ms", "min_ms", "cpu_ms"):
            number(p, k, f"process[{p.get('label')}]")
        number(p, "exit", f"process[{p.get('label')}]", positive=False)
    exits = [p.get("exit") for p in proc]
    check(exits == [0, 64, 0, 0, 1], f"process exit statuses are true, usage, allow, allow, deny (got {exits})")
    for k in ("server", "run", "hook_adapters", "redis"):
        check(k in r, f"{k}: the place for its figures")
    # filled by bench/bench_agents.c through bench/merge_agents.py
    h = r.get("hook_adapters")
    if h is not None:
        agents = {c.get("agent") for c in h.get("cases", [])}
        check(agents == {"claude-code", "codex", "gemini-cli", "cursor", "copilot"}, f"hook_adapters: every agent {agents}")
        for c in h.get("cases", []):
            for k in ("runs", "median_ms", "p99_ms", "min_ms", "cpu_ms"):
                number(c, k, f"hook_adapters[{c.get('agent')} {c.get('case')}]")
    # filled by bench/bench_run.c and bench/redis.sh through bench/merge_agents.py
    x = r.get("run")
    if x is not None:
        figs = x.get("figures", [])
        check([f.get("what", "")[:14] for f in figs[:3]] == ["bare fork/exec", "shellgate chec", "shellgate run "],
              f"run: bare, check and run figures first ({[f.get('what') for f in figs]})")
        for f in figs:
            if f.get("us") is not None or "bwrap" not in f.get("what", ""):
                number(f, "us", f"run[{f.get('what')}]")
    d = r.get("redis")
    if d is not None:
        for k in ("lines", "pure_per_s", "file_per_s", "redis_per_s", "redis_4_clients_per_s"):
            number(d, k, "redis")
        number(d, "redis_added_us", "redis", positive=False)
    s = r.get("server")
    if s is not None:
        runs = s.get("runs", [])
        check([x.get("clients") for x in runs] == [1, 32], "server: runs with 1 and 32 clients")
        for x in runs:
            for k in ("requests", "per_second", "median_us", "p99_us"):
                number(x, k, f"server[{x.get('clients')} clients]")


def main():
    if len(sys.argv) == 5:
        with open(sys.argv[4]) as f:
            check_results(json.load(f), quick=False)
    else:
        bench, sg, spawn = sys.argv[1:4]
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "results.json")
            p = subprocess.run([bench, "--quick", "--cli", sg, "--json", out, "--build", "smoke"],
                               capture_output=True, text=True, timeout=600)
            check(p.returncode == 0, f"bench_shellgate exits 0 (got {p.returncode}: {p.stderr[-500:]})")
            for part in ("decisions in process", "the hand-written alternative", "check --batch",
                         "one process per decision"):
                check(part in p.stdout, f"the table prints '{part}'")
            if p.returncode == 0:
                with open(out) as f:
                    check_results(json.load(f), quick=True)
        p = subprocess.run([spawn, "3", sg, "check", "--", "ls"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and "median" in p.stdout and "(exit 0)" in p.stdout,
              f"bench_spawn runs shellgate: {p.stdout} {p.stderr}")
        p = subprocess.run([spawn, "3", sg, "check", "--", "rm -rf /"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0 and "(exit 1)" in p.stdout, f"bench_spawn reports the exit status: {p.stdout}")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    print(f"{passes} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
