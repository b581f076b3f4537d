// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Instantiates the cuda elementwise kernels that the PTX check reads (tests/cmake/check_ptx_broadcast.cmake): a bias
// add with ELU (a rank-1 operand broadcast over rows), a rank-3 broadcast, a softmax-style shift (a column broadcast
// along the rows), and dense 16-bit trees (packed add, subtract and multiply; a function computed in float).
#include <texpr/texpr.hpp>

namespace tx = texpr;

void bias_elu(const tx::tensor<float, 2, tx::cuda>& x, const tx::tensor<float, 1, tx::cuda>& b,
              tx::tensor<float, 2, tx::cuda>& out) {
  out = tx::elu(x + b);
}
void broadcast3(const tx::tensor<float, 3, tx::cuda>& x, const tx::tensor<float, 2, tx::cuda>& y,
                tx::tensor<float, 3, tx::cuda>& out) {
  out = x * y;
}
void shift_rows(const tx::tensor<float, 2, tx::cuda>& x, const tx::tensor<float, 2, tx::cuda>& row_max,
                tx::tensor<float, 2, tx::cuda>& out) {
  out = x - row_max;
}
void half_fma(const tx::tensor<tx::half, 1, tx::cuda>& a, const tx::tensor<tx::half, 1, tx::cuda>& b,
              const tx::tensor<tx::half, 1, tx::cuda>& c, tx::tensor<tx::half, 1, tx::cuda>& out) {
  out = a * b - c;
}
void bfloat16_fma(const tx::tensor<tx::bfloat16, 1, tx::cuda>& a, const tx::tensor<tx::bfloat16, 1, tx::cuda>& b,
                  const tx::tensor<tx::bfloat16, 1, tx::cuda>& c, tx::tensor<tx::bfloat16, 1, tx::cuda>& out) {
  out = a * b + c;
}
void half_exp(const tx::tensor<tx::half, 1, tx::cuda>& a, tx::tensor<tx::half, 1, tx::cuda>& out) {
  out = tx::exp(a);
}
