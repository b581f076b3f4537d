// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The public elementwise API: operators, functions, broadcasting, errors, dtype rules and fusion.
#include "reference.hpp"

#include <atomic>

namespace {

std::size_t host_allocations() { return tx::detail::memory<tx::host>::allocations.load(); }

// A user op that counts how often it runs: proves each element is computed exactly once.
std::atomic<long> calls{0};
struct counted_identity {
  static constexpr std::string_view name = "counted_identity";
  template <class C> static C apply(C x) {
    calls.fetch_add(1, std::memory_order_relaxed);
    return x;
  }
};

} // namespace

template <> struct texpr::kernel<counted_identity, float, texpr::host> : texpr::host_kernels::fused_elementwise {};

TEST_CASE("broadcasting follows NumPy: missing leading dims and size-1 dims") {
  auto a = test::random<double, 3>({2, 1, 4});
  auto b = test::random<double, 2>({3, 1});
  auto c = test::random<double, 1>({4});
  tx::tensor<double, 3> r = a * b + c - 1.5;
  REQUIRE(r.shape() == tx::shape_t<3>{2, 3, 4});
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 3; ++j)
      for (tx::index_t k = 0; k < 4; ++k) {
        const long double want = test::wide(a(i, 0, k)) * b(j, 0) + c(k) - 1.5L;
        REQUIRE(test::close(r(i, j, k), want, 4));
      }
}

TEST_CASE("incompatible shapes throw shape_error naming both shapes") {
  tx::tensor<float, 2> a({3, 4});
  tx::tensor<float, 2> b({4, 3});
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("LHS shape = (3, 4) RHS shape = (4, 3)"), tx::shape_error);
  tx::tensor<float, 1> v({5});
  CHECK_THROWS_WITH_AS(tx::maximum(a, v), doctest::Contains("(5,)"), tx::shape_error);
  static_assert(std::is_base_of_v<std::invalid_argument, tx::shape_error>);
}

TEST_CASE("scalars take the tensor's dtype") {
  tx::tensor<std::int32_t, 1> i({3}, {1, 2, 3});
  auto e = i * 2 + 1;
  static_assert(std::is_same_v<decltype(e)::value_type, std::int32_t>);
  tx::tensor<std::int32_t, 1> r = e;
  CHECK(r(2) == 7);
  tx::tensor<float, 1> f({2}, {1.5f, 2.5f});
  tx::tensor<float, 1> g = 1.0 / f;  // the double scalar becomes float
  CHECK(g(0) == doctest::Approx(1.0 / 1.5));
  tx::tensor<float, 1> h = 10 - f;
  CHECK(h(1) == 7.5f);
}

TEST_CASE("integer semantics are defined: wrap-around, division by zero, min / -1") {
  using L = std::numeric_limits<std::int32_t>;
  tx::tensor<std::int32_t, 1> a({4}, {L::max(), L::min(), 7, L::min()});
  tx::tensor<std::int32_t, 1> b({4}, {1, -1, 0, 2});
  tx::tensor<std::int32_t, 1> sum = a + b, quot = a / b, neg = -a, ab = tx::abs(a);
  CHECK(sum(0) == L::min());
  CHECK(quot(1) == L::min());
  CHECK(quot(2) == 0);
  CHECK(quot(3) == L::min() / 2);
  CHECK(neg(1) == L::min());
  CHECK(ab(1) == L::min());
}

TEST_CASE("floating semantics: NaN propagates through maximum/minimum/relu, ±inf as IEEE") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  tx::tensor<float, 1> a({4}, {nan, 1, inf, -0.0f});
  tx::tensor<float, 1> b({4}, {1, nan, 1, 0.0f});
  tx::tensor<float, 1> mx = tx::maximum(a, b), mn = tx::minimum(a, b), rl = tx::relu(a), q = a / 0.0f;
  CHECK(std::isnan(mx(0)));
  CHECK(std::isnan(mx(1)));
  CHECK(mx(2) == inf);
  CHECK(std::isnan(mn(0)));
  CHECK(std::isnan(rl(0)));
  CHECK(rl(2) == inf);
  CHECK(std::signbit(mx(3)));  // ties return the first operand
  CHECK(q(1) == inf);
  CHECK(std::isnan(q(3)));
}

TEST_CASE("maths functions, elu with and without alpha, pow with scalars") {
  auto x = test::random<double, 2>({3, 5}, -3, 3);
  tx::tensor<double, 2> e1 = tx::elu(x), e2 = tx::elu(x, 0.5), s = tx::sigmoid(x), t = tx::tanh(x), p = tx::pow(tx::abs(x), 2);
  tx::tensor<double, 2> l = tx::log(tx::exp(x)), r = tx::sqrt(x * x);
  for (tx::index_t i = 0; i < x.size(); ++i) {
    const long double v = x.data()[i];
    REQUIRE(test::close(e1.data()[i], v > 0 ? v : std::expm1(v)));
    REQUIRE(test::close(e2.data()[i], v > 0 ? v : 0.5L * std::expm1(v)));
    REQUIRE(test::close(s.data()[i], 1 / (1 + std::exp(-v))));
    REQUIRE(test::close(t.data()[i], std::tanh(v)));
    REQUIRE(test::close(p.data()[i], v * v));
    REQUIRE(test::close(l.data()[i], v, 1));
    REQUIRE(test::close(r.data()[i], std::fabs(v)));
  }
  tx::tensor<float, 1> big({2}, {-100.0f, 100.0f});
  tx::tensor<float, 1> sb = tx::sigmoid(big);  // no overflow to NaN at the extremes
  CHECK(sb(0) >= 0.0f);
  CHECK(sb(1) == 1.0f);
}

TEST_CASE("comparisons give bool expressions; where and cast") {
  tx::tensor<float, 1> a({4}, {-1, 2, -3, 4});
  auto mask = a > 0;
  static_assert(std::is_same_v<decltype(mask)::value_type, bool>);
  tx::tensor<float, 1> r = tx::where(mask, a, 0);
  CHECK(r(0) == 0.0f);
  CHECK(r(1) == 2.0f);
  tx::tensor<float, 1> r2 = tx::where(a <= 0 && !(a == -3), 7, a);
  CHECK(r2(0) == 7.0f);
  CHECK(r2(2) == -3.0f);
  tx::tensor<std::int64_t, 1> i = tx::cast<std::int64_t>(a * 1.5f);
  CHECK(i(0) == -1);
  CHECK(i(3) == 6);
  tx::tensor<double, 1> d = tx::cast<double>(i) / 4;
  CHECK(d(3) == 1.5);
}

TEST_CASE("a chain of elementwise ops evaluates in one pass with no temporary") {
  auto a = test::random<float, 2>({64, 33});
  auto b = test::random<float, 1>({33});
  const auto before = host_allocations();
  calls = 0;
  tx::tensor<float, 2> r = tx::map<counted_identity>(tx::exp(a * b + 1.0f) - tx::tanh(a));
  CHECK(calls.load() == a.size());            // each element computed once
  CHECK(host_allocations() - before == 1);   // only the result buffer
  const auto before_sum = host_allocations();
  const float s = tx::sum(a * b + 2.0f).item();
  CHECK(host_allocations() - before_sum == 1);  // the rank-0 result only; the input is read fused
  long double want = 0;
  for (tx::index_t i = 0; i < 64; ++i)
    for (tx::index_t j = 0; j < 33; ++j) want += static_cast<long double>(a(i, j)) * b(j) + 2;
  CHECK(test::close(s, want, 64 * 33));
  CHECK(r(3, 4) == doctest::Approx(std::exp(a(3, 4) * b(4) + 1.0f) - std::tanh(a(3, 4))));
}

TEST_CASE("expressions compose with reductions and matmul inside (sub-results materialise)") {
  tx::tensor<double, 2> x({2, 3}, {1, 2, 3, 4, 5, 6});
  tx::tensor<double, 1> centered_row_sums = tx::sum(x - tx::mean(x, 0), 1);
  CHECK(centered_row_sums(0) == doctest::Approx(-4.5));
  CHECK(centered_row_sums(1) == doctest::Approx(4.5));
  tx::tensor<double, 2> g = tx::matmul(x, tx::tensor<double, 2>({3, 1}, {1, 1, 1})) * 2.0;
  CHECK(g(1, 0) == 30.0);
}

TEST_CASE("rounding, sign, clamp and the smooth activations at their special values") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  tx::tensor<float, 1> h({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.7f, 2.2f, -0.0f});
  tx::tensor<float, 1> r = tx::round(h), f = tx::floor(h), c = tx::ceil(h);
  const float want_round[] = {0, 2, 2, -0.0f, -2, -3, 2, -0.0f};  // halves to even, as NumPy and PyTorch
  const float want_floor[] = {0, 1, 2, -1, -2, -3, 2, -0.0f};
  const float want_ceil[] = {1, 2, 3, -0.0f, -1, -2, 3, -0.0f};
  for (tx::index_t i = 0; i < 8; ++i) {
    CHECK(r(i) == want_round[i]);
    CHECK(f(i) == want_floor[i]);
    CHECK(c(i) == want_ceil[i]);
  }
  tx::tensor<float, 1> s({5}, {-3.0f, -0.0f, 0.0f, 2.0f, nan});
  tx::tensor<float, 1> sg = tx::sign(s);
  CHECK(sg(0) == -1.0f);
  CHECK(sg(1) == 0.0f);
  CHECK(sg(2) == 0.0f);
  CHECK(sg(3) == 1.0f);
  CHECK(std::isnan(sg(4)));
  tx::tensor<std::int32_t, 1> si({3}, {-7, 0, 9});
  tx::tensor<std::int32_t, 1> sgi = tx::sign(si), sq = tx::square(si);
  CHECK(sgi(0) == -1);
  CHECK(sgi(1) == 0);
  CHECK(sgi(2) == 1);
  CHECK(sq(0) == 49);
  CHECK(sq(2) == 81);
  // clamp: NaN propagates; hi wins when lo > hi (PyTorch's min(max(x, lo), hi)); integers too.
  tx::tensor<float, 1> cl = tx::clamp(s, -1.0f, 1.5f);
  CHECK(cl(0) == -1.0f);
  CHECK(cl(3) == 1.5f);
  CHECK(std::isnan(cl(4)));
  tx::tensor<float, 1> crossed = tx::clamp(s, 1.0f, -1.0f);
  for (tx::index_t i = 0; i < 4; ++i) CHECK(crossed(i) == -1.0f);
  tx::tensor<std::int32_t, 1> ci = tx::clamp(si, -5, 5);
  CHECK(ci(0) == -5);
  CHECK(ci(1) == 0);
  CHECK(ci(2) == 5);
  // The smooth activations stay finite and exact in their tails.
  tx::tensor<float, 1> big({4}, {-200.0f, -inf, 200.0f, inf});
  tx::tensor<float, 1> sp = tx::softplus(big), si2 = tx::silu(big), ge = tx::gelu(big);
  CHECK(sp(0) == 0.0f);
  CHECK(sp(1) == 0.0f);
  CHECK(sp(2) == 200.0f);
  CHECK(sp(3) == inf);
  CHECK(si2(0) == -0.0f);
  CHECK(si2(2) == 200.0f);
  CHECK(ge(0) == -0.0f);
  CHECK(ge(2) == 200.0f);
  // Against long double references on a grid that crosses 0.
  auto x = test::random<double, 1>({257}, -6, 6);
  tx::tensor<double, 1> l1 = tx::log1p(tx::abs(x)), em = tx::expm1(x), g2 = tx::gelu(x), rs = tx::rsqrt(tx::abs(x) + 0.5),
                        sn = tx::sin(x), cs = tx::cos(x);
  for (tx::index_t i = 0; i < x.size(); ++i) {
    const long double v = x.data()[i];
    REQUIRE(test::close(l1.data()[i], std::log1p(std::fabs(v))));
    REQUIRE(test::close(em.data()[i], std::expm1(v)));
    REQUIRE(test::close(g2.data()[i], v * (1 + std::erf(v / std::sqrt(2.0L))) / 2));
    REQUIRE(test::close(rs.data()[i], 1 / std::sqrt(std::fabs(v) + 0.5L)));
    REQUIRE(test::close(sn.data()[i], std::sin(v)));
    REQUIRE(test::close(cs.data()[i], std::cos(v)));
  }
}
