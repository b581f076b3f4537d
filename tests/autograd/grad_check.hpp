// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradient checking for the autograd tests: analytic gradients (tx::grad) against central finite
// differences in double, on random inputs from a fixed seed.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>

#include <doctest/doctest.h>
#include <texpr/texpr.hpp>

namespace grad_check {

namespace tx = texpr;

/// Finite-difference step and tolerance: |analytic - fd| <= tolerance * (1 + |fd|). With h = 1e-5 the
/// central difference's truncation error is ~h^2 |f'''| ~ 1e-10 and its rounding error ~1e-16 |f| / h ~ 1e-11
/// on these O(1)-valued losses, so 1e-6 leaves a wide margin while catching any wrong rule.
inline constexpr double step = 1e-5;
inline constexpr double tolerance = 1e-6;

/// One generator per test, fixed seed: failures reproduce.
inline std::mt19937_64 rng(std::uint64_t seed = 20240607) { return std::mt19937_64(seed); }

/// A tensor of uniform values in [lo, hi]; with `gap`, values in (-gap, gap) are pushed out of it, so kinks
/// of abs/relu/elu/where at 0 stay farther than the finite-difference step.
template <std::size_t R>
tx::tensor<double, R> random(const tx::shape_t<R>& shape, std::mt19937_64& g, double lo = -2, double hi = 2,
                             double gap = 0) {
  tx::tensor<double, R> t(shape);
  std::uniform_real_distribution<double> u(lo, hi);
  for (tx::index_t i = 0; i < t.size(); ++i) {
    double v = u(g);
    while (std::abs(v) < gap) v = u(g);
    t.data()[i] = v;
  }
  return t;
}

template <int I> struct tag {};

/// Checks every element of every parameter's gradient of make(params...) against central differences.
/// `make` receives tx::param leaves over `tensors` and returns a rank-0 double loss.
template <class Make, class... Tensors>
void check_with(double tol, const std::string& what, Make make, Tensors&... tensors) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto params = std::make_tuple(tx::param<tag<static_cast<int>(I)>>(tensors)...);
    auto loss = make(std::get<I>(params)...);
    auto grads = tx::eval_all(tx::grad(loss, std::get<I>(params)...));
    auto one = [&](auto& t, const auto& gr, std::size_t which) {
      REQUIRE(gr.shape() == t.shape());
      for (tx::index_t i = 0; i < t.size(); ++i) {
        const double v = t.data()[i];
        t.data()[i] = v + step;
        const double up = tx::eval(loss).item();
        t.data()[i] = v - step;
        const double down = tx::eval(loss).item();
        t.data()[i] = v;
        const double fd = (up - down) / (2 * step);
        const double an = gr.data()[i];
        INFO(what << ": parameter " << which << ", element " << i << ": analytic " << an << ", finite difference " << fd);
        CHECK(std::abs(an - fd) <= tol * (1 + std::abs(fd)));
      }
    };
    (one(tensors, std::get<I>(grads), I), ...);
  }(std::index_sequence_for<Tensors...>{});
}

/// check() with the default tolerance.
template <class Make, class... Tensors> void check(const std::string& what, Make make, Tensors&... tensors) {
  check_with(tolerance, what, make, tensors...);
}

} // namespace grad_check
