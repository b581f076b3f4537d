// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Branch-free elementary functions for the host's fused loops: exp, expm1, log, log1p, tanh, sigmoid and sqrt for float;
// exp, expm1, log, log1p and tanh for double. Straight-line arithmetic, selects through integer masks, no tables
// and no calls, so that compilers vectorise the loops that call them: the C library's functions are opaque calls,
// one element at a time (2^22 elements, one thread, -O3 -march=native: float tanh 14.6 -> 0.60 ns per
// element, log 3.6 -> 0.53, log1p 9.7 -> 0.54; double tanh 13.9 -> 1.6, log 4.4 -> 1.2, exp 5.0 -> 1.0).
// - exp, expm1: Cody-Waite reduction x = n ln2 + r, |r| <= ln2 / 2, a polynomial for expm1(r) (float: degree-8
//   Taylor; double: degree 12, fitted, with r's rounding error carried), 2^n built from exponent bits. expm1 sums
//   (2^n - 1) + 2^n r exactly (double: TwoSum) and adds the rest once.
// - log, log1p: x = 2^k m with m in [sqrt(1/2), sqrt(2)) from the bits (subnormals scaled first), then fdlibm's
//   arrangement log m = f - f^2/2 + s (f^2/2 + R(s^2)), f = m - 1, s = f / (2 + f), so that the last operation adds
//   the exact f to a small remainder; log1p adds the rounding error of 1 + x (exact, Fast2Sum) divided by 1 + x.
// - tanh: an odd polynomial below |x| = 0.75 (double 0.625), 1 - 2 / (e^2|x| + 1) above, with e^2|x| + 1 =
//   (2^n + 1) + 2^n p rounded once.
// - sigmoid (float): s = 1 / (1 + e^|x|) as for tanh; s for x < 0, 1 - s (no cancellation: s <= 1/2) for x >= 0.
// The polynomials' coefficients were fitted for this file (weighted Remez in high precision, each coefficient
// rounded in turn and the rest refitted). Specials as the C library: NaN -> NaN, exp overflow -> inf, underflow
// through the subnormals (rounded twice there) to 0, log(±0) = -inf, log(x < 0) = NaN, log1p(-1) = -inf,
// tanh(±inf) = ±1, -0 kept by expm1, log1p and tanh.
// Accuracy, maximum error in ulp (bound tested in tests/reliability/test_vmath.cpp): float over all 2^32 inputs
// against the C library's double result (TEXPR_FULL_SWEEP=1; gcc 12 -O3), double on 4 million random inputs per
// range over every binade against long double:
//   float:  exp 0.95 (1), expm1 1.45 (1.5), log 0.84 (1), log1p 0.87 (1), tanh 1.06 (1.5), sigmoid 1.70 (2)
//   double: exp 0.85 (1), expm1 1.08 (1.5), log 0.78 (1), log1p 0.84 (1), tanh 1.19 (1.5)
// detail/math.hpp routes the elementwise ops here on the host (double only where TEXPR_VMATH_DOUBLE says the loops
// vectorise); device code keeps CUDA's functions, and defining TEXPR_USE_LIBM restores the C library.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

/// Whether detail/math.hpp uses the double functions below (1) or the C library's (0). gcc 12 vectorises a select
/// between doubles only with 64-bit integer compares: on x86-64 from SSE4.2 (-march=x86-64-v2 and up), and on
/// AArch64. Without them the loops stay scalar, where glibc's exp and log are faster than these (double log 6 ->
/// 14 ns per element at plain -O3), so there the C library stays. Define it to override.
#if !defined(TEXPR_VMATH_DOUBLE)
#if defined(__SSE4_2__) || defined(__aarch64__)
#define TEXPR_VMATH_DOUBLE 1
#else
#define TEXPR_VMATH_DOUBLE 0
#endif
#endif

namespace texpr::detail::vmath {

/// c ? a : b through an integer mask. A float ?: after which the code goes on computing is not if-converted by gcc
/// under the default -ftrapping-math (the loop would not vectorise); an integer blend always is.
inline float select(bool c, float a, float b) {
  const std::uint32_t m = 0u - static_cast<std::uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(a) & m) | (std::bit_cast<std::uint32_t>(b) & ~m));
}

/// 2^n for integer n in [-126, 127], from the exponent bits.
inline float pow2i(std::int32_t n) { return std::bit_cast<float>(static_cast<std::uint32_t>(n + 127) << 23); }

/// expm1(r) for |r| <= ln2 / 2 (+ rounding slack), with full relative accuracy near 0.
inline float expm1_reduced(float r) {
  float p = 1.0f / 40320.0f;
  p = p * r + 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  return r + (r * r) * p;
}

/// Splits x in [-128, 128] into n and r with x = n ln2 + r (|r| <= ln2/2 + ulp), n an integer.
inline void reduce_in_range(float x, float& n, float& r) {
  constexpr float log2e = 1.44269504088896341f;
  constexpr float ln2_hi = 0.693145751953125f;         // 16 significant bits: n * ln2_hi is exact
  constexpr float ln2_lo = 1.42860682030941723212e-6f;  // ln2 - ln2_hi
  constexpr float round_magic = 12582912.0f;            // 1.5 * 2^23: adding it rounds to an integer
  n = (x * log2e + round_magic) - round_magic;
  r = (x - n * ln2_hi) - n * ln2_lo;
}

/// Splits x into n and r with x = n ln2 + r (|r| <= ln2/2 + ulp); n clamped to [-150, 128] for finite x.
inline void reduce(float x, float& n, float& r) {
  // Beyond [-104, 89] exp is 0 or inf anyway; clamping keeps n small. NaN becomes -104 (the caller returns NaN
  // itself): a NaN must not reach the float-to-int conversion.
  float xc = select(x > -104.0f, x, -104.0f);
  xc = select(xc < 89.0f, xc, 89.0f);
  reduce_in_range(xc, n, r);
}

/// e^x: NaN for NaN, +inf above 88.72, 0 below -103.97 (subnormal results in between are rounded twice).
inline float exp(float x) {
  float n, r;
  reduce(x, n, r);
  const std::int32_t k = static_cast<std::int32_t>(n);
  // 2^k as two factors so that results down to the subnormals and up to 2^128 (overflow to inf) come out right.
  const std::int32_t k1 = k >> 1, k2 = k - k1;
  const float p = expm1_reduced(r);
  const float e = (pow2i(k1) + pow2i(k1) * p) * pow2i(k2);
  return select(x != x, x, select(x > 88.72283935546875f, std::numeric_limits<float>::infinity(), e));
}

/// e^x - 1, accurate near 0: NaN for NaN, +inf above 88.72, -1 below -17.33 (rounded).
inline float expm1(float x) {
  float n, r;
  reduce(x, n, r);
  const std::int32_t k = static_cast<std::int32_t>(n);
  // Below -126, 2^k - 1 rounds to -1 and the product is negligible; above 127, 2^128 does not fit: scale after.
  std::int32_t kc = k < -126 ? -126 : k;
  kc = kc > 127 ? 127 : kc;
  const float t = pow2i(kc);
  const float p = expm1_reduced(r);
  // (2^k - 1) is exact for |k| <= 24, and 2^k p carries the rest; for k = 0 it is p itself.
  float e = (t - 1.0f) + t * p;
  e = select(k > 127, e * 2.0f, e);  // x in (88.03, 88.72]
  e = select(x == 0.0f, x, e);       // expm1(-0) is -0
  return select(x != x, x, select(x > 88.72283935546875f, std::numeric_limits<float>::infinity(), e));
}

/// Bits of x with the sign of s.
inline float copysign(float x, float s) {
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) & 0x7fffffffu) | (std::bit_cast<std::uint32_t>(s) & 0x80000000u));
}

/// log(m) for m = 1 + f in [sqrt(1/2), sqrt(2)) plus k ln 2 plus c (a correction much smaller than the result),
/// summed so that the last operation adds f (exact) to a small remainder: log(1 + f) = 2 atanh(s) with
/// s = f / (2 + f), |s| <= 0.1716, = f - f^2/2 + s (f^2/2 + z Q(z)), z = s^2 (Q fitted: relative error 2^-30.2).
inline float log_reduced(float f, float k, float c) {
  constexpr float ln2_hi = 0.693145751953125f;         // as in reduce(): k * ln2_hi is exact for |k| < 256
  constexpr float ln2_lo = 1.42860682030941723212e-6f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float r = z * (0.6666677594184875f + z * (0.39977580308914185f + z * 0.29870927333831787f));
  const float hfsq = 0.5f * f * f;
  return k * ln2_hi - ((hfsq - (s * (hfsq + r) + (k * ln2_lo + c))) - f);
}

/// Splits a positive normal u into 2^e m with m in [sqrt(1/2), sqrt(2)): returns m - 1 (exact) and, as a float,
/// k = e - (exp_bias - 127); exp_bias is the exponent bias 127, plus 25 for an input the caller scaled by 2^25.
inline float split_log(float u, float& k, std::int32_t exp_bias) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(u);
  const std::uint32_t mant = b & 0x007fffffu;
  const std::uint32_t half = (mant + 0x004afb0du) & 0x00800000u;  // set when m >= sqrt(2): use m / 2, k + 1
  k = static_cast<float>(static_cast<std::int32_t>((b >> 23) + (half >> 23)) - exp_bias);
  return std::bit_cast<float>(mant | (half ^ 0x3f800000u)) - 1.0f;
}

/// Natural logarithm: NaN for NaN and x < 0, -inf for ±0, +inf for +inf; subnormal x exact through a 2^25 scaling.
inline float log(float x) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const bool sub = x < std::numeric_limits<float>::min();  // and 0 and negatives, replaced below
  float k;
  const float f = split_log(select(sub, x * 33554432.0f, x), k, 127 + 25 * static_cast<std::int32_t>(sub));
  float y = log_reduced(f, k, 0.0f);
  y = select(x < 0.0f, std::numeric_limits<float>::quiet_NaN(), y);
  y = select(x == 0.0f, -inf, y);
  y = select(x == inf, x, y);
  return select(x != x, x, y);
}

/// log(1 + x), accurate near 0: log(u) of u = 1 + x (rounded) plus c / u, c the rounding error of u (exact, from
/// Fast2Sum). NaN for NaN and x < -1, -inf for -1, +inf for +inf, x for ±0 and tiny x.
inline float log1p(float x) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const float u = 1.0f + x;  // 0 or at least 2^-24 for x >= -1: never subnormal
  const float c = select(x > 1.0f, 1.0f - (u - x), x - (u - 1.0f));
  float k;
  const float f = split_log(u, k, 127);
  float y = log_reduced(f, k, c / u);
  y = select(x < -1.0f, std::numeric_limits<float>::quiet_NaN(), y);
  y = select(x == -1.0f, -inf, y);
  y = select(x == inf, x, y);
  return select(x != x || x == 0.0f, x, y);
}

/// Hyperbolic tangent: an odd polynomial below |x| = 0.75 (fitted, 2^-32.4 relative), 1 - 2 / (e^2|x| + 1) above
/// with e^2|x| = 2^k (1 + p) and e^2|x| + 1 = (2^k + 1) + 2^k p rounded once; ±1 beyond |x| = 10, NaN for NaN,
/// -0 for -0.
inline float tanh(float x) {
  const float a = copysign(x, 1.0f);
  const float z = a * a;
  float q = -5.940661649e-04f;
  q = q * z + 2.896194812e-03f;
  q = q * z + -8.542490192e-03f;
  q = q * z + 2.178488113e-02f;
  q = q * z + -5.395606905e-02f;
  q = q * z + 1.333324909e-01f;
  q = q * z + -3.333333135e-01f;
  const float small = a + a * (z * q);
  float n, r;
  reduce(2.0f * select(a < 10.0f, a, 10.0f), n, r);  // tanh(10) rounds to 1; NaN becomes 10 (replaced below)
  const float t = pow2i(static_cast<std::int32_t>(n));
  const float d = (t + 1.0f) + t * expm1_reduced(r);
  const float y = select(a < 0.75f, small, 1.0f - 2.0f / d);
  return select(x != x, x, copysign(y, x));
}

/// Logistic function 1 / (1 + e^-x): s = 1 / (1 + e^|x|) with 1 + e^|x| = 1 + 2^k (1 + p) rounded once, then s
/// for x < 0 and 1 - s for x >= 0 (s <= 1/2: no cancellation). For |x| > 44 the sum is scaled by 2^-64 so that it
/// stays finite and results down to the subnormals come out (rounded twice there). NaN for NaN, 0 and 1 at -inf, +inf.
inline float sigmoid(float x) {
  const float a = copysign(x, 1.0f);
  float n, r;
  reduce_in_range(select(a < 104.0f, a, 104.0f), n, r);  // e^104 > 2^150: 0 below -104; NaN becomes 104
  const std::int32_t k = static_cast<std::int32_t>(n);
  const std::int32_t ks = k > 64 ? 64 : 0;
  const float t = pow2i(k - ks), one = pow2i(-ks), tp = t * expm1_reduced(r);
  // 2^k + 1 is exact up to k = 23 and 1 + 2^k p from 24 to 25, so either way the sum rounds once; beyond, the 1
  // lies below the sum's last place.
  const float d = select(k < 24, (t + one) + tp, t + (one + tp));
  const float s = (1.0f / d) * pow2i(-ks);
  return select(x != x, x, select(x < 0.0f, s, 1.0f - s));
}

// ---- double ----


/// sqrt(x), correctly rounded (bit for bit the C library's and CUDA's): 1/sqrt in double from a bit-level guess
/// (3.5% error) and three Newton steps (below 1e-10), times x, rounded to float (within one ulp), then moved to
/// the neighbour on the other side of a rounding midpoint m where x < m^2 or x > m^2 (m has 25 bits: m^2 is exact
/// in double). std::sqrt is a call under gcc's default -fmath-errno, which keeps any loop reading it scalar; this
/// vectorises where 64-bit integer lanes do (TEXPR_VMATH_DOUBLE). Checked on all 2^32 inputs. NaN for x < 0 and
/// NaN, x for ±0 and +inf.
inline float sqrt(float x) {
  const double d = static_cast<double>(x);
  double y = std::bit_cast<double>(std::uint64_t{0x5fe6eb50c7b537a9} - (std::bit_cast<std::uint64_t>(d) >> 1));
  y = y * (1.5 - 0.5 * d * y * y);
  y = y * (1.5 - 0.5 * d * y * y);
  y = y * (1.5 - 0.5 * d * y * y);
  const float r = static_cast<float>(d * y);
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(r);
  const float up = std::bit_cast<float>(bits + 1), down = std::bit_cast<float>(bits - 1);
  const double hi = (static_cast<double>(r) + static_cast<double>(up)) * 0.5;
  const double lo = (static_cast<double>(r) + static_cast<double>(down)) * 0.5;
  const float rounded = select(d > hi * hi, up, select(d < lo * lo, down, r));
  constexpr float inf = std::numeric_limits<float>::infinity();
  // & and |, not && and ||: a branch in the loop body stops vectorisation.
  return select((x > 0) & (x < inf), rounded, select((x == 0) | (x == inf), x, std::numeric_limits<float>::quiet_NaN()));
}
/// c ? a : b through an integer mask (see the float select).
inline double select(bool c, double a, double b) {
  const std::uint64_t m = 0u - static_cast<std::uint64_t>(c);
  return std::bit_cast<double>((std::bit_cast<std::uint64_t>(a) & m) | (std::bit_cast<std::uint64_t>(b) & ~m));
}

/// Bits of x with the sign of s.
inline double copysign(double x, double s) {
  constexpr std::uint64_t sign = std::uint64_t(1) << 63;
  return std::bit_cast<double>((std::bit_cast<std::uint64_t>(x) & ~sign) | (std::bit_cast<std::uint64_t>(s) & sign));
}

/// 2^k for integer k in [-1022, 1023], from the exponent bits. Integers stay 64-bit and pass no conversion
/// instruction (a 64-bit int to or from double conversion does not vectorise before AVX-512).
inline double pow2i(std::int64_t k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

/// Adding it to a double of magnitude below 2^51 rounds it to an integer, held in the low bits of the sum.
inline constexpr double round_magic = 6755399441055744.0;  // 1.5 * 2^52

/// The integer n held by round_magic + n (as that double's bits minus round_magic's).
inline std::int64_t magic_int(double t) {
  return static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(t) - std::bit_cast<std::uint64_t>(round_magic));
}

/// x = n ln2 + r + r_lo for |x| < 2^50: n rounded (as a double and as an integer k), |r| <= ln2 / 2 (+ ulp), r_lo
/// the rounding error of r.
inline void reduce(double x, double& n, std::int64_t& k, double& r, double& r_lo) {
  constexpr double log2e = 1.4426950408889634;
  constexpr double ln2_hi = 0.6931471805598903;     // 42 significant bits: n * ln2_hi is exact for |n| < 2^11
  constexpr double ln2_lo = 5.497923018708371e-14;  // ln2 - ln2_hi
  const double t = x * log2e + round_magic;
  n = t - round_magic;
  k = magic_int(t);
  const double hi = x - n * ln2_hi;  // exact
  const double lo = n * ln2_lo;
  r = hi - lo;
  r_lo = (hi - r) - lo;
}

/// (expm1(r) - r) / r^2 for |r| <= 0.35: P fitted, r^2 P within 2^-59.4 of expm1(r) relative.
inline double expm1_poly(double r) {
  double p = 2.0875304012043765e-09;
  p = p * r + 2.5110097330716145e-08;
  p = p * r + 2.7557405948966644e-07;
  p = p * r + 2.755724140259775e-06;
  p = p * r + 2.4801587164783668e-05;
  p = p * r + 0.00019841269888652986;
  p = p * r + 0.0013888888888968318;
  p = p * r + 0.00833333333332075;
  p = p * r + 0.04166666666666649;
  p = p * r + 0.16666666666666677;
  return p * r + 0.5;
}

/// e^x: NaN for NaN, +inf above 709.78, 0 below -745.13 (subnormal results rounded twice).
inline double exp(double x) {
  double xc = select(x > -746.0, x, -746.0);  // NaN becomes -746 (returned as NaN below)
  xc = select(xc < 710.0, xc, 710.0);
  double n, r, r_lo;
  std::int64_t k;
  reduce(xc, n, k, r, r_lo);
  const double p = r + (r_lo + r * r * expm1_poly(r));
  // 2^k as two factors (k in [-1077, 1024]) for the subnormals and the top binade; k1 = n / 2 rounded.
  const std::int64_t k1 = magic_int(n * 0.5 + round_magic), k2 = k - k1;
  const double e = (pow2i(k1) + pow2i(k1) * p) * pow2i(k2);
  return select(x != x, x, e);
}

/// e^x - 1, accurate near 0: (2^k - 1) + 2^k r summed exactly (TwoSum), then the rest added once. NaN for NaN,
/// +inf above 709.78, -1 below -37.4, -0 for -0.
inline double expm1(double x) {
  double xc = select(x > -40.0, x, -40.0);
  xc = select(xc < 710.0, xc, 710.0);
  double n, r, r_lo;
  std::int64_t k;
  reduce(xc, n, k, r, r_lo);
  const double q = r_lo + r * (r_lo + r * expm1_poly(r));  // expm1(r + r_lo) - r
  const bool top = n > 1023.0;                              // x in (709.09, 709.78]: 2^1024 does not fit
  const double t = pow2i(top ? k - 1 : k);
  const double a = t - 1.0, b = t * r;  // exact for |k| <= 53 (beyond, a rounds by at most half the result's ulp)
  const double s = a + b;
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  double e = s + (err + t * q);
  e = select(top, e * 2.0, e);
  return select(x != x || x == 0.0, x, e);
}

/// log(m) for m = 1 + f in [sqrt(1/2), sqrt(2)) plus k ln 2 plus c, as the float version; Q fitted: relative
/// error 2^-59.5.
inline double log_reduced(double f, double k, double c) {
  constexpr double ln2_hi = 0.6931471805598903;  // k * ln2_hi exact for |k| < 2^11
  constexpr double ln2_lo = 5.497923018708371e-14;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double q = 0.14795749966819663;
  q = q * z + 0.15314074347411852;
  q = q * z + 0.18183563210721015;
  q = q * z + 0.22222198599263782;
  q = q * z + 0.2857142874207137;
  q = q * z + 0.39999999999416525;
  q = q * z + 0.6666666666666734;
  const double r = z * q;
  const double hfsq = 0.5 * f * f;
  return k * ln2_hi - ((hfsq - (s * (hfsq + r) + (k * ln2_lo + c))) - f);
}

/// Splits a positive normal u into 2^k m with m in [sqrt(1/2), sqrt(2)): returns m - 1 (exact) and k as a double,
/// minus k_adjust, without an integer to double conversion.
inline double split_log(double u, double& k, double k_adjust) {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(u);
  const std::uint64_t mant = b & 0x000fffffffffffffu;
  const std::uint64_t half = (mant + 0x00095f619980c433u) & 0x0010000000000000u;  // m >= sqrt(2): m / 2, k + 1
  // 2^52 + e for the biased exponent e, built from bits, then less 2^52 + 1023.
  const double e = std::bit_cast<double>(std::uint64_t(0x4330000000000000u) + (b >> 52) + (half >> 52));
  k = e - (4503599627370496.0 + 1023.0 + k_adjust);
  return std::bit_cast<double>(mant | (half ^ 0x3ff0000000000000u)) - 1.0;
}

/// Natural logarithm: NaN for NaN and x < 0, -inf for ±0, +inf for +inf; subnormal x through a 2^54 scaling.
inline double log(double x) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const bool sub = x < std::numeric_limits<double>::min();
  double k;
  const double f = split_log(select(sub, x * 18014398509481984.0, x), k, select(sub, 54.0, 0.0));
  double y = log_reduced(f, k, 0.0);
  y = select(x < 0.0, std::numeric_limits<double>::quiet_NaN(), y);
  y = select(x == 0.0, -inf, y);
  y = select(x == inf, x, y);
  return select(x != x, x, y);
}

/// log(1 + x), accurate near 0, as the float version.
inline double log1p(double x) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double u = 1.0 + x;
  const double c = select(x > 1.0, 1.0 - (u - x), x - (u - 1.0));
  double k;
  const double f = split_log(u, k, 0.0);
  double y = log_reduced(f, k, c / u);
  y = select(x < -1.0, std::numeric_limits<double>::quiet_NaN(), y);
  y = select(x == -1.0, -inf, y);
  y = select(x == inf, x, y);
  return select(x != x || x == 0.0, x, y);
}

/// Hyperbolic tangent, as the float version: an odd polynomial below |x| = 0.625 (fitted, 2^-58.4 relative),
/// 1 - 2 / (e^2|x| + 1) above; ±1 beyond |x| = 22.
inline double tanh(double x) {
  const double a = copysign(x, 1.0);
  const double z = a * a;
  double q = -2.271760213208774e-06;
  q = q * z + 1.1794570009428336e-05;
  q = q * z + -3.6625514709223995e-05;
  q = q * z + 9.575107910180452e-05;
  q = q * z + -0.00023877082662836452;
  q = q * z + 0.0005899492263576361;
  q = q * z + -0.0014558222921598485;
  q = q * z + 0.0035921267306175415;
  q = q * z + -0.008863235434309601;
  q = q * z + 0.021869488531646893;
  q = q * z + -0.05396825396812829;
  q = q * z + 0.13333333333333156;
  q = q * z + -0.3333333333333333;
  const double small = a + a * (z * q);
  double n, r, r_lo;
  std::int64_t k;
  reduce(2.0 * select(a < 22.0, a, 22.0), n, k, r, r_lo);
  const double t = pow2i(k);
  const double d = (t + 1.0) + t * (r + (r_lo + r * r * expm1_poly(r)));
  const double y = select(a < 0.625, small, 1.0 - 2.0 / d);
  return select(x != x, x, copysign(y, x));
}

} // namespace texpr::detail::vmath
