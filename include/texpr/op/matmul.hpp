// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The matmul op tags: matmul and the widening scaled_matmul of 8-bit operands.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "texpr/core/dtype_set.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Matrix product with NumPy's rules: (..., m, k) x (..., k, n) with broadcast batch dimensions; a rank-1 side is
/// a vector (matrix-vector, vector-matrix, dot).
struct matmul {
  static constexpr std::string_view name = "matmul";  ///< Shown by tx::placement.
  static constexpr kind category = kind::computed;    ///< Evaluated by a GEMM.
  static constexpr auto dtypes = numeric + complex_dtypes;  ///< Defined on (integers exactly, wrapping).
};

/// Matrix product of 8-bit operands into a wider result, with matmul's shape rules: int8 x int8 accumulates exactly
/// in int32 (wrapping past 2^31, as texpr's integers) and gives int32; an 8-bit float product accumulates in float
/// and gives float, times the per-tensor scales: scale_a * scale_b * (A B).
struct scaled_matmul {
  static constexpr std::string_view name = "scaled_matmul";  ///< Shown by tx::placement.
  static constexpr kind category = kind::computed;           ///< Evaluated by a GEMM.
  static constexpr auto dtypes = eight_bit;                  ///< The operands' dtype.
  /// The result dtype of a product of T operands.
  template <class T> using result_t = std::conditional_t<std::is_same_v<T, std::int8_t>, std::int32_t, float>;
};

} // namespace texpr::op
