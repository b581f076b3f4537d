// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Scans on the host beyond the registry's row checks (tests/core/registry_checks.hpp): the API (negative axes,
// tx::reversed, errors), NaN, wrap-around, zeros, infinities and ties, empty extents, a fused operand read once
// without a temporary, tx::placement, and the long-line path (blocks folded in parallel) against a long double
// running sum at 1 and 2 threads.
#include "core/support.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

template <class T> tx::tensor<T, 1> vec(std::initializer_list<T> v) {
  tx::tensor<T, 1> t({static_cast<tx::index_t>(v.size())});
  tx::index_t i = 0;
  for (T x : v) t(i++) = x;
  return t;
}

template <class T, class E> std::vector<T> values(E&& e) {
  const tx::tensor<T, 1> t = tx::eval(std::forward<E>(e));
  return std::vector<T>(t.data(), t.data() + t.size());
}

struct thread_count {
  int old = tx::num_threads();
  explicit thread_count(int n) { tx::set_num_threads(n); }
  ~thread_count() { tx::set_num_threads(old); }
};

}  // namespace

TEST_CASE("scans: values of small lines, forwards and reversed, with negative axes") {
  const auto x = vec<float>({3, -1, 4, 1, -5, 9, 2, -6});
  CHECK(values<float>(tx::cumsum(x, 0)) == std::vector<float>{3, 2, 6, 7, 2, 11, 13, 7});
  CHECK(values<float>(tx::cumsum(x, -1, tx::reversed)) == std::vector<float>{7, 4, 5, 1, 0, 5, -4, -6});
  CHECK(values<float>(tx::cumprod(x, 0)) == std::vector<float>{3, -3, -12, -12, 60, 540, 1080, -6480});
  CHECK(values<float>(tx::cummax(x, 0)) == std::vector<float>{3, 3, 4, 4, 4, 9, 9, 9});
  CHECK(values<float>(tx::cummin(x, 0, tx::reversed)) == std::vector<float>{-6, -6, -6, -6, -6, -6, -6, -6});
  CHECK(values<float>(tx::cummin(x, 0)) == std::vector<float>{3, -1, -1, -1, -5, -5, -5, -6});
  CHECK(values<std::int64_t>(tx::cumargmax(x, 0)) == std::vector<std::int64_t>{0, 0, 2, 2, 2, 5, 5, 5});

  // rank 2, each axis: numpy.cumsum(m, axis) by hand
  tx::tensor<int, 2> m({2, 3});
  for (int i = 0; i < 6; ++i) m.data()[i] = i + 1;  // [[1 2 3] [4 5 6]]
  const tx::tensor<int, 2> a0 = tx::cumsum(m, 0), a1 = tx::cumsum(m, -1);
  CHECK(std::vector<int>(a0.data(), a0.data() + 6) == std::vector<int>{1, 2, 3, 5, 7, 9});
  CHECK(std::vector<int>(a1.data(), a1.data() + 6) == std::vector<int>{1, 3, 6, 4, 9, 15});
}

TEST_CASE("scans: NaN propagates from where it appears; ties go to the first position") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto x = vec<float>({1, 2, nan, 5, 0});
  const auto mx = values<float>(tx::cummax(x, 0));
  CHECK(mx[0] == 1);
  CHECK(mx[1] == 2);
  for (int i = 2; i < 5; ++i) CHECK(std::isnan(mx[static_cast<std::size_t>(i)]));
  const auto s = values<float>(tx::cumsum(x, 0));
  CHECK(s[1] == 3);
  CHECK(std::isnan(s[4]));
  CHECK(values<std::int64_t>(tx::cumargmax(x, 0)) == std::vector<std::int64_t>{0, 1, 2, 2, 2});  // NaN wins, as argmax

  const auto ties = vec<double>({2, 7, 7, 1, 7, 9, 9});
  CHECK(values<std::int64_t>(tx::cumargmax(ties, 0)) == std::vector<std::int64_t>{0, 1, 1, 1, 1, 5, 5});
  CHECK(values<std::int64_t>(tx::cumargmin(ties, 0)) == std::vector<std::int64_t>{0, 0, 0, 3, 3, 3, 3});
  // reversed: each suffix's extreme at its lowest position
  CHECK(values<std::int64_t>(tx::cumargmax(ties, 0, tx::reversed)) == std::vector<std::int64_t>{5, 5, 5, 5, 5, 5, 6});
}

TEST_CASE("scans: integers wrap around as sum and prod do") {
  const std::int32_t big = std::numeric_limits<std::int32_t>::max();
  const auto x = vec<std::int32_t>({big, 1, 1});
  CHECK(values<std::int32_t>(tx::cumsum(x, 0)) ==
        std::vector<std::int32_t>{big, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::min() + 1});
  const auto p = vec<std::int64_t>({std::int64_t(1) << 40, std::int64_t(1) << 30, 3});
  const auto got = values<std::int64_t>(tx::cumprod(p, 0));
  CHECK(got[1] == 0);  // 2^70 wraps to 0 in 64 bits
  CHECK(got[2] == 0);
}

TEST_CASE("scans: zeros in cumprod, infinities and large values in logcumsumexp") {
  CHECK(values<double>(tx::cumprod(vec<double>({2, 0, 3, -1}), 0)) == std::vector<double>{2, 0, 0, -0.0});
  const double inf = std::numeric_limits<double>::infinity();
  const auto l = values<double>(tx::logcumsumexp(vec<double>({-inf, 1000, 1000, -inf, 999}), 0));
  CHECK(l[0] == -inf);
  CHECK(l[1] == 1000);
  CHECK(l[2] == doctest::Approx(1000 + std::log(2.0)).epsilon(1e-15));
  CHECK(l[3] == l[2]);
  CHECK(l[4] == doctest::Approx(1000 + std::log(2.0 + std::exp(-1.0))).epsilon(1e-15));
  const auto neg = values<float>(tx::logcumsumexp(vec<float>({-200, -200}), 0));  // exp underflows in float
  CHECK(neg[1] == doctest::Approx(-200 + std::log(2.0f)));
  CHECK(values<double>(tx::logcumsumexp(vec<double>({1, inf, 2}), 0))[2] == inf);
}

TEST_CASE("scans: empty extents give empty results; a bad axis is a shape_error naming it") {
  const tx::tensor<float, 2> e({0, 4}), f({3, 0});
  CHECK(tx::eval(tx::cumsum(e, 0)).shape() == tx::shape_t<2>{0, 4});
  CHECK(tx::eval(tx::cumprod(e, 1)).shape() == tx::shape_t<2>{0, 4});
  CHECK(tx::eval(tx::cummax(f, 1)).shape() == tx::shape_t<2>{3, 0});  // max has no identity; a scan needs none
  CHECK(tx::eval(tx::logcumsumexp(f, 0)).shape() == tx::shape_t<2>{3, 0});
  const tx::tensor<float, 2> g({2, 3});
  CHECK_THROWS_WITH_AS(tx::cumsum(g, 2), doctest::Contains("axis 2 is out of range for cumsum"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::cummax(g, -3), doctest::Contains("axis -3 is out of range for cummax"), tx::shape_error);
}

TEST_CASE("scans read their operand fused: one kernel, no temporary, and tx::placement says so") {
  auto x = test::random<float, 2>({6, 50}, -1, 1);
  tx::tensor<float, 2> want({6, 50});
  for (tx::index_t i = 0; i < 6; ++i) {
    test::ld s = 0;
    for (tx::index_t j = 0; j < 50; ++j) {
      s += 2 * test::ld(x(i, j)) + 1;
      want(i, j) = static_cast<float>(s);
    }
  }
  tx::tensor<float, 2> got({6, 50});
  {
    tx::kernel_log log;
    got = tx::cumsum(x * 2 + 1, 1);
    REQUIRE(log.entries().size() == 1);
    CHECK(log.entries()[0].implementation == "line_scan");
    CHECK(log.entries()[0].op == "cumsum");
  }
  for (tx::index_t i = 0; i < got.size(); ++i) CHECK(got.data()[i] == doctest::Approx(want.data()[i]).epsilon(1e-5));
  const std::string p = tx::placement(tx::cumsum(x * 2 + 1, 1));
  CHECK(p.find("cumsum") != std::string::npos);
  CHECK(p.find("line_scan") != std::string::npos);
  CHECK(p.find("fused_elementwise (in the pass above)") != std::string::npos);  // the operand is read inside the scan
  // into a strided destination: computed into a temporary, then copied
  tx::tensor<float, 2> t({50, 6});
  tx::transpose(t) = tx::cumsum(x * 2 + 1, 1);
  for (tx::index_t i = 0; i < 6; ++i)
    for (tx::index_t j = 0; j < 50; ++j) CHECK(t(j, i) == got(i, j));
}

TEST_CASE("scans: a long line is cut into blocks at 2 threads and gives the running sum at 1 and 2") {
  const tx::index_t n = (1 << 17) + 123;  // 9 blocks, the last one short
  auto x = test::random<double, 1>({n}, -1, 1);
  std::vector<test::ld> run(static_cast<std::size_t>(n));
  test::ld s = 0, mag = 0;
  for (tx::index_t i = 0; i < n; ++i) run[static_cast<std::size_t>(i)] = s += x(i), mag += std::fabs(x(i));
  for (int threads : {1, 2}) {
    thread_count tc(threads);
    for (bool reverse : {false, true}) {
      INFO("threads ", threads, reverse ? " reversed" : "");
      const tx::tensor<double, 1> y = reverse ? tx::eval(tx::cumsum(x, 0, tx::reversed)) : tx::eval(tx::cumsum(x, 0));
      int bad = 0;
      for (tx::index_t i = 0; i < n; ++i) {
        const test::ld w = reverse ? run[static_cast<std::size_t>(n - 1)] - (i ? run[static_cast<std::size_t>(i - 1)] : 0)
                                   : run[static_cast<std::size_t>(i)];
        if (std::fabs(y(i) - w) > 1e-10L * mag) ++bad;
      }
      CHECK(bad == 0);
      // the arg scan across blocks: positions are absolute
      const auto at = tx::eval(tx::cumargmax(x, 0));
      tx::index_t best = 0;
      for (tx::index_t i = 0; i < n; ++i) {
        if (x(i) > x(best)) best = i;
        if (at(i) != best) ++bad;
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("linear_recurrence: an exponential moving average, both directions, fused operands, errors") {
  const tx::index_t n = 50;
  tx::tensor<double, 2> x = tx::random::normal<double>({3, n}, 21);
  const double alpha = 0.2;
  // ema_i = (1 - alpha) ema_(i-1) + alpha x_i
  tx::kernel_log log;
  const tx::tensor<double, 2> ema = tx::linear_recurrence(tx::full({3, n}, 1 - alpha), x * alpha, 1);
  CHECK(log.entries().size() == 1);  // one line_scan: both operands read fused
  for (tx::index_t r = 0; r < 3; ++r) {
    double h = 0;
    for (tx::index_t i = 0; i < n; ++i) {
      h = (1 - alpha) * h + alpha * x(r, i);
      CHECK(ema(r, i) == doctest::Approx(h).epsilon(1e-13));
    }
  }
  const tx::tensor<double, 2> back = tx::linear_recurrence(tx::full({3, n}, 0.5), x, -1, tx::reversed);
  for (tx::index_t r = 0; r < 3; ++r) {
    double h = 0;
    for (tx::index_t i = n; i-- > 0;) {
      h = 0.5 * h + x(r, i);
      CHECK(back(r, i) == doctest::Approx(h).epsilon(1e-13));
    }
  }
  // a coefficient of 1 is a cumsum; of 0, the terms themselves
  const tx::tensor<double, 2> cs = tx::linear_recurrence(tx::ones<double>({3, n}), x, 0), ref = tx::cumsum(x, 0);
  for (tx::index_t i = 0; i < cs.size(); ++i) CHECK(cs.data()[i] == doctest::Approx(ref.data()[i]).epsilon(1e-13));
  const tx::tensor<double, 2> a({3, 4}), b({3, 5});
  CHECK_THROWS_WITH_AS(tx::linear_recurrence(a, b, 1), doctest::Contains("linear_recurrence of a of shape (3, 4) and b of shape (3, 5)"),
                       tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::linear_recurrence(a, a, 2), doctest::Contains("axis 2 is out of range for linear_recurrence"), tx::shape_error);
}
