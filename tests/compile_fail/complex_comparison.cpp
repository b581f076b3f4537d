// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Complex numbers have no order (as in PyTorch): a comparison of complex tensors is an error where it is written,
// naming the op and the dtype, and pointing at the real views to compare instead; one error.
// expected-error: texpr: complex numbers have no order
// expected-error: complex_has_no_order<texpr::op::less, texpr::dtype::complex64>
// expected-error: instead: tx::real
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<std::complex<float>, 1> z({2}, {{1, 2}, {-1, 0}});
  tx::tensor<std::complex<float>, 1> w({2}, {{0, 1}, {2, 2}});
#ifdef TEXPR_KO
  tx::tensor<bool, 1> m = z < w;
#else
  tx::tensor<bool, 1> m = tx::real(z) < tx::real(w);
#endif
  return static_cast<int>(m.size());
}
