// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bit patterns of float and double, on host and device: what the narrow float conversions work on.
#pragma once

#include <cstdint>
#include <cstring>

#include "texpr/core/config.hpp"

namespace texpr::detail {

/// The IEEE binary32 bits of f.
TEXPR_HOST_DEVICE inline std::uint32_t float_bits(float f) {
#if defined(TEXPR_DEVICE_CODE)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

/// The float with IEEE binary32 bits u.
TEXPR_HOST_DEVICE inline float bits_float(std::uint32_t u) {
#if defined(TEXPR_DEVICE_CODE)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// The IEEE binary64 bits of d.
TEXPR_HOST_DEVICE inline std::uint64_t double_bits(double d) {
#if defined(TEXPR_DEVICE_CODE)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}

} // namespace texpr::detail
