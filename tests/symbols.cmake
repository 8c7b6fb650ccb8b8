# SPDX-License-Identifier: BSD-3-Clause
# ctest library_symbols: no comparison code in libbsrsolve, and the device
# entry points all there.
#   - The benchmarks' vendor anchors (library bsrbench, bench/anchors/, their
#     entry points listed in bench/anchors/entry_points.def) must not reach
#     the library: none of their symbols is defined in libbsrsolve.so (its
#     dynamic table, nm -D --defined-only, and its full symbol table where not
#     stripped) or libbsrsolve.a, and with CUDA the library calls none of the
#     cuSPARSE routines only they use (ILU(0), triangular solves, the generic
#     SpMV/SpMM).  So that the check can fail, the anchors' entry points must
#     be defined in libbsrbench.a, and with CUDA the routines called there.
#   - Every device entry point of kernels/entry_points.def is defined in
#     libbsrsolve.a: by kernels/ with CUDA, by the stand-ins without.
#
# Included from the top CMakeLists.txt in the tests section, it registers the
# test; ctest runs this same file in script mode (cmake -P).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  add_test(NAME library_symbols COMMAND ${CMAKE_COMMAND}
    "-DNM=${CMAKE_NM}" "-DLIB_SO=$<TARGET_FILE:bsrsolve_shared>" "-DLIB_A=$<TARGET_FILE:bsrsolve>"
    "-DBENCH_A=$<TARGET_FILE:bsrbench>" "-DCUDA=${BSR_HAVE_CUDA}"
    "-DLIB_ENTRIES=${PROJECT_SOURCE_DIR}/kernels/entry_points.def"
    "-DANCHOR_ENTRIES=${PROJECT_SOURCE_DIR}/bench/anchors/entry_points.def" -P ${CMAKE_CURRENT_LIST_FILE})
  return()
endif()
cmake_minimum_required(VERSION 3.24)  # script mode: this project's policies

# OUT = the names of the entry points listed in FILE (BSR_DEVICE_ENTRY and
# BSR_DEVICE_VOID lines).
function(entries out file)
  file(STRINGS ${file} lines REGEX "^BSR_DEVICE_(ENTRY|VOID)\\(")
  set(names "")
  foreach(l ${lines})
    if(l MATCHES "^BSR_DEVICE_ENTRY\\([^,]+, *([A-Za-z_][A-Za-z0-9_]*) *,")
      list(APPEND names ${CMAKE_MATCH_1})
    elseif(l MATCHES "^BSR_DEVICE_VOID\\( *([A-Za-z_][A-Za-z0-9_]*) *,")
      list(APPEND names ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(LENGTH names n)
  if(n LESS 3)
    message(FATAL_ERROR "only ${n} entry points read from ${file}")
  endif()
  set(${out} ${names} PARENT_SCOPE)
endfunction()
entries(lib_entries ${LIB_ENTRIES})
entries(anchor_entries ${ANCHOR_ENTRIES})

# The anchors' functions: their entry points (bsr_cusparse_outcome, the
# pipeline's report, has no device code: it is not in the list), and names
# of their own helpers and device kernels (matched anywhere in a symbol,
# mangled C++ included).
set(anchor_patterns "bsr_to_csr_kernel|csr_path_free|spsv_time|cusp_once|gen_once" "^bsr_cusparse_outcome$")
foreach(n ${anchor_entries})
  list(APPEND anchor_patterns "^${n}$")
endforeach()
# cuSPARSE routines only the anchors call (undefined references, CUDA only).
set(vendor_patterns
  "^cusparse[DSX](bsr|csr)ilu02"                  # ILU(0)
  "^cusparse[DSX]bsrs[vm]2"                       # block triangular solves
  "^cusparseSp(SV|SM|MV|MM)"                      # generic triangular solves and products
  "^cusparseCreate(Bsr|Csr|DnVec|DnMat)$")        # generic-API descriptors

include(${CMAKE_CURRENT_LIST_DIR}/../cmake/exports.cmake)
# OUT = the symbol names that `nm ARGS FILE` lists (bsr_nm_symbols).
function(symbols out file)
  bsr_nm_symbols(names types "${NM}" ${file} ${ARGN})
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# OUT = "NAME (pattern P)" for each name matching one of the patterns; FOUND
# = the patterns that matched something.
function(matches out found names)
  set(hits "")
  set(seen "")
  foreach(p ${ARGN})
    foreach(n ${names})
      if(n MATCHES "${p}")
        list(APPEND hits "${n}   (${p})")
        list(APPEND seen "${p}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES hits)
  list(REMOVE_DUPLICATES seen)
  set(${out} ${hits} PARENT_SCOPE)
  set(${found} ${seen} PARENT_SCOPE)
endfunction()

set(errors "")
# the dynamic table, the full table (when the library is not stripped) and the archive
symbols(dyn ${LIB_SO} -D --defined-only)
symbols(full ${LIB_SO} --defined-only)
symbols(arch ${LIB_A} --defined-only)
foreach(what dyn full arch)
  matches(hits found "${${what}}" ${anchor_patterns})
  if(hits)
    list(JOIN hits "\n  " t)
    string(APPEND errors "comparison code defined in the library (${what}):\n  ${t}\n")
  endif()
endforeach()
# the anchors' entry points are where they belong (stand-ins without CUDA)
symbols(bench ${BENCH_A} --defined-only)
foreach(n ${anchor_entries} bsr_cusparse_outcome)
  if(NOT n IN_LIST bench)
    string(APPEND errors "self-check: ${n} is not defined in ${BENCH_A}: the anchors were renamed? update ${ANCHOR_ENTRIES} and tests/symbols.cmake\n")
  endif()
endforeach()
# the device entry points are all in the library
foreach(n ${lib_entries})
  if(NOT n IN_LIST arch)
    string(APPEND errors "device entry point ${n} (${LIB_ENTRIES}) is not defined in ${LIB_A}\n")
  endif()
endforeach()

if(CUDA)
  symbols(undef ${LIB_A} -u)
  matches(hits found "${undef}" ${vendor_patterns})
  if(hits)
    list(JOIN hits "\n  " t)
    string(APPEND errors "the library calls cuSPARSE routines only the comparison code uses:\n  ${t}\n")
  endif()
  symbols(bench_undef ${BENCH_A} -u)
  matches(hits found "${bench_undef}" ${vendor_patterns})
  foreach(p ${vendor_patterns})
    if(NOT p IN_LIST found)
      string(APPEND errors "self-check: pattern ${p} finds no call in ${BENCH_A}: update tests/symbols.cmake\n")
    endif()
  endforeach()
endif()

list(LENGTH full nfull)
list(LENGTH arch narch)
list(LENGTH lib_entries nle)
list(LENGTH anchor_entries nae)
message(STATUS "${LIB_SO}: ${nfull} defined symbols, ${LIB_A}: ${narch}; ${nle} device entry points, "
               "${nae} anchors; CUDA ${CUDA}")
if(errors)
  message(FATAL_ERROR "${errors}")
endif()
