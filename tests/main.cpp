// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// doctest's main, compiled once for every test program.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
