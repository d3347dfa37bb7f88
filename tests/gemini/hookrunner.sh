#!/bin/sh
# Gemini CLI's own hook runner against `shellgate hook gemini-cli`
# (tests/gemini/hookrunner.mjs).  Installs @google/gemini-cli-core from the npm
# registry into a scratch folder once (kept in the build tree); skips (77) with a
# message when npm is absent or the install fails for lack of network.
# usage: hookrunner.sh SHELLGATE SCRATCH_DIR
sg=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    echo "SKIP: npm or node is not installed; Gemini CLI's hook runner test needs them"
    exit 77
fi
core=$dir/node_modules/@google/gemini-cli-core
if [ ! -f "$core/dist/src/hooks/hookRunner.js" ]; then
    mkdir -p "$dir" || exit 1
    [ -f "$dir/package.json" ] || echo '{"name":"sg-gemini-hookrunner","private":true}' > "$dir/package.json"
    if ! (cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
            @google/gemini-cli-core > npm.log 2>&1); then
        echo "SKIP: npm could not install @google/gemini-cli-core (no registry?):"
        tail -5 "$dir/npm.log"
        exit 77
    fi
fi
work=$(mktemp -d /tmp/sg-gemini-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
node "$here/hookrunner.mjs" "$core" "$sg" "$work"
