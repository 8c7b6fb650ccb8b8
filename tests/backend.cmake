# SPDX-License-Identifier: BSD-3-Clause
# The CUDA backend as a library of its own: three ctests.
#   backend_split    libbsrsolve.so needs nothing from CUDA (readelf's NEEDED
#                    entries); with CUDA, libbsrsolve_cuda.so needs the CUDA
#                    runtime and exports bsr_cuda_backend_attach alone
#   backend_load     tests/backend_load.c, linked against libbsrsolve.so
#                    only: a device solve through the backend loaded on
#                    demand (skipped without a device)
#   backend_missing  the same program with BSR_CUDA_LIBRARY naming no file:
#                    the device refused with the reason, the CPU solves
#
# Included from the top CMakeLists.txt in the tests section, it registers the
# tests; ctest runs this same file in script mode (cmake -P) for the first.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  find_program(BSR_READELF NAMES readelf ${CMAKE_READELF})
  set(_backend "")
  if(BSR_HAVE_CUDA)
    set(_backend "-DBACKEND=$<TARGET_FILE:bsrsolve_cuda>")
  endif()
  add_test(NAME backend_split COMMAND ${CMAKE_COMMAND} "-DREADELF=${BSR_READELF}" "-DNM=${CMAKE_NM}"
    "-DLIB=$<TARGET_FILE:bsrsolve_shared>" ${_backend} -P ${CMAKE_CURRENT_LIST_FILE})
  add_executable(test_backend_load ${CMAKE_CURRENT_LIST_DIR}/backend_load.c)
  target_include_directories(test_backend_load PRIVATE ${CUNIT_INCLUDE_DIR})
  target_link_libraries(test_backend_load PRIVATE bsrsolve_shared ${CUNIT_LIBRARY} m)
  if(BSR_HAVE_CUDA)
    target_compile_definitions(test_backend_load PRIVATE BSR_TEST_SPLIT=1)
  else()
    target_compile_definitions(test_backend_load PRIVATE BSR_TEST_SPLIT=0)
  endif()
  add_test(NAME backend_load COMMAND test_backend_load load)
  add_test(NAME backend_missing COMMAND test_backend_load missing)
  set_tests_properties(backend_load PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
  set_tests_properties(backend_missing PROPERTIES TIMEOUT 300
    ENVIRONMENT "BSR_CUDA_LIBRARY=${CMAKE_CURRENT_BINARY_DIR}/no-such-dir/libbsrsolve_cuda.so")
  return()
endif()
cmake_minimum_required(VERSION 3.24)  # script mode: this project's policies

# OUT = the NEEDED entries of FILE's dynamic section.
function(needed out file)
  execute_process(COMMAND ${READELF} -d ${file} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -d ${file} failed (${rc})")
  endif()
  string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" hits "${text}")
  set(names "")
  foreach(h ${hits})
    string(REGEX REPLACE "Shared library: \\[([^]]+)\\]" "\\1" n "${h}")
    list(APPEND names ${n})
  endforeach()
  if(NOT names)
    message(FATAL_ERROR "self-check: no NEEDED entry read from ${file}")
  endif()
  set(${out} ${names} PARENT_SCOPE)
endfunction()

set(errors "")
needed(lib ${LIB})
set(bad ${lib})
list(FILTER bad INCLUDE REGEX "^lib(cuda|cudart|cusparse|cublas|cublasLt|nvJitLink)\\.so")
if(bad)
  string(APPEND errors "${LIB} needs ${bad}: the host library must not link against CUDA\n")
endif()
if(BACKEND)
  needed(be ${BACKEND})
  set(rt ${be})
  list(FILTER rt INCLUDE REGEX "^libcudart\\.so")
  if(NOT rt)
    string(APPEND errors "self-check: ${BACKEND} does not need the CUDA runtime (${be})\n")
  endif()
  include(${CMAKE_CURRENT_LIST_DIR}/../cmake/exports.cmake)
  bsr_nm_symbols(exported types "${NM}" ${BACKEND} -D --defined-only)
  if(NOT exported STREQUAL "bsr_cuda_backend_attach")
    string(APPEND errors "${BACKEND} must export bsr_cuda_backend_attach alone; it exports: ${exported}\n")
  endif()
endif()
message(STATUS "${LIB} needs: ${lib}")
if(BACKEND)
  message(STATUS "${BACKEND} needs: ${be}")
endif()
if(errors)
  message(FATAL_ERROR "${errors}")
endif()
