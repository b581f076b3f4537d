// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A host tensor and a device tensor in one expression: rejected where the expression is written, naming
// both backends; the fix is an explicit tx::to_device.
// expected-error: static assertion failed with "texpr: operands live on different backends
// expected-errors: 1
// expected-error: mixed_backends<BackendA, BackendB> \[with BackendA=texpr::host, BackendB=texpr::cuda\]
#include <texpr/texpr.hpp>

namespace tx = texpr;

int main() {
  tx::tensor<float, 1> h(tx::shape_t<1>{4});
  tx::tensor<float, 1, tx::cuda> d(tx::shape_t<1>{4});
#ifdef TEXPR_KO
  auto e = h + d;
#else
  auto e = tx::to_device(h) + d;
#endif
  tx::tensor<float, 1, tx::cuda> r = e;
  return static_cast<int>(r.size());
}
