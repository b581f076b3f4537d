// Shape validation at every public entry point (shape_error naming the shapes), zero-size dimensions
// everywhere they make sense, and axis checks for every reduction.
#include <string>

#include "common.hpp"

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
