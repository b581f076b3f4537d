# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# CTest cases that build tests/consumer/ every way users take texpr (TEXPR_BUILD_CONSUMER_TESTS=ON):
#   consumer.install                    cmake --install into a fresh prefix (fixture for the package cases)
#   consumer.host_only.<cxx>            a host consumer's dependency list names no CUDA header
#   consumer.<mode>.<cxx>               configure, build and run consumer.cpp with g++ and clang++ (with
#                                       texpr::linalg and texpr::fft but in single_header mode, where LAPACK is found)
#   consumer.<mode>.nvcc                compile consumer_cuda.cu with nvcc (never run), when nvcc exists: package,
#                                       subdirectory and single_header (fetchcontent adds texpr exactly as
#                                       subdirectory does, so its .cu case would repeat that one's 23 s of nvcc)
# Pattern: nlohmann/json's tests/cmake_*, CCCL's install fixture.
set(_texpr_consumer_src "${CMAKE_CURRENT_LIST_DIR}")
set(_texpr_consumer_bin "${PROJECT_BINARY_DIR}/consumer")
set(_texpr_consumer_prefix "${_texpr_consumer_bin}/prefix")

add_test(NAME consumer.install
  COMMAND "${CMAKE_COMMAND}" -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DPREFIX=${_texpr_consumer_prefix}
          -P "${_texpr_consumer_src}/install.cmake")
set_tests_properties(consumer.install PROPERTIES FIXTURES_SETUP texpr_installed)

set(_texpr_consumer_cxx "")
foreach(_cxx g++ clang++)
  find_program(_texpr_consumer_${_cxx} ${_cxx})
  if(_texpr_consumer_${_cxx})
    list(APPEND _texpr_consumer_cxx "${_texpr_consumer_${_cxx}}")
  endif()
endforeach()
if(NOT _texpr_consumer_cxx)
  set(_texpr_consumer_cxx "${CMAKE_CXX_COMPILER}")
endif()

set(_texpr_consumer_modes package subdirectory fetchcontent single_header)
# Where this configure found LAPACK, the package, subdirectory and fetchcontent consumers also use texpr::linalg and
# texpr::fft (the single header holds the umbrella only).
set(_texpr_consumer_families OFF)
if(TARGET texpr::linalg)
  set(_texpr_consumer_families ON)
endif()
foreach(_cxx IN LISTS _texpr_consumer_cxx)
  get_filename_component(_cxx_name "${_cxx}" NAME)
  add_test(NAME consumer.host_only.${_cxx_name}
    COMMAND "${CMAKE_COMMAND}" -DCXX=${_cxx} -DSOURCE=${_texpr_consumer_src}/consumer.cpp
            -DINCLUDE_DIRS=${PROJECT_SOURCE_DIR}/include:${PROJECT_SOURCE_DIR}/single_include
            -P "${_texpr_consumer_src}/host_only.cmake")
  foreach(_mode IN LISTS _texpr_consumer_modes)
    set(_bin "${_texpr_consumer_bin}/${_mode}-${_cxx_name}")
    set(_families ${_texpr_consumer_families})
    if(_mode STREQUAL "single_header")
      set(_families OFF)
    endif()
    add_test(NAME consumer.${_mode}.${_cxx_name}
      COMMAND "${CMAKE_CTEST_COMMAND}" --build-and-test "${_texpr_consumer_src}" "${_bin}"
              --build-generator "${CMAKE_GENERATOR}"
              --build-options -DCMAKE_CXX_COMPILER=${_cxx} -DTEXPR_CONSUMER_MODE=${_mode}
                              -DTEXPR_SOURCE_DIR=${PROJECT_SOURCE_DIR} -DCMAKE_PREFIX_PATH=${_texpr_consumer_prefix}
                              -DTEXPR_CONSUMER_FAMILIES=${_families}
              --test-command "${_bin}/consumer")
    if(_mode STREQUAL "package")
      set_tests_properties(consumer.${_mode}.${_cxx_name} PROPERTIES FIXTURES_REQUIRED texpr_installed)
    endif()
  endforeach()
endforeach()

# nvcc: only the .cu translation unit is built (the host part was proven above).
if(TEXPR_ENABLE_CUDA)
  include("${PROJECT_SOURCE_DIR}/cmake/find_cuda_compiler.cmake")
endif()
if(TEXPR_ENABLE_CUDA AND CMAKE_CUDA_COMPILER)
  set(_texpr_nvcc_modes ${_texpr_consumer_modes})
  list(REMOVE_ITEM _texpr_nvcc_modes fetchcontent)
  foreach(_mode IN LISTS _texpr_nvcc_modes)
    set(_bin "${_texpr_consumer_bin}/${_mode}-nvcc")
    add_test(NAME consumer.${_mode}.nvcc
      COMMAND "${CMAKE_CTEST_COMMAND}" --build-and-test "${_texpr_consumer_src}" "${_bin}"
              --build-generator "${CMAKE_GENERATOR}" --build-target consumer_cuda
              --build-options -DCMAKE_CUDA_COMPILER=${CMAKE_CUDA_COMPILER} -DTEXPR_CONSUMER_CUDA=ON
                              -DTEXPR_CONSUMER_MODE=${_mode} -DTEXPR_SOURCE_DIR=${PROJECT_SOURCE_DIR}
                              -DCMAKE_PREFIX_PATH=${_texpr_consumer_prefix})
    if(_mode STREQUAL "package")
      set_tests_properties(consumer.${_mode}.nvcc PROPERTIES FIXTURES_REQUIRED texpr_installed)
    endif()
  endforeach()
else()
  message(STATUS "texpr: no nvcc; the .cu consumer cases are skipped")
endif()
