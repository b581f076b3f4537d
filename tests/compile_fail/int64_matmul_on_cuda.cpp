// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// require_on<cuda> of an int64 matmul: no cuda kernel; names op, dtype and backend.
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::matmul, texpr::dtype::int64, texpr::cuda>
// expected-error: tx::to_host
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using T = std::int64_t;
#else
using T = float;
#endif
tx::tensor<T, 2, tx::cuda>& device_tensor();
void f() {
  auto g = tx::require_on<tx::cuda>(tx::matmul(device_tensor(), device_tensor()) + T(1));
  (void)g;
}
