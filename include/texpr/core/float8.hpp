// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 8-bit float storage types (OCP FP8: E4M3 and E5M2) and their conversions, with the rounding and saturation
// of CUDA's __nv_fp8_e4m3 / __nv_fp8_e5m2 constructors.
#pragma once

#include <cstdint>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/detail/bits.hpp"

#if defined(__CUDACC__)
#include <cuda_fp8.h>
#endif

namespace texpr {

namespace detail {

/// OCP E4M3 ("E4M3FN"): 4 exponent bits (bias 7), 3 mantissa bits, no infinities, one NaN per sign (S.1111.111);
/// largest finite 448, smallest subnormal 2^-9.
struct e4m3_format {
  static constexpr int exponent_bits = 4;          ///< Exponent field width.
  static constexpr int mantissa_bits = 3;          ///< Fraction field width.
  static constexpr int bias = 7;                   ///< Exponent bias.
  static constexpr std::uint8_t max_code = 0x7E;   ///< Largest finite magnitude (448).
  static constexpr bool has_infinity = false;      ///< The all-ones exponent holds finite values, and S.1111.111 NaN.
};

/// OCP E5M2: IEEE-like, 5 exponent bits (bias 15), 2 mantissa bits, infinities and NaNs in the all-ones exponent;
/// largest finite 57344, smallest subnormal 2^-16.
struct e5m2_format {
  static constexpr int exponent_bits = 5;          ///< Exponent field width.
  static constexpr int mantissa_bits = 2;          ///< Fraction field width.
  static constexpr int bias = 15;                  ///< Exponent bias.
  static constexpr std::uint8_t max_code = 0x7B;   ///< Largest finite magnitude (57344).
  static constexpr bool has_infinity = true;       ///< S.11111.00 is infinity, S.11111.xx (xx != 0) NaN.
};

/// The NaN every conversion to 8 bits produces (sign dropped, as CUDA's conversions do): 0x7F in both formats.
inline constexpr std::uint8_t float8_nan_code = 0x7F;

/// Rounds the binary float with bits x (SourceMantissa fraction bits, SourceExponent exponent bits: float or
/// double) to Format, to nearest with ties to even, saturating: anything past the largest finite value,
/// infinities included, becomes the largest finite value of its sign (__NV_SATFINITE); NaN becomes
/// float8_nan_code. One rounding from the source, so a double never rounds twice through float.
template <class Format, int SourceMantissa, int SourceExponent, class U>
TEXPR_HOST_DEVICE constexpr std::uint8_t encode_float8(U x) {
  constexpr U sign_bit = U(1) << (SourceMantissa + SourceExponent);
  constexpr U infinity = ((U(1) << SourceExponent) - 1) << SourceMantissa;
  constexpr int source_bias = (1 << (SourceExponent - 1)) - 1;
  constexpr int emin = 1 - Format::bias;  // exponent of the smallest normal
  constexpr int m = Format::mantissa_bits;
  const auto sign = static_cast<std::uint8_t>((x & sign_bit) ? 0x80 : 0);
  const U magnitude = x & (sign_bit - 1);
  if (magnitude > infinity) return float8_nan_code;
  if (magnitude == infinity) return static_cast<std::uint8_t>(sign | Format::max_code);
  const int field = static_cast<int>(magnitude >> SourceMantissa);
  if (field == 0) return sign;  // a subnormal source lies far below half the smallest 8-bit subnormal
  const int e = field - source_bias;
  const U significand = (magnitude & ((U(1) << SourceMantissa) - 1)) | (U(1) << SourceMantissa);  // 1.f
  // Keep m fraction bits at exponent max(e, emin): below the normal range the value loses one more bit per step.
  const int drop = SourceMantissa - m + (e < emin ? emin - e : 0);
  if (drop > SourceMantissa + 1) return sign;  // below half the smallest subnormal
  const U kept = significand >> drop;
  const U rest = significand & ((U(1) << drop) - 1);
  const U halfway = U(1) << (drop - 1);
  const U rounded = kept + ((rest > halfway || (rest == halfway && (kept & 1))) ? 1 : 0);
  // In the normal range `rounded` carries the implicit bit (2^m), so adding the exponent less one lands on the
  // code, and a rounding carry out of the fraction steps the exponent by itself; below it the code is `rounded`.
  const long long code = (e < emin ? 0LL : static_cast<long long>(e - emin) << m) + static_cast<long long>(rounded);
  return static_cast<std::uint8_t>(sign | (code > Format::max_code ? Format::max_code : code));
}

/// The value of 8-bit code c of Format, exactly (every one is a float); NaN codes give a quiet NaN of their sign.
template <class Format> TEXPR_HOST_DEVICE inline float decode_float8(std::uint8_t c) {
  constexpr int m = Format::mantissa_bits;
  constexpr unsigned top_field = (1u << Format::exponent_bits) - 1;
  const std::uint32_t sign = static_cast<std::uint32_t>(c & 0x80u) << 24;
  const unsigned field = (c & 0x7Fu) >> m;
  const unsigned fraction = c & ((1u << m) - 1);
  if constexpr (Format::has_infinity) {
    if (field == top_field) return bits_float(sign | 0x7F800000u | (fraction ? 0x400000u : 0u));
  } else {
    if ((c & 0x7Fu) == 0x7Fu) return bits_float(sign | 0x7FC00000u);
  }
  if (field == 0) {  // subnormal: fraction * 2^(emin - m), an exact float product
    const float v = static_cast<float>(fraction) * bits_float(static_cast<std::uint32_t>(127 + 1 - Format::bias - m) << 23);
    return sign ? -v : v;
  }
  return bits_float(sign | (static_cast<std::uint32_t>(static_cast<int>(field) - Format::bias + 127) << 23) | (fraction << (23 - m)));
}

/// Code of value v (any arithmetic type) in Format. Sources that float holds exactly, or that saturate anyway,
/// go through float (the hardware conversion in device code); wider floating types round once, from double.
template <class Format, class V> TEXPR_HOST_DEVICE inline std::uint8_t to_float8(V v) {
  if constexpr (std::is_floating_point_v<V> && sizeof(V) > sizeof(float)) {
    return encode_float8<Format, 52, 11>(double_bits(static_cast<double>(v)));
  } else {
    // Integers past 2^24 round on the way to float, but they are far past the largest 8-bit value either way.
    const float f = static_cast<float>(v);
#if defined(TEXPR_DEVICE_CODE)
    return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, Format::has_infinity ? __NV_E5M2 : __NV_E4M3);
#else
    return encode_float8<Format, 23, 8>(float_bits(f));
#endif
  }
}

} // namespace detail

/// OCP FP8 E4M3 storage type (CUDA's __nv_fp8_e4m3, "E4M3FN"): range +-448, no infinities; arithmetic runs in
/// float. Conversions round to nearest even and saturate (infinity included) to +-448; NaN stays NaN.
struct float8_e4m3 {
  std::uint8_t bits = 0;  ///< Raw bits: sign, 4 exponent bits, 3 mantissa bits.
  /// Zero.
  float8_e4m3() = default;
  /// Rounds v (float, double, an integer; half or bfloat16 through float, which is exact) to the nearest E4M3.
  template <class V>
    requires std::is_arithmetic_v<V>
  TEXPR_HOST_DEVICE explicit float8_e4m3(V v) : bits(detail::to_float8<detail::e4m3_format>(v)) {}
  /// Widens to float exactly.
  TEXPR_HOST_DEVICE explicit operator float() const { return detail::decode_float8<detail::e4m3_format>(bits); }
};

/// OCP FP8 E5M2 storage type (CUDA's __nv_fp8_e5m2): range +-57344, with infinities and NaNs; arithmetic runs in
/// float. Conversions round to nearest even and saturate (infinity included) to +-57344, as CUDA's constructor
/// does; NaN stays NaN.
struct float8_e5m2 {
  std::uint8_t bits = 0;  ///< Raw bits: sign, 5 exponent bits, 2 mantissa bits.
  /// Zero.
  float8_e5m2() = default;
  /// Rounds v (float, double, an integer; half or bfloat16 through float, which is exact) to the nearest E5M2.
  template <class V>
    requires std::is_arithmetic_v<V>
  TEXPR_HOST_DEVICE explicit float8_e5m2(V v) : bits(detail::to_float8<detail::e5m2_format>(v)) {}
  /// Widens to float exactly (infinities stay infinite).
  TEXPR_HOST_DEVICE explicit operator float() const { return detail::decode_float8<detail::e5m2_format>(bits); }
};

} // namespace texpr
