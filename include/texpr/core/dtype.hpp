// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Element types (dtypes): the 16-bit float storage types, dtype tags and names (the 8-bit floats are in float8.hpp;
// the complex dtypes are std::complex<float> and std::complex<double>, computed as detail::complex_value).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/float8.hpp"
#include "texpr/detail/bits.hpp"
#include "texpr/detail/complex.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace texpr {

namespace detail {

// IEEE binary16 conversions, round to nearest even. Device code uses the hardware conversions (one cvt
// instruction each); host code uses the portable routines below, so it needs no CUDA headers.
TEXPR_HOST_DEVICE inline std::uint16_t float_to_half_bits(float f) {
#if defined(TEXPR_DEVICE_CODE)
  return __half_as_ushort(__float2half_rn(f));
#else
  const std::uint32_t x = float_bits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t mag = x & 0x7FFFFFFFu;
  if (mag >= 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7C00u | (mag > 0x7F800000u ? 0x200u : 0u));
  if (mag >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (mag < 0x38800000u) {                                                  // half subnormal or zero
    if (mag < 0x33000000u) return static_cast<std::uint16_t>(sign);
    const std::uint32_t e = mag >> 23;
    const std::uint32_t m = (mag & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t shift = 126u - e;
    std::uint32_t h = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  const std::uint32_t v = mag - 0x38000000u;  // rebias exponent 127 -> 15
  std::uint32_t h = v >> 13;
  const std::uint32_t rem = v & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
#endif
}

TEXPR_HOST_DEVICE inline float half_bits_to_float(std::uint16_t h) {
#if defined(TEXPR_DEVICE_CODE)
  return __half2float(__ushort_as_half(h));
#else
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t e = (h >> 10) & 0x1Fu;
  std::uint32_t m = h & 0x3FFu;
  if (e == 0) {
    if (m == 0) return bits_float(sign);
    e = 113;
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    m &= 0x3FFu;
    return bits_float(sign | (e << 23) | (m << 13));
  }
  if (e == 31) return bits_float(sign | 0x7F800000u | (m << 13));
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
#endif
}

TEXPR_HOST_DEVICE inline std::uint16_t float_to_bfloat16_bits(float f) {
#if defined(TEXPR_DEVICE_CODE)
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
  const std::uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
#endif
}

// bfloat16 is the high half of a float, so widening is exact and the same on host and device.
TEXPR_HOST_DEVICE inline float bfloat16_bits_to_float(std::uint16_t b) {
  return bits_float(static_cast<std::uint32_t>(b) << 16);
}

} // namespace detail

/// IEEE binary16 storage type, layout-compatible with CUDA's __half; arithmetic runs in float.
struct half {
  std::uint16_t bits = 0;  ///< Raw IEEE binary16 bits.
  /// Zero.
  half() = default;
  /// Rounds a float to the nearest half (ties to even).
  TEXPR_HOST_DEVICE explicit half(float f) : bits(detail::float_to_half_bits(f)) {}
  /// Widens to float exactly.
  TEXPR_HOST_DEVICE explicit operator float() const { return detail::half_bits_to_float(bits); }
};

/// bfloat16 storage type, layout-compatible with CUDA's __nv_bfloat16; arithmetic runs in float.
struct bfloat16 {
  std::uint16_t bits = 0;  ///< Raw bfloat16 bits (the high half of a float).
  /// Zero.
  bfloat16() = default;
  /// Rounds a float to the nearest bfloat16 (ties to even).
  TEXPR_HOST_DEVICE explicit bfloat16(float f) : bits(detail::float_to_bfloat16_bits(f)) {}
  /// Widens to float exactly.
  TEXPR_HOST_DEVICE explicit operator float() const { return detail::bfloat16_bits_to_float(bits); }
};

/// Dtype tags: named so that compiler diagnostics print `texpr::dtype::int64` rather than `long int`.
namespace dtype {
struct float32 {};   ///< float
struct float64 {};   ///< double
struct int8 {};      ///< std::int8_t
struct int32 {};     ///< std::int32_t
struct int64 {};     ///< std::int64_t
struct boolean {};   ///< bool
struct float16 {};   ///< texpr::half
struct bfloat16 {};  ///< texpr::bfloat16
struct float8_e4m3 {};  ///< texpr::float8_e4m3
struct float8_e5m2 {};  ///< texpr::float8_e5m2
struct complex64 {};   ///< std::complex<float>
struct complex128 {};  ///< std::complex<double>
struct unknown {};   ///< any other element type (user-defined)
} // namespace dtype

/// Maps an element type to its dtype tag (dtype::unknown for unregistered types).
template <class T> struct dtype_tag {
  using type = dtype::unknown;  ///< T's tag
};
/// \cond TEXPR_SPECIALISATIONS (one per dtype, as the table in the primary template's comment says)
template <> struct dtype_tag<float> { using type = dtype::float32; };
template <> struct dtype_tag<double> { using type = dtype::float64; };
template <> struct dtype_tag<std::int8_t> { using type = dtype::int8; };
template <> struct dtype_tag<std::int32_t> { using type = dtype::int32; };
template <> struct dtype_tag<std::int64_t> { using type = dtype::int64; };
template <> struct dtype_tag<bool> { using type = dtype::boolean; };
template <> struct dtype_tag<half> { using type = dtype::float16; };
template <> struct dtype_tag<bfloat16> { using type = dtype::bfloat16; };
template <> struct dtype_tag<float8_e4m3> { using type = dtype::float8_e4m3; };
template <> struct dtype_tag<float8_e5m2> { using type = dtype::float8_e5m2; };
template <> struct dtype_tag<std::complex<float>> { using type = dtype::complex64; };
template <> struct dtype_tag<std::complex<double>> { using type = dtype::complex128; };
/// \endcond

/// The dtype tag of element type T.
template <class T> using dtype_tag_t = typename dtype_tag<T>::type;

/// User-facing name of element type T ("float32", "int64", ...).
template <class T> inline constexpr std::string_view dtype_name_v = "unknown";
/// \cond TEXPR_SPECIALISATIONS
template <> inline constexpr std::string_view dtype_name_v<float> = "float32";
template <> inline constexpr std::string_view dtype_name_v<double> = "float64";
template <> inline constexpr std::string_view dtype_name_v<std::int8_t> = "int8";
template <> inline constexpr std::string_view dtype_name_v<std::int32_t> = "int32";
template <> inline constexpr std::string_view dtype_name_v<std::int64_t> = "int64";
template <> inline constexpr std::string_view dtype_name_v<bool> = "bool";
template <> inline constexpr std::string_view dtype_name_v<half> = "float16";
template <> inline constexpr std::string_view dtype_name_v<bfloat16> = "bfloat16";
template <> inline constexpr std::string_view dtype_name_v<float8_e4m3> = "float8_e4m3";
template <> inline constexpr std::string_view dtype_name_v<float8_e5m2> = "float8_e5m2";
template <> inline constexpr std::string_view dtype_name_v<std::complex<float>> = "complex64";
template <> inline constexpr std::string_view dtype_name_v<std::complex<double>> = "complex128";
/// \endcond

/// True for half and bfloat16, which are stored in 16 bits and computed in float.
template <class T>
inline constexpr bool is_float16_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// True for float8_e4m3 and float8_e5m2, which are stored in 8 bits and computed in float.
template <class T>
inline constexpr bool is_float8_v = std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>;

/// True for the floats stored narrower than float and computed in float (16 and 8 bits).
template <class T>
inline constexpr bool is_narrow_float_v = is_float16_v<T> || is_float8_v<T>;

/// True for floating dtypes, the 16-bit and 8-bit ones included.
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_narrow_float_v<T>;

/// True for the integer dtypes texpr computes with (not bool).
template <class T>
inline constexpr bool is_integer_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// True for the complex dtypes, std::complex<float> (complex64) and std::complex<double> (complex128).
template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

namespace detail {
template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
template <class T> struct real_of<complex_value<T>> { using type = T; };
template <class T> struct compute_of { using type = std::conditional_t<is_narrow_float_v<T>, float, T>; };
template <class T> struct compute_of<std::complex<T>> { using type = complex_value<T>; };
} // namespace detail

/// The real dtype of T's parts: float for complex64, double for complex128, T itself for a real dtype.
template <class T> using real_of_t = typename detail::real_of<T>::type;

/// The type arithmetic on T is carried out in: float for the 16-bit and 8-bit floats, detail::complex_value for the
/// complex dtypes, T otherwise.
template <class T> using compute_t = typename detail::compute_of<T>::type;

} // namespace texpr
