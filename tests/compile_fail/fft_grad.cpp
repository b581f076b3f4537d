// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::grad through a transform: no complex gradients yet, so the first complex node met is the error (the adjoint
// transforms come with complex gradients). The twin differentiates the same loss without the fft.
// expected-error: texpr: tx::grad does not differentiate through complex dtypes yet
// expected-error: no_complex_gradient<texpr::op::abs, texpr::dtype::complex64>
// expected-errors: 1
#include <texpr/fft.hpp>
namespace tx = texpr;
struct w_tag {};
int main() {
  tx::tensor<float, 1> w({8});
  auto p = tx::param<w_tag>(w);
#ifdef TEXPR_KO
  auto g = tx::grad(tx::sum(tx::abs(tx::fft::fft(p))), p);
#else
  auto g = tx::grad(tx::sum(tx::abs(p)), p);
#endif
  (void)g;
  return 0;
}
