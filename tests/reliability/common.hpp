// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared helpers of the reliability tests: problem sizes that shrink under sanitizers, exact sums.
#pragma once

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "core/reference.hpp"
#include "core/support.hpp"

namespace rel {

using test::ld;

/// True in sanitized builds (CMake defines TEXPR_RELIABILITY_SANITIZED when CMAKE_CXX_FLAGS has
/// -fsanitize=, and the compilers' own macros catch other setups); TEXPR_RELIABILITY_FULL=1 forces full size.
inline bool sanitized() {
  if (const char* full = std::getenv("TEXPR_RELIABILITY_FULL"); full && full[0] == '1') return false;
#if defined(TEXPR_RELIABILITY_SANITIZED) || defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

/// `full` in normal builds, `small` under sanitizers.
template <class N> N heavy(N full, N small) { return sanitized() ? small : full; }

/// Exact-enough sum in long double (Neumaier compensation on top of the 64-bit mantissa).
template <class It> ld exact_sum(It first, It last) {
  ld s = 0, c = 0;
  for (; first != last; ++first) {
    const ld x = static_cast<ld>(*first);
    const ld t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  return s + c;
}

/// Sum of magnitudes in long double.
template <class It> ld magnitude_sum(It first, It last) {
  ld s = 0;
  for (; first != last; ++first) s += std::fabs(static_cast<ld>(*first));
  return s;
}

/// Depth term of the documented host reduction bound: 16 + ceil(log2(ceil(n / 256))), at least 16.
inline ld depth_ulps(tx::index_t n) {
  const tx::index_t blocks = (n + 255) / 256;
  int levels = 0;
  while ((tx::index_t(1) << levels) < blocks) ++levels;
  return 16 + levels;
}

/// The documented bound on |sum - exact| for n terms of dtype T: (16 + ceil(log2(n/256))) * eps * sum|x|,
/// eps = numeric_limits<T>::epsilon() (one ulp of 1).
template <class T> ld sum_bound(tx::index_t n, ld magnitude) {
  return depth_ulps(n) * static_cast<ld>(std::numeric_limits<T>::epsilon()) * magnitude;
}

} // namespace rel
