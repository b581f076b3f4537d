// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reduction op tags. A reduction folds values into an accumulator: identity(), lift(x, i) of an element x at
// index i of the reduced range, combine(a, b) (associative, so any grouping gives the result up to rounding),
// and finalize(a, n) into the result dtype. The functions are const members so that an op may carry parameters.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// How a reduction's combine of a running value with the next element is the same arithmetic in every lane, so
/// that a backend may keep vectors of running values (host lanes): each reduction declares its own (`none`: the
/// scalar path). add, mul, max and min on numbers (max and min with NaN winning); moments a Welford step,
/// logsumexp a rescaled sum, argmax and argmin a value with its position; any and all are max and min over 0 and 1.
enum class vector_fold { none, add, mul, max, min, moments, logsumexp, argmax, argmin };

/// Base of reduction op tags: the result dtype is the input's, the accumulator its compute type.
struct reduction_op {
  static constexpr kind category = kind::computed;  ///< Evaluated by a reduction kernel.
  static constexpr bool needs_nonempty = false;     ///< True when zero elements have no result (max, min).
  static constexpr bool decomposable = true;        ///< Reducing axes one after another gives the same result.
  static constexpr vector_fold fold = vector_fold::none;  ///< The lane form of combine (see vector_fold).
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
  static constexpr auto dtypes = numeric + complex_dtypes;       ///< Defined on.
  static constexpr vector_fold fold = vector_fold::add;  ///< Lanes add.
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
  static constexpr auto dtypes = numeric;             ///< Gradients only (none through complex yet).
};

/// Arithmetic mean, floating dtypes only; the mean of zero elements is NaN (0/0), as in NumPy.
struct mean : reduction_op {
  static constexpr std::string_view name = "mean";  ///< Shown by tx::placement.
  static constexpr auto dtypes = floating + complex_dtypes;          ///< Integers: cast first (texpr never promotes implicitly).
  static constexpr vector_fold fold = vector_fold::add;  ///< Lanes add.
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const { return -A(0); }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const { return a + b; }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t n) const {
    return detail::narrow<R>(a / static_cast<A>(n));
  }
};

/// Product; integers wrap around.
struct prod : reduction_op {
  static constexpr std::string_view name = "prod";  ///< Shown by tx::placement.
  static constexpr auto dtypes = numeric + complex_dtypes;  ///< Defined on.
  static constexpr vector_fold fold = vector_fold::mul;  ///< Lanes multiply.
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
  static constexpr bool orders = true;            ///< Not defined on complex.
  static constexpr auto dtypes = numeric;          ///< Defined on.
  static constexpr bool needs_nonempty = true;     ///< No identity a user could expect.
  static constexpr vector_fold fold = vector_fold::max;  ///< Lanes select the larger (NaN wins).
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
  static constexpr bool orders = true;            ///< Not defined on complex.
  static constexpr auto dtypes = numeric;          ///< Defined on.
  static constexpr bool needs_nonempty = true;     ///< No identity a user could expect.
  static constexpr vector_fold fold = vector_fold::min;  ///< Lanes select the smaller (NaN wins).
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

/// An arg-reduction's accumulator: the best value so far and its index in the reduced range.
template <class C> struct indexed {
  C value;        ///< The candidate's value (in the compute type).
  index_t index;  ///< Its position along the reduced axis (row-major over all axes for a full reduction).
};

/// Shared by argmax and argmin: the first index of the best value; NaN wins over numbers (as NumPy), the first NaN.
template <bool Max> struct arg_reduction : reduction_op {
  static constexpr auto dtypes = numeric;        ///< Defined on.
  static constexpr bool needs_nonempty = true;   ///< No index to return for zero elements.
  static constexpr bool decomposable = false;    ///< An index along one axis is not one along two.
  static constexpr vector_fold fold = Max ? vector_fold::argmax : vector_fold::argmin;  ///< Lanes keep value and step.
  template <class T> using accumulator = indexed<compute_t<T>>;
  template <class T> using result = std::int64_t;  ///< Indices are int64, as in NumPy and PyTorch.
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const {
    using C = decltype(A::value);
    // The worst value at the last index: any element beats it, ties included (a smaller index wins).
    if constexpr (std::numeric_limits<C>::has_infinity)
      return A{Max ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity(), std::numeric_limits<index_t>::max()};
    else return A{Max ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max(), std::numeric_limits<index_t>::max()};
  }
  template <class A, class V> TEXPR_HOST_DEVICE constexpr A lift(V x, index_t i) const {
    return A{static_cast<decltype(A::value)>(x), i};
  }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const {
    const bool na = detail::is_nan(a.value), nb = detail::is_nan(b.value);
    if (na || nb) {
      if (na && nb) return a.index <= b.index ? a : b;
      return na ? a : b;
    }
    const bool b_better = Max ? b.value > a.value : b.value < a.value;
    const bool a_better = Max ? a.value > b.value : a.value < b.value;
    if (b_better) return b;
    if (a_better) return a;
    return a.index <= b.index ? a : b;  // a tie: the first index
  }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t) const { return static_cast<R>(a.index); }
};

/// Index of the largest element (the first on ties; NaN wins, as numpy.argmax); int64 result.
struct argmax : arg_reduction<true> {
  static constexpr std::string_view name = "argmax";  ///< Shown by tx::placement.
  static constexpr bool orders = true;            ///< Not defined on complex.
};
/// Index of the smallest element (the first on ties; NaN wins, as numpy.argmin); int64 result.
struct argmin : arg_reduction<false> {
  static constexpr std::string_view name = "argmin";  ///< Shown by tx::placement.
  static constexpr bool orders = true;            ///< Not defined on complex.
};

/// Welford's accumulator: the count, mean and sum of squared deviations of the elements seen so far.
template <class C> struct moments {
  C mean;     ///< Mean of the elements seen.
  C m2;       ///< Sum of their squared deviations from that mean.
  index_t n;  ///< How many.
};

/// Shared by var and stddev: one pass, Welford's update and Chan et al.'s merge of partial results, so data with
/// a large mean keep their precision (no E[x^2] - E[x]^2 cancellation). Divides by n - ddof; NaN when n <= ddof.
template <bool Sqrt> struct moment_reduction : reduction_op {
  static constexpr auto dtypes = floating;      ///< Integers: cast first (no implicit promotion).
  static constexpr bool decomposable = false;   ///< The variance of variances is not the variance.
  static constexpr vector_fold fold = vector_fold::moments;  ///< Lanes take a Welford step.
  /// double for every dtype: a float running mean rounds at each update (to 1/16 near 1e6), which costs data
  /// with a large mean whole digits of their variance.
  template <class T> using accumulator = moments<double>;
  index_t ddof = 0;  ///< Delta degrees of freedom: 0 gives the population variance (NumPy), 1 the sample one.
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const { return A{0, 0, 0}; }
  template <class A, class V> TEXPR_HOST_DEVICE constexpr A lift(V x, index_t) const {
    return A{static_cast<decltype(A::mean)>(x), 0, 1};
  }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const {
    using C = decltype(A::mean);
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    const index_t n = a.n + b.n;
    const C delta = b.mean - a.mean;
    const C fb = static_cast<C>(b.n) / static_cast<C>(n);
    return A{a.mean + delta * fb, a.m2 + b.m2 + delta * delta * static_cast<C>(a.n) * fb, n};
  }
  template <class R, class A> TEXPR_HOST_DEVICE R finalize(A a, index_t) const {
    using C = decltype(A::mean);
    const C v = a.n > ddof ? a.m2 / static_cast<C>(a.n - ddof) : std::numeric_limits<C>::quiet_NaN();
    if constexpr (Sqrt) return detail::narrow<R>(detail::sqrt_(v));
    else return detail::narrow<R>(v);
  }
};

/// Variance, one pass (Welford); tx::var(x, axis, ddof) divides by n - ddof (default 0, as NumPy).
struct var : moment_reduction<false> {
  static constexpr std::string_view name = "var";  ///< Shown by tx::placement.
};
/// Standard deviation: the square root of var.
struct stddev : moment_reduction<true> {
  static constexpr std::string_view name = "stddev";  ///< Shown by tx::placement.
};

/// logsumexp's accumulator: the largest element so far and the sum of exp(x - max) over the elements.
template <class C> struct scaled_sum {
  C max;  ///< Largest element seen (-inf before any).
  C sum;  ///< Sum of exp(x - max).
};

/// log(sum(exp(x))) in one pass without overflow: the running sum is rescaled whenever the maximum grows (one
/// exp per element, nothing materialised). NaN propagates; +inf gives +inf; empty or all -inf gives -inf.
struct logsumexp : reduction_op {
  static constexpr std::string_view name = "logsumexp";  ///< Shown by tx::placement.
  static constexpr auto dtypes = floating;               ///< Defined on.
  static constexpr vector_fold fold = vector_fold::logsumexp;  ///< Lanes rescale with one exp.
  template <class T> using accumulator = scaled_sum<compute_t<T>>;
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const {
    using C = decltype(A::max);
    return A{-std::numeric_limits<C>::infinity(), 0};
  }
  template <class A, class V> TEXPR_HOST_DEVICE constexpr A lift(V x, index_t) const {
    return A{static_cast<decltype(A::max)>(x), 1};
  }
  template <class A> TEXPR_HOST_DEVICE A combine(A a, A b) const {
    using C = decltype(A::max);
    if (detail::is_nan(a.max) || detail::is_nan(b.max)) return A{std::numeric_limits<C>::quiet_NaN(), 1};
    if (b.max > a.max) {
      const A t = a;
      a = b;
      b = t;
    }
    if (b.sum == 0) return a;                                 // b is empty
    if (b.max == a.max) return A{a.max, a.sum + b.sum};       // equal maxima (both infinite included)
    return A{a.max, a.sum + b.sum * detail::exp_(b.max - a.max)};
  }
  template <class R, class A> TEXPR_HOST_DEVICE R finalize(A a, index_t) const {
    if (a.sum == 0) return detail::narrow<R>(a.max);  // empty: -inf
    return detail::narrow<R>(a.max + detail::log_(a.sum));
  }
};

/// Shared by any and all: bool in, bool out, a bool accumulator; empty gives the identity (all of nothing is true).
template <bool Any> struct logical_reduction : reduction_op {
  static constexpr auto dtypes = boolean;  ///< Defined on bool (compare first: `tx::any(x > 0)`).
  static constexpr vector_fold fold = Any ? vector_fold::max : vector_fold::min;  ///< Or and and over 0 and 1.
  template <class T> using accumulator = bool;
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const { return !Any; }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A a, A b) const { return Any ? (a || b) : (a && b); }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t) const { return static_cast<R>(a); }
  /// The tests' reference over values v (0 or 1), from the definition (not from combine).
  template <class Range> static long double reference(const Range& v) {
    for (long double x : v)
      if ((x != 0) == Any) return Any ? 1 : 0;
    return Any ? 0 : 1;
  }
};

/// True when any element is true (numpy.any); false over zero elements.
struct any : logical_reduction<true> {
  static constexpr std::string_view name = "any";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "true when any element is true (numpy.any); false over zero elements";
};
/// True when every element is true (numpy.all); true over zero elements.
struct all : logical_reduction<false> {
  static constexpr std::string_view name = "all";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "true when every element is true (numpy.all); true over zero elements";
};

} // namespace texpr::op

/// The reductions that have tx:: functions of their name (over everything, along an axis, keeping it), which
/// expr/reduction.hpp generates from this list; var and stddev (with ddof) and sum_to (a shape) have their own.
#define TEXPR_REDUCTION_FUNCTIONS(X) X(sum) X(mean) X(max) X(min) X(prod) X(argmax) X(argmin) X(logsumexp) X(any) X(all)

namespace texpr::detail {
/// Ops whose nodes are reductions.
template <class Op> concept reduction_op_tag = std::is_base_of_v<op::reduction_op, Op>;
} // namespace texpr::detail
