// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lstsq of cuda float16 tensors has no kernel (its SVD is cuSOLVER's, which has no 16-bit factorisation): rejected
// at compile time by nvcc, naming lstsq, float16 and cuda. The twin evaluates a float lstsq on cuda (its row:
// cusolver_gesvd_lstsq).
// expected-error: static assertion failed with "texpr: no kernel for this node on this backend
// expected-errors: 1
// expected-error: no_kernel<Op, Dtype, texpr::cuda> \[with Op=texpr::op::lstsq, Dtype=texpr::dtype::float16\]
#include <texpr/linalg.hpp>

namespace tx = texpr;

int main() {
#ifdef TEXPR_KO
  using T = tx::half;
#else
  using T = float;
#endif
  tx::tensor<T, 3, tx::cuda> a(tx::shape_t<3>{2, 5, 3});
  tx::tensor<T, 3, tx::cuda> b(tx::shape_t<3>{2, 5, 2});
  tx::tensor<T, 3, tx::cuda> x = tx::linalg::lstsq(a, b);
  return static_cast<int>(x.size());
}
