// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What every backend's reduction needs from a reduction node: its operand's shape cut into the path that runs
// (everything, the last axis, another axis, several axes one at a time), the extents of that path, how an axis is
// split into chunks, and the one driver that validates the node, reads its operand and calls the backend's two
// kernels. A backend keeps only those kernels (host/reduce.hpp, cuda/reduce.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "texpr/core/context.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

/// The operand of an axis reduction viewed as [outer][len][mid][inner]: `len` the reduced axis, `inner` the last
/// axis (1 when the reduced axis is the last), `mid` the axes between them; for a reduction over everything only
/// `shape`, `size` and `row` are meaningful.
template <std::size_t R> struct reduction_plan {
  shape_t<R> shape{};     ///< The operand's shape.
  std::size_t axis = 0;   ///< The reduced axis (axis paths).
  index_t size = 0;       ///< Elements of the operand.
  index_t row = 1;        ///< Extent of the last axis (a row: what a strided operand is read along).
  index_t len = 1;        ///< Extent of the reduced axis.
  index_t outer = 1;      ///< Product of the extents before the reduced axis.
  index_t mid = 1;        ///< Product of the extents strictly between the reduced axis and the last one.
  index_t inner = 1;      ///< Extent of the last axis when it is not the reduced one, else 1.
  index_t n_out = 1;      ///< Result elements (size / len on the axis paths).
  /// True when the reduced axis is the last one: each result element reduces one row.
  bool along_rows() const { return axis + 1 == R; }
  /// Elements after the reduced axis in row-major order (mid * inner): the stride of the reduced axis.
  index_t after() const { return mid * inner; }
  /// Row-major offset of element (o, l, m, j) of [outer][len][mid][inner].
  index_t offset(index_t o, index_t l, index_t m, index_t j) const { return ((o * len + l) * mid + m) * inner + j; }
};

/// The plan of a reduction over everything of an operand of shape s.
template <std::size_t R> reduction_plan<R> plan_reduce_all(const shape_t<R>& s) {
  reduction_plan<R> p;
  p.shape = s;
  p.size = shape_size(s);
  if constexpr (R > 0) p.row = s[R - 1];
  return p;
}

/// The plan of a reduction of an operand of shape s along `axis`.
template <std::size_t R> reduction_plan<R> plan_reduce_axis(const shape_t<R>& s, std::size_t axis) {
  reduction_plan<R> p = plan_reduce_all(s);
  p.axis = axis;
  p.len = s[axis];
  for (std::size_t d = 0; d < axis; ++d) p.outer *= s[d];
  if (axis + 1 < R) {
    for (std::size_t d = axis + 1; d + 1 < R; ++d) p.mid *= s[d];
    p.inner = s[R - 1];
  }
  p.n_out = p.outer * p.mid * p.inner;
  return p;
}

/// An axis of length len cut into chunks of chunk_len (the last one shorter), so that `units` independent work
/// items become about `target`; chunks are at least min_chunk long, and an axis of up to 2 * min_chunk is not cut.
struct axis_split {
  index_t chunks = 1;     ///< Pieces of the axis (1: not split).
  index_t chunk_len = 0;  ///< Elements per piece.
};
/// See axis_split.
inline axis_split split_axis(index_t units, index_t len, index_t min_chunk, index_t target) {
  const auto up = [](index_t a, index_t b) { return (a + b - 1) / b; };
  axis_split s{1, len};
  if (units >= target || len <= 2 * min_chunk) return s;
  const index_t want = up(target, units < 1 ? 1 : units);
  const index_t most = up(len, min_chunk);
  const index_t k = want < most ? want : most;
  s.chunk_len = up(len, k);
  s.chunks = up(len, s.chunk_len);
  return s;
}

/// Throws shape_error when reduction node n reduces an axis of length 0 and its op has no identity (max, min).
template <class N> void check_reduction_nonempty(const N& n, index_t dest_size) {
  using Op = typename N::op_type;
  if constexpr (Op::needs_nonempty) {
    const auto s = n.child().shape();
    bool empty_line = false;
    for (std::size_t d = 0; d != s.size(); ++d)
      if (n.reduces(d) && s[d] == 0) empty_line = true;
    if (empty_line && dest_size != 0)
      throw shape_error("texpr: " + std::string(Op::name) + " over an axis of length 0 (input shape " + to_string(s) +
                        ") has no identity");
  }
}

/// dest = reduction node n on backend B, through the backend's two kernels:
///   kernels.template all<A>(op, acc, plan, out)   writes op over every element acc reads into out[0];
///   kernels.template axis<A>(op, acc, plan, out)  writes op along plan.axis into out (contiguous, axis removed).
/// The operand is read fused (its accessor), except where the node reads it from memory (sum_to); several axes
/// (sum_to) reduce one axis at a time, each kept with extent 1, the last into dest. A reduction that reduces
/// nothing never gets here: evaluation takes its operand as the result.
template <class N, class T, std::size_t R, class B, class Kernels>
void run_reduction(const N& n, const view<T, R, B>& dest, context<B>& ctx, const Kernels& kernels) {
  using C = std::remove_cvref_t<decltype(n.child())>;
  using KT = typename N::kernel_dtype;
  using Op = typename N::op_type;
  using A = typename Op::template accumulator<KT>;
  constexpr std::size_t RC = C::rank;
  check_reduction_nonempty(n, dest.size());
  const Op& op = n.op();
  const auto in_shape = n.child().shape();
  const auto operand = [&] {
    if constexpr (N::operand_in_memory) return materialize(n.child(), ctx);
    else return n.child();
  };
  if (R == 0 || n.reduces_all()) {
    kernels.template all<A>(op, read(operand(), in_shape, ctx), plan_reduce_all(in_shape), dest.data());
    return;
  }
  // A rank-0 result reduces everything: the axis paths are not instantiated for it (a loss's mean).
  if constexpr (RC >= 1 && R > 0) {
    if (n.reduced_count() == 1) {
      std::size_t axis = 0;
      while (!n.reduces(axis)) ++axis;
      kernels.template axis<A>(op, read(operand(), in_shape, ctx), plan_reduce_axis(in_shape, axis), dest.data());
      return;
    }
    // (argmax and argmin are not decomposable; their API reduces one axis or all, never this path)
    if constexpr (Op::decomposable && std::is_same_v<T, KT>) {
      const auto first = materialize(n.child(), ctx);
      const T* data = first.data();  // (views assign elements, so the current input is kept as pointer + layout)
      shape_t<RC> shape = in_shape, strides = first.strides();
      int left = n.reduced_count();
      for (std::size_t axis = 0; axis < RC; ++axis) {
        if (!n.reduces(axis)) continue;
        const auto acc = make_strided_accessor(memory_source<T>{data}, shape, strides, shape);
        shape_t<RC> next = shape;
        next[axis] = 1;
        T* target = --left == 0 ? dest.data() : temporary<T, RC, B>(next, ctx).data();
        kernels.template axis<A>(op, acc, plan_reduce_axis(shape, axis), target);
        if (left == 0) return;
        data = target;
        shape = next;
        strides = contiguous_strides(next);
      }
    }
  }
}

} // namespace texpr::detail
