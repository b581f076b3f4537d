# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compiles tests/cuda/ptx/broadcast_elementwise.cu to PTX for sm_90 and sm_75 and checks the elementwise kernels:
#   - the 32-bit broadcast instances (assign_strided over unsigned int, and every assign_rows) divide in 32 bits only
#     (no div/rem .u64/.s64, which the 64-bit unravel needs per dimension) and keep their index in registers (no
#     ld.local/st.local);
#   - the rows kernels (assign_rows) read with 128-bit loads (ld.global.nc.v4) and write with 128-bit stores;
#   - the dense 16-bit kernels (assign_vectorized over half or bfloat16) read and write 16 bytes per thread, and
#     compute a * b - c (half) and a * b + c (bfloat16) on pairs (mul.rn / sub.rn / add.rn .f16x2 and .bf16x2)
#     and exp's results rounded in pairs (cvt.rn.f16x2.f32); for sm_75 half keeps its pairs and bfloat16 has no
#     bf16x2 instruction (it computes in float there).
# Inputs: COMPILER (nvcc), SOURCE, INCLUDE_DIR, OUT (the sm_90 .ptx to write; the sm_75 one gets the suffix .sm75).

include("${CMAKE_CURRENT_LIST_DIR}/ptx_kernels.cmake")

ptx_compile(sm_90 "${OUT}" _ptx90)
ptx_compile(sm_75 "${OUT}.sm75" _ptx75)

# sm_90: the broadcast kernels, and the 16-bit dense ones.
set(_strided 0)
set(_rows 0)
set(_dense16 0)
ptx_split_kernels("${_ptx90}" _k)
list(LENGTH _k _count)
math(EXPR _last "${_count} - 1")
foreach(_i RANGE ${_last})
  list(GET _k ${_i} _name)
  set(_part "${_k_${_i}}")
  # assign_strided<T, R, Acc, I>: the 32-bit instances have I = unsigned int, mangled "j" as the last template
  # argument ("...jEEvPT_..."); the 64-bit ones have "l". assign_rows takes its count as unsigned int always.
  if(_name MATCHES "assign_strided|assign_rows")
    ptx_forbid_local("${_part}" "${_name}" "its index left registers")
  endif()
  if((_name MATCHES "assign_strided" AND _name MATCHES "jEEvPT_") OR _name MATCHES "assign_rows")
    if(_part MATCHES "(div|rem)\\.[us]64")
      message(FATAL_ERROR "${_name} (32-bit indices) still divides in 64 bits (${CMAKE_MATCH_0})")
    endif()
  endif()
  if(_name MATCHES "assign_strided" AND _name MATCHES "jEEvPT_")
    math(EXPR _strided "${_strided} + 1")
  endif()
  if(_name MATCHES "assign_rows")
    math(EXPR _rows "${_rows} + 1")
    ptx_require("${_part}" "ld\\.global\\.nc\\.v4" "${_name}" "128-bit load")
    ptx_require("${_part}" "st\\.global\\.v4" "${_name}" "128-bit store")
  endif()
  # assign_vectorized<T, map_accessor<...>> with T half (mangled NS_4half) or bfloat16 (NS_8bfloat16).
  if(_name MATCHES "assign_vectorizedINS_(4half|8bfloat16)ENS_12map_accessor")
    set(_type "${CMAKE_MATCH_1}")
    math(EXPR _dense16 "${_dense16} + 1")
    ptx_require("${_part}" "ld\\.global\\.nc\\.v4" "${_name}" "128-bit load")
    ptx_require("${_part}" "st\\.global\\.v4" "${_name}" "128-bit store")
    if(_name MATCHES "op3exp")
      ptx_require("${_part}" "cvt\\.rn\\.f16x2\\.f32" "${_name}" "rounding in pairs")
    elseif(_type STREQUAL "4half")
      ptx_require("${_part}" "mul\\.rn\\.f16x2" "${_name}" "half2 multiply")
      ptx_require("${_part}" "sub\\.rn\\.f16x2" "${_name}" "half2 subtract")
    else()
      ptx_require("${_part}" "mul\\.rn\\.bf16x2" "${_name}" "bfloat162 multiply")
      ptx_require("${_part}" "add\\.rn\\.bf16x2" "${_name}" "bfloat162 add")
    endif()
  endif()
endforeach()
ptx_at_least(${_strided} 2 "32-bit assign_strided kernels")
ptx_at_least(${_rows} 3 "assign_rows kernels")
if(NOT _dense16 EQUAL 3)
  message(FATAL_ERROR "expected 3 dense 16-bit map kernels in the PTX, found ${_dense16}")
endif()

# sm_75: half keeps its pairs; bfloat16 computes in float (its pair instructions need sm_80).
set(_dense16_75 0)
ptx_split_kernels("${_ptx75}" _k)
list(LENGTH _k _count)
math(EXPR _last "${_count} - 1")
foreach(_i RANGE ${_last})
  list(GET _k ${_i} _name)
  set(_part "${_k_${_i}}")
  if(_name MATCHES "assign_vectorizedINS_(4half|8bfloat16)ENS_12map_accessor")
    set(_type "${CMAKE_MATCH_1}")
    math(EXPR _dense16_75 "${_dense16_75} + 1")
    ptx_require("${_part}" "ld\\.global\\.nc\\.v4" "${_name} (sm_75)" "128-bit load")
    if(_type STREQUAL "8bfloat16" AND _part MATCHES "bf16x2")
      message(FATAL_ERROR "${_name} (sm_75) uses a bf16x2 instruction, which needs sm_80")
    endif()
    if(_type STREQUAL "4half" AND NOT _name MATCHES "op3exp")
      ptx_require("${_part}" "mul\\.rn\\.f16x2" "${_name} (sm_75)" "half2 multiply")
    endif()
  endif()
endforeach()
if(NOT _dense16_75 EQUAL 3)
  message(FATAL_ERROR "expected 3 dense 16-bit map kernels in the sm_75 PTX, found ${_dense16_75}")
endif()
message(STATUS "${_strided} 32-bit strided and ${_rows} rows broadcast kernels: 32-bit division, no local memory; "
               "rows and ${_dense16} 16-bit dense kernels: 128-bit loads and stores, 16-bit pairs (sm_90, sm_75)")
