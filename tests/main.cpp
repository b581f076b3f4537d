// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host test programs' main: doctest's own, over the implementation in tests/doctest_impl.cpp.
#include <doctest/doctest.h>

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  return context.run();
}
