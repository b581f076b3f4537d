// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Randomized differential tests on std::int32_t graphs (see differential.hpp).
#include "differential.hpp"

TEXPR_DIFFERENTIAL_TEST(std::int32_t, 300)
