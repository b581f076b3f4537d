// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Randomized differential tests on float graphs (see differential.hpp).
#include "differential.hpp"

TEXPR_DIFFERENTIAL_TEST(float, 100)
