# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# TEXPR_TEST_SINGLE_HEADER=ON: texpr::texpr's build interface becomes single_include/ plus one-line shims,
# so texpr's own tests and examples compile against the amalgamation alone. Installs are unaffected.
# A test that includes a single header (e.g. <texpr/tensor/view.hpp>) finds a shim that includes
# <texpr/texpr.hpp> from single_include/; include/ itself is not on the path.
set(_texpr_single "${PROJECT_SOURCE_DIR}/single_include")
if(NOT EXISTS "${_texpr_single}/texpr/texpr.hpp")
  message(FATAL_ERROR "TEXPR_TEST_SINGLE_HEADER: ${_texpr_single}/texpr/texpr.hpp is missing; "
                      "run python3 tools/amalgamate.py")
endif()
set(_texpr_shims "${PROJECT_BINARY_DIR}/single_header_shims")
file(REMOVE_RECURSE "${_texpr_shims}")
file(GLOB_RECURSE _texpr_real_headers RELATIVE "${PROJECT_SOURCE_DIR}/include" CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/include/texpr/*.hpp")
list(REMOVE_ITEM _texpr_real_headers "texpr/texpr.hpp")
foreach(_h IN LISTS _texpr_real_headers)
  file(CONFIGURE OUTPUT "${_texpr_shims}/${_h}"
       CONTENT "// Single-header test build: ${_h} comes from single_include/texpr/texpr.hpp.\n#include <texpr/texpr.hpp>\n")
endforeach()
target_include_directories(texpr INTERFACE $<BUILD_INTERFACE:${_texpr_single}> $<BUILD_INTERFACE:${_texpr_shims}>)
message(STATUS "texpr: tests and examples use single_include/texpr/texpr.hpp")

# The committed amalgamation must match the headers (CI also checks this with git diff).
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND AND (TEXPR_BUILD_TESTS OR TEXPR_BUILD_EXAMPLES))
  enable_testing()
  add_test(NAME single_header.up_to_date
    COMMAND "${Python3_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tools/amalgamate.py" --check)
endif()
