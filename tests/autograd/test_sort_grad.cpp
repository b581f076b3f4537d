// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients through sort and tx::topk's values, along each axis and in both orders, against central differences
// (distinct values, so that no step crosses a tie); the scatter that carries them back checked exactly on ties.
#include "grad_check.hpp"

#include <texpr/sort.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

namespace {
/// Spreads a tensor's values apart (no two within 1e-3), so that finite differences never reorder them.
template <std::size_t R> void spread(tx::tensor<double, R>& x) {
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] += 0.01 * static_cast<double>(i);
}
}  // namespace

TEST_CASE("sort: g goes back to where each value came from, along each axis, ascending and descending") {
  auto g = grad_check::rng(41);
  auto x = random(tx::shape_t<3>{2, 5, 4}, g);
  spread(x);
  auto w = random(tx::shape_t<3>{2, 5, 4}, g);
  for (tx::index_t axis : {0, 1, 2, -1})
    for (bool descending : {false, true})
      check("sort axis " + std::to_string(axis) + (descending ? " descending" : ""),
            [&](auto p) { return tx::sum(tx::sort(p * p, axis, descending) * w); }, x);
  check("sort of a sort", [&](auto p) { return tx::sum(tx::sort(tx::sort(p, 1) * w, 2)); }, x);
}

TEST_CASE("topk: the values' gradient goes to their positions, nothing to the others") {
  auto g = grad_check::rng(42);
  auto x = random(tx::shape_t<2>{3, 9}, g);
  spread(x);
  auto w = random(tx::shape_t<2>{3, 4}, g);
  auto wt = random(tx::shape_t<2>{2, 9}, g);
  for (bool largest : {true, false}) {
    check(std::string("topk 4 along 1") + (largest ? "" : " smallest"), [&](auto p) {
      auto [values, indices] = tx::topk(tx::tanh(p), 4, 1, largest);
      (void)indices;
      return tx::sum(values * w);
    }, x);
    check(std::string("topk 2 along 0") + (largest ? "" : " smallest"), [&](auto p) {
      auto [values, indices] = tx::topk(p, 2, 0, largest);
      (void)indices;
      return tx::sum(values * wt);
    }, x);
  }
}

TEST_CASE("sort's gradient on ties: each equal value gets the g of the place it was sorted to") {
  tx::tensor<double, 1> t({5}, {2, 1, 2, 1, 2});
  tx::tensor<double, 1> weights({5}, {10, 20, 30, 40, 50});  // place i's gradient
  auto p = tx::param<grad_check::tag<0>>(t);
  const auto [dx] = tx::eval_all(tx::grad(tx::sum(tx::sort(p, 0) * weights), p));
  // stable order: 1 (pos 1), 1 (pos 3), 2 (pos 0), 2 (pos 2), 2 (pos 4)
  const std::vector<double> want{30, 10, 40, 20, 50};
  for (int i = 0; i < 5; ++i) CHECK(dx(i) == want[static_cast<std::size_t>(i)]);
}
