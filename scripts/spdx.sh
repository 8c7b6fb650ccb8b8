#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Puts the licence line `SPDX-License-Identifier: BSD-3-Clause` first in every
# source file that lacks it (after a #! line, and after a Python coding
# cookie), as the file type's comment:
#   /* ... */  .c .h .cu .cuh
#   # ...      .py .sh .cmake .cmake.in CMakeLists.txt Makefile, #!/bin/sh scripts
#   ! ...      .f90 .F90
# Idempotent: a file whose first three lines hold the identifier is left
# alone.  Data (matrices/, the fuzz corpus) and anything git does not track
# are never touched, nor are binary files.
#
#   sh scripts/spdx.sh            every tracked source file of the repository
#   sh scripts/spdx.sh FILE...    only these (paths from the repository root)
#   sh scripts/spdx.sh --check    list the files that lack it; exit 1 if any
set -eu
cd "$(dirname "$0")/.."
id="SPDX-License-Identifier: BSD-3-Clause"
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi

# The comment style of file $1: c, hash, f90, or nothing for a file left alone.
style() {
  case $1 in
    matrices/*|tests/fuzz/corpus/*) return ;;
    *.c|*.h|*.cu|*.cuh) echo c ;;
    *.py|*.sh|*.cmake|*.cmake.in|CMakeLists.txt|*/CMakeLists.txt|Makefile|*/Makefile) echo hash ;;
    *.f90|*.F90) echo f90 ;;
    *) case $(head -c 64 "$1" | head -n 1) in '#!/bin/sh'*|'#!/bin/bash'*|'#!/usr/bin/env sh'*|'#!/usr/bin/env bash'*) echo hash ;; esac ;;
  esac
}

list() {
  if [ $# -gt 0 ]; then printf '%s\n' "$@"; else git ls-files; fi
}

list "$@" | while IFS= read -r f; do
  [ -f "$f" ] || continue
  s=$(style "$f")
  [ -n "$s" ] || continue
  grep -Iq . "$f" || continue                      # binary or empty
  head -n 3 "$f" | grep -q "$id" && continue
  if [ $check = 1 ]; then echo "$f"; continue; fi
  case $s in
    c) line="/* $id */" ;;
    hash) line="# $id" ;;
    f90) line="! $id" ;;
  esac
  tmp=$(mktemp)
  # line 1 stays first when it is #!; a coding cookie (PEP 263) must stay on line 1 or 2
  awk -v line="$line" '
    !done && NR == 1 && /^#!/ { print; next }
    !done && NR <= 2 && /^#.*coding[:=]/ { print; next }
    !done { print line; done = 1 }
    { print }
    END { if (!done) print line }' "$f" > "$tmp"
  cat "$tmp" > "$f"                                # keeps the file's mode
  rm -f "$tmp"
  echo "spdx: $f"
done | { if [ $check = 1 ]; then
           out=$(cat); [ -z "$out" ] || { echo "$out"; echo "spdx: these files lack '$id' (sh scripts/spdx.sh adds it)" >&2; exit 1; }
         else cat; fi; }
