// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shape validation at every public entry point (shape_error naming the shapes), zero-size dimensions
// everywhere they make sense, and axis checks for every reduction.
#include <limits>
#include <string>
#include <vector>

#include "common.hpp"

#include <texpr/interop/ranges.hpp>

namespace {

template <std::size_t R> std::string str(const tx::shape_t<R>& s) { return tx::to_string(s); }

// Every reduction op along every valid axis, negative ones included; out-of-range axes throw naming the shape.
template <class Op, class T, std::size_t R> void check_axes_validated(const tx::tensor<T, R>& x) {
  const auto r = static_cast<tx::index_t>(R);
  for (tx::index_t a = -r; a < r; ++a) CHECK_NOTHROW((void)tx::reduce<Op>(x, a));
  for (tx::index_t a : {r, r + 1, -r - 1, tx::index_t(1) << 40, std::numeric_limits<tx::index_t>::min()}) {
    INFO("op ", std::string(Op::name), " axis ", a);
    CHECK_THROWS_WITH_AS((void)tx::reduce<Op>(x, a), doctest::Contains(str(x.shape()).c_str()), tx::shape_error);
  }
}

} // namespace

TEST_CASE("every reduction validates its axis, for ranks 1 to 3") {
  tx::tensor<float, 1> a({4});
  tx::tensor<float, 2> b({2, 3});
  tx::tensor<float, 3> c({2, 3, 4});
  check_axes_validated<tx::op::sum>(a);
  check_axes_validated<tx::op::mean>(b);
  check_axes_validated<tx::op::max>(c);
  check_axes_validated<tx::op::min>(c);
  check_axes_validated<tx::op::prod>(b);
  tx::tensor<std::int64_t, 2> i({2, 3});
  check_axes_validated<tx::op::sum>(i);
  // Through an expression child: the message shows the expression's (broadcast) shape.
  CHECK_THROWS_WITH_AS(tx::sum(b + a.view().data()[0] * 0.0f, 2), doctest::Contains("(2, 3)"), tx::shape_error);
}

TEST_CASE("incompatible shapes throw shape_error naming both shapes, for every kind of entry point") {
  tx::tensor<float, 2> a({3, 4}), b({4, 3});
  tx::tensor<float, 1> v5({5});
  tx::tensor<bool, 2> c({2, 4});
  const auto both = [](const std::string& x, const std::string& y) {
    return doctest::Contains((std::string("LHS shape = ") + x + " RHS shape = " + y).c_str());
  };
  CHECK_THROWS_WITH_AS(a + b, both("(3, 4)", "(4, 3)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(a - v5, both("(3, 4)", "(5,)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::maximum(v5, a), both("(5,)", "(3, 4)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::pow(a, b), both("(3, 4)", "(4, 3)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(static_cast<void>(a < b), both("(3, 4)", "(4, 3)"), tx::shape_error);
  CHECK_THROWS_AS(c && (b > 0.0f), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::where(c, a, a), doctest::Contains("(2, 4)"), tx::shape_error);  // cond vs branches
  CHECK_THROWS_WITH_AS(tx::where(a > 0.0f, a, b), doctest::Contains("(4, 3)"), tx::shape_error);
  // Nested: the inner node's shape is reported.
  CHECK_THROWS_WITH_AS(tx::exp(a) * tx::sum(b, 0), both("(3, 4)", "(3,)"), tx::shape_error);
  // matmul: inner and batch dimensions.
  CHECK_THROWS_WITH_AS(tx::matmul(a, a), both("(3, 4)", "(3, 4)"), tx::shape_error);
  tx::tensor<float, 3> b2({2, 4, 5}), b3({3, 4, 5}), a2({2, 3, 4});
  CHECK_NOTHROW((void)tx::matmul(a2, b2));
  CHECK_THROWS_WITH_AS(tx::matmul(a2, b3), both("(2, 3, 4)", "(3, 4, 5)"), tx::shape_error);
  // Batch dimensions broadcast as in numpy.matmul: 1 against 2 gives 2; 2 against 3 is an error.
  tx::tensor<float, 3> a1({1, 3, 4});
  CHECK(tx::matmul(a1, b2).shape() == tx::shape_t<3>{2, 3, 5});
  CHECK_THROWS_WITH_AS(tx::matmul(a2, b3), doctest::Contains("batch dimensions do not broadcast"), tx::shape_error);
  // Assignment into existing storage, into views, and a failed assignment leaves the destination intact.
  tx::tensor<float, 2> dst({3, 4});
  dst(0, 0) = 7;
  CHECK_THROWS_WITH_AS(dst = b * 2.0f, doctest::Contains("(4, 3)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(dst = tx::matmul(b, b2.view().data()[0] * a), doctest::Contains("(4, 4)"), tx::shape_error);
  CHECK(dst(0, 0) == 7.0f);
  std::vector<float> mem(12, 1.0f);
  tx::view<float, 2> vw(mem.data(), {4, 3});
  CHECK_THROWS_WITH_AS(vw = a + 1.0f, doctest::Contains("(3, 4)"), tx::shape_error);
  CHECK_THROWS_AS(vw = tx::sum(c.view().data()[0] ? a : b, 0) * 0.0f + a, tx::shape_error);
  CHECK(mem[0] == 1.0f);
  tx::tensor<float, 1> r3({3});
  CHECK_THROWS_WITH_AS(r3 = tx::sum(a, 0), doctest::Contains("(4,)"), tx::shape_error);
  CHECK_THROWS_WITH_AS((tx::tensor<float, 2>(tx::shape_t<2>{2, 2}, {1.0f, 2.0f, 3.0f})), doctest::Contains("(2, 2)"),
                       tx::shape_error);
}

TEST_CASE("bad extents, null memory and oversized shapes are rejected") {
  CHECK_THROWS_WITH_AS((tx::tensor<float, 2>({3, -1})), doctest::Contains("(3, -1)"), tx::shape_error);
  CHECK_THROWS_WITH_AS((tx::tensor<double, 2>({tx::index_t(1) << 40, tx::index_t(1) << 40})),
                       doctest::Contains("too large"), tx::shape_error);
  CHECK_THROWS_AS((tx::tensor<float, 3>({tx::index_t(1) << 62, 2, 2})), tx::shape_error);
  float x = 0;
  CHECK_THROWS_WITH_AS((tx::view<float, 1>(&x, {-2})), doctest::Contains("(-2,)"), tx::shape_error);
  CHECK_THROWS_WITH_AS((tx::view<float, 2>(nullptr, {2, 2})), doctest::Contains("(2, 2)"), std::invalid_argument);
  CHECK_NOTHROW((tx::view<float, 2>(nullptr, {0, 5})));
  tx::tensor<float, 2> t({2, 2});
  CHECK_THROWS_AS(t(-1, 0), std::out_of_range);
  CHECK_THROWS_AS(t(0, 2), std::out_of_range);
  tx::view<float, 1> one(&x, {1});
  CHECK_THROWS_AS(one(1), std::out_of_range);
  tx::tensor<float, 0> empty0;
  CHECK_THROWS_AS(empty0(), std::out_of_range);
}

TEST_CASE_TEMPLATE("zero-size dimensions: elementwise, broadcasting, where and cast", T, float, std::int32_t) {
  tx::tensor<T, 2> e03({0, 3}), e30({3, 0});
  tx::tensor<T, 1> r3({3}), r0({0}), one({1}, {T(1)});
  tx::tensor<T, 2> row({1, 3}), col({3, 1});
  tx::tensor<T, 2> a = e03 + e03, b = e03 + r3, c = e03 * row, d = r0 + e30, f = e30 - col;
  CHECK(a.shape() == tx::shape_t<2>{0, 3});
  CHECK(b.shape() == tx::shape_t<2>{0, 3});
  CHECK(c.shape() == tx::shape_t<2>{0, 3});
  CHECK(d.shape() == tx::shape_t<2>{3, 0});
  CHECK(f.shape() == tx::shape_t<2>{3, 0});
  tx::tensor<T, 1> g = r0 + one, h = -r0;  // 1 broadcasts to 0
  CHECK(g.shape() == tx::shape_t<1>{0});
  CHECK(h.size() == 0);
  tx::tensor<T, 2> k = col + r0;  // (3, 1) with (0,) gives (3, 0)
  CHECK(k.shape() == tx::shape_t<2>{3, 0});
  CHECK_THROWS_WITH_AS(r0 + r3, doctest::Contains("(0,)"), tx::shape_error);  // 0 against 3
  CHECK_THROWS_AS(e03 + col, tx::shape_error);                                 // 0 against 3 (first dim)
  tx::tensor<T, 2> w = tx::where(e03 > T(0), e03, T(1));
  CHECK(w.shape() == tx::shape_t<2>{0, 3});
  tx::tensor<double, 2> cd = tx::cast<double>(e30);
  CHECK(cd.shape() == tx::shape_t<2>{3, 0});
  // Assignment of an empty result into an empty destination, and through an empty view.
  tx::tensor<T, 2> dst({0, 3});
  dst = e03 * T(2);
  CHECK(dst.shape() == tx::shape_t<2>{0, 3});
  tx::view<T, 2> ev(nullptr, {0, 3});
  ev = e03 + T(1);
  ev = tx::sum(tx::tensor<T, 3>({0, 2, 3}), 1);
  // A strided empty view and its reduction.
  tx::view<const T, 2> es(nullptr, {3, 0}, {0, 7});
  CHECK(tx::sum(es).item() == T(0));
  CHECK(tx::eval(tx::sum(es, 0)).size() == 0);
  tx::tensor<T, 1> s1 = tx::sum(es, 1);
  CHECK(s1.shape() == tx::shape_t<1>{3});
  CHECK(s1(2) == T(0));
}

TEST_CASE_TEMPLATE("zero-size reductions along every axis of rank 3 inputs", T, float, double, std::int32_t, std::int64_t) {
  for (const auto& s : {tx::shape_t<3>{0, 2, 3}, tx::shape_t<3>{2, 0, 3}, tx::shape_t<3>{2, 3, 0}, tx::shape_t<3>{0, 0, 0}}) {
    INFO("shape ", str(s));
    tx::tensor<T, 3> x(s);
    CHECK(tx::sum(x).item() == T(0));
    CHECK(tx::prod(x).item() == T(1));
    CHECK_THROWS_WITH_AS(tx::max(x).item(), doctest::Contains(str(s).c_str()), tx::shape_error);
    CHECK_THROWS_AS(tx::min(x + T(1)).item(), tx::shape_error);
    if constexpr (std::is_floating_point_v<T>) CHECK(std::isnan(tx::mean(x).item()));
    for (int axis = 0; axis < 3; ++axis) {
      INFO("axis ", axis);
      tx::shape_t<2> out{};
      for (int d = 0, o = 0; d < 3; ++d)
        if (d != axis) out[static_cast<std::size_t>(o++)] = s[static_cast<std::size_t>(d)];
      tx::tensor<T, 2> sm = tx::sum(x, axis), pr = tx::prod(x, axis);
      CHECK(sm.shape() == out);
      for (tx::index_t i = 0; i < sm.size(); ++i) {
        CHECK(sm.data()[i] == T(0));
        CHECK(pr.data()[i] == T(1));
      }
      if (s[static_cast<std::size_t>(axis)] == 0 && tx::shape_size(out) != 0) {
        CHECK_THROWS_WITH_AS(tx::eval(tx::max(x, axis)), doctest::Contains(str(s).c_str()), tx::shape_error);
        if constexpr (std::is_floating_point_v<T>) {
          tx::tensor<T, 2> mn = tx::mean(x, axis);
          CHECK(std::isnan(mn.data()[0]));
        }
      } else {
        tx::tensor<T, 2> mx = tx::max(x, axis);  // an empty output, or a non-empty axis: no error
        CHECK(mx.shape() == out);
      }
    }
  }
}

TEST_CASE_TEMPLATE("matmul with m, n or k equal to 0, batched and not", T, float, double, std::int32_t, std::int64_t) {
  auto check = [](tx::index_t m, tx::index_t k, tx::index_t n) {
    INFO("m ", m, " k ", k, " n ", n);
    tx::tensor<T, 2> a({m, k}), b({k, n});
    for (tx::index_t i = 0; i < a.size(); ++i) a.data()[i] = T(1);
    for (tx::index_t i = 0; i < b.size(); ++i) b.data()[i] = T(2);
    tx::tensor<T, 2> c({m, n});
    for (tx::index_t i = 0; i < c.size(); ++i) c.data()[i] = T(7);  // stale values must be overwritten
    c = tx::matmul(a, b);
    CHECK(c.shape() == tx::shape_t<2>{m, n});
    for (tx::index_t i = 0; i < c.size(); ++i) REQUIRE(c.data()[i] == T(2 * k));
    tx::tensor<T, 3> a3({2, m, k}), c3({2, m, n});
    for (tx::index_t i = 0; i < c3.size(); ++i) c3.data()[i] = T(7);
    c3 = tx::matmul(a3, b);
    for (tx::index_t i = 0; i < c3.size(); ++i) REQUIRE(c3.data()[i] == T(0));
    tx::tensor<T, 3> cb = tx::matmul(tx::tensor<T, 3>({0, m, k}), tx::tensor<T, 3>({0, k, n}));
    CHECK(cb.shape() == tx::shape_t<3>{0, m, n});
    CHECK(tx::sum(tx::matmul(a, b)).item() == T(2 * k * m * n));  // a matmul child of a reduction
  };
  check(0, 3, 4);
  check(2, 0, 4);
  check(2, 3, 0);
  check(0, 0, 0);
  check(3, 0, 1);
  check(1, 1, 1);
}

// Checked extent arithmetic: every shape that a constructor, a layout or a generator builds has extents >= 0 and a
// product of nonzero extents whose byte size fits in int64 (NumPy's rule, so (0, 2^62, 2^62) is rejected although
// it has no elements); slice follows Python for every int64 step; arange's count is exact or rejected.
namespace {
constexpr tx::index_t p62 = tx::index_t(1) << 62;
constexpr tx::index_t p32 = tx::index_t(1) << 32;
constexpr tx::index_t i64_min = std::numeric_limits<tx::index_t>::min();
constexpr tx::index_t i64_max = std::numeric_limits<tx::index_t>::max();

// Python's range(n)[begin:end:step], written out as CPython's slice.indices does it, in __int128 (no overflow).
std::vector<tx::index_t> python_slice(tx::index_t n, tx::index_t begin, tx::index_t end, tx::index_t step) {
  __extension__ typedef __int128 i128;
  const bool up = step > 0;
  const i128 lower = up ? 0 : -1, upper = up ? n : n - 1;
  auto adjust = [&](i128 i) {
    if (i < 0) {
      i += n;
      if (i < lower) i = lower;
    } else if (i > upper) {
      i = upper;
    }
    return i;
  };
  std::vector<tx::index_t> out;
  for (i128 i = adjust(begin), stop = adjust(end); up ? i < stop : i > stop; i += step)
    out.push_back(static_cast<tx::index_t>(i));
  return out;
}
} // namespace

TEST_CASE("shapes whose nonzero extents overflow are rejected even with a zero extent (tensor, zeros, uniform)") {
  CHECK_THROWS_WITH_AS((tx::tensor<float, 3>({0, p62, p62})), doctest::Contains("(0, 4611686018427387904, 4611686018427387904)"),
                       tx::shape_error);
  CHECK_THROWS_WITH_AS((tx::tensor<float, 3>({0, p62, p62})), doctest::Contains("too large"), tx::shape_error);
  // The byte size counts: 2^61 floats are 2^63 bytes; 2^61 bools fit.
  CHECK_THROWS_AS((tx::tensor<float, 1>({tx::index_t(1) << 61})), tx::shape_error);
  CHECK_THROWS_AS((void)tx::zeros<float>({0, p62, p62}), tx::shape_error);
  CHECK_THROWS_AS((void)tx::random::uniform<float>({p62, 0, 4}, 1), tx::shape_error);
  CHECK_NOTHROW((void)tx::zeros<bool>({0, tx::index_t(1) << 61}));
  CHECK(tx::tensor<float, 3>({0, 1 << 20, 1 << 20}).size() == 0);  // representable: accepted, empty
}

TEST_CASE("views over null or user memory: element counts that wrap to 0 are rejected (view, as_view)") {
  CHECK_THROWS_WITH_AS((tx::view<float, 2>(nullptr, {p32, p32})), doctest::Contains("(4294967296, 4294967296)"),
                       tx::shape_error);
  CHECK_THROWS_AS((tx::view<const float, 2>(nullptr, {p32, p32}, {1, 1})), tx::shape_error);
  std::vector<float> empty;
  CHECK_THROWS_WITH_AS((void)tx::as_view(empty, {p32, p32}), doctest::Contains("too large"), tx::shape_error);
  CHECK_THROWS_AS((void)tx::as_view(empty, {0, p62, p62}), tx::shape_error);
  CHECK(tx::as_view(empty, {0, 7}).size() == 0);
  // A strided span that overflows: 3 elements 2^62 elements apart.
  float x[3] = {};
  CHECK_THROWS_WITH_AS((tx::view<float, 1>(x, {3}, {p62})), doctest::Contains("strides (4611686018427387904,)"),
                       tx::shape_error);
  CHECK_NOTHROW((tx::view<float, 1>(x, {1}, {p62})));  // one element: the stride is never applied
}

TEST_CASE("reshape rejects a target whose extents' product wraps") {
  tx::tensor<float, 1> a({16});
  CHECK_THROWS_WITH_AS((void)tx::reshape(a, {16, (tx::index_t(1) << 60) + 1}), doctest::Contains("reshape"), tx::shape_error);
  CHECK_THROWS_AS((void)tx::reshape(a, {p62, 4, -1}), tx::shape_error);
  tx::tensor<float, 1> e({0});
  CHECK_THROWS_AS((void)tx::reshape(e, {0, p62, p62}), tx::shape_error);
  CHECK(tx::reshape(e, {0, 3, 5}).shape() == tx::shape_t<3>{0, 3, 5});
  CHECK(tx::reshape(a, {4, -1}).shape() == tx::shape_t<2>{4, 4});
}

TEST_CASE("generators, broadcast_to and one_hot reject wrapping and negative shapes") {
  CHECK_THROWS_AS((void)tx::sum(tx::ones<float>({4, p62 + 1})), tx::shape_error);
  tx::tensor<float, 1> one({1}, {2.0f});
  CHECK_THROWS_WITH_AS((void)tx::broadcast_to(one, {-5}), doctest::Contains("negative extent -5"), tx::shape_error);
  CHECK_THROWS_AS((void)tx::broadcast_to(one, {4, p62 + 1}), tx::shape_error);
  tx::tensor<std::int32_t, 1> labels({16});
  CHECK_THROWS_WITH_AS((void)tx::one_hot(labels, tx::index_t(1) << 60), doctest::Contains("one_hot"), tx::shape_error);
  // Elementwise broadcasting of two valid shapes whose result is not: (16, 1) with (2^60,) int32.
  tx::tensor<std::int32_t, 2> col({16, 1});
  CHECK_THROWS_AS((void)(col + tx::arange<std::int32_t>(tx::index_t(1) << 60)), tx::shape_error);
  tx::tensor<float, 0> s = tx::sum(tx::broadcast_to(one, {3, 2}));
  CHECK(s() == 12.0f);
}

TEST_CASE("slice follows Python's range(n)[begin:end:step] for every int64 step, extreme ones included") {
  const tx::index_t values[] = {i64_min, i64_min + 1, -p62, -9, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 9, p62, i64_max - 1, i64_max};
  for (tx::index_t n : {0, 1, 4, 5}) {
    tx::tensor<std::int64_t, 1> a = tx::arange<std::int64_t>(n);
    for (tx::index_t b : values)
      for (tx::index_t e : values)
        for (tx::index_t st : values) {
          if (st == 0) continue;
          CAPTURE(n);
          CAPTURE(b);
          CAPTURE(e);
          CAPTURE(st);
          const auto want = python_slice(n, b, e, st);
          tx::tensor<std::int64_t, 1> got = tx::slice(a, 0, b, e, st);
          REQUIRE(got.size() == static_cast<tx::index_t>(want.size()));
          for (std::size_t i = 0; i != want.size(); ++i) CHECK(got(i) == want[i]);
        }
  }
  tx::tensor<float, 1> a({4}, {1, 2, 3, 4});
  tx::tensor<float, 1> first = tx::slice(a, 0, 0, 4, i64_max);
  CHECK(first.size() == 1);
  tx::tensor<float, 1> last = tx::slice(a, 0, 3, i64_min, i64_min);
  REQUIRE(last.size() == 1);
  CHECK(last(0) == 4.0f);
  CHECK_THROWS_AS((void)tx::slice(a, 0, 0, 4, 0), tx::shape_error);
}

TEST_CASE("arange rejects non-finite bounds and counts that do not fit; integer counts are exact") {
  CHECK_THROWS_WITH_AS((void)tx::arange<float>(0, std::numeric_limits<float>::infinity(), 1), doctest::Contains("finite"),
                       tx::shape_error);
  CHECK_THROWS_AS((void)tx::arange<float>(std::numeric_limits<float>::quiet_NaN(), 1, 1), tx::shape_error);
  CHECK_THROWS_AS((void)tx::arange<double>(0, 1, std::numeric_limits<double>::infinity()), tx::shape_error);
  CHECK_THROWS_WITH_AS((void)tx::arange<double>(0, 1e300, 1e-300), doctest::Contains("does not fit"), tx::shape_error);
  CHECK_THROWS_AS((void)tx::arange<double>(-1e308, 1e308, 1), tx::shape_error);  // end - begin is inf
  CHECK_THROWS_AS((void)tx::arange<std::int64_t>(i64_min, i64_max, 1), tx::shape_error);
  CHECK_THROWS_AS((void)tx::arange<std::int64_t>(0, i64_max, 1), tx::shape_error);  // 2^63 - 1 int64s overflow bytes
  // Exact where double would round: 2^60 .. 2^60 + 3 has 3 elements.
  CHECK(tx::arange<std::int64_t>(tx::index_t(1) << 60, (tx::index_t(1) << 60) + 3, 1).shape()[0] == 3);
  CHECK(tx::arange<std::int64_t>(i64_max, i64_min, i64_min).shape()[0] == 2);  // i64_max, -1
  tx::tensor<std::int64_t, 1> r = tx::arange<std::int64_t>(i64_max, i64_min, i64_min);
  CHECK(r(0) == i64_max);
  CHECK(r(1) == -1);
  CHECK(tx::arange<float>(0, 1, 0.25f).shape()[0] == 4);
  CHECK(tx::arange<float>(1, 0, 1).shape()[0] == 0);
}

TEST_CASE("var and stddev reject a negative ddof; ddof >= n gives NaN") {
  tx::tensor<double, 2> x({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK_THROWS_WITH_AS((void)tx::var(x, 1, i64_min), doctest::Contains("ddof -9223372036854775808"), tx::shape_error);
  CHECK_THROWS_AS((void)tx::stddev(x, 0, -1), tx::shape_error);
  CHECK_THROWS_AS((void)tx::var(x, 0, -1, tx::keepdims), tx::shape_error);
  tx::tensor<double, 1> v = tx::var(x, 1, 1);
  CHECK(v(0) == doctest::Approx(1.0));
  tx::tensor<double, 1> nan = tx::var(x, 1, 3);
  CHECK(std::isnan(nan(0)));
  tx::tensor<double, 1> huge = tx::var(x, 1, i64_max);
  CHECK(std::isnan(huge(1)));
}

TEST_CASE("concat and matmul reject results whose extents overflow int64, from valid operands") {
  const auto column = tx::zeros<float>({tx::index_t(1) << 40, 1});
  const auto row = tx::zeros<float>({1, tx::index_t(1) << 40});
  CHECK_THROWS_WITH_AS((void)tx::matmul(column, row), doctest::Contains("too large"), tx::shape_error);
  const auto half = tx::zeros<bool>({(tx::index_t(1) << 62) + 1});
  CHECK_THROWS_WITH_AS((void)tx::concat(0, half, half), doctest::Contains("concat along axis 0"), tx::shape_error);
  CHECK_THROWS_AS((void)tx::concat(0, half, half, tx::zeros<bool>({5})), tx::shape_error);
  CHECK(tx::concat(0, tx::zeros<bool>({3}), tx::zeros<bool>({4})).shape()[0] == 7);
}
