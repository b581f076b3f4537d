// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions over everything and along each axis of rank 1-3 inputs; empty inputs, NaN and errors.
#include <algorithm>
#include <cstring>

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

namespace {

ld var_ref(const std::vector<ld>& v) {
  ld mean = 0, m2 = 0;
  for (ld x : v) mean += x;
  mean /= static_cast<ld>(v.size());
  for (ld x : v) m2 += (x - mean) * (x - mean);
  return m2 / static_cast<ld>(v.size());
}

// NaN if any element is NaN, +inf if any is +inf, -inf if all are -inf (or none), else max + log(sum(exp(x - max))).
ld logsumexp_ref(const std::vector<ld>& v) {
  ld m = -INFINITY;
  for (ld x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  if (std::isinf(m)) return m;
  ld s = 0;
  for (ld x : v) s += std::exp(x - m);
  return m + std::log(s);
}

template <class T> std::vector<ld> row_of(const tx::tensor<T, 2>& x, tx::index_t i) {
  std::vector<ld> r;
  for (tx::index_t j = 0; j < x.shape()[1]; ++j) r.push_back(test::wide(x(i, j)));
  return r;
}

// Every reduction of 3 rows of len elements: the lanes of a block take elements k, k + 16, ... (a partial last
// step when len is not a multiple of 16), blocks hold 256, rows of several blocks go through the cascade.
template <class T> void check_rows(tx::index_t len) {
  auto x = test::random<T, 2>({3, len}, -3, 3);
  auto p = test::random<T, 2>({3, len}, 0.995, 1.005);
  check_axes<tx::op::sum>(x, x);
  check_axes<tx::op::mean>(x, x);
  check_axes<tx::op::max>(x, x);
  check_axes<tx::op::min>(x, x);
  check_axes<tx::op::prod>(p, p);
  // fused (the elements are computed in the lanes' loads) and through a transposed view (the chunked row path)
  check_axes<tx::op::sum>(x, x * T(1));
  check_axes<tx::op::max>(x, -(-x));
  tx::tensor<T, 2> xt({len, 3});
  for (tx::index_t i = 0; i < 3; ++i)
    for (tx::index_t j = 0; j < len; ++j) xt(j, i) = x(i, j);
  tx::view<const T, 2> back(xt.data(), {3, len}, {1, 3});
  check_axes<tx::op::mean>(x, back);
  check_axes<tx::op::min>(x, back);
  // var, stddev, logsumexp and argmax along the rows and over everything
  tx::tensor<T, 1> v = tx::var(x, 1), sd = tx::stddev(x, 1, 1), l = tx::logsumexp(x, 1), lb = tx::logsumexp(back, 1);
  tx::tensor<std::int64_t, 1> am = tx::argmax(x * T(2), 1);
  std::vector<ld> all;
  for (tx::index_t i = 0; i < 3; ++i) {
    const auto r = row_of(x, i);
    all.insert(all.end(), r.begin(), r.end());
    CHECK(test::close(v(i), var_ref(r)));
    if (len > 1) CHECK(test::close(sd(i), std::sqrt(var_ref(r) * len / (len - 1))));
    CHECK(test::close(l(i), logsumexp_ref(r)));
    CHECK(lb(i) == l(i));
    const auto best = std::max_element(r.begin(), r.end()) - r.begin();  // the first of the largest
    CHECK(am(i) == best);
  }
  CHECK(test::close(tx::var(x).item(), var_ref(all)));
  CHECK(test::close(tx::logsumexp(x).item(), logsumexp_ref(all)));
}

} // namespace

TEST_CASE_TEMPLATE("rows of 1 to 4097 elements (around 16 lanes and 256-element blocks): every reduction, dense, fused "
                   "and strided", T, float, double) {
  for (tx::index_t len : {1, 2, 15, 16, 17, 31, 100, 255, 256, 257, 1000, 4096, 4097}) {
    CAPTURE(len);
    check_rows<T>(len);
  }
}

TEST_CASE("a NaN anywhere in a row makes its max, min, sum, var and logsumexp NaN and leaves the other rows alone") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (tx::index_t len : {1, 16, 17, 40, 256, 300, 1030}) {
    for (tx::index_t pos : {tx::index_t{0}, tx::index_t{1}, tx::index_t{15}, tx::index_t{16}, len / 2, len - 1}) {
      if (pos >= len) continue;
      CAPTURE(len);
      CAPTURE(pos);
      auto x = test::random<float, 2>({3, len}, -3, 3);
      x(1, pos) = nan;
      tx::tensor<float, 1> mx = tx::max(x, 1), mn = tx::min(x, 1), s = tx::sum(x, 1), v = tx::var(x, 1),
                           l = tx::logsumexp(x, 1), mx_fused = tx::max(x * 1.0f, 1);
      CHECK(std::isnan(mx(1)));
      CHECK(std::isnan(mn(1)));
      CHECK(std::isnan(s(1)));
      if (len > 1) CHECK(std::isnan(v(1)));  // (a single element has variance 0 whatever it is: Welford's lift)
      CHECK(std::isnan(l(1)));
      CHECK(std::isnan(mx_fused(1)));
      CHECK(std::isnan(tx::max(x).item()));
      CHECK(std::isnan(tx::min(x).item()));
      for (tx::index_t i : {0, 2}) {
        const auto r = row_of(x, i);
        CHECK(mx(i) == *std::max_element(r.begin(), r.end()));
        CHECK(mn(i) == *std::min_element(r.begin(), r.end()));
        CHECK(test::close(l(i), logsumexp_ref(r)));
      }
    }
  }
}

TEST_CASE("logsumexp along rows with infinities in any lane: +inf gives +inf, all -inf gives -inf, -inf adds 0") {
  const float inf = std::numeric_limits<float>::infinity();
  for (tx::index_t len : {3, 16, 33, 300}) {
    CAPTURE(len);
    auto x = test::random<float, 2>({5, len}, -3, 3);
    x(0, len / 3) = inf;
    for (tx::index_t j = 0; j < len; ++j) x(1, j) = -inf;
    for (tx::index_t j = 0; j < len; j += 3) x(2, j) = -inf;        // some lanes see -inf first, then numbers
    for (tx::index_t j = 0; j < len - 1; ++j) x(3, j) = -inf;       // only the last element is finite
    for (tx::index_t j = 0; j < len; j += 2) x(4, j) = inf;         // several +inf, equal maxima
    tx::tensor<float, 1> l = tx::logsumexp(x, 1);
    CHECK(l(0) == inf);
    CHECK(l(1) == -inf);
    CHECK(test::close(l(2), logsumexp_ref(row_of(x, 2))));
    CHECK(l(3) == x(3, len - 1));
    CHECK(l(4) == inf);
  }
}

TEST_CASE_TEMPLATE("integer sum and prod wrap around alike in the vector lanes and the scalar tail", T, std::int32_t,
                   std::int64_t) {
  auto x = test::random<T, 2>({3, 300}, -1e30, 1e30);  // the whole range of T: every sum wraps
  auto f = test::product_factors<T, 2>({3, 300});
  tx::tensor<T, 1> s = tx::sum(x, 1), pr = tx::prod(f, 1);
  test::i128 total = 0;
  for (tx::index_t i = 0; i < 3; ++i) {
    test::i128 sum = 0;
    T prod = 1;
    for (tx::index_t j = 0; j < 300; ++j) {
      sum += x(i, j);
      prod = test::wrap<T>(static_cast<test::i128>(prod) * f(i, j));
    }
    total += sum;
    CHECK(s(i) == test::wrap<T>(sum));
    CHECK(pr(i) == prod);
  }
  CHECK(tx::sum(x).item() == test::wrap<T>(total));
}

TEST_CASE("every reduction is bitwise the same on 1 and 2 threads, along each axis and over everything") {
  // 300 x 4096 floats: one thread reads axis 0 in one tile of 4096 columns, two threads in two of 2048.
  auto x = test::random<float, 2>({300, 4096}, -3, 3);
  auto p = test::random<float, 2>({300, 4096}, 0.999, 1.001);
  auto d = test::random<double, 3>({5, 67, 1031}, -3, 3);
  const auto run = [&] {
    std::vector<std::vector<double>> out;
    const auto keep = [&](const auto& t) {
      out.emplace_back();
      for (tx::index_t i = 0; i < t.size(); ++i) out.back().push_back(static_cast<double>(t.data()[i]));
    };
    for (int axis : {0, 1}) {
      keep(tx::eval(tx::sum(x, axis)));
      keep(tx::eval(tx::mean(x * 2.0f + 1.0f, axis)));
      keep(tx::eval(tx::max(x, axis)));
      keep(tx::eval(tx::min(x, axis)));
      keep(tx::eval(tx::prod(p, axis)));
      keep(tx::eval(tx::var(x, axis)));
      keep(tx::eval(tx::stddev(x, axis, 1)));
      keep(tx::eval(tx::logsumexp(x, axis)));
      keep(tx::eval(tx::argmax(x, axis)));
    }
    for (int axis : {0, 1, 2}) {
      keep(tx::eval(tx::sum(d, axis)));
      keep(tx::eval(tx::var(d, axis)));
      keep(tx::eval(tx::logsumexp(d, axis)));
    }
    keep(tx::eval(tx::sum(x)));
    keep(tx::eval(tx::mean(d)));
    keep(tx::eval(tx::var(x)));
    keep(tx::eval(tx::logsumexp(d)));
    return out;
  };
  const int before = tx::num_threads();
  tx::set_num_threads(1);
  const auto one = run();
  tx::set_num_threads(2);
  const auto two = run();
  tx::set_num_threads(before);
  REQUIRE(one.size() == two.size());
  for (std::size_t k = 0; k < one.size(); ++k) {
    CAPTURE(k);
    REQUIRE(one[k].size() == two[k].size());
    CHECK(std::memcmp(one[k].data(), two[k].data(), one[k].size() * sizeof(double)) == 0);
  }
}

TEST_CASE("argmax and argmin along rows of 1 to 1000: the first of ties, the first NaN, -inf and lowest values") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // The first index of the best value (NaN counts as best, the first NaN wins), as numpy.argmax/argmin.
  const auto first_best = [](const std::vector<ld>& r, bool max) {
    std::size_t best = 0;
    for (std::size_t j = 0; j < r.size(); ++j) {
      if (std::isnan(r[best])) break;
      if (std::isnan(r[j]) || (max ? r[j] > r[best] : r[j] < r[best])) best = j;
    }
    return static_cast<std::int64_t>(best);
  };
  for (tx::index_t len : {1, 15, 16, 17, 40, 256, 257, 1000}) {
    CAPTURE(len);
    auto x = test::random<float, 2>({6, len}, -3, 3);
    for (tx::index_t j = 0; j < len; ++j) {
      x(0, j) = std::floor(x(0, j));  // many ties
      x(1, j) = -inf;                 // ties with the identity of argmax
      x(2, j) = inf;                  // and of argmin
    }
    x(3, len / 2) = nan;
    x(3, len - 1) = nan;
    if (len > 20) x(4, 17) = nan;  // a NaN after the first step
    x(5, len - 1) = 10;            // the best last (a partial step when len % 16 != 0)
    tx::tensor<std::int64_t, 1> amax = tx::argmax(x, 1), amin = tx::argmin(x, 1), amax_fused = tx::argmax(x * 1.0f, 1);
    for (tx::index_t i = 0; i < 6; ++i) {
      CAPTURE(i);
      const auto r = row_of(x, i);
      CHECK(amax(i) == first_best(r, true));
      CHECK(amin(i) == first_best(r, false));
      CHECK(amax_fused(i) == amax(i));
    }
    std::vector<ld> all;
    for (tx::index_t i = 0; i < 6; ++i) {
      const auto r = row_of(x, i);
      all.insert(all.end(), r.begin(), r.end());
    }
    CHECK(tx::argmax(x).item() == first_best(all, true));
    CHECK(tx::argmin(x).item() == first_best(all, false));
    tx::tensor<std::int32_t, 2> xi({2, len});
    for (tx::index_t j = 0; j < len; ++j) {
      xi(0, j) = j % 3 == 0 ? std::numeric_limits<std::int32_t>::lowest() : std::numeric_limits<std::int32_t>::max();
      xi(1, j) = static_cast<std::int32_t>(j % 7);
    }
    tx::tensor<std::int64_t, 1> imax = tx::argmax(xi, 1), imin = tx::argmin(xi, 1);
    for (tx::index_t i = 0; i < 2; ++i) {
      const auto r = row_of(xi, i);
      CHECK(imax(i) == first_best(r, true));
      CHECK(imin(i) == first_best(r, false));
    }
  }
}
