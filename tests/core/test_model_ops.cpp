// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The ops classifiers and statistics need, beyond the registry's row checks: var/stddev accuracy on data with a
// large mean, ddof; logsumexp/softmax/log_softmax on large, infinite and NaN logits; cross_entropy and one_hot
// against long double loops; concat's errors; the indexing ops' index and shape errors. Tolerances are relative, stated per check.
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "reference.hpp"

namespace {

using test::ld;

// Two-pass variance of row i (or column) in long double.
template <class T> ld var_ref(const std::vector<T>& v, tx::index_t ddof) {
  ld m = 0;
  for (T x : v) m += static_cast<ld>(x);
  m /= static_cast<ld>(v.size());
  ld q = 0;
  for (T x : v) q += (static_cast<ld>(x) - m) * (static_cast<ld>(x) - m);
  return q / static_cast<ld>(static_cast<tx::index_t>(v.size()) - ddof);
}

} // namespace

TEST_CASE("var and stddev keep their precision for data with a large mean (float 1e6 + U(-1, 1), double 1e9 + ...)") {
  // E[x^2] - E[x]^2 in float would lose every digit here (x^2 ~ 1e12, float eps ~ 6e-8: error ~ 6e4 >> var ~ 0.33).
  tx::tensor<float, 2> x({3, 5000});
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = 1e6f + static_cast<float>(test::uniform<double>(-1, 1));
  tx::tensor<float, 1> v0 = tx::var(x, 1);
  tx::tensor<float, 1> v1 = tx::var(x, -1, 1);
  tx::tensor<float, 1> s1 = tx::stddev(x, 1, 1);
  for (tx::index_t i = 0; i < 3; ++i) {
    std::vector<float> row(x.data() + i * 5000, x.data() + (i + 1) * 5000);
    const ld want0 = var_ref(row, 0), want1 = var_ref(row, 1);
    CHECK(want0 > 0.25L);  // the data vary: U(-1, 1) has variance 1/3
    CHECK(want0 < 0.45L);
    CHECK(test::close(v0(i), want0, 0, 1e-5L));  // relative 1e-5: the float result's rounding plus slack
    CHECK(test::close(v1(i), want1, 0, 1e-5L));
    CHECK(test::close(s1(i), std::sqrt(want1), 0, 1e-5L));
  }
  std::vector<float> all(x.data(), x.data() + x.size());
  CHECK(test::close(tx::var(x).item(), var_ref(all, 0), 0, 1e-5L));
  tx::tensor<double, 1> y({20000});
  for (tx::index_t i = 0; i < y.size(); ++i) y(i) = 1e9 + test::uniform<double>(-1, 1);
  std::vector<double> yv(y.data(), y.data() + y.size());
  // Relative 1e-8: each merge of two partial means near 1e9 rounds at 1.2e-7, far below the 1e-5 this data gives
  // naive formulas in double.
  CHECK(test::close(tx::var(y, 0, 1).item(), var_ref(yv, 1), 0, 1e-8L));
}

TEST_CASE("var: ddof, keepdims, one element and empty inputs") {
  tx::tensor<double, 2> x({2, 3}, {1, 2, 4, -1, -1, -1});
  tx::tensor<double, 2> k = tx::var(x, 1, tx::keepdims);
  REQUIRE(k.shape() == tx::shape_t<2>{2, 1});
  CHECK(k(0, 0) == doctest::Approx(14.0 / 9.0).epsilon(1e-15));
  CHECK(k(1, 0) == 0.0);
  tx::tensor<double, 2> k1 = tx::stddev(x, 1, 1, tx::keepdims);
  CHECK(k1(0, 0) == doctest::Approx(std::sqrt(7.0 / 3.0)).epsilon(1e-15));
  // n <= ddof: NaN (NumPy warns and gives NaN); the mean of nothing is NaN too.
  tx::tensor<double, 2> one({2, 1}, {5, 6});
  tx::tensor<double, 1> v = tx::var(one, 1, 1);
  CHECK(std::isnan(v(0)));
  tx::tensor<double, 1> v0 = tx::var(one, 1);
  CHECK(v0(0) == 0.0);
  CHECK(v0(1) == 0.0);
  tx::tensor<double, 1> empty({0});
  CHECK(std::isnan(tx::var(empty).item()));
  CHECK(std::isnan(tx::stddev(empty).item()));
}

TEST_CASE("logsumexp is stable for large logits and exact for infinities and NaN") {
  tx::tensor<float, 2> z({4, 3}, {1000, 1000, 1000,                                     // would overflow exp
                                  -1000, -1001, -1002,                                  // would underflow
                                  -std::numeric_limits<float>::infinity(), 0, 1,        // -inf contributes 0
                                  1, std::numeric_limits<float>::quiet_NaN(), 2});      // NaN propagates
  tx::tensor<float, 1> l = tx::logsumexp(z, 1);
  CHECK(test::close(l(0), 1000 + std::log(3.0L)));
  CHECK(test::close(l(1), -1000 + std::log(1 + std::exp(-1.0L) + std::exp(-2.0L))));
  CHECK(test::close(l(2), std::log(1 + std::exp(1.0L))));
  CHECK(std::isnan(l(3)));
  const float inf = std::numeric_limits<float>::infinity();
  tx::tensor<float, 1> pinf({3}, {1, inf, 2});
  CHECK(tx::logsumexp(pinf).item() == inf);
  tx::tensor<float, 1> ninf({2}, {-inf, -inf});
  CHECK(tx::logsumexp(ninf).item() == -inf);
  tx::tensor<float, 1> none({0});
  CHECK(tx::logsumexp(none).item() == -inf);  // log(0), as torch.logsumexp of an empty tensor
}

TEST_CASE("softmax, log_softmax along either axis against long double (float, tolerance 4e-6 relative)") {
  auto z = test::random<float, 2>({37, 53}, -30, 30);
  for (int axis : {0, 1, -1}) {
    tx::tensor<float, 2> s = tx::softmax(z, axis);
    tx::tensor<float, 2> ls = tx::log_softmax(z, axis);
    const std::size_t a = static_cast<std::size_t>(axis < 0 ? axis + 2 : axis);
    int failures = 0;
    for (tx::index_t i = 0; i < 37; ++i)
      for (tx::index_t j = 0; j < 53; ++j) {
        ld m = -INFINITY, sum = 0;
        const tx::index_t n = a == 0 ? 37 : 53;
        for (tx::index_t k = 0; k < n; ++k) m = std::max<ld>(m, a == 0 ? z(k, j) : z(i, k));
        for (tx::index_t k = 0; k < n; ++k) sum += std::exp(static_cast<ld>(a == 0 ? z(k, j) : z(i, k)) - m);
        const ld lw = static_cast<ld>(z(i, j)) - m - std::log(sum);
        // log_softmax: error relative to the logits' magnitude (it is a difference of two such numbers).
        if (!test::close(ls(i, j), lw, 30)) ++failures;
        if (!test::close(s(i, j), std::exp(lw), 0, 4e-5L)) ++failures;  // exp amplifies log_softmax's absolute error
      }
    CHECK(failures == 0);
  }
  // Rows sum to 1, and logits of 1e4 do not overflow (x - logsumexp(x) loses eps * 1e4 absolute: 2e-12).
  tx::tensor<double, 2> big = tx::full({2, 3}, 1e4) + tx::reshape(tx::arange<double>(6), {2, 3});
  tx::tensor<double, 1> rows = tx::sum(tx::softmax(big, 1), 1);
  CHECK(rows(0) == doctest::Approx(1.0).epsilon(1e-11));
  CHECK(rows(1) == doctest::Approx(1.0).epsilon(1e-11));
}

TEST_CASE("softmax and log_softmax along an axis of length 0 give an empty result, as torch.softmax") {
  tx::tensor<float, 2> z(tx::shape_t<2>{3, 0});
  for (int axis : {1, -1, 0}) {
    CAPTURE(axis);
    tx::tensor<float, 2> s = tx::softmax(z, axis);
    tx::tensor<float, 2> ls = tx::log_softmax(z, axis);
    CHECK(s.shape() == tx::shape_t<2>{3, 0});
    CHECK(ls.shape() == tx::shape_t<2>{3, 0});
    tx::tensor<float, 2> fused = tx::softmax(z, axis) * 2.0f + 1.0f;  // read as an operand: materialised first
    CHECK(fused.shape() == tx::shape_t<2>{3, 0});
  }
  tx::tensor<double, 1> none({0});
  tx::tensor<double, 1> s1 = tx::softmax(none, 0);
  CHECK(s1.size() == 0);
  tx::tensor<double, 1> ls1 = tx::log_softmax(std::move(none), 0);
  CHECK(ls1.size() == 0);
}

TEST_CASE("cross_entropy against long double, int32 and int64 labels; bad labels give NaN; shapes are checked") {
  auto z = test::random<double, 2>({64, 10}, -8, 8);
  tx::tensor<std::int64_t, 1> labels({64});
  tx::tensor<std::int32_t, 1> labels32({64});
  for (tx::index_t i = 0; i < 64; ++i) labels(i) = labels32(i) = static_cast<std::int32_t>((i * 7 + 3) % 10);
  ld want = 0;
  for (tx::index_t i = 0; i < 64; ++i) {
    ld m = -INFINITY, s = 0;
    for (tx::index_t j = 0; j < 10; ++j) m = std::max<ld>(m, z(i, j));
    for (tx::index_t j = 0; j < 10; ++j) s += std::exp(static_cast<ld>(z(i, j)) - m);
    want += m + std::log(s) - static_cast<ld>(z(i, labels(i)));
  }
  want /= 64;
  CHECK(want > 1);  // not a trivially small loss
  CHECK(test::close(tx::cross_entropy(z, labels).item(), want, 8));
  CHECK(test::close(tx::cross_entropy(z, labels32).item(), want, 8));
  // float logits of (4096, 1000), the peer-benchmark shape, against the same loop.
  auto zf = test::random<float, 2>({256, 1000}, -5, 5);
  tx::tensor<std::int64_t, 1> lf({256});
  for (tx::index_t i = 0; i < 256; ++i) lf(i) = (i * 389) % 1000;
  ld wf = 0;
  for (tx::index_t i = 0; i < 256; ++i) {
    ld m = -INFINITY, s = 0;
    for (tx::index_t j = 0; j < 1000; ++j) m = std::max<ld>(m, zf(i, j));
    for (tx::index_t j = 0; j < 1000; ++j) s += std::exp(static_cast<ld>(zf(i, j)) - m);
    wf += m + std::log(s) - static_cast<ld>(zf(i, lf(i)));
  }
  CHECK(test::close(tx::cross_entropy(zf, lf).item(), wf / 256, 5));
  labels(5) = 10;
  CHECK(std::isnan(tx::cross_entropy(z, labels).item()));
  labels(5) = -1;
  CHECK(std::isnan(tx::cross_entropy(z, labels).item()));
  tx::tensor<std::int64_t, 1> short_labels({63});
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::cross_entropy(z, short_labels)),
                       doctest::Contains("logits shape = (64, 10) labels shape = (63,)"), tx::shape_error);
}

namespace {

// Mean over rows of logsumexp(z row) - z[i, label i], in long double from the stored values.
template <class T> ld cross_entropy_ref(const tx::tensor<T, 2>& z, const tx::tensor<std::int64_t, 1>& l) {
  const tx::index_t b = z.shape()[0], c = z.shape()[1];
  ld total = 0;
  for (tx::index_t i = 0; i < b; ++i) {
    ld m = -INFINITY, s = 0;
    for (tx::index_t j = 0; j < c; ++j) m = std::max<ld>(m, z(i, j));
    for (tx::index_t j = 0; j < c; ++j) s += std::exp(static_cast<ld>(z(i, j)) - m);
    total += m + std::log(s) - static_cast<ld>(z(i, l(i)));
  }
  return total / static_cast<ld>(b);
}

} // namespace

TEST_CASE("cross_entropy: labels at the first and last class, one class, a batch of one, large logits, wide labels") {
  // Labels at the edges of the row (the picked element is the first or the last of its row), int64 and int32.
  auto z = test::random<float, 2>({33, 17}, -6, 6);
  tx::tensor<std::int64_t, 1> l({33});
  tx::tensor<std::int32_t, 1> l32({33});
  for (tx::index_t i = 0; i < 33; ++i) l(i) = l32(i) = i % 2 == 0 ? 0 : 16;
  CHECK(test::close(tx::cross_entropy(z, l).item(), cross_entropy_ref(z, l), 0, 1e-6L));
  CHECK(test::close(tx::cross_entropy(z, l32).item(), cross_entropy_ref(z, l), 0, 1e-6L));
  // The logits through an expression and a transposed (strided) view: evaluated once, then picked by stride.
  tx::tensor<float, 2> zt = tx::transpose(z);
  tx::tensor<float, 2> z3 = z * 3.0f;
  CHECK(test::close(tx::cross_entropy(tx::transpose(zt) * 3.0f, l).item(), cross_entropy_ref(z3, l), 0, 1e-6L));
  // One class: logsumexp of one logit is the logit, so the loss is exactly 0; label 1 is out of range.
  tx::tensor<double, 2> one({4, 1}, {-3, 0.5, 1e300, -7});
  tx::tensor<std::int64_t, 1> zeros({4}, {0, 0, 0, 0});
  CHECK(tx::cross_entropy(one, zeros).item() == 0.0);
  zeros(2) = 1;
  CHECK(std::isnan(tx::cross_entropy(one, zeros).item()));
  // A batch of one row.
  auto row = test::random<double, 2>({1, 1000}, -20, 20);
  tx::tensor<std::int64_t, 1> l1({1}, {999});
  CHECK(test::close(tx::cross_entropy(row, l1).item(), cross_entropy_ref(row, l1), 0, 1e-14L));
  // Logits near 1e4 in float (ulp 2^-10): logsumexp - z[label] computed as log(sum) + (max - z[label]), two
  // terms >= 0, keeps float accuracy (relative 1e-6); logsumexp rounded to float first would lose ~5e-4 per row.
  tx::tensor<float, 2> big = test::random<float, 2>({64, 10}, -8, 8) + 1e4f;
  tx::tensor<std::int64_t, 1> lb({64});
  for (tx::index_t i = 0; i < 64; ++i) lb(i) = (i * 3) % 10;
  const ld want_big = cross_entropy_ref(big, lb);
  CHECK(want_big > 1);
  CHECK(test::close(tx::cross_entropy(big, lb).item(), want_big, 0, 1e-6L));
  tx::tensor<double, 2> bigd = tx::cast<double>(big) * 1e10;  // logits of 1e14 in double
  CHECK(test::close(tx::cross_entropy(bigd, lb).item(), cross_entropy_ref(bigd, lb), 0, 1e-13L));
  // Labels outside [0, classes) give NaN: negative, the class count, and int64 labels beyond 32 bits whose low
  // word is in range (the label is read whole).
  for (std::int64_t bad : {std::int64_t(-1), std::int64_t(17), (std::int64_t(1) << 32) + 3, std::numeric_limits<std::int64_t>::min()}) {
    l(7) = bad;
    CHECK(std::isnan(tx::cross_entropy(z, l).item()));
  }
  l32(32) = 17;
  CHECK(std::isnan(tx::cross_entropy(z, l32).item()));
  // Non-finite logits: a row with +inf has loss +inf unless its label is the +inf (then NaN), a NaN makes the
  // loss NaN, an all -inf row NaN (as logsumexp - z[label] = -inf + inf).
  const float inf = std::numeric_limits<float>::infinity();
  tx::tensor<float, 2> nf({1, 3}, {1, inf, 2});
  tx::tensor<std::int64_t, 1> l0({1}, {0});
  CHECK(tx::cross_entropy(nf, l0).item() == inf);
  l0(0) = 1;
  CHECK(std::isnan(tx::cross_entropy(nf, l0).item()));
  nf(0, 1) = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(tx::cross_entropy(nf, l0).item()));
  tx::tensor<float, 2> ninf({1, 2}, {-inf, -inf});
  CHECK(std::isnan(tx::cross_entropy(ninf, l0).item()));
}

TEST_CASE("softmax writes its result in place: into itself, a strided slice, after an expression; rows sum to 1") {
  auto z = test::random<float, 2>({37, 53}, -30, 30);
  const auto want = [&](const tx::tensor<float, 2>& x, tx::index_t i, tx::index_t j) {
    ld m = -INFINITY, s = 0;
    for (tx::index_t k = 0; k < x.shape()[1]; ++k) m = std::max<ld>(m, x(i, k));
    for (tx::index_t k = 0; k < x.shape()[1]; ++k) s += std::exp(static_cast<ld>(x(i, k)) - m);
    return std::exp(static_cast<ld>(x(i, j)) - m) / s;
  };
  tx::tensor<float, 2> x = z.clone();
  x = tx::softmax(x, 1);  // the destination is the operand: written through a temporary
  tx::tensor<float, 2> wide = tx::full({37, 60}, -1.0f);
  tx::slice(wide, 1, 2, 55) = tx::softmax(z, 1);  // a strided destination
  tx::tensor<float, 2> e = tx::softmax(z * 1.0f, -1);
  int failures = 0;
  for (tx::index_t i = 0; i < 37; ++i) {
    ld row = 0;
    for (tx::index_t j = 0; j < 53; ++j) {
      const ld w = want(z, i, j);
      // Relative 2.5e-6: exp's argument x - max (up to 60) rounds by up to 2^-19 = 1.9e-6, then the exp, the sum
      // and one division add a few ulp (measured 2.09e-6; exp(x - logsumexp) reached 3.0e-6 on these logits).
      if (!test::close(x(i, j), w, 0, 2.5e-6L)) ++failures;
      if (!test::close(wide(i, j + 2), w, 0, 2.5e-6L)) ++failures;
      if (!test::close(e(i, j), w, 0, 2.5e-6L)) ++failures;
      row += x(i, j);
    }
    if (!test::close(static_cast<float>(row), 1.0L, 0, 1e-5L)) ++failures;
    if (wide(i, 0) != -1.0f || wide(i, 1) != -1.0f || wide(i, 55) != -1.0f) ++failures;
  }
  CHECK(failures == 0);
  // Non-finite rows as before: a +inf gives NaN there and 0 at the finite logits; NaN and all -inf rows are NaN.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  tx::tensor<float, 2> nf({3, 3}, {1, inf, -inf, 1, nan, 2, -inf, -inf, -inf});
  tx::tensor<float, 2> s = tx::softmax(nf, 1);
  CHECK(s(0, 0) == 0.0f);
  CHECK(std::isnan(s(0, 1)));
  CHECK(s(0, 2) == 0.0f);
  for (tx::index_t j = 0; j < 3; ++j) CHECK(std::isnan(s(1, j)));
  for (tx::index_t j = 0; j < 3; ++j) CHECK(std::isnan(s(2, j)));
}

TEST_CASE("one_hot: float by default, any floating dtype, rank + 1, zeros for labels out of range") {
  tx::tensor<std::int32_t, 2> l({2, 2}, {0, 3, 2, 7});
  tx::tensor<float, 3> h = tx::one_hot(l, 4);
  REQUIRE(h.shape() == tx::shape_t<3>{2, 2, 4});
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 2; ++j)
      for (tx::index_t k = 0; k < 4; ++k) CHECK(h(i, j, k) == (l(i, j) == k ? 1.0f : 0.0f));
  static_assert(std::is_same_v<decltype(tx::one_hot<double>(l, 4))::value_type, double>);
  CHECK_THROWS_AS(static_cast<void>(tx::one_hot(l, 0)), tx::shape_error);
}

TEST_CASE("concat: errors name every shape; rank-1 and a single operand") {
  tx::tensor<float, 2> a({2, 3}), b({3, 3}), c({2, 4});
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::concat(1, a, b)), doctest::Contains("operand shapes are (2, 3), (3, 3)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::concat(2, a, c)), doctest::Contains("axis 2 is out of range"), tx::shape_error);
  CHECK(tx::concat(1, a, c).shape() == tx::shape_t<2>{2, 7});
  tx::tensor<int, 1> u({2}, {1, 2}), v({3}, {3, 4, 5});
  tx::tensor<int, 1> w = tx::concat(0, u, v, u);
  REQUIRE(w.shape() == tx::shape_t<1>{7});
  const int want[7] = {1, 2, 3, 4, 5, 1, 2};
  for (tx::index_t i = 0; i < 7; ++i) CHECK(w(i) == want[i]);
  tx::tensor<int, 1> same = tx::concat(0, v);
  CHECK(same(2) == 5);
  // Writing into one of its own operands goes through a temporary (the operands are read elsewhere than written).
  tx::tensor<int, 1> x({4}, {1, 2, 3, 4});
  tx::slice(x, 0, 0, 4) = tx::concat(0, tx::slice(x, 0, 2, 4), tx::slice(x, 0, 0, 2));
  CHECK(x(0) == 3);
  CHECK(x(1) == 4);
  CHECK(x(2) == 1);
  CHECK(x(3) == 2);
}

TEST_CASE("layer_norm over the last axis against a double reference (torch.nn.functional.layer_norm; float 1e-5 relative)") {
  // Rows with a large mean and a small spread, and an expression operand (x * 3 - 1, evaluated once).
  tx::tensor<float, 3> x({2, 3, 7});
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = 100.0f + 0.37f * static_cast<float>((i * 37) % 23) - 4.0f;
  tx::tensor<float, 1> w({7}, {1.0f, -0.5f, 2.0f, 0.25f, 1.5f, -1.0f, 0.75f});
  tx::tensor<float, 1> b({7}, {0.0f, 0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f});
  for (const double eps : {1e-5, 0.5}) {
    const tx::tensor<float, 3> got = tx::layer_norm(x * 3.0f - 1.0f, w, b, eps);
    REQUIRE(got.shape() == x.shape());
    for (tx::index_t r = 0; r < 6; ++r) {
      // The reference starts from x * 3 - 1 rounded to float, as texpr evaluates the operand.
      double xs[7], mean = 0, var = 0;
      for (tx::index_t k = 0; k < 7; ++k) mean += xs[k] = static_cast<double>(x.data()[r * 7 + k] * 3.0f - 1.0f);
      mean /= 7;
      for (tx::index_t k = 0; k < 7; ++k) var += (xs[k] - mean) * (xs[k] - mean);
      var /= 7;  // biased, as torch
      for (tx::index_t k = 0; k < 7; ++k) {
        const double want = (xs[k] - mean) / std::sqrt(var + eps) * w(k) + b(k);
        INFO("eps " << eps << " row " << r << " column " << k << ": got " << got.data()[r * 7 + k] << " want " << want);
        CHECK(std::abs(got.data()[r * 7 + k] - want) <= 1e-5 * (1 + std::abs(want)));
      }
    }
  }
  // double, rank 1 and a constant row (variance 0: (x - mean) = 0, so the result is the bias).
  tx::tensor<double, 1> c({4}, {2.5, 2.5, 2.5, 2.5}), w4({4}, {1, 2, 3, 4}), b4({4}, {0.5, -0.5, 1, -1});
  const tx::tensor<double, 1> flat = tx::layer_norm(c, w4, b4);
  for (tx::index_t k = 0; k < 4; ++k) CHECK(flat(k) == b4(k));
  tx::tensor<double, 1> d({4}, {1, 2, 3, 4});
  const tx::tensor<double, 1> one = tx::layer_norm(d, w4, b4, 0.0);
  const double sd = std::sqrt(1.25);
  for (tx::index_t k = 0; k < 4; ++k) CHECK(std::abs(one(k) - ((d(k) - 2.5) / sd * w4(k) + b4(k))) <= 1e-15);
}

TEST_CASE("layer_norm evaluates its operand once, is composed of registered rows, and checks shapes and eps") {
  tx::tensor<float, 2> a({6, 4}), m({4, 5});
  for (tx::index_t i = 0; i < a.size(); ++i) a.data()[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  for (tx::index_t i = 0; i < m.size(); ++i) m.data()[i] = 0.2f * static_cast<float>(i % 5) - 0.4f;
  tx::tensor<float, 1> w({5}, {1, 1, 1, 1, 1}), b({5}, {0, 0, 0, 0, 0});
  tx::kernel_log log;
  const tx::tensor<float, 2> y = tx::layer_norm(tx::matmul(a, m), w, b);
  CHECK(log.count("blocked_gemm") == 1);  // the matmul runs once
  for (tx::index_t r = 0; r < 6; ++r) {  // weight 1, bias 0: each row has mean 0
    double s = 0;
    for (tx::index_t k = 0; k < 5; ++k) s += y(r, k);
    CHECK(std::abs(s / 5) <= 1e-5);
  }
  const std::string report = tx::placement(tx::layer_norm(tx::matmul(a, m), w, b));
  CHECK(report.find("layer_norm") != std::string::npos);
  CHECK(report.find("composed") != std::string::npos);
  static_assert(tx::runs_on<decltype(tx::layer_norm(std::declval<const tx::tensor<tx::half, 2, tx::cuda>&>(),
                                                    std::declval<const tx::tensor<tx::half, 1, tx::cuda>&>(),
                                                    std::declval<const tx::tensor<tx::half, 1, tx::cuda>&>())),
                               tx::cuda>);
  tx::tensor<float, 1> w4({4});
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::layer_norm(a, w4, w)), doctest::Contains("x shape = (6, 4) weight shape = (4,) bias shape = (5,)"),
                       tx::shape_error);
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::layer_norm(a, w4, w4, -1.0)), doctest::Contains("layer_norm needs a finite eps >= 0"),
                       std::invalid_argument);
  // An empty batch is empty.
  tx::tensor<float, 2> none({0, 4});
  const tx::tensor<float, 2> e = tx::layer_norm(none, w4, w4);
  CHECK(e.size() == 0);
}

TEST_CASE("dropout: kept fraction, scaling by 1 / (1 - p), the mask of uniform<double> >= p, determinism, p = 0, errors") {
  const tx::shape_t<2> shape{100, 100};
  tx::tensor<float, 2> x(shape);
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = 0.5f + static_cast<float>(i % 13);
  for (const double p : {0.1, 0.5, 0.8}) {
    const std::uint64_t seed = 1234;
    const tx::tensor<float, 2> y = tx::dropout(x, p, seed);
    const tx::tensor<double, 2> u = tx::random::uniform<double>(shape, seed);  // the documented mask source
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    tx::index_t kept = 0;
    for (tx::index_t i = 0; i < x.size(); ++i) {
      const bool keep = u.data()[i] >= p;
      kept += keep;
      CHECK(y.data()[i] == (keep ? x.data()[i] * scale : 0.0f));
    }
    // 10000 Bernoulli(1 - p) draws: the fraction's standard deviation is at most 0.005; 0.02 is 4 of them.
    const double fraction = static_cast<double>(kept) / static_cast<double>(x.size());
    INFO("p " << p << " kept fraction " << fraction);
    CHECK(std::abs(fraction - (1 - p)) <= 0.02);
    // Inverted dropout keeps the mean: mean(y) / mean(x) - 1 has standard deviation
    // sqrt(p / (1 - p) / n * mean(x^2)) / mean(x) over masks; allow 4 of them.
    const double mx = tx::tensor<float, 0>(tx::mean(x)).item(), my = tx::tensor<float, 0>(tx::mean(y)).item();
    const double mx2 = tx::tensor<float, 0>(tx::mean(x * x)).item();
    const double sd = std::sqrt(p / (1 - p) / static_cast<double>(x.size()) * mx2) / mx;
    CHECK(std::abs(my / mx - 1) <= 4 * sd);
    // Same seed, same values (any evaluation); another seed, another mask.
    const tx::tensor<float, 2> again = tx::dropout(x, p, seed);
    const tx::tensor<float, 2> other = tx::dropout(x, p, seed + 1);
    tx::index_t same = 0, differ = 0;
    for (tx::index_t i = 0; i < x.size(); ++i) {
      same += again.data()[i] == y.data()[i];
      differ += (other.data()[i] == 0) != (y.data()[i] == 0);
    }
    CHECK(same == x.size());
    CHECK(differ > x.size() * p * (1 - p));  // independent masks disagree in 2 p (1 - p) of the elements
  }
  // p = 0: x's values exactly, NaN and -0 included.
  tx::tensor<double, 1> v({4}, {1.5, -0.0, std::numeric_limits<double>::quiet_NaN(), -3e300});
  const tx::tensor<double, 1> same = tx::dropout(v, 0.0, 9);
  CHECK(same(0) == 1.5);
  CHECK((same(1) == 0 && std::signbit(same(1))));
  CHECK(std::isnan(same(2)));
  CHECK(same(3) == -3e300);
  // Placement: a fused product with the mask generator; on cuda, 16-bit floats too.
  CHECK(tx::placement(tx::dropout(x, 0.5, 1)).find("dropout_mask") != std::string::npos);
  static_assert(tx::runs_on<decltype(tx::dropout(std::declval<const tx::tensor<tx::bfloat16, 2, tx::cuda>&>(), 0.5, 1)), tx::cuda>);
  for (const double bad : {1.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()})
    CHECK_THROWS_WITH_AS(static_cast<void>(tx::dropout(x, bad, 1)), doctest::Contains("dropout needs 0 <= p < 1, got p = "),
                         std::invalid_argument);
}

TEST_CASE("indexing: out-of-range indices throw shape_error naming the index, its position and the extent") {
  tx::tensor<float, 2> x({3, 4});
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i) - 5.5f;
  tx::tensor<std::int64_t, 1> high({3}, {0, 2, 3});
  tx::tensor<std::int32_t, 1> negative({2}, {1, -1});
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::eval(tx::index_select(x, 0, high))),
                       doctest::Contains("index_select index 3 at position (2) is out of range for axis 0 of extent 3 (operand shape (3, 4))"),
                       tx::shape_error);
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::eval(tx::index_select(x * 2, -1, negative))),
                       doctest::Contains("index -1 at position (1) is out of range for axis 1 of extent 4"), tx::shape_error);
  tx::tensor<std::int32_t, 2> each({3, 2}, {0, 1, 2, 3, 4, 0});
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::eval(tx::gather(x, 1, each))),
                       doctest::Contains("gather index 4 at position (2, 0) is out of range for axis 1 of extent 4"), tx::shape_error);
  tx::tensor<std::int64_t, 2> ids({2, 2}, {0, 1, 2, 5});
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::eval(tx::embedding(ids, x))),
                       doctest::Contains("embedding index 5 at position (1, 1) is out of range for axis 0 of extent 3"), tx::shape_error);
  // Shapes and axes are checked where the node is built.
  tx::tensor<std::int32_t, 2> narrow({2, 2}, {0, 1, 2, 3});
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::gather(x, 1, narrow)),
                       doctest::Contains("operand shape = (3, 4) index shape = (2, 2)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::index_select(x, 2, high)), doctest::Contains("axis 2 is out of range"), tx::shape_error);
  // tx::placement plans without reading the indices.
  CHECK_NOTHROW(static_cast<void>(tx::placement(tx::index_select(x, 0, high))));
  // No indices: an empty result; the destination is untouched by a failed evaluation.
  tx::tensor<std::int64_t, 1> none({0});
  CHECK(tx::eval(tx::index_select(x, 1, none)).shape() == tx::shape_t<2>{3, 0});
  tx::tensor<float, 2> out({3, 4});
  for (tx::index_t i = 0; i < out.size(); ++i) out.data()[i] = 7;
  CHECK_THROWS_WITH_AS(out = tx::index_select(x, 0, high), doctest::Contains("index_select index 3"), tx::shape_error);
  for (tx::index_t i = 0; i < out.size(); ++i) CHECK(out.data()[i] == 7);
  // int64 data, indices as an expression.
  tx::tensor<std::int64_t, 1> v({5}, {10, -20, 30, -40, 50});
  tx::tensor<std::int32_t, 1> k({3}, {1, 2, 3});
  tx::tensor<std::int64_t, 1> picked = tx::index_select(v, 0, k - 1);
  CHECK(picked(0) == 10);
  CHECK(picked(1) == -20);
  CHECK(picked(2) == 30);
}
