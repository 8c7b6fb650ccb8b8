#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Stage what a device call carries, in .stage/ (git-ignored; carry [".stage"]):
#   bundle.tar.xz  .devdeps (../shared/device/prepare.sh --mpi, run first when missing)
#   real.tar.xz    the real matrices (../shared/matrices/real), for BSR_REAL_DIR
#   REV.tar.xz     `git archive REV` for each REV given: trees built beside the
#                  working tree in the same call, as the anchor of a timing
# From the repository root:  sh scripts/device-stage.sh [REV...]
# On the device, first:
#   tar xJf .stage/bundle.tar.xz -C . && . .devdeps/env.sh
#   mkdir -p .real && tar xJf .stage/real.tar.xz -C .real     (BSR_REAL_DIR=$PWD/.real/real)
#   mkdir -p base && tar xJf .stage/REV.tar.xz -C base        (then cmake -S base -B base/build ...)
set -eu
mkdir -p .stage
[ -f .devdeps/env.sh ] || ../shared/device/prepare.sh --mpi
[ -f .stage/bundle.tar.xz ] || tar cJf .stage/bundle.tar.xz .devdeps
real=../shared/matrices/real
[ -f .stage/real.tar.xz ] || [ ! -d "$real" ] || (cd "$real/.." && tar cJf "$OLDPWD/.stage/real.tar.xz" real)
for rev in "$@"; do
  git archive --format=tar "$rev" | xz -T2 > ".stage/$rev.tar.xz"
done
du -sh .stage/* | sed 's/^/device-stage: /'
