#!/bin/sh
# deps.sh - make sure the Debian packages shellgate builds with are present.
# As root it installs what is missing with apt-get; otherwise it names them and
# stops.  Needs no network beyond Debian's package mirrors.  gnuplot-nox draws the
# bench figures (bench/plot.sh); man-db and groff-base render the man pages (a
# test); pkg-config and binutils (nm, objdump) check the installed library.
set -eu
PKGS="cmake make gcc re2c lemon liblua5.4-dev libcjson-dev libhiredis-dev libsodium-dev redis-server pkg-config clang libclang-rt-14-dev python3 gnuplot-nox bubblewrap man-db groff-base binutils"
missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || apt-get update
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
else
    echo "deps: missing Debian packages:$missing" >&2
    echo "deps: install them with: sudo apt-get install$missing" >&2
    exit 1
fi
