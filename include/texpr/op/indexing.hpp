// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Indexing op tags: index_select, gather and embedding read an operand at int32/int64 indices; index_add and
// scatter_add are their gradients (sums of the incoming gradient's elements at the positions each index names).
// All five are composites (operands evaluated once into memory, then one pass of a generator that reads them):
// indexed_read for the reads, indexed_sum for the sums.
#pragma once

#include <cstdint>
#include <string_view>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/composite.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of the indexing composites: they move elements of any numeric dtype.
struct indexing_op : composite_op {
  static constexpr auto dtypes = numeric;  ///< The dtype of the operand read.
  /// The expansion reads the indices on the host to check them (on cuda: a copy and a wait), so a graph holding
  /// one cannot be captured into a CUDA graph (tx::capturable).
  static constexpr bool reads_indices_on_host = true;
};

/// x's slices along an axis at the positions a rank-1 index lists (torch.index_select).
struct index_select : indexing_op {
  static constexpr std::string_view name = "index_select";  ///< Shown by tx::placement.
};
/// x at an index of x's rank along an axis, element by element (torch.gather, numpy.take_along_axis).
struct gather : indexing_op {
  static constexpr std::string_view name = "gather";  ///< Shown by tx::placement.
};
/// Rows of a (V, D) table at indices of any rank (torch.nn.functional.embedding).
struct embedding : indexing_op {
  static constexpr std::string_view name = "embedding";  ///< Shown by tx::placement.
};

/// Base of the scatter-add composites, the indexing ops' gradients: floating, like every gradient.
struct scatter_op : composite_op {};

/// Zeros of a shape plus, along an axis, each slice of a source added at the position a rank-1 index gives
/// (torch.Tensor.index_add on zeros): index_select's and embedding's gradient.
struct index_add : scatter_op {
  static constexpr std::string_view name = "index_add";  ///< Shown by tx::placement.
  static constexpr std::string_view parameter_name = "extent";  ///< composite_expr::parameter(): the result's extent along the axis.
};
/// Zeros of a shape plus each element of a source added at the position an index of the same shape gives along
/// an axis (torch.Tensor.scatter_add on zeros): gather's gradient.
struct scatter_add : scatter_op {
  static constexpr std::string_view name = "scatter_add";  ///< Shown by tx::placement.
  static constexpr std::string_view parameter_name = "extent";  ///< composite_expr::parameter(): the result's extent along the axis.
};

} // namespace texpr::op

namespace texpr::detail {
/// Index k of an int32 or int64 index array.
TEXPR_HOST_DEVICE inline index_t index_at(const void* index, bool wide, index_t k) {
  return wide ? static_cast<index_t>(static_cast<const std::int64_t*>(index)[k])
              : static_cast<index_t>(static_cast<const std::int32_t*>(index)[k]);
}
} // namespace texpr::detail

namespace texpr::op {

/// The read of index_select, gather and embedding: element i of the result, split row-major into (outer o,
/// position p, inner k) of extents (outer, positions, inner), is x[o, j, k] of contiguous x (outer, extent,
/// inner), where j is the index at p (one index per position) or at i (per_element: an index of the result's
/// shape). An index outside [0, extent) reads nothing and gives 0; the ops check their indices before this runs.
struct indexed_read {
  static constexpr std::string_view name = "indexed_read";  ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;         ///< Computed from the element index.
  static constexpr auto dtypes = numeric;                   ///< Defined on.
  /// Element i of the result.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    const T* x;              // contiguous (outer, extent, inner)
    const void* index;       // contiguous int32 or int64
    bool wide_index;         // int64 indices (else int32)
    bool per_element;        // one index per result element (gather), else one per position
    index_t positions, extent, inner;
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      const index_t k = i % inner, t = i / inner;
      const index_t p = t % positions, o = t / positions;
      const index_t j = detail::index_at(index, wide_index, per_element ? i : p);
      if (j < 0 || j >= extent) return detail::narrow<T>(0);
      return x[(o * extent + j) * inner + k];
    }
  };
};

/// The sum of index_add and scatter_add: element i of the result, split into (outer o, position j, inner k) of
/// extents (outer, extent, inner), is the sum over p in [0, positions), in order, of g[o, p, k] (g contiguous
/// (outer, positions, inner)) where the index at p (or at (o, p, k), per_element) is j. Each element is one
/// deterministic sum; it scans every position, so a pass costs (elements of the result) x positions reads of the
/// index: meant for the index counts of embeddings and attention, not for scatters of millions of positions.
/// 16-bit floats are summed in float.
struct indexed_sum {
  static constexpr std::string_view name = "indexed_sum";  ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;        ///< Computed from the element index.
  static constexpr auto dtypes = floating;                 ///< Defined on.
  /// Element i of the result.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    const T* g;              // contiguous (outer, positions, inner)
    const void* index;       // contiguous int32 or int64
    bool wide_index;         // int64 indices (else int32)
    bool per_element;        // one index per element of g (scatter_add), else one per position
    index_t positions, extent, inner;
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      const index_t k = i % inner, t = i / inner;
      const index_t j = t % extent, o = t / extent;
      compute_t<T> acc = 0;
      for (index_t p = 0; p != positions; ++p) {
        const index_t at = (o * positions + p) * inner + k;
        if (detail::index_at(index, wide_index, per_element ? at : p) == j) acc += detail::widen(g[at]);
      }
      return detail::narrow<T>(acc);
    }
  };
};

} // namespace texpr::op
