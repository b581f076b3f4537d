// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients of matmul (rank 2 and batched) against finite differences.
#include "grad_check.hpp"

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("rank-2 matmul, both operands") {
  auto g = grad_check::rng(21);
  auto a = random(tx::shape_t<2>{3, 4}, g);
  auto b = random(tx::shape_t<2>{4, 5}, g);
  auto w = random(tx::shape_t<2>{3, 5}, g);
  check("matmul", [&](auto x, auto y) { return tx::sum(tx::matmul(x, y) * w); }, a, b);
  check("matmul of expressions", [&](auto x, auto y) { return tx::sum(tx::tanh(tx::matmul(tx::exp(x) - 1, y * y)) * w); }, a, b);
  auto sq = random(tx::shape_t<2>{4, 4}, g);
  auto wsq = random(tx::shape_t<2>{4, 4}, g);
  check("matmul of a parameter by itself", [&](auto x) { return tx::sum(tx::matmul(x, x) * wsq); }, sq);
}

TEST_CASE("chained matmuls, the two-layer perceptron shape") {
  auto g = grad_check::rng(22);
  auto x = random(tx::shape_t<2>{6, 4}, g);
  auto y = random(tx::shape_t<2>{6, 2}, g);
  auto w1 = random(tx::shape_t<2>{4, 5}, g, -1, 1);
  auto b1 = random(tx::shape_t<1>{5}, g, -1, 1);
  auto w2 = random(tx::shape_t<2>{5, 2}, g, -1, 1);
  auto b2 = random(tx::shape_t<1>{2}, g, -1, 1);
  check("mlp", [&](auto W1, auto B1, auto W2, auto B2) {
    auto h = tx::elu(tx::matmul(x, W1) + B1);
    return tx::mean(tx::pow(tx::matmul(h, W2) + B2 - y, 2));
  }, w1, b1, w2, b2);
}

TEST_CASE("batched matmul: rank 3 x rank 3, rank 3 x rank 2, rank 2 x rank 3") {
  auto g = grad_check::rng(23);
  auto a3 = random(tx::shape_t<3>{2, 3, 4}, g);
  auto b3 = random(tx::shape_t<3>{2, 4, 5}, g);
  auto a2 = random(tx::shape_t<2>{3, 4}, g);
  auto b2 = random(tx::shape_t<2>{4, 5}, g);
  auto w = random(tx::shape_t<3>{2, 3, 5}, g);
  check("3x3", [&](auto x, auto y) { return tx::sum(tx::matmul(x, y) * w); }, a3, b3);
  check("3x2 (shared right matrix)", [&](auto x, auto y) { return tx::sum(tx::matmul(x, y) * w); }, a3, b2);
  check("2x3 (shared left matrix)", [&](auto x, auto y) { return tx::sum(tx::matmul(x, y) * w); }, a2, b3);
}

TEST_CASE("matmul whose result is broadcast: the incoming gradient is summed first") {
  auto g = grad_check::rng(24);
  auto a = random(tx::shape_t<2>{3, 4}, g);
  auto col = random(tx::shape_t<2>{4, 1}, g);
  auto w = random(tx::shape_t<2>{3, 5}, g);
  // matmul(a, col) is (3, 1) and broadcasts against (3, 5).
  check("broadcast matmul", [&](auto x, auto c) { return tx::sum((tx::matmul(x, c) + w) * w); }, a, col);
}
