# SPDX-License-Identifier: BSD-3-Clause
# The Python package (python/) in the test build: its extension bsrsolve._core
# is built here as the target bsrsolve_python (python/extension.cmake, the
# wheel's own recipe) against this build's libbsrsolve.so, and the ctest
# `python` (tests/python.sh) runs the pytest suite on python/bsrsolve's
# modules beside it.  No pip and no second build of the library: a wheel
# (pip install ./python) builds the library again through scikit-build-core,
# minutes with CUDA; scripts/python-wheel.sh checks that route.  The
# interpreter is the first of BSR_PYTHON, python3 on PATH and /usr/bin/python3
# that imports numpy, scipy and pytest and has Python.h; without one the test
# skips and says what is missing.  Included from the top CMakeLists.txt in the
# tests section.

# python/pyproject.toml's version is the library's (the wheel's build checks it too)
file(STRINGS ${PROJECT_SOURCE_DIR}/python/pyproject.toml _bsr_py_version REGEX "^version *=")
if(NOT _bsr_py_version MATCHES "\"([^\"]*)\"" OR NOT CMAKE_MATCH_1 VERSION_EQUAL PROJECT_VERSION)
  message(FATAL_ERROR "python/pyproject.toml: version \"${CMAKE_MATCH_1}\" is not the library's "
                      "${PROJECT_VERSION} (include/bsrsolve.h): make them equal")
endif()

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
for m in ("numpy", "scipy", "pytest"):
    try:
        __import__(m)
    except ImportError:
        missing.append(m)
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
    set(_bsr_py_skip "skipped: no Python 3 with numpy, scipy, pytest and Python.h found:${_bsr_py_why} scripts/install-deps.sh installs them, or set -DBSR_PYTHON=")
  else()
    # that interpreter's headers and extension suffix
    set(Python_EXECUTABLE ${_bsr_py})
    find_package(Python 3.8 COMPONENTS Interpreter Development.Module)
    if(NOT Python_Development.Module_FOUND)
      set(_bsr_py_skip "skipped: CMake's FindPython found no development files (Python.h) for ${_bsr_py}")
    endif()
  endif()
endif()

if(_bsr_py_skip)
  message(STATUS "bsrsolve: Python package test ${_bsr_py_skip}")
  add_test(NAME python COMMAND sh -c "echo '${_bsr_py_skip}'; exit 77")
else()
  message(STATUS "bsrsolve: Python package tested with ${Python_EXECUTABLE}")
  include(${PROJECT_SOURCE_DIR}/python/extension.cmake)
  bsr_python_extension(bsrsolve_python bsrsolve_shared)
  set_target_properties(bsrsolve_python PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python)
  add_test(NAME python COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/python.sh)
  set_tests_properties(python PROPERTIES ENVIRONMENT
    "PYTHON=${Python_EXECUTABLE};BSR_EXTENSION=$<TARGET_FILE:bsrsolve_python>;BSR_BUILD=${PROJECT_BINARY_DIR};BSR_SOURCE=${PROJECT_SOURCE_DIR};BSR_REAL_DIR=${BSR_REAL_DIR}")
endif()
set_tests_properties(python PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
