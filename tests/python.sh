#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# ctest's `python` test: the package bsrsolve as python/bsrsolve's modules and
# the extension built by this build tree (target bsrsolve_python, linked with
# its libbsrsolve.so), put together in a scratch folder, and its pytest suite
# run there.  Environment (tests/python.cmake): PYTHON, BSR_EXTENSION,
# BSR_BUILD, BSR_SOURCE, BSR_REAL_DIR.
set -eu
work=$BSR_BUILD/python-test
rm -rf "$work"
mkdir -p "$work/site/bsrsolve"
# copies: the sources stay clean (no __pycache__), and the modules are
# the tree's as they are now, edited since the build or not
cp "$BSR_SOURCE"/python/bsrsolve/*.py "$BSR_SOURCE"/python/bsrsolve/*.pyi \
   "$BSR_SOURCE"/python/bsrsolve/py.typed "$work/site/bsrsolve/"
cp "$BSR_EXTENSION" "$work/site/bsrsolve/"
cp -R "$BSR_SOURCE/python/tests" "$work/tests"
cd "$work"
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$work/site" exec "$PYTHON" -m pytest -p no:cacheprovider -q -rs "$work/tests"
