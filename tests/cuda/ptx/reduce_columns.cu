// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Instantiates the cuda reductions that the PTX check reads (tests/cmake/check_ptx.cmake): sums over a non-last
// axis (float from memory and through a fused elementwise operand, half, bfloat16 and double, a mean over axis 0
// of a rank-3 tensor), full reductions (float from memory and fused, half, a max) and row reductions (float from
// memory and fused, half, bfloat16); every one that reads the operand must use 16-byte vector loads.
#include <texpr/texpr.hpp>

namespace tx = texpr;

void sum_middle(const tx::tensor<float, 3, tx::cuda>& x, tx::tensor<float, 2, tx::cuda>& out) { out = tx::sum(x, 1); }
void sum_first_fused(const tx::tensor<float, 3, tx::cuda>& x, tx::tensor<float, 2, tx::cuda>& out) {
  out = tx::sum(tx::exp(x) * 2.0f, 0);
}
void mean_first(const tx::tensor<float, 3, tx::cuda>& x, tx::tensor<float, 2, tx::cuda>& out) { out = tx::mean(x, 0); }
void sum_columns_half(const tx::tensor<tx::half, 2, tx::cuda>& x, tx::tensor<tx::half, 1, tx::cuda>& out) { out = tx::sum(x, 0); }
void sum_columns_bfloat16(const tx::tensor<tx::bfloat16, 2, tx::cuda>& x, tx::tensor<tx::bfloat16, 1, tx::cuda>& out) {
  out = tx::sum(x, 0);
}
void sum_columns_double(const tx::tensor<double, 2, tx::cuda>& x, tx::tensor<double, 1, tx::cuda>& out) { out = tx::sum(x, 0); }
void sum_all(const tx::tensor<float, 1, tx::cuda>& x, tx::tensor<float, 0, tx::cuda>& out) { out = tx::sum(x); }
void sum_all_fused(const tx::tensor<float, 2, tx::cuda>& x, const tx::tensor<float, 2, tx::cuda>& y, tx::tensor<float, 0, tx::cuda>& out) {
  out = tx::mean(tx::pow(x - y, 2));
}
void sum_all_half(const tx::tensor<tx::half, 1, tx::cuda>& x, tx::tensor<tx::half, 0, tx::cuda>& out) { out = tx::sum(x); }
void max_all(const tx::tensor<float, 1, tx::cuda>& x, tx::tensor<float, 0, tx::cuda>& out) { out = tx::max(x); }
void sum_rows(const tx::tensor<float, 2, tx::cuda>& x, tx::tensor<float, 1, tx::cuda>& out) { out = tx::sum(x, 1); }
void max_rows_fused(const tx::tensor<float, 2, tx::cuda>& x, tx::tensor<float, 1, tx::cuda>& out) { out = tx::max(tx::exp(x), -1); }
void sum_rows_half(const tx::tensor<tx::half, 2, tx::cuda>& x, tx::tensor<tx::half, 1, tx::cuda>& out) { out = tx::sum(x, 1); }
void sum_rows_bfloat16(const tx::tensor<tx::bfloat16, 2, tx::cuda>& x, tx::tensor<tx::bfloat16, 1, tx::cuda>& out) {
  out = tx::sum(x, 1);
}

// Bias gradients written by the launches of the delta and dlogits they sum (backend/cuda/column_sums.hpp): the
// delta's kernel reads by linear index or by multi-index, and sums columns after writing; no local memory either.
namespace ptx_tags {
struct w1 {};
struct b1 {};
struct w2 {};
struct b2 {};
}  // namespace ptx_tags
void two_layer_step(const tx::tensor<float, 2, tx::cuda>& x, const tx::tensor<std::int64_t, 1, tx::cuda>& y,
                    const tx::tensor<float, 2, tx::cuda>& w1, const tx::tensor<float, 1, tx::cuda>& b1,
                    const tx::tensor<float, 2, tx::cuda>& w2, const tx::tensor<float, 1, tx::cuda>& b2) {
  auto W1 = tx::param<ptx_tags::w1>(w1);
  auto B1 = tx::param<ptx_tags::b1>(b1);
  auto W2 = tx::param<ptx_tags::w2>(w2);
  auto B2 = tx::param<ptx_tags::b2>(b2);
  (void)tx::eval_all(tx::value_and_grad(tx::cross_entropy(tx::matmul(tx::elu(tx::matmul(x, W1) + B1), W2) + B2, y), W1, B1, W2, B2));
}
