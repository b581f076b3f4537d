// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Assigning a rank-2 expression to a rank-1 tensor: one error naming both ranks, no cascade.
// expected-error: the expression's rank differs from the destination's rank
// expected-error: rank_mismatch<texpr::diagnostic::expression_rank<2>, texpr::diagnostic::destination_rank<1>
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 2> a({2, 2});
#ifdef TEXPR_KO
  tx::tensor<float, 1> r = a * 2.0f;
#else
  tx::tensor<float, 1> r = tx::sum(a * 2.0f, 0);
#endif
  return static_cast<int>(r.size());
}
