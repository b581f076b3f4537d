// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A float tensor plus a double tensor: no implicit promotion.
// expected-error: operands have different dtypes
// expected-errors: 1
// expected-error: tx::cast
// expected-error: mixed_dtypes<texpr::dtype::float32, texpr::dtype::float64>
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 1> a({2});
  tx::tensor<double, 1> b({2});
#ifdef TEXPR_KO
  auto e = a + b;
#else
  auto e = a + tx::cast<float>(b);
#endif
  return static_cast<int>(tx::sum(e).item());
}
