// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// doctest's implementation, compiled once for every test program (tests/main.cpp and tests/cuda/main.cpp, MPI's
// tests/dist/main.cpp, only define main).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
