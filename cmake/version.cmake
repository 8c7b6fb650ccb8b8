# SPDX-License-Identifier: BSD-3-Clause
# Reads the library version from include/bsrsolve.h, its one definition, into
# BSR_VERSION_FROM_HEADER ("MAJOR.MINOR.PATCH"); stops when the string macro
# and the numeric ones disagree.
file(STRINGS "${CMAKE_CURRENT_LIST_DIR}/../include/bsrsolve.h" _bsr_vlines
     REGEX "^#define BSR_VERSION(_MAJOR|_MINOR|_PATCH)? ")
set(_bsr_nums "")
foreach(_part MAJOR MINOR PATCH)
  if(NOT _bsr_vlines MATCHES "BSR_VERSION_${_part} +([0-9]+)")
    message(FATAL_ERROR "include/bsrsolve.h: BSR_VERSION_${_part} missing")
  endif()
  list(APPEND _bsr_nums ${CMAKE_MATCH_1})
endforeach()
list(JOIN _bsr_nums "." BSR_VERSION_FROM_HEADER)
if(NOT _bsr_vlines MATCHES "BSR_VERSION +\"([^\"]*)\"" OR
   NOT CMAKE_MATCH_1 STREQUAL BSR_VERSION_FROM_HEADER)
  message(FATAL_ERROR "include/bsrsolve.h: BSR_VERSION \"${CMAKE_MATCH_1}\" is not "
                      "BSR_VERSION_MAJOR.MINOR.PATCH = ${BSR_VERSION_FROM_HEADER}")
endif()
# a new version in the header reconfigures an existing build (the soname follows it)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/../include/bsrsolve.h")
