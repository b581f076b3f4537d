// Randomized differential tests on float graphs (see differential.hpp).
#include "differential.hpp"

TEXPR_DIFFERENTIAL_TEST(float, 100)
