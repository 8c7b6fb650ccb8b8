# SPDX-License-Identifier: BSD-3-Clause
# bsr_python_extension(TARGET LIB): the extension module bsrsolve._core
# (bsrsolve/_core.c) as the CMake target TARGET, linked with the library
# target LIB.  Needs find_package(Python ... Development.Module) first.  Used
# by python/CMakeLists.txt (the wheel) and tests/python.cmake (the ctest).
function(bsr_python_extension target lib)
  Python_add_library(${target} MODULE WITH_SOABI ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/bsrsolve/_core.c)
  # PyInit__core is the one symbol it exports (PyMODINIT_FUNC)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME _core C_STANDARD 11 C_VISIBILITY_PRESET hidden)
  target_link_libraries(${target} PRIVATE ${lib})
endfunction()
