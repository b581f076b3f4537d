# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fails when docs/support_matrix.md or README.md's copy (between the support-matrix markers) differs from
# what the registries generate. Regenerate with the command passed as REGENERATE (the `regenerate` target).
execute_process(COMMAND "${GENERATOR}" OUTPUT_VARIABLE _generated RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "support matrix generator failed")
endif()
file(READ "${SOURCE_DIR}/docs/support_matrix.md" _doc)
if(NOT _doc STREQUAL _generated)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/support_matrix.generated.md" "${_generated}")
  message(FATAL_ERROR "docs/support_matrix.md differs from the registries; regenerate it with `${REGENERATE}` "
                      "(generated copy: ${CMAKE_CURRENT_BINARY_DIR}/support_matrix.generated.md)")
endif()
file(READ "${SOURCE_DIR}/README.md" _readme)
string(FIND "${_readme}" "${_generated}" _pos)
if(_pos EQUAL -1)
  message(FATAL_ERROR "README.md's support matrix differs from the registries; regenerate it with `${REGENERATE}`")
endif()
message(STATUS "support matrix matches the registries")
