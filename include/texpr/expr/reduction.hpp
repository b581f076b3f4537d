// Lazy reductions: sum, mean, max, min, prod over everything (rank 0) or one axis (rank one lower).
// The reduced child is read through its fused accessor: no temporary for elementwise children.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/reduction.hpp"

namespace texpr {

namespace detail {
template <class B> struct executor;
template <class N, class B> auto read_accessor(const N& n, context<B>& ctx);
template <class N, class B> auto materialize(const N& n, context<B>& ctx);
} // namespace detail

/// Reduction of every element of C to one value (rank 0).
template <class Op, class C> class reduce_expr : public expr_base<reduce_expr<Op, C>> {
 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C>;
  using kernel_dtype = typename C::value_type;   ///< The input dtype selects the kernel.
  using value_type = typename C::value_type;     ///< Reductions keep the dtype (no promotion).
  using backend = typename C::backend;
  static constexpr std::size_t rank = 0;
  static constexpr bool is_elementwise = false;

  /// Wraps the child; an empty input throws at evaluation only for max and min (no identity).
  explicit reduce_expr(C c) : c_(std::move(c)) {}
  /// Always ().
  shape_t<0> shape() const { return {}; }
  /// The reduced expression.
  const C& child() const { return c_; }

  template <class T, class B> void evaluate_into(const view<T, 0, B>& dest, detail::context<B>& ctx) const {
    const auto in_shape = c_.shape();
    if constexpr (Op::needs_nonempty)
      if (shape_size(in_shape) == 0)
        throw shape_error(std::string("texpr: ") + std::string(Op::name) + " of an empty input of shape " +
                          texpr::to_string(in_shape) + " has no identity");
    auto acc = detail::read_accessor(c_, ctx);
    detail::executor<B>::template reduce_all<Op>(acc, in_shape, dest.data(), ctx);
  }
  template <std::size_t RO, class B> auto accessor(const shape_t<RO>& out, detail::context<B>& ctx) const {
    auto v = detail::materialize(*this, ctx);
    return detail::make_leaf_accessor(v.data(), v.shape(), v.strides(), out);
  }
  template <class F> void for_each_child(F&& f) const { f(c_); }
  template <class F> void for_each_leaf(F&& f, bool) const { c_.for_each_leaf(f, false); }

 private:
  C c_;
};

/// Reduction of C along one axis; the result has rank C::rank - 1.
template <class Op, class C> class reduce_axis_expr : public expr_base<reduce_axis_expr<Op, C>> {
  static_assert(C::rank >= 1, "texpr: an axis reduction needs an input of rank 1 or more");

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C>;
  using kernel_dtype = typename C::value_type;
  using value_type = typename C::value_type;
  using backend = typename C::backend;
  static constexpr std::size_t rank = C::rank - 1;
  static constexpr bool is_elementwise = false;

  /// Wraps the child; axis may be negative (counted from the end); out of range throws shape_error.
  reduce_axis_expr(C c, index_t axis) : c_(std::move(c)) {
    const auto s = c_.shape();
    const index_t r = static_cast<index_t>(C::rank);
    if (axis < -r || axis >= r)
      throw shape_error("texpr: axis " + std::to_string(axis) + " is out of range for " + std::string(Op::name) +
                        " over an input of rank " + std::to_string(r) + " and shape " + texpr::to_string(s));
    axis_ = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
    for (std::size_t d = 0, o = 0; d < C::rank; ++d)
      if (d != axis_) shape_[o++] = s[d];
  }
  /// Input shape without the reduced axis.
  const shape_t<rank>& shape() const { return shape_; }
  /// The reduced axis (non-negative).
  std::size_t axis() const { return axis_; }
  /// The reduced expression.
  const C& child() const { return c_; }

  template <class T, class B> void evaluate_into(const view<T, rank, B>& dest, detail::context<B>& ctx) const {
    const auto in_shape = c_.shape();
    if constexpr (Op::needs_nonempty)
      if (in_shape[axis_] == 0 && shape_size(shape_) != 0)
        throw shape_error(std::string("texpr: ") + std::string(Op::name) + " along axis " + std::to_string(axis_) +
                          " of length 0 (input shape " + texpr::to_string(in_shape) + ") has no identity");
    auto acc = detail::read_accessor(c_, ctx);
    // Reducing the only axis of a rank-1 input is a full reduction; executors see reduce_axis with rank >= 2.
    if constexpr (C::rank == 1) detail::executor<B>::template reduce_all<Op>(acc, in_shape, dest.data(), ctx);
    else detail::executor<B>::template reduce_axis<Op>(acc, in_shape, axis_, dest, ctx);
  }
  template <std::size_t RO, class B> auto accessor(const shape_t<RO>& out, detail::context<B>& ctx) const {
    auto v = detail::materialize(*this, ctx);
    return detail::make_leaf_accessor(v.data(), v.shape(), v.strides(), out);
  }
  template <class F> void for_each_child(F&& f) const { f(c_); }
  template <class F> void for_each_leaf(F&& f, bool) const { c_.for_each_leaf(f, false); }

 private:
  C c_;
  std::size_t axis_ = 0;
  shape_t<rank> shape_{};
};

/// Lazy reduction by op tag Op (one of op::sum, mean, max, min, prod) over every element.
template <class Op, operand E> auto reduce(E&& e) {
  return reduce_expr<Op, detail::captured_t<E>>(detail::capture(std::forward<E>(e)));
}
/// Lazy reduction by op tag Op along one axis (negative counts from the end).
template <class Op, operand E> auto reduce(E&& e, index_t axis) {
  return reduce_axis_expr<Op, detail::captured_t<E>>(detail::capture(std::forward<E>(e)), axis);
}

#define TEXPR_REDUCTION(NAME)                                                                          \
  /** Lazy NAME over every element (rank-0 result). */                                                 \
  template <operand E> auto NAME(E&& e) {                                                               \
    return reduce_expr<op::NAME, detail::captured_t<E>>(detail::capture(std::forward<E>(e)));           \
  }                                                                                                    \
  /** Lazy NAME along one axis (negative counts from the end); the result has rank one lower. */       \
  template <operand E> auto NAME(E&& e, index_t axis) {                                                 \
    return reduce_axis_expr<op::NAME, detail::captured_t<E>>(detail::capture(std::forward<E>(e)), axis); \
  }
TEXPR_REDUCTION(sum)
TEXPR_REDUCTION(mean)
TEXPR_REDUCTION(max)
TEXPR_REDUCTION(min)
TEXPR_REDUCTION(prod)
#undef TEXPR_REDUCTION

} // namespace texpr
