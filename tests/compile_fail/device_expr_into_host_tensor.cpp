// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Assigning a cuda expression to a host tensor would be an implicit copy.
// expected-error: operands live on different backends
// expected-errors: 1
// expected-error: mixed_backends<texpr::host, texpr::cuda>
#include <texpr/texpr.hpp>
namespace tx = texpr;
tx::tensor<float, 1, tx::cuda>& device_tensor();
tx::tensor<float, 1, tx::host>& host_tensor();
void f() {
#ifdef TEXPR_KO
  tx::tensor<float, 1, tx::host> r = device_tensor() + 1.0f;
#else
  tx::tensor<float, 1, tx::host> r = host_tensor() + 1.0f;
#endif
  (void)r;
}
