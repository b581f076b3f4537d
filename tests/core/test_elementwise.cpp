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
