#!/bin/sh
# cli.sh - the CLI contract (docs/shellgate.1): exit codes, --json and --batch shapes,
# compile/dump round trips, refusal of corrupt tables.  usage: cli.sh SHELLGATE SRCDIR
set -u
SG=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_exit() { # want_code description command...
    want=$1; shift; what=$1; shift
    "$@" >"$T/out" 2>"$T/err"
    got=$?
    if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, want $want"; cat "$T/err" >&2; fi
}
has() { # file substring description
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in output"; cat "$1" >&2; fi
}

# exit codes: 0 allow, 1 deny, 2 ask, 64 usage
expect_exit 0 "allow" "$SG" check -- ls -la
expect_exit 1 "deny" "$SG" check -- 'rm -rf /'
expect_exit 2 "ask" "$SG" check -- 'git push origin main'
expect_exit 64 "no command" "$SG" check
expect_exit 64 "unknown option" "$SG" check --frobnicate -- ls
expect_exit 64 "unknown subcommand" "$SG" frobnicate
expect_exit 66 "missing pack" "$SG" check -p /nonexistent/x.rules -- ls
expect_exit 66 "unknown embedded pack" "$SG" check -p nosuchpack -- ls

# --json carries the contract's fields
"$SG" check --json -- 'ls | grep x' >"$T/j"
has "$T/j" '"decision":"allow"' "json decision"
has "$T/j" '"segments":[{"argv":["ls"]' "json segments"
has "$T/j" '"rate_limited":false' "json rate_limited"
has "$T/j" '"wait_time_seconds":0' "json wait"

# --batch: one answer per line, in order; bad lines are denied and the batch goes on
printf '%s\n' '{"cmd": "ls"}' 'not json' '{"cmd": 5}' '{"cmd": "rm -rf /", "cwd": "/tmp"}' \
    '{"cmd": "cat x", "cwd": "relative"}' '{"cmd": "cat /tmp/x", "cwd": "/tmp", "roots": ["/tmp"]}' \
    | "$SG" check --batch >"$T/b"
[ "$(wc -l <"$T/b")" -eq 6 ] && ok || bad "batch line count $(wc -l <"$T/b")"
sed -n 1p "$T/b" | grep -q '"decision":"allow"' && ok || bad "batch line 1"
sed -n 2p "$T/b" | grep -q '"decision":"deny","error":"input line is not a JSON object"' && ok || bad "batch line 2"
sed -n 3p "$T/b" | grep -q '"error":"\\"cmd\\" must be a string"' && ok || bad "batch line 3"
sed -n 4p "$T/b" | grep -q '"rule":"default:rm_root"' && ok || bad "batch line 4"
sed -n 5p "$T/b" | grep -q '"error":"\\"cwd\\" must be an absolute path"' && ok || bad "batch line 5"
sed -n 6p "$T/b" | grep -q '"decision":"allow"' && ok || bad "batch line 6"
# a NUL in a line (a \u0000 escape, not an escaped backslash before u0000) would cut
# the command where cJSON ends its string: the line is denied, not the prefix checked
printf '%s\n' '{"cmd": "ls\u0000; rm -rf ~"}' '{"cmd": "echo \\u0000"}' '{"cmd": "ls", "x": "\\\u0000"}' \
    | "$SG" check --batch >"$T/b"
sed -n 1p "$T/b" | grep -q '"decision":"deny","error":"a NUL character' && ok || bad "batch NUL escape"
sed -n 2p "$T/b" | grep -q '"decision":"allow"' && ok || bad "batch escaped backslash before u0000"
sed -n 3p "$T/b" | grep -q '"error":"a NUL character' && ok || bad "batch NUL after an escaped backslash"
# JSON text is UTF-8 (RFC 8259): a batch line that is not is refused; what shellgate
# writes is UTF-8 even for a command line that is not (U+FFFD for each stray byte)
printf '{"cmd": "echo \377; rm -rf /"}\n{"cmd": "echo \303\251"}\n' | "$SG" check --batch >"$T/b"
sed -n 1p "$T/b" | grep -q '"decision":"deny","error":"the input line is not UTF-8' && ok || bad "batch line not UTF-8: $(cat "$T/b")"
sed -n 2p "$T/b" | grep -q '"decision":"allow"' && ok || bad "batch UTF-8 line: $(cat "$T/b")"
utf8_ok() { python3 -c 'import sys; [l.decode("utf-8") for l in sys.stdin.buffer]' <"$1"; }
"$SG" check --json -- "$(printf 'echo \377\303\251 \355\240\200')" >"$T/j"
utf8_ok "$T/j" && grep -q "$(printf '\357\277\275')" "$T/j" && ok || bad "check --json of bytes that are no UTF-8: $(cat "$T/j")"
"$SG" explain --json -- "$(printf 'echo \300\257')" >"$T/j"
utf8_ok "$T/j" && ok || bad "explain --json of an overlong form is not UTF-8"
printf '{"session_id":"t","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo \377"}}' |
    "$SG" hook claude-code >"$T/j" 2>/dev/null
grep -q '"permissionDecision":"deny"' "$T/j" && grep -q 'not UTF-8' "$T/j" && ok || bad "hook input not UTF-8: $(cat "$T/j")"
"$SG" check --state "$T/u8.state" -- "$(printf 'git push \377 origin')" >/dev/null 2>&1
"$SG" approvals --state "$T/u8.state" --json >"$T/j"
utf8_ok "$T/j" && grep -q "git push $(printf '\357\277\275') origin" "$T/j" && ok || bad "approvals --json of a command that is no UTF-8: $(cat "$T/j")"

# --batch answers are what --json prints for the same command (the block writer
# and cJSON's printer agree), for plain, escaped and wrapped commands
printf '%s\n' '{"cmd": "ls -la src", "cwd": "/tmp"}' '{"cwd": "/tmp", "cmd": "echo \"a b\" \\ c"}' \
    '{"cmd": "sudo rm -rf /", "cwd": "/tmp"}' '{"cmd": "git push origin main", "cwd": "/tmp"}' \
    '{"cmd": "grep -n x\tnotes.txt | wc -l", "cwd": "/tmp"}' '{"cmd": "echo $(cat /etc/passwd)", "cwd": "/tmp"}' \
    | "$SG" check --batch >"$T/b"
i=0
for c in 'ls -la src' 'echo "a b" \ c' 'sudo rm -rf /' 'git push origin main' "$(printf 'grep -n x\tnotes.txt | wc -l')" \
    'echo $(cat /etc/passwd)'; do
    i=$((i + 1))
    "$SG" check --json --cwd /tmp -- "$c" >"$T/j1"
    sed -n "${i}p" "$T/b" >"$T/j2"
    cmp -s "$T/j1" "$T/j2" && ok || bad "batch line $i differs from check --json"
done
# a client that sends one line and waits gets its answer before it sends the next
mkfifo "$T/fifo"
: >"$T/bf" # its own, empty file: the job opens it only after the fifo has a writer
"$SG" check --batch <"$T/fifo" >"$T/bf" &
bpid=$!
exec 3>"$T/fifo"
printf '%s\n' '{"cmd": "ls"}' >&3
k=0
while [ "$k" -lt 600 ] && [ "$(wc -l <"$T/bf")" -lt 1 ]; do sleep 0.05; k=$((k + 1)); done
[ "$(wc -l <"$T/bf")" -eq 1 ] && ok || bad "batch answer not written while the input stays open"
printf '%s\n' '{"cmd": "rm -rf /"}' >&3
exec 3>&-
wait "$bpid"
[ "$(wc -l <"$T/bf")" -eq 2 ] && ok || bad "batch answers after the input closes: $(wc -l <"$T/bf")"

# compile: identical bytes for identical sources; dump reads the table; -p takes .sgt
cp "$SRC/docs/example.rules" "$T/ex.rules"
expect_exit 0 "compile" "$SG" compile -o "$T/a.sgt" "$T/ex.rules"
expect_exit 0 "compile again" "$SG" compile -o "$T/b.sgt" "$T/ex.rules"
cmp -s "$T/a.sgt" "$T/b.sgt" && ok || bad "compile is not deterministic"
expect_exit 0 "dump" "$SG" dump "$T/a.sgt"
has "$T/out" 'rule#2 "readonly_demo:find_exec" deny' "dump lists rules"
# the table fuzzer's seed tables are of this format (a stale seed is refused at the
# header, and the fuzzer never gets past it)
for f in "$SRC"/fuzz/corpus/table/*.sgt; do
    expect_exit 0 "seed $(basename "$f") loads" "$SG" dump "$f"
done
expect_exit 1 "check with a .sgt" "$SG" check -p "$T/a.sgt" -- 'find . -delete'
expect_exit 0 "compile --check writes nothing" "$SG" compile --check -o "$T/c.sgt" "$T/ex.rules"
[ ! -e "$T/c.sgt" ] && ok || bad "compile --check wrote a table"

# a corrupt or truncated table is refused, never loaded as an empty policy
head -c 300 "$T/a.sgt" >"$T/trunc.sgt"
expect_exit 65 "truncated table" "$SG" check -p "$T/trunc.sgt" -- ls
has "$T/err" "table:" "truncated table message"
cp "$T/a.sgt" "$T/flip.sgt"
printf '\377' | dd of="$T/flip.sgt" bs=1 seek=400 conv=notrunc 2>/dev/null
expect_exit 65 "flipped table" "$SG" check -p "$T/flip.sgt" -- ls
has "$T/err" "checksum mismatch" "flipped table message"

# a pack whose inline tests fail does not compile
cat >"$T/bad.rules" <<'R'
pack bad version 1
default allow "fine"
test deny "ls"
R
expect_exit 65 "failing inline test" "$SG" compile -o "$T/bad.sgt" "$T/bad.rules"
has "$T/err" "test failed: ls" "failing test reported"
[ ! -e "$T/bad.sgt" ] && ok || bad "a pack with failing tests was written"

# explain names the pack and the decider
expect_exit 1 "explain (exit code is the decision)" "$SG" explain -- 'sudo env A=1 nice bash -c "cat /etc/shadow"'
has "$T/out" "segment 4 (script in segment 3)" "explain shows unwrapped segments"
has "$T/out" "rule: default:privilege" "explain names the decider"
# a segment the unwrapper adds has its own program's declaration (sgr_unwrap sets
# every segment's spec): the inner grep's pattern is text, an inner ./grep's is not
expect_exit 1 "explain a script's wrapped grep" "$SG" explain -- 'sh -c "sudo -u x grep -rn id_rsa docs/"'
has "$T/out" "segment 2 (wrapped in segment 1)" "the script's wrapper is unwrapped"
has "$T/out" "decision: allow by default:read" "an inner segment's pattern is text"
expect_exit 1 "explain a script's wrapped ./grep" "$SG" explain -- 'sh -c "sudo -u x ./grep -rn id_rsa docs/"'
if grep -qF "decision: allow by default:read" "$T/out"; then bad "an inner ./grep's pattern is text"; else ok; fi

# a deployment pack: explain names the pack whose rule decided
expect_exit 1 "deployment pack" "$SG" explain -p "$SRC/tests/packs/deploy/acme_default.rules" -- 'rm -rf /'
has "$T/out" "matched: deny  default:rm_root (pack default)" "explain names the base pack"
has "$T/out" "matched: allow acme_default:lift_try (pack acme_default)" "explain names the deployment pack"
has "$T/out" "rule: default:rm_root" "the base pack's deny decides"

# the gaia pack's rate limit speaks GAIA's words (state created under the test clock)
for i in 1 2 3; do
    SHELLGATE_TEST_NOW=1000.$i "$SG" check -p gaia --state "$T/gaia.state" -- ls >/dev/null
done
SHELLGATE_TEST_NOW=1000.4 "$SG" check -p gaia --state "$T/gaia.state" --json -- ls >"$T/out"
has "$T/out" '"message":"Rate limit: max 3 commands per 10 seconds. Wait 9.7s. Please wait 9.7 seconds."' "gaia rate limit message"
has "$T/out" '"rate_limited":true' "gaia rate limited"

# test over a case file prints the contract's summary line
printf '#policy default\nls ; allow\nrm -rf / ; deny ; default:rm_root\n' >"$T/x.cases"
expect_exit 0 "case file" "$SG" test "$T/x.cases"
has "$T/out" "2 passed, 0 failed" "test summary"
# "| " lines continue a case's command after a newline (a here-document); a failing
# multi-line case is reported at its first line
printf '#policy default\ncat <<EOF\n| $(rm -rf /)\n| EOF ; deny ; default:rm_root\ncat <<E\n| E ; deny\nls ; allow\n' >"$T/m.cases"
expect_exit 1 "multi-line case file" "$SG" test "$T/m.cases"
has "$T/out" "2 passed, 1 failed" "multi-line cases"
has "$T/err" "m.cases:5: test failed" "a multi-line case fails at its first line"
# "#cwd DIR" runs the lines after it in DIR, relative to the case file; "#cwd" alone
# goes back; a DIR that is not there fails the file with a message
mkdir -p "$T/ws/app" && : >"$T/ws/app/__init__.py" && : >"$T/ws/app/__main__.py"
printf '#policy default\n#cwd ws\npython3 -m app ; allow ; own_module\n#cwd\npython3 -m app ; ask\n' >"$T/c.cases"
expect_exit 0 "case file with #cwd" "$SG" test "$T/c.cases"
has "$T/out" "2 passed, 0 failed" "#cwd runs the lines in the directory"
printf '#policy default\n#cwd no/such/dir\nls ; allow\n' >"$T/c2.cases"
expect_exit 66 "case file with a missing #cwd" "$SG" test "$T/c2.cases"
has "$T/err" "c2.cases:2: #cwd: cannot use 'no/such/dir'" "a missing #cwd is named"
# --platform: on macos and windows a program's name folds case (RM runs rm), on
# windows without .exe; linux reads it as written; another name is a usage error
expect_exit 1 "RM under --platform macos" "$SG" check --platform macos -- 'RM -rf /'
expect_exit 2 "RM under --platform linux is an unknown program" "$SG" check --platform linux -- 'RM -rf /'
expect_exit 1 "RM.EXE under --platform windows" "$SG" check --platform windows -- 'RM.EXE -rf /'
expect_exit 2 "RM.EXE under --platform macos keeps its .exe" "$SG" check --platform macos -- 'RM.EXE -rf /'
expect_exit 1 "explain --platform" "$SG" explain --platform macos -- 'SUDO rm -rf /'
has "$T/out" "rule: default:privilege" "explain unwraps SUDO under macos"
printf '{"cmd":"Rm -rf ~","cwd":"/"}\n' >"$T/plat.jsonl"
"$SG" check --platform windows --batch <"$T/plat.jsonl" >"$T/plat.out"
has "$T/plat.out" '"decision":"deny"' "check --batch --platform"
expect_exit 64 "an unknown platform" "$SG" check --platform bogus -- ls
has "$T/err" "shellgate check: --platform takes linux, macos or windows, not 'bogus'" "the platforms are named"
expect_exit 64 "test with an unknown platform" "$SG" test --platform Linux "$T/c.cases"
# "#platform NAME" decides the lines after it for NAME, "#platform" alone for the
# command line's; an unknown name fails the file, naming the line
printf '#policy default\nRM -rf / ; ask ; default\n#platform macos\nRM -rf / ; deny ; rm_root\n#platform windows\nRM.EXE -rf / ; deny ; rm_root\n#platform\nRM -rf / ; ask ; default\n' >"$T/p.cases"
expect_exit 0 "case file with #platform" "$SG" test --platform linux "$T/p.cases"
has "$T/out" "4 passed, 0 failed" "#platform decides the lines after it"
expect_exit 1 "#platform alone is --platform's" "$SG" test --platform macos "$T/p.cases"
has "$T/out" "2 passed, 2 failed" "--platform macos decides the lines outside #platform"
printf '#policy default\n#platform beos\nls ; allow\n' >"$T/p2.cases"
expect_exit 65 "case file with an unknown #platform" "$SG" test "$T/p2.cases"
has "$T/err" "p2.cases:2: #platform: 'beos' is not a platform (linux, macos or windows)" "an unknown #platform is named"

# symlinks are followed the way the kernel walks them (link/../x goes where the link
# points), loops are outside every root, and ordinary paths inside stay allowed
mkdir -p "$T/ws/src" "$T/outside"
: >"$T/outside/secret"
ln -s "$T/outside" "$T/ws/link"
ln -s "$T/outside/secret" "$T/ws/pw"
ln -s loop2 "$T/ws/loop1"
ln -s loop1 "$T/ws/loop2"
for c in 'cat link/secret' 'cat pw' 'cat src/../pw' 'cat link/../outside/secret' 'cat loop1' 'cat src/../../outside/secret'; do
    expect_exit 1 "symlink escape: $c" "$SG" check -p "$SRC/docs/example.rules" --cwd "$T/ws" -- "$c"
done
ln -s "$T/ws/src" "$T/ws/inner"
for c in 'cat src/a.c' 'cat inner/a.c' 'cat ./src/../src/x' 'cat link/../ws/src/a.c'; do
    expect_exit 0 "inside: $c" "$SG" check -p "$SRC/docs/example.rules" --cwd "$T/ws" -- "$c"
done
# a relative --root is taken from the cwd (not from where shellgate runs); a root that
# is a symlink is where it points
expect_exit 0 "relative root" "$SG" check -p "$SRC/docs/example.rules" --cwd "$T/ws" --root src -- cat src/a.c
expect_exit 1 "relative root excludes the rest" "$SG" check -p "$SRC/docs/example.rules" --cwd "$T/ws" --root src -- cat x
expect_exit 0 "root through a symlink" "$SG" check -p "$SRC/docs/example.rules" --cwd "$T/ws" --root link -- cat link/secret

# ---- the command line as a Unix tool (issue: a command line that fits) ----------------
expect_exit 0 "--version" "$SG" --version
has "$T/out" "shellgate " "--version prints the version"
expect_exit 0 "help CMD" "$SG" help compile
has "$T/out" "usage: shellgate compile" "help compile prints compile's usage"
expect_exit 0 "CMD --help" "$SG" check --help
has "$T/out" "usage: shellgate check" "check --help prints check's usage"
grep -q "usage: shellgate compile" "$T/out" && bad "check --help prints every usage" || ok
expect_exit 64 "help of an unknown command" "$SG" help chekc
has "$T/err" "did you mean 'check'?" "help suggests the nearest command"
expect_exit 64 "unknown command" "$SG" chek -- ls
has "$T/err" "unknown command 'chek'; did you mean 'check'?" "did you mean, for commands"
expect_exit 64 "unknown option" "$SG" check --jsno -- ls
has "$T/err" "unknown option '--jsno'; did you mean '--json'?" "did you mean, for options"
expect_exit 64 "missing operand" "$SG" compile
has "$T/err" "shellgate compile: missing the rule FILE" "a missing operand is named"
[ "$(grep -c 'usage:' "$T/err")" -eq 1 ] && ok || bad "a missing operand prints one usage, not every one"
expect_exit 64 "missing value" "$SG" check -p
has "$T/err" "-p needs a value" "a missing option value is named"
# options after operands; -- ends them
cp "$SRC/docs/example.rules" "$T/ex.rules"
expect_exit 0 "options after operands" "$SG" compile "$T/ex.rules" -o "$T/after.sgt"
[ -s "$T/after.sgt" ] && ok || bad "compile FILE -o OUT wrote nothing"
has "$T/out" "wrote $T/after.sgt" "compile says what it wrote"
expect_exit 64 "several files need -o" "$SG" compile "$T/ex.rules" "$T/ex.rules"
has "$T/err" "only with -o" "several files without -o are refused"
expect_exit 0 "-- ends the options" "$SG" test -- "$T/ex.rules"
# check -- WORDS: one argv, quoted back exactly; one word: a shell line
expect_exit 0 "argv words" "$SG" check --json -- cat "my file.txt"
has "$T/out" '"argv":["cat","my file.txt"]' "several words are one argv"
expect_exit 1 "a single word is a shell line" "$SG" check -- 'rm -rf /'
expect_exit 0 "metacharacters as words are words" "$SG" check --json -- echo '$(rm -rf /)' '&&' x
has "$T/out" '"argv":["echo","$(rm -rf /)","&&","x"]' "quoted words stay words"
expect_exit 2 "--argv for one word" "$SG" check --json --argv -- 'ls -la'
has "$T/out" '"argv":["ls -la"]' "--argv makes one word one argv word"
expect_exit 0 "a quote in a word" "$SG" check --json -- echo "it's"
has "$T/out" '"argv":["echo","it'"'"'s"]' "a single quote survives the quoting"
# --cwd of a directory that does not exist is an error, not a decision
expect_exit 64 "missing --cwd" "$SG" check --cwd "$T/nonexistent" -- ls
has "$T/err" "no such directory" "missing --cwd named"
expect_exit 64 "missing --cwd for explain" "$SG" explain --cwd "$T/nonexistent" -- ls
# one shape for every decision: decision and message, then the rule
expect_exit 0 "allow shape" "$SG" check -- ls
has "$T/out" "  rule: " "allow prints its rule"
expect_exit 1 "deny shape" "$SG" check -- 'rm -rf /'
has "$T/out" "  rule: default:rm_root" "deny prints its rule"
# a program given by path keeps its path in the message
expect_exit 1 "path kept" "$SG" check -p readonly -- ./configure
has "$T/out" "'./configure'" "a program given by path keeps it"
# the fallback names the subcommand of a program declared with `subcommands`
# (std/programs), and only the program of any other
expect_exit 2 "subcommand named" "$SG" check -- git --no-pager frob x
has "$T/out" "ask: 'git frob' is not on the list" "the fallback names git's subcommand past its options"
expect_exit 2 "subcommand of a program known only by declaration" "$SG" check -- kubectl delete pod web
has "$T/out" "'kubectl delete' is not on the list" "the fallback names kubectl's subcommand"
expect_exit 2 "a path and a subcommand" "$SG" check -- /usr/local/bin/gh pr merge 7
has "$T/out" "'/usr/local/bin/gh pr' is not on the list" "the path as written, then the subcommand"
expect_exit 2 "no subcommands" "$SG" check -- frobtool notes.txt
has "$T/out" "'frobtool' is not on the list" "a program without subcommands is named alone"
grep -qF "frobtool notes" "$T/out" && bad "an operand of a program without subcommands was named" || ok
expect_exit 1 "readonly names it" "$SG" check -p readonly -- git commit -m wip
has "$T/out" "'git commit' is not in the allowed list" "readonly's fallback names the subcommand"
# the approval hint only where approve accepts the id
expect_exit 2 "ask without a store" "$SG" check -- 'git push origin main'
grep -q "shellgate approve [0-9a-f]" "$T/out" && bad "approve offered for an ask no store recorded" || ok
HOME="$T/home" expect_exit 2 "ask with a store" "$SG" check --state "$T/st" -- 'git push origin main'
has "$T/out" "shellgate approve " "approve offered where the ask was recorded"
has "$T/out" "--state $T/st" "the hint names the state file"
# --json for explain, test, compile --check, dump
expect_exit 1 "explain --json" "$SG" explain --json -- 'ls | sudo rm -rf /'
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); s=j["segments"]; assert j["decision"]=="deny"; assert any(t["matched"] for x in s for t in x["rules_tried"]); assert any(x["program"]=="rm" for x in s); print("ok")' "$T/out" >/dev/null 2>&1 && ok || { bad "explain --json"; cat "$T/out" >&2; }
expect_exit 0 "test --json" "$SG" test --json "$T/ex.rules"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["failed"]==0 and j["passed"]>0' "$T/out" 2>/dev/null && ok || bad "test --json"
printf 'ls ; deny\n' >"$T/f.cases"
expect_exit 1 "test --json failure" "$SG" test --json -p "$T/ex.rules" "$T/f.cases"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); f=j["failures"][0]; assert j["failed"]==1 and f["want"]=="deny" and f["got"]=="allow" and f["line"]==1' "$T/out" 2>/dev/null && ok || { bad "test --json failure object"; cat "$T/out" >&2; }
expect_exit 0 "compile --check --json" "$SG" compile --check --json "$T/ex.rules"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["ok"] and j["wrote"] is None and j["passed"]>0' "$T/out" 2>/dev/null && ok || { bad "compile --check --json"; cat "$T/out" >&2; }
expect_exit 0 "dump --json" "$SG" dump --json readonly
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["pack"]=="readonly" and j["rules"] and all("id" in r for r in j["rules"])' "$T/out" 2>/dev/null && ok || { bad "dump --json"; cat "$T/out" >&2; }
expect_exit 64 "decompile refuses --json" "$SG" decompile --json readonly
# approvals and revoke from the plain CLI
HOME="$T/home" expect_exit 0 "approvals" "$SG" approvals --state "$T/st"
has "$T/out" "pending" "approvals lists the pending ask"
has "$T/out" "git push origin main" "approvals shows the command"
id=$(awk '{ print $1; exit }' "$T/out")
HOME="$T/home" expect_exit 0 "approvals --json" "$SG" approvals --json --state "$T/st"
has "$T/out" "\"id\":\"$id\",\"state\":\"pending\"" "approvals --json"
HOME="$T/home" expect_exit 0 "revoke" "$SG" revoke "$id" --state "$T/st"
HOME="$T/home" expect_exit 0 "approvals after revoke" "$SG" approvals --state "$T/st"
has "$T/out" "no pending asks or approvals" "revoke forgot the ask"
HOME="$T/home" expect_exit 1 "revoke again" "$SG" revoke "$id" --state "$T/st"
HOME="$T/home" expect_exit 1 "approve a revoked id" "$SG" approve "$id" --state "$T/st"
expect_exit 64 "revoke without an id" "$SG" revoke
has "$T/err" "missing the approval ID" "revoke names what is missing"
# a granted session approval is listed, and revoking it asks again
HOME="$T/home" "$SG" check --state "$T/st2" -- 'git push origin main' >"$T/out" 2>&1
id2=$(sed -n 's/.*approval: \([0-9a-f]*\) .*/\1/p' "$T/out")
HOME="$T/home" SHELLGATE_SESSION=s1 expect_exit 0 "approve for the session" "$SG" approve "$id2" --session --state "$T/st2"
HOME="$T/home" expect_exit 0 "approvals lists a granted one" "$SG" approvals --state "$T/st2"
has "$T/out" "$id2  session" "the session approval is listed"
HOME="$T/home" SHELLGATE_SESSION=s1 expect_exit 0 "approved" "$SG" check --state "$T/st2" -- 'git push origin main'
HOME="$T/home" expect_exit 0 "revoke the approval" "$SG" revoke "$id2" --state "$T/st2"
HOME="$T/home" SHELLGATE_SESSION=s1 expect_exit 2 "asks again after revoke" "$SG" check --state "$T/st2" -- 'git push origin main'
# approvals --json is JSON Lines (docs/shellgate.1): one object per entry, each with
# the same keys, strings escaped; none at all prints nothing and exits 0
J="$T/home/.config"
HOME="$T/home" XDG_CONFIG_HOME="$J" expect_exit 0 "approvals --json, no store yet" "$SG" approvals --json --state "$T/st3"
[ -s "$T/out" ] && { bad "approvals --json with no store prints something"; cat "$T/out" >&2; } || ok
HOME="$T/home" XDG_CONFIG_HOME="$J" "$SG" check --state "$T/st3" -- 'git push origin main' >"$T/out" 2>&1
id3=$(sed -n 's/.*approval: \([0-9a-f]*\) .*/\1/p' "$T/out")
HOME="$T/home" XDG_CONFIG_HOME="$J" SHELLGATE_SESSION=s1 "$SG" approve "$id3" --session --state "$T/st3" >/dev/null 2>&1
HOME="$T/home" XDG_CONFIG_HOME="$J" "$SG" check --state "$T/st3" -- "$(printf 'git push origin "a\\"b\tc"')" >"$T/out" 2>&1
id4=$(sed -n 's/.*approval: \([0-9a-f]*\) .*/\1/p' "$T/out")
HOME="$T/home" XDG_CONFIG_HOME="$J" expect_exit 0 "approvals --json" "$SG" approvals --json --state "$T/st3"
python3 - "$T/out" "$id3" "$id4" <<'PY' && ok || { bad "approvals --json: not one object a line with its keys"; cat "$T/out" >&2; }
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
assert text.endswith("\n")
rows = [json.loads(line) for line in text[:-1].split("\n")]
assert len(rows) == 2, rows
for r in rows:
    assert set(r) == {"id", "state", "command", "cwd", "session", "created"}, r
    assert all(isinstance(r[k], str) for k in ("id", "state", "command", "cwd", "session")), r
    assert isinstance(r["created"], (int, float)) and r["created"] >= 0, r
by_id = {r["id"]: r for r in rows}
assert by_id[sys.argv[2]]["state"] == "session" and by_id[sys.argv[2]]["session"] == "s1", rows
assert by_id[sys.argv[3]]["state"] == "pending" and by_id[sys.argv[3]]["created"] > 0, rows
assert by_id[sys.argv[3]]["command"] == 'git push origin "a\\"b\tc"', rows
PY
for i in "$id3" "$id4"; do HOME="$T/home" XDG_CONFIG_HOME="$J" "$SG" revoke "$i" --state "$T/st3" >/dev/null 2>&1; done
HOME="$T/home" XDG_CONFIG_HOME="$J" expect_exit 0 "approvals --json, all revoked" "$SG" approvals --json --state "$T/st3"
[ -s "$T/out" ] && { bad "approvals --json on an empty store prints something"; cat "$T/out" >&2; } || ok


# ---- each verb takes the options it uses, and refuses the rest --------------------
# (the shared option table once let `compile --batch` or `approve --json` run and
# ignore the flag).  Probing runs in a home of its own: nothing real is read or reset.
P="$T/probe"
mkdir -p "$P"
probe() { HOME="$P" XDG_STATE_HOME="$P/state" XDG_CONFIG_HOME="$P/config" "$SG" "$@" </dev/null >"$T/out" 2>"$T/err"; }
for a in "compile --batch" "compile --state X" "test --batch" "dump --cwd" "check --coverage" "check --once" \
    "check -o F" "explain --state X" "approve --json" "revoke --json" "state reset --json"; do
    set -- $a
    verb=$1
    [ "$verb" = state ] && opt=$3 || opt=$2
    probe $a
    [ $? -eq 64 ] && ok || bad "$a: not refused with 64"
    has "$T/err" "shellgate $verb: $opt is not an option of $verb" "$a: the refusal names the verb and the option"
    has "$T/err" "usage: shellgate $verb" "$a: the refusal prints the verb's usage"
done
# every option of the shared table: a verb accepts it exactly when its usage names it
# (an accepted option left out of the usage, or a usage naming one that is refused,
# fails here); --policy is -p's long name
opts='-p --policy --cwd --root -I -o --json --batch --check --state --admit --rate-store --rate-store-down
 --rate-store-timeout --require-signature --scope --agent --log --log-max-bytes --non-interactive --once
 --session --always --coverage --argv --strict --platform'
for v in check explain test compile dump decompile fuzz approve approvals revoke "state reset"; do
    "$SG" help ${v%% *} >"$T/usage"
    nacc=0
    for opt in $opts; do
        probe $v $opt
        if grep -qF "is not an option of" "$T/err"; then acc=0; else acc=1; nacc=$((nacc + 1)); fi
        if grep -qF "unknown option" "$T/err"; then bad "$v $opt: the option table does not know $opt"; fi
        word=$opt
        [ "$opt" = --policy ] && word=-p
        if grep -qE -- "(^|[[ |(])$word([] |)]|\$)" "$T/usage"; then named=1; else named=0; fi
        [ "$acc" = "$named" ] && ok || bad "$v $opt: accepted=$acc but its usage names it=$named"
    done
    [ "$nacc" -gt 0 ] && ok || bad "$v accepts no option at all (the probe is broken)"
done
# an unknown option suggests the nearest option of that verb, not of another
expect_exit 64 "unknown option of compile" "$SG" compile --chek "$T/ex.rules"
has "$T/err" "did you mean '--check'?" "compile suggests its own --check"
expect_exit 64 "a near option another verb has" "$SG" approve --coverag
grep -qF "did you mean '--coverage'" "$T/err" && bad "approve suggests test's --coverage" || ok
# options that mean something only beside another are refused alone
expect_exit 64 "--log-max-bytes without --log" "$SG" check --log-max-bytes 100 -- ls
has "$T/err" "--log-max-bytes applies to a --log FILE" "--log-max-bytes alone is named"
expect_exit 64 "--rate-store-down without --rate-store" "$SG" check --rate-store-down local -- ls
has "$T/err" "--rate-store-down applies to a --rate-store URL" "--rate-store-down alone is named"
expect_exit 64 "--argv with --batch" "$SG" check --argv --batch </dev/null
expect_exit 64 "two approval scopes" "$SG" approve 0123456789abcdef0123456789abcdef --once --always
# what still works: the combinations the docs and tests use
expect_exit 0 "check --batch --json" "$SG" check --batch --json </dev/null
expect_exit 0 "explain --batch" "$SG" explain --batch --cwd /tmp </dev/null
printf 'ls ; allow\n' >"$T/ok.cases"
expect_exit 0 "test -p -I" "$SG" test -p "$T/ex.rules" -I "$T" "$T/ok.cases"
expect_exit 0 "fuzz -I --json" "$SG" fuzz --seed 1 --max 2 -I "$T" --json readonly

# ---- one usage text per verb --------------------------------------------------------
# `help CMD` and `CMD --help` print the same; the verbs that print their own usage on
# a usage error (all from cli/help.c, after a line saying what is wrong where there is
# one) print exactly what `help CMD` prints above its summary line
for v in $("$SG" help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
    "$SG" help "$v" >"$T/h1" 2>&1
    "$SG" "$v" --help >"$T/h2" 2>&1
    cmp -s "$T/h1" "$T/h2" && ok || bad "help $v and $v --help differ"
done
usage_of() { "$SG" help "$1" | sed '$d' >"$T/want"; }
same_usage() { # description: $T/err (minus its first n lines) is $T/want
    tail -n +$(($2 + 1)) "$T/err" >"$T/got"
    cmp -s "$T/want" "$T/got" && ok || { bad "$1: the usage printed differs from help's"; diff "$T/want" "$T/got" >&2; }
}
usage_of run; expect_exit 64 "run without a command" "$SG" run; same_usage "run" 1
expect_exit 64 "run with a bad option" "$SG" run --frobnicate x -- ls; same_usage "run, bad option" 1
usage_of session; expect_exit 64 "session without an action" "$SG" session; same_usage "session" 1
usage_of hook; expect_exit 2 "hook without an agent" "$SG" hook; same_usage "hook" 0
usage_of serve; expect_exit 64 "serve without --socket" "$SG" serve; same_usage "serve" 1
usage_of keygen; expect_exit 64 "keygen without -o" "$SG" keygen; same_usage "keygen" 1
usage_of compile; expect_exit 64 "compile without a file" "$SG" compile; same_usage "compile" 1
usage_of approve; expect_exit 64 "approve without an id" "$SG" approve; same_usage "approve" 1
usage_of bundle; expect_exit 64 "bundle without an action" "$SG" bundle; same_usage "bundle" 1

# ---- errors name what is wrong, not every usage line -------------------------------
expect_exit 64 "a misspelt top-level option" "$SG" --hlep
has "$T/err" "unknown option '--hlep'; did you mean '--help'?" "--hlep suggests --help"
expect_exit 64 "a misspelt --version" "$SG" --verison
has "$T/err" "did you mean '--version'?" "--verison suggests --version"
expect_exit 64 "a misspelt bundle action" "$SG" bundle buidl
has "$T/err" "unknown action 'buidl'; did you mean 'build'?" "bundle suggests the nearest action"
expect_exit 64 "bundle build without -o" "$SG" bundle build "$T/ex.rules"
has "$T/err" "shellgate bundle build: missing -o OUT.sgb" "bundle build names the missing -o"
[ "$(grep -c 'shellgate' "$T/err")" -eq 2 ] && ok || bad "bundle build prints its one usage line, not every one"
grep -qE "keygen|bundle sign|bundle verify" "$T/err" && bad "bundle build's error prints other usages" || ok
expect_exit 64 "bundle build, a misspelt option" "$SG" bundle build --scpe ci -o "$T/x.sgb" "$T/ex.rules"
has "$T/err" "unknown option '--scpe'; did you mean '--scope'?" "bundle build suggests --scope"
expect_exit 64 "bundle sign without --key" "$SG" bundle sign "$T/x.sgb"
has "$T/err" "missing --key KEY" "bundle sign names the missing --key"
expect_exit 64 "bundle verify without --pub" "$SG" bundle verify "$T/x.sgb"
has "$T/err" "missing --pub KEY.pub" "bundle verify names the missing --pub"
expect_exit 64 "keygen without -o" "$SG" keygen
has "$T/err" "shellgate keygen: missing -o NAME" "keygen names the missing -o"
grep -qF "bundle" "$T/err" && bad "keygen's error prints the bundle usage" || ok
expect_exit 64 "keygen -o without a name" "$SG" keygen -o
has "$T/err" "-o needs a value" "keygen names the missing value"
expect_exit 64 "serve without --socket" "$SG" serve -p readonly
has "$T/err" "serve needs --socket PATH" "serve names the missing --socket"
expect_exit 64 "serve, a misspelt option" "$SG" serve --sockt "$T/s"
has "$T/err" "did you mean '--socket'?" "serve suggests --socket"

# ---- the man page says what the code does ----------------------------------------------
MAN="$SRC/docs/shellgate.1"
# man_code PHRASE: the exit status whose entry in EXIT STATUS contains PHRASE
man_code() {
    awk -v pat="$1" '/^\.SH EXIT STATUS/ { s = 1; next } /^\.(SH|PP)/ { s = 0 }
        s && /^\.B [0-9]+$/ { c = $2; next } s && c != "" && index($0, pat) { print c; exit }' "$MAN"
}
# man_says VERB...: the status of "VERB ... exit(s) N when" in the prose after the list
man_says() { sed -n '/^\.SH EXIT STATUS/,/^\.SH ENV/p' "$MAN" | tr '\n' ' ' | sed -n "s/.*$1 exits\{0,1\} \([0-9][0-9]*\) when $2.*/\1/p"; }
man_is() { # description want-from-man command...
    what=$1; want=$2; shift 2
    [ -n "$want" ] || { bad "$what: the man page gives no exit status"; return; }
    expect_exit "$want" "$what (the man page's $want)" "$@"
}
man_is "allow" "$(man_code allow)" "$SG" check -- ls
man_is "deny" "$(man_code deny)" "$SG" check -- 'rm -rf /'
man_is "ask" "$(man_code ask)" "$SG" check -- 'git push origin main'
man_is "usage error" "$(man_code 'usage error')" "$SG" compile --batch "$T/ex.rules"
man_is "bad table" "$(man_code 'bad pack')" "$SG" check -p "$T/trunc.sgt" -- ls
man_is "unreadable pack" "$(man_code 'cannot be read')" "$SG" check -p "$T/nonexistent.rules" -- ls
"$SG" keygen -o "$T/manKey" >/dev/null
man_is "keygen over a key" "$(man_code 'cannot be written')" "$SG" keygen -o "$T/manKey"
man_is "compile into a missing directory" "$(man_code 'cannot be written')" "$SG" compile -o "$T/no/such/dir/x.sgt" "$T/ex.rules"
HOME="$T/home" man_is "an ask nobody can answer" "$(man_code 'refused for now')" "$SG" check --state "$T/st3" --non-interactive -- 'git push origin main'
man_is "compile with a failing inline test" "$(man_says '.B compile.* .B bundle build' 'an inline test fails')" "$SG" compile -o "$T/bad.sgt" "$T/bad.rules"
man_is "test with a failing case" "$(man_says '.B test' 'a test fails')" "$SG" test -p "$T/ex.rules" "$T/f.cases"
# a warning is printed and the table written; --strict refuses the pack, writing nothing
printf 'pack w version 1\ndefault allow\ndeny program frob and subcommand x\n' >"$T/warn.rules"
expect_exit 0 "compile with a warning" "$SG" compile -o "$T/warn.sgt" "$T/warn.rules"
has "$T/err" "warn.rules:3:23: warning: rule warn.rules:3 tests the subcommand of 'frob'" "the warning is printed"
[ -s "$T/warn.sgt" ] && ok || bad "compile with a warning wrote no table"
man_is "compile --strict with a warning" "$(man_says 'compile \\-\\-strict".*test \\-\\-strict"' 'the pack compiles with a warning')" \
    "$SG" compile --strict -o "$T/warn2.sgt" "$T/warn.rules"
[ -e "$T/warn2.sgt" ] && bad "compile --strict wrote a table with a warning" || ok
man_is "test --strict with a warning" "$(man_says 'test \\-\\-strict"' 'the pack compiles with a warning')" \
    "$SG" test --strict "$T/warn.rules"
expect_exit 0 "test with a warning" "$SG" test "$T/warn.rules"
# every command `shellgate help` lists is in the man page's SYNOPSIS and COMMANDS
for v in $("$SG" help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p'); do
    [ "$v" = version ] && continue
    sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$MAN" | grep -q "^\.B shellgate $v\( \|$\)" && ok || bad "man page SYNOPSIS lacks $v"
    sed -n '/^\.SH COMMANDS/,/^\.SH/p' "$MAN" | grep -A1 '^\.TP' | grep -q "^\.B $v\( \|$\)" && ok || bad "man page COMMANDS lacks $v"
done

# run and session: "did you mean", what is missing, and run --json's one object on
# any error before a decision (a usage error, a policy that does not load, a bad --cwd)
expect_exit 64 "run: a misspelt option" "$SG" run --jsno -- true
has "$T/err" "unknown option '--jsno'; did you mean '--json'?" "run suggests --json"
expect_exit 64 "run: no command" "$SG" run
has "$T/err" "missing the COMMAND to run" "run names what is missing"
for args in "--json" "--json -p nosuchpack -- true" "--json --cwd /nonexistent/dir -- true" "--json --timout 3 -- true"; do
    # shellcheck disable=SC2086 - the words are options of this test, split on purpose
    "$SG" run $args >"$T/out" 2>"$T/err"
    rc=$?
    if python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); sys.exit(0 if o["status"]=="error" and o["decision"]=="deny" and o["return_code"]==int(sys.argv[2]) and o["message"] and o["programs"]==0 else 1)' "$T/out" "$rc" 2>/dev/null && [ "$rc" -ne 0 ]; then ok; else bad "run $args: one JSON object on stdout (exit $rc)"; cat "$T/out" "$T/err" >&2; fi
done
expect_exit 64 "session: a misspelt action" "$SG" session shwo
has "$T/err" "unknown action 'shwo'; did you mean 'show'?" "session suggests the action"
expect_exit 64 "session: an option it does not take" "$SG" session list --json
has "$T/err" "unknown option '--json'" "session names the option, not 'needs a value'"
expect_exit 64 "session: a misspelt option" "$SG" session show --sesion x
has "$T/err" "did you mean '--session'?" "session suggests --session"

# serve and hook suggest among the gate's options too (one list, cli/gateopt.c)
expect_exit 64 "serve: a misspelt gate option" "$SG" serve --socket "$T/never.sock" --tem x
has "$T/err" "did you mean '--team'?" "serve suggests --team"
"$SG" hook claude-code --tem x </dev/null >"$T/out" 2>"$T/err"
has "$T/out" "did you mean '--team'?" "hook suggests --team"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
