// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// max, min, argmax and argmin of a complex tensor are errors (as in PyTorch), naming the op and the dtype; one error.
// expected-error: texpr: complex numbers have no order
// expected-error: complex_has_no_order<texpr::op::argmax, texpr::dtype::complex128>
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<std::complex<double>, 1> z({2}, {{1, 2}, {-1, 0}});
#ifdef TEXPR_KO
  return static_cast<int>(tx::argmax(z).item());
#else
  return static_cast<int>(tx::argmax(tx::abs(z)).item());
#endif
}
