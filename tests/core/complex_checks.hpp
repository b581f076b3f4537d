// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The registry rows that compute on the complex dtypes (complex64, complex128 and make_complex of reals), run on a
// backend and compared element by element with std::complex<long double> (the C++ library's, not texpr's
// complex_value arithmetic). registry_checks.hpp calls check_complex_row for them; the inputs vary in sign and
// magnitude (parts from 1e-3 to 1e3, and exact zeros).
#pragma once

#include "core/support.hpp"

#include <cmath>
#include <complex>
#include <string>

namespace complex_check {

using test::ld;
using lc = std::complex<long double>;

/// Element k of a test input: parts of either sign spread over six decades, some exactly zero or equal.
inline lc sample(tx::index_t k, int stream) {
  const ld mag[] = {1e-3L, 0.07L, 0.5L, 1, 3.25L, 40, 1e3L};
  const ld re = mag[(k * 3 + stream) % 7] * ((k + stream) % 3 == 0 ? -1 : 1) * (1 + static_cast<ld>(k % 5) / 8);
  const ld im = (k + 2 * stream) % 11 == 0 ? 0 : mag[(k * 5 + 2 * stream) % 7] * ((k / 2 + stream) % 2 ? -1 : 1);
  return {re, im};
}

/// A host tensor of n complex values of dtype T (rounded from sample()), scaled to at most `limit` in each part.
template <class T> tx::tensor<T, 1> complex_input(tx::index_t n, int stream, ld limit = 1e4L) {
  using R = tx::real_of_t<T>;
  tx::tensor<T, 1> t({n});
  for (tx::index_t k = 0; k < n; ++k) {
    lc z = sample(k, stream);
    if (std::abs(z.real()) > limit) z = {z.real() / 400, z.imag()};
    if (std::abs(z.imag()) > limit) z = {z.real(), z.imag() / 400};
    t(k) = T(static_cast<R>(z.real()), static_cast<R>(z.imag()));
  }
  return t;
}
template <class T> lc wide(T z) { return {static_cast<ld>(z.real()), static_cast<ld>(z.imag())}; }

/// The relative tolerance of a T result (a few ulp of its real type).
template <class T> ld eps() { return 16 * static_cast<ld>(std::numeric_limits<tx::real_of_t<T>>::epsilon()); }

/// |got - want| <= tol * scale, reported once with what, the index and both values.
inline void expect_near(lc got, lc want, ld scale, ld tol, const std::string& what, tx::index_t k, int& failures) {
  const ld err = std::abs(got - want);
  if (!(err <= tol * scale) && failures++ < 10)
    FAIL_CHECK(what << " element " << k << ": got (" << static_cast<double>(got.real()) << ", " << static_cast<double>(got.imag())
                    << ") want (" << static_cast<double>(want.real()) << ", " << static_cast<double>(want.imag()) << ")");
}

/// One elementwise row of a complex dtype T on backend B (On moves data to B and back), against the reference.
template <class B, class On, class Op, class T> void check_elementwise() {
  constexpr tx::index_t n = 301;
  const auto a = complex_input<T>(n, 0, std::is_same_v<Op, tx::op::exp> ? 6 : 1e4L);
  const auto b = complex_input<T>(n, 1);
  const auto da = On::up(a);
  const auto db = On::up(b);
  const std::string what = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>);
  int failures = 0;
  const ld tol = eps<T>();
  if constexpr (std::is_same_v<Op, tx::op::add> || std::is_same_v<Op, tx::op::subtract> ||
                std::is_same_v<Op, tx::op::multiply> || std::is_same_v<Op, tx::op::divide>) {
    const auto got = On::down(tx::map<Op>(da, db));
    for (tx::index_t k = 0; k < n; ++k) {
      const lc x = wide(a(k)), y = wide(b(k));
      const lc want = std::is_same_v<Op, tx::op::add> ? x + y : std::is_same_v<Op, tx::op::subtract> ? x - y
                    : std::is_same_v<Op, tx::op::multiply> ? x * y : x / y;
      const ld scale = std::is_same_v<Op, tx::op::multiply> ? std::abs(x) * std::abs(y)
                     : std::is_same_v<Op, tx::op::divide> ? std::abs(x) / std::abs(y) : std::abs(x) + std::abs(y);
      expect_near(wide(got(k)), want, scale, tol, what, k, failures);
    }
  } else if constexpr (std::is_same_v<Op, tx::op::negate> || std::is_same_v<Op, tx::op::conj> || std::is_same_v<Op, tx::op::exp>) {
    const auto got = On::down(tx::map<Op>(da));
    for (tx::index_t k = 0; k < n; ++k) {
      const lc x = wide(a(k));
      const lc want = std::is_same_v<Op, tx::op::negate> ? -x : std::is_same_v<Op, tx::op::conj> ? std::conj(x) : std::exp(x);
      // exp: the error of cos and sin of im grows with |im| (argument reduction), relative to |e^z|
      const ld scale = std::is_same_v<Op, tx::op::exp> ? std::abs(want) * (1 + std::abs(x.imag())) : std::abs(x);
      expect_near(wide(got(k)), want, scale, std::is_same_v<Op, tx::op::exp> ? tol : 0, what, k, failures);
    }
  } else if constexpr (tx::detail::predicate_op<Op>) {  // equal, not_equal: both parts compared, NaN unequal to all
    // c equals a but at every third element, where one part (alternately) is b's; element 1 is NaN in both
    auto c = complex_input<T>(n, 0), a2 = complex_input<T>(n, 0);
    for (tx::index_t k = 0; k < n; k += 3) c(k) = k % 2 ? T(c(k).real(), b(k).imag()) : T(b(k).real(), c(k).imag());
    c(1) = T(std::numeric_limits<tx::real_of_t<T>>::quiet_NaN(), 0);
    a2(1) = c(1);
    const auto got = On::down(tx::map<Op>(On::up(a2), On::up(c)));
    static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(got)>::value_type, bool>);
    for (tx::index_t k = 0; k < n; ++k) {
      const lc x = wide(a2(k)), y = wide(c(k));
      const bool want = std::is_same_v<Op, tx::op::equal> ? x == y : x != y;
      if (got(k) != want && failures++ < 10) FAIL_CHECK(what << " element " << k << ": got " << got(k) << " want " << want);
    }
  } else {  // abs, real, imag, angle: a real result
    const auto got = On::down(tx::map<Op>(da));
    static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(got)>::value_type, tx::real_of_t<T>>);
    for (tx::index_t k = 0; k < n; ++k) {
      const lc x = wide(a(k));
      const ld want = std::is_same_v<Op, tx::op::abs> ? std::abs(x) : std::is_same_v<Op, tx::op::real> ? x.real()
                    : std::is_same_v<Op, tx::op::imag> ? x.imag() : std::arg(x);
      const ld scale = std::is_same_v<Op, tx::op::angle> ? 1 : std::abs(want);
      expect_near(lc(static_cast<ld>(got(k))), lc(want), scale, std::is_same_v<Op, tx::op::real> || std::is_same_v<Op, tx::op::imag> ? 0 : tol,
                  what, k, failures);
    }
  }
  REQUIRE(failures == 0);
}

/// make_complex on real dtype R: exact.
template <class B, class On, class R> void check_make_complex() {
  constexpr tx::index_t n = 97;
  tx::tensor<R, 1> re({n}), im({n});
  for (tx::index_t k = 0; k < n; ++k) {
    const lc z = sample(k, 2);
    re(k) = static_cast<R>(z.real());
    im(k) = static_cast<R>(z.imag());
  }
  const auto got = On::down(tx::make_complex(On::up(re), On::up(im)));
  static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(got)>::value_type, std::complex<R>>);
  for (tx::index_t k = 0; k < n; ++k) REQUIRE((got(k).real() == re(k) && got(k).imag() == im(k)));
}

/// sum and mean of a complex T: whole, and along each axis of a (17, 40) input, against long double sums.
template <class B, class On, class Op, class T> void check_reduction() {
  constexpr tx::index_t rows = 17, cols = 40;
  const auto flat = complex_input<T>(rows * cols, 3);
  tx::tensor<T, 2> x({rows, cols});
  for (tx::index_t k = 0; k < rows * cols; ++k) x.data()[k] = flat(k);
  const auto dx = On::up(x);
  constexpr bool mean = std::is_same_v<Op, tx::op::mean>;
  const std::string what = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>);
  int failures = 0;
  const auto check_line = [&](lc got, auto element, tx::index_t len, tx::index_t k) {
    lc s = 0;
    ld scale = 0;
    for (tx::index_t j = 0; j < len; ++j) s += wide(element(j)), scale += std::abs(wide(element(j)));
    if (mean) s /= static_cast<ld>(len), scale /= static_cast<ld>(len);
    expect_near(got, s, scale, eps<T>(), what, k, failures);
  };
  const auto all = On::down(tx::reduce<Op>(dx));
  check_line(wide(all()), [&](tx::index_t j) { return x.data()[j]; }, rows * cols, -1);
  const auto down = On::down(tx::reduce<Op>(dx, 0));
  for (tx::index_t c = 0; c < cols; ++c) check_line(wide(down(c)), [&](tx::index_t r) { return x(r, c); }, rows, c);
  const auto across = On::down(tx::reduce<Op>(dx, -1));
  for (tx::index_t r = 0; r < rows; ++r) check_line(wide(across(r)), [&](tx::index_t c) { return x(r, c); }, cols, r);
  REQUIRE(failures == 0);
}

/// prod of a complex T: whole, and along each axis of a (17, 40) input of moduli in [0.5, 2) (no overflow), against
/// long double products; the error bound is len ulp of the product of the moduli.
template <class B, class On, class T> void check_prod() {
  constexpr tx::index_t rows = 17, cols = 40;
  using R = tx::real_of_t<T>;
  tx::tensor<T, 2> x({rows, cols});
  for (tx::index_t k = 0; k < rows * cols; ++k) {
    const lc z = sample(k, 7);
    const ld m = 0.5L + static_cast<ld>(k % 13) / 8.5L;
    const lc u = std::abs(z) == 0 ? lc(-m, 0) : z / std::abs(z) * m;
    x.data()[k] = T(static_cast<R>(u.real()), static_cast<R>(u.imag()));
  }
  const auto dx = On::up(x);
  const std::string what = "prod " + std::string(tx::dtype_name_v<T>);
  int failures = 0;
  const auto check_line = [&](lc got, auto element, tx::index_t len, tx::index_t k) {
    lc p = 1;
    ld scale = 1;
    for (tx::index_t j = 0; j < len; ++j) p *= wide(element(j)), scale *= std::abs(wide(element(j)));
    expect_near(got, p, scale, static_cast<ld>(len) * eps<T>(), what, k, failures);
  };
  const auto all = On::down(tx::prod(dx));
  check_line(wide(all()), [&](tx::index_t j) { return x.data()[j]; }, rows * cols, -1);
  const auto down = On::down(tx::prod(dx, 0));
  for (tx::index_t c = 0; c < cols; ++c) check_line(wide(down(c)), [&](tx::index_t r) { return x(r, c); }, rows, c);
  const auto across = On::down(tx::prod(tx::transpose(dx), 0));  // a strided operand
  for (tx::index_t r = 0; r < rows; ++r) check_line(wide(across(r)), [&](tx::index_t c) { return x(r, c); }, cols, r);
  REQUIRE(failures == 0);
}

/// matmul of complex T: a batch (2, 5, 7) times a broadcast (7, 3), a transposed (strided) A, matrix-vector and
/// vector-matrix, against long double sums; the error bound is k ulp of sum |a||b| per element.
template <class B, class On, class T> void check_matmul() {
  const std::string what = "matmul " + std::string(tx::dtype_name_v<T>);
  int failures = 0;
  const auto a_flat = complex_input<T>(2 * 5 * 7, 8, 50);
  const auto b_flat = complex_input<T>(7 * 3, 9, 50);
  tx::tensor<T, 3> a({2, 5, 7});
  tx::tensor<T, 2> b({7, 3}), at({7, 5});  // at: a[1] transposed, read back through tx::transpose
  for (tx::index_t k = 0; k < a.size(); ++k) a.data()[k] = a_flat(k);
  for (tx::index_t k = 0; k < b.size(); ++k) b.data()[k] = b_flat(k);
  for (tx::index_t i = 0; i < 5; ++i)
    for (tx::index_t l = 0; l < 7; ++l) at(l, i) = a(1, i, l);
  const auto dot = [&](auto x, auto y, tx::index_t len, lc got, tx::index_t at_k) {
    lc s = 0;
    ld scale = 0;
    for (tx::index_t l = 0; l < len; ++l) s += wide(x(l)) * wide(y(l)), scale += std::abs(wide(x(l))) * std::abs(wide(y(l)));
    expect_near(got, s, scale, static_cast<ld>(len) * eps<T>(), what, at_k, failures);
  };
  const auto da = On::up(a);
  const auto db = On::up(b);
  const auto dat = On::up(at);
  const auto c = On::down(tx::matmul(da, db));
  REQUIRE(c.shape() == tx::shape_t<3>{2, 5, 3});
  for (tx::index_t q = 0; q < 2; ++q)
    for (tx::index_t i = 0; i < 5; ++i)
      for (tx::index_t j = 0; j < 3; ++j)
        dot([&](tx::index_t l) { return a(q, i, l); }, [&](tx::index_t l) { return b(l, j); }, 7, wide(c(q, i, j)), (q * 5 + i) * 3 + j);
  const auto ct = On::down(tx::matmul(tx::transpose(dat), db));
  for (tx::index_t i = 0; i < 5; ++i)
    for (tx::index_t j = 0; j < 3; ++j)
      dot([&](tx::index_t l) { return a(1, i, l); }, [&](tx::index_t l) { return b(l, j); }, 7, wide(ct(i, j)), 100 + i * 3 + j);
  const auto v = complex_input<T>(7, 10, 50);
  const auto dv = On::up(v);
  const auto mv = On::down(tx::matmul(tx::transpose(dat), dv));  // (5, 7) x (7)
  for (tx::index_t i = 0; i < 5; ++i) dot([&](tx::index_t l) { return a(1, i, l); }, [&](tx::index_t l) { return v(l); }, 7, wide(mv(i)), 200 + i);
  const auto vm = On::down(tx::matmul(dv, db));  // (7) x (7, 3)
  for (tx::index_t j = 0; j < 3; ++j) dot([&](tx::index_t l) { return v(l); }, [&](tx::index_t l) { return b(l, j); }, 7, wide(vm(j)), 300 + j);
  REQUIRE(failures == 0);
}

/// cast<T> (T complex) from every real dtype (imaginary part 0) and from the other complex dtype.
template <class B, class On, class T> void check_cast() {
  using R = tx::real_of_t<T>;
  int failures = 0;
  const auto from = [&]<class S>(const tx::tensor<S, 1>& src) {
    const auto got = On::down(tx::cast<T>(On::up(src)));
    for (tx::index_t k = 0; k < src.size(); ++k) {
      const ld v = static_cast<ld>(static_cast<R>(tx::detail::widen(src(k))));  // the real rounded to T's parts
      expect_near(wide(got(k)), lc(v), std::abs(v), 0, "cast<" + std::string(tx::dtype_name_v<T>) + "> from " + std::string(tx::dtype_name_v<S>), k, failures);
    }
  };
  tx::detail::for_each_type(typename tx::detail::set_list<std::remove_cvref_t<decltype(tx::all_dtypes + tx::eight_bit)>>::type{}, [&]<class S>() {
    tx::tensor<S, 1> src({61});
    for (tx::index_t k = 0; k < 61; ++k) {
      const ld v = sample(k, 4).real();
      if constexpr (std::is_same_v<S, bool>) src(k) = k % 3 == 0;
      else if constexpr (tx::is_integer_v<S>) src(k) = static_cast<S>(std::fmod(std::round(v * 10), 100.0L));  // int8 holds it
      else if constexpr (tx::is_narrow_float_v<S>) src(k) = S(static_cast<float>(std::max(-400.0L, std::min(400.0L, v))));
      else src(k) = static_cast<S>(v);
    }
    from(src);
  });
  // the other complex dtype: each part converted (rounded to float from complex128)
  using Other = std::conditional_t<std::is_same_v<T, std::complex<float>>, std::complex<double>, std::complex<float>>;
  const auto src = complex_input<Other>(61, 5);
  const auto got = On::down(tx::cast<T>(On::up(src)));
  for (tx::index_t k = 0; k < 61; ++k) {
    const lc want(static_cast<ld>(static_cast<R>(src(k).real())), static_cast<ld>(static_cast<R>(src(k).imag())));
    expect_near(wide(got(k)), want, 0, 0, "cast<" + std::string(tx::dtype_name_v<T>) + "> from complex", k, failures);
  }
  REQUIRE(failures == 0);
}

/// copy: a transposed complex view assigned to a tensor (bit for bit).
template <class B, class On, class T> void check_copy() {
  const auto flat = complex_input<T>(13 * 7, 6);
  tx::tensor<T, 2> x({7, 13});
  for (tx::index_t k = 0; k < 7 * 13; ++k) x.data()[k] = flat(k);
  auto dx = On::up(x);
  const tx::view<const T, 2, B> xt(dx.data(), {13, 7}, {1, 13});
  tx::tensor<T, 2, B> y = xt;
  const auto got = On::down(y);
  for (tx::index_t i = 0; i < 13; ++i)
    for (tx::index_t j = 0; j < 7; ++j) REQUIRE(got(i, j) == x(j, i));
}

/// Whether registry row (Op, T) is one of the complex ones this header checks.
template <class Op, class T> inline constexpr bool complex_row = tx::is_complex_v<T> || std::is_same_v<Op, tx::op::make_complex>;

/// Ops that move complex elements without arithmetic (layouts, concat, where): registry_checks.hpp's own checks of
/// them compare bit for bit and hold for every dtype.
template <class Op> inline constexpr bool moves_data =
    tx::op::category_v<Op> == tx::op::kind::layout || std::is_same_v<Op, tx::op::concat> || std::is_same_v<Op, tx::op::where>;

/// Runs the check of complex row (Op, T) on backend B.
template <class B, class On, class Op, class T> void check_row() {
  if constexpr (std::is_same_v<Op, tx::op::make_complex>) check_make_complex<B, On, T>();
  else if constexpr (tx::detail::cast_op<Op>) check_cast<B, On, T>();
  else if constexpr (std::is_same_v<Op, tx::op::copy>) check_copy<B, On, T>();
  else if constexpr (std::is_same_v<Op, tx::op::sum> || std::is_same_v<Op, tx::op::mean>) check_reduction<B, On, Op, T>();
  else if constexpr (std::is_same_v<Op, tx::op::prod>) check_prod<B, On, T>();
  else if constexpr (std::is_same_v<Op, tx::op::matmul>) check_matmul<B, On, T>();
  else if constexpr (tx::op::category_v<Op> == tx::op::kind::elementwise) check_elementwise<B, On, Op, T>();
  else static_assert(tx::detail::always_false_v<Op>, "a complex registry row without a check");
}

} // namespace complex_check
