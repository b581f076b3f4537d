// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Scalar maths shared by host and device code: libm on the host, CUDA's intrinsics in device code.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/detail/vmath.hpp"

namespace texpr::detail {

#if defined(TEXPR_DEVICE_CODE)
#define TEXPR_MATH1(NAME)                                                   \
  TEXPR_HOST_DEVICE inline float NAME##_(float x) { return ::NAME##f(x); } \
  TEXPR_HOST_DEVICE inline double NAME##_(double x) { return ::NAME(x); }
#else
#define TEXPR_MATH1(NAME)                                                     \
  TEXPR_HOST_DEVICE inline float NAME##_(float x) { return std::NAME(x); }   \
  TEXPR_HOST_DEVICE inline double NAME##_(double x) { return std::NAME(x); } \
  inline long double NAME##_(long double x) { return std::NAME(x); }
#endif
// log_ is the C library's (CUDA's in device code) for every type: random::normal's Box-Muller computes with it
// in double, and its values are documented (and tested bit for bit) as libm's. Elementwise op::log calls
// vmath_log_ below instead.
TEXPR_MATH1(log)
#if defined(TEXPR_DEVICE_CODE) || defined(TEXPR_USE_LIBM)
TEXPR_MATH1(exp)
TEXPR_MATH1(expm1)
TEXPR_MATH1(log1p)
TEXPR_MATH1(tanh)
template <class C> TEXPR_HOST_DEVICE inline C vmath_log_(C x) { return log_(x); }
#else
// Host float exp, expm1, log (vmath_log_), log1p and tanh are texpr's own branch-free versions (vmath.hpp), so
// fused loops vectorise; double too where its loops vectorise (TEXPR_VMATH_DOUBLE: x86-64 with SSE4.2, AArch64);
// long double uses the C library. TEXPR_USE_LIBM restores the C library for all.
#if TEXPR_VMATH_DOUBLE
#define TEXPR_VMATH_DOUBLE_FN(FN) vmath::FN
#else
#define TEXPR_VMATH_DOUBLE_FN(FN) std::FN
#endif
#define TEXPR_VMATH1(NAME, FN)                                                            \
  TEXPR_HOST_DEVICE inline float NAME(float x) { return vmath::FN(x); }                   \
  TEXPR_HOST_DEVICE inline double NAME(double x) { return TEXPR_VMATH_DOUBLE_FN(FN)(x); } \
  inline long double NAME(long double x) { return std::FN(x); }
TEXPR_VMATH1(exp_, exp)
TEXPR_VMATH1(expm1_, expm1)
TEXPR_VMATH1(log1p_, log1p)
TEXPR_VMATH1(tanh_, tanh)
TEXPR_VMATH1(vmath_log_, log)
#undef TEXPR_VMATH1
#undef TEXPR_VMATH_DOUBLE_FN
#endif
#if defined(TEXPR_DEVICE_CODE) || defined(TEXPR_USE_LIBM) || !TEXPR_VMATH_DOUBLE
TEXPR_MATH1(sqrt)
#else
// Host float sqrt is vmath's (correctly rounded, as std::sqrt): std::sqrt is a call under gcc's default
// -fmath-errno and keeps every fused loop reading it (rsqrt, the Adam update) scalar. Only where 64-bit integer
// lanes vectorise (TEXPR_VMATH_DOUBLE); elsewhere the C library's is faster.
TEXPR_HOST_DEVICE inline float sqrt_(float x) { return vmath::sqrt(x); }
TEXPR_HOST_DEVICE inline double sqrt_(double x) { return std::sqrt(x); }
inline long double sqrt_(long double x) { return std::sqrt(x); }
#endif
TEXPR_MATH1(fabs)
TEXPR_MATH1(sin)
TEXPR_MATH1(cos)
TEXPR_MATH1(floor)
TEXPR_MATH1(ceil)
TEXPR_MATH1(erf)
TEXPR_MATH1(nearbyint)  // round half to even (the default rounding mode), as NumPy and PyTorch round
#undef TEXPR_MATH1

#if defined(TEXPR_DEVICE_CODE)
#define TEXPR_MATH2(NAME)                                                            \
  TEXPR_HOST_DEVICE inline float NAME##_(float a, float b) { return ::NAME##f(a, b); } \
  TEXPR_HOST_DEVICE inline double NAME##_(double a, double b) { return ::NAME(a, b); }
#else
#define TEXPR_MATH2(NAME)                                                                  \
  TEXPR_HOST_DEVICE inline float NAME##_(float a, float b) { return std::NAME(a, b); }     \
  TEXPR_HOST_DEVICE inline double NAME##_(double a, double b) { return std::NAME(a, b); }  \
  inline long double NAME##_(long double a, long double b) { return std::NAME(a, b); }
#endif
TEXPR_MATH2(pow)
TEXPR_MATH2(hypot)  // |z| of a complex z, without overflow or underflow of re^2 + im^2 (as NumPy's abs)
TEXPR_MATH2(atan2)  // the angle of a complex z (as NumPy's angle)
#undef TEXPR_MATH2

/// Phi(x), the standard normal CDF (gelu and its derivative).
template <class C> TEXPR_HOST_DEVICE inline C normal_cdf(C x) { return C(0.5) * (C(1) + erf_(x * C(0.70710678118654752440))); }

/// c ? a : b for elementwise ops. On the host, float and double select through an integer mask: gcc does not
/// if-convert a floating ?: under the default -ftrapping-math, and the fused loop would not vectorise.
template <class C> TEXPR_HOST_DEVICE inline C select(bool c, C a, C b) {
#if defined(TEXPR_DEVICE_CODE)
  return c ? a : b;
#else
  if constexpr (std::is_same_v<C, float>) {
    return vmath::select(c, a, b);
  } else if constexpr (std::is_same_v<C, double>) {
    const std::uint64_t m = 0u - static_cast<std::uint64_t>(c);
    return std::bit_cast<double>((std::bit_cast<std::uint64_t>(a) & m) | (std::bit_cast<std::uint64_t>(b) & ~m));
  } else {
    return c ? a : b;
  }
#endif
}

/// The logistic function 1 / (1 + e^-x) without overflow: host float is vmath's (within 2 ulp); otherwise one exp of
/// -|x| (in (0, 1]), then 1 / (1 + e) or e / (1 + e), selected without a branch.
template <class C> TEXPR_HOST_DEVICE inline C sigmoid_(C x) {
#if !defined(TEXPR_DEVICE_CODE) && !defined(TEXPR_USE_LIBM)
  if constexpr (std::is_same_v<C, float>) return vmath::sigmoid(x);
#endif
  const C e = exp_(-fabs_(x));
  const C d = C(1) + e;
  return select(x >= C(0), C(1) / d, e / d);
}

/// e^z of a complex z: e^re (cos im + i sin im); a real z (im == 0) gives (e^re, im) exactly, so e^inf is inf + 0i
/// as in NumPy rather than inf * sin(0) = NaN.
template <class T> TEXPR_HOST_DEVICE inline complex_value<T> exp_(complex_value<T> z) {
  const T m = exp_(z.re);
  if (z.im == T(0)) return {m, z.im};
  return {m * cos_(z.im), m * sin_(z.im)};
}
/// |z| of a complex z (hypot: no overflow or underflow in between).
template <class T> TEXPR_HOST_DEVICE inline T fabs_(complex_value<T> z) { return hypot_(z.re, z.im); }

/// NaN test usable in device code and under -ffast-math-free builds.
template <class T>
TEXPR_HOST_DEVICE constexpr bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

/// Two's-complement wrap-around arithmetic for signed integers, computed in the unsigned type (no UB).
template <class T>
TEXPR_HOST_DEVICE constexpr T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
TEXPR_HOST_DEVICE constexpr T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
TEXPR_HOST_DEVICE constexpr T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

/// True for the complex compute types (complex_value<float>, complex_value<double>).
template <class T> inline constexpr bool is_complex_value_v = false;
/// \cond TEXPR_SPECIALISATIONS
template <class T> inline constexpr bool is_complex_value_v<complex_value<T>> = true;
/// \endcond

/// Converts between compute types; float to integer saturates and maps NaN to 0 (no UB); a real converts to a
/// complex with a zero imaginary part; complex to real is not a conversion (tx::cast rejects it: take tx::real).
template <class To, class From>
TEXPR_HOST_DEVICE constexpr To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_complex_value_v<To>) {
    using R = decltype(To::re);
    if constexpr (is_complex_value_v<From>) return To(static_cast<R>(x.re), static_cast<R>(x.im));
    else return To(static_cast<R>(x), R(0));
  } else if constexpr (is_complex_value_v<From>) {
    static_assert(!is_complex_value_v<From>, "texpr: complex to real is not a conversion; take tx::real(z) or tx::abs(z)");
    return To{};
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (is_integer_v<To> && std::is_floating_point_v<From>) {
    if (x != x) return To(0);
    // Bounds as From: the upper one is a power of two, so the comparison is exact.
    const From lo = static_cast<From>(std::numeric_limits<To>::min());
    const From hi = -lo;
    if (x <= lo) return std::numeric_limits<To>::min();
    if (x >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

/// Loads a stored element as its compute type (16-bit and 8-bit floats widen to float).
template <class T>
TEXPR_HOST_DEVICE constexpr compute_t<T> widen(T x) {
  if constexpr (is_narrow_float_v<T>) return static_cast<float>(x);
  else if constexpr (is_complex_v<T>) return complex_parts(x);
  else return x;
}

/// Stores a compute value as element type T (16-bit floats round to nearest even; 8-bit floats round once from
/// x itself, a double included, and saturate).
template <class T, class C>
TEXPR_HOST_DEVICE constexpr T narrow(C x) {
  if constexpr (is_float8_v<T>) return T(x);
  else if constexpr (is_float16_v<T>) return T(static_cast<float>(x));
  else if constexpr (is_complex_v<T>) return complex_store(convert<compute_t<T>>(x));
  else return convert<T>(x);
}

} // namespace texpr::detail
