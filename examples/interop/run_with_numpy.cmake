# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# NumPy writes the dataset, the example trains on it and saves weights, NumPy loads them and checks them.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
foreach(_step make train check)
  if(_step STREQUAL "train")
    execute_process(COMMAND "${EXAMPLE}" "${WORK}/x.npy" "${WORK}/y.npy" "${WORK}" RESULT_VARIABLE _rc)
  else()
    execute_process(COMMAND "${PYTHON}" "${SCRIPT}" ${_step} "${WORK}" RESULT_VARIABLE _rc)
  endif()
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "interop example with NumPy: step '${_step}' failed (${_rc})")
  endif()
endforeach()
