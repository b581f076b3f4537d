// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A floating scalar with an integer tensor would truncate silently.
// expected-error: a floating scalar with an integer tensor
// expected-errors: 1
// expected-error: floating_scalar_with_integer_tensor<texpr::dtype::int32, double>
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<std::int32_t, 1> a({3});
#ifdef TEXPR_KO
  auto e = a * 2.5;
#else
  auto e = a * 2;
#endif
  return static_cast<int>(tx::sum(e).item());
}
