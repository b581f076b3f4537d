# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Looks for a working nvcc with check_language(CUDA); leaves CMAKE_CUDA_COMPILER empty when there is none.
include(CheckLanguage)
if(CMAKE_CUDA_COMPILER)
  # check_language() trusts a CMAKE_CUDA_COMPILER given with -D (or left in a cache copied from another
  # machine) without running it. Verify that it exists, so a machine without nvcc still configures host-only.
  if(IS_ABSOLUTE "${CMAKE_CUDA_COMPILER}")
    set(_texpr_nvcc "${CMAKE_CUDA_COMPILER}")
  else()
    find_program(_texpr_nvcc NAMES "${CMAKE_CUDA_COMPILER}" NO_CACHE)
  endif()
  if(NOT _texpr_nvcc OR NOT EXISTS "${_texpr_nvcc}" OR IS_DIRECTORY "${_texpr_nvcc}")
    message(WARNING "texpr: CMAKE_CUDA_COMPILER=${CMAKE_CUDA_COMPILER} does not exist; ignoring it")
    set(CMAKE_CUDA_COMPILER "")  # shadows the cache entry in texpr's scope only
  endif()
  unset(_texpr_nvcc)
else()
  # check_language() (CMake 3.25) probes in a sub-project that does not see -DCMAKE_CUDA_HOST_COMPILER and then
  # overwrites that entry with the sub-project's empty one, so nvcc would silently use its default host compiler.
  # CUDAHOSTCXX, which the sub-project and enable_language() both read, carries the choice across.
  if(CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX})
    set(ENV{CUDAHOSTCXX} "${CMAKE_CUDA_HOST_COMPILER}")
  endif()
  check_language(CUDA)
endif()
