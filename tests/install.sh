#!/bin/sh
# install.sh - `cmake --install` into a staging directory (DESTDIR and a prefix)
# puts every promised file in place, and docs/example.c builds against the
# installed tree alone: with `pkg-config --cflags --libs shellgate` (shared), with
# pkg-config --static (libshellgate.a), and with find_package(shellgate); each
# binary runs and decides; shellgate.pc names the prefix (pkg-config --define-prefix
# reads the staged tree).  `make install BUILD_DIR=BUILDDIR` (the Makefile's
# front) puts the same files under another prefix, from this tree as it is (no
# profiled rebuild).  usage: install.sh BUILDDIR SRCDIR WORKDIR
set -u
B=$1
SRC=$2
W=$3
rm -rf "$W"
mkdir -p "$W"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

# every promised file under DESTDIR/PREFIX, and nothing outside the prefix
installed() { # destdir prefix how
    p="$1$2"
    libdir=$(cd "$p" 2>/dev/null && ls -d lib*/pkgconfig | sed 's#/pkgconfig$##')
    for f in bin/shellgate include/shellgate.h "$libdir/libshellgate.a" "$libdir/libshellgate.so" \
             "$libdir/pkgconfig/shellgate.pc" "$libdir/cmake/shellgate/shellgateConfig.cmake" \
             "$libdir/cmake/shellgate/shellgateConfigVersion.cmake" share/man/man1/shellgate.1 \
             share/man/man5/shellgate-rules.5 share/bash-completion/completions/shellgate; do
        [ -e "$p/$f" ] && ok || bad "$3: not installed: $f"
    done
    # shellgate.pc names the prefix itself, in the plain form: no '..', no '//'
    pc="$p/$libdir/pkgconfig/shellgate.pc"
    grep -qx "prefix=$2" "$pc" && ok || { bad "$3: shellgate.pc does not say prefix=$2"; cat "$pc" >&2; }
    grep -q '\.\.\|//' "$pc" && { bad "$3: shellgate.pc has a '..' or a '//'"; cat "$pc" >&2; } || ok
    so=$(ls "$p/$libdir"/libshellgate.so.* 2>/dev/null | head -1)
    [ -n "$so" ] && ok || bad "$3: no versioned libshellgate.so.N"
    [ -z "$(cd "$1" && find . ! -type d ! -path ".$2/*")" ] && ok || bad "$3: files outside the prefix"
}

PREFIX=/opt/shellgate-test
DESTDIR="$W/stage" cmake --install "$B" --prefix "$PREFIX" >"$W/install.log" 2>&1 \
    && ok || { bad "cmake --install"; cat "$W/install.log" >&2; finish; }
P="$W/stage$PREFIX"
LIBDIR=$(cd "$P" && ls -d lib*/pkgconfig | sed 's#/pkgconfig$##')
installed "$W/stage" "$PREFIX" "cmake --install"

# make install from this tree: the same files under its PREFIX, and no rebuild (the
# default BUILD_DIR, a fresh clone's, is built first: profiled, as make build does).
# The caller's make flags (a -n, a jobserver) are not passed on.
PREFIX2=/opt/other
unset MAKEFLAGS MFLAGS MAKELEVEL
if command -v make >/dev/null; then
    if make -C "$SRC" install BUILD_DIR="$B" PREFIX="$PREFIX2" DESTDIR="$W/stage2" >"$W/make.log" 2>&1; then
        ok
        installed "$W/stage2" "$PREFIX2" "make install"
        (cd "$P" && find . | sort) >"$W/files.1"
        (cd "$W/stage2$PREFIX2" && find . | sort) >"$W/files.2"
        cmp -s "$W/files.1" "$W/files.2" && ok || { bad "make install: not the files cmake --install put";
            diff "$W/files.1" "$W/files.2" >&2; }
    else
        bad "make install BUILD_DIR=$B"; cat "$W/make.log" >&2
    fi
    make -n -C "$SRC" install BUILD_DIR="$B" >"$W/make-n.log" 2>&1
    grep -q 'pgo\.sh\|deps\.sh' "$W/make-n.log" && bad "make install BUILD_DIR=... rebuilds through make build" || ok
    make -n -C "$SRC" install >"$W/make-n.log" 2>&1
    grep -q 'scripts/deps\.sh' "$W/make-n.log" && grep -q 'cmake --build build ' "$W/make-n.log" \
        && grep -q 'cmake --install "build"' "$W/make-n.log" && ok \
        || { bad "make install (default BUILD_DIR) does not build first"; cat "$W/make-n.log" >&2; }
    make -C "$SRC" install BUILD_DIR="$W/nothing" DESTDIR="$W/stage3" >"$W/make.log" 2>&1 \
        && bad "make install from an unconfigured BUILD_DIR succeeded" || ok
    grep -q 'not a configured build tree' "$W/make.log" && [ ! -e "$W/stage3" ] && ok \
        || { bad "make install from an unconfigured BUILD_DIR: no reason, or files installed"; cat "$W/make.log" >&2; }
else
    echo "no make: make install not tried" >&2
fi
# the installed binary is the built one, and runs from its new place
"$P/bin/shellgate" --version >"$W/v" 2>&1 && grep -q '^shellgate [0-9]' "$W/v" && ok || bad "installed shellgate --version"

# the staged tree is not at its prefix yet: pkg-config --define-prefix takes the
# prefix from where shellgate.pc is (pkgconf; its libdir and includedir follow)
export PKG_CONFIG_PATH="$P/$LIBDIR/pkgconfig"
[ "$(pkg-config --variable=libdir shellgate)" = "$PREFIX/$LIBDIR" ] && ok || bad "pkg-config libdir: not $PREFIX/$LIBDIR"
[ "$(pkg-config --define-prefix --variable=includedir shellgate)" = "$P/include" ] && ok \
    || bad "pkg-config --define-prefix includedir: not $P/include"
cd "$W" || exit 1
want_out() { # binary description
    LD_LIBRARY_PATH="$P/$LIBDIR" "$1" default "ls -la" "git push origin main" >"$W/out.1" 2>"$W/err.1"
    e1=$?
    LD_LIBRARY_PATH="$P/$LIBDIR" "$1" readonly "rm -rf /" >"$W/out.2" 2>"$W/err.2"
    e2=$?
    if [ "$e1" -eq 2 ] && [ "$e2" -eq 1 ] && grep -q '^allow: ls -la' "$W/out.1" \
        && grep -q '^ask: git push origin main' "$W/out.1" && grep -q '"decision":"deny"' "$W/out.2" \
        && grep -q 'matched: ' "$W/out.2" && grep -q 'pack readonly' "$W/out.2"; then
        ok
    else
        bad "$2: exits $e1 $e2"; cat "$W/out.1" "$W/err.1" "$W/out.2" "$W/err.2" >&2
    fi
}
cc -Wall -Wextra -Werror -o example "$SRC/docs/example.c" $(pkg-config --define-prefix --cflags --libs shellgate) \
    2>"$W/cc.log" && ok || { bad "cc with pkg-config --cflags --libs shellgate"; cat "$W/cc.log" >&2; }
[ -x example ] && want_out ./example "pkg-config build"
# linked against the installed shared library, by its SONAME
LD_LIBRARY_PATH="$P/$LIBDIR" ldd ./example 2>/dev/null | grep -q "libshellgate.so.[0-9]* => $P/$LIBDIR/" && ok \
    || bad "the example does not load the installed libshellgate.so"

cc -Wall -Werror -o example_static "$SRC/docs/example.c" $(pkg-config --define-prefix --cflags shellgate) \
    $(pkg-config --define-prefix --static --libs shellgate | sed 's/-lshellgate/-l:libshellgate.a/') 2>"$W/cc.log" \
    && ok || { bad "cc with pkg-config --static"; cat "$W/cc.log" >&2; }
if [ -x example_static ]; then
    ldd ./example_static | grep -q libshellgate && bad "the static example loads libshellgate.so" || ok
    want_out ./example_static "static build"
fi

mkdir -p "$W/proj"
cat >"$W/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(example C)
find_package(shellgate 0 REQUIRED)
add_executable(example ${SRC}/docs/example.c)
target_link_libraries(example PRIVATE shellgate::shellgate)
add_executable(example_static ${SRC}/docs/example.c)
target_link_libraries(example_static PRIVATE shellgate::shellgate_static)
CM
if cmake -S "$W/proj" -B "$W/proj/build" -DSRC="$SRC" -DCMAKE_PREFIX_PATH="$P" >"$W/cm.log" 2>&1 \
    && cmake --build "$W/proj/build" >>"$W/cm.log" 2>&1; then
    ok
    want_out "$W/proj/build/example" "find_package build"
    want_out "$W/proj/build/example_static" "find_package static build"
else
    bad "find_package(shellgate) build"; cat "$W/cm.log" >&2
fi

# the installed man pages render without a warning
for m in share/man/man1/shellgate.1 share/man/man5/shellgate-rules.5; do
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$P/$m" >"$W/man.out" 2>"$W/man.err"
    if [ -s "$W/man.err" ] || [ ! -s "$W/man.out" ]; then bad "man -l $m"; cat "$W/man.err" >&2; else ok; fi
done
finish
