// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy constants and generators: tx::zeros, ones, full, zeros_like, ones_like (a value broadcast to a shape, no
// memory until assigned) and tx::arange (values from the element index, fused into whatever reads them).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
/// A generator's shape, as every constructor of a shape checks it (extents >= 0, element and byte counts in int64).
template <class T, std::size_t R> void check_extents(const shape_t<R>& s, const char* what, const source_location& loc) {
  check_shape(s, sizeof(T), what, &loc);
}
} // namespace detail

/// A tensor of `value` in every element of `shape`, on Backend: lazy (no memory) until assigned.
template <class Backend = host, class T, std::size_t R>
auto full(const shape_t<R>& shape, T value, source_location loc = source_location::current()) {
  static_assert(backend_tag<Backend>, "texpr: full<Backend> needs tx::host or tx::cuda");
  detail::check_extents<T>(shape, "full", loc);
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
/// where it is read). Throws shape_error for a zero step, a non-finite begin, end or step, and a count (or its
/// byte size) that does not fit in int64. Integer counts are exact; floating ones are ceil((end - begin) / step).
template <class T, class Backend = host>
auto arange(T begin, T end, T step, source_location loc = source_location::current()) {
  static_assert(backend_tag<Backend>, "texpr: arange<T, Backend> needs tx::host or tx::cuda");
  using S = typename op::arange::source<T>;
  using W = typename S::step_t;
  const auto wb = detail::widen(begin), we = detail::widen(end), ws = detail::widen(step);
  const auto text = [](auto v) {
    if constexpr (std::is_floating_point_v<decltype(v)>) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.10g", static_cast<double>(v));
      return std::string(buf);
    } else {
      return std::to_string(v);
    }
  };
  const auto fail = [&](const std::string& why) {
    return shape_error(detail::at(loc) + "texpr: " + why + " in arange(" + text(wb) + ", " + text(we) + ", " + text(ws) + ")");
  };
  if (ws == 0) throw fail("arange step must not be 0");
  index_t n = 0;
  if constexpr (is_floating_v<T>) {
    const double b = static_cast<double>(wb), e = static_cast<double>(we), s = static_cast<double>(ws);
    if (!std::isfinite(b) || !std::isfinite(e) || !std::isfinite(s)) throw fail("begin, end and step must be finite");
    const double span = std::ceil((e - b) / s);
    // 2^63 is the first double past index_t; a NaN or infinite span (finite ends, tiny step) fails the test too.
    if (!(span < 9223372036854775808.0)) throw fail("the element count does not fit in int64");
    n = span > 0 ? static_cast<index_t>(span) : 0;
  } else {
    // Exact, in unsigned arithmetic: end - begin and -step may leave int64 (begin = INT64_MIN, step = INT64_MIN).
    using U = std::uint64_t;
    const auto b = static_cast<std::int64_t>(wb), e = static_cast<std::int64_t>(we), s = static_cast<std::int64_t>(ws);
    if (s > 0 ? e > b : e < b) {
      const U distance = s > 0 ? U(e) - U(b) : U(b) - U(e);
      const U magnitude = s > 0 ? U(s) : U(0) - U(s);
      const U count = (distance - 1) / magnitude + 1;
      if (count > U(INT64_MAX)) throw fail("the element count does not fit in int64");
      n = static_cast<index_t>(count);
    }
  }
  detail::check_shape(shape_t<1>{n}, sizeof(T), "arange", &loc);
  return generator_expr<op::arange, T, 1, Backend>(S{static_cast<W>(wb), static_cast<W>(ws)}, shape_t<1>{n});
}
/// 0, 1, ..., n - 1 of dtype T on Backend; lazy.
template <class T, class Backend = host> auto arange(index_t n, source_location loc = source_location::current()) {
  if (n < 0) throw shape_error(detail::at(loc) + "texpr: arange of a negative length " + std::to_string(n));
  detail::check_shape(shape_t<1>{n}, sizeof(T), "arange", &loc);
  using S = typename op::arange::source<T>;
  return generator_expr<op::arange, T, 1, Backend>(S{typename S::step_t(0), typename S::step_t(1)}, shape_t<1>{n});
}

} // namespace texpr
