// Reduction op tags. A reduction folds values into an accumulator: identity(), lift(x, i) of an element x at
// index i of the reduced range, combine(a, b) (associative, so any grouping gives the result up to rounding),
// and finalize(a, n) into the result dtype. The functions are const members so that an op may carry parameters.
#pragma once

#include <limits>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of reduction op tags: the result dtype is the input's, the accumulator its compute type.
struct reduction_op {
  static constexpr kind category = kind::computed;  ///< Evaluated by a reduction kernel.
  static constexpr bool needs_nonempty = false;     ///< True when zero elements have no result (max, min).
  static constexpr bool decomposable = true;        ///< Reducing axes one after another gives the same result.
  /// The accumulator for input dtype T (float for the 16-bit floats; integers wrap in their own type).
  template <class T> using accumulator = compute_t<T>;
  /// The result dtype for input dtype T.
  template <class T> using result = T;
  /// Element x (already widened) at index i of the reduced range, as an accumulator.
  template <class A, class V> TEXPR_HOST_DEVICE constexpr A lift(V x, index_t) const { return static_cast<A>(x); }
};

/// Sum; integers accumulate in their own type with two's-complement wrap-around. Floats start from -0, the
/// exact IEEE identity (-0 + x == x for every x, -0 included), so a sum of negative zeros is -0; empty is +0.
struct sum : reduction_op {
  static constexpr std::string_view name = "sum";  ///< Shown by tx::placement.
  static constexpr auto dtypes = numeric;          ///< Defined on.
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const {
    if constexpr (std::is_integral_v<A>) return A(0);
    else return -A(0);
  }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const {
    if constexpr (std::is_integral_v<A>) return detail::wrap_add(a, b);
    else return a + b;
  }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t n) const {
    return detail::narrow<R>(n == 0 ? A(0) : a);
  }
};

/// The gradient's sum back to an operand's shape (autograd's "unbroadcast"): a sum over the broadcast axes.
struct sum_to : sum {
  static constexpr std::string_view name = "sum_to";  ///< Shown by tx::placement.
};

/// Arithmetic mean, floating dtypes only; the mean of zero elements is NaN (0/0), as in NumPy.
struct mean : reduction_op {
  static constexpr std::string_view name = "mean";  ///< Shown by tx::placement.
  static constexpr auto dtypes = floating;          ///< Integers: cast first (texpr never promotes implicitly).
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const { return -A(0); }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const { return a + b; }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t n) const {
    return detail::narrow<R>(a / static_cast<A>(n));
  }
};

/// Product; integers wrap around.
struct prod : reduction_op {
  static constexpr std::string_view name = "prod";  ///< Shown by tx::placement.
  static constexpr auto dtypes = numeric;           ///< Defined on.
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const { return A(1); }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const {
    if constexpr (std::is_integral_v<A>) return detail::wrap_mul(a, b);
    else return a * b;
  }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t) const { return detail::narrow<R>(a); }
};

/// Maximum; NaN propagates (as numpy.max); reducing zero elements throws shape_error.
struct max : reduction_op {
  static constexpr std::string_view name = "max";  ///< Shown by tx::placement.
  static constexpr auto dtypes = numeric;          ///< Defined on.
  static constexpr bool needs_nonempty = true;     ///< No identity a user could expect.
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const {
    if constexpr (std::numeric_limits<A>::has_infinity) return -std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::lowest();
  }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return b > a ? b : a;
  }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t) const { return detail::narrow<R>(a); }
};

/// Minimum; NaN propagates (as numpy.min); reducing zero elements throws shape_error.
struct min : reduction_op {
  static constexpr std::string_view name = "min";  ///< Shown by tx::placement.
  static constexpr auto dtypes = numeric;          ///< Defined on.
  static constexpr bool needs_nonempty = true;     ///< No identity a user could expect.
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const {
    if constexpr (std::numeric_limits<A>::has_infinity) return std::numeric_limits<A>::infinity();
    else return std::numeric_limits<A>::max();
  }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t) const { return detail::narrow<R>(a); }
};

} // namespace texpr::op

namespace texpr::detail {
/// Ops whose nodes are reductions.
template <class Op> concept reduction_op_tag = std::is_base_of_v<op::reduction_op, Op>;
} // namespace texpr::detail
