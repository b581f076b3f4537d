// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy reductions (op/reduction.hpp's TEXPR_REDUCTION_FUNCTIONS, var and stddev) over everything or along one
// axis (optionally keeping it with extent 1), and sum_to (autograd's sum over broadcast axes). The reduced operand
// is read fused: no temporary for an elementwise operand.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include "texpr/core/source_location.hpp"
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/reduction.hpp"

namespace texpr {

/// Tag requesting that a reduction keep the reduced axis with extent 1 (`tx::sum(x, 1, tx::keepdims)`).
struct keepdims_t {
  explicit keepdims_t() = default;
};
/// Keeps reduced axes with extent 1, so the result broadcasts against the input.
inline constexpr keepdims_t keepdims{};

/// Reduction by Op of the axes of C in a bit mask, giving rank R: reduced axes are dropped, first to last, until
/// the rank is R, and the rest are kept with extent 1. So the mask of every axis with R = 0 is a reduction over
/// everything, one axis with R = C::rank - 1 an axis reduction, and R = C::rank keeps the axes (keepdims).
template <class Op, class C, std::size_t R> class reduce_expr : public expr_base<reduce_expr<Op, C, R>> {
  static_assert(R <= C::rank, "texpr: a reduction cannot raise the rank");

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C>;
  using kernel_dtype = typename C::value_type;  ///< The input dtype selects the kernel.
  using value_type = typename Op::template result<kernel_dtype>;
  using backend = typename C::backend;
  static constexpr std::size_t rank = R;
  /// Bit mask of reduced axes.
  using mask_t = std::uint32_t;

  /// Reduces the axes in `axes` of c (validated by the builders below).
  reduce_expr(C c, Op op, mask_t axes) : c_{{std::move(c)}}, op_(op), axes_(axes) {
    const auto s = detail::get<0>(c_).shape();
    std::size_t drop = C::rank - R;
    for (std::size_t d = 0, o = 0; d != C::rank; ++d) {
      if (reduces(d)) {
        if (drop > 0) {
          --drop;
          continue;
        }
        shape_[o++] = 1;
      } else {
        shape_[o++] = s[d];
      }
    }
  }
  /// The result shape.
  const shape_t<R>& shape() const { return shape_; }
  /// The reduced operand.
  const C& child() const { return detail::get<0>(c_); }
  /// The operand, as a tuple.
  const detail::tuple<C>& operands() const { return c_; }
  /// The op (it may carry parameters).
  const Op& op() const { return op_; }
  /// The reduced axes, as a bit mask.
  mask_t axes() const { return axes_; }
  /// Whether axis d of the operand is reduced.
  bool reduces(std::size_t d) const { return (axes_ >> d) & 1u; }
  /// Number of reduced axes.
  int reduced_count() const { return std::popcount(axes_); }
  /// True when every axis of the operand is reduced.
  bool reduces_all() const { return reduced_count() == static_cast<int>(C::rank); }
  /// True for a sum_to that sums nothing (the gradient of an operand that was not broadcast). Evaluation and
  /// tx::placement then take the operand as the result: no kernel runs. (Other reductions of a rank-0 operand
  /// still run: var of one element is not the element.)
  bool passes_through() const {
    if constexpr (std::is_same_v<Op, op::sum_to> && R == C::rank) return axes_ == 0;
    else return false;
  }
  /// Whether the reduction's kernel reads its operand from memory (evaluated into a temporary when it is not
  /// memory) instead of fused: sum_to, so that every sum_to of a dtype and rank shares one kernel instantiation
  /// (and only sum_to reduces several axes but not all, one axis at a time, which needs memory anyway). Both
  /// backends' kernels and tx::placement read it.
  static constexpr bool operand_in_memory = std::is_same_v<Op, op::sum_to>;
  /// The same reduction of another operand of the same shape.
  template <class D> reduce_expr<Op, D, R> with_operands(D d) const { return reduce_expr<Op, D, R>(std::move(d), op_, axes_); }
  /// The operand's shape with the reduced axes kept as extent 1 (what the result broadcasts back to).
  shape_t<C::rank> kept_shape() const {
    auto s = child().shape();
    for (std::size_t d = 0; d != C::rank; ++d)
      if (reduces(d)) s[d] = 1;
    return s;
  }
  /// Number of elements each result element reduces.
  index_t reduced_size() const {
    const auto s = child().shape();
    index_t n = 1;
    for (std::size_t d = 0; d != C::rank; ++d)
      if (reduces(d)) n *= s[d];
    return n;
  }

 private:
  detail::tuple<C> c_;
  Op op_;
  mask_t axes_;
  shape_t<R> shape_{};
};

namespace detail {

/// Whether node n is evaluated as its operand (a reduction that reduces nothing); false for every other node.
template <class N> bool passes_through(const N& n) {
  if constexpr (requires { n.passes_through(); }) return n.passes_through();
  else return false;
}

static_assert(sizeof(std::uint32_t) * 8 >= 32, "reduction masks hold 32 axes");

/// Normalises a possibly negative axis; throws shape_error naming the op, the axis and the input shape.
template <std::size_t R>
std::size_t reduction_axis(index_t axis, const shape_t<R>& s, std::string_view what, const texpr::source_location& loc) {
  const index_t r = static_cast<index_t>(R);
  if (axis < -r || axis >= r)
    throw shape_error(at(loc) + "texpr: axis " + std::to_string(axis) + " is out of range for " + std::string(what) +
                      " over an input of rank " + std::to_string(r) + " and shape " + to_string(s));
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

template <class Op, class E> auto reduce_all(E&& e, Op op, bool keep) {
  if constexpr (op::orders_values<Op> && is_complex_v<typename captured_t<E>::value_type>) {
    check_ordered<Op, typename captured_t<E>::value_type>();
    return reduce_all(real_stand_in(std::forward<E>(e)), op, keep);  // after the diagnostic: the only error
  } else {
    using C = captured_t<E>;
    static_assert(C::rank <= 32, "texpr: reductions take operands of rank 32 or less");
    constexpr std::uint32_t all = C::rank == 0 ? 0u : static_cast<std::uint32_t>((std::uint64_t(1) << C::rank) - 1);
    (void)keep;
    return reduce_expr<Op, C, 0>(capture(std::forward<E>(e)), op, all);
  }
}

template <class Op, std::size_t R, class E>
auto reduce_along(E&& e, Op op, index_t axis, const texpr::source_location& loc) {
  if constexpr (op::orders_values<Op> && is_complex_v<typename captured_t<E>::value_type>) {
    check_ordered<Op, typename captured_t<E>::value_type>();
    return reduce_along<Op, R>(real_stand_in(std::forward<E>(e)), op, axis, loc);  // after the diagnostic: the only error
  } else {
    using C = captured_t<E>;
    static_assert(C::rank >= 1, "texpr: an axis reduction needs an operand of rank 1 or more");
    auto c = capture(std::forward<E>(e));
    const std::size_t a = reduction_axis(axis, c.shape(), Op::name, loc);
    return reduce_expr<Op, C, R>(std::move(c), op, std::uint32_t(1) << a);
  }
}

} // namespace detail

/// Lazy reduction by op tag Op over every element (rank-0 result).
template <class Op, operand E> auto reduce(E&& e, Op op = {}) { return detail::reduce_all(std::forward<E>(e), op, false); }
/// Lazy reduction by op tag Op along one axis (negative counts from the end); the result has rank one lower.
template <class Op, operand E>
auto reduce(E&& e, index_t axis, Op op = {}, texpr::source_location loc = texpr::source_location::current()) {
  return detail::reduce_along<Op, detail::captured_t<E>::rank - 1>(std::forward<E>(e), op, axis, loc);
}

#define TEXPR_REDUCTION(NAME)                                                                              \
  /** Lazy NAME over every element (rank-0 result). */                                                     \
  template <operand E> auto NAME(E&& e) { return detail::reduce_all(std::forward<E>(e), op::NAME{}, false); } \
  /** Lazy NAME along one axis (negative counts from the end); the result has rank one lower. */           \
  template <operand E> auto NAME(E&& e, index_t axis, texpr::source_location loc = texpr::source_location::current()) { \
    return detail::reduce_along<op::NAME, detail::captured_t<E>::rank - 1>(std::forward<E>(e), op::NAME{}, axis, loc); \
  }                                                                                                        \
  /** Lazy NAME along one axis, kept with extent 1 (the result broadcasts against the input). */           \
  template <operand E>                                                                                     \
  auto NAME(E&& e, index_t axis, keepdims_t, texpr::source_location loc = texpr::source_location::current()) { \
    return detail::reduce_along<op::NAME, detail::captured_t<E>::rank>(std::forward<E>(e), op::NAME{}, axis, loc); \
  }
TEXPR_REDUCTION_FUNCTIONS(TEXPR_REDUCTION)
#undef TEXPR_REDUCTION

namespace detail {
/// ddof as var and stddev take it: >= 0 (shape_error otherwise, naming the function and the caller's line); one
/// of n or more gives NaN, as NumPy does.
inline index_t checked_ddof(index_t ddof, const char* what, const texpr::source_location& loc) {
  if (ddof < 0)
    throw shape_error(at(loc) + "texpr: " + what + ": ddof " + std::to_string(ddof) + " is negative; it must be >= 0");
  return ddof;
}
} // namespace detail

#define TEXPR_MOMENT_REDUCTION(NAME)                                                                       \
  /** Lazy NAME over every element, dividing by n (rank-0 result). */                                    \
  template <operand E> auto NAME(E&& e) { return detail::reduce_all(std::forward<E>(e), op::NAME{}, false); } \
  /** Lazy NAME along one axis (negative counts from the end), dividing by n - ddof. */                    \
  template <operand E>                                                                                     \
  auto NAME(E&& e, index_t axis, index_t ddof = 0, texpr::source_location loc = texpr::source_location::current()) { \
    op::NAME o;                                                                                            \
    o.ddof = detail::checked_ddof(ddof, #NAME, loc);                                                       \
    return detail::reduce_along<op::NAME, detail::captured_t<E>::rank - 1>(std::forward<E>(e), o, axis, loc); \
  }                                                                                                        \
  /** Lazy NAME along one axis, kept with extent 1, dividing by n - ddof. */                               \
  template <operand E>                                                                                     \
  auto NAME(E&& e, index_t axis, index_t ddof, keepdims_t, texpr::source_location loc = texpr::source_location::current()) { \
    op::NAME o;                                                                                            \
    o.ddof = detail::checked_ddof(ddof, #NAME, loc);                                                       \
    return detail::reduce_along<op::NAME, detail::captured_t<E>::rank>(std::forward<E>(e), o, axis, loc);  \
  }                                                                                                        \
  /** Lazy NAME along one axis, kept with extent 1 (ddof 0). */                                            \
  template <operand E>                                                                                     \
  auto NAME(E&& e, index_t axis, keepdims_t, texpr::source_location loc = texpr::source_location::current()) { \
    return detail::reduce_along<op::NAME, detail::captured_t<E>::rank>(std::forward<E>(e), op::NAME{}, axis, loc); \
  }
/// var: one-pass (Welford) variance; ddof 0 (the default, as NumPy) is the population variance, 1 the sample one.
TEXPR_MOMENT_REDUCTION(var)
/// stddev: the square root of var (torch.std, numpy.std).
TEXPR_MOMENT_REDUCTION(stddev)
#undef TEXPR_MOMENT_REDUCTION

/// e summed to `shape` (NumPy's "unbroadcast", what autograd sends to a broadcast operand): e's leading axes
/// beyond the shape's rank and its axes where the shape has extent 1 are summed. Throws shape_error unless e
/// broadcasts from `shape`.
template <operand E, std::size_t R>
auto sum_to(E&& e, const shape_t<R>& shape, texpr::source_location loc = texpr::source_location::current()) {
  using C = detail::captured_t<E>;
  static_assert(R <= C::rank, "texpr: sum_to cannot raise the rank");
  auto c = detail::capture(std::forward<E>(e));
  const auto s = c.shape();
  std::uint32_t mask = 0;
  for (std::size_t d = 0; d != C::rank; ++d) {
    if constexpr (C::rank > R) {  // (nvcc warns of a comparison with zero when the ranks are equal)
      if (d < C::rank - R) {
        mask |= std::uint32_t(1) << d;
        continue;
      }
    }
    const index_t t = shape[d + R - C::rank];
    if (t == 1 && s[d] != 1) mask |= std::uint32_t(1) << d;
    else if (t != s[d])
      throw shape_error(detail::at(loc) + "texpr: cannot sum an expression of shape " + to_string(s) + " to shape " +
                        to_string(shape));
  }
  return reduce_expr<op::sum_to, C, R>(std::move(c), op::sum_to{}, mask);
}

} // namespace texpr
