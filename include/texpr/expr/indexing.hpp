// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Indexing: tx::index_select, tx::gather and tx::embedding read an operand at int32/int64 indices, and their
// gradients index_add and scatter_add sum into zeros (op/indexing.hpp). Each is a composite node: its operands are
// evaluated once into (contiguous) memory, the indices are checked, then one generator pass computes the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/detail/memory.hpp"
#include "texpr/expr/generator.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/softmax.hpp"
#include "texpr/op/indexing.hpp"

namespace texpr {

namespace detail {

/// v as contiguous memory: v itself, or (strided) a copy kept by the expansion's hook.
template <class K, class V> V contiguous_operand(K& keep, const V& v) {
  if (v.is_contiguous()) return v;
  return keep(v * 1);
}

/// Product of s[first, last).
template <std::size_t R> index_t extent_product(const shape_t<R>& s, std::size_t first, std::size_t last) {
  index_t n = 1;
  for (std::size_t d = first; d < last; ++d) n *= s[d];
  return n;
}

/// Throws shape_error naming the first index of idx (contiguous int32/int64 memory on any backend) outside
/// [0, extent): its value, its position and the extent. Device indices are copied to the host first (a
/// synchronising copy of the index array). A planned view (no memory: tx::placement) is not read.
template <class I, std::size_t R, class B>
void check_indices(const view<const I, R, B>& idx, index_t extent, const char* op, std::size_t axis, const std::string& operand_shape) {
  const index_t n = idx.size();
  if (n == 0 || idx.data() == nullptr) return;
  const I* p = idx.data();
  std::vector<I> copy;
  if constexpr (!std::is_same_v<B, host>) {
    copy.resize(static_cast<std::size_t>(n));
    memory<B>::copy_to_host(copy.data(), p, sizeof(I) * static_cast<std::size_t>(n), idx.stream());
    p = copy.data();
  }
  for (index_t k = 0; k != n; ++k)
    if (p[k] < 0 || p[k] >= extent) {
      std::string position;
      for (std::size_t d = R, rest = static_cast<std::size_t>(k); d-- > 0;) {
        const auto e = static_cast<std::size_t>(idx.shape()[d]);
        position = std::to_string(rest % e) + (d + 1 == R ? "" : ", ") + position;
        rest /= e;
      }
      throw shape_error("texpr: " + std::string(op) + " index " + std::to_string(static_cast<long long>(p[k])) +
                        " at position (" + position + ") is out of range for axis " + std::to_string(axis) +
                        " of extent " + std::to_string(extent) + " (operand shape " + operand_shape + ")");
    }
}

/// The indexed_read generator over x and idx (contiguous memory) with result shape s.
template <std::size_t RS, class X, class L>
auto indexed_read_of(const X& x, const L& idx, bool per_element, index_t positions, index_t extent, index_t inner, const shape_t<RS>& s) {
  using T = typename X::value_type;
  using S = typename op::indexed_read::template source<T>;
  const S src{x.data(), idx.data(), std::is_same_v<typename L::value_type, std::int64_t>, per_element, positions, extent, inner};
  return generator_expr<op::indexed_read, T, RS, typename X::backend>(src, s);
}
/// The indexed_sum generator over g and idx (contiguous memory) with result shape s.
template <std::size_t RS, class G, class L>
auto indexed_sum_of(const G& g, const L& idx, bool per_element, index_t positions, index_t extent, index_t inner, const shape_t<RS>& s) {
  using T = typename G::value_type;
  using S = typename op::indexed_sum::template source<T>;
  const S src{g.data(), idx.data(), std::is_same_v<typename L::value_type, std::int64_t>, per_element, positions, extent, inner};
  return generator_expr<op::indexed_sum, T, RS, typename G::backend>(src, s);
}

/// index_select's expansion: the indices checked, then one indexed_read pass.
template <class K, class X, class L> auto expand_composite(expansion_tag, op::index_select, std::size_t axis, K& keep, const X& xv, const L& iv) {
  const auto x = contiguous_operand(keep, xv);
  const auto idx = contiguous_operand(keep, iv);
  const auto xs = x.shape();
  check_indices(idx, xs[axis], "index_select", axis, to_string(xs));
  auto s = xs;
  s[axis] = idx.shape()[0];
  return indexed_read_of(x, idx, false, s[axis], xs[axis], extent_product(xs, axis + 1, X::rank), s);
}
/// gather's expansion: the indices checked, then one indexed_read pass, an index per element.
template <class K, class X, class L> auto expand_composite(expansion_tag, op::gather, std::size_t axis, K& keep, const X& xv, const L& iv) {
  const auto x = contiguous_operand(keep, xv);
  const auto idx = contiguous_operand(keep, iv);
  const auto xs = x.shape();
  check_indices(idx, xs[axis], "gather", axis, to_string(xs));
  return indexed_read_of(x, idx, true, idx.shape()[axis], xs[axis], extent_product(xs, axis + 1, X::rank), idx.shape());
}
/// embedding's expansion over weight (V, D) and indices: the indices checked, then one indexed_read pass.
template <class K, class W, class L> auto expand_composite(expansion_tag, op::embedding, std::size_t, K& keep, const W& wv, const L& iv) {
  const auto w = contiguous_operand(keep, wv);
  const auto idx = contiguous_operand(keep, iv);
  check_indices(idx, w.shape()[0], "embedding", 0, to_string(w.shape()));
  shape_t<L::rank + 1> s{};
  for (std::size_t d = 0; d != L::rank; ++d) s[d] = idx.shape()[d];
  s[L::rank] = w.shape()[1];
  return indexed_read_of(w, idx, false, idx.size(), w.shape()[0], w.shape()[1], s);
}
/// index_add's expansion over g and a rank-1 idx: one indexed_sum pass (the indices were checked by the forward
/// op; one outside the result adds nothing).
template <class K, class G, class L> auto expand_composite(expansion_tag, op::index_add, std::size_t axis, double extent, K& keep, const G& gv, const L& iv) {
  const auto g = contiguous_operand(keep, gv);
  const auto idx = contiguous_operand(keep, iv);
  auto s = g.shape();
  s[axis] = static_cast<index_t>(extent);
  return indexed_sum_of(g, idx, false, g.shape()[axis], s[axis], extent_product(s, axis + 1, G::rank), s);
}
/// scatter_add's expansion over g and idx of g's shape: one indexed_sum pass.
template <class K, class G, class L> auto expand_composite(expansion_tag, op::scatter_add, std::size_t axis, double extent, K& keep, const G& gv, const L& iv) {
  const auto g = contiguous_operand(keep, gv);
  const auto idx = contiguous_operand(keep, iv);
  auto s = g.shape();
  s[axis] = static_cast<index_t>(extent);
  return indexed_sum_of(g, idx, true, g.shape()[axis], s[axis], extent_product(s, axis + 1, G::rank), s);
}

template <class E, class I> void check_indexing_operands() {
  static_assert(class_label<I>, "texpr: indices must be int32 or int64");
  detail::check_same_backend<typename captured_t<E>::backend, typename captured_t<I>::backend>();
}

/// Zeros of g's shape with extent `extent` along `axis`, plus each slice of g along the axis added at the
/// position the rank-1 idx gives (index_select's and embedding's gradient; deterministic: see op::indexed_sum).
template <class G, class L> auto index_add(std::size_t axis, index_t extent, G&& g, L&& idx) {
  using CG = captured_t<G>;
  using CL = captured_t<L>;
  check_indexing_operands<G, L>();
  static_assert(CL::rank == 1, "texpr: index_add takes a rank-1 index");
  auto cg = capture(std::forward<G>(g));
  auto s = cg.shape();
  s[axis] = extent;
  return composite_expr<op::index_add, CG::rank, CG, CL>(axis, static_cast<double>(extent), s, std::move(cg), capture(std::forward<L>(idx)));
}
/// Zeros of g's shape with extent `extent` along `axis`, plus each element of g added at the position the index
/// of g's shape gives along the axis (gather's gradient; deterministic: see op::indexed_sum).
template <class G, class L> auto scatter_add(std::size_t axis, index_t extent, G&& g, L&& idx) {
  using CG = captured_t<G>;
  using CL = captured_t<L>;
  check_indexing_operands<G, L>();
  static_assert(CL::rank == CG::rank, "texpr: scatter_add takes an index of the source's shape");
  auto cg = capture(std::forward<G>(g));
  auto s = cg.shape();
  s[axis] = extent;
  return composite_expr<op::scatter_add, CG::rank, CG, CL>(axis, static_cast<double>(extent), s, std::move(cg), capture(std::forward<L>(idx)));
}

} // namespace detail

/// x's slices along `axis` (negative counts from the end) at the positions a rank-1 int32/int64 index lists, in
/// its order, repeats allowed (torch.index_select): the result has x's shape with indices.size() along the axis.
/// x and the indices are evaluated once; then the indices are checked (an index outside [0, extent) throws
/// shape_error naming it, its position and the extent; on cuda the indices are copied to the host for this,
/// one synchronising copy) and one pass reads the result. Gradient to x: detail::index_add (a deterministic sum).
template <operand E, operand I>
auto index_select(E&& x, index_t axis, I&& indices, texpr::source_location loc = texpr::source_location::current()) {
  using CX = detail::captured_t<E>;
  using CI = detail::captured_t<I>;
  detail::check_indexing_operands<E, I>();
  static_assert(CX::rank >= 1, "texpr: index_select needs an operand of rank 1 or more");
  static_assert(CI::rank == 1, "texpr: index_select takes a rank-1 index (use gather for an index of x's rank)");
  auto c = detail::capture(std::forward<E>(x));
  auto i = detail::capture(std::forward<I>(indices));
  const std::size_t a = detail::layout_axis(axis, CX::rank, c.shape(), "index_select", loc);
  auto s = c.shape();
  s[a] = i.shape()[0];
  return composite_expr<op::index_select, CX::rank, CX, CI>(a, s, std::move(c), std::move(i));
}

/// x[..., indices[..., p, ...], ...] along `axis` for every position of an int32/int64 index of x's rank (torch.gather,
/// numpy.take_along_axis): the result has the index's shape. The index must have x's extents on every other axis
/// (shape_error otherwise; torch also takes smaller ones). Indices are checked as index_select's. Gradient to x:
/// detail::scatter_add (a deterministic sum).
template <operand E, operand I>
auto gather(E&& x, index_t axis, I&& indices, texpr::source_location loc = texpr::source_location::current()) {
  using CX = detail::captured_t<E>;
  using CI = detail::captured_t<I>;
  detail::check_indexing_operands<E, I>();
  static_assert(CX::rank >= 1 && CI::rank == CX::rank, "texpr: gather takes an index of the operand's rank");
  auto c = detail::capture(std::forward<E>(x));
  auto i = detail::capture(std::forward<I>(indices));
  const std::size_t a = detail::layout_axis(axis, CX::rank, c.shape(), "gather", loc);
  for (std::size_t d = 0; d != CX::rank; ++d)
    if (d != a && i.shape()[d] != c.shape()[d])
      throw shape_error(detail::at(loc) + "texpr: gather along axis " + std::to_string(a) +
                        " needs an index with the operand's extents on the other axes: operand shape = " +
                        to_string(c.shape()) + " index shape = " + to_string(i.shape()));
  const auto s = i.shape();
  return composite_expr<op::gather, CX::rank, CX, CI>(a, s, std::move(c), std::move(i));
}

/// Rows of weight (V, D) at int32/int64 indices of any rank R (torch.nn.functional.embedding): the result has
/// shape indices.shape() + (D). Indices are checked as index_select's (each in [0, V)). Gradient to weight:
/// detail::index_add of the result's gradient seen as (indices.size(), D) (a deterministic sum; none to the
/// indices).
template <operand I, operand W>
auto embedding(I&& indices, W&& weight, texpr::source_location = texpr::source_location::current()) {
  using CI = detail::captured_t<I>;
  using CW = detail::captured_t<W>;
  detail::check_indexing_operands<W, I>();
  static_assert(CW::rank == 2, "texpr: embedding takes a weight of shape (V, D)");
  auto w = detail::capture(std::forward<W>(weight));
  auto i = detail::capture(std::forward<I>(indices));
  shape_t<CI::rank + 1> s{};
  for (std::size_t d = 0; d != CI::rank; ++d) s[d] = i.shape()[d];
  s[CI::rank] = w.shape()[1];
  return composite_expr<op::embedding, CI::rank + 1, CW, CI>(0, s, std::move(w), std::move(i));
}

} // namespace texpr
