// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Test helpers: deterministic random tensors, long double references and tolerance checks.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <texpr/texpr.hpp>

namespace tx = texpr;

namespace test {

using ld = long double;
__extension__ typedef __int128 i128;           // exact references for 64-bit wrap-around
__extension__ typedef unsigned __int128 u128;

/// Deterministic generator shared by the tests (fixed seed per call site).
inline std::mt19937_64& rng(std::uint64_t seed = 0) {
  static std::mt19937_64 g(12345);
  if (seed) g.seed(seed);
  return g;
}

/// Integer bound as T: a double at or beyond T's range clamps to T's extreme. (Converting double(INT64_MAX),
/// which is 2^63, back to int64 is undefined; that once made every "full-range" int64 input INT64_MIN.)
template <class T> T integer_bound(double v) {
  using L = std::numeric_limits<T>;
  if (v <= static_cast<double>(L::min())) return L::min();
  if (v >= static_cast<double>(L::max())) return L::max();
  return static_cast<T>(v);
}

/// Uniform value of dtype T in [lo, hi] (integers inclusive, drawn by an integer distribution over T itself,
/// so the full range of int64 is reachable: bounds beyond T's range clamp to its extremes).
template <class T> T uniform(double lo, double hi) {
  if constexpr (std::is_same_v<T, bool>) return std::uniform_int_distribution<int>(0, 1)(rng()) == 1;
  else if constexpr (std::is_integral_v<T> && sizeof(T) == 1)  // (uniform_int_distribution takes no char types)
    return static_cast<T>(std::uniform_int_distribution<int>(integer_bound<T>(lo), integer_bound<T>(hi))(rng()));
  else if constexpr (std::is_integral_v<T>)
    return std::uniform_int_distribution<T>(integer_bound<T>(lo), integer_bound<T>(hi))(rng());
  else if constexpr (tx::is_narrow_float_v<T>) return T(static_cast<float>(std::uniform_real_distribution<double>(lo, hi)(rng())));
  else if constexpr (tx::is_complex_v<T>) {  // each part uniform in [lo, hi]
    const auto re = uniform<tx::real_of_t<T>>(lo, hi);
    return T(re, uniform<tx::real_of_t<T>>(lo, hi));
  } else return static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng()));
}

/// Factors for integer product tests: +-1 and about a quarter +-3, plus at most 8 +-2 in the whole tensor, never 0.
/// Any product over them is non-zero (a single 0 factor, likely among thousands of values from [-3, 3], made every
/// product 0), long lines wrap around even int64 (3^41 > 2^64), and the few 2s cannot shift every bit out.
template <class T, std::size_t R> tx::tensor<T, R> product_factors(const tx::shape_t<R>& shape) {
  tx::tensor<T, R> t(shape);
  std::uniform_int_distribution<int> pick(0, 99);
  for (tx::index_t i = 0; i < t.size(); ++i) {
    const int magnitude = pick(rng()) < 75 ? 1 : 3;  // int: half/bfloat16 have no unary minus under nvcc
    t.data()[i] = T((pick(rng()) & 1) ? magnitude : -magnitude);
  }
  if (t.size() > 0) {
    std::uniform_int_distribution<tx::index_t> where(0, t.size() - 1);
    for (int k = 0; k < 8; ++k) t.data()[where(rng())] = (k & 1) ? T(2) : T(-2);
  }
  return t;
}

/// A host tensor of the given shape filled with uniform values.
template <class T, std::size_t R> tx::tensor<T, R> random(const tx::shape_t<R>& shape, double lo = -2, double hi = 2) {
  tx::tensor<T, R> t(shape);
  for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = uniform<T>(lo, hi);
  return t;
}

/// Widens any dtype to long double for references (a complex one to std::complex<long double>).
template <class T> auto wide(T x) {
  if constexpr (tx::is_narrow_float_v<T>) return static_cast<ld>(static_cast<float>(x));
  else if constexpr (tx::is_complex_v<T>) return std::complex<ld>(static_cast<ld>(x.real()), static_cast<ld>(x.imag()));
  else return static_cast<ld>(x);
}

/// Relative tolerance used when comparing dtype T against a long double reference.
template <class T> ld tolerance() {
  if constexpr (std::is_same_v<T, float>) return 4e-6L;
  else if constexpr (std::is_same_v<T, double>) return 1e-13L;
  else if constexpr (std::is_same_v<T, tx::half>) return 2e-3L;
  else if constexpr (std::is_same_v<T, tx::bfloat16>) return 1.6e-2L;
  else if constexpr (std::is_same_v<T, tx::float8_e4m3>) return 6.25e-2L;  // half an ulp: 2^-4
  else if constexpr (std::is_same_v<T, tx::float8_e5m2>) return 1.25e-1L;  // 2^-3
  else return 0;  // integers and bool are exact
}

/// The spacing of T's subnormals (its smallest positive value): the absolute error of a correctly rounded result
/// near zero, where a relative tolerance means nothing (softmax's tiny probabilities in half, say).
template <class T> ld subnormal_step() {
  if constexpr (std::is_same_v<T, tx::half>) return std::ldexp(1.0L, -24);
  else if constexpr (std::is_same_v<T, tx::bfloat16>) return std::ldexp(1.0L, -133);
  else if constexpr (std::is_same_v<T, tx::float8_e4m3>) return std::ldexp(1.0L, -9);
  else if constexpr (std::is_same_v<T, tx::float8_e5m2>) return std::ldexp(1.0L, -16);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<ld>(std::numeric_limits<T>::denorm_min());
  else return 0;
}

/// True when got matches the reference within tolerance (NaN matches NaN, infinities must match).
template <class T> bool close(T got, ld want, ld scale = 1, ld tol = tolerance<T>()) {
  const ld g = wide(got);
  if (std::isnan(want)) return std::isnan(g);
  if (std::isinf(want)) return g == want;
  if (tol == 0) return g == want;
  return std::fabs(g - want) <= tol * std::max<ld>({std::fabs(want), scale, ld(1e-30)});
}

/// Two's-complement wrap of a wide integer into T (the reference for texpr's integer semantics).
template <class T> T wrap(i128 v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<u128>(v)));
}

/// Row-major multi-index of linear index i in shape s.
template <std::size_t R> std::array<tx::index_t, R> unravel(tx::index_t i, const tx::shape_t<R>& s) {
  std::array<tx::index_t, R> idx{};
  for (std::size_t d = R; d-- > 0;) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return idx;
}

/// Element of t at the broadcast position of output index idx (NumPy rules).
template <class T, std::size_t R, std::size_t RO>
T at_broadcast(const tx::tensor<T, R>& t, const std::array<tx::index_t, RO>& idx) {
  tx::index_t off = 0;
  for (std::size_t d = 0; d < R; ++d) {
    const tx::index_t e = t.shape()[d];
    const tx::index_t i = idx[d + RO - R];
    off = off * e + (e == 1 ? 0 : i);
  }
  return t.data()[off];
}

} // namespace test
