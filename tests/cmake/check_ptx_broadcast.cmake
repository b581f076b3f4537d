# Compiles tests/cuda/ptx/broadcast_elementwise.cu to PTX and checks the broadcast elementwise kernels: the 32-bit
# instances (assign_strided over unsigned int) divide in 32 bits only (no div/rem .u64/.s64, which the 64-bit
# unravel needs per dimension) and keep their index in registers (no ld.local/st.local).
# Inputs: COMPILER (nvcc), SOURCE, INCLUDE_DIR, OUT (the .ptx to write).
execute_process(
  COMMAND "${COMPILER}" -std=c++20 --expt-relaxed-constexpr -ptx -arch=sm_90 -I${INCLUDE_DIR} ${SOURCE} -o ${OUT}
  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "nvcc -ptx failed:\n${_err}")
endif()
file(READ "${OUT}" _ptx)
set(_checked 0)
set(_rest "${_ptx}")
string(FIND "${_rest}" ".entry " _at)
while(NOT _at EQUAL -1)
  math(EXPR _from "${_at} + 7")
  string(SUBSTRING "${_rest}" ${_from} -1 _rest)
  string(FIND "${_rest}" ".entry " _at)
  if(_at EQUAL -1)
    set(_part "${_rest}")
  else()
    string(SUBSTRING "${_rest}" 0 ${_at} _part)
  endif()
  # assign_strided<T, R, Acc, I>: the 32-bit instances have I = unsigned int, mangled "j" as the last template
  # argument ("...jEEvPT_..."); the 64-bit ones have "l".
  if(NOT _part MATCHES "^(_Z[A-Za-z0-9_]*assign_strided[A-Za-z0-9_]*)")
    continue()
  endif()
  set(_name "${CMAKE_MATCH_1}")
  if(_part MATCHES "(ld|st)\\.local")
    message(FATAL_ERROR "${_name} uses local memory (${CMAKE_MATCH_0}): its index left registers")
  endif()
  if(_name MATCHES "jEEvPT_")
    math(EXPR _checked "${_checked} + 1")
    if(_part MATCHES "(div|rem)\\.[us]64")
      message(FATAL_ERROR "${_name} (32-bit indices) still divides in 64 bits (${CMAKE_MATCH_0})")
    endif()
  endif()
endwhile()
if(_checked LESS 2)
  message(FATAL_ERROR "expected at least 2 32-bit assign_strided kernels in the PTX, found ${_checked}")
endif()
message(STATUS "${_checked} 32-bit broadcast kernels: no 64-bit division, no local memory")
