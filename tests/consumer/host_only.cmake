# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# cmake -DCXX=<compiler> -DSOURCE=<consumer.cpp> -DINCLUDE_DIRS=<dir:dir> -P host_only.cmake
# A host-only consumer must need nothing but a C++20 compiler: its dependency list (-M) may name no
# CUDA, Thrust, CUB or cuBLAS header, whether it includes include/ or single_include/.
string(REPLACE ":" ";" INCLUDE_DIRS "${INCLUDE_DIRS}")
foreach(dir IN LISTS INCLUDE_DIRS)
  execute_process(COMMAND "${CXX}" -std=c++20 -M -I "${dir}" "${SOURCE}"
                  OUTPUT_VARIABLE deps ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${CXX} -M with ${dir} failed:\n${err}")
  endif()
  string(REGEX REPLACE "[ \t\r\n\\]+" ";" deps_list "${deps}")
  foreach(d IN LISTS deps_list)
    if(d MATCHES "/texpr/")
      continue()  # texpr's own headers, backend/cuda/registry.hpp included: those compile everywhere
    endif()
    if(d MATCHES "(cuda|thrust/|cub/|cublas|nvrtc)")
      message(FATAL_ERROR "host-only consumer reaches ${d} (with ${dir})")
    endif()
  endforeach()
  if(NOT deps MATCHES "texpr\\.hpp")
    message(FATAL_ERROR "dependency list without texpr.hpp; the check is broken:\n${deps}")
  endif()
endforeach()
message(STATUS "${CXX}: host consumer needs no CUDA header")
