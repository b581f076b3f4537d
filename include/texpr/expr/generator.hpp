// Lazy constants and generators: tx::zeros, ones, full, zeros_like, ones_like (a value broadcast to a shape, no
// memory until assigned) and tx::arange (values from the element index, fused into whatever reads them).
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/generator.hpp"

namespace texpr {

/// A generator node: Op's source<T> over a shape, on Backend (where it is evaluated and what it can be combined with).
template <class Op, class T, std::size_t R, class Backend> class generator_expr : public expr_base<generator_expr<Op, T, R, Backend>> {
 public:
  using texpr_node = void;
  using op_type = Op;
  using value_type = T;
  using kernel_dtype = T;
  using backend = Backend;
  using children = detail::type_list<>;
  static constexpr std::size_t rank = R;
  using source_type = typename Op::template source<T>;  ///< The per-element function.

  /// Values src(i) for the row-major index i over `shape`.
  generator_expr(source_type src, const shape_t<R>& shape) : src_(src), shape_(shape) {}
  /// The per-element function.
  source_type source() const { return src_; }
  /// The shape.
  const shape_t<R>& shape() const { return shape_; }
  /// No operands.
  const detail::tuple<>& operands() const { return detail::no_operands(); }

 private:
  source_type src_;
  shape_t<R> shape_{};
};

namespace detail {
template <std::size_t R> void check_extents(const shape_t<R>& s, const source_location& loc) {
  for (auto e : s)
    if (e < 0) throw shape_error(at(loc) + "texpr: negative extent in shape " + to_string(s));
}
} // namespace detail

/// A tensor of `value` in every element of `shape`, on Backend: lazy (no memory) until assigned.
template <class Backend = host, class T, std::size_t R>
auto full(const shape_t<R>& shape, T value, source_location loc = source_location::current()) {
  static_assert(backend_tag<Backend>, "texpr: full<Backend> needs tx::host or tx::cuda");
  detail::check_extents(shape, loc);
  return constant_expr<T, R, Backend>(value, shape);
}
/// full with the shape written as a braced list: tx::full({2, 3}, 1.5f).
template <class Backend = host, class T, std::size_t R>
auto full(const index_t (&shape)[R], T value, source_location loc = source_location::current()) {
  return full<Backend>(detail::to_shape(shape), value, loc);
}
/// Zeros of dtype T and `shape` on Backend: lazy (no memory) until assigned.
template <class T, class Backend = host, std::size_t R>
auto zeros(const shape_t<R>& shape, source_location loc = source_location::current()) {
  return full<Backend>(shape, T(0), loc);
}
/// zeros with the shape written as a braced list: tx::zeros<float>({2, 3}).
template <class T, class Backend = host, std::size_t R>
auto zeros(const index_t (&shape)[R], source_location loc = source_location::current()) {
  return full<Backend>(detail::to_shape(shape), T(0), loc);
}
/// Ones of dtype T and `shape` on Backend: lazy (no memory) until assigned.
template <class T, class Backend = host, std::size_t R>
auto ones(const shape_t<R>& shape, source_location loc = source_location::current()) {
  return full<Backend>(shape, T(1), loc);
}
/// ones with the shape written as a braced list: tx::ones<float>({2, 3}).
template <class T, class Backend = host, std::size_t R>
auto ones(const index_t (&shape)[R], source_location loc = source_location::current()) {
  return full<Backend>(detail::to_shape(shape), T(1), loc);
}
/// Zeros with e's dtype, shape and backend.
template <operand E> auto zeros_like(const E& e) {
  using N = detail::captured_t<const E&>;
  using T = typename N::value_type;
  return constant_expr<T, N::rank, typename N::backend>(T(0), e.shape());
}
/// Ones with e's dtype, shape and backend.
template <operand E> auto ones_like(const E& e) {
  using N = detail::captured_t<const E&>;
  using T = typename N::value_type;
  return constant_expr<T, N::rank, typename N::backend>(T(1), e.shape());
}

/// begin, begin + step, ... while below end (above, for a negative step), of dtype T on Backend; lazy (computed
/// where it is read). A zero step throws shape_error.
template <class T, class Backend = host>
auto arange(T begin, T end, T step, source_location loc = source_location::current()) {
  static_assert(backend_tag<Backend>, "texpr: arange<T, Backend> needs tx::host or tx::cuda");
  const double b = static_cast<double>(detail::widen(begin)), e = static_cast<double>(detail::widen(end)),
               s = static_cast<double>(detail::widen(step));
  if (s == 0) throw shape_error(detail::at(loc) + "texpr: arange step must not be 0");
  const double span = (e - b) / s;
  index_t n = span > 0 ? static_cast<index_t>(span) : 0;
  if (static_cast<double>(n) < span) ++n;  // ceil
  using S = typename op::arange::source<T>;
  using W = typename S::step_t;
  return generator_expr<op::arange, T, 1, Backend>(S{static_cast<W>(detail::widen(begin)), static_cast<W>(detail::widen(step))},
                                                   shape_t<1>{n});
}
/// 0, 1, ..., n - 1 of dtype T on Backend; lazy.
template <class T, class Backend = host> auto arange(index_t n, source_location loc = source_location::current()) {
  if (n < 0) throw shape_error(detail::at(loc) + "texpr: arange of a negative length " + std::to_string(n));
  using S = typename op::arange::source<T>;
  return generator_expr<op::arange, T, 1, Backend>(S{typename S::step_t(0), typename S::step_t(1)}, shape_t<1>{n});
}

} // namespace texpr
