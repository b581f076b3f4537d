// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients of the scans (cumsum, cummax, cummin, logcumsumexp) along each axis, forwards and reversed, against
// central differences; cummax's routing of ties checked exactly; logcumsumexp at magnitudes where exp overflows.
#include "grad_check.hpp"

#include <cmath>
#include <vector>

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("cumsum: along each axis of a rank-3 input, forwards and reversed") {
  auto g = grad_check::rng(31);
  auto x = random(tx::shape_t<3>{2, 3, 4}, g);
  auto w = random(tx::shape_t<3>{2, 3, 4}, g);
  for (tx::index_t axis : {0, 1, 2, -1}) {
    check("cumsum axis " + std::to_string(axis), [&](auto p) { return tx::sum(tx::cumsum(p * p, axis) * w); }, x);
    check("cumsum reversed axis " + std::to_string(axis),
          [&](auto p) { return tx::sum(tx::cumsum(tx::tanh(p), axis, tx::reversed) * w); }, x);
  }
  check("cumsum of a cumsum", [&](auto p) { return tx::sum(tx::cumsum(tx::cumsum(p, 1), 2) * w); }, x);
}

TEST_CASE("cummax and cummin: g reaches the first position of each prefix's extreme") {
  auto g = grad_check::rng(32);
  // distinct values, so that no finite-difference step crosses a tie
  auto x = random(tx::shape_t<2>{3, 7}, g);
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] += 0.01 * static_cast<double>(i % 7);
  auto w = random(tx::shape_t<2>{3, 7}, g);
  for (tx::index_t axis : {0, 1}) {
    check("cummax axis " + std::to_string(axis), [&](auto p) { return tx::sum(tx::cummax(p, axis) * w); }, x);
    check("cummin axis " + std::to_string(axis), [&](auto p) { return tx::sum(tx::cummin(p * 3, axis) * w); }, x);
    check("cummax reversed axis " + std::to_string(axis),
          [&](auto p) { return tx::sum(tx::cummax(p, axis, tx::reversed) * w); }, x);
  }

  // ties: the gradient is a subgradient that puts each result's g at the first position of its maximum
  tx::tensor<double, 1> t({6});
  const double v[] = {1, 3, 3, 2, 3, 5};
  for (int i = 0; i < 6; ++i) t(i) = v[i];
  auto p = tx::param<grad_check::tag<0>>(t);
  tx::tensor<double, 1> weights({6});
  for (int i = 0; i < 6; ++i) weights(i) = i + 1;  // result i's gradient is i + 1
  const auto [dx] = tx::eval_all(tx::grad(tx::sum(tx::cummax(p, 0) * weights), p));
  const std::vector<double> want{1, 2 + 3 + 4 + 5, 0, 0, 0, 6};
  for (int i = 0; i < 6; ++i) CHECK(dx(i) == want[static_cast<std::size_t>(i)]);
}

TEST_CASE("logcumsumexp: ordinary values, and values where exp overflows") {
  auto g = grad_check::rng(33);
  auto x = random(tx::shape_t<2>{3, 5}, g);
  auto w = random(tx::shape_t<2>{3, 5}, g);  // of both signs: the rule's two halves
  for (tx::index_t axis : {0, 1})
    check("logcumsumexp axis " + std::to_string(axis), [&](auto p) { return tx::sum(tx::logcumsumexp(p, axis) * w); }, x);
  check("logcumsumexp reversed", [&](auto p) { return tx::sum(tx::logcumsumexp(p, 1, tx::reversed) * w); }, x);
  auto big = random(tx::shape_t<1>{6}, g, 700, 720);  // exp(710) overflows double
  auto wb = random(tx::shape_t<1>{6}, g);
  check("logcumsumexp near exp's overflow", [&](auto p) { return tx::sum(tx::logcumsumexp(p, 0) * wb); }, big);
}

TEST_CASE("cumprod: exact with zeros in x (no division), along each axis, forwards and reversed") {
  auto g = grad_check::rng(34);
  auto x = random(tx::shape_t<3>{2, 3, 5}, g);
  auto w = random(tx::shape_t<3>{2, 3, 5}, g);
  for (tx::index_t axis : {0, 1, 2}) {
    check("cumprod axis " + std::to_string(axis), [&](auto p) { return tx::sum(tx::cumprod(p, axis) * w); }, x);
    check("cumprod reversed axis " + std::to_string(axis),
          [&](auto p) { return tx::sum(tx::cumprod(tx::sin(p), axis, tx::reversed) * w); }, x);
  }
  // zeros, one and two in a line: a division by x would give NaN or lose the terms that skip the zero
  tx::tensor<double, 1> z({6}, {1.5, 0.0, -2.0, 0.0, 3.0, 0.5});
  tx::tensor<double, 1> wz({6}, {1, 2, 3, 4, 5, 6});
  auto p = tx::param<grad_check::tag<0>>(z);
  const auto [dx] = tx::eval_all(tx::grad(tx::sum(tx::cumprod(p, 0) * wz), p));
  // d/dx_k sum_i w_i prod_{j<=i} x_j = sum_{i>=k} w_i prod_{j<=i, j!=k} x_j, by hand:
  //   k = 0: w0 + w1 x1 + ... = 1 + 0 = 1;   k = 1: w1 x0 + w2 x0 x2 = 2 * 1.5 + 3 * 1.5 * -2 = -6
  //   k = 2, 4, 5: every term holds x1 = 0: 0;   k = 3: every term holds x1 too: 0
  const double want[] = {1, -6, 0, 0, 0, 0};
  for (int i = 0; i < 6; ++i) CHECK(dx(i) == want[i]);
}

TEST_CASE("linear_recurrence: gradients to the coefficients and the terms, both directions") {
  auto g = grad_check::rng(35);
  auto a = random(tx::shape_t<2>{3, 6}, g, -0.9, 0.9);
  auto b = random(tx::shape_t<2>{3, 6}, g);
  auto w = random(tx::shape_t<2>{3, 6}, g);
  for (tx::index_t axis : {0, 1}) {
    check("linear_recurrence axis " + std::to_string(axis),
          [&](auto p, auto q) { return tx::sum(tx::linear_recurrence(p, q * q, axis) * w); }, a, b);
    check("linear_recurrence reversed axis " + std::to_string(axis),
          [&](auto p, auto q) { return tx::sum(tx::tanh(tx::linear_recurrence(tx::sin(p), q, axis, tx::reversed)) * w); }, a, b);
  }
}
