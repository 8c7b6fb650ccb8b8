#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ctest's `python` test: installs the package of python/ against this build
# tree's libbsrsolve.so into a scratch folder and runs its pytest suite there.
# Environment (tests/python.cmake): PYTHON, CC, BSR_BUILD, BSR_SOURCE, BSR_REAL_DIR.
set -eu
work=$BSR_BUILD/python-test
rm -rf "$work"
mkdir -p "$work"
# a copy: setuptools writes build/ and *.egg-info beside setup.py, and
# several build trees may run this test at once
cp -R "$BSR_SOURCE/python" "$work/src"
export BSRSOLVE_BUILD_DIR="$BSR_BUILD" PYTHONDONTWRITEBYTECODE=1
if "$PYTHON" -m pip --version >/dev/null 2>&1; then
  # the way users install it (offline: no build isolation, no index)
  "$PYTHON" -m pip install --no-build-isolation --no-deps --no-index --disable-pip-version-check \
    -q --target "$work/site" "$work/src"
else
  echo "python: no pip for $PYTHON; building with setup.py"
  (cd "$work/src" && "$PYTHON" setup.py -q build --build-base "$work/build" --build-lib "$work/site")
fi
cd "$work"
PYTHONPATH="$work/site" exec "$PYTHON" -m pytest -p no:cacheprovider -q -rs "$work/src/tests"
