// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::require_on<tx::cuda> names the first node that cannot run there: exp of bool has no kernel anywhere.
// expected-error: static assertion failed with "texpr: no kernel for this node on this backend
// expected-errors: 1
// expected-error: no_kernel<Op, Dtype, texpr::cuda> \[with Op=texpr::op::exp, Dtype=texpr::dtype::boolean\]
#include <texpr/texpr.hpp>

namespace tx = texpr;

int main() {
  tx::tensor<float, 1, tx::cuda> x(tx::shape_t<1>{8});
#ifdef TEXPR_KO
  auto graph = tx::require_on<tx::cuda>(tx::exp(x > 0.0f));
#else
  auto graph = tx::require_on<tx::cuda>(tx::exp(tx::cast<float>(x > 0.0f)));
#endif
  tx::tensor<float, 1, tx::cuda> r = tx::cast<float>(graph);
  return static_cast<int>(r.size());
}
