// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::random::uniform and tx::random::normal: lazy counter-based random tensors (Philox4x32-10), fused into whatever
// reads them; element i depends only on the seed and i, so host and cuda give the same numbers (docs/semantics.md).
// tx::dropout multiplies by such a mask.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/detail/philox.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/generator.hpp"
#include "texpr/op/generator.hpp"

namespace texpr {

namespace detail {
/// The dtypes a random generator can produce.
template <class T>
inline constexpr bool random_dtype_v = std::is_same_v<T, float> || std::is_same_v<T, double> || is_float16_v<T>;

/// The largest T below x (x finite): the next bit pattern towards -infinity (IEEE formats, sign and magnitude).
template <class T> T next_below(T x) {
  if constexpr (is_float16_v<T>) {
    T r = x;
    if ((x.bits & 0x7fffu) == 0) r.bits = 0x8001u;  // +-0: the negative subnormal of least magnitude
    else if (x.bits & 0x8000u) ++r.bits;             // negative: larger magnitude
    else --r.bits;
    return r;
  } else {
    return std::nextafter(x, -std::numeric_limits<T>::infinity());
  }
}
} // namespace detail

/// Random tensors: tx::random::uniform and tx::random::normal.
namespace random {

/// Uniform random values in [lo, hi) of dtype T and `shape` on Backend, from `seed`; lazy (computed where read).
/// Element i is a function of (seed, i) only. Needs lo < hi with hi - lo finite (else std::invalid_argument).
template <class T, class Backend = host, std::size_t R>
auto uniform(const shape_t<R>& shape, std::uint64_t seed, T lo = T(0), T hi = T(1),
             source_location loc = source_location::current()) {
  static_assert(backend_tag<Backend>, "texpr: random::uniform<T, Backend> needs tx::host or tx::cuda");
  static_assert(detail::random_dtype_v<T>,
                "texpr: random::uniform<T> needs a floating dtype (float, double, half, bfloat16)");
  detail::check_extents<T>(shape, "uniform", loc);
  const double l = static_cast<double>(detail::widen(lo)), h = static_cast<double>(detail::widen(hi));
  if (!(l < h) || !std::isfinite(h - l))
    throw std::invalid_argument(
        detail::at(loc) + "texpr: random::uniform needs lo < hi with a finite hi - lo, got lo = " +
        std::to_string(l) + ", hi = " + std::to_string(h));
  using S = typename op::uniform::source<T>;
  const S source{detail::philox_seed(seed), l, h - l, h, detail::next_below(hi)};
  return generator_expr<op::uniform, T, R, Backend>(source, shape);
}
/// uniform with the shape written as a braced list: tx::random::uniform<float>({2, 3}, seed).
template <class T, class Backend = host, std::size_t R>
auto uniform(const index_t (&shape)[R], std::uint64_t seed, T lo = T(0), T hi = T(1),
             source_location loc = source_location::current()) {
  return uniform<T, Backend>(detail::to_shape(shape), seed, lo, hi, loc);
}

/// Normal random values with `mean` and `stddev` of dtype T and `shape` on Backend, from `seed` (Box-Muller); lazy.
/// Element i is a function of (seed, i) only. Needs a finite mean and stddev >= 0 (else std::invalid_argument).
template <class T, class Backend = host, std::size_t R>
auto normal(const shape_t<R>& shape, std::uint64_t seed, T mean = T(0), T stddev = T(1),
            source_location loc = source_location::current()) {
  static_assert(backend_tag<Backend>, "texpr: random::normal<T, Backend> needs tx::host or tx::cuda");
  static_assert(detail::random_dtype_v<T>,
                "texpr: random::normal<T> needs a floating dtype (float, double, half, bfloat16)");
  detail::check_extents<T>(shape, "normal", loc);
  const double m = static_cast<double>(detail::widen(mean)), s = static_cast<double>(detail::widen(stddev));
  if (!std::isfinite(m) || !(s >= 0) || !std::isfinite(s))
    throw std::invalid_argument(detail::at(loc) +
                                "texpr: random::normal needs a finite mean and a finite stddev >= 0, got mean = " +
                                std::to_string(m) + ", stddev = " + std::to_string(s));
  using S = typename op::normal::source<T>;
  return generator_expr<op::normal, T, R, Backend>(S{detail::philox_seed(seed), m, s}, shape);
}
/// normal with the shape written as a braced list: tx::random::normal<float>({2, 3}, seed).
template <class T, class Backend = host, std::size_t R>
auto normal(const index_t (&shape)[R], std::uint64_t seed, T mean = T(0), T stddev = T(1),
            source_location loc = source_location::current()) {
  return normal<T, Backend>(detail::to_shape(shape), seed, mean, stddev, loc);
}

} // namespace random

/// Inverted dropout, as torch.nn.functional.dropout in training: each element of x kept with probability 1 - p and
/// scaled by 1 / (1 - p), else 0. Element i is kept where element i of random::uniform<double>(x's shape, seed) is
/// >= p. The mask is a generator (op::dropout_mask), a function of (seed, i): fused into the product, and
/// regenerated, not stored, where the gradient g * mask reads it. p = 0 gives x's values unchanged (the mask is 1
/// and draws no random number). Needs 0 <= p < 1 (else std::invalid_argument).
template <operand E>
auto dropout(E&& x, double p, std::uint64_t seed, source_location loc = source_location::current()) {
  using C = detail::captured_t<E>;
  using T = typename C::value_type;
  using B = typename C::backend;
  static_assert(detail::random_dtype_v<T>, "texpr: dropout takes a floating operand (float, double, half, bfloat16)");
  static_assert(backend_tag<B>, "texpr: dropout takes an operand on tx::host or tx::cuda (a tensor expression)");
  if (!(p >= 0 && p < 1))
    throw std::invalid_argument(detail::at(loc) + "texpr: dropout needs 0 <= p < 1, got p = " + std::to_string(p));
  auto c = detail::capture(std::forward<E>(x));
  using S = typename op::dropout_mask::source<T>;
  const S source{detail::philox_seed(seed), p, detail::narrow<T>(1.0 / (1.0 - p)), detail::narrow<T>(0.0)};
  auto mask = generator_expr<op::dropout_mask, T, C::rank, B>(source, c.shape());
  return std::move(c) * std::move(mask);
}

} // namespace texpr
