// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ordering op tags (the family texpr/sort.hpp adds): stable sorts of each line along an axis, the positions that
// sort it, the positions of its k first elements in such an order (top-k), the values at those positions, and the
// write of a gradient back through positions that are distinct. Every backend orders the same keys
// (detail::order_key): NaN after every number (before, when descending), -0 equal to +0, ties in their order.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/op/composite.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of the ops that order each line along an axis: computed by a sort kernel, which reads the operand fused.
struct ordering_op {
  static constexpr kind category = kind::computed;  ///< Evaluated by a sort kernel.
  static constexpr auto dtypes = numeric;           ///< The dtype of the operand ordered.
  static constexpr std::string_view header = "texpr/sort.hpp";  ///< The opt-in header that brings the op.
};

/// The elements of each line in ascending (descending) order, stable (numpy.sort(kind="stable"), torch.sort).
struct sort : ordering_op {
  static constexpr std::string_view name = "sort";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "each line along an axis in ascending (or descending) order, stable; NaN last (first when descending)";
  /// The result dtype for operand dtype T: T.
  template <class T> using result = T;
  static constexpr bool positions = false;  ///< Writes the ordered values.
};
/// The positions that sort each line (numpy.argsort(kind="stable"), torch.argsort(stable=True)); int64.
struct argsort : ordering_op {
  static constexpr std::string_view name = "argsort";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "positions (int64) that sort each line along an axis, stable: ties keep their order; NaN last (first when "
      "descending)";
  /// The result dtype: int64 positions along the axis.
  template <class T> using result = std::int64_t;
  static constexpr bool positions = true;  ///< Writes positions along the axis.
};
/// The positions of the k largest (smallest) elements of each line, largest (smallest) first, ties to the lower
/// position, NaN the largest: the first k of argsort(descending) (torch.topk's indices).
struct topk : ordering_op {
  static constexpr std::string_view name = "topk";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "positions (int64) of the k largest (or smallest) elements of each line along an axis, in that order; ties: "
      "the lower position first; NaN counts as the largest";
  /// The result dtype: int64 positions along the axis.
  template <class T> using result = std::int64_t;
  static constexpr bool positions = true;  ///< Writes positions along the axis.
};

/// The values at topk's positions: x read at each line's k positions. A composite (x and the positions in memory,
/// then one indexed_read pass); the positions are topk's own, in range by construction, so they are not checked.
struct topk_values : composite_op {
  static constexpr std::string_view name = "topk_values";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "the values at topk's positions (tx::topk's values)";
  static constexpr auto dtypes = numeric;  ///< The dtype of the values read.
  static constexpr std::string_view header = "texpr/sort.hpp";  ///< The opt-in header that brings the op.
};

/// Zeros of a shape with each element of g written at the position an index of g's shape gives along an axis
/// (torch.Tensor.scatter on zeros), where a line's positions are distinct (a sort's permutation, topk's
/// positions): each element is written once, no sum. The gradient of sort and of tx::topk's values.
struct scatter {
  static constexpr std::string_view name = "scatter";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "zeros with g written at distinct positions along an axis (the gradient of sort and topk)";
  static constexpr kind category = kind::computed;  ///< Evaluated by its own kernel.
  static constexpr auto dtypes = numeric;           ///< The dtype of g.
  static constexpr std::string_view parameter_name = "extent";  ///< The result's extent along the axis.
  static constexpr std::string_view header = "texpr/sort.hpp";  ///< The opt-in header that brings the op.
};

} // namespace texpr::op

namespace texpr::detail {

/// The unsigned integer a dtype's order keys have (its width).
template <class T> using order_key_t =
    std::conditional_t<sizeof(T) == 8, std::uint64_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>>;

/// The key that orders x as every ordering op does, as an unsigned integer: ascending keys order numbers
/// ascending, every NaN after +inf (all NaNs equal), -0 equal to +0; descending flips every bit, so NaN comes
/// first. Integers order as numbers. Equal keys are ties (a stable sort keeps their order).
template <class T> TEXPR_HOST_DEVICE inline order_key_t<T> order_key(T x, bool descending) {
  using K = order_key_t<T>;
  constexpr K top = K(K(1) << (sizeof(K) * 8 - 1));
  K k;
  if constexpr (std::is_integral_v<T>) {
    k = static_cast<K>(static_cast<K>(x) ^ top);
  } else {
    K b;
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      b = x.bits;
      constexpr K inf = std::is_same_v<T, half> ? K(0x7c00) : K(0x7f80);
      const K mag = static_cast<K>(b & K(top - 1));
      if (mag > inf) b = static_cast<K>(inf + 1);  // every NaN one key, above +inf
      else if (mag == 0) b = 0;                    // -0 == +0
    } else {
      if (x != x) b = static_cast<K>(~K(0) >> 1);  // every NaN: the largest positive pattern, above +inf's
      else if (x == T(0)) b = 0;
      else b = std::bit_cast<K>(x);
    }
    k = (b & top) ? static_cast<K>(~b) : static_cast<K>(b | top);
  }
  return descending ? static_cast<K>(~k) : k;
}

} // namespace texpr::detail
