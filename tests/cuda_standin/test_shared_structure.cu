// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared values (tx::share) on cuda, counted on the stand-in: a residual stack's training step runs one GEMM per
// product and gradient (not one per copy of each layer's tree), allocates nothing after the first step and never
// syncs; the kernel log equals the placement plan; a shared value's device block goes back after its last reader.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <cstddef>
#include <tuple>
#include <utility>

#include "cuda_standin/standin.hpp"

namespace tx = texpr;
namespace sd = texpr_standin;

namespace {

using ctensor = tx::tensor<float, 2, tx::cuda>;

template <int I> struct layer_tag {};

/// x_{k+1} = share(x_k + tanh(x_k w_k)): every layer reads its input twice.
template <std::size_t Layers, class X, class W> auto stack(const X& x, const W& w) {
  if constexpr (Layers == 0) {
    return tx::tensor_ref<const X>(x);
  } else {
    auto below = stack<Layers - 1>(x, w);
    return tx::share(below + tx::tanh(tx::matmul(below, std::get<Layers - 1>(w))));
  }
}

}  // namespace

TEST_CASE("shared values on cuda: a 3-layer residual step runs 8 GEMMs, no allocation after the first, no sync") {
  const ctensor x = tx::zeros<float, tx::cuda>({64, 32});
  ctensor w0 = tx::zeros<float, tx::cuda>({32, 32}), w1 = tx::zeros<float, tx::cuda>({32, 32}),
          w2 = tx::zeros<float, tx::cuda>({32, 32});
  auto step = [&] {
    auto p = std::make_tuple(tx::param<layer_tag<0>>(w0), tx::param<layer_tag<1>>(w1), tx::param<layer_tag<2>>(w2));
    return std::apply([&](const auto&... q) { return tx::value_and_grad(tx::sum(tx::square(stack<3>(x, p))), q...); }, p);
  };
  static_assert(tx::all_run_on<decltype(step()), tx::cuda>);
  for (int i = 0; i < 3; ++i) {
    INFO("step " << i);
    const auto graphs = step();
    const auto planned = tx::planned_kernels(graphs);
    tx::kernel_log log;
    const sd::scope s;
    const auto result = tx::eval_all(graphs);
    const auto r = s.taken();
    MESSAGE(sd::describe(r));
    // Forward: 3 products. Backward: 3 weight gradients and 2 input gradients (x is not a parameter).
    CHECK(r.gemms.size() == 8);
    CHECK(r.syncs.empty());
    if (i > 0) CHECK(r.allocations.empty());
    REQUIRE(planned.size() == log.entries().size());
    for (std::size_t k = 0; k != planned.size(); ++k) CHECK(planned[k].implementation == log.entries()[k].implementation);
    (void)result;
  }
}

TEST_CASE("shared values on cuda: a value's device block goes back to texpr's cache after its last reader") {
  // Eight shared layers of (64, 64) floats, each read only by the next layer's computation: x_k's block is given
  // back (stream-ordered, to the stream's cache) once x_{k+1} is enqueued, and taken again by x_{k+2}.
  const ctensor x = tx::zeros<float, tx::cuda>({64, 64});
  const ctensor w = tx::zeros<float, tx::cuda>({64, 64});
  const auto weights = std::make_tuple(tx::tensor_ref<const ctensor>(w), tx::tensor_ref<const ctensor>(w),
                                       tx::tensor_ref<const ctensor>(w), tx::tensor_ref<const ctensor>(w),
                                       tx::tensor_ref<const ctensor>(w), tx::tensor_ref<const ctensor>(w),
                                       tx::tensor_ref<const ctensor>(w), tx::tensor_ref<const ctensor>(w));
  std::size_t block = 0;  // one value of x's shape (its size class)
  {
    tx::kernel_log log;
    const ctensor one = x * 2.0f;
    block = log.peak_bytes(true);
  }
  REQUIRE(block >= sizeof(float) * 64 * 64);
  for (int i = 0; i < 2; ++i) {
    INFO("evaluation " << i);
    tx::kernel_log log;
    const sd::scope s;
    const auto result = tx::eval_all(stack<8>(x, weights) * 1.0f);
    const auto r = s.taken();
    CHECK(r.gemms.size() == 8);  // no value computed twice
    CHECK(r.syncs.empty());
    // x_k, x_{k+1}, the product (cuBLAS writes it; the add and tanh are a second pass) and the result: four blocks
    // at once; kept to the end, the values and products would be seventeen.
    CHECK(log.peak_bytes(true) == 4 * block);
    if (i > 0) CHECK(r.allocations.empty());
    (void)result;
  }
}
