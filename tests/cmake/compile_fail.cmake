# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# texpr_compile_fail_tests(PREFIX <p> COMPILER <path> SNIPPETS <files...> [PCH <pch>] [EXTRA_INCLUDE_DIRS <dirs...>])
#
# Registers the compile-failure snippets of one directory for one compiler (protocol: compile_check.cmake):
#   compile_fail.<p><name>.<compiler>.ko   each snippet with TEXPR_KO must be rejected with its expected diagnostics;
#   compile_fail.<p>ok_twins.<compiler>    every snippet's compiling twin (TEXPR_KO undefined), all in one unit, each
#                                          in its own namespace: parsing texpr once instead of once per twin (nvcc:
#                                          about 20 s a twin); twins built with flags (`// compile-flags-ok:`) in
#                                          one unit per set of flags, ok_twins_<flags>;
#   compile_fail.<p><name>.<compiler>.ok   alone, for a snippet that cannot share a unit: one that defines a macro,
#                                          declares a template at file scope (a specialisation of texpr's) or
#                                          includes a file by a relative path (and the only snippet of a call).
function(texpr_compile_fail_tests)
  cmake_parse_arguments(A "" "PREFIX;COMPILER;PCH" "SNIPPETS;EXTRA_INCLUDE_DIRS" ${ARGN})
  get_filename_component(_cxx_name "${A_COMPILER}" NAME)
  set(_script "${PROJECT_SOURCE_DIR}/tests/cmake/compile_check.cmake")
  set(_common -DCOMPILER=${A_COMPILER} "-DPCH=${A_PCH}" -DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include)
  if(A_EXTRA_INCLUDE_DIRS)
    list(JOIN A_EXTRA_INCLUDE_DIRS "|" _dirs)
    list(APPEND _common "-DEXTRA_INCLUDE_DIRS=${_dirs}")
  endif()
  set(_groups "")  # one unit of twins per set of twin flags (`// compile-flags-ok:`), named by them
  set(_ext "")
  foreach(_snippet IN LISTS A_SNIPPETS)
    get_filename_component(_name "${_snippet}" NAME_WE)
    get_filename_component(_ext "${_snippet}" LAST_EXT)
    add_test(NAME compile_fail.${A_PREFIX}${_name}.${_cxx_name}.ko
      COMMAND "${CMAKE_COMMAND}" ${_common} -DSOURCE=${_snippet} -DMODE=ko -P "${_script}")
    file(STRINGS "${_snippet}" _alone REGEX "^(#define|#undef|template|#include \")")
    if(_alone OR A_SNIPPETS STREQUAL _snippet)
      add_test(NAME compile_fail.${A_PREFIX}${_name}.${_cxx_name}.ok
        COMMAND "${CMAKE_COMMAND}" ${_common} -DSOURCE=${_snippet} -DMODE=ok -P "${_script}")
    else()
      file(STRINGS "${_snippet}" _flags REGEX "^// compile-flags-ok: ")
      string(REPLACE "// compile-flags-ok: " "" _flags "${_flags}")
      # Never an empty name: an empty list element is one foreach skips (so the host snippets' twins, which have no
      # flags, had been left untested).
      string(MAKE_C_IDENTIFIER "x_${_flags}" _group)
      string(REGEX REPLACE "_+$" "" _group "${_group}")
      list(APPEND _groups "${_group}")
      list(APPEND _members_${_group} "${_snippet}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES _groups)
  foreach(_group IN LISTS _groups)
    list(JOIN _members_${_group} "|" _sources)
    string(REGEX REPLACE "^x_*" "" _suffix "${_group}")
    if(_suffix)
      set(_suffix "_${_suffix}")  # compile_fail.cuda.ok_twins_arch_sm_90.nvcc
    endif()
    string(REPLACE "." "_" _tag "${A_PREFIX}${_cxx_name}${_suffix}")
    add_test(NAME compile_fail.${A_PREFIX}ok_twins${_suffix}.${_cxx_name}
      COMMAND "${CMAKE_COMMAND}" ${_common} "-DSOURCES=${_sources}" -DMODE=ok
              -DSOURCE=${CMAKE_CURRENT_BINARY_DIR}/ok_twins_${_tag}${_ext} -P "${_script}")
  endforeach()
endfunction()
