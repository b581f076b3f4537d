// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ordering nodes (op/sort.hpp): sort, argsort and topk of each line along an axis (sort_expr: the operand read
// fused, as a reduction reads its operand), topk's values (a composite reading x at topk's positions) and the
// scatter that writes a gradient back through distinct positions (scatter_expr). Reached through texpr/sort.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/expr/indexing.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/expr/softmax.hpp"
#include "texpr/op/sort.hpp"

namespace texpr {

/// Op (sort, argsort or topk) of each line of C along one axis; the result has C's shape with `k` along the axis
/// (the axis' extent for sort and argsort) and the op's result dtype.
template <class Op, class C> class sort_expr : public expr_base<sort_expr<Op, C>> {
  static_assert(C::rank >= 1, "texpr: ordering needs an operand of rank 1 or more");

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C>;
  using kernel_dtype = typename C::value_type;  ///< The operand's dtype selects the kernel.
  using value_type = typename Op::template result<kernel_dtype>;
  using backend = typename C::backend;
  static constexpr std::size_t rank = C::rank;
  /// The kernels read the operand through its accessor, fused (tx::placement reads this).
  static constexpr bool reads_operand_fused = true;

  /// Orders c along `axis` (validated by the builders), keeping the first k of each line, descending when asked.
  sort_expr(C c, std::size_t axis, index_t k, bool descending) : c_{{std::move(c)}}, axis_(axis), k_(k), descending_(descending) {}
  /// The result shape: the operand's, with k along the axis.
  shape_t<rank> shape() const {
    auto s = detail::get<0>(c_).shape();
    s[axis_] = k_;
    return s;
  }
  /// The ordered operand.
  const C& child() const { return detail::get<0>(c_); }
  /// The operand, as a tuple.
  const detail::tuple<C>& operands() const { return c_; }
  /// The axis ordered.
  std::size_t axis() const { return axis_; }
  /// How many of each line's first elements (in the order) the result keeps.
  index_t k() const { return k_; }
  /// True for descending order (NaN first).
  bool descending() const { return descending_; }
  /// The same op over another operand of the same shape.
  template <class D> sort_expr<Op, D> with_operands(D d) const { return sort_expr<Op, D>(std::move(d), axis_, k_, descending_); }

 private:
  detail::tuple<C> c_;
  std::size_t axis_;
  index_t k_;
  bool descending_;
};

/// Zeros of G's shape with `extent` along `axis`, and each element of g written at the position idx (of g's shape,
/// int64, distinct within each line) gives along that axis: op::scatter.
template <class G, class I> class scatter_expr : public expr_base<scatter_expr<G, I>> {
 public:
  using texpr_node = void;
  using op_type = op::scatter;
  using children = detail::type_list<G, I>;
  using value_type = typename G::value_type;
  using kernel_dtype = value_type;
  using backend = typename detail::common_backend<typename G::backend, typename I::backend>::type;
  static constexpr std::size_t rank = G::rank;

  /// g written at idx along `axis` into zeros of g's shape with `extent` along it.
  scatter_expr(G g, I idx, std::size_t axis, index_t extent) : c_{{std::move(g)}, {std::move(idx)}}, axis_(axis), extent_(extent) {}
  /// The result shape.
  shape_t<rank> shape() const {
    auto s = detail::get<0>(c_).shape();
    s[axis_] = extent_;
    return s;
  }
  /// g and the positions.
  const detail::tuple<G, I>& operands() const { return c_; }
  /// The axis written along.
  std::size_t axis() const { return axis_; }
  /// The result's extent along the axis.
  index_t extent() const { return extent_; }
  /// The same scatter of other operands of the same shapes.
  template <class D, class J> scatter_expr<D, J> with_operands(D d, J j) const {
    return scatter_expr<D, J>(std::move(d), std::move(j), axis_, extent_);
  }

 private:
  detail::tuple<G, I> c_;
  std::size_t axis_;
  index_t extent_;
};

namespace detail {

template <class Op, class E>
auto order_along(E&& e, index_t axis, index_t k, bool descending, const texpr::source_location& loc) {
  using C = captured_t<E>;
  static_assert(C::rank >= 1, "texpr: sort, argsort and topk need an operand of rank 1 or more (reshape a scalar first)");
  static_assert(!std::is_same_v<typename C::backend, any_backend>, "texpr: sort, argsort and topk need a tensor operand");
  auto c = capture(std::forward<E>(e));
  const std::size_t a = reduction_axis(axis, c.shape(), Op::name, loc);
  const index_t extent = c.shape()[a];
  if (k < 0) k = extent;
  return sort_expr<Op, C>(std::move(c), a, k, descending);
}

/// The positions of the k first elements of each line of e along `axis` in descending (largest) or ascending
/// order; k outside [0, extent] is a shape_error naming k and the extent.
template <class E> auto topk_positions(E&& e, index_t k, index_t axis, bool largest, const texpr::source_location& loc) {
  using C = captured_t<E>;
  static_assert(C::rank >= 1, "texpr: topk needs an operand of rank 1 or more (reshape a scalar first)");
  auto c = capture(std::forward<E>(e));
  const std::size_t a = reduction_axis(axis, c.shape(), "topk", loc);
  const index_t extent = c.shape()[a];
  if (k < 0 || k > extent)
    throw shape_error(at(loc) + "texpr: topk of k = " + std::to_string(k) + " along axis " + std::to_string(a) +
                      " of extent " + std::to_string(extent) + " (shape " + to_string(c.shape()) +
                      "): k must be in [0, extent]");
  return sort_expr<op::topk, C>(std::move(c), a, k, largest);
}

/// x read at positions idx (int64, of x's shape but k along `axis`, each in range: topk's) along that axis.
template <class X, class I> auto topk_values_of(X x, I idx, std::size_t axis) {
  static_assert(I::rank == X::rank, "texpr: topk_values reads positions of x's rank");
  const auto s = idx.shape();
  return composite_expr<op::topk_values, X::rank, X, I>(axis, s, std::move(x), std::move(idx));
}

/// topk_values' expansion: one indexed_read pass (the positions are topk's own, in range: not checked).
template <class K, class X, class L> auto expand_composite(expansion_tag, op::topk_values, std::size_t axis, K& keep, const X& xv, const L& iv) {
  const auto x = contiguous_operand(keep, xv);
  const auto idx = contiguous_operand(keep, iv);
  const auto xs = x.shape();
  return indexed_read_of(x, idx, true, idx.shape()[axis], xs[axis], extent_product(xs, axis + 1, X::rank), idx.shape());
}

/// g written at positions idx (distinct within each line) along `axis` into zeros with `extent` along it.
template <class G, class I> auto scatter_distinct(std::size_t axis, index_t extent, G&& g, I&& idx) {
  using CG = captured_t<G>;
  using CI = captured_t<I>;
  static_assert(CG::rank == CI::rank, "texpr: scatter takes positions of g's shape");
  return scatter_expr<CG, CI>(capture(std::forward<G>(g)), capture(std::forward<I>(idx)), axis, extent);
}

} // namespace detail

/// Lazy sort of each line of e along `axis` (negative counts from the end; default the last), ascending or
/// descending; stable (ties keep their order), NaN last (first when descending), -0 and +0 equal (numpy.sort
/// with kind="stable", torch.sort(stable=True)). The operand is read fused.
template <operand E>
auto sort(E&& e, index_t axis = -1, bool descending = false, texpr::source_location loc = texpr::source_location::current()) {
  return detail::order_along<op::sort>(std::forward<E>(e), axis, -1, descending, loc);
}

/// Lazy positions (int64) that sort each line of e along `axis` (numpy.argsort(kind="stable"),
/// torch.argsort(stable=True)): stable, NaN last (first when descending). The operand is read fused.
template <operand E>
auto argsort(E&& e, index_t axis = -1, bool descending = false, texpr::source_location loc = texpr::source_location::current()) {
  return detail::order_along<op::argsort>(std::forward<E>(e), axis, -1, descending, loc);
}

} // namespace texpr
