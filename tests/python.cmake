# SPDX-License-Identifier: BSD-3-Clause
# The Python package (python/): built against this tree's libbsrsolve.so and
# tested with pytest (tests/python.sh).  The interpreter is the first of
# BSR_PYTHON, python3 on PATH and /usr/bin/python3 that imports numpy, scipy,
# pytest, setuptools and wheel (pip builds a wheel) and has Python.h; without
# one the test skips and says what is missing.  Included from the top CMakeLists.txt in the tests section.
set(BSR_PYTHON "" CACHE FILEPATH "Python interpreter for the Python package test (default: searched)")
set(_bsr_py_skip "")
if(BSR_ASAN)
  # the extension would load an ASan-instrumented libbsrsolve.so into an
  # uninstrumented interpreter: ASan must come first in the process (LD_PRELOAD)
  # and then reports CPython's own allocations; the default build tests it
  set(_bsr_py_skip "skipped: the Python package is not tested under AddressSanitizer (BSR_ASAN=ON), the default build tests it")
else()
  find_program(_bsr_py_path python3 NO_CACHE)
  set(_bsr_py "")
  set(_bsr_py_why "")
  foreach(cand ${BSR_PYTHON} ${_bsr_py_path} /usr/bin/python3)
    if(_bsr_py OR NOT EXISTS "${cand}")
      continue()
    endif()
    execute_process(COMMAND ${cand} -c [=[
import os, sysconfig
missing = []
for m in ("numpy", "scipy", "pytest", "setuptools"):
    try:
        __import__(m)
    except ImportError:
        missing.append(m)
# pip --no-build-isolation (python.sh) builds a wheel: wheel, or a setuptools with its own bdist_wheel (70.1)
try:
    import wheel
except ImportError:
    try:
        import setuptools.command.bdist_wheel
    except ImportError:
        missing.append("wheel")
if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
    missing.append("Python.h (python3-dev)")
print(" ".join(missing), end="")
]=] RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_QUIET)
    if(rc EQUAL 0 AND out STREQUAL "")
      set(_bsr_py ${cand})
    else()
      string(APPEND _bsr_py_why " ${cand} lacks ${out},")
    endif()
  endforeach()
  if(NOT _bsr_py)
    set(_bsr_py_skip "skipped: no Python 3 with numpy, scipy, pytest, setuptools, wheel and Python.h found:${_bsr_py_why} scripts/install-deps.sh installs them, or set -DBSR_PYTHON=")
  endif()
endif()

if(_bsr_py_skip)
  message(STATUS "bsrsolve: Python package test ${_bsr_py_skip}")
  add_test(NAME python COMMAND sh -c "echo '${_bsr_py_skip}'; exit 77")
else()
  message(STATUS "bsrsolve: Python package tested with ${_bsr_py}")
  add_test(NAME python COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/python.sh)
  set_tests_properties(python PROPERTIES ENVIRONMENT
    "PYTHON=${_bsr_py};CC=${CMAKE_C_COMPILER};BSR_BUILD=${PROJECT_BINARY_DIR};BSR_SOURCE=${PROJECT_SOURCE_DIR};BSR_REAL_DIR=${BSR_REAL_DIR}")
endif()
set_tests_properties(python PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
