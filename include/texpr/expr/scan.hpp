// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy scans along one axis (op/scan.hpp's TEXPR_SCAN_FUNCTIONS): the result has the operand's shape, element i
// along the axis the op over elements 0..i (or i..n-1 for a reversed scan). The operand is read fused, as a
// reduction reads its operand: no temporary for an elementwise operand.
#pragma once

#include <cstddef>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/op/scan.hpp"

namespace texpr {

/// Tag asking a scan to run from the end of the axis (`tx::cumsum(x, 0, tx::reversed)`, jax.lax.cumsum's
/// reverse=True): element i is the op over elements i..n-1.
struct reversed_t {
  explicit reversed_t() = default;
};
/// Runs a scan from the end of the axis.
inline constexpr reversed_t reversed{};

/// Scan by Op of C along one axis; the result has C's shape and the op's result dtype.
template <class Op, class C> class scan_expr : public expr_base<scan_expr<Op, C>> {
  static_assert(C::rank >= 1, "texpr: a scan needs an operand of rank 1 or more");

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C>;
  using kernel_dtype = typename C::value_type;  ///< The input dtype selects the kernel.
  using value_type = typename Op::reduction::template result<kernel_dtype>;
  using backend = typename C::backend;
  static constexpr std::size_t rank = C::rank;
  /// The kernels read the operand through its accessor, fused (tx::placement reads this).
  static constexpr bool reads_operand_fused = true;

  /// Scans c along `axis` (validated by the builders below), from the end when `reverse`.
  scan_expr(C c, std::size_t axis, bool reverse) : c_{{std::move(c)}}, axis_(axis), reverse_(reverse) {}
  /// The result shape (the operand's).
  shape_t<rank> shape() const { return detail::get<0>(c_).shape(); }
  /// The scanned operand.
  const C& child() const { return detail::get<0>(c_); }
  /// The operand, as a tuple.
  const detail::tuple<C>& operands() const { return c_; }
  /// The reduction whose arithmetic runs along the axis.
  typename Op::reduction op() const { return {}; }
  /// The scanned axis.
  std::size_t axis() const { return axis_; }
  /// True when the scan runs from the end of the axis.
  bool reverse() const { return reverse_; }
  /// The same scan of another operand of the same shape.
  template <class D> scan_expr<Op, D> with_operands(D d) const { return scan_expr<Op, D>(std::move(d), axis_, reverse_); }

 private:
  detail::tuple<C> c_;
  std::size_t axis_;
  bool reverse_;
};

/// h_i = a_i h_{i-1} + b_i along one axis of A and B (one shape), from h = 0; from the end when reversed.
template <class A, class B> class recurrence_expr : public expr_base<recurrence_expr<A, B>> {
  static_assert(A::rank >= 1 && A::rank == B::rank, "texpr: a linear recurrence takes a and b of one rank, 1 or more");

 public:
  using texpr_node = void;
  using op_type = op::linear_recurrence;
  using children = detail::type_list<A, B>;
  using kernel_dtype = typename A::value_type;  ///< The dtype of a (and b) selects the kernel.
  using value_type = kernel_dtype;
  using backend = typename detail::common_backend<typename A::backend, typename B::backend>::type;
  static constexpr std::size_t rank = A::rank;
  /// The kernels read both operands through their accessors, fused (tx::placement reads this).
  static constexpr bool reads_operand_fused = true;

  /// The recurrence of coefficients a and terms b (one shape, validated by tx::linear_recurrence) along `axis`.
  recurrence_expr(A a, B b, std::size_t axis, bool reverse) : c_{{std::move(a)}, {std::move(b)}}, axis_(axis), reverse_(reverse) {}
  /// The result shape (the operands').
  shape_t<rank> shape() const { return detail::get<0>(c_).shape(); }
  /// The coefficients and the terms.
  const detail::tuple<A, B>& operands() const { return c_; }
  /// The fold the recurrence runs (affine maps under composition).
  op::affine_compose op() const { return {}; }
  /// The axis.
  std::size_t axis() const { return axis_; }
  /// True when the recurrence runs from the end of the axis.
  bool reverse() const { return reverse_; }
  /// The same recurrence over other operands of the same shapes.
  template <class C, class D> recurrence_expr<C, D> with_operands(C c, D d) const {
    return recurrence_expr<C, D>(std::move(c), std::move(d), axis_, reverse_);
  }

 private:
  detail::tuple<A, B> c_;
  std::size_t axis_;
  bool reverse_;
};

namespace detail {
template <class E, class F>
auto recurrence_along(E&& a, F&& b, index_t axis, bool reverse, const texpr::source_location& loc) {
  using CA = captured_t<E>;
  using CB = captured_t<F>;
  check_same_dtype<typename CA::value_type, typename CB::value_type>();
  check_same_backend<typename CA::backend, typename CB::backend>();
  static_assert(CA::rank >= 1 && CA::rank == CB::rank, "texpr: linear_recurrence takes a and b of one rank, 1 or more");
  auto ca = capture(std::forward<E>(a));
  auto cb = capture(std::forward<F>(b));
  if (ca.shape() != cb.shape())
    throw shape_error(at(loc) + "texpr: linear_recurrence of a of shape " + to_string(ca.shape()) + " and b of shape " +
                      to_string(cb.shape()) + ": they need one shape");
  const std::size_t ax = reduction_axis(axis, ca.shape(), "linear_recurrence", loc);
  return recurrence_expr<CA, CB>(std::move(ca), std::move(cb), ax, reverse);
}
template <class Op, class E> auto scan_along(E&& e, index_t axis, bool reverse, const texpr::source_location& loc) {
  using C = captured_t<E>;
  static_assert(C::rank >= 1, "texpr: a scan needs an operand of rank 1 or more (reshape a scalar first)");
  auto c = capture(std::forward<E>(e));
  const std::size_t a = reduction_axis(axis, c.shape(), Op::name, loc);
  return scan_expr<Op, C>(std::move(c), a, reverse);
}
} // namespace detail

#define TEXPR_SCAN(NAME)                                                                                    \
  /** Lazy NAME along one axis (negative counts from the end); the result has the operand's shape. */       \
  template <operand E> auto NAME(E&& e, index_t axis, texpr::source_location loc = texpr::source_location::current()) { \
    return detail::scan_along<op::NAME>(std::forward<E>(e), axis, false, loc);                              \
  }                                                                                                         \
  /** Lazy NAME along one axis, from its end (element i is NAME over i..n-1). */                            \
  template <operand E>                                                                                      \
  auto NAME(E&& e, index_t axis, reversed_t, texpr::source_location loc = texpr::source_location::current()) { \
    return detail::scan_along<op::NAME>(std::forward<E>(e), axis, true, loc);                               \
  }
TEXPR_SCAN_FUNCTIONS(TEXPR_SCAN)
#undef TEXPR_SCAN

/// Lazy h_i = a_i h_{i-1} + b_i along `axis` (negative counts from the end) from h_{-1} = 0, for a and b of one shape:
/// an exponential moving average is linear_recurrence(full(shape, 1 - alpha), alpha * x, axis). One pass, the
/// operands read fused. Gradients to both.
template <operand E, operand F>
auto linear_recurrence(E&& a, F&& b, index_t axis, texpr::source_location loc = texpr::source_location::current()) {
  return detail::recurrence_along(std::forward<E>(a), std::forward<F>(b), axis, false, loc);
}
/// The same from the end of the axis: h_i = a_i h_{i+1} + b_i from h_n = 0.
template <operand E, operand F>
auto linear_recurrence(E&& a, F&& b, index_t axis, reversed_t, texpr::source_location loc = texpr::source_location::current()) {
  return detail::recurrence_along(std::forward<E>(a), std::forward<F>(b), axis, true, loc);
}

} // namespace texpr
