# SPDX-License-Identifier: BSD-3-Clause
# Thin wrapper around CMake: `make demo`, `make test`, `make asan`, `make fuzz`.
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60

.PHONY: all deps build demo test asan fuzz clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bsrsolve

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan: deps
	cmake -S . -B build-asan -DBSR_ASAN=ON -DBSR_CUDA=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# libFuzzer harnesses (clang, ASan + UBSan), FUZZ_SECONDS each over a copy of
# tests/fuzz/corpus; fails on any crash, leak or timeout
fuzz: deps
	CC=clang cmake -S . -B build-fuzz -DBSR_FUZZ=ON -DBSR_CUDA=OFF -DBSR_MPI=OFF -DBSR_FORTRAN=OFF -DBSR_BUILD_TESTS=OFF
	cmake --build build-fuzz --target fuzzers -j $(JOBS)
	tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) build-asan build-fuzz
