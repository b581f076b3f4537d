// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cholesky of a cuda float16 tensor has no kernel (cuSOLVER has no 16-bit factorisation): rejected at compile time
// by nvcc, naming cholesky, float16 and cuda. The twin evaluates a float cholesky on cuda (cusolver_potrf).
// expected-error: static assertion failed with "texpr: no kernel for this node on this backend
// expected-errors: 1
// expected-error: no_kernel<Op, Dtype, texpr::cuda> \[with Op=texpr::op::cholesky, Dtype=texpr::dtype::float16\]
#include <texpr/linalg.hpp>

namespace tx = texpr;

int main() {
#ifdef TEXPR_KO
  using T = tx::half;
#else
  using T = float;
#endif
  tx::tensor<T, 3, tx::cuda> a(tx::shape_t<3>{2, 4, 4});
  tx::tensor<T, 3, tx::cuda> l = tx::linalg::cholesky(a);
  return static_cast<int>(l.size());
}
