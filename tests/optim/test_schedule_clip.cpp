// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::optim's learning-rate schedules against their closed forms, and clip_grad_norm against a hand computation.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <cmath>
#include <cstdint>
#include <numbers>
#include <tuple>

namespace tx = texpr;

static_assert(tx::optim::schedule<tx::optim::step_decay>);
static_assert(tx::optim::schedule<tx::optim::cosine_annealing>);
static_assert(tx::optim::schedule<tx::optim::linear_warmup>);
static_assert(tx::optim::schedule<tx::optim::warmup_cosine>);
static_assert(tx::optim::schedule<tx::optim::sequential<tx::optim::linear_warmup, tx::optim::step_decay>>);

TEST_CASE("step_decay: lr gamma^floor(step / step_size)") {
  const tx::optim::step_decay s{.lr = 0.1, .step_size = 30, .gamma = 0.5};
  for (std::int64_t t : {0, 1, 29, 30, 59, 60, 61, 95})
    CHECK(s(t) == doctest::Approx(0.1 * std::pow(0.5, static_cast<double>(t / 30))).epsilon(1e-15));
  CHECK(s(29) == 0.1);
  CHECK(s(30) == doctest::Approx(0.05));
}

TEST_CASE("cosine_annealing: min + (lr - min)(1 + cos(pi t / T)) / 2, held at min after T") {
  const tx::optim::cosine_annealing s{.lr = 0.1, .total_steps = 50, .min_lr = 0.001};
  for (std::int64_t t = 0; t <= 50; ++t)
    CHECK(s(t) == doctest::Approx(0.001 + 0.099 * (1 + std::cos(std::numbers::pi * static_cast<double>(t) / 50)) / 2).epsilon(1e-14));
  CHECK(s(0) == doctest::Approx(0.1).epsilon(1e-15));
  CHECK(s(25) == doctest::Approx(0.0505).epsilon(1e-14));
  CHECK(s(50) == doctest::Approx(0.001).epsilon(1e-15));
  CHECK(s(80) == doctest::Approx(0.001).epsilon(1e-15));
}

TEST_CASE("linear_warmup: a ramp from start_factor lr to lr, then lr") {
  const tx::optim::linear_warmup s{.lr = 0.2, .warmup_steps = 10};
  for (std::int64_t t = 0; t <= 10; ++t) CHECK(s(t) == doctest::Approx(0.2 * static_cast<double>(t) / 10).epsilon(1e-15));
  CHECK(s(0) == 0.0);
  CHECK(s(1000) == 0.2);
  const tx::optim::linear_warmup third{.lr = 0.3, .warmup_steps = 4, .start_factor = 1.0 / 3};
  CHECK(third(0) == doctest::Approx(0.1).epsilon(1e-15));
  CHECK(third(2) == doctest::Approx(0.3 * (1.0 / 3 + (2.0 / 3) * 0.5)).epsilon(1e-15));
  CHECK((tx::optim::linear_warmup{.lr = 0.3, .warmup_steps = 0})(0) == 0.3);
}

TEST_CASE("warmup_cosine: the linear ramp, then cosine annealing over the remaining steps") {
  const tx::optim::warmup_cosine s{.lr = 1e-3, .warmup_steps = 100, .total_steps = 1000, .min_lr = 1e-5};
  for (std::int64_t t = 0; t < 100; ++t) CHECK(s(t) == doctest::Approx(1e-3 * static_cast<double>(t) / 100).epsilon(1e-15));
  for (std::int64_t t = 100; t <= 1000; ++t) {
    const double progress = static_cast<double>(t - 100) / 900;
    CHECK(s(t) == doctest::Approx(1e-5 + (1e-3 - 1e-5) * (1 + std::cos(std::numbers::pi * progress)) / 2).epsilon(1e-14));
  }
  CHECK(s(100) == doctest::Approx(1e-3).epsilon(1e-15));  // the peak
  CHECK(s(2000) == doctest::Approx(1e-5).epsilon(1e-15));
  // It is the sequential composition of its two parts.
  const tx::optim::sequential<tx::optim::linear_warmup, tx::optim::cosine_annealing> composed{
      {.lr = 1e-3, .warmup_steps = 100}, 100, {.lr = 1e-3, .total_steps = 900, .min_lr = 1e-5}};
  for (std::int64_t t : {0, 50, 99, 100, 101, 550, 999, 1000}) CHECK(s(t) == composed(t));
}

TEST_CASE("clip_grad_norm: the global L2 norm, and a scale of max_norm / (norm + 1e-6) only when below 1") {
  SUBCASE("double: norm sqrt(3^2 + 4^2 + 12^2) = 13") {
    tx::tensor<double, 2> g1({1, 2}, {3.0, 4.0});
    tx::tensor<double, 1> g2({1}, {-12.0});
    CHECK(tx::optim::clip_grad_norm(std::tie(g1, g2), 20.0) == 13.0);  // below max_norm: untouched
    CHECK(g1(0, 1) == 4.0);
    CHECK(g2(0) == -12.0);
    CHECK(tx::optim::clip_grad_norm(std::tie(g1, g2), 6.5) == doctest::Approx(13.0).epsilon(1e-15));
    const double scale = 6.5 / (13.0 + 1e-6);
    CHECK(g1(0, 0) == doctest::Approx(3.0 * scale).epsilon(1e-15));
    CHECK(g1(0, 1) == doctest::Approx(4.0 * scale).epsilon(1e-15));
    CHECK(g2(0) == doctest::Approx(-12.0 * scale).epsilon(1e-15));
    // The clipped norm is max_norm, short by the 1e-6 guard.
    CHECK(tx::optim::clip_grad_norm(std::tie(g1, g2), 100.0) == doctest::Approx(6.5 * 13.0 / (13.0 + 1e-6)).epsilon(1e-14));
  }
  SUBCASE("float, a tuple from eval_all and a view: one reduction per gradient, one sync, one pass each") {
    tx::tensor<float, 2> x({2, 3}, {1, 2, 3, 4, 5, 6});
    auto p = tx::param<struct clip_x>(x);
    auto grads = tx::eval_all(tx::grad(tx::sum(p * p), p));  // d/dx = 2x: norm 2 sqrt(91)
    tx::tensor<float, 1> extra({2}, {0.5f, -0.5f});
    const double want = std::sqrt(4.0 * 91 + 0.5);
    CHECK(tx::optim::clip_grad_norm(grads, 100.0) == doctest::Approx(2 * std::sqrt(91.0)).epsilon(1e-6));
    tx::kernel_log log;
    const double norm = tx::optim::clip_grad_norm(std::tuple{std::get<0>(grads).view(), extra.view()}, 1.0);
    CHECK(norm == doctest::Approx(want).epsilon(1e-6));
    CHECK(log.count("pairwise_reduce") == 2);
    CHECK(log.syncs() == 0);  // a host read is no device wait
    CHECK(std::get<0>(grads)(1, 2) == doctest::Approx(12.0 / (want + 1e-6)).epsilon(1e-6));
    CHECK(extra(1) == doctest::Approx(-0.5 / (want + 1e-6)).epsilon(1e-6));
  }
}
