# SPDX-License-Identifier: BSD-3-Clause
# The installed package: the shared library libbsrsolve.so (SONAME from the
# version), the public headers, the CLI, a CMake package config exporting
# bsrsolve::bsrsolve, and bsrsolve.pc for pkg-config.  Included from the top
# CMakeLists.txt after the static library `bsrsolve` and its dependencies.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# 0.x releases may break the ABI at every minor version: the SONAME keeps it.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(BSR_SOVERSION 0.${PROJECT_VERSION_MINOR})
else()
  set(BSR_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()

# The shared library is linked from the static library's (position-independent)
# host objects, so nothing is compiled twice and every source or dependency
# added to `bsrsolve` reaches it.  Without CUDA, linking `bsrsolve` privately
# brings those dependencies.  With CUDA, the device code is a library of its
# own, libbsrsolve_cuda.so (the objects of bsrsolve_kernels, linked with the
# CUDA runtime, cuSPARSE and cuBLAS), which libbsrsolve.so loads when a device
# is asked for (src/cudaload/cuda_load.c, kernels/backend.h): libbsrsolve.so
# then links against nothing from CUDA, and a CPU-only user needs no CUDA
# runtime.  Both sides get BSR_CUDA_TABLES, a hash of the tables' lists, so a
# backend from another build is refused.
add_library(bsrsolve_shared SHARED $<TARGET_OBJECTS:bsrsolve>)
add_library(bsrsolve::bsrsolve ALIAS bsrsolve_shared)
if(BSR_HAVE_CUDA)
  set(_tables ${PROJECT_SOURCE_DIR}/kernels/entry_points.def ${PROJECT_SOURCE_DIR}/kernels/host_imports.def
              ${PROJECT_SOURCE_DIR}/kernels/backend.h)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_tables})
  set(_hash "")
  foreach(f ${_tables})
    file(SHA1 ${f} _h)
    string(APPEND _hash ${_h})
  endforeach()
  string(SHA1 _hash "${_hash}")
  string(SUBSTRING ${_hash} 0 16 BSR_CUDA_TABLES)
  set(_backend_includes include ${BSR_PRIVATE_INCLUDE_DIRS} ${BSR_KERNEL_INCLUDE_DIRS} reorder
                        ${METIS_INCLUDE_DIR} ${UMFPACK_INCLUDE_DIR})
  add_library(bsrsolve_cuda SHARED $<TARGET_OBJECTS:bsrsolve_kernels> ${PROJECT_SOURCE_DIR}/kernels/backend_attach.c)
  target_include_directories(bsrsolve_cuda PRIVATE ${_backend_includes})
  target_compile_definitions(bsrsolve_cuda PRIVATE BSR_HAVE_CUDA=1 BSR_CUDA_TABLES="${BSR_CUDA_TABLES}")
  target_link_libraries(bsrsolve_cuda PRIVATE CUDA::cudart CUDA::cusparse CUDA::cublas ${CMAKE_DL_LIBS})
  set_target_properties(bsrsolve_cuda PROPERTIES LINKER_LANGUAGE CUDA CUDA_RUNTIME_LIBRARY Shared
    VERSION ${PROJECT_VERSION} SOVERSION ${BSR_SOVERSION} LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/backend.map
    INSTALL_RPATH_USE_LINK_PATH ON)   # installed, it still finds the toolkit's libraries
  # exports bsr_cuda_backend_attach only; every host function it calls must
  # come through the table (no undefined symbol left for the linker to find)
  target_link_options(bsrsolve_cuda PRIVATE "LINKER:--version-script=${PROJECT_SOURCE_DIR}/cmake/backend.map"
                      "LINKER:--no-undefined")
  target_sources(bsrsolve_shared PRIVATE ${PROJECT_SOURCE_DIR}/src/cudaload/cuda_load.c)
  target_include_directories(bsrsolve_shared PRIVATE ${_backend_includes})
  target_compile_definitions(bsrsolve_shared PRIVATE BSR_HAVE_CUDA=1 BSR_CUDA_TABLES="${BSR_CUDA_TABLES}"
    BSR_CUDA_BACKEND_FILE="$<TARGET_SONAME_FILE_NAME:bsrsolve_cuda>")
  # bsrsolve's dependencies but CUDA's (the archive itself is not linked:
  # its device objects are what the backend holds)
  get_target_property(_deps bsrsolve INTERFACE_LINK_LIBRARIES)
  list(FILTER _deps EXCLUDE REGEX "^CUDA::")
  find_package(Threads REQUIRED)
  target_link_libraries(bsrsolve_shared PRIVATE ${_deps} Threads::Threads ${CMAKE_DL_LIBS})
  set_target_properties(bsrsolve_shared PROPERTIES LINKER_LANGUAGE C)
  add_dependencies(bsrsolve_shared bsrsolve_cuda)
  install(TARGETS bsrsolve_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
else()
  target_link_libraries(bsrsolve_shared PRIVATE bsrsolve)
endif()
target_include_directories(bsrsolve_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(bsrsolve_shared PROPERTIES
  OUTPUT_NAME bsrsolve EXPORT_NAME bsrsolve
  VERSION ${PROJECT_VERSION} SOVERSION ${BSR_SOVERSION}
  INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(bsrsolve_cli PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

# It exports the public API and nothing else: a linker version script lists
# the functions declared in the public headers (cmake/exports.cmake reads
# them at build time, so it follows the headers), everything else is local.
# The library's internal functions (ilu_factor, gen_args_parse, ...) then
# neither clash with a program's own functions of the same name nor get
# replaced by them; the CLI and the tests link the static library.
file(GLOB BSR_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/bsrsolve.h
     ${PROJECT_SOURCE_DIR}/include/bsrsolve/*.h ${PROJECT_SOURCE_DIR}/include/bsrsolve_mpi.h)
set(BSR_EXPORTS_MAP ${CMAKE_CURRENT_BINARY_DIR}/bsrsolve.map)
add_custom_command(OUTPUT ${BSR_EXPORTS_MAP}
  COMMAND ${CMAKE_COMMAND} -DINCLUDE=${PROJECT_SOURCE_DIR}/include -DWITH_MPI=${BSR_HAVE_MPI}
          -DOUT=${BSR_EXPORTS_MAP} -P ${CMAKE_CURRENT_LIST_DIR}/exports.cmake
  DEPENDS ${BSR_PUBLIC_HEADERS} ${CMAKE_CURRENT_LIST_DIR}/exports.cmake
  COMMENT "Listing the public functions for libbsrsolve.so's exports" VERBATIM)
target_sources(bsrsolve_shared PRIVATE ${BSR_EXPORTS_MAP})
set_target_properties(bsrsolve_shared PROPERTIES LINK_DEPENDS ${BSR_EXPORTS_MAP})
target_link_options(bsrsolve_shared PRIVATE "LINKER:--version-script=${BSR_EXPORTS_MAP}")
# lld refuses a version script naming a symbol the library lacks
include(CheckLinkerFlag)
check_linker_flag(C "LINKER:--undefined-version" BSR_LD_UNDEFINED_VERSION)
if(BSR_LD_UNDEFINED_VERSION)
  target_link_options(bsrsolve_shared PRIVATE "LINKER:--undefined-version")
endif()

set(BSR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bsrsolve)
install(TARGETS bsrsolve_shared EXPORT bsrsolveTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS bsrsolve_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT bsrsolveTargets NAMESPACE bsrsolve:: DESTINATION ${BSR_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/bsrsolveConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/bsrsolveConfig.cmake INSTALL_DESTINATION ${BSR_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/bsrsolveConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/bsrsolveConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/bsrsolveConfigVersion.cmake
        DESTINATION ${BSR_CMAKE_DIR})

# pkg-config: Libs.private lists what a static link needs (libbsrsolve.so
# records its dependencies itself).
function(bsr_pc_libs out)
  set(flags "")
  foreach(lib ${ARGN})
    get_filename_component(dir ${lib} DIRECTORY)
    get_filename_component(name ${lib} NAME_WE)
    string(REGEX REPLACE "^lib" "" name ${name})
    if(NOT dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
      list(APPEND flags "-L${dir}")
    endif()
    list(APPEND flags "-l${name}")
  endforeach()
  list(REMOVE_DUPLICATES flags)
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()
set(_bsr_pc_deps ${UMFPACK_LIBRARY} ${AMD_LIBRARY} ${METIS_LIBRARY} ${SUITESPARSECONFIG_LIBRARY} ${LAPACK_LIBRARY})
if(ZLIB_FOUND)
  list(APPEND _bsr_pc_deps ${ZLIB_LIBRARIES})
endif()
bsr_pc_libs(BSR_PC_LIBS_PRIVATE ${_bsr_pc_deps})
if(BSR_HAVE_CUDA)
  string(APPEND BSR_PC_LIBS_PRIVATE
         " -L${CUDAToolkit_LIBRARY_DIR} -lcusparse -lcublas -lcudart -lstdc++")
endif()
string(APPEND BSR_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS} -lm")
file(RELATIVE_PATH BSR_PC_PREFIX
     ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" BSR_PC_PREFIX "${BSR_PC_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/bsrsolve.pc.in ${CMAKE_CURRENT_BINARY_DIR}/bsrsolve.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/bsrsolve.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
