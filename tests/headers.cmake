# SPDX-License-Identifier: BSD-3-Clause
# ctest `public_headers`: every public header (include/bsrsolve.h,
# include/bsrsolve/*.h, include/bsrsolve_mpi.h when an mpi.h is found) is
# compiled after <complex.h> in C11, whose macros I and complex break any
# declaration naming a parameter that way (PETSc includes <complex.h>), and
# in C++ after <complex> and <complex.h> when a C++ compiler is found; with
# -Wall -Wextra -Wpedantic -Werror, as a user's build might.
#
# Included from the top CMakeLists.txt in the tests section, it registers the
# test; ctest runs this same file in script mode (cmake -P), which compiles.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(CMAKE_CXX_COMPILER)
    set(_bsr_cxx ${CMAKE_CXX_COMPILER})
  else()
    find_program(_bsr_cxx NAMES c++ g++ clang++ NO_CACHE)
  endif()
  if(BSR_HAVE_MPI)
    set(_bsr_mpi_inc "${MPI_C_INCLUDE_DIRS}")
  else()
    find_path(_bsr_mpi_inc mpi.h PATH_SUFFIXES openmpi/include openmpi mpich mpi NO_CACHE)
  endif()
  add_test(NAME public_headers COMMAND ${CMAKE_COMMAND}
    "-DCC=${CMAKE_C_COMPILER}" "-DCXX=${_bsr_cxx}" "-DINCLUDE=${PROJECT_SOURCE_DIR}/include"
    "-DMPI_INC=${_bsr_mpi_inc}" "-DWORK=${PROJECT_BINARY_DIR}/public_headers"
    -P ${CMAKE_CURRENT_LIST_FILE})
  return()
endif()
cmake_minimum_required(VERSION 3.24)  # script mode: this project's policies

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(GLOB _mods RELATIVE ${INCLUDE} ${INCLUDE}/bsrsolve/*.h)
set(headers bsrsolve.h ${_mods})
set(incs -I${INCLUDE})
if(MPI_INC)
  list(APPEND headers bsrsolve_mpi.h)
  foreach(d ${MPI_INC})
    list(APPEND incs -isystem ${d})  # MPI's own warnings are not ours
  endforeach()
else()
  message(STATUS "no mpi.h found: bsrsolve_mpi.h not compiled")
endif()

# C: the macros must be there, or the test tests nothing
set(c_prelude "#include <complex.h>\n#if !defined(I) || !defined(complex)\n#error <complex.h> did not define I and complex\n#endif\n")
set(langs c)
if(CXX)
  list(APPEND langs cxx)
else()
  message(STATUS "no C++ compiler found: headers compiled in C only")
endif()
set(failed "")
set(n 0)
foreach(lang ${langs})
  foreach(h ${headers})
    string(MAKE_C_IDENTIFIER ${h} id)
    if(lang STREQUAL "c")
      set(src ${WORK}/${id}.c)
      file(WRITE ${src} "${c_prelude}#include <${h}>\nint main(void) { return 0; }\n")
      set(cmd ${CC} -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only ${incs} ${src})
    else()
      # g++ (GNU mode) defines I through <complex.h> too
      set(src ${WORK}/${id}.cc)
      file(WRITE ${src} "#include <complex>\n#include <complex.h>\n#include <${h}>\nint main() { return 0; }\n")
      set(cmd ${CXX} -Wall -Wextra -Wpedantic -Werror -fsyntax-only ${incs} ${src})
    endif()
    execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    math(EXPR n "${n} + 1")
    if(rc EQUAL 0)
      message(STATUS "ok      ${lang} ${h}")
    else()
      string(REPLACE ";" " " cmdline "${cmd}")
      message("FAILED  ${lang} ${h}: ${cmdline}\n${out}")
      list(APPEND failed "${lang}:${h}")
    endif()
  endforeach()
endforeach()
if(failed)
  message(FATAL_ERROR "public headers that do not compile after <complex.h>: ${failed}")
endif()
message(STATUS "${n} compilations of the public headers after <complex.h> passed")
