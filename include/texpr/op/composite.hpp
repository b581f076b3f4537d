// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Composite op tags: ops defined by an expansion into registered primitives (in expr/softmax.hpp), evaluated as a
// computed node so that each operand is evaluated once into memory and then read by every pass of the expansion
// (softmax reads its input twice: a subexpression such as a matmul must not run twice). Also `pick`, the
// generator cross_entropy's expansion reads each row's label logit through.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of composite op tags.
struct composite_op {
  static constexpr kind category = kind::computed;  ///< Operands materialised once, then the expansion's passes.
  static constexpr auto dtypes = floating;          ///< The dtype of the (first) floating operand.
};

/// exp(x - max) / sum(exp(x - max)) along an axis: a max pass, exp(x - max) into the result, its sum, and one
/// pass dividing the result by the sum in place (one exp per element).
struct softmax : composite_op {
  static constexpr std::string_view name = "softmax";  ///< Shown by tx::placement.
};
/// x - logsumexp(x, axis): a max pass, a fused sum of exp(x - max), one fused elementwise pass.
struct log_softmax : composite_op {
  static constexpr std::string_view name = "log_softmax";  ///< Shown by tx::placement.
};
/// mean(logsumexp(z, 1) - z[i, label i]) over the batch: a max pass, a fused sum of exp(z - max), and a mean
/// that reads each row's label logit through `pick` (one element per row).
struct cross_entropy : composite_op {
  static constexpr std::string_view name = "cross_entropy";  ///< Shown by tx::placement.
};

/// cross_entropy's gradient with respect to its logits: scale * g * (softmax(z, 1) - one_hot(labels)) / batch,
/// over logits z (batch, classes), labels (batch) and, unless g is a constant folded into `scale`, the incoming
/// gradient g (rank 0). A label outside [0, classes) gives its row softmax(z) * scale * g / batch (no one_hot
/// entry). One node, so that a backend may compute it in one pass per row (cuda: row_cross_entropy_grad).
struct cross_entropy_grad : composite_op {
  static constexpr std::string_view name = "cross_entropy_grad";  ///< Shown by tx::placement.
  static constexpr std::string_view parameter_name = "scale";     ///< composite_expr::parameter(): g's constant factor.
};

/// (x - mean) / sqrt(var + eps) * weight + bias over the last axis (torch.nn.functional.layer_norm over one
/// axis; var biased, dividing by n): a mean pass and a variance pass into small kept tensors, rsqrt(var + eps)
/// of those, and one fused elementwise pass.
struct layer_norm : composite_op {
  static constexpr std::string_view name = "layer_norm";          ///< Shown by tx::placement.
  static constexpr std::string_view parameter_name = "eps";      ///< composite_expr::parameter() holds eps.
};

/// x[i, index i] for each row i of a matrix x: a generator of shape (rows) whose source reads memory, namely the
/// operands a composite's expansion has materialised (cross_entropy's logits and labels), one element per row
/// instead of a masked pass over every column. It is built only inside expansions (detail::pick in
/// expr/softmax.hpp), whose operands' memory the evaluation has already checked against the destination. An
/// index outside [0, columns) gives NaN and reads nothing.
struct pick {
  static constexpr std::string_view name = "pick";     ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;    ///< Computed from the row index.
  static constexpr auto dtypes = floating;             ///< Defined on.
  /// Row i: x[i * row_stride + index_i * column_stride], the index read as int64 or int32.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    const T* x;                  // element (0, 0)
    index_t row_stride, column_stride, columns;
    const void* index;           // one int32 or int64 index per row
    index_t index_stride;
    bool wide_index;             // int64 indices (else int32)
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      const index_t k = wide_index ? static_cast<index_t>(static_cast<const std::int64_t*>(index)[i * index_stride])
                                   : static_cast<index_t>(static_cast<const std::int32_t*>(index)[i * index_stride]);
      if (k < 0 || k >= columns) return detail::narrow<T>(std::numeric_limits<float>::quiet_NaN());
      return x[i * row_stride + k * column_stride];
    }
  };
};

} // namespace texpr::op
