#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run every fuzzer of BUILD (default build-fuzz) for SECONDS (default 60)
# each, over a fresh writable copy of its seed corpus under BUILD/corpus
# (the tree's tests/fuzz/corpus is never written), with its dictionary.
# Crash inputs go to BUILD/artifacts.  Exits nonzero when any target found
# something (crash, leak, UB, timeout, out-of-memory): all targets still run.
# Extra arguments are passed to every fuzzer, e.g. -runs=1000000.
set -u
BUILD=${1:-build-fuzz}
SECONDS_EACH=${2:-60}
[ $# -ge 2 ] && shift 2 || shift $#
SRC=$(cd "$(dirname "$0")" && pwd)
# one OpenMP thread: the generated problems are tiny, threads only add cost
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
failed=""
mkdir -p "$BUILD/artifacts"
for t in fuzz_mmio fuzz_dense fuzz_options fuzz_gen; do
  rm -rf "$BUILD/corpus/$t"
  mkdir -p "$BUILD/corpus/$t"
  cp "$SRC/corpus/$t/"* "$BUILD/corpus/$t/"
  echo "fuzz: $t for ${SECONDS_EACH} s"
  "$BUILD/tests/fuzz/$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -dict="$SRC/$t.dict" -artifact_prefix="$BUILD/artifacts/$t-" -print_final_stats=1 "$@" \
    "$BUILD/corpus/$t" > "$BUILD/$t.log" 2>&1
  rc=$?
  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)' "$BUILD/$t.log"
  if [ $rc -ne 0 ]; then
    failed="$failed $t"
    tail -n 60 "$BUILD/$t.log"
  fi
done
if [ -n "$failed" ]; then
  echo "fuzz: FAILED:$failed (logs $BUILD/<target>.log, inputs $BUILD/artifacts)" >&2
  exit 1
fi
echo "fuzz: no findings"
