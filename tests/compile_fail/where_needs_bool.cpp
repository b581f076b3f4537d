// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::where needs a bool condition.
// expected-error: tx::where needs a bool condition
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 1> a({3});
#ifdef TEXPR_KO
  tx::tensor<float, 1> r = tx::where(a, a, 0);
#else
  tx::tensor<float, 1> r = tx::where(a > 0, a, 0);
#endif
  return static_cast<int>(r.size());
}
