// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensors are never copied implicitly: copy construction is deleted, and the diagnostic shows the hint (clone()).
// expected-error: deleted
// expected-error: copy explicitly with t.clone\(\)
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 1> a({3});
#ifdef TEXPR_KO
  tx::tensor<float, 1> b = a;
#else
  tx::tensor<float, 1> b = a.clone();
#endif
  return static_cast<int>(b.size());
}
