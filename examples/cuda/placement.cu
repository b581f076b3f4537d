// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A small graph on device tensors: checked to run on cuda at compile time, its placement printed, then run.
#include <texpr/texpr.hpp>

#include <cstdio>
#include <utility>

namespace tx = texpr;

using device_matrix = tx::tensor<float, 2, tx::cuda>;

// Graphs capture named tensors by reference and take their shapes when built.
auto make_graph(const device_matrix& x, const device_matrix& w) {
  return tx::sum(tx::relu(tx::matmul(x, w) - tx::mean(x)) * 0.5f, 1);
}
using graph_t = decltype(make_graph(std::declval<const device_matrix&>(), std::declval<const device_matrix&>()));
static_assert(tx::runs_on<graph_t, tx::cuda>, "every node has a cuda kernel and every leaf lives on cuda");

int main() {
  if (!tx::cuda_device_available()) {
    const device_matrix x, w;  // building a graph needs no device (shapes print as empty)
    std::printf("%s\n", tx::placement(make_graph(x, w)).c_str());
    std::printf("no CUDA device (%s): skipping the run\n", tx::cuda_unavailable_reason().c_str());
    return 0;
  }
  const auto info = tx::cuda_device_info();
  std::printf("device: %s (sm_%d%d, %d SMs, %zu MiB, fp64 %s)\n", info.name.c_str(), info.major, info.minor,
              info.multiprocessors, info.total_memory >> 20, info.fp64_full_rate ? "full rate" : "reduced rate");

  const tx::tensor<float, 2> hx({2, 3}, {1, -2, 3, -4, 5, -6});
  const tx::tensor<float, 2> hw({3, 2}, {1, 0, 0, 1, 1, 1});
  const device_matrix x = tx::to_device(hx);  // explicit copies: texpr never copies implicitly
  const device_matrix w = tx::to_device(hw);
  const auto graph = make_graph(x, w);
  std::printf("%s\n", tx::placement(graph).c_str());
  const tx::tensor<float, 1, tx::cuda> y = graph;  // one cuBLAS GEMM, one CUB reduction, fused kernels
  const auto hy = tx::to_host(y);                   // the only synchronisation
  // x @ w = [[4, 1], [-10, -1]], mean(x) = -0.5, relu(. + 0.5) * 0.5 = [[2.25, 0.75], [0, 0]]
  std::printf("result: [%g, %g] (expected [3, 0])\n", static_cast<double>(hy(0)), static_cast<double>(hy(1)));
  return hy(0) == 3.0f && hy(1) == 0.0f ? 0 : 1;
}
