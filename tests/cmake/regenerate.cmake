# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Rewrites every generated file from what generates it; run it as `cmake --build <build dir> --target regenerate`.
# The docs.* CTest cases fail when one of these files is stale and name that command.
#   docs/support_matrix.md and README.md's copy   tests/tools/support_matrix.cpp (the registries)
#   docs/ops.md                                   tests/tools/support_matrix.cpp --ops (the op definitions)
#   docs/gradients.md                             tests/tools/gradient_rules.cpp (the gradient rules)
#   README.md's code samples and outputs          examples/readme/readme_samples.cpp (tools/update_readme.py)
#   single_include/texpr/texpr.hpp                tools/amalgamate.py
# Usage: cmake -DSOURCE_DIR=<repo> -DSUPPORT_MATRIX=<exe> -DGRADIENT_RULES=<exe> -DPYTHON=<python3>
#              [-DREADME_SAMPLES=<exe>] -P regenerate.cmake
function(_run out)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE _text RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "regenerate: `${ARGN}` failed (${_rc})")
  endif()
  set(${out} "${_text}" PARENT_SCOPE)
endfunction()

_run(_matrix "${SUPPORT_MATRIX}")
file(WRITE "${SOURCE_DIR}/docs/support_matrix.md" "${_matrix}")
file(READ "${SOURCE_DIR}/README.md" _readme)
set(_begin "<!-- support-matrix:begin -->\n")
set(_end "<!-- support-matrix:end -->")
string(FIND "${_readme}" "${_begin}" _b)
string(FIND "${_readme}" "${_end}" _e)
if(_b EQUAL -1 OR _e EQUAL -1 OR _e LESS _b)
  message(FATAL_ERROR "regenerate: README.md lacks the support-matrix markers")
endif()
string(LENGTH "${_begin}" _blen)
math(EXPR _from "${_b} + ${_blen}")
string(SUBSTRING "${_readme}" 0 ${_from} _head)
string(SUBSTRING "${_readme}" ${_e} -1 _tail)
file(WRITE "${SOURCE_DIR}/README.md" "${_head}${_matrix}${_tail}")

_run(_ops "${SUPPORT_MATRIX}" --ops)
file(WRITE "${SOURCE_DIR}/docs/ops.md" "${_ops}")
_run(_gradients "${GRADIENT_RULES}")
file(WRITE "${SOURCE_DIR}/docs/gradients.md" "${_gradients}")
if(README_SAMPLES)
  _run(_ignored "${PYTHON}" "${SOURCE_DIR}/tools/update_readme.py" --program "${README_SAMPLES}")
endif()
_run(_ignored "${PYTHON}" "${SOURCE_DIR}/tools/amalgamate.py")
message(STATUS "regenerated docs/support_matrix.md, docs/ops.md, docs/gradients.md, README.md, single_include/")
