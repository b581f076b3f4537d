// Composite op tags: ops defined by an expansion into registered primitives (in expr/softmax.hpp), evaluated as a
// computed node so that each operand is evaluated once into memory and then read by every pass of the expansion
// (softmax reads its input twice: a subexpression such as a matmul must not run twice).
#pragma once

#include <string_view>

#include "texpr/core/dtype_set.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of composite op tags.
struct composite_op {
  static constexpr kind category = kind::computed;  ///< Operands materialised once, then the expansion's passes.
  static constexpr auto dtypes = floating;          ///< The dtype of the (first) floating operand.
};

/// exp(x - logsumexp(x, axis)): a max pass, a fused sum of exp(x - max), one fused elementwise pass.
struct softmax : composite_op {
  static constexpr std::string_view name = "softmax";  ///< Shown by tx::placement.
};
/// x - logsumexp(x, axis): a max pass, a fused sum of exp(x - max), one fused elementwise pass.
struct log_softmax : composite_op {
  static constexpr std::string_view name = "log_softmax";  ///< Shown by tx::placement.
};
/// mean(logsumexp(z, 1) - z[i, label i]) over the batch: three row reductions and a mean.
struct cross_entropy : composite_op {
  static constexpr std::string_view name = "cross_entropy";  ///< Shown by tx::placement.
};

} // namespace texpr::op
