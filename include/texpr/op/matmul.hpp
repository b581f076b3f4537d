// The matmul op tag.
#pragma once

#include <string_view>

#include "texpr/core/dtype_set.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Matrix product with NumPy's rules: (..., m, k) x (..., k, n) with broadcast batch dimensions; a rank-1 side is
/// a vector (matrix-vector, vector-matrix, dot).
struct matmul {
  static constexpr std::string_view name = "matmul";  ///< Shown by tx::placement.
  static constexpr kind category = kind::computed;    ///< Evaluated by a GEMM.
  static constexpr auto dtypes = numeric;             ///< Defined on (integers exactly, wrapping).
};

} // namespace texpr::op
