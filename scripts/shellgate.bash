# shellgate.bash - bash completion for shellgate: the commands, each command's
# options, the embedded pack names after -p, files where files go.  Installed as
# share/bash-completion/completions/shellgate; tests/completion.bash drives it.

# The embedded pack names, asked of the binary itself (`shellgate help packs`
# would be a verb; the pack list is in `shellgate --help`'s POLICY line).
_shellgate_packs()
{
    "${1:-shellgate}" --help 2>/dev/null |
        sed -n 's/.*embedded pack name (\([^)]*\)).*/\1/p' | tr -d ','
}

_shellgate()
{
    local cur prev words cword
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local sg=${COMP_WORDS[0]}
    local cmds="check explain test compile dump decompile fuzz approve approvals revoke state bundle keygen run session hook serve help version"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$cmds --version --help" -- "$cur"))
        return 0
    fi
    local cmd=${COMP_WORDS[1]} i
    # after --, the words are a command: nothing of ours to offer
    for ((i = 2; i < COMP_CWORD; i++)); do
        [ "${COMP_WORDS[i]}" = "--" ] && return 0
    done
    case $prev in
        -p|--policy)
            COMPREPLY=($(compgen -W "$(_shellgate_packs "$sg")" -- "$cur") $(compgen -f -X '!*.@(rules|sgt|sgb)' -- "$cur"))
            return 0 ;;
        --cwd|--root|-I)
            COMPREPLY=($(compgen -d -- "$cur"))
            return 0 ;;
        -o|--state|--log|--key|--pub|--require-signature|--session-dir|--bwrap)
            COMPREPLY=($(compgen -f -- "$cur"))
            return 0 ;;
        --rate-store-down)
            COMPREPLY=($(compgen -W "deny local" -- "$cur"))
            return 0 ;;
        --sandbox)
            COMPREPLY=($(compgen -W "none bwrap auto" -- "$cur"))
            return 0 ;;
        --platform)
            COMPREPLY=($(compgen -W "linux macos windows" -- "$cur"))
            return 0 ;;
    esac
    local opts
    # each command's options: those its usage (`shellgate help CMD`) names, which are
    # the options it takes (tests/completion.bash holds the two equal)
    local store="--rate-store --rate-store-down --rate-store-timeout" load="-I --require-signature --scope"
    case $cmd in
        check) opts="-p --policy $load --cwd --root --platform --json --argv --batch --state --admit --agent --team --non-interactive --log --log-max-bytes $store --help --" ;;
        explain) opts="-p --policy $load --cwd --root --platform --json --argv --batch --help --" ;;
        test) opts="-p --policy $load --platform --coverage --json --strict --help --" ;;
        compile) opts="-o --check --strict --json -I --help --" ;;
        dump) opts="--json $load --help" ;;
        decompile) opts="$load --help" ;;
        fuzz) opts="$load --seed --max --json --help" ;;
        approve) opts="--once --session --always --agent --state $store --help" ;;
        approvals) opts="--state $store --json --help" ;;
        revoke) opts="--state $store --help" ;;
        state) opts="reset --state $store --help" ;;
        bundle)
            # the action, then that action's options
            case ${COMP_WORDS[2]} in
                build) opts="-o --scope -I" ;;
                sign) opts="--key -o" ;;
                verify) opts="--pub --scope" ;;
                show) opts="" ;;
                *) opts="build sign verify show --help" ;;
            esac
            [ "$COMP_CWORD" -eq 2 ] && opts="build sign verify show --help" ;;
        keygen) opts="-o --help" ;;
        run) opts="-p --policy -I --cwd --root --timeout --grace --max-output --truncate --env --rlimit --session --session-dir --max-sessions --session-ttl --sandbox --bwrap --state --agent --team $store --require-signature --scope --json --help --" ;;
        session) opts="show set unset reset list --session --session-dir -p --policy -I --require-signature --scope --help" ;;
        hook) opts="claude-code codex gemini-cli cursor copilot -p --policy $load --state --log --log-max-bytes $store --agent --team --ask --non-interactive --print-config --help" ;;
        serve) opts="--socket -p --policy --mode --max-request --approve --state --log --log-max-bytes --agent --team --non-interactive $store $load --help" ;;
        help) COMPREPLY=($(compgen -W "$cmds" -- "$cur")); return 0 ;;
        *) return 0 ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    elif [ "$cmd" = fuzz ] || [ "$cmd" = dump ] || [ "$cmd" = decompile ]; then
        COMPREPLY=($(compgen -W "$(_shellgate_packs "$sg")" -- "$cur") $(compgen -f -- "$cur"))
    elif [ "$cmd" = state ] || [ "$cmd" = session ] || { [ "$cmd" = bundle ] && [ "$COMP_CWORD" -eq 2 ]; }; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}
complete -F _shellgate shellgate
