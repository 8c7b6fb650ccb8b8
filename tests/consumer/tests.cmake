# SPDX-License-Identifier: BSD-3-Clause
# Tests that build outside projects against bsrsolve (run.sh does the work):
# the build tree installed into stage/, then a CMake project with
# find_package, a plain compile with pkg-config, and a CMake project with
# add_subdirectory; and the Fortran example.  Included from the top
# CMakeLists.txt in the tests section.
find_program(BSR_PKG_CONFIG pkg-config)
set(_bsr_san "")
if(BSR_ASAN)
  set(_bsr_san "-fsanitize=address,undefined -fno-omit-frame-pointer")
endif()
set(_bsr_run sh ${CMAKE_CURRENT_LIST_DIR}/run.sh)
set(_bsr_env "CMAKE=${CMAKE_COMMAND}" "CC=${CMAKE_C_COMPILER}" "BSR_BUILD=${PROJECT_BINARY_DIR}"
  "BSR_SOURCE=${PROJECT_SOURCE_DIR}" "BSR_STAGE=${PROJECT_BINARY_DIR}/stage"
  "BSR_VERSION=${PROJECT_VERSION}" "BSR_FORTRAN=${BSR_HAVE_FORTRAN}" "BSR_SAN=${_bsr_san}" "PKG_CONFIG=${BSR_PKG_CONFIG}")
if(NOT BSR_PKG_CONFIG)
  list(FILTER _bsr_env EXCLUDE REGEX "^PKG_CONFIG=")
  list(APPEND _bsr_env "PKG_CONFIG=")
endif()

add_test(NAME install_tree COMMAND ${_bsr_run} install)
set_tests_properties(install_tree PROPERTIES FIXTURES_SETUP bsr_stage)
foreach(mode package pkgconfig subdir)
  add_test(NAME consumer_${mode} COMMAND ${_bsr_run} ${mode} ${PROJECT_BINARY_DIR}/consumer_${mode})
  if(NOT mode STREQUAL "subdir")
    set_tests_properties(consumer_${mode} PROPERTIES FIXTURES_REQUIRED bsr_stage)
  endif()
endforeach()
set_tests_properties(install_tree consumer_package consumer_pkgconfig consumer_subdir PROPERTIES
  ENVIRONMENT "${_bsr_env}" SKIP_RETURN_CODE 77 TIMEOUT 900)

if(BSR_HAVE_FORTRAN)
  add_test(NAME fortran_example COMMAND bsrsolve_fortran_example)
  # the example's own check must be able to fail
  add_test(NAME fortran_example_check COMMAND bsrsolve_fortran_example --perturb)
  set_tests_properties(fortran_example_check PROPERTIES PASS_REGULAR_EXPRESSION "FAILED: wrong solution")
else()
  add_test(NAME fortran_example COMMAND sh -c "echo 'skipped: no Fortran compiler found (scripts/install-deps.sh installs gfortran)'; exit 77")
  set_tests_properties(fortran_example PROPERTIES SKIP_RETURN_CODE 77)
endif()
