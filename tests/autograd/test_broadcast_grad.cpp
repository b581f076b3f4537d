// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients of broadcast parameters are summed back to the parameter's shape.
#include "grad_check.hpp"

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("bias-like parameters: missing leading dimensions") {
  auto g = grad_check::rng(31);
  auto x = random(tx::shape_t<2>{3, 4}, g);
  auto b = random(tx::shape_t<1>{4}, g);
  auto w = random(tx::shape_t<2>{3, 4}, g);
  check("(4,) + (3, 4)", [&](auto p) { return tx::sum(tx::tanh(x + p) * w); }, b);
  check("(4,) * (3, 4), both parameters", [&](auto p, auto q) { return tx::sum(tx::exp(q * p) * w); }, b, x);
  auto x3 = random(tx::shape_t<3>{2, 3, 4}, g);
  auto w3 = random(tx::shape_t<3>{2, 3, 4}, g);
  check("(4,) into (2, 3, 4)", [&](auto p) { return tx::sum(tx::sigmoid(x3 * p) * w3); }, b);
  check("(3, 4) into (2, 3, 4)", [&](auto p) { return tx::sum(tx::sigmoid(x3 - p) * w3); }, x);
}

TEST_CASE("size-1 dimensions") {
  auto g = grad_check::rng(32);
  auto x = random(tx::shape_t<2>{3, 4}, g);
  auto w = random(tx::shape_t<2>{3, 4}, g);
  auto col = random(tx::shape_t<2>{3, 1}, g);
  auto row = random(tx::shape_t<2>{1, 4}, g);
  check("(3, 1)", [&](auto p) { return tx::sum(tx::exp(x * p) * w); }, col);
  check("(1, 4)", [&](auto p) { return tx::sum(tx::exp(x * p) * w); }, row);
  check("(3, 1) x (1, 4) outer sum", [&](auto p, auto q) { return tx::sum(tx::tanh(p + q) * w); }, col, row);
  auto x3 = random(tx::shape_t<3>{2, 3, 4}, g);
  auto w3 = random(tx::shape_t<3>{2, 3, 4}, g);
  auto mid = random(tx::shape_t<3>{2, 1, 4}, g);
  check("(2, 1, 4) into (2, 3, 4)", [&](auto p) { return tx::sum(x3 * p * p * w3); }, mid);
  check("(3, 1) into (2, 3, 4)", [&](auto p) { return tx::sum(x3 / (p * p + 1) * w3); }, col);
}

TEST_CASE("rank-0 parameters and parameters broadcast through reductions") {
  auto g = grad_check::rng(33);
  auto s = random(tx::shape_t<0>{}, g);
  auto x = random(tx::shape_t<2>{3, 4}, g);
  auto w = random(tx::shape_t<2>{3, 4}, g);
  check("scalar parameter", [&](auto p) { return tx::sum(tx::tanh(x * p) * w); }, s);
  auto b = random(tx::shape_t<1>{4}, g);
  check("broadcast then reduce along an axis", [&](auto p) { return tx::sum(tx::exp(tx::mean(x + p, 1))); }, b);
  auto q = random(tx::shape_t<2>{2, 4}, g);
  check("a reduction result broadcast again", [&](auto p) { return tx::sum(tx::sum(p, 0) * x * w); }, q);
}

TEST_CASE("a parameter used with and without broadcasting: each contribution is summed once") {
  auto g = grad_check::rng(36);
  auto x = random(tx::shape_t<2>{4, 3}, g);
  auto b = random(tx::shape_t<1>{3}, g);
  auto m = random(tx::shape_t<2>{3, 3}, g);
  auto w = random(tx::shape_t<2>{4, 3}, g);
  // d/db (sum(x * b) + sum(b)) = column sums of x + 1 (the second term was once counted 4 times).
  tx::tensor<double, 2> xs({4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  tx::tensor<double, 1> bs({3}, {0.5, -1, 2});
  auto pb = tx::param<struct twice_b>(bs);
  auto [gb] = tx::eval_all(tx::grad(tx::sum(xs * pb) + tx::sum(pb), pb));
  CHECK(gb(0) == 23);
  CHECK(gb(1) == 27);
  CHECK(gb(2) == 31);
  check("broadcast and reduced", [&](auto p) { return tx::sum(tx::tanh(x * p) * w) + tx::sum(tx::exp(p)); }, b);
  check("broadcast and through a matmul", [&](auto p) { return tx::sum((tx::matmul(x, tx::unsqueeze(p, 1) * m) + p) * w); }, b);
  check("rank 3, 2 and 1 uses", [&](auto p) {
    return tx::sum(tx::sigmoid(tx::unsqueeze(x, 0) * p) * 0.5) + tx::sum(tx::tanh(x - p) * w) + tx::sum(p * p);
  }, b);
  // Same rank, different shapes: a (1, 3) parameter broadcast by one use and not by the other; each contribution is
  // summed to the parameter's shape where it arrives. d/dr (sum(xs * r) + sum(r * r)) = column sums of xs + 2 r.
  tx::tensor<double, 2> row({1, 3}, {1, 2, 3});
  auto pr = tx::param<struct row_p>(row);
  auto [gr] = tx::eval_all(tx::grad(tx::sum(xs * pr) + tx::sum(pr * pr), pr));
  CHECK(gr(0, 0) == 22 + 2);
  CHECK(gr(0, 1) == 26 + 4);
  CHECK(gr(0, 2) == 30 + 6);
  auto r = random(tx::shape_t<2>{1, 3}, g);
  check("extent-1 axis broadcast by one use only", [&](auto p) { return tx::sum(tx::tanh(x * p) * w) + tx::sum(p * p * p); }, r);
}
