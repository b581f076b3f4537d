// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients of the ops models are built from: var, stddev, logsumexp, softmax, log_softmax, cross_entropy (its
// one-node gradient at extreme logits too),
// concat and the layout views, against finite differences.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "grad_check.hpp"

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("var and stddev, over everything and along an axis, with ddof and keepdims") {
  auto g = grad_check::rng(31);
  auto x = random(tx::shape_t<2>{4, 5}, g);
  auto w4 = random(tx::shape_t<1>{4}, g);
  auto w5 = random(tx::shape_t<1>{5}, g);
  check("var", [&](auto p) { return tx::var(p * p); }, x);
  check("stddev", [&](auto p) { return tx::stddev(p); }, x);
  check("var axis 1", [&](auto p) { return tx::sum(tx::var(p, 1) * w4); }, x);
  check("var axis 0 ddof 1", [&](auto p) { return tx::sum(tx::var(p, 0, 1) * w5); }, x);
  check("stddev axis -1 ddof 1", [&](auto p) { return tx::sum(tx::stddev(tx::exp(p), -1, 1) * w4); }, x);
  check("layer norm (keepdims)", [&](auto p) {
    auto m = tx::mean(p, 1, tx::keepdims);
    auto s = tx::sqrt(tx::var(p, 1, tx::keepdims) + 1e-5);
    return tx::sum(((p - m) / s) * w5);
  }, x);
}

TEST_CASE("logsumexp, softmax and log_softmax along either axis") {
  auto g = grad_check::rng(32);
  auto x = random(tx::shape_t<2>{3, 6}, g, -3, 3);
  auto w = random(tx::shape_t<2>{3, 6}, g);
  auto w3 = random(tx::shape_t<1>{3}, g);
  check("logsumexp over everything", [&](auto p) { return tx::logsumexp(p * 2.0); }, x);
  check("logsumexp axis 1", [&](auto p) { return tx::sum(tx::logsumexp(p, 1) * w3); }, x);
  check("softmax axis -1", [&](auto p) { return tx::sum(tx::softmax(p, -1) * w); }, x);
  check("softmax axis 0", [&](auto p) { return tx::sum(tx::softmax(p, 0) * w); }, x);
  check("log_softmax axis 1", [&](auto p) { return tx::sum(tx::log_softmax(p, 1) * w); }, x);
  // Large logits: the gradient stays finite and correct (exp(1000) would overflow a naive softmax).
  auto big = random(tx::shape_t<2>{3, 6}, g, 995, 1000);
  check("softmax of logits near 1000", [&](auto p) { return tx::sum(tx::softmax(p, 1) * w); }, big);
}

TEST_CASE("cross_entropy against integer labels: gradient (softmax - one_hot) / batch") {
  auto g = grad_check::rng(33);
  auto z = random(tx::shape_t<2>{5, 4}, g, -3, 3);
  tx::tensor<std::int64_t, 1> labels({5}, {3, 0, 2, 2, 1});
  tx::tensor<std::int32_t, 1> labels32({5}, {1, 1, 0, 3, 2});
  check("cross_entropy int64", [&](auto p) { return tx::cross_entropy(p, labels); }, z);
  check("cross_entropy int32 of a product", [&](auto p) { return tx::cross_entropy(p * p, labels32); }, z);
  // The closed form, elementwise.
  auto p = tx::param<struct ce_closed>(z);
  auto [gz] = tx::eval_all(tx::grad(tx::cross_entropy(p, labels), p));
  tx::tensor<double, 2> want = (tx::softmax(z, 1) - tx::one_hot<double>(labels, 4)) / 5.0;
  for (tx::index_t i = 0; i < z.size(); ++i) CHECK(std::abs(gz.data()[i] - want.data()[i]) <= 1e-14);
}

TEST_CASE("cross_entropy's gradient as one node: an incoming gradient that is not a constant, or a folded one") {
  auto g = grad_check::rng(36);
  auto z = random(tx::shape_t<2>{6, 5}, g, -3, 3);
  auto w = random(tx::shape_t<2>{6, 5}, g);
  tx::tensor<std::int64_t, 1> labels({6}, {4, 0, 2, 2, 1, 3});
  tx::tensor<std::int32_t, 1> labels32({6}, {1, 1, 0, 3, 2, 4});
  // g = sum(p * w) reaches cross_entropy_grad as an operand; 3 and -0.25 are folded into its scale.
  check("cross_entropy times a computed scalar", [&](auto p) { return tx::cross_entropy(p, labels) * tx::sum(p * w); }, z);
  check("cross_entropy times a constant", [&](auto p) { return tx::cross_entropy(p * 2.0, labels32) * 3.0; }, z);
  check("cross_entropy in a sum", [&](auto p) { return tx::cross_entropy(p, labels) * -0.25 + tx::sum(tx::tanh(p) * w); }, z);
  auto p = tx::param<struct ce_node>(z);
  const auto grads = tx::grad(tx::cross_entropy(p, labels), p);
  CHECK(tx::placement(std::get<0>(grads)).find("cross_entropy_grad") != std::string::npos);
}

/// The long double softmax cross-entropy gradient of rows z (classes c) against labels l, times factor / rows:
/// exp(z - logsumexp(z)) - one_hot(l), a label outside [0, c) matching no column, evaluated the textbook way
/// (a NaN in a row makes the row NaN; an infinite maximum is not subtracted, as inf - inf would be NaN).
template <class L>
std::vector<long double> reference_dlogits(const tx::tensor<double, 2>& z, const tx::tensor<L, 1>& l, long double factor) {
  const tx::index_t rows = z.shape()[0], c = z.shape()[1];
  std::vector<long double> out(static_cast<std::size_t>(rows * c));
  for (tx::index_t i = 0; i < rows; ++i) {
    long double m = -INFINITY;
    bool nan = false;
    for (tx::index_t j = 0; j < c; ++j) {
      nan = nan || std::isnan(z(i, j));
      m = std::max(m, static_cast<long double>(z(i, j)));
    }
    const long double shift = std::isfinite(m) ? m : 0;
    long double s = 0;
    for (tx::index_t j = 0; j < c; ++j) s += std::exp(static_cast<long double>(z(i, j)) - shift);
    const long double lse = nan ? NAN : std::log(s) + shift;
    for (tx::index_t j = 0; j < c; ++j)
      out[static_cast<std::size_t>(i * c + j)] =
          (std::exp(static_cast<long double>(z(i, j)) - lse) - (l(i) == j ? 1 : 0)) * factor / rows;
  }
  return out;
}

TEST_CASE("cross_entropy's gradient at extreme logits and labels outside the classes, against long double") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Rows: ordinary; near 1e4 (exp overflows without the shift); near -1e4; one +inf logit; a -inf logit; all
  // -inf; a NaN; labels -1, 5 (= classes) and 2^40 (outside: the row is the softmax, no one_hot entry).
  tx::tensor<double, 2> z({10, 5}, {0.5, -1.25, 2.0, 0.0, 1.0,
                                    1e4, 1e4 - 1, 1e4 + 2, 1e4 - 30, 1e4,
                                    -1e4, -1e4 - 3, -1e4 + 1, -1e4, -1e4 - 0.5,
                                    1.0, inf, 2.0, -3.0, 0.0,
                                    1.0, -inf, 2.0, -3.0, 0.0,
                                    -inf, -inf, -inf, -inf, -inf,
                                    1.0, nan, 2.0, -3.0, 0.0,
                                    0.25, -0.5, 3.0, 1.0, -2.0,
                                    0.25, -0.5, 3.0, 1.0, -2.0,
                                    700.0, -700.0, 0.0, 709.0, 1.0});
  tx::tensor<std::int64_t, 1> labels({10}, {2, 4, 1, 0, 0, 3, 0, -1, 5, std::int64_t{1} << 40});
  auto p = tx::param<struct ce_extreme>(z);
  for (const double factor : {1.0, -2.5}) {
    auto [gz] = tx::eval_all(tx::grad(tx::cross_entropy(p, labels) * factor, p));
    // The formula the rule used to compose from primitives, for NaN and value agreement.
    const tx::tensor<double, 2> composed =
        factor * (tx::exp(z - tx::logsumexp(z, 1, tx::keepdims)) - tx::one_hot<double>(labels, 5)) / 10.0;
    const auto want = reference_dlogits(z, labels, factor);
    for (tx::index_t i = 0; i < z.size(); ++i) {
      INFO("factor " << factor << " element " << i << " (row " << i / 5 << ")");
      const long double got = gz.data()[i];
      if (std::isnan(want[static_cast<std::size_t>(i)])) {
        CHECK(std::isnan(got));
      } else {
        CHECK(std::isfinite(got));
        // Rows near 1e4 lose |z| * 2^-53 in z - logsumexp(z); elsewhere a few ulps.
        const long double tol = 1e-12L * std::max(1.0L, std::fabs(static_cast<long double>(z.data()[i])));
        CHECK(std::fabs(got - want[static_cast<std::size_t>(i)]) <= tol);
      }
      CHECK(std::isnan(got) == std::isnan(composed.data()[i]));
      if (!std::isnan(got)) CHECK(std::fabs(got - composed.data()[i]) <= 1e-12L * std::max(1.0L, std::fabs(static_cast<long double>(z.data()[i]))));
    }
    // The special rows, stated: a +inf logit gives NaN there and 0 elsewhere (minus the one_hot entry); a -inf
    // logit gets 0; an all -inf or a NaN row is NaN; a row with a label outside sums to factor / 10, not 0.
    CHECK(std::isnan(gz(3, 1)));
    CHECK(std::fabs(gz(3, 0) + factor / 10) <= 1e-15);
    CHECK(gz(3, 2) == 0.0);
    CHECK(gz(4, 1) == 0.0);
    CHECK(std::fabs(gz(4, 0) - (std::exp(1.0L - std::log(std::exp(1.0L) + std::exp(2.0L) + std::exp(-3.0L) + 1)) - 1) * factor / 10) <= 1e-15);
    for (tx::index_t j = 0; j < 5; ++j) CHECK(std::isnan(gz(5, j)));
    for (tx::index_t j = 0; j < 5; ++j) CHECK(std::isnan(gz(6, j)));
    for (tx::index_t r : {7, 8, 9}) {
      long double row = 0;
      for (tx::index_t j = 0; j < 5; ++j) row += gz(r, j);
      CHECK(std::fabs(row - factor / 10) <= 1e-14);
    }
  }
  // int32 labels, one of them negative: the same gradient as int64.
  tx::tensor<std::int32_t, 1> labels32({10}, {2, 4, 1, 0, 1, 3, 0, -1, 5, 7});
  tx::tensor<std::int64_t, 1> labels64({10}, {2, 4, 1, 0, 1, 3, 0, -1, 5, 7});
  auto [g32] = tx::eval_all(tx::grad(tx::cross_entropy(p, labels32), p));
  auto [g64] = tx::eval_all(tx::grad(tx::cross_entropy(p, labels64), p));
  for (tx::index_t i = 0; i < z.size(); ++i)
    CHECK((std::isnan(g32.data()[i]) ? std::isnan(g64.data()[i]) : g32.data()[i] == g64.data()[i]));
}

TEST_CASE("concat passes each operand its slice of the gradient") {
  auto g = grad_check::rng(34);
  auto a = random(tx::shape_t<2>{3, 2}, g);
  auto b = random(tx::shape_t<2>{3, 4}, g);
  auto c = random(tx::shape_t<2>{2, 6}, g);
  auto w = random(tx::shape_t<2>{5, 6}, g);
  check("concat axis 1 then axis 0", [&](auto pa, auto pb, auto pc) {
    return tx::sum(tx::concat(0, tx::concat(-1, tx::tanh(pa), pb * pb), pc) * w);
  }, a, b, c);
}

TEST_CASE("layout views pass the gradient back through the inverse layout") {
  auto g = grad_check::rng(35);
  auto x = random(tx::shape_t<3>{2, 3, 4}, g);
  auto w = random(tx::shape_t<3>{4, 3, 2}, g);
  auto m = random(tx::shape_t<2>{4, 6}, g);
  check("transpose", [&](auto p) { return tx::sum(tx::transpose(p) * tx::permute(w, {2, 0, 1})); }, x);
  check("permute", [&](auto p) { return tx::sum(tx::permute(p, {2, 1, 0}) * w); }, x);
  check("reshape", [&](auto p) { return tx::sum(tx::reshape(p * p, {4, 6}) * m); }, x);
  check("unsqueeze / squeeze", [&](auto p) { return tx::sum(tx::squeeze(tx::unsqueeze(p, 1), 1) * tx::permute(w, {2, 1, 0})); }, x);
}
