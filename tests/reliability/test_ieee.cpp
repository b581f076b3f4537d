// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// IEEE and integer semantics beyond tests/core: NaN and infinities at every position of the lane/block
// structure of host reductions, signed zeros, integer wrap-around in reductions, division by zero, casts.
#include <array>

#include "common.hpp"

namespace {

using rel::ld;

// Sizes around the reduction's lanes (16), blocks (256), row chunks (1024) and fixed pieces (65536).
constexpr std::array<tx::index_t, 10> sizes = {1, 15, 16, 17, 255, 256, 257, 4097, 65537, 70001};

std::vector<tx::index_t> positions(tx::index_t n) {
  std::vector<tx::index_t> p = {0, n - 1, n / 2, 15 % n, 16 % n, 255 % n, 256 % n, 1023 % n, 65536 % n};
  return p;
}

} // namespace

TEST_CASE_TEMPLATE("a single NaN anywhere makes sum, mean, max and min NaN (all, each axis, strided)", T, float, double) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (tx::index_t n : sizes) {
    tx::tensor<T, 1> x = test::random<T, 1>({n}, -3, 3);
    for (tx::index_t p : positions(n)) {
      INFO("n = ", n, ", NaN at ", p);
      const T keep = x(p);
      x(p) = nan;
      CHECK(std::isnan(tx::sum(x).item()));
      CHECK(std::isnan(tx::mean(x).item()));
      CHECK(std::isnan(tx::max(x).item()));
      CHECK(std::isnan(tx::min(x).item()));
      CHECK(std::isnan(tx::prod(x).item()));
      CHECK(std::isnan(tx::max(x * T(2)).item()));  // fused child
      // As a column of a (n, 2) strided view: the NaN's column reduces to NaN, the other does not.
      std::vector<T> two(static_cast<std::size_t>(2 * n), T(1));
      for (tx::index_t i = 0; i < n; ++i) two[static_cast<std::size_t>(2 * i)] = x(i);
      tx::view<const T, 2> v(two.data(), {n, 2});
      tx::tensor<T, 1> mx0 = tx::max(v, 0), mn0 = tx::min(v, 0), s0 = tx::sum(v, 0);
      CHECK(std::isnan(mx0(0)));
      CHECK(std::isnan(mn0(0)));
      CHECK(std::isnan(s0(0)));
      CHECK(mx0(1) == T(1));
      tx::view<const T, 2> vt(two.data(), {2, n}, {1, 2});  // transposed: the NaN is in row 0
      tx::tensor<T, 1> mx1 = tx::max(vt, 1), mn1 = tx::min(vt, -1);
      CHECK(std::isnan(mx1(0)));
      CHECK(std::isnan(mn1(0)));
      CHECK(mn1(1) == T(1));
      x(p) = keep;
    }
  }
}

TEST_CASE_TEMPLATE("infinities: inf - inf is NaN in sum, overflow gives inf, max/min of all -inf/+inf", T, float, double) {
  const T inf = std::numeric_limits<T>::infinity(), big = std::numeric_limits<T>::max();
  for (tx::index_t n : sizes) {
    if (n < 2) continue;
    INFO("n = ", n);
    tx::tensor<T, 1> x({n});
    x(0) = inf;
    x(n - 1) = -inf;  // in another lane, block or piece depending on n
    CHECK(std::isnan(tx::sum(x).item()));
    CHECK(std::isnan(tx::mean(x).item()));
    CHECK(tx::max(x).item() == inf);
    CHECK(tx::min(x).item() == -inf);
    x(n - 1) = 1;
    CHECK(tx::sum(x).item() == inf);
    CHECK(tx::mean(x).item() == inf);
    if (n > 2) CHECK(std::isnan(tx::prod(x).item()));  // inf * 0 (the zeros in between)
    tx::tensor<T, 1> all_neg = x * T(0) - inf, all_pos = x * T(0) + inf;
    all_neg(0) = -inf;
    all_pos(0) = inf;
    CHECK(tx::max(all_neg).item() == -inf);  // the identity -inf never leaks a wrong value
    CHECK(tx::min(all_pos).item() == inf);
  }
  // Finite terms whose sum overflows give inf, as IEEE addition does.
  tx::tensor<T, 1> o({4}, {big, big, big, big});
  CHECK(tx::sum(o).item() == inf);
  CHECK(tx::mean(o).item() == inf);
}

TEST_CASE_TEMPLATE("signed zeros: sums of -0 are -0, ops keep the IEEE sign of zero", T, float, double) {
  for (tx::index_t n : sizes) {
    INFO("n = ", n);
    tx::tensor<T, 1> z = tx::tensor<T, 1>({n}) * T(-1);  // n copies of -0.0
    REQUIRE(std::signbit(z(0)));
    CHECK(std::signbit(tx::sum(z).item()));  // IEEE: -0 + -0 = -0 (NumPy agrees)
    CHECK(std::signbit(tx::mean(z).item()));
    CHECK(tx::max(z).item() == T(0));
    tx::tensor<T, 1> plus({n});
    CHECK_FALSE(std::signbit(tx::sum(plus).item()));
    if (n > 1) {
      plus(n - 1) = T(-0.0);
      CHECK_FALSE(std::signbit(tx::sum(plus).item()));  // +0 + -0 = +0
    }
  }
  tx::tensor<T, 2> z2 = tx::tensor<T, 2>({300, 3}) * T(-1);
  tx::tensor<T, 1> a0 = tx::sum(z2, 0), a1 = tx::sum(z2, 1);
  CHECK(std::signbit(a0(2)));
  CHECK(std::signbit(a1(299)));
  tx::tensor<T, 1> e({0});
  CHECK_FALSE(std::signbit(tx::sum(e).item()));  // the empty sum is +0, as NumPy
  tx::tensor<T, 1> x({4}, {T(-0.0), T(0.0), T(-1), T(1)});
  tx::tensor<T, 1> neg = -x, ab = tx::abs(x), sq = tx::sqrt(x), rl = tx::relu(x), el = tx::elu(x), th = tx::tanh(x);
  CHECK_FALSE(std::signbit(neg(0)));
  CHECK(std::signbit(neg(1)));
  CHECK_FALSE(std::signbit(ab(0)));
  CHECK(std::signbit(sq(0)));  // sqrt(-0) = -0
  CHECK(std::isnan(sq(2)));
  CHECK_FALSE(std::signbit(rl(0)));  // relu(-0) = +0
  CHECK(std::signbit(el(0)));        // elu(-0) = alpha * expm1(-0) = -0
  CHECK(std::signbit(th(0)));
  tx::tensor<T, 1> inv = T(1) / x;
  CHECK(inv(0) == -std::numeric_limits<T>::infinity());
  CHECK(inv(1) == std::numeric_limits<T>::infinity());
  tx::tensor<bool, 1> eq = x == T(0);
  CHECK(eq(0));
  CHECK(eq(1));
}

TEST_CASE_TEMPLATE("NaN compares unequal and unordered; where, casts and maths functions on NaN", T, float, double) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  tx::tensor<T, 1> a({5}, {nan, nan, T(1), inf, T(0)});
  tx::tensor<T, 1> b({5}, {nan, T(1), nan, inf, T(0)});
  tx::tensor<bool, 1> eq = a == b, ne = a != b, lt = a < b, ge = a >= b;
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(eq(i));
    CHECK(ne(i));
    CHECK_FALSE(lt(i));
    CHECK_FALSE(ge(i));
  }
  CHECK(eq(3));  // inf == inf
  tx::tensor<T, 1> w = tx::where(a == a, a, T(-7));  // NaN-to-value replacement idiom
  CHECK(w(0) == T(-7));
  CHECK(w(2) == T(1));
  tx::tensor<T, 1> ex = tx::exp(a), lg = tx::log(b), sg = tx::sigmoid(a), pw = tx::pow(a, T(0)), d = a - b;
  CHECK(std::isnan(ex(0)));
  CHECK(ex(3) == inf);
  CHECK(lg(4) == -inf);                               // log(0) = -inf
  CHECK(std::isnan(tx::eval(tx::log(a - T(2)))(2)));  // log(-1) = NaN
  CHECK(std::isnan(sg(0)));
  CHECK(pw(0) == T(1));  // pow(NaN, 0) = 1 (IEEE / C)
  CHECK(std::isnan(d(3)));  // inf - inf
  tx::tensor<T, 1> big({2}, {T(1000), T(-1000)});
  tx::tensor<T, 1> s = tx::sigmoid(big), e = tx::exp(big);
  CHECK(s(0) == T(1));
  CHECK(s(1) == T(0));  // no NaN from inf / inf
  CHECK(e(0) == inf);
  CHECK(e(1) == T(0));
  tx::tensor<bool, 1> nb = tx::cast<bool>(a);
  CHECK(nb(0));  // NaN is truthy (x != 0), as in C++ and NumPy
  CHECK_FALSE(nb(4));
}

TEST_CASE_TEMPLATE("integer sum and prod accumulate in the dtype and wrap, on every reduction path", T, std::int32_t,
                   std::int64_t) {
  using L = std::numeric_limits<T>;
  test::rng(77);
  auto x = test::random<T, 2>({129, 300}, static_cast<double>(L::min()), static_cast<double>(L::max()));
  // All elements, through the dense path and through a transposed (row path) view.
  test::i128 all = 0;
  for (tx::index_t i = 0; i < x.size(); ++i) all += x.data()[i];
  CHECK(tx::sum(x).item() == test::wrap<T>(all));
  tx::tensor<T, 2> xt({300, 129});
  for (tx::index_t i = 0; i < 129; ++i)
    for (tx::index_t j = 0; j < 300; ++j) xt(j, i) = x(i, j);
  tx::view<const T, 2> back(xt.data(), {129, 300}, {1, 129});
  CHECK(tx::sum(back).item() == test::wrap<T>(all));
  // Each axis, against wrapped 128-bit sums and products. Products use factors that are never 0 (+-1, +-3, a few
  // +-2): full-range factors would make every product 0 after 64 even ones, and the test would compare 0 with 0.
  const auto f = test::product_factors<T, 2>({129, 300});
  tx::tensor<T, 2> ft({300, 129});
  for (tx::index_t i = 0; i < 129; ++i)
    for (tx::index_t j = 0; j < 300; ++j) ft(j, i) = f(i, j);
  tx::view<const T, 2> f_back(ft.data(), {129, 300}, {1, 129});
  tx::tensor<T, 1> s0 = tx::sum(x, 0), s1 = tx::sum(back, 1), p0 = tx::prod(f, 0), p1 = tx::prod(f_back, 1);
  test::u128 all_p = 1;
  int nontrivial = 0;
  for (tx::index_t j = 0; j < 300; ++j) {
    test::i128 s = 0;
    test::u128 p = 1;
    for (tx::index_t i = 0; i < 129; ++i) {
      s += x(i, j);
      p *= static_cast<test::u128>(static_cast<test::i128>(f(i, j)));
    }
    REQUIRE(s0(j) == test::wrap<T>(s));
    REQUIRE(p0(j) == test::wrap<T>(static_cast<test::i128>(p)));
    REQUIRE(p0(j) != 0);
  }
  for (tx::index_t i = 0; i < 129; ++i) {
    test::i128 s = 0;
    test::u128 p = 1;
    for (tx::index_t j = 0; j < 300; ++j) {
      s += x(i, j);
      p *= static_cast<test::u128>(static_cast<test::i128>(f(i, j)));
    }
    REQUIRE(s1(i) == test::wrap<T>(s));
    REQUIRE(p1(i) == test::wrap<T>(static_cast<test::i128>(p)));
    nontrivial += p1(i) != 1 && p1(i) != -1;
  }
  CHECK(nontrivial > 120);
  // The whole product (dense and through the transposed view) wraps around T.
  for (tx::index_t i = 0; i < f.size(); ++i) all_p *= static_cast<test::u128>(static_cast<test::i128>(f.data()[i]));
  CHECK(tx::prod(f).item() == test::wrap<T>(static_cast<test::i128>(all_p)));
  CHECK(tx::prod(f_back).item() == test::wrap<T>(static_cast<test::i128>(all_p)));
  CHECK(tx::prod(f).item() != 0);
  // max/min of integers: no infinity, the identity is the type's extreme and never leaks.
  tx::tensor<T, 1> lo({3}, {L::min(), L::min(), L::min()}), hi({3}, {L::max(), L::max(), L::max()});
  CHECK(tx::max(lo).item() == L::min());
  CHECK(tx::min(hi).item() == L::max());
}

TEST_CASE_TEMPLATE("integer division: truncation toward zero, x / 0 == 0, min / -1 == min, scalar divisors", T,
                   std::int32_t, std::int64_t) {
  using L = std::numeric_limits<T>;
  tx::tensor<T, 1> a({8}, {T(-7), T(7), T(-7), T(0), L::min(), L::max(), L::min(), T(5)});
  tx::tensor<T, 1> b({8}, {T(2), T(-2), T(-2), T(0), T(-1), T(0), T(0), T(1)});
  tx::tensor<T, 1> q = a / b;
  const std::array<T, 8> want = {T(-3), T(-3), T(3), T(0), L::min(), T(0), T(0), T(5)};
  for (int i = 0; i < 8; ++i) CHECK(q(i) == want[static_cast<std::size_t>(i)]);
  tx::tensor<T, 1> by0 = a / 0, byneg = a / -1, inv = 1 / a;
  for (int i = 0; i < 8; ++i) CHECK(by0(i) == 0);
  CHECK(byneg(4) == L::min());
  CHECK(byneg(5) == -L::max());
  CHECK(inv(3) == 0);  // 1 / 0
  CHECK(tx::sum(a / tx::tensor<T, 1>({8})).item() == 0);  // a reduction over divisions by zero
}

TEST_CASE("float to integer casts truncate, saturate at the type's limits and map NaN to 0") {
  using I32 = std::numeric_limits<std::int32_t>;
  using I64 = std::numeric_limits<std::int64_t>;
  const float fin = std::numeric_limits<float>::infinity(), fnan = std::numeric_limits<float>::quiet_NaN();
  tx::tensor<float, 1> f({10}, {fnan, fin, -fin, 2147483648.0f, 2147483520.0f, -2147483648.0f, -2147483904.0f, 1e20f,
                                -1.9f, 1.9f});
  tx::tensor<std::int32_t, 1> i32 = tx::cast<std::int32_t>(f);
  const std::array<std::int32_t, 10> w32 = {0, I32::max(), I32::min(), I32::max(), 2147483520, I32::min(), I32::min(),
                                            I32::max(), -1, 1};
  for (int i = 0; i < 10; ++i) CHECK(i32(i) == w32[static_cast<std::size_t>(i)]);
  tx::tensor<std::int64_t, 1> i64 = tx::cast<std::int64_t>(f);
  CHECK(i64(0) == 0);
  CHECK(i64(1) == I64::max());
  CHECK(i64(2) == I64::min());
  CHECK(i64(3) == 2147483648LL);
  CHECK(i64(7) == I64::max());  // 1e20 > 2^63
  tx::tensor<double, 1> d({8}, {9223372036854775808.0, 9223372036854774784.0, -9223372036854775808.0,
                                -9223372036854777856.0, 2147483647.9, -2147483648.9, 2147483648.0, -0.5});
  tx::tensor<std::int64_t, 1> d64 = tx::cast<std::int64_t>(d);
  CHECK(d64(0) == I64::max());
  CHECK(d64(1) == 9223372036854774784LL);  // the largest double below 2^63 converts exactly
  CHECK(d64(2) == I64::min());
  CHECK(d64(3) == I64::min());
  tx::tensor<std::int32_t, 1> d32 = tx::cast<std::int32_t>(d);
  CHECK(d32(4) == I32::max());
  CHECK(d32(5) == I32::min());
  CHECK(d32(6) == I32::max());
  CHECK(d32(7) == 0);
  // Integer narrowing wraps (C++20 modular conversion); double to float rounds and overflows to inf.
  tx::tensor<std::int64_t, 1> wide({3}, {(std::int64_t(1) << 32) + 5, -1, I64::min()});
  tx::tensor<std::int32_t, 1> narrow = tx::cast<std::int32_t>(wide);
  CHECK(narrow(0) == 5);
  CHECK(narrow(1) == -1);
  CHECK(narrow(2) == 0);
  tx::tensor<double, 1> huge({3}, {1e300, -1e300, 1e-300});
  tx::tensor<float, 1> hf = tx::cast<float>(huge);
  CHECK(hf(0) == fin);
  CHECK(hf(1) == -fin);
  CHECK(hf(2) == 0.0f);
  tx::tensor<std::int64_t, 1> odd({1}, {(std::int64_t(1) << 53) + 1});
  CHECK(tx::eval(tx::cast<double>(odd))(0) == 9007199254740992.0);  // rounds to nearest even
}
