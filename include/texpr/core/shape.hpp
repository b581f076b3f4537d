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

/// Number of elements of a shape (1 for rank 0).
template <std::size_t R>
constexpr index_t shape_size(const shape_t<R>& s) {
  index_t n = 1;
  for (auto e : s) n *= e;
  return n;
}

/// Row-major (C order) strides of a shape, in elements.
template <std::size_t R>
constexpr shape_t<R> contiguous_strides(const shape_t<R>& s) {
  shape_t<R> st{};
  index_t acc = 1;
  for (std::size_t i = R; i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
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
