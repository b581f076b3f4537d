// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A host tensor plus a cuda tensor: no implicit copy.
// expected-error: operands live on different backends
// expected-errors: 1
// expected-error: tx::to_device
// expected-error: mixed_backends<texpr::host, texpr::cuda>
#include <texpr/texpr.hpp>
namespace tx = texpr;
tx::tensor<float, 2, tx::cuda>& device_tensor();
tx::tensor<float, 2, tx::host>& host_tensor();
void f() {
#ifdef TEXPR_KO
  auto e = host_tensor() + device_tensor();
#else
  auto e = device_tensor() + device_tensor();
#endif
  (void)e;
}
