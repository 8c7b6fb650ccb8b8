# SPDX-License-Identifier: BSD-3-Clause
# What libbsrsolve.so exports: two ctests.
#   exported_symbols  the library's dynamic symbols (nm -D --defined-only) are
#                     exactly the functions of the public headers: none more
#                     (an internal function exported can be replaced by a
#                     program's function of the same name), none missing
#   interposition     tests/interpose.c, a program defining ilu_factor,
#                     gen_args_parse and bsr_cmp_int, linked against the
#                     shared library, solves with ILU2 and gets it right
#
# Included from the top CMakeLists.txt in the tests section, it registers the
# tests; ctest runs this same file in script mode (cmake -P) for the first.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME exported_symbols COMMAND ${CMAKE_COMMAND}
    "-DNM=${CMAKE_NM}" "-DLIB=$<TARGET_FILE:bsrsolve_shared>" "-DINCLUDE=${PROJECT_SOURCE_DIR}/include"
    "-DWITH_MPI=${BSR_HAVE_MPI}" -P ${CMAKE_CURRENT_LIST_FILE})
  add_executable(test_interpose ${CMAKE_CURRENT_LIST_DIR}/interpose.c)
  target_link_libraries(test_interpose PRIVATE bsrsolve_shared m)
  add_test(NAME interposition COMMAND test_interpose)
  set_tests_properties(interposition PROPERTIES TIMEOUT 300)
  return()
endif()
cmake_minimum_required(VERSION 3.24)  # script mode: this project's policies

include(${CMAKE_CURRENT_LIST_DIR}/../cmake/exports.cmake)
bsr_public_functions(public ${INCLUDE} ${WITH_MPI})
bsr_nm_symbols(exported types "${NM}" ${LIB} -D --defined-only)
set(extra "")
foreach(name type IN ZIP_LISTS exported types)
  if(NOT name IN_LIST public)
    list(APPEND extra "${name} (${type})")
  endif()
endforeach()
set(missing "")
foreach(name ${public})
  if(NOT name IN_LIST exported)
    list(APPEND missing ${name})
  endif()
endforeach()
list(LENGTH public npub)
list(LENGTH exported nexp)
list(LENGTH extra nextra)
list(LENGTH missing nmissing)
message(STATUS "${LIB}: ${nexp} symbols exported, ${npub} functions in the public headers")
if(extra OR missing)
  list(JOIN extra "\n  " extra_text)
  list(JOIN missing "\n  " missing_text)
  message(FATAL_ERROR "libbsrsolve.so must export the public API and nothing else:\n"
    "${nextra} exported symbols not declared in the public headers:\n  ${extra_text}\n"
    "${nmissing} public functions not exported:\n  ${missing_text}")
endif()
