// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shapes: extents arrays, shape_error with both shapes in its message, broadcasting rules.
#pragma once

#include <array>
#include <cstddef>
#include "texpr/core/source_location.hpp"
#include <stdexcept>
#include <string>

#include "texpr/core/config.hpp"

namespace texpr {

/// Extents of a rank-R tensor, outermost first (row-major).
template <std::size_t R> using shape_t = std::array<index_t, R>;

/// Thrown for incompatible shapes, bad ranks, bad axes and empty inputs; the message names the shapes and, for
/// errors raised by a named texpr function, starts with the caller's `file:line:`.
struct shape_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace detail {
/// "file:line: ", the prefix of errors raised while building a node at the user's call.
inline std::string at(const texpr::source_location& loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line) + ": ";
}
/// A shape from a braced list of extents (the `{2, 3}` that constructors and layouts accept).
template <std::size_t R> shape_t<R> to_shape(const index_t (&s)[R]) {
  shape_t<R> out{};
  for (std::size_t i = 0; i != R; ++i) out[i] = s[i];
  return out;
}
} // namespace detail

/// Formats a shape the way NumPy prints it: "(3, 4)", "(5,)", "()".
template <std::size_t R>
std::string to_string(const shape_t<R>& s) {
  std::string out = "(";
  for (std::size_t i = 0; i != R; ++i) {  // != : no nvcc warning at rank 0
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (R == 1) out += ",";
  return out + ")";
}

namespace detail {
/// out = a * b; false when the product leaves index_t (every product of extents, strides and byte counts uses it).
constexpr bool mul_fits(index_t a, index_t b, index_t& out) noexcept { return !__builtin_mul_overflow(a, b, &out); }
/// out = a + b; false when the sum leaves index_t.
constexpr bool add_fits(index_t a, index_t b, index_t& out) noexcept { return !__builtin_add_overflow(a, b, &out); }

/// The product of the nonzero extents of s (1 for rank 0), or -1 when it leaves index_t. NumPy bounds this
/// product, not the element count: a (0, 2^62, 2^62) shape has no elements, but its row-major strides overflow.
template <std::size_t R> constexpr index_t nonzero_extent_product(const shape_t<R>& s) noexcept {
  index_t n = 1;
  for (auto e : s)
    if (e != 0 && !mul_fits(n, e, n)) return -1;
  return n;
}

/// The reason s cannot describe elements of `element_bytes` bytes ("" when it can): a negative extent, or a
/// product of its nonzero extents whose byte size does not fit in index_t (so no stride or byte span overflows).
template <std::size_t R> std::string shape_problem(const shape_t<R>& s, std::size_t element_bytes) {
  for (std::size_t d = 0; d != R; ++d)
    if (s[d] < 0) return "invalid: negative extent " + std::to_string(s[d]) + " in dimension " + std::to_string(d);
  index_t bytes = 0;
  const index_t n = nonzero_extent_product(s);
  if (n < 0 || !mul_fits(n, static_cast<index_t>(element_bytes), bytes))
    return "too large: the product of its nonzero extents" +
           std::string(element_bytes > 1 ? " times " + std::to_string(element_bytes) + " bytes" : "") + " overflows int64";
  return {};
}

/// Validates a shape that `what` (a constructor, a layout, a loader) is about to use: throws shape_error
/// "[file:line: ]texpr: <what>: shape (...) is invalid: negative extent ..." or "... is too large: ... overflows
/// int64"; the prefix names the user's call when `loc` is given.
template <std::size_t R>
void check_shape(const shape_t<R>& s, std::size_t element_bytes, const std::string& what,
                 const texpr::source_location* loc = nullptr) {
  const std::string problem = shape_problem(s, element_bytes);
  if (!problem.empty())
    throw shape_error((loc ? at(*loc) : std::string()) + "texpr: " + what + ": shape " + to_string(s) + " is " + problem);
}

/// The byte offsets, from element (0, ..., 0), of the lowest and the highest element a strided layout touches:
/// lo sums (extent - 1) * stride * bytes over the negative strides, hi over the positive ones (both 0 for an empty
/// shape). False when any of these products or sums, or the whole span hi - lo + bytes, leaves index_t.
template <std::size_t R>
constexpr bool strided_byte_span(const shape_t<R>& s, const shape_t<R>& strides, std::size_t element_bytes, index_t& lo,
                                 index_t& hi) noexcept {
  lo = 0;
  hi = 0;
  for (std::size_t d = 0; d != R; ++d)
    if (s[d] == 0) return true;  // no element: nothing is read, whatever the strides
  for (std::size_t d = 0; d != R; ++d) {
    index_t reach = 0;
    if (!mul_fits(s[d] - 1, strides[d], reach)) return false;
    if (!add_fits(reach < 0 ? lo : hi, reach, reach < 0 ? lo : hi)) return false;
  }
  // The whole span, hi - lo plus the last element's bytes, must fit too: pointers into it are subtracted.
  const index_t bytes = static_cast<index_t>(element_bytes);
  index_t span = 0;
  return mul_fits(lo, bytes, lo) && mul_fits(hi, bytes, hi) && !__builtin_sub_overflow(hi, lo, &span) &&
         add_fits(span, bytes, span);
}

/// Throws shape_error naming `what`, the shape and the strides when strided_byte_span overflows.
template <std::size_t R>
void check_strided_span(const shape_t<R>& s, const shape_t<R>& strides, std::size_t element_bytes, const std::string& what) {
  index_t lo = 0, hi = 0;
  if (!strided_byte_span(s, strides, element_bytes, lo, hi))
    throw shape_error("texpr: " + what + ": shape " + to_string(s) + " with strides " + to_string(strides) +
                      " spans more bytes than fit in int64");
}
} // namespace detail

/// Number of elements of a shape (1 for rank 0); throws shape_error when it leaves index_t (constructors reject
/// such shapes first, so this only fires on shapes nothing validated).
template <std::size_t R>
constexpr index_t shape_size(const shape_t<R>& s) {
  index_t n = 1;
  for (auto e : s)
    if (!detail::mul_fits(n, e, n)) throw shape_error("texpr: the element count of shape " + to_string(s) + " overflows int64");
  return n;
}

/// Row-major (C order) strides of a shape, in elements; throws shape_error when one leaves index_t.
template <std::size_t R>
constexpr shape_t<R> contiguous_strides(const shape_t<R>& s) {
  shape_t<R> st{};
  index_t acc = 1;
  for (std::size_t i = R; i-- > 0;) {
    st[i] = acc;
    if (!detail::mul_fits(acc, s[i], acc))
      throw shape_error("texpr: the row-major strides of shape " + to_string(s) + " overflow int64");
  }
  return st;
}

/// Result shape of broadcasting a and b (NumPy rules); throws shape_error naming both shapes.
template <std::size_t RA, std::size_t RB>
shape_t<(RA > RB ? RA : RB)> broadcast_shapes(const shape_t<RA>& a, const shape_t<RB>& b, const char* what = "broadcast") {
  constexpr std::size_t R = RA > RB ? RA : RB;
  shape_t<R> out{};
  for (std::size_t i = 0; i != R; ++i) {
    // Align trailing dimensions; missing leading ones count as 1.
    const index_t ea = i + RA + 1 > R ? a[i + RA - R] : 1;
    const index_t eb = i + RB + 1 > R ? b[i + RB - R] : 1;
    if (ea == eb || eb == 1) out[i] = ea;
    else if (ea == 1) out[i] = eb;
    else
      throw shape_error(std::string("texpr: incompatible shapes for ") + what + ": LHS shape = " + to_string(a) +
                        " RHS shape = " + to_string(b));
  }
  const std::string problem = detail::shape_problem(out, 1);
  if (!problem.empty())
    throw shape_error(std::string("texpr: shapes for ") + what + ": LHS shape = " + to_string(a) + " RHS shape = " +
                      to_string(b) + " broadcast to " + to_string(out) + ", which is " + problem);
  return out;
}

/// Checks that `from` broadcasts to exactly `to`; throws shape_error otherwise.
template <std::size_t RF, std::size_t RT>
void check_broadcastable(const shape_t<RF>& from, const shape_t<RT>& to, const char* what) {
  static_assert(RF <= RT, "texpr: an operand cannot have a higher rank than the result it broadcasts to");
  for (std::size_t i = 0; i != RF; ++i) {
    const index_t f = from[i], t = to[i + RT - RF];
    if (f != t && f != 1)
      throw shape_error(std::string("texpr: cannot broadcast ") + what + " of shape " + to_string(from) +
                        " to shape " + to_string(to));
  }
}

/// Validates an axis against a rank; throws shape_error naming the axis, the rank and the shape.
template <std::size_t R>
void check_axis(std::size_t axis, const shape_t<R>& s, const char* what) {
  if (axis >= R)
    throw shape_error(std::string("texpr: axis ") + std::to_string(axis) + " is out of range for " + what +
                      " of rank " + std::to_string(R) + " and shape " + to_string(s));
}

} // namespace texpr
