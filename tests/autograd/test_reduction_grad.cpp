// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients of sum, mean, max and min, over everything and along each axis, against finite differences.
#include "grad_check.hpp"

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("sum and mean over everything") {
  auto g = grad_check::rng(11);
  auto x = random(tx::shape_t<3>{2, 3, 4}, g);
  auto w = random(tx::shape_t<3>{2, 3, 4}, g);
  check("sum", [&](auto p) { return tx::sum(p * w); }, x);
  check("mean", [&](auto p) { return tx::mean(tx::tanh(p) * w); }, x);
  check("sum of a parameter itself", [&](auto p) { return tx::sum(p); }, x);
  check("mean of a parameter itself", [&](auto p) { return tx::mean(p); }, x);
  check("mean of a square", [&](auto p) { return tx::mean(tx::pow(p - w, 2)); }, x);
  check("nested", [&](auto p) { return tx::sum(p * w) * tx::mean(tx::exp(p)); }, x);
}

TEST_CASE("sum and mean along each axis of rank 2 and rank 3 inputs") {
  auto g = grad_check::rng(12);
  auto x2 = random(tx::shape_t<2>{3, 5}, g);
  auto x3 = random(tx::shape_t<3>{2, 3, 4}, g);
  auto v5 = random(tx::shape_t<1>{5}, g);
  auto v3 = random(tx::shape_t<1>{3}, g);
  auto m34 = random(tx::shape_t<2>{3, 4}, g);
  auto m24 = random(tx::shape_t<2>{2, 4}, g);
  auto m23 = random(tx::shape_t<2>{2, 3}, g);
  check("sum axis 0 (rank 2)", [&](auto p) { return tx::sum(tx::sum(p * p, 0) * v5); }, x2);
  check("sum axis 1 (rank 2)", [&](auto p) { return tx::sum(tx::sum(p * p, 1) * v3); }, x2);
  check("mean axis -1 (rank 2)", [&](auto p) { return tx::sum(tx::exp(tx::mean(p, -1)) * v3); }, x2);
  check("sum axis 0 (rank 3)", [&](auto p) { return tx::sum(tx::sum(tx::sigmoid(p), 0) * m34); }, x3);
  check("mean axis 1 (rank 3)", [&](auto p) { return tx::sum(tx::mean(p * p, 1) * m24); }, x3);
  check("sum axis 2 (rank 3)", [&](auto p) { return tx::sum(tx::tanh(tx::sum(p, 2)) * m23); }, x3);
  check("axis reduction of a parameter itself", [&](auto p) { return tx::sum(tx::sum(p, 1) * m24); }, x3);
  check("axis of rank 1 to rank 0", [&](auto p) { return tx::mean(p, 0) * tx::sum(p, 0); }, v5);
}

TEST_CASE("max and min pass the gradient to the extreme element") {
  auto g = grad_check::rng(13);
  auto x = random(tx::shape_t<2>{4, 5}, g);  // continuous random values: no ties
  auto w = random(tx::shape_t<2>{4, 5}, g);
  auto v4 = random(tx::shape_t<1>{4}, g);
  auto v5 = random(tx::shape_t<1>{5}, g);
  check("max", [&](auto p) { return tx::max(p * w); }, x);
  check("min", [&](auto p) { return tx::min(p * w); }, x);
  check("max axis 1", [&](auto p) { return tx::sum(tx::max(p, 1) * v4); }, x);
  check("min axis 0", [&](auto p) { return tx::sum(tx::min(p * w, 0) * v5); }, x);
}

TEST_CASE("max shares the subgradient equally among ties") {
  tx::tensor<double, 1> x({4}, {1.0, 3.0, 3.0, -2.0});
  auto p = tx::param<struct tie>(x);
  auto [gx] = tx::eval_all(tx::grad(tx::max(p), p));
  CHECK(gx(0) == 0.0);
  CHECK(gx(1) == 0.5);
  CHECK(gx(2) == 0.5);
  CHECK(gx(3) == 0.0);
}
