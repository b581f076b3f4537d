# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fails when single_include/texpr/texpr.hpp differs from what tools/amalgamate.py generates from include/.
# Usage: cmake -DSOURCE_DIR=<repo> -DPYTHON=<python3> -DREGENERATE=<command> -P check_single_include.cmake
execute_process(COMMAND "${PYTHON}" "${SOURCE_DIR}/tools/amalgamate.py" --check RESULT_VARIABLE _rc OUTPUT_VARIABLE _out
                ERROR_VARIABLE _out)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "single_include/texpr/texpr.hpp is stale (${_out}); regenerate every generated file with `${REGENERATE}`")
endif()
message(STATUS "single_include/texpr/texpr.hpp matches include/")
