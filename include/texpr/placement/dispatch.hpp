// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How a node is evaluated into a destination: the one decision evaluation (eval/evaluate.hpp) follows and
// tx::placement reports, so the report cannot name a kernel that does not run.
#pragma once

#include <type_traits>

#include "texpr/expr/epilogue.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/op/kind.hpp"
#include "texpr/registry/epilogue.hpp"
#include "texpr/registry/kernel.hpp"

namespace texpr::detail {

/// How evaluate_into runs a node into a destination.
enum class dispatch {
  pass_through,  ///< a reduction of nothing: its operand is evaluated into the destination, no kernel of its own
  buffered,      ///< evaluated into a temporary, then copied (a computed node into a strided destination, or an unsafe
                 ///< overlap)
  epilogue,      ///< an elementwise tree over one matmul, run as that GEMM's fused epilogue
  fused,         ///< one pass of the node's kernel, its operands read inside it (elementwise, generator)
  computed,      ///< the node's kernel, which obtains its operands as it needs (reductions, matmul, concat, composites)
  copy,          ///< memory, constants and layouts: read, then written by the copy kernel
};

/// What the decision needs to know about a destination that placement, which has none, assumes to be fresh
/// (allocated for the result: it overlaps nothing). Evaluation passes its own type with the same members,
/// computed from the real destination (and only when asked: the overlap walks cost a pass over the graph).
struct fresh_destination {
  bool contiguous = true;                            ///< row-major contiguous
  bool is_contiguous() const { return contiguous; }  ///< row-major contiguous
  bool unsafe_overlap() const { return false; }      ///< an operand overlaps it unless read in place
  bool any_overlap() const { return false; }         ///< any operand's memory overlaps it
};

/// True when a pass-through node n (passes_through) can be evaluated as its operand into a destination of N.
template <class N>
constexpr bool can_pass_through() {
  if constexpr (requires(const N& n) {
                  n.passes_through();
                  n.child();
                }) {
    using C = std::remove_cvref_t<decltype(std::declval<const N&>().child())>;
    return std::is_same_v<typename C::value_type, typename N::value_type> && C::rank == N::rank;
  } else {
    return false;
  }
}

/// How node n is evaluated on Backend into destination d (fresh_destination or evaluation's equivalent).
template <class Backend, class N, class Dest>
dispatch dispatch_of(const N& n, const Dest& d) {
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (can_pass_through<N>())
    if (passes_through(n)) return dispatch::pass_through;
  if (k == op::kind::computed && !d.is_contiguous()) return dispatch::buffered;  // computed kernels write rows
  if (d.unsafe_overlap()) return dispatch::buffered;
  if constexpr (k == op::kind::elementwise && has_gemm_epilogue_v<N, Backend> &&
                has_kernel<typename N::op_type, typename N::kernel_dtype, Backend>) {
    // The GEMM writes partial products into the destination before the epilogue reads the other operands, so
    // unlike a fused pass it cannot read an operand where it writes.
    if (epilogue_fits(n) && d.is_contiguous() && !d.any_overlap()) return dispatch::epilogue;
  }
  if constexpr (k == op::kind::elementwise || k == op::kind::generator)
    return dispatch::fused;
  else if constexpr (k == op::kind::computed)
    return dispatch::computed;
  else
    return dispatch::copy;
}

/// The largest row of column sums a kernel writes beside its values (its blocks' partial rows must stay small).
inline constexpr index_t max_fused_columns = 16384;

/// Whether evaluating n on Backend into a fresh contiguous destination can also write the sums of the result, viewed
/// as [rows, cols], over its rows in the same launch: the node's implementation offers it (column_sums_name) for
/// the dispatch it gets, and there are rows to sum. A saved gradient and the bias gradient that sums it use this
/// (autograd/grad.hpp); tx::placement reports the same decision.
template <class Backend, class N>
bool fuses_column_sums(const N& n, index_t cols);

template <class Backend, class N> constexpr bool offers_column_sums() {
  if constexpr (has_kernel<typename N::op_type, typename N::kernel_dtype, Backend>) {
    using K = kernel<typename N::op_type, typename N::kernel_dtype, Backend>;
    constexpr op::kind k = kind_of_v<N>;
    return requires { K::column_sums_name; } && (k == op::kind::elementwise || k == op::kind::computed);
  } else {
    return false;
  }
}
/// True when node N's implementation on Backend can write column sums beside its values (fuses_column_sums).
template <class Backend, class N> inline constexpr bool offers_column_sums_v = offers_column_sums<Backend, N>();

template <class Backend, class N>
bool fuses_column_sums(const N& n, index_t cols) {
  if constexpr (offers_column_sums_v<Backend, N>) {
    constexpr op::kind k = kind_of_v<N>;
    {
      const index_t size = shape_size(n.shape());
      if (cols < 1 || cols > max_fused_columns || size == 0 || size % cols != 0 || size / cols < 2) return false;
      const dispatch how = dispatch_of<Backend>(n, fresh_destination{true});
      return how == (k == op::kind::elementwise ? dispatch::fused : dispatch::computed);
    }
  }
  (void)n;
  (void)cols;
  return false;
}

}  // namespace texpr::detail
