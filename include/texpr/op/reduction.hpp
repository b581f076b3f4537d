// Reduction op tags: identity, combine and finalize, shared by every backend.
#pragma once

#include <limits>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/detail/math.hpp"

namespace texpr::op {

/// Accumulator of a reduction over T: float for the 16-bit floats, T otherwise (integers wrap).
template <class T> using accumulator_t = compute_t<T>;

/// Sum; integers accumulate in their own type with two's-complement wrap-around. Floats start from -0, the
/// exact IEEE identity (-0 + x == x for every x, -0 included), so a sum of negative zeros is -0; empty is +0.
struct sum {
  static constexpr std::string_view name = "sum";
  static constexpr bool needs_nonempty = false;
  template <class A> TEXPR_HOST_DEVICE static constexpr A identity() {
    if constexpr (std::is_integral_v<A>) return A(0);
    else return -A(0);
  }
  template <class A> TEXPR_HOST_DEVICE static constexpr A combine(A a, A b) {
    if constexpr (std::is_integral_v<A>) return detail::wrap_add(a, b);
    else return a + b;
  }
  template <class A> TEXPR_HOST_DEVICE static constexpr A finalize(A a, index_t n) { return n == 0 ? A(0) : a; }
};
/// Arithmetic mean, floating dtypes only; the mean of zero elements is NaN (0/0), as in NumPy.
struct mean {
  static constexpr std::string_view name = "mean";
  static constexpr bool needs_nonempty = false;
  template <class A> TEXPR_HOST_DEVICE static constexpr A identity() { return -A(0); }
  template <class A> TEXPR_HOST_DEVICE static constexpr A combine(A a, A b) { return a + b; }
  template <class A> TEXPR_HOST_DEVICE static constexpr A finalize(A a, index_t n) { return a / static_cast<A>(n); }
};
/// Product; integers wrap around.
struct prod {
  static constexpr std::string_view name = "prod";
  static constexpr bool needs_nonempty = false;
  template <class A> TEXPR_HOST_DEVICE static constexpr A identity() { return A(1); }
  template <class A> TEXPR_HOST_DEVICE static constexpr A combine(A a, A b) {
    if constexpr (std::is_integral_v<A>) return detail::wrap_mul(a, b);
    else return a * b;
  }
  template <class A> TEXPR_HOST_DEVICE static constexpr A finalize(A a, index_t) { return a; }
};
/// Maximum; NaN propagates (as numpy.max); reducing zero elements throws shape_error.
struct max {
  static constexpr std::string_view name = "max";
  static constexpr bool needs_nonempty = true;
  template <class A> TEXPR_HOST_DEVICE static constexpr A identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  template <class A> TEXPR_HOST_DEVICE static constexpr A combine(A a, A b) {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return b > a ? b : a;
  }
  template <class A> TEXPR_HOST_DEVICE static constexpr A finalize(A a, index_t) { return a; }
};
/// Minimum; NaN propagates (as numpy.min); reducing zero elements throws shape_error.
struct min {
  static constexpr std::string_view name = "min";
  static constexpr bool needs_nonempty = true;
  template <class A> TEXPR_HOST_DEVICE static constexpr A identity() {
    if constexpr (std::numeric_limits<A>::has_infinity) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  template <class A> TEXPR_HOST_DEVICE static constexpr A combine(A a, A b) {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
  template <class A> TEXPR_HOST_DEVICE static constexpr A finalize(A a, index_t) { return a; }
};

} // namespace texpr::op
