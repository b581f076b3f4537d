// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Scan op tags: inclusive scans along one axis. A scan runs a reduction's arithmetic (op/reduction.hpp: identity,
// lift, combine, finalize) over every prefix of each line, so cumsum wraps as sum does, cummax lets NaN win as max
// does and logcumsumexp rescales as logsumexp does; result element i is finalize(the prefix up to i, i + 1).
#pragma once

#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/kind.hpp"
#include "texpr/op/reduction.hpp"

namespace texpr::op {

/// Base of scan op tags over Reduction's arithmetic: a computed node whose operand is read fused (its accessor).
template <class Reduction> struct scan_op {
  static constexpr kind category = kind::computed;   ///< Evaluated by a scan kernel.
  using reduction = Reduction;                        ///< Whose identity, lift, combine and finalize run.
  static constexpr auto dtypes = Reduction::dtypes - complex_dtypes;  ///< The reduction's (no complex scans yet).
};

/// Running sum along an axis (numpy.cumsum); integers wrap around, 16-bit floats accumulate in float.
struct cumsum : scan_op<sum> {
  static constexpr std::string_view name = "cumsum";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "running sum along an axis (numpy.cumsum); integers wrap around";
};
/// Running product along an axis (numpy.cumprod); integers wrap around.
struct cumprod : scan_op<prod> {
  static constexpr std::string_view name = "cumprod";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "running product along an axis (numpy.cumprod); integers wrap around";
};
/// Running maximum along an axis (numpy.maximum.accumulate): NaN propagates from where it appears.
struct cummax : scan_op<max> {
  static constexpr std::string_view name = "cummax";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "running maximum along an axis (numpy.maximum.accumulate); NaN propagates";
};
/// Running minimum along an axis (numpy.minimum.accumulate): NaN propagates from where it appears.
struct cummin : scan_op<min> {
  static constexpr std::string_view name = "cummin";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "running minimum along an axis (numpy.minimum.accumulate); NaN propagates";
};
/// log(cumsum(exp(x))) along an axis without overflow (numpy.logaddexp.accumulate, torch.logcumsumexp).
struct logcumsumexp : scan_op<logsumexp> {
  static constexpr std::string_view name = "logcumsumexp";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "log(cumsum(exp(x))) along an axis in one pass without overflow (torch.logcumsumexp)";
};
/// The position of the first maximum of each prefix (int64; NaN wins, as argmax): where cummax's gradient goes.
struct cumargmax : scan_op<argmax> {
  static constexpr std::string_view name = "cumargmax";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "position along the axis of the first maximum of each prefix (int64; NaN wins): cummax's gradient routes through it";
};
/// The position of the first minimum of each prefix (int64; NaN wins, as argmin): where cummin's gradient goes.
struct cumargmin : scan_op<argmin> {
  static constexpr std::string_view name = "cumargmin";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "position along the axis of the first minimum of each prefix (int64; NaN wins): cummin's gradient routes through it";
};

/// Two values read side by side: a linear recurrence's coefficient and term at one position.
template <class A, class B = A> struct value_pair {
  A first;   ///< The coefficient a_i.
  B second;  ///< The term b_i.
};

/// The affine maps h -> a h + b under composition, which a linear recurrence folds: element (a, b) is a map,
/// combine(earlier, later) is `later after earlier` (associative, so blocks and warps may fold their parts apart),
/// and a prefix's result is its composite applied to 0. 16-bit floats compute in float.
struct affine_compose {
  static constexpr auto dtypes = floating;  ///< The coefficients' and terms' dtype.
  /// The running composite for dtype T.
  template <class T> using accumulator = value_pair<compute_t<T>>;
  /// The result dtype for dtype T.
  template <class T> using result = T;
  template <class A> TEXPR_HOST_DEVICE constexpr A identity() const { return A{1, 0}; }
  template <class A, class V> TEXPR_HOST_DEVICE constexpr A lift(V v, index_t) const {
    using C = decltype(A::first);
    return A{static_cast<C>(detail::widen(v.first)), static_cast<C>(detail::widen(v.second))};
  }
  template <class A> TEXPR_HOST_DEVICE constexpr A combine(A x, A y) const {
    return A{y.first * x.first, y.first * x.second + y.second};
  }
  template <class R, class A> TEXPR_HOST_DEVICE constexpr R finalize(A a, index_t) const { return detail::narrow<R>(a.second); }
};

/// h_i = a_i h_{i-1} + b_i along an axis from h_{-1} = 0 (from the end, h_i = a_i h_{i+1} + b_i): an exponential
/// moving average, an IIR filter, a state-space model's scan (jax.lax.associative_scan of affine maps). Operands a
/// and b of one shape, read fused; one pass.
struct linear_recurrence : scan_op<affine_compose> {
  static constexpr std::string_view name = "linear_recurrence";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "h_i = a_i h_(i-1) + b_i along an axis from h = 0, one pass over a and b (an EMA, an IIR filter, an SSM scan)";
};

} // namespace texpr::op

/// The scans, each with a tx:: function of its name (expr/scan.hpp generates them from this list).
#define TEXPR_SCAN_FUNCTIONS(X) X(cumsum) X(cumprod) X(cummax) X(cummin) X(logcumsumexp) X(cumargmax) X(cumargmin)

namespace texpr::detail {
/// Ops whose nodes are scans.
template <class Op> concept scan_op_tag = requires { typename Op::reduction; } && std::is_base_of_v<op::scan_op<typename Op::reduction>, Op>;
} // namespace texpr::detail
