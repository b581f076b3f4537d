// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// matmul takes vectors (rank 1), matrices and stacks of matrices; a rank-0 operand is rejected where it is built.
// expected-error: matmul takes operands of rank 1 or more
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int f(const tx::tensor<float, 2>& a, const tx::tensor<float, 1>& v) {
#ifdef TEXPR_KO
  (void)v;
  const tx::tensor<float, 0> s({}, {2.0f});
  return static_cast<int>(tx::matmul(a, s).size());
#else
  return static_cast<int>(tx::matmul(a, v).size());  // matrix x vector
#endif
}
