// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients of the training ops: slice (every step sign), dropout (the mask regenerated, not stored), layer_norm
// (x, weight and bias) and indexing (index_select, gather, embedding), against finite differences and closed
// forms; their graphs run on cuda.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "grad_check.hpp"

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

namespace {

// Python's range(n)[begin:end:step], written out independently of texpr's slice.
std::vector<tx::index_t> python_range(tx::index_t n, tx::index_t begin, tx::index_t end, tx::index_t step) {
  auto adjust = [&](tx::index_t i, tx::index_t lo, tx::index_t hi) {
    if (i < 0) i = std::max(i + n, lo);
    return std::min(i, hi);
  };
  std::vector<tx::index_t> out;
  if (step > 0) {
    for (tx::index_t i = adjust(begin, 0, n), e = adjust(end, 0, n); i < e; i += step) out.push_back(i);
  } else {
    for (tx::index_t i = adjust(begin, -1, n - 1), e = adjust(end, -1, n - 1); i > e; i += step) out.push_back(i);
  }
  return out;
}

struct slice_case {
  tx::index_t axis, begin, end, step;
};

template <class B> auto slice_grad(const tx::tensor<float, 2, B>& x, const tx::tensor<float, 2, B>& w) {
  auto p = tx::param<struct slice_p>(x);
  return tx::grad(tx::sum(tx::slice(tx::exp(p), 1, -1, 0, -2) * w), p);
}
template <class B> auto dropout_grad(const tx::tensor<float, 2, B>& x, const tx::tensor<float, 2, B>& w) {
  auto p = tx::param<struct dropout_p>(x);
  return tx::grad(tx::sum(tx::dropout(p * p, 0.25, 5) * w), p);
}
template <class B>
auto layer_norm_grad(const tx::tensor<float, 2, B>& x, const tx::tensor<float, 1, B>& w, const tx::tensor<float, 1, B>& b) {
  auto px = tx::param<struct ln_x>(x);
  auto pw = tx::param<struct ln_w>(w);
  auto pb = tx::param<struct ln_b>(b);
  return tx::grad(tx::mean(tx::square(tx::layer_norm(tx::tanh(px), pw, pb))), px, pw, pb);
}
template <class B>
auto embedding_grad(const tx::tensor<std::int32_t, 2, B>& ids, const tx::tensor<float, 2, B>& w, const tx::tensor<float, 2, B>& x) {
  auto pw = tx::param<struct em_w>(w);
  auto px = tx::param<struct em_x>(x);
  auto rows = tx::index_select(px, 1, tx::reshape(ids, {-1}));
  return tx::grad(tx::sum(tx::square(tx::embedding(ids, pw))) + tx::sum(tx::gather(tx::exp(px), 0, tx::slice(ids, 1, 0, 1))) + tx::sum(rows), pw, px);
}
using f2 = const tx::tensor<float, 2, tx::cuda>&;
using f1 = const tx::tensor<float, 1, tx::cuda>&;
// The gradient graphs run wherever the forward does: checked for cuda by the host compiler.
static_assert(tx::all_run_on<decltype(slice_grad<tx::cuda>(std::declval<f2>(), std::declval<f2>())), tx::cuda>);
static_assert(tx::all_run_on<decltype(dropout_grad<tx::cuda>(std::declval<f2>(), std::declval<f2>())), tx::cuda>);
static_assert(tx::all_run_on<decltype(embedding_grad<tx::cuda>(std::declval<const tx::tensor<std::int32_t, 2, tx::cuda>&>(), std::declval<f2>(), std::declval<f2>())), tx::cuda>);
static_assert(tx::all_run_on<decltype(layer_norm_grad<tx::cuda>(std::declval<f2>(), std::declval<f1>(), std::declval<f1>())), tx::cuda>);

}  // namespace

TEST_CASE("slice: the gradient is g at the sliced positions of zeros, for every step sign") {
  auto g = grad_check::rng(41);
  const tx::shape_t<2> shape{7, 6};
  auto x = random(shape, g);
  const slice_case cases[] = {
      {0, 0, 7, 1},   {0, 1, 6, 2},  {0, 0, 7, 3},   {0, 2, 3, 5},   {0, -1, -8, -1}, {0, 6, 0, -2}, {0, 5, -100, -3},
      {1, -2, 1, -3}, {1, 1, 5, 1},  {1, -100, 100, 4}, {1, 3, 3, 1}, {1, 2, 4, -1},   {1, 0, 6, 100}, {0, 100, -100, -100},
      {1, std::numeric_limits<tx::index_t>::max(), std::numeric_limits<tx::index_t>::min(), std::numeric_limits<tx::index_t>::min()},
  };
  for (const auto& c : cases) {
    const std::string what = "slice(axis " + std::to_string(c.axis) + ", " + std::to_string(c.begin) + ", " + std::to_string(c.end) +
                             ", " + std::to_string(c.step) + ")";
    const auto picked = python_range(shape[static_cast<std::size_t>(c.axis)], c.begin, c.end, c.step);
    auto result_shape = shape;
    result_shape[static_cast<std::size_t>(c.axis)] = static_cast<tx::index_t>(picked.size());
    auto w = random(result_shape, g);
    auto loss = [&](auto p) { return tx::sum(tx::slice(p * p, c.axis, c.begin, c.end, c.step) * w); };
    check(what, loss, x);
    // Closed form: d/dx sum(slice(x^2) w) = 2 x w at the picked positions, 0 elsewhere.
    auto p = tx::param<struct slice_closed>(x);
    auto [gx] = tx::eval_all(tx::grad(loss(p), p));
    tx::tensor<double, 2> want(shape);
    for (tx::index_t i = 0; i < want.size(); ++i) want.data()[i] = 0;
    for (std::size_t j = 0; j < picked.size(); ++j)
      for (tx::index_t o = 0; o < shape[c.axis == 0 ? 1 : 0]; ++o) {
        const tx::index_t r = c.axis == 0 ? picked[j] : o, col = c.axis == 0 ? o : picked[j];
        const tx::index_t wr = c.axis == 0 ? static_cast<tx::index_t>(j) : o, wc = c.axis == 0 ? o : static_cast<tx::index_t>(j);
        want(r, col) = 2 * x(r, col) * w(wr, wc);
      }
    for (tx::index_t i = 0; i < want.size(); ++i) {
      INFO(what << " element " << i);
      CHECK(gx.data()[i] == want.data()[i]);
    }
  }
  // The seed as g (a constant), a slice of a slice, and a rank-3 operand sliced along its middle axis.
  check("sum of a slice", [&](auto p) { return tx::sum(tx::slice(p, 0, 5, 0, -2)); }, x);
  auto w73 = random(tx::shape_t<2>{7, 3}, g);
  check("slice of a slice", [&](auto p) { return tx::sum(tx::slice(tx::slice(p, 1, 5, 0, -1), 1, 0, 5, 2) * w73); }, x);
  auto y = random(tx::shape_t<3>{2, 5, 3}, g);
  auto w3 = random(tx::shape_t<3>{2, 2, 3}, g);
  check("rank 3, axis 1, step -3", [&](auto p) { return tx::sum(tx::slice(tx::tanh(p), 1, 4, -100, -3) * w3); }, y);
}

TEST_CASE("dropout: gradient g * mask / (1 - p) with the forward's mask, regenerated from the seed (nothing stored)") {
  auto g = grad_check::rng(42);
  const tx::shape_t<2> shape{9, 8};
  auto x = random(shape, g, 0.2, 2);
  auto w = random(shape, g);
  for (const double p : {0.0, 0.3, 0.75}) {
    check("dropout p " + std::to_string(p), [&](auto q) { return tx::sum(tx::dropout(q * q, p, 77) * w); }, x);
    auto q = tx::param<struct dropout_closed>(x);
    auto grads = tx::grad(tx::sum(tx::dropout(q, p, 77) * w), q);
    // The gradient graph reads the mask generator: no saved value (no stored mask).
    const std::string report = tx::placement(std::get<0>(grads));
    INFO(report);
    CHECK(report.find("dropout_mask") != std::string::npos);
    CHECK(report.find("saved") == std::string::npos);
    auto [gx] = tx::eval_all(grads);
    const tx::tensor<double, 2> u = tx::random::uniform<double>(shape, 77);
    for (tx::index_t i = 0; i < x.size(); ++i) CHECK(gx.data()[i] == (u.data()[i] >= p ? w.data()[i] * (1 / (1 - p)) : 0.0));
  }
}

TEST_CASE("layer_norm: gradients with respect to x, weight and bias") {
  auto g = grad_check::rng(43);
  auto x = random(tx::shape_t<2>{4, 6}, g);
  auto w = random(tx::shape_t<1>{6}, g, 0.5, 1.5);
  auto b = random(tx::shape_t<1>{6}, g);
  auto v = random(tx::shape_t<2>{4, 6}, g);
  check("layer_norm x, weight, bias", [&](auto px, auto pw, auto pb) { return tx::sum(tx::layer_norm(px, pw, pb) * v); }, x, w, b);
  check("layer_norm of an expression, eps 0.1, squared",
        [&](auto px, auto pw, auto pb) { return tx::mean(tx::square(tx::layer_norm(tx::tanh(px) * 3.0, pw, pb, 0.1))); }, x, w, b);
  auto y = random(tx::shape_t<3>{2, 3, 5}, g);
  auto w5 = random(tx::shape_t<1>{5}, g), b5 = random(tx::shape_t<1>{5}, g);
  auto v3 = random(tx::shape_t<3>{2, 3, 5}, g);
  check("layer_norm rank 3", [&](auto px, auto pw, auto pb) { return tx::sum(tx::layer_norm(px, pw, pb, 1e-3) * v3); }, y, w5, b5);
  auto m = random(tx::shape_t<2>{6, 6}, g);
  check("layer_norm of a matmul (a computed operand)",
        [&](auto pm, auto pw, auto pb) { return tx::sum(tx::layer_norm(tx::matmul(x, pm), pw, pb) * v); }, m, w, b);
  check("layer_norm whose weight also scales its input",
        [&](auto pw, auto pb) { return tx::sum(tx::layer_norm(x * pw, pw, pb) * v); }, w, b);
  // With weight 1, a row of layer_norm sums to the sum of the bias (the normalised row sums to 0): the gradient
  // with respect to x is 0.
  auto px = tx::param<struct ln_sum>(x);
  tx::tensor<double, 1> ones({6}, {1, 1, 1, 1, 1, 1});
  auto [gx] = tx::eval_all(tx::grad(tx::sum(tx::layer_norm(px, ones, b)), px));
  for (tx::index_t i = 0; i < x.size(); ++i) CHECK(std::abs(gx.data()[i]) <= 1e-14);
}

TEST_CASE("indexing: gradients of index_select, gather and embedding are sums over repeated indices") {
  auto g = grad_check::rng(47);
  auto x = random(tx::shape_t<3>{3, 4, 5}, g);
  // Repeats, both ends, and one row never selected (its gradient is 0).
  tx::tensor<std::int64_t, 1> rows({6}, {3, 0, 3, 1, 0, 3});
  tx::tensor<std::int32_t, 1> few({2}, {4, 4});
  auto v1 = random(tx::shape_t<3>{3, 6, 5}, g);
  auto v2 = random(tx::shape_t<3>{3, 4, 2}, g);
  check("index_select axis 1 of x * x", [&](auto p) { return tx::sum(tx::index_select(p * p, 1, rows) * v1); }, x);
  check("index_select axis -1, twice", [&](auto p) { return tx::sum(tx::index_select(p, -1, few) * v2) + tx::sum(tx::index_select(p, 1, rows) * v1); }, x);
  tx::tensor<std::int32_t, 3> each({3, 7, 5});
  for (tx::index_t i = 0; i < each.size(); ++i) each.data()[i] = static_cast<std::int32_t>((i * 3 + i / 7) % 4);
  auto v3 = random(tx::shape_t<3>{3, 7, 5}, g);
  check("gather axis 1", [&](auto p) { return tx::sum(tx::square(tx::gather(tx::tanh(p), 1, each)) * v3); }, x);
  auto m = random(tx::shape_t<2>{4, 5}, g);
  tx::tensor<std::int64_t, 2> down({2, 4}, {3, 0, 3, 1, 2, 2, 0, 3});
  check("gather axis 0 of a matmul (a computed operand)",
        [&](auto p) { return tx::sum(tx::square(tx::gather(tx::matmul(p, tx::transpose(p)), 0, down))); }, m);
  auto w = random(tx::shape_t<2>{7, 5}, g);
  tx::tensor<std::int32_t, 2> ids({2, 4}, {6, 0, 2, 2, 1, 6, 6, 0});
  auto v4 = random(tx::shape_t<3>{2, 4, 5}, g);
  check("embedding rank-2 indices", [&](auto p) { return tx::sum(tx::embedding(ids, p) * v4); }, w);
  check("embedding of an expression, squared", [&](auto p) { return tx::mean(tx::square(tx::embedding(ids, p * 2.0 + 1.0))); }, w);
  // Closed form: d sum(embedding(ids, w)) / dw[v, d] = the number of times v occurs in ids.
  auto pw = tx::param<struct em_count>(w);
  auto [gw] = tx::eval_all(tx::grad(tx::sum(tx::embedding(ids, pw)), pw));
  const double count[7] = {2, 1, 2, 0, 0, 0, 3};
  for (tx::index_t vv = 0; vv < 7; ++vv)
    for (tx::index_t d = 0; d < 5; ++d) CHECK(gw(vv, d) == count[vv]);
}
