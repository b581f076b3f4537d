// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::cast from complex to real is an error (it would discard the imaginary part; NumPy warns): say which real part.
// expected-error: texpr: complex to real is not a cast
// expected-error: take tx::real
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<std::complex<float>, 1> z({2}, {{1, 2}, {-1, 0}});
#ifdef TEXPR_KO
  tx::tensor<float, 1> r = tx::cast<float>(z);
#else
  tx::tensor<float, 1> r = tx::real(z);
#endif
  return static_cast<int>(r.size());
}
