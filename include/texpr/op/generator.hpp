// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Generator op tags: values computed from the element index, fused into whatever reads them (no memory). Each has
// a `source<T>`, the device-copyable function of the element's row-major index that strided accessors read:
// arange, and the counter-based random generators uniform and normal (docs/semantics.md, "Random numbers").
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/detail/philox.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// start, start + step, start + 2 step, ... (NumPy's arange); integers wrap around, floats compute in double.
struct arange {
  static constexpr std::string_view name = "arange";  ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;   ///< Computed from the index.
  static constexpr auto dtypes = numeric;              ///< Defined on.
  /// Element i: start + i * step.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    using step_t = std::conditional_t<is_floating_v<T>, double, T>;
    step_t start, step;
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      if constexpr (is_floating_v<T>) return detail::narrow<T>(start + static_cast<double>(i) * step);
      else return detail::wrap_add(start, detail::wrap_mul(static_cast<T>(i), step));
    }
  };
};

/// Uniform random values in [lo, hi): element i depends only on the seed and i (counter-based Philox4x32-10), so
/// the values are the same in any evaluation order, thread count or backend.
struct uniform {
  static constexpr std::string_view name = "uniform";  ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;     ///< Computed from the index.
  static constexpr auto dtypes = floating;              ///< Defined on.
  static constexpr std::uint32_t stream = 0;            ///< Counter word 2 of its Philox calls.
  /// Element i: lo + (hi - lo) u, u from 24 random bits (53 for double), computed in double and rounded to T; a
  /// value that rounds up to hi becomes `below_hi`, the largest T below hi. Bit-identical on host and cuda.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    detail::philox_key key;
    double lo, span, hi;  // span = hi - lo, finite
    T below_hi;
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      const detail::philox_block b = detail::philox_at(key, stream, i);
      const double u = std::is_same_v<T, double> ? detail::unit_53(b.w[0], b.w[1]) : detail::unit_24(b.w[0]);
      const T v = detail::narrow<T>(detail::add_rn(lo, detail::mul_rn(span, u)));
      return static_cast<double>(detail::widen(v)) < hi ? v : below_hi;
    }
  };
};

/// Normal random values (mean, stddev) by Box-Muller; element i depends only on the seed and i, as for uniform.
struct normal {
  static constexpr std::string_view name = "normal";  ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;    ///< Computed from the index.
  static constexpr auto dtypes = floating;             ///< Defined on.
  static constexpr std::uint32_t stream = 1;           ///< Counter word 2 of its Philox calls.
  /// Element i: mean + stddev sqrt(-2 log u1) cos(2 pi u2), u1 in (0, 1] and u2 in [0, 1) of 53 bits each from one
  /// Philox call, computed in double (libm on the host, CUDA's log and cos on the device) and rounded to T. So host
  /// and cuda agree for float, half and bfloat16 except where the double lies within a few double ulp of a rounding
  /// boundary of T (then one ulp of T apart), and within a few ulp of stddev |z| for double.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    detail::philox_key key;
    double mean, stddev;
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      const detail::philox_block b = detail::philox_at(key, stream, i);
      const double u1 = detail::unit_53(b.w[0], b.w[1], true), u2 = detail::unit_53(b.w[2], b.w[3]);
      const double z = detail::sqrt_(-2.0 * detail::log_(u1)) * detail::cos_(6.283185307179586477 * u2);
      return detail::narrow<T>(detail::add_rn(mean, detail::mul_rn(stddev, z)));
    }
  };
};

/// Dropout's mask (tx::dropout): element i is `kept` (1 / (1 - p), rounded to T) where element i of
/// tx::random::uniform<double>(shape, seed) is >= p, else 0; for p = 0, `kept` (1) everywhere without a Philox
/// call. A function of (seed, i) only, like uniform, so the backward pass regenerates it instead of storing it.
struct dropout_mask {
  static constexpr std::string_view name = "dropout_mask";  ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;          ///< Computed from the index.
  static constexpr auto dtypes = floating;                   ///< Defined on.
  static constexpr std::uint32_t stream = uniform::stream;   ///< uniform's: the mask is uniform<double> >= p.
  /// Element i: u >= p ? kept : dropped, u the 53-bit fraction uniform<double> gives element i.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    detail::philox_key key;
    double p;
    T kept, dropped;  // 1 / (1 - p) and 0 in T, rounded on the host
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      if (p == 0) return kept;
      const detail::philox_block b = detail::philox_at(key, stream, i);
      return detail::unit_53(b.w[0], b.w[1]) >= p ? kept : dropped;
    }
  };
};

} // namespace texpr::op
