// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::exp of an int32 device tensor: the cuda registry has no exp kernel for int32, so evaluation is
// rejected naming exp, int32 and cuda (texpr never converts silently).
// expected-error: static assertion failed with "texpr: no kernel for this node on this backend
// expected-errors: 1
// expected-error: no_kernel<Op, Dtype, texpr::cuda> \[with Op=texpr::op::exp, Dtype=texpr::dtype::int32\]
#include <texpr/texpr.hpp>

#include <cstdint>

namespace tx = texpr;

int main() {
  tx::tensor<std::int32_t, 1, tx::cuda> a(tx::shape_t<1>{8});
#ifdef TEXPR_KO
  tx::tensor<std::int32_t, 1, tx::cuda> e = tx::exp(a);
#else
  tx::tensor<float, 1, tx::cuda> e = tx::exp(tx::cast<float>(a));
#endif
  return static_cast<int>(e.size());
}
