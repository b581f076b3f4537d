// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The mean of an integer tensor is not registered: cast to a floating dtype first. On the host the hint names only
// that remedy (not tx::to_host, which applies on cuda), and the mistake gives one error.
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::mean, texpr::dtype::int32, texpr::host>
// expected-error: tx::cast<float>
// expected-errors: 1
// unexpected: to_host
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<std::int32_t, 1> a({3}, {1, 2, 4});
#ifdef TEXPR_KO
  return static_cast<int>(tx::mean(a).item());
#else
  return static_cast<int>(tx::mean(tx::cast<double>(a)).item());
#endif
}
