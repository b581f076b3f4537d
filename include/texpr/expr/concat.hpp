// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy concatenation: tx::concat(axis, a, b, ...) joins operands of one rank and dtype whose extents agree on
// every axis but `axis`. Evaluation writes each operand into its slice of the result (one fused pass each).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/layout.hpp"

namespace texpr {

/// Concatenation node: operands C... joined along one axis.
template <class... C> class concat_expr : public expr_base<concat_expr<C...>> {
  using first = std::tuple_element_t<0, std::tuple<C...>>;
  static_assert(((C::rank == first::rank) && ...), "texpr: concat operands must have the same rank");
  static_assert(first::rank >= 1, "texpr: concat joins operands of rank 1 or more");

 public:
  using texpr_node = void;
  using op_type = op::concat;
  using children = detail::type_list<C...>;
  using value_type = typename first::value_type;
  using kernel_dtype = value_type;
  using backend = typename detail::common_backend<typename C::backend...>::type;
  static constexpr std::size_t rank = first::rank;

  /// Joins c... along `axis` (already normalised); throws shape_error naming every shape when the other extents
  /// differ or the joined shape is not representable (its extents' sum or byte size overflows int64).
  concat_expr(std::size_t axis, C... c, const texpr::source_location* loc = nullptr) : c_{{std::move(c)}...}, axis_(axis) {
    const auto shapes = shapes_of(std::index_sequence_for<C...>{});
    shape_ = shapes[0];
    shape_[axis] = 0;
    bool overflow = false;
    for (std::size_t i = 0; i != shapes.size(); ++i) {
      for (std::size_t d = 0; d != rank; ++d)
        if (d != axis && shapes[i][d] != shapes[0][d]) {
          std::string all;
          for (const auto& s : shapes) all += (all.empty() ? "" : ", ") + to_string(s);
          throw shape_error((loc ? detail::at(*loc) : std::string()) + "texpr: concat along axis " + std::to_string(axis) +
                            " needs equal extents on the other axes; operand shapes are " + all);
        }
      offsets_[i] = shape_[axis];
      overflow = overflow || !detail::add_fits(shape_[axis], shapes[i][axis], shape_[axis]);
    }
    const std::string problem = overflow ? std::string() : detail::shape_problem(shape_, sizeof(value_type));
    if (overflow || !problem.empty()) {
      std::string all;
      for (const auto& s : shapes) all += (all.empty() ? "" : ", ") + to_string(s);
      throw shape_error((loc ? detail::at(*loc) : std::string()) + "texpr: concat along axis " + std::to_string(axis) +
                        " of operand shapes " + all + " gives a shape that is " +
                        (overflow ? "too large: its extent along the axis overflows int64" : problem));
    }
  }
  /// The result shape.
  const shape_t<rank>& shape() const { return shape_; }
  /// The operands, in order.
  const detail::tuple<C...>& operands() const { return c_; }
  /// The axis they are joined along.
  std::size_t axis() const { return axis_; }
  /// Where operand i starts along the axis.
  index_t offset(std::size_t i) const { return offsets_[i]; }
  /// The shape of operand i's slice of the result (its own shape): evaluation writes it there, through the
  /// result's strides, so it is strided unless the axis is the first of extent > 1 (what tx::placement reports).
  shape_t<rank> slice_shape(std::size_t i) const {
    auto s = shape_;
    s[axis_] = (i + 1 < sizeof...(C) ? offsets_[i + 1] : shape_[axis_]) - offsets_[i];
    return s;
  }
  /// The same concatenation of other operands of the same shapes.
  template <class... D> concat_expr<D...> with_operands(D... d) const { return concat_expr<D...>(axis_, std::move(d)...); }

 private:
  template <std::size_t... I> std::array<shape_t<rank>, sizeof...(C)> shapes_of(std::index_sequence<I...>) const {
    return {detail::get<I>(c_).shape()...};
  }
  detail::tuple<C...> c_;
  std::size_t axis_;
  shape_t<rank> shape_{};
  std::array<index_t, sizeof...(C)> offsets_{};
};

/// Lazy concatenation of e... along `axis` (negative counts from the end), as numpy.concatenate / torch.cat.
/// The operands must share rank, dtype and backend; extents on the other axes must be equal (shape_error names
/// all shapes otherwise).
template <operand E0, operand... E>
auto concat(index_t axis, E0&& e0, E&&... e) {
  using C0 = detail::captured_t<E0>;
  (detail::check_same_dtype<typename C0::value_type, typename detail::captured_t<E>::value_type>(), ...);
  (detail::check_same_backend<typename C0::backend, typename detail::captured_t<E>::backend>(), ...);
  constexpr index_t r = static_cast<index_t>(C0::rank);
  if (axis < -r || axis >= r)
    throw shape_error("texpr: axis " + std::to_string(axis) + " is out of range for concat of operands of rank " + std::to_string(r));
  const auto a = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
  return concat_expr<C0, detail::captured_t<E>...>(a, detail::capture(std::forward<E0>(e0)), detail::capture(std::forward<E>(e))...);
}

} // namespace texpr
