// Reductions over everything and along each axis of rank 1-3 inputs; empty inputs, NaN and errors.
#include "reference.hpp"

namespace {

using test::ld;

template <class Op> ld combine_ref(const std::vector<ld>& v) {
  if constexpr (std::is_same_v<Op, tx::op::sum>) {
    ld s = 0;
    for (ld x : v) s += x;
    return s;
  } else if constexpr (std::is_same_v<Op, tx::op::mean>) {
    ld s = 0;
    for (ld x : v) s += x;
    return s / static_cast<ld>(v.size());
  } else if constexpr (std::is_same_v<Op, tx::op::prod>) {
    ld p = 1;
    for (ld x : v) p *= x;
    return p;
  } else {
    ld m = v.at(0);
    for (ld x : v) m = std::is_same_v<Op, tx::op::max> ? std::max(m, x) : std::min(m, x);
    return m;
  }
}

// Scale the error of a reduction is measured against: the sum of magnitudes for sum and mean (the bound
// of a pairwise/blocked summation is a few ulp of it), n times the result for prod (n roundings), the
// result itself for max and min (exact).
template <class Op, class T> bool reduction_close(T got, const std::vector<ld>& v) {
  const ld want = combine_ref<Op>(v);
  if constexpr (std::is_same_v<Op, tx::op::sum> || std::is_same_v<Op, tx::op::mean>) {
    ld mag = 0;
    for (ld x : v) mag += std::fabs(x);
    if constexpr (std::is_same_v<Op, tx::op::mean>) mag /= static_cast<ld>(v.size());
    return test::close(got, want, mag);
  } else if constexpr (std::is_same_v<Op, tx::op::prod>) {
    const ld eps = std::numeric_limits<T>::epsilon();
    return test::close(got, want, 1, std::max<ld>(test::tolerance<T>(), eps * static_cast<ld>(v.size())));
  } else {
    return test::close(got, want, 1, 0);
  }
}

// Checks reduce<Op>(e, axis) for every axis of a rank-R input given as a host tensor x and an expression e of it.
template <class Op, class T, std::size_t R, class E> void check_axes(const tx::tensor<T, R>& x, const E& e) {
  std::vector<ld> all;
  for (tx::index_t i = 0; i < x.size(); ++i) all.push_back(test::wide(x.data()[i]));
  INFO("op ", std::string(Op::name), " rank ", R);
  REQUIRE(reduction_close<Op>(tx::reduce<Op>(e).item(), all));
  for (std::size_t axis = 0; axis < R; ++axis) {
    auto got = tx::eval(tx::reduce<Op>(e, static_cast<tx::index_t>(axis)));
    for (tx::index_t o = 0; o < got.size(); ++o) {
      const auto oi = test::unravel(o, got.shape());
      std::vector<ld> line;
      for (tx::index_t l = 0; l < x.shape()[axis]; ++l) {
        std::array<tx::index_t, R> idx{};
        for (std::size_t d = 0, k = 0; d < R; ++d) idx[d] = d == axis ? l : oi[k++];
        tx::index_t off = 0;
        for (std::size_t d = 0; d < R; ++d) off = off * x.shape()[d] + idx[d];
        line.push_back(test::wide(x.data()[off]));
      }
      REQUIRE_MESSAGE(reduction_close<Op>(got.data()[o], line), "axis ", axis, " output ", o);
    }
  }
}

template <class Op, class T> void check_op() {
  // prod over 11100 elements stays in range only for factors near 1.
  const double lo = std::is_same_v<Op, tx::op::prod> ? 0.995 : -3, hi = std::is_same_v<Op, tx::op::prod> ? 1.005 : 3;
  auto x1 = test::random<T, 1>({1000}, lo, hi);
  auto x2 = test::random<T, 2>({37, 300}, lo, hi);  // rows longer than one block: exercises the cascade
  auto x3 = test::random<T, 3>({3, 70, 9}, lo, hi);
  check_axes<Op>(x1, x1);
  check_axes<Op>(x2, x2);
  check_axes<Op>(x3, x3);
  // The same through a fused (non-leaf) input and through a transposed, strided view.
  check_axes<Op>(x3, x3 * T(1));
  tx::tensor<T, 2> xt({300, 37});
  for (tx::index_t i = 0; i < 37; ++i)
    for (tx::index_t j = 0; j < 300; ++j) xt(j, i) = x2(i, j);
  tx::view<const T, 2> back(xt.data(), {37, 300}, {1, 37});
  check_axes<Op>(x2, back);
}

} // namespace

TEST_CASE_TEMPLATE("sum, mean, max, min and prod over everything and along each axis", T, float, double) {
  check_op<tx::op::sum, T>();
  check_op<tx::op::mean, T>();
  check_op<tx::op::max, T>();
  check_op<tx::op::min, T>();
  check_op<tx::op::prod, T>();
}

TEST_CASE_TEMPLATE("integer reductions are exact", T, std::int32_t, std::int64_t) {
  auto x = test::random<T, 2>({13, 17}, -100, 100);
  check_axes<tx::op::sum>(x, x);
  check_axes<tx::op::max>(x, x);
  check_axes<tx::op::min>(x, x);
  // Integer sum accumulates in T and wraps (two's complement), like the elementwise ops.
  tx::tensor<T, 1> big({3}, {std::numeric_limits<T>::max(), T(1), T(1)});
  CHECK(tx::sum(big).item() == test::wrap<T>(static_cast<test::i128>(std::numeric_limits<T>::max()) + 2));
}

TEST_CASE("negative axes count from the end; bad axes throw naming the shape") {
  auto x = test::random<double, 3>({2, 3, 4});
  tx::tensor<double, 2> a = tx::sum(x, -1), b = tx::sum(x, 2);
  for (tx::index_t i = 0; i < a.size(); ++i) CHECK(a.data()[i] == b.data()[i]);
  CHECK_THROWS_WITH_AS(tx::sum(x, 3), doctest::Contains("(2, 3, 4)"), tx::shape_error);
  CHECK_THROWS_AS(tx::mean(x, -4), tx::shape_error);
}

TEST_CASE("empty inputs: sum 0, prod 1, mean NaN, max/min throw") {
  tx::tensor<float, 2> e({0, 3});
  CHECK(tx::sum(e).item() == 0.0f);
  CHECK(tx::prod(e).item() == 1.0f);
  CHECK(std::isnan(tx::mean(e).item()));
  CHECK_THROWS_WITH_AS(tx::max(e).item(), doctest::Contains("(0, 3)"), tx::shape_error);
  CHECK_THROWS_AS(tx::min(e).item(), tx::shape_error);
  tx::tensor<float, 1> s0 = tx::sum(e, 0);  // reducing a zero-length axis
  CHECK(s0.shape() == tx::shape_t<1>{3});
  CHECK(s0(2) == 0.0f);
  tx::tensor<float, 1> m0 = tx::mean(e, 0);
  CHECK(std::isnan(m0(0)));
  CHECK_THROWS_AS(tx::eval(tx::max(e, 0)), tx::shape_error);
  tx::tensor<float, 1> s1 = tx::sum(e, 1);  // reducing a non-empty axis of an empty tensor
  CHECK(s1.shape() == tx::shape_t<1>{0});
  tx::tensor<float, 1> mx1 = tx::max(e, 1);
  CHECK(mx1.size() == 0);
}

TEST_CASE("NaN propagates through sum, mean, max and min") {
  tx::tensor<double, 2> x({2, 3}, {1, std::numeric_limits<double>::quiet_NaN(), 3, 4, 5, 6});
  CHECK(std::isnan(tx::sum(x).item()));
  CHECK(std::isnan(tx::mean(x).item()));
  CHECK(std::isnan(tx::max(x).item()));
  CHECK(std::isnan(tx::min(x).item()));
  tx::tensor<double, 1> m = tx::max(x, 1);
  CHECK(std::isnan(m(0)));
  CHECK(m(1) == 6.0);
  tx::tensor<double, 1> inf({2}, {std::numeric_limits<double>::infinity(), 1});
  CHECK(tx::sum(inf).item() == std::numeric_limits<double>::infinity());
}

TEST_CASE("argmax and argmin: int64 indices, first on ties, NaN wins, flat over everything, keepdims, empty throws") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  tx::tensor<float, 2> x({3, 4}, {1, 5, 5, 2, 7, 0, 7, -1, 3, nan, 9, nan});
  tx::tensor<std::int64_t, 1> a1 = tx::argmax(x, 1), a0 = tx::argmax(x, -2), m1 = tx::argmin(x, 1);
  const std::int64_t want_a1[] = {1, 0, 1}, want_a0[] = {1, 2, 2, 2}, want_m1[] = {0, 3, 1};
  for (tx::index_t i = 0; i < 3; ++i) CHECK(a1(i) == want_a1[i]);  // ties: the first; NaN: the first NaN
  for (tx::index_t i = 0; i < 4; ++i) CHECK(a0(i) == want_a0[i]);
  for (tx::index_t i = 0; i < 3; ++i) CHECK(m1(i) == want_m1[i]);
  CHECK(tx::argmax(x).item() == 9);  // over everything: the row-major index, as numpy.argmax
  static_assert(std::is_same_v<decltype(tx::argmax(x))::value_type, std::int64_t>);
  tx::tensor<std::int32_t, 2> y({2, 3}, {4, 9, 9, -5, -5, 2});
  tx::tensor<std::int64_t, 2> k = tx::argmin(y, 1, tx::keepdims);
  CHECK(k.shape() == tx::shape_t<2>{2, 1});
  CHECK(k(0, 0) == 0);
  CHECK(k(1, 0) == 0);
  CHECK(tx::argmax(y).item() == 1);
  // Fused: the operand is read through the elementwise expression, on a long line (lanes and blocks).
  tx::tensor<double, 1> big = tx::sin(tx::arange<double>(100000) * 0.001);
  std::int64_t best = 0, worst = 0;
  for (tx::index_t i = 0; i < big.size(); ++i) {
    if (big(i) > big(best)) best = i;
    if (big(i) < big(worst)) worst = i;
  }
  CHECK(tx::argmax(tx::sin(tx::arange<double>(100000) * 0.001)).item() == best);
  CHECK(tx::argmin(big).item() == worst);
  tx::tensor<float, 2> empty({2, 0});
  CHECK_THROWS_AS((void)tx::eval(tx::argmax(empty, 1)), tx::shape_error);
  CHECK(tx::placement(tx::argmax(x, 1)).find("argmax") != std::string::npos);
}
