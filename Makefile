# Makefile - a thin front over CMake: the commands the README promises.
#   make demo   deps, build, run shellgate on sample commands (default pack)
#   make test   deps, build (normal + ASan/UBSan + fuzz replay), whole CTest suite,
#               and a Release (-O3) build, whose optimiser warns where -O2's does not
#   make bench  benchmarks: figures printed and written to bench/results.json
#               (bench/plot.sh draws them as SVG, docs/performance.md)
#   (build is profile-guided: see scripts/pgo.sh; PGO=0 builds without a profile)
#   make fuzz   every libFuzzer harness for FUZZ_SECONDS (default 60) each
#   make install  the binary, libshellgate.so/.a, the header, shellgate.pc, the CMake
#               package, man pages and bash completion under PREFIX (default
#               /usr/local), staged under DESTDIR when set, from the tree BUILD_DIR:
#               by default build, made first as `make build` makes it; a BUILD_DIR
#               given must be configured already, and is brought up to date with
#               cmake --build and installed as configured (no profiled rebuild)
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?=

PREFIX ?= /usr/local
BUILD_DIR ?= build
.PHONY: install install-tree
# BUILD_DIR left to its default: the tree is built (profiled) first, as `make build`
# makes it; a BUILD_DIR given is the caller's configured tree, only brought up to date
install: $(if $(filter file,$(origin BUILD_DIR)),build,install-tree)
	@DESTDIR="$(DESTDIR)" cmake --install "$(BUILD_DIR)" --prefix "$(PREFIX)"
install-tree:
	@test -f "$(BUILD_DIR)/CMakeCache.txt" || { echo "make install: BUILD_DIR=$(BUILD_DIR) is not a" \
	    "configured build tree (cmake -S . -B $(BUILD_DIR) first, or leave BUILD_DIR unset)" >&2; exit 1; }
	@cmake --build "$(BUILD_DIR)" -j $(JOBS)

.PHONY: all deps build build-asan build-fuzz build-release demo test test-normal test-asan test-fuzz bench fuzz clean

all: build

deps:
	@sh scripts/deps.sh

# The shipped build is profile-guided (scripts/pgo.sh): build-pgo is an instrumented
# tree trained on the packs' case files; PGO=0 skips it.
PGO ?= 1
build: deps
ifeq ($(PGO),1)
	@JOBS=$(JOBS) CMAKE_FLAGS="$(CMAKE_FLAGS)" sh scripts/pgo.sh build-pgo $(CURDIR)/build-pgo/profile
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_PGO=USE -DSG_PGO_DIR=$(CURDIR)/build-pgo/profile $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j $(JOBS) || { \
	    echo "pgo: the profiled build failed; building without a profile" >&2; \
	    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_PGO= $(CMAKE_FLAGS) >/dev/null && \
	    cmake --build build -j $(JOBS); }
else
	@cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_PGO= $(CMAKE_FLAGS) >/dev/null
	@cmake --build build -j $(JOBS)
endif

build-asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSG_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j $(JOBS)

build-fuzz: deps
	@CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSG_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-fuzz -j $(JOBS)

build-release: deps
	@cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-release -j $(JOBS)

demo: build
	@sh scripts/demo.sh build/shellgate

test-normal: build
	cd build && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

test-fuzz: build-fuzz
	cd build-fuzz && ctest --output-on-failure -j $(JOBS) -L fuzz

test: test-normal test-asan test-fuzz build-release

bench: build
	@cmake --build build --target benchmarks -j $(JOBS)
	@sh bench/run.sh build

fuzz: build-fuzz
	@sh fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf build build-pgo build-asan build-fuzz build-release
