// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Quick start: build a lazy graph, prove where it runs at compile time, print its placement, evaluate it.
#include <texpr/texpr.hpp>

#include <cmath>
#include <cstdio>

namespace tx = texpr;

int main() {
  // A small dense layer: y = elu(x @ w + b), and its mean activation per feature.
  tx::tensor<float, 2> x({4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  tx::tensor<float, 2> w({3, 2}, {0.5f, -1, 0.25f, 0, -0.5f, 1});
  tx::tensor<float, 1> b({2}, {0.1f, -0.2f});

  auto y = tx::elu(tx::matmul(x, w) + b);  // lazy: nothing has run yet
  auto graph = tx::mean(y, 0);             // mean over the batch axis, fused with the elementwise ops

  // Every node has a host kernel for float32 and every leaf lives on the host: checked by the compiler.
  static_assert(tx::runs_on<decltype(graph), tx::host>);
  // The same float graph built from tx::cuda tensors would run on the GPU; an int64 matmul would not.
  static_assert(!tx::has_kernel<tx::op::matmul, std::int64_t, tx::cuda>);

  std::fputs(tx::placement(graph).c_str(), stdout);

  tx::tensor<float, 1> m = graph;  // evaluate: matmul, then one fused pass for elu + add + mean
  std::printf("mean activation per feature: %.4f %.4f\n", static_cast<double>(m(0)), static_cast<double>(m(1)));

  // Reference by hand for the first feature, so the example checks itself.
  double expect = 0;
  for (int i = 0; i < 4; ++i) {
    double z = 0.1;
    for (int k = 0; k < 3; ++k) z += static_cast<double>(x(i, k)) * static_cast<double>(w(k, 0));
    expect += z > 0 ? z : std::expm1(z);
  }
  expect /= 4;
  const double err = static_cast<double>(m(0)) - expect;
  if (err > 1e-5 || err < -1e-5) {
    std::printf("mismatch: expected %.6f\n", expect);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
