# SPDX-License-Identifier: BSD-3-Clause
# A client plugin's switch BSR_<NAME> (AUTO, ON or OFF; OFF by default under
# add_subdirectory: a consumer of the library builds no plugin unless it asks
# for one), with its documentation string.
function(bsr_plugin_option name doc)
  set(_default AUTO)
  if(NOT PROJECT_IS_TOP_LEVEL)
    set(_default OFF)
  endif()
  set(BSR_${name} ${_default} CACHE STRING "${doc}: AUTO, ON or OFF")
  set_property(CACHE BSR_${name} PROPERTY STRINGS AUTO ON OFF)
endfunction()

# Stops configuring plugin NAME (a macro: its return() leaves the calling
# file) for the reason why: an error when it was asked for (BSR_<NAME>=ON),
# else a status message; `what` names the plugin in the message.
macro(bsr_plugin_skip name what why)
  if(BSR_${name} STREQUAL "ON")
    message(FATAL_ERROR "BSR_${name}=ON but ${why}")
  endif()
  message(STATUS "bsrsolve: ${what} plugin skipped: ${why}")
  return()
endmacro()
