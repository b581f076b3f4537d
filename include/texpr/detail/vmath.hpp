// Branch-free float exp and expm1 for the host's fused loops: written as straight-line arithmetic with selects so
// that compilers vectorise the loops that call them (the C library's expf/expm1f are opaque calls, one element at a
// time: 6.7 ns per element for elu, issue 14). Cody-Waite reduction x = n ln2 + r, |r| <= ln2 / 2, a degree-8
// Taylor polynomial for expm1(r) (truncation below 1e-9 relative), and 2^n built from its exponent bits.
// Accuracy, checked on a sweep of all floats (tests/reliability/test_vmath.cpp): exp within 1 ulp (0.92 measured),
// expm1 within 1.5 ulp (1.39 measured, just above ln2/2 where the reduction starts cancelling). Define
// TEXPR_USE_LIBM to use the C library instead.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

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

/// Splits x into n and r with x = n ln2 + r (|r| <= ln2/2 + ulp); n clamped to [-150, 128] for finite x.
inline void reduce(float x, float& n, float& r) {
  constexpr float log2e = 1.44269504088896341f;
  constexpr float ln2_hi = 0.693145751953125f;         // 16 significant bits: n * ln2_hi is exact
  constexpr float ln2_lo = 1.42860682030941723212e-6f;  // ln2 - ln2_hi
  constexpr float round_magic = 12582912.0f;            // 1.5 * 2^23: adding it rounds to an integer
  // Beyond [-104, 89] exp is 0 or inf anyway; clamping keeps n small. NaN becomes -104 (the caller returns NaN
  // itself): a NaN must not reach the float-to-int conversion.
  float xc = select(x > -104.0f, x, -104.0f);
  xc = select(xc < 89.0f, xc, 89.0f);
  n = (xc * log2e + round_magic) - round_magic;
  r = (xc - n * ln2_hi) - n * ln2_lo;
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

} // namespace texpr::detail::vmath
