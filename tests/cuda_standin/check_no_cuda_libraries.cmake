# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fails when PROGRAM's dynamic dependencies (ldd) include libcudart, libcublas or libcuda.
execute_process(COMMAND ldd "${PROGRAM}" OUTPUT_VARIABLE _deps ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "ldd ${PROGRAM} failed (${_rc}): ${_err}")
endif()
if(_deps MATCHES "lib(cudart|cublas|cublasLt|cuda)\\.so")
  message(FATAL_ERROR "${PROGRAM} links a CUDA library it must not need:\n${_deps}")
endif()
message(STATUS "${PROGRAM} links no CUDA library:\n${_deps}")
