# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The Debian packages texpr's test suite uses, checked before anything is built (TEXPR_INSTALL_TEST_DEPENDENCIES,
# ON in the test preset): missing ones are installed when configure runs as root with apt-get (as CI does), else
# configure stops printing the one apt-get line that installs them. On a machine without dpkg nothing is checked
# and each find_* below names the package it wanted.
#
# One line per package: the package, then what uses it. Optional ones (a test skips without it) are listed too,
# so that the README's test command runs the whole suite on a fresh machine.
set(_texpr_test_packages
  "doctest-dev|every test program (doctest/doctest.h)"
  "clang|the test build (clang++ with ASan and UBSan) and the compile-failure snippets"
  "libbenchmark-dev|bench/ (Google Benchmark)"
  "libeigen3-dev|the Eigen interop tests and benchmark peers"
  "libopenblas-dev|the OpenBLAS benchmark peer"
  "liblapack-dev|texpr/linalg.hpp's host rows (LAPACK), in the registry checks and the linalg tests"
  "libdlpack-dev|the DLPack interop tests"
  "python3-numpy|fixtures and the NumPy round trips of .npy/.npz"
  "zlib1g-dev|np.savez_compressed archives (tx::load_npz)"
  "nlohmann-json3-dev|safetensors files (texpr/interop/safetensors.hpp parses their JSON header with it)"
  "doxygen|the API reference check (target docs)"
  "libopenmpi-dev|the MPI data-parallel tests"
  "openmpi-bin|mpiexec for the data-parallel example")

function(texpr_check_test_dependencies)
  find_program(_dpkg_query dpkg-query)
  if(NOT _dpkg_query)
    message(STATUS "texpr: no dpkg-query; not checking Debian packages (see cmake/test_dependencies.cmake)")
    return()
  endif()
  set(_missing "")
  foreach(_entry IN LISTS _texpr_test_packages)
    string(REPLACE "|" ";" _fields "${_entry}")
    list(GET _fields 0 _pkg)
    list(GET _fields 1 _why)
    execute_process(COMMAND "${_dpkg_query}" -W "-f=\${Status}" "${_pkg}"
                    OUTPUT_VARIABLE _status ERROR_QUIET RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0 OR NOT _status MATCHES "install ok installed")
      list(APPEND _missing "${_pkg}")
      message(STATUS "texpr: missing Debian package ${_pkg}: ${_why}")
    endif()
  endforeach()
  if(NOT _missing)
    return()
  endif()
  list(JOIN _missing " " _list)
  find_program(_apt_get apt-get)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT _apt_get OR NOT _uid STREQUAL "0")
    message(FATAL_ERROR
      "texpr: the test suite needs Debian packages that are not installed. Install them with\n"
      "  sudo apt-get install -y ${_list}\n"
      "and run the command again (or configure with -DTEXPR_INSTALL_TEST_DEPENDENCIES=OFF to build what the "
      "machine has).")
  endif()
  message(STATUS "texpr: installing ${_list} (apt-get, as root)")
  set(ENV{DEBIAN_FRONTEND} noninteractive)
  execute_process(COMMAND "${_apt_get}" update -qq RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    execute_process(COMMAND "${_apt_get}" install -y -qq ${_missing} RESULT_VARIABLE _rc OUTPUT_QUIET)
  endif()
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "texpr: apt-get install -y ${_list} failed (exit ${_rc}); run it by hand and try again")
  endif()
endfunction()

texpr_check_test_dependencies()
