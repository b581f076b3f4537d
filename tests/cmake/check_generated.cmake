# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fails when a generated document differs from what its generator prints now (regenerate it with the command below).
# Usage: cmake -DGENERATOR=<program> [-DARGS=<argument>] -DFILE=<repo file> -DREGENERATE=<command> -P check_generated.cmake
execute_process(COMMAND "${GENERATOR}" ${ARGS} OUTPUT_VARIABLE _generated RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${GENERATOR} failed")
endif()
file(READ "${FILE}" _doc)
if(NOT _doc STREQUAL _generated)
  get_filename_component(_name "${FILE}" NAME)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/${_name}.generated" "${_generated}")
  message(FATAL_ERROR "${FILE} differs from what ${GENERATOR} generates; regenerate it with `${REGENERATE}` "
                      "(generated copy: ${CMAKE_CURRENT_BINARY_DIR}/${_name}.generated)")
endif()
message(STATUS "${FILE} matches its generator")
