// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared values (tx::share): a value read by several readers, or through several copies of an expression, is
// computed once per evaluation (counted by tx::kernel_log) and differentiated once; values and gradients equal the
// same graph written as a tree (which evaluates every copy), and central differences.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>

#include "grad_check.hpp"

namespace tx = texpr;

namespace {

/// GEMMs run: plain ones and those that evaluated an elementwise tree in their output tiles.
std::size_t gemms(const tx::kernel_log& log) { return log.count("blocked_gemm") + log.count("blocked_gemm_epilogue"); }

/// max |a - b| over all elements.
template <class T, std::size_t R> double max_difference(const tx::tensor<T, R>& a, const tx::tensor<T, R>& b) {
  REQUIRE(a.shape() == b.shape());
  double d = 0;
  for (tx::index_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(static_cast<double>(a.data()[i] - b.data()[i])));
  return d;
}

/// A residual stack of `layers` layers: x_{k+1} = x_k + tanh(x_k w_k), every layer reading its input twice. With
/// Share, each x_k is a shared value; without, each copy of x_k's tree is evaluated (2^k copies of x_0's layer).
template <bool Share, std::size_t Layers, class X, class W> auto stack(const X& x, const W& w) {
  if constexpr (Layers == 0) {
    return tx::tensor_ref<const X>(x);
  } else {
    auto below = stack<Share, Layers - 1>(x, w);
    auto layer = below + tx::tanh(tx::matmul(below, std::get<Layers - 1>(w)));
    if constexpr (Share) return tx::share(std::move(layer));
    else return layer;
  }
}

}  // namespace

TEST_CASE("tx::share: a computed value read by three readers runs its kernel once, and equals the tree's value") {
  auto g = grad_check::rng(11);
  auto a = grad_check::random<2>({6, 5}, g), b = grad_check::random<2>({5, 8}, g);
  auto bias = grad_check::random<1>({8}, g);
  auto tree_product = tx::matmul(a, b) + bias;
  tx::kernel_log log;
  tx::tensor<double, 2> tree = tx::slice(tree_product, 1, 0, 2) * tx::slice(tree_product, 1, 2, 4) + tx::slice(tree_product, 1, 4, 6);
  CHECK(gemms(log) == 3);  // the tree: one product per copy

  auto product = tx::share(tx::matmul(a, b) + bias);
  static_assert(tx::is_shared_v<decltype(product)>);
  static_assert(tx::runs_on<decltype(product), tx::host>);
  log.clear();
  tx::tensor<double, 2> shared = tx::slice(product, 1, 0, 2) * tx::slice(product, 1, 2, 4) + tx::slice(product, 1, 4, 6);
  CHECK(gemms(log) == 1);
  CHECK(max_difference(shared, tree) == 0.0);  // the same kernels on the same data: bitwise equal

  // Each evaluation computes it again (its operands may have changed), once.
  a(0, 0) += 1.0;
  log.clear();
  tx::tensor<double, 2> again = tx::slice(product, 1, 0, 2) * tx::slice(product, 1, 2, 4) + tx::slice(product, 1, 4, 6);
  CHECK(gemms(log) == 1);
  tx::tensor<double, 2> expect = tx::slice(tree_product, 1, 0, 2) * tx::slice(tree_product, 1, 2, 4) + tx::slice(tree_product, 1, 4, 6);
  CHECK(max_difference(again, expect) == 0.0);
  CHECK(max_difference(again, shared) > 0.0);
}

TEST_CASE("tx::share: copies of a shared value are one value; placement lists it once") {
  auto g = grad_check::rng(12);
  auto a = grad_check::random<2>({4, 4}, g);
  auto x1 = tx::share(tx::matmul(a, a));
  auto x2 = tx::share(x1 + tx::matmul(x1, a));  // reads x1 twice
  auto x3 = x2 * tx::matmul(x2, x1);            // reads x2 twice, x1 a third time
  tx::kernel_log log;
  tx::tensor<double, 2> y = x3;
  CHECK(gemms(log) == 3);  // one per matmul node, whatever the number of copies
  const auto logged = log.entries();
  tx::tensor<double, 2> a2 = tx::matmul(a, a);
  tx::tensor<double, 2> b2 = a2 + tx::matmul(a2, a);
  tx::tensor<double, 2> expect = b2 * tx::matmul(b2, a2);
  CHECK(max_difference(y, expect) == 0.0);

  const std::string report = tx::placement(x3);
  std::size_t mentions = 0;
  for (auto at = report.find("(shared add)"); at != std::string::npos; at = report.find("(shared add)", at + 1)) ++mentions;
  CHECK(mentions == 2);  // x2 read twice: each read names it; its computation is listed once
  const auto planned = tx::planned_kernels(x3);
  std::size_t planned_gemms = 0;
  for (const auto& r : planned) planned_gemms += r.implementation.starts_with("blocked_gemm");
  CHECK(planned_gemms == 3);
  REQUIRE(planned.size() == logged.size());
  for (std::size_t i = 0; i != planned.size(); ++i) CHECK(planned[i].implementation == logged[i].implementation);
}

TEST_CASE("tx::share: a shared value's memory goes back after its last reader, in eval_all and in assignment") {
  // Eight shared layers of (64, 64) doubles, each read twice by the next layer's computation only: once x_{k+1}
  // is computed, x_k has no reader left. Kept to the end, the chain would hold all eight and the result at once.
  constexpr std::size_t layers = 8;
  constexpr tx::index_t n = 64;
  auto g = grad_check::rng(17);
  auto x = grad_check::random<2>({n, n}, g, -1, 1);
  std::array<tx::tensor<double, 2>, layers> w;
  for (auto& t : w) t = grad_check::random<2>({n, n}, g, -0.2, 0.2);
  const auto weights = std::apply([](const auto&... t) { return std::make_tuple(tx::tensor_ref<const tx::tensor<double, 2>>(t)...); }, w);
  // The reference, layer by layer through tensors.
  tx::tensor<double, 2> expect = x.clone();
  for (const auto& wk : w) {
    const tx::tensor<double, 2> product = tx::matmul(expect, wk);
    expect = expect + tx::tanh(product);
  }
  std::size_t block = 0;  // the memory one value of x's shape takes (its allocator size class)
  {
    tx::kernel_log log;
    const tx::tensor<double, 2> one = x * 2.0;
    block = log.peak_bytes();
  }
  REQUIRE(block >= sizeof(double) * n * n);

  for (const bool through_eval_all : {true, false}) {
    CAPTURE(through_eval_all);
    auto top = stack<true, layers>(x, weights);
    tx::kernel_log log;
    tx::tensor<double, 2> y;
    if (through_eval_all) y = std::move(std::get<0>(tx::eval_all(top * 1.0)));
    else y = top * 1.0;
    CHECK(gemms(log) == layers);  // no value computed twice (a value given back too early would be)
    CHECK(max_difference(y, expect) <= 1e-12);  // (the GEMM adds x_k in its epilogue here, in a pass there)
    // x_k and x_{k+1} while the GEMM writes x_{k+1} (its epilogue adds x_k), and the result: three blocks.
    CHECK(log.peak_bytes() == 3 * block);
  }
}

TEST_CASE("tx::share: a shared value's type names its value, not its computation: a stack of layers is a loop") {
  // Each layer reads its input twice. Were the computation in the value's type, x_k's type would spell x_0's
  // computation 2^k times; it names (dtype, rank, backend, parameters) only, so every layer's value has one type
  // and a run-time loop builds the stack.
  constexpr std::size_t layers = 32;
  constexpr tx::index_t n = 8;
  auto g = grad_check::rng(19);
  auto x0 = grad_check::random<2>({n, n}, g, -1, 1);
  std::array<tx::tensor<double, 2>, layers> w;
  for (auto& t : w) t = grad_check::random<2>({n, n}, g, -0.4, 0.4);
  const auto layer = [](const auto& x, const tx::tensor<double, 2>& wk) { return tx::share(x + tx::tanh(tx::matmul(x, wk))); };
  auto x = layer(x0, w[0]);
  static_assert(std::is_same_v<decltype(layer(x, w[1])), decltype(x)>);
  for (std::size_t k = 1; k != layers; ++k) x = layer(x, w[k]);

  tx::tensor<double, 2> expect = x0.clone();
  for (const auto& wk : w) {
    const tx::tensor<double, 2> product = tx::matmul(expect, wk);
    expect = expect + tx::tanh(product);
  }
  tx::kernel_log log;
  const tx::tensor<double, 2> y = x * 1.0;
  CHECK(gemms(log) == layers);  // each layer's product once, though the next layer reads the layer twice
  CHECK(max_difference(y, expect) <= 1e-12);
}

TEST_CASE("tx::share: gradients through shared values equal the tree's, and the step's GEMMs grow linearly") {
  constexpr std::size_t layers = 4;
  auto g = grad_check::rng(13);
  auto x = grad_check::random<2>({5, 6}, g, -1, 1);
  std::array<tx::tensor<double, 2>, layers> w;
  for (auto& t : w) t = grad_check::random<2>({6, 6}, g, -0.5, 0.5);
  auto p = std::make_tuple(tx::param<grad_check::tag<0>>(w[0]), tx::param<grad_check::tag<1>>(w[1]),
                           tx::param<grad_check::tag<2>>(w[2]), tx::param<grad_check::tag<3>>(w[3]));
  auto loss_of = [&]<bool Share>(std::bool_constant<Share>) { return tx::sum(tx::square(stack<Share, layers>(x, p))); };

  auto tree = std::apply([&](const auto&... q) { return tx::value_and_grad(loss_of(std::false_type{}), q...); }, p);
  auto shared = std::apply([&](const auto&... q) { return tx::value_and_grad(loss_of(std::true_type{}), q...); }, p);
  static_assert(tx::all_run_on<decltype(shared), tx::host>);
  {  // the same step on cuda, float (checked by any compiler)
    using cx = const tx::tensor<float, 2, tx::cuda>&;
    using cw = tx::param_ref<grad_check::tag<0>, tx::tensor<float, 2, tx::cuda>>;
    using cuda_step = decltype(tx::value_and_grad(tx::sum(tx::square(stack<true, 2>(std::declval<cx>(), std::declval<std::tuple<cw, cw>>()))),
                                                  std::declval<cw>()));
    static_assert(tx::all_run_on<cuda_step, tx::cuda>, "the shared step has cuda kernels too");
  }

  tx::kernel_log log;
  const auto t = tx::eval_all(tree);
  const std::size_t tree_gemms = gemms(log);
  log.clear();
  const auto s = tx::eval_all(shared);
  const std::size_t shared_gemms = gemms(log);
  // Forward: one product per layer. Backward: per layer, the weight's gradient and the input's (not for x_0).
  CHECK(shared_gemms == layers + layers + (layers - 1));
  CHECK(tree_gemms >= 3 * shared_gemms);  // the tree evaluates and differentiates every copy of each layer
  CHECK(tx::planned_kernels(shared).size() == log.entries().size());

  const double scale = 1 + std::abs(std::get<0>(t).item());
  CHECK(std::abs(std::get<0>(s).item() - std::get<0>(t).item()) <= 1e-12 * scale);
  const auto check_gradient = [&](const auto& a, const auto& b) { CHECK(max_difference(a, b) <= 1e-10 * scale); };
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (check_gradient(std::get<I + 1>(s), std::get<I + 1>(t)), ...);
  }(std::make_index_sequence<layers>{});

  // And against central differences (grad_check's tolerance), through shared values only.
  grad_check::check_with(grad_check::tolerance, "residual stack of shared values",
                         [&](const auto&... q) { return tx::sum(tx::square(stack<true, layers>(x, std::make_tuple(q...)))); },
                         w[0], w[1], w[2], w[3]);
}

TEST_CASE("tx::share: a parameter read both directly and through a shared value gets both contributions") {
  auto g = grad_check::rng(14);
  auto x = grad_check::random<2>({4, 3}, g), w0 = grad_check::random<2>({3, 3}, g, -1, 1);
  auto bias0 = grad_check::random<1>({3}, g);
  grad_check::check_with(grad_check::tolerance, "direct and shared uses",
                         [&](const auto& w, const auto& bias) {
                           auto h = tx::share(tx::elu(tx::matmul(x, w) + bias));
                           return tx::sum(h * tx::matmul(h, w)) + tx::sum(bias * bias) + tx::mean(tx::exp(h));
                         },
                         w0, bias0);
  // A loss that is itself a shared value, and a shared value read by one reader only.
  grad_check::check_with(grad_check::tolerance, "shared loss",
                         [&](const auto& w) { return tx::share(tx::sum(tx::share(tx::tanh(tx::matmul(x, w))))); }, w0);
}

TEST_CASE("tx::share: leaves and constants are returned as they are") {
  tx::tensor<float, 1> t({3});
  static_assert(std::is_same_v<decltype(tx::share(t)), tx::tensor_ref<tx::tensor<float, 1>>>);
  static_assert(tx::is_shared_v<decltype(tx::share(t * 2.0f))>);
  static_assert(std::is_same_v<decltype(tx::share(tx::zeros<float>({3}))), decltype(tx::zeros<float>({3}))>);
}
