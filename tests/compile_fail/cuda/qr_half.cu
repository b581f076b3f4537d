// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// qr of cuda float16 tensors has no kernel (cuSOLVER has no 16-bit factorisation): rejected at compile time by nvcc,
// naming qr, float16 and cuda. The twin evaluates a float qr on cuda (cusolver_geqrf_orgqr).
// expected-error: static assertion failed with "texpr: no kernel for this node on this backend
// expected-errors: 1
// expected-error: no_kernel<Op, Dtype, texpr::cuda> \[with Op=texpr::op::qr, Dtype=texpr::dtype::float16\]
#include <texpr/linalg.hpp>

namespace tx = texpr;

int main() {
#ifdef TEXPR_KO
  using T = tx::half;
#else
  using T = float;
#endif
  tx::tensor<T, 3, tx::cuda> a(tx::shape_t<3>{2, 5, 3});
  auto [q, r] = tx::linalg::qr(a);
  tx::tensor<T, 3, tx::cuda> packed_r = r;
  return static_cast<int>(packed_r.size() + q.shape()[0]);
}
