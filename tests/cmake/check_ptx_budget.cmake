# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compiles SOURCE (examples/mlp/mlp.cu: the CUDA example's step, loop, placement report and capture) to PTX for
# sm_90 and counts its kernels: nvcc's time on a training TU grows with the kernels it compiles. Fails when there
# are more than MAX, or when a kernel that writes column sums is compiled for more than the one graph that needs it
# (the layers' delta; forward values never write column sums, and dlogits has its own row kernel).
# Inputs: COMPILER (nvcc), SOURCE, INCLUDE_DIR, OUT (the .ptx to write), MAX.

include("${CMAKE_CURRENT_LIST_DIR}/ptx_kernels.cmake")

ptx_compile(sm_90 "${OUT}" _ptx)
ptx_split_kernels("${_ptx}" _k)
list(LENGTH _k _count)
set(_sums 0)
foreach(_name IN LISTS _k)
  if(_name MATCHES "assign_rows_column_sums")
    math(EXPR _sums "${_sums} + 1")
  endif()
endforeach()
message(STATUS "${SOURCE}: ${_count} kernels (at most ${MAX}), ${_sums} writing column sums")
if(_count GREATER MAX)
  message(FATAL_ERROR "${SOURCE} compiles ${_count} kernels, more than the budget of ${MAX}")
endif()
if(NOT _sums EQUAL 1)
  message(FATAL_ERROR "expected 1 elementwise kernel writing column sums (the delta's), found ${_sums}")
endif()
