// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// item() needs a rank-0 expression.
// expected-error: item\(\) needs a rank-0 expression
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 2> a({2, 2});
#ifdef TEXPR_KO
  return static_cast<int>(a.item());
#else
  return static_cast<int>(tx::sum(a).item());
#endif
}
