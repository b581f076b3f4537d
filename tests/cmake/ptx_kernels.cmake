# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# What the PTX checks (check_ptx.cmake, check_ptx_broadcast.cmake) share: compiling a source to PTX, splitting the
# PTX into its kernels, and the failure messages. Needs COMPILER (nvcc), SOURCE and INCLUDE_DIR.

# Compiles SOURCE for arch into file, and sets <out> to the PTX text.
function(ptx_compile arch file out)
  execute_process(
    COMMAND "${COMPILER}" -std=c++20 --expt-relaxed-constexpr -ptx -arch=${arch} -I${INCLUDE_DIR} ${SOURCE} -o ${file}
    RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "nvcc -ptx -arch=${arch} failed:\n${_err}")
  endif()
  file(READ "${file}" _ptx)
  set(${out} "${_ptx}" PARENT_SCOPE)
endfunction()

# Sets <out> to the list of the PTX's kernel names, and <out>_<i> to kernel i's body: each kernel's text runs from
# its ".entry" to the next one (or the end). PTX is full of [ ], which CMake lists do not split inside, so this
# steps with string(FIND).
function(ptx_split_kernels ptx out)
  set(_names "")
  set(_i 0)
  set(_rest "${ptx}")
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
    string(REGEX MATCH "^[A-Za-z0-9_]*" _name "${_part}")
    list(APPEND _names "${_name}")
    set(${out}_${_i} "${_part}" PARENT_SCOPE)
    math(EXPR _i "${_i} + 1")
  endwhile()
  set(${out} "${_names}" PARENT_SCOPE)
endfunction()

# Fails unless body contains the regex pattern: kernel name misses what.
function(ptx_require body pattern name what)
  if(NOT body MATCHES "${pattern}")
    message(FATAL_ERROR "${name} has no ${what} (${pattern})")
  endif()
endfunction()

# Fails when body uses local memory (state that left registers: why).
function(ptx_forbid_local body name why)
  if(body MATCHES "(ld|st)\\.local")
    message(FATAL_ERROR "${name} uses local memory (${CMAKE_MATCH_0}): ${why}")
  endif()
endfunction()

# Fails when count is below least: expected at least <least> <what> in the PTX.
function(ptx_at_least count least what)
  if(count LESS least)
    message(FATAL_ERROR "expected at least ${least} ${what} in the PTX, found ${count}")
  endif()
endfunction()
