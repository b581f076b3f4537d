// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Evaluating exp of an int32 tensor on host: exp has no integer kernel.
// expected-error: texpr: no kernel for this node on this backend
// expected-errors: 1
// expected-error: no_kernel<texpr::op::exp, texpr::dtype::int32, texpr::host>
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<std::int32_t, 1> a({3});
#ifdef TEXPR_KO
  tx::tensor<std::int32_t, 1> r = tx::exp(a);
#else
  tx::tensor<float, 1> r = tx::exp(tx::cast<float>(a));
#endif
  return static_cast<int>(r.size());
}
