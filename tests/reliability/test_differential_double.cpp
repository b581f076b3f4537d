// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Randomized differential tests on double graphs (see differential.hpp).
#include "differential.hpp"

TEXPR_DIFFERENTIAL_TEST(double, 200)
