# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# cmake -DBUILD_DIR=<configured texpr build> -DSOURCE_DIR=<texpr source> -DPREFIX=<dir> -P install.cmake
# Installs texpr into a fresh PREFIX and checks the layout a package consumer relies on.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
foreach(f include/texpr/texpr.hpp include/texpr/core/config.hpp
          share/cmake/texpr/texprConfig.cmake share/cmake/texpr/texprConfigVersion.cmake
          share/cmake/texpr/texprTargets.cmake)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "missing from the install: ${f}")
  endif()
endforeach()
# Every header of the source tree is installed, and nothing else lands under include/.
file(GLOB_RECURSE _src RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/texpr/*")
file(GLOB_RECURSE _dst RELATIVE "${PREFIX}/include" "${PREFIX}/include/*")
if(NOT _src STREQUAL _dst)
  message(FATAL_ERROR "installed headers differ from include/:\n  source: ${_src}\n  installed: ${_dst}")
endif()
# The package must not leak the build tree (it would not be relocatable).
file(GLOB_RECURSE _cmake_files "${PREFIX}/share/cmake/texpr/*.cmake")
foreach(f IN LISTS _cmake_files)
  file(READ "${f}" _text)
  string(FIND "${_text}" "${BUILD_DIR}" _at)
  if(NOT _at EQUAL -1)
    message(FATAL_ERROR "${f} names the build directory ${BUILD_DIR}")
  endif()
endforeach()
file(GLOB_RECURSE _installed RELATIVE "${PREFIX}" "${PREFIX}/*")
list(LENGTH _installed _n)
message(STATUS "installed ${_n} files into ${PREFIX}")
