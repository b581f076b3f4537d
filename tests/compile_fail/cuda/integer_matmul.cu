// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Integer matmul has no cuda kernel (cuBLAS has no integer GEMM texpr registers): rejected at compile time,
// naming matmul, the dtype and cuda.
// expected-error: static assertion failed with "texpr: no kernel for this node on this backend
// expected-errors: 1
// expected-error: no_kernel<Op, Dtype, texpr::cuda> \[with Op=texpr::op::matmul, Dtype=texpr::dtype::int64\]
#include <texpr/texpr.hpp>

#include <cstdint>

namespace tx = texpr;

int main() {
#ifdef TEXPR_KO
  tx::tensor<std::int64_t, 2, tx::cuda> a(tx::shape_t<2>{2, 3}), b(tx::shape_t<2>{3, 2});
  tx::tensor<std::int64_t, 2, tx::cuda> c = tx::matmul(a, b);
#else
  tx::tensor<float, 2, tx::cuda> a(tx::shape_t<2>{2, 3}), b(tx::shape_t<2>{3, 2});
  tx::tensor<float, 2, tx::cuda> c = tx::matmul(a, b);
#endif
  return static_cast<int>(c.size());
}
