# SPDX-License-Identifier: BSD-3-Clause
# The README's code blocks, extracted at configure time so that the examples
# users copy are built and run by the tests.
#   bsr_readme_blocks(LANG DIR EXT OUT): every ```LANG block of README.md
#   written to DIR/readme_<LANG>_<i>.EXT (i = 1, 2, ...); OUT is the list of
#   those files, in the README's order.  README.md becomes a configure
#   dependency of the calling directory.
function(bsr_readme_blocks lang dir ext out)
  file(READ ${PROJECT_SOURCE_DIR}/README.md _text)
  set(_fence "```${lang}\n")
  string(LENGTH "${_fence}" _skip)
  set(_files "")
  set(_i 1)
  while(TRUE)
    string(FIND "${_text}" "${_fence}" _start)
    if(_start EQUAL -1)
      break()
    endif()
    math(EXPR _start "${_start} + ${_skip}")
    string(SUBSTRING "${_text}" ${_start} -1 _text)
    string(FIND "${_text}" "```" _end)
    string(SUBSTRING "${_text}" 0 ${_end} _block)
    string(SUBSTRING "${_text}" ${_end} -1 _text)
    set(_file ${dir}/readme_${lang}_${_i}.${ext})
    file(WRITE ${_file} "${_block}")
    list(APPEND _files ${_file})
    math(EXPR _i "${_i} + 1")
  endwhile()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/README.md)
  set(${out} ${_files} PARENT_SCOPE)
endfunction()
