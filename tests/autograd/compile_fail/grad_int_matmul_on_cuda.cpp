// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A gradient graph that recomputes an int64 matmul of its forward graph is rejected on cuda, naming the node.
// expected-error: no_kernel<texpr::op::matmul, texpr::dtype::int64, texpr::cuda>
// expected-errors: 1
// The compiling twin casts the operands to float first, so every node has a cuda kernel.
#include <cstdint>

#include <texpr/texpr.hpp>

namespace tx = texpr;

void backward_on_cuda(const tx::tensor<std::int64_t, 2, tx::cuda>& a, const tx::tensor<std::int64_t, 2, tx::cuda>& b,
                      const tx::tensor<float, 2, tx::cuda>& w) {
  auto W = tx::param<struct W>(w);
#if defined(TEXPR_KO)
  auto features = tx::cast<float>(tx::matmul(a, b));
#else
  auto features = tx::matmul(tx::cast<float>(a), tx::cast<float>(b));
#endif
  auto [dw] = tx::grad(tx::sum(features * W), W);
  (void)tx::require_on<tx::cuda>(dw);
}
