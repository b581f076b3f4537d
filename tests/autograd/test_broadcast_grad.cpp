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
