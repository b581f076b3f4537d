// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::grad does not differentiate through complex nodes yet: an error naming the node, not a wrong gradient.
// expected-error: texpr: tx::grad does not differentiate through complex dtypes yet
// expected-error: no_complex_gradient<texpr::op::abs, texpr::dtype::complex64>
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
struct w_tag {};
int main() {
  tx::tensor<float, 1> w({2}, {1, 2});
  auto p = tx::param<w_tag>(w);
#ifdef TEXPR_KO
  auto [d] = tx::eval_all(tx::grad(tx::sum(tx::abs(tx::make_complex(p, p * 2))), p));
#else
  auto [d] = tx::eval_all(tx::grad(tx::sum(tx::abs(p)), p));
#endif
  return static_cast<int>(d.size());
}
