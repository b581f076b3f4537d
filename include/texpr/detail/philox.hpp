// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11), the exact conversions of its words to doubles in [0, 1),
// and double arithmetic rounded alike on host and device: what tx::random's generators are built from.
#pragma once

#include <cstdint>

#include "texpr/core/config.hpp"

namespace texpr::detail {

/// Four 32-bit words: a Philox counter or the block it encrypts to.
struct philox_block {
  std::uint32_t w[4];  ///< Words 0 to 3.
};

/// The 64-bit key of a Philox call (a seed's low and high halves).
struct philox_key {
  std::uint32_t k[2];  ///< Words 0 and 1.
};

/// Philox4x32 with 10 rounds: a bijection of the 128-bit counter for each key. Integer operations only (the high
/// half of a 32x32 product comes from one 64-bit multiply), so host and device compute the same bits.
TEXPR_HOST_DEVICE constexpr philox_block philox4x32_10(philox_block c, philox_key key) {
  // Round multipliers and key increments (the Weyl sequence of the golden ratio and of sqrt(3) - 1), from the paper.
  constexpr std::uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  constexpr std::uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  std::uint32_t k0 = key.k[0], k1 = key.k[1];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += w0;
      k1 += w1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(m0) * c.w[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(m1) * c.w[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = philox_block{{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
  }
  return c;
}

/// Philox's block for element i of a generator: counter (i low, i high, stream, 0) under the seed's key. Each
/// generator draws from its own stream, so uniform and normal draws with one seed are independent.
TEXPR_HOST_DEVICE constexpr philox_block philox_at(philox_key key, std::uint32_t stream, std::int64_t i) {
  const auto n = static_cast<std::uint64_t>(i);
  const philox_block counter{{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n >> 32), stream, 0u}};
  return philox4x32_10(counter, key);
}

/// The key of a 64-bit seed: (low half, high half).
TEXPR_HOST_DEVICE constexpr philox_key philox_seed(std::uint64_t seed) {
  return philox_key{{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
}

/// The top 24 bits of a word as a fraction in [0, 1): exact in float and double.
TEXPR_HOST_DEVICE constexpr double unit_24(std::uint32_t a) { return static_cast<double>(a >> 8) * 0x1p-24; }

/// 53 bits (the high word's 32 over the low word's top 21) as a fraction in [0, 1); with `open_below`, in (0, 1]
/// instead (one more 2^-53), so its logarithm is finite. Exact in double.
TEXPR_HOST_DEVICE constexpr double unit_53(std::uint32_t low, std::uint32_t high, bool open_below = false) {
  const std::uint64_t k = (static_cast<std::uint64_t>(high) << 21) | (low >> 11);
  return static_cast<double>(k + (open_below ? 1u : 0u)) * 0x1p-53;
}

/// a * b rounded to double and never fused with a following addition: nvcc contracts `a * b + c` into an fma by
/// default, and g++ does with an FMA target (-ffp-contract=fast), which would round differently from the other side.
TEXPR_HOST_DEVICE inline double mul_rn(double a, double b) {
#if defined(TEXPR_DEVICE_CODE)
  return __dmul_rn(a, b);
#elif defined(__GNUC__)
  double p = a * b;
  __asm__("" : "+m"(p));  // the product leaves the expression, so it cannot be contracted
  return p;
#else
  return a * b;
#endif
}
/// a + b rounded to double (the addition of mul_rn's product; on the device an intrinsic that is never contracted).
TEXPR_HOST_DEVICE inline double add_rn(double a, double b) {
#if defined(TEXPR_DEVICE_CODE)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

} // namespace texpr::detail
