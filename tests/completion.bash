# completion.bash - scripts/shellgate.bash driven as bash's programmable completion
# would: COMP_WORDS and COMP_CWORD set, the function that `complete -p shellgate`
# names called, COMPREPLY read.  usage: bash tests/completion.bash SCRIPT SHELLGATE
set -u
. "$1"
SG=$2
pass=0
fail=0
# complete WORD... : COMPREPLY for the last word, sorted, on one line
comp() {
    COMP_WORDS=("$SG" "$@")
    COMP_CWORD=$#
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    local fn
    fn=$(complete -p shellgate | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
    "$fn" shellgate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}
want() { # description expected-words... -- words
    local what=$1; shift
    local exp=()
    while [ "$1" != "--" ]; do exp+=("$1"); shift; done
    shift
    local got
    got=$(comp "$@")
    local w
    for w in "${exp[@]}"; do
        case " $got " in
            *" $w "*) pass=$((pass + 1)) ;;
            *) fail=$((fail + 1)); echo "FAIL: $what: '$w' not offered (got: $got)" >&2 ;;
        esac
    done
}
wantnot() { # description word -- words
    local what=$1 w=$2; shift 3
    local got
    got=$(comp "$@")
    case " $got " in
        *" $w "*) fail=$((fail + 1)); echo "FAIL: $what: '$w' offered (got: $got)" >&2 ;;
        *) pass=$((pass + 1)) ;;
    esac
}
complete -p shellgate >/dev/null 2>&1 && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: no completion for shellgate" >&2; }
# every command the binary's help lists is offered, and each completes from a prefix
cmds=$("$SG" help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p')
[ -n "$cmds" ] || { fail=$((fail + 1)); echo "FAIL: no commands in shellgate help" >&2; }
for c in $cmds; do
    want "command $c" "$c" -- ""
    want "prefix of $c" "$c" -- "${c:0:3}"
done
want "a prefix" check -- ch
wantnot "a prefix narrows" compile -- ch
# every embedded pack after -p (the binary's list), for check and explain
packs=$("$SG" --help | sed -n 's/.*embedded pack name (\([^)]*\)).*/\1/p' | tr -d ',')
[ -n "$packs" ] || { fail=$((fail + 1)); echo "FAIL: no embedded packs in shellgate --help" >&2; }
for p in $packs; do
    want "pack $p" "$p" -- check -p ""
    want "pack $p for explain" "$p" -- explain --policy ""
done
want "readonly by prefix" readonly -- check -p rea
want "fuzz takes a pack" gaia -- fuzz ""
want "check's options" --json --cwd --argv --state -- check --
want "compile's options" -o --check --json -- compile -
want "approvals' options" --state --json -- approvals --
want "help names commands" approvals revoke -- help ""
want "state's action" reset -- state ""
want "the platforms after --platform" linux macos windows -- check --platform ""
want "a platform by prefix" macos -- test --platform ma
# each command offers every option its usage names (`shellgate help CMD`): a usage
# and a completion that drift apart fail here; bundle's options are per action
for c in $cmds; do
    case $c in bundle|help|version) continue ;; esac
    uopts=$("$SG" help "$c" | grep -oE -- '(^|[[ |(])--?[a-zA-Z][-a-zA-Z]*' | sed 's/^[[ |(]//' | sort -u)
    [ "$c" = state ] && words=(state reset -) || words=("$c" -)
    for o in $uopts; do want "$c offers its $o" "$o" -- "${words[@]}"; done
done
want "bundle's actions" build sign verify show -- bundle ""
want "bundle show by prefix" show -- bundle sh
want "bundle build's options" -o --scope -I -- bundle build -
want "bundle sign's options" --key -o -- bundle sign -
want "bundle verify's options" --pub --scope -- bundle verify -
wantnot "bundle build offers no --key" --key -- bundle build -
# after --, the words are the command's
wantnot "nothing after --" --json -- check -- ls --
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
