// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Accuracy of host float/double reductions on adversarial data against long double, with the documented
// bound (16 + ceil(log2(n/256))) * eps * sum|x|; a naive float loop on the same data must exceed it.
#include <algorithm>
#include <random>

#include "common.hpp"

namespace {

using rel::ld;

struct dataset {
  const char* name;
  std::vector<float> x;
  bool naive_fails;  // the naive float loop is expected to exceed the bound on this data
};

// 10^7 elements in normal builds, 10^6 under sanitizers.
tx::index_t big_n() { return rel::heavy<tx::index_t>(10'000'000, 1'000'000); }

std::vector<dataset> adversarial(tx::index_t n) {
  std::mt19937_64 g(20240601);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), pos(0.5f, 1.0f);
  std::vector<dataset> out;
  {  // A large constant offset: the naive running sum outgrows the terms and rounds each addition away.
    dataset d{"constant offset 1000 + U(-1,1)", std::vector<float>(static_cast<std::size_t>(n)), true};
    for (auto& v : d.x) v = 1000.0f + u(g);
    out.push_back(std::move(d));
  }
  {  // Many small terms after one large one: the naive loop drops every small term.
    dataset d{"1.0 then n-1 terms of U(0, 2e-8)", std::vector<float>(static_cast<std::size_t>(n)), true};
    std::uniform_real_distribution<float> tiny(0.0f, 2e-8f);
    d.x[0] = 1.0f;
    for (std::size_t i = 1; i < d.x.size(); ++i) d.x[i] = tiny(g);
    out.push_back(std::move(d));
  }
  {  // Large magnitudes that cancel: all positives first, then their negatives, plus small noise.
    dataset d{"+-1e6 * U(0.5,1) cancelling halves + U(-1,1)", std::vector<float>(static_cast<std::size_t>(n)), true};
    const std::size_t h = d.x.size() / 2;
    for (std::size_t i = 0; i < h; ++i) {
      const float m = 1e6f * pos(g);
      d.x[i] = m + u(g);
      d.x[h + i] = -m + u(g);
    }
    out.push_back(std::move(d));
  }
  {  // Mixed signs and magnitudes over 8 decades, shuffled: a generic hard case (no naive expectation).
    dataset d{"sign * 10^U(-4,4), shuffled", std::vector<float>(static_cast<std::size_t>(n)), false};
    std::uniform_real_distribution<float> e(-4.0f, 4.0f);
    for (auto& v : d.x) v = (u(g) < 0 ? -1.0f : 1.0f) * std::pow(10.0f, e(g));
    out.push_back(std::move(d));
  }
  return out;
}

float naive_sum(const std::vector<float>& x) {
  float s = 0;
  for (float v : x) s += v;
  return s;
}

} // namespace

TEST_CASE("float sum and mean of 10^7 adversarial elements stay within the documented bound; naive does not") {
  const tx::index_t n = big_n();
  for (auto& d : adversarial(n)) {
    INFO("data: ", d.name, ", n = ", n);
    const ld exact = rel::exact_sum(d.x.begin(), d.x.end());
    const ld mag = rel::magnitude_sum(d.x.begin(), d.x.end());
    const ld bound = rel::sum_bound<float>(n, mag);
    tx::view<const float, 1> v(d.x.data(), {n});

    const ld err = std::fabs(static_cast<ld>(tx::sum(v).item()) - exact);
    INFO("sum error ", static_cast<double>(err), " bound ", static_cast<double>(bound));
    CHECK(err <= bound);

    // mean = sum / n: the sum's bound divided by n, plus the rounding of the division.
    const ld mean_exact = exact / static_cast<ld>(n);
    const ld mean_bound = bound / static_cast<ld>(n) + std::numeric_limits<float>::epsilon() * std::fabs(mean_exact);
    CHECK(std::fabs(static_cast<ld>(tx::mean(v).item()) - mean_exact) <= mean_bound);

    // The same data through the fused path (an elementwise child) and the row path (a strided view).
    CHECK(std::fabs(static_cast<ld>(tx::sum(v * 1.0f).item()) - exact) <= bound);
    tx::view<const float, 2> rows(d.x.data(), {n / 1000, 1000});
    tx::tensor<float, 1> zero_row({1000});
    CHECK(std::fabs(static_cast<ld>(tx::sum(rows + zero_row).item()) - exact) <= bound);

    // Teeth: a naive float loop over the same data violates the bound where expected.
    const ld naive_err = std::fabs(static_cast<ld>(naive_sum(d.x)) - exact);
    INFO("naive error ", static_cast<double>(naive_err));
    if (d.naive_fails) CHECK(naive_err > bound);
  }
}

TEST_CASE("double sum and mean of adversarial data stay within the documented bound") {
  const tx::index_t n = big_n() / 4;
  for (auto& d : adversarial(n)) {
    INFO("data: ", d.name, ", n = ", n);
    std::vector<double> x(d.x.begin(), d.x.end());
    for (std::size_t i = 0; i < x.size(); i += 3) x[i] *= 1.0 + 1e-9;  // bits a float cannot hold
    const ld exact = rel::exact_sum(x.begin(), x.end());
    const ld bound = rel::sum_bound<double>(n, rel::magnitude_sum(x.begin(), x.end()));
    tx::view<const double, 1> v(x.data(), {n});
    CHECK(std::fabs(static_cast<ld>(tx::sum(v).item()) - exact) <= bound);
    const ld mean_exact = exact / static_cast<ld>(n);
    CHECK(std::fabs(static_cast<ld>(tx::mean(v).item()) - mean_exact) <=
          bound / static_cast<ld>(n) + std::numeric_limits<double>::epsilon() * std::fabs(mean_exact));
  }
}

namespace {

// Checks sum and mean along `axis` of a (rows, cols) float view against long double, per output element.
void check_axis(const std::vector<float>& x, tx::index_t rows, tx::index_t cols, int axis) {
  tx::view<const float, 2> v(x.data(), {rows, cols});
  tx::tensor<float, 1> s = tx::sum(v, axis), m = tx::mean(v, axis);
  const tx::index_t outs = axis == 0 ? cols : rows, len = axis == 0 ? rows : cols;
  ld worst = 0;
  for (tx::index_t o = 0; o < outs; ++o) {
    std::vector<float> line(static_cast<std::size_t>(len));
    for (tx::index_t l = 0; l < len; ++l)
      line[static_cast<std::size_t>(l)] = axis == 0 ? x[static_cast<std::size_t>(l * cols + o)]
                                                    : x[static_cast<std::size_t>(o * cols + l)];
    const ld exact = rel::exact_sum(line.begin(), line.end());
    const ld bound = rel::sum_bound<float>(len, rel::magnitude_sum(line.begin(), line.end()));
    const ld err = std::fabs(static_cast<ld>(s(o)) - exact);
    worst = std::max(worst, err / bound);
    const ld mean_exact = exact / static_cast<ld>(len);
    const ld mean_err = std::fabs(static_cast<ld>(m(o)) - mean_exact);
    const ld mean_bound = bound / static_cast<ld>(len) + std::numeric_limits<float>::epsilon() * std::fabs(mean_exact);
    REQUIRE_MESSAGE(err <= bound, "axis ", axis, " output ", o, ": error ", static_cast<double>(err), " bound ",
                    static_cast<double>(bound));
    REQUIRE_MESSAGE(mean_err <= mean_bound, "mean, axis ", axis, " output ", o);
  }
  MESSAGE("axis ", axis, " of (", rows, ", ", cols, "): worst error / bound = ", static_cast<double>(worst));
}

// offset + U(-1,1); 1003.5 makes partial sums of 64 rows (~64224) sit 1/4 ulp below the running total's grid, so a
// sequential accumulation of those partials rounds the same way every time (a systematic drift).
std::vector<float> offset_data(std::size_t n, std::uint64_t seed, float offset = 1003.5f) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = offset + u(g);
  return x;
}

} // namespace

TEST_CASE("sum and mean along a long last axis stay within the documented bound") {
  const tx::index_t len = rel::heavy<tx::index_t>(2'500'000, 250'000);
  check_axis(offset_data(static_cast<std::size_t>(4 * len), 7), 4, len, 1);
}

// A long non-last axis: 16-row blocks combined pairwise per column (a sequential sum of the blocks would
// drift far past the bound on this data).
TEST_CASE("sum and mean along a long first axis stay within the documented bound") {
  const tx::index_t len = rel::heavy<tx::index_t>(2'500'000, 250'000);
  check_axis(offset_data(static_cast<std::size_t>(4 * len), 8), len, 4, 0);
}

TEST_CASE("a moderately long first axis (4096 rows) is within the documented bound") {
  check_axis(offset_data(4096 * 64, 9), 4096, 64, 0);
}

TEST_CASE("reductions do not depend on the thread count") {
  const tx::index_t n = rel::heavy<tx::index_t>(3'000'000, 300'000);
  auto x = offset_data(static_cast<std::size_t>(n), 11);
  tx::view<const float, 1> v(x.data(), {n});
  tx::view<const float, 2> m(x.data(), {n / 600, 600});
  const int before = tx::num_threads();
  tx::set_num_threads(1);
  const float s1 = tx::sum(v).item();
  tx::tensor<float, 1> a1 = tx::sum(m, 0), b1 = tx::mean(m, 1);
  tx::set_num_threads(4);
  const float s4 = tx::sum(v).item();
  tx::tensor<float, 1> a4 = tx::sum(m, 0), b4 = tx::mean(m, 1);
  tx::set_num_threads(before);
  CHECK(s1 == s4);
  for (tx::index_t i = 0; i < a1.size(); ++i) REQUIRE(a1(i) == a4(i));
  for (tx::index_t i = 0; i < b1.size(); ++i) REQUIRE(b1(i) == b4(i));
}
