#!/bin/sh
# symbols.sh - libshellgate.so exports exactly the functions include/shellgate.h
# declares (SG_API), under the version node of lib/shellgate.map, with a SONAME that
# carries the major version; libshellgate.a defines every one of them and needs
# nothing but its declared dependencies.  usage: symbols.sh LIB.so LIB.a SRCDIR
set -u
SO=$1
AR=$2
SRC=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

sed -n 's/^SG_API[^(]*[^a-z0-9_]\(sg_[a-z0-9_]*\)(.*/\1/p' "$SRC/include/shellgate.h" | sort -u >"$T/header"
[ -s "$T/header" ] || bad "no SG_API function found in the header"
nm -D --defined-only "$SO" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sed 's/@.*//' | sort -u >"$T/so"
if ! cmp -s "$T/header" "$T/so"; then
    bad "exported symbols differ from the header (< header only, > library only):"
    diff "$T/header" "$T/so" >&2
fi
# every export carries the version node
nm -D --defined-only "$SO" | awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /@@SHELLGATE_0$/ && $3 != "SHELLGATE_0" { print $3 }' >"$T/unversioned"
[ -s "$T/unversioned" ] && { bad "exports without the SHELLGATE_0 node:"; cat "$T/unversioned" >&2; }
major=$(sed -n 's/^#define SG_VERSION_MAJOR \([0-9]*\).*/\1/p' "$SRC/include/shellgate.h")
soname=$(objdump -p "$SO" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = "libshellgate.so.$major" ] || bad "SONAME '$soname', want libshellgate.so.$major"
# the archive defines what the header declares, the embedded packs among its objects
nm --defined-only "$AR" 2>/dev/null | awk 'NF == 3 && $2 == "T" { print $3 }' | sort -u >"$T/ar"
missing=$(comm -23 "$T/header" "$T/ar")
[ -z "$missing" ] || bad "libshellgate.a lacks: $missing"
nm --defined-only "$AR" | grep -q ' sg_embedded_tables$' || bad "libshellgate.a carries no embedded packs"
# the reference evaluator of the oracle is test machinery, not shipped
if nm "$SO" 2>/dev/null | grep -q ' sg_ref_' || nm "$AR" | grep -q ' sg_ref_'; then
    bad "the reference evaluator is in the shipped library"
fi
n=$(wc -l <"$T/header")
if [ "$fail" -eq 0 ]; then echo "$n passed, 0 failed"; else echo "$((n - fail)) passed, $fail failed"; fi
[ "$fail" -eq 0 ]
