// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy layout views: transpose, permute, reshape, slice, unsqueeze, squeeze and broadcast_to. They describe the
// operand's elements with other extents and strides; no element is copied unless the operand is not in memory
// (an expression is evaluated once first) or, for reshape, not contiguous. A layout of a named tensor or a
// mutable view can be assigned to: `tx::slice(t, 0, 32, 64) = e;` writes into t.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include "texpr/core/source_location.hpp"
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/layout.hpp"

namespace texpr {

/// Layout node: Op's view of operand C, of rank R.
template <class Op, class C, std::size_t R> class layout_expr : public expr_base<layout_expr<Op, C, R>> {
 public:
  using texpr_node = void;
  using op_type = Op;
  using params_type = typename Op::template params<C::rank, R>;  ///< What the node stores.
  using children = detail::type_list<C>;
  using value_type = typename C::value_type;
  using kernel_dtype = value_type;
  using backend = typename C::backend;
  static constexpr std::size_t rank = R;
  /// True when assigning to the node writes into user memory (a layout of a named tensor or mutable view).
  static constexpr bool writable = [] {
    if constexpr (requires { C::writable; }) return C::writable && !std::is_same_v<Op, op::broadcast_to>;
    else return false;
  }();

  /// Builds the node; params are already validated against c's shape.
  layout_expr(C c, params_type p) : c_{{std::move(c)}}, p_(p) {
    const auto s = detail::get<0>(c_).shape();
    shape_t<R> strides{};
    index_t offset = 0;
    p_.map(s, contiguous_strides(s), shape_, strides, offset);
  }
  /// The result shape.
  const shape_t<R>& shape() const { return shape_; }
  /// The operand.
  const C& child() const { return detail::get<0>(c_); }
  /// The operand, as a tuple.
  const detail::tuple<C>& operands() const { return c_; }
  /// The op's parameters.
  const params_type& params() const { return p_; }
  /// The same layout of another operand of the same shape.
  template <class D> layout_expr<Op, D, R> with_operands(D d) const { return layout_expr<Op, D, R>(std::move(d), p_); }

  /// Evaluates e into the elements this layout selects of the underlying tensor or view (shapes must match).
  template <operand E> const layout_expr& operator=(E&& e) const {
    static_assert(writable, "texpr: only a layout (other than broadcast_to) of a named non-const tensor or of a "
                            "mutable view can be assigned to");
    if constexpr (writable) evaluate_through(detail::evaluation_entry{}, *this, std::forward<E>(e));
    return *this;
  }
  /// See the overload above (the copy assignment would otherwise rebind the node).
  const layout_expr& operator=(const layout_expr& o) const {
    static_assert(writable, "texpr: only a layout (other than broadcast_to) of a named non-const tensor or of a "
                            "mutable view can be assigned to");
    if constexpr (writable) evaluate_through(detail::evaluation_entry{}, *this, o);
    return *this;
  }
  layout_expr(const layout_expr&) = default;  ///< Copies the node (its operand and layout).

 private:
  detail::tuple<C> c_;
  params_type p_;
  shape_t<R> shape_{};
};

namespace detail {

template <class Op, std::size_t R, class E, class P> auto make_layout(E&& e, const P& p) {
  using C = captured_t<E>;
  return layout_expr<Op, C, R>(capture(std::forward<E>(e)), p);
}

template <std::size_t R>
std::size_t layout_axis(index_t a, std::size_t rank, const shape_t<R>& s, const char* what, const texpr::source_location& loc) {
  const index_t r = static_cast<index_t>(rank);
  if (a < -r || a >= r)
    throw shape_error(at(loc) + "texpr: axis " + std::to_string(a) + " is out of range for " + what +
                      " of an operand of shape " + to_string(s));
  return static_cast<std::size_t>(a < 0 ? a + r : a);
}

} // namespace detail

/// The last two axes swapped (a matrix transpose, batched over leading axes). No copy.
template <operand E> auto transpose(E&& e) {
  constexpr std::size_t R = detail::captured_t<E>::rank;
  static_assert(R >= 2, "texpr: transpose swaps the last two axes of an operand of rank 2 or more");
  return detail::make_layout<op::transpose, R>(std::forward<E>(e), typename op::transpose::template params<R, R>{});
}

/// The axes reordered: result axis d is operand axis axes[d] (negative counts from the end). No copy.
template <operand E, std::size_t R>
auto permute(E&& e, const index_t (&axes)[R], texpr::source_location loc = texpr::source_location::current()) {
  static_assert(R == detail::captured_t<E>::rank, "texpr: permute needs one axis per dimension of the operand");
  auto c = detail::capture(std::forward<E>(e));
  typename op::permute::template params<R, R> p;
  std::array<bool, R> seen{};
  for (std::size_t d = 0; d != R; ++d) {
    const std::size_t a = detail::layout_axis(axes[d], R, c.shape(), "permute", loc);
    if (seen[a]) throw shape_error(detail::at(loc) + "texpr: permute repeats axis " + std::to_string(a) + " for an operand of shape " + to_string(c.shape()));
    seen[a] = true;
    p.perm[d] = a;
  }
  return layout_expr<op::permute, decltype(c), R>(std::move(c), p);
}

/// The same elements, row-major, with another shape (one extent may be -1: inferred). Rank may change. A
/// non-contiguous operand (or an expression) is copied to contiguous memory first.
template <operand E, std::size_t R>
auto reshape(E&& e, const index_t (&extents)[R], texpr::source_location loc = texpr::source_location::current()) {
  const shape_t<R> shape = detail::to_shape(extents);
  auto c = detail::capture(std::forward<E>(e));
  using C = decltype(c);
  const index_t n = shape_size(c.shape());
  typename op::reshape::template params<C::rank, R> p;
  p.target = shape;
  int infer = -1;
  for (std::size_t d = 0; d != R; ++d) {
    if (shape[d] == -1 && infer < 0) {
      infer = static_cast<int>(d);
      p.target[d] = 1;
    } else if (shape[d] < 0) {
      throw shape_error(detail::at(loc) + "texpr: cannot reshape an operand of shape " + to_string(c.shape()) +
                        " to " + to_string(shape) + ": extents must be >= 0, with at most one -1");
    }
  }
  // The known extents first (the -1 counted as 1): their product may overflow even when it holds a 0.
  detail::check_shape(p.target, sizeof(typename C::value_type), "reshape of an operand of shape " + to_string(c.shape()), &loc);
  if (infer >= 0) {
    const index_t known = shape_size(p.target);
    p.target[static_cast<std::size_t>(infer)] = known == 0 ? 0 : n / known;
  }
  if (shape_size(p.target) != n)
    throw shape_error(detail::at(loc) + "texpr: cannot reshape an operand of shape " + to_string(c.shape()) + " (" +
                      std::to_string(n) + " elements) to shape " + to_string(shape));
  return layout_expr<op::reshape, C, R>(std::move(c), p);
}

/// Elements begin, begin + step, ... before end along `axis`, with Python's rules: negative begin and end count
/// from the end and are clamped to the axis; step may be negative (then begin defaults high); step 0 throws.
template <operand E>
auto slice(E&& e, index_t axis, index_t begin, index_t end, index_t step = 1,
           texpr::source_location loc = texpr::source_location::current()) {
  auto c = detail::capture(std::forward<E>(e));
  using C = decltype(c);
  static_assert(C::rank >= 1, "texpr: slice needs an operand of rank 1 or more");
  typename op::slice::template params<C::rank, C::rank> p;
  p.axis = detail::layout_axis(axis, C::rank, c.shape(), "slice", loc);
  if (step == 0) throw shape_error(detail::at(loc) + "texpr: slice step must not be 0");
  const index_t n = c.shape()[p.axis];
  // Python's range(n)[begin:end:step] (CPython's PySlice_AdjustIndices), arranged so that no step, INT64_MIN
  // included, is negated and no sum leaves int64: begin and end are clamped to [0, n] ([-1, n - 1] for a negative
  // step) before any other arithmetic.
  auto clamp = [&](index_t i, index_t lo, index_t hi) {
    if (i < 0) i = i < -n ? lo : i + n;
    return i < lo ? lo : (i > hi ? hi : i);
  };
  index_t count = 0;
  if (step > 0) {
    const index_t b = clamp(begin, 0, n), en = clamp(end, 0, n);
    count = en > b ? (en - b - 1) / step + 1 : 0;
    p.first = b;
  } else {
    const index_t b = clamp(begin, -1, n - 1), en = clamp(end, -1, n - 1);
    count = b > en ? (en - b + 1) / step + 1 : 0;
    p.first = b;
  }
  p.count = count;
  // With fewer than two elements the step is never applied; 1 keeps stride * step from overflowing (a step past
  // the axis' extent selects at most one element, and a larger count bounds |step| by the extent).
  p.step = count > 1 ? step : 1;
  return layout_expr<op::slice, C, C::rank>(std::move(c), p);
}

/// An axis of extent 1 inserted at `axis` (0 .. rank; negative counts from the end of the result). No copy.
template <operand E> auto unsqueeze(E&& e, index_t axis, texpr::source_location loc = texpr::source_location::current()) {
  auto c = detail::capture(std::forward<E>(e));
  using C = decltype(c);
  typename op::unsqueeze::template params<C::rank, C::rank + 1> p;
  p.axis = detail::layout_axis(axis, C::rank + 1, c.shape(), "unsqueeze", loc);
  return layout_expr<op::unsqueeze, C, C::rank + 1>(std::move(c), p);
}

/// The axis `axis`, of extent 1, removed; another extent throws shape_error. No copy.
template <operand E> auto squeeze(E&& e, index_t axis, texpr::source_location loc = texpr::source_location::current()) {
  auto c = detail::capture(std::forward<E>(e));
  using C = decltype(c);
  static_assert(C::rank >= 1, "texpr: squeeze needs an operand of rank 1 or more");
  typename op::squeeze::template params<C::rank, C::rank - 1> p;
  p.axis = detail::layout_axis(axis, C::rank, c.shape(), "squeeze", loc);
  if (c.shape()[p.axis] != 1)
    throw shape_error(detail::at(loc) + "texpr: squeeze of axis " + std::to_string(p.axis) + " of shape " +
                      to_string(c.shape()) + ": its extent is not 1");
  return layout_expr<op::squeeze, C, C::rank - 1>(std::move(c), p);
}

/// The diagonal of axes axis1 and axis2 (numpy.diagonal(e, 0, axis1, axis2)): both removed, the diagonal appended as
/// the last axis; the two extents must be equal (shape_error otherwise). A view: no copy.
template <operand E>
auto diagonal(E&& e, index_t axis1 = -2, index_t axis2 = -1, texpr::source_location loc = texpr::source_location::current()) {
  auto c = detail::capture(std::forward<E>(e));
  using C = decltype(c);
  static_assert(C::rank >= 2, "texpr: diagonal needs an operand of rank 2 or more");
  typename op::diagonal::template params<C::rank, C::rank - 1> p;
  p.axis1 = detail::layout_axis(axis1, C::rank, c.shape(), "diagonal", loc);
  p.axis2 = detail::layout_axis(axis2, C::rank, c.shape(), "diagonal", loc);
  if (p.axis1 == p.axis2)
    throw shape_error(detail::at(loc) + "texpr: diagonal of axis " + std::to_string(p.axis1) + " with itself (shape " +
                      to_string(c.shape()) + "): name two different axes");
  if (c.shape()[p.axis1] != c.shape()[p.axis2])
    throw shape_error(detail::at(loc) + "texpr: diagonal of axes " + std::to_string(p.axis1) + " and " +
                      std::to_string(p.axis2) + " of shape " + to_string(c.shape()) + ": their extents differ");
  return layout_expr<op::diagonal, C, C::rank - 1>(std::move(c), p);
}

/// The operand broadcast to `shape` (NumPy rules, trailing axes aligned) with stride 0: no copy, read-only.
template <operand E, std::size_t R>
auto broadcast_to(E&& e, const shape_t<R>& shape, texpr::source_location loc = texpr::source_location::current()) {
  auto c = detail::capture(std::forward<E>(e));
  using C = decltype(c);
  static_assert(R >= C::rank, "texpr: broadcast_to cannot lower the rank");
  const auto s = c.shape();
  detail::check_shape(shape, sizeof(typename C::value_type), "broadcast_to", &loc);
  for (std::size_t i = 0; i != C::rank; ++i)
    if (s[i] != 1 && s[i] != shape[i + R - C::rank])
      throw shape_error(detail::at(loc) + "texpr: cannot broadcast an operand of shape " + to_string(s) +
                        " to shape " + to_string(shape));
  typename op::broadcast_to::template params<C::rank, R> p;
  p.target = shape;
  return layout_expr<op::broadcast_to, C, R>(std::move(c), p);
}

/// reshape to a shape_t (e.g. another tensor's shape).
template <operand E, std::size_t R>
auto reshape(E&& e, const shape_t<R>& shape, texpr::source_location loc = texpr::source_location::current()) {
  index_t extents[R > 0 ? R : 1] = {};
  for (std::size_t d = 0; d != R; ++d) extents[d] = shape[d];
  if constexpr (R == 0) {
    auto c = detail::capture(std::forward<E>(e));
    using C = decltype(c);
    if (shape_size(c.shape()) != 1)
      throw shape_error(detail::at(loc) + "texpr: cannot reshape an operand of shape " + to_string(c.shape()) +
                        " to shape ()");
    return layout_expr<op::reshape, C, 0>(std::move(c), typename op::reshape::template params<C::rank, 0>{});
  } else {
    return reshape(std::forward<E>(e), extents, loc);
  }
}
/// broadcast_to from an extents list: `tx::broadcast_to(b, {64, 256})`.
template <operand E, std::size_t R>
auto broadcast_to(E&& e, const index_t (&extents)[R], texpr::source_location loc = texpr::source_location::current()) {
  return broadcast_to(std::forward<E>(e), detail::to_shape(extents), loc);
}

} // namespace texpr
