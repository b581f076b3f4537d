// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy scans along one axis (op/scan.hpp's TEXPR_SCAN_FUNCTIONS): the result has the operand's shape, element i
// along the axis the op over elements 0..i (or i..n-1 for a reversed scan). The operand is read fused, as a
// reduction reads its operand: no temporary for an elementwise operand.
#pragma once

#include <cstddef>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
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

namespace detail {
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

} // namespace texpr
