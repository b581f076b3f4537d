// Elementwise op tags: each is an empty struct naming its dtypes, whose static apply() is the per-element maths,
// shared by every backend so that the host tests exercise the same code the GPU runs.
#pragma once

#include <limits>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// a + b (integers wrap around).
struct add : elementwise_op {
  static constexpr std::string_view name = "add";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_add(a, b);
    else return a + b;
  }
};
/// a - b (integers wrap around).
struct subtract : elementwise_op {
  static constexpr std::string_view name = "subtract";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_sub(a, b);
    else return a - b;
  }
};
/// a * b (integers wrap around).
struct multiply : elementwise_op {
  static constexpr std::string_view name = "multiply";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_mul(a, b);
    else return a * b;
  }
};
/// a / b; integer division truncates, x / 0 is 0 and min / -1 is min (defined, never a trap).
struct divide : elementwise_op {
  static constexpr std::string_view name = "divide";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C(0);
      if (b == C(-1)) return detail::wrap_sub(C(0), a);
      return a / b;
    } else {
      return a / b;
    }
  }
};
/// Larger of a and b; NaN propagates, ties (±0 included) return a.
struct maximum : elementwise_op {
  static constexpr std::string_view name = "maximum";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if (detail::is_nan(b)) return b;
    return b > a ? b : a;
  }
};
/// Smaller of a and b; NaN propagates, ties (±0 included) return a.
struct minimum : elementwise_op {
  static constexpr std::string_view name = "minimum";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
};
/// a raised to b (floating dtypes).
struct pow : elementwise_op {
  static constexpr std::string_view name = "pow";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C a, C b) { return detail::pow_(a, b); }
};
/// ELU: x for x > 0, alpha * (exp(x) - 1) otherwise; alpha arrives as a scalar operand.
struct elu : elementwise_op {
  static constexpr std::string_view name = "elu";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x, C alpha) {
    const C negative = alpha * detail::expm1_(x);  // computed for every x, so the loop has no branch
    return detail::select(x > C(0), x, negative);
  }
};

/// -x (integers wrap around).
struct negate : elementwise_op {
  static constexpr std::string_view name = "negate";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_sub(C(0), x);
    else return -x;
  }
};
/// e^x.
struct exp : elementwise_op {
  static constexpr std::string_view name = "exp";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::exp_(x); }
};
/// Natural logarithm (on the host texpr's own, detail/vmath.hpp).
struct log : elementwise_op {
  static constexpr std::string_view name = "log";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::vmath_log_(x); }
};
/// Square root.
struct sqrt : elementwise_op {
  static constexpr std::string_view name = "sqrt";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::sqrt_(x); }
};
/// |x|; for integers abs(min) is min (wrap-around, defined).
struct abs : elementwise_op {
  static constexpr std::string_view name = "abs";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if constexpr (std::is_integral_v<C>) return x < 0 ? detail::wrap_sub(C(0), x) : x;
    else return detail::fabs_(x);
  }
};
/// Hyperbolic tangent.
struct tanh : elementwise_op {
  static constexpr std::string_view name = "tanh";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::tanh_(x); }
};
/// Logistic function 1 / (1 + e^-x), evaluated without overflow for large |x|.
struct sigmoid : elementwise_op {
  static constexpr std::string_view name = "sigmoid";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::sigmoid_(x); }
};
/// max(x, 0); NaN propagates.
struct relu : elementwise_op {
  static constexpr std::string_view name = "relu";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if (detail::is_nan(x)) return x;
    return x > C(0) ? x : C(0);
  }
};

/// log(1 + x), accurate near 0.
struct log1p : elementwise_op {
  static constexpr std::string_view name = "log1p";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::log1p_(x); }
};
/// e^x - 1, accurate near 0.
struct expm1 : elementwise_op {
  static constexpr std::string_view name = "expm1";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::expm1_(x); }
};
/// log(1 + e^x), without overflow for large x (x + log1p(e^-x) for x > 0).
struct softplus : elementwise_op {
  static constexpr std::string_view name = "softplus";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    return x > C(0) ? x + detail::log1p_(detail::exp_(-x)) : detail::log1p_(detail::exp_(x));
  }
};
/// GELU with the exact normal CDF: x * (1 + erf(x / sqrt 2)) / 2 (PyTorch's default, not the tanh approximation).
struct gelu : elementwise_op {
  static constexpr std::string_view name = "gelu";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    return x * detail::normal_cdf(x);
  }
};
/// d gelu / dx = Phi(x) + x phi(x): the helper node of gelu's gradient rule (a registered op, so it shows in placement).
struct gelu_grad : elementwise_op {
  static constexpr std::string_view name = "gelu_grad";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    const C pdf = detail::exp_(C(-0.5) * x * x) * C(0.39894228040143267794);
    return detail::normal_cdf(x) + x * pdf;
  }
};
/// SiLU (swish): x * sigmoid(x).
struct silu : elementwise_op {
  static constexpr std::string_view name = "silu";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    // x / (1 + e^-x), with e^x / (1 + e^x) for x < 0 so that e^-x cannot overflow
    if (x >= C(0)) return x / (C(1) + detail::exp_(-x));
    const C e = detail::exp_(x);
    return x * e / (C(1) + e);
  }
};
/// x * x (integers wrap around).
struct square : elementwise_op {
  static constexpr std::string_view name = "square";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_mul(x, x);
    else return x * x;
  }
};
/// 1 / sqrt(x).
struct rsqrt : elementwise_op {
  static constexpr std::string_view name = "rsqrt";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return C(1) / detail::sqrt_(x); }
};
/// -1, 0 or 1 by the sign of x (0 for ±0; NaN stays NaN).
struct sign : elementwise_op {
  static constexpr std::string_view name = "sign";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if (detail::is_nan(x)) return x;
    return x > C(0) ? C(1) : x < C(0) ? C(-1) : C(0);
  }
};
/// Largest integer value not above x.
struct floor : elementwise_op {
  static constexpr std::string_view name = "floor";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::floor_(x); }
};
/// Smallest integer value not below x.
struct ceil : elementwise_op {
  static constexpr std::string_view name = "ceil";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::ceil_(x); }
};
/// Nearest integer value, halves to even (as NumPy and PyTorch): round(0.5) = 0, round(1.5) = 2.
struct round : elementwise_op {
  static constexpr std::string_view name = "round";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::nearbyint_(x); }
};
/// Sine (radians).
struct sin : elementwise_op {
  static constexpr std::string_view name = "sin";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::sin_(x); }
};
/// Cosine (radians).
struct cos : elementwise_op {
  static constexpr std::string_view name = "cos";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::cos_(x); }
};
/// min(max(x, lo), hi), as PyTorch's clamp (hi wins when lo > hi); NaN in x propagates.
struct clamp : elementwise_op {
  static constexpr std::string_view name = "clamp";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x, C lo, C hi) {
    if (detail::is_nan(x)) return x;
    const C y = x < lo ? lo : x;
    return y > hi ? hi : y;
  }
};

/// Ops whose result is bool whatever the operand dtype.
#define TEXPR_PREDICATE(NAME, DTYPES, EXPR)                                          \
  struct NAME : elementwise_op {                                                     \
    static constexpr std::string_view name = #NAME;                                  \
    static constexpr auto dtypes = DTYPES;                                           \
    static constexpr bool predicate = true;                                          \
    template <class C> TEXPR_HOST_DEVICE static constexpr bool apply(C a, C b) { return EXPR; } \
  };
/// a == b.
TEXPR_PREDICATE(equal, numeric_and_bool, a == b)
/// a != b.
TEXPR_PREDICATE(not_equal, numeric_and_bool, a != b)
/// a < b.
TEXPR_PREDICATE(less, numeric, a < b)
/// a <= b.
TEXPR_PREDICATE(less_equal, numeric, a <= b)
/// a > b.
TEXPR_PREDICATE(greater, numeric, a > b)
/// a >= b.
TEXPR_PREDICATE(greater_equal, numeric, a >= b)
/// a && b on bool.
TEXPR_PREDICATE(logical_and, boolean, a && b)
/// a || b on bool.
TEXPR_PREDICATE(logical_or, boolean, a || b)
#undef TEXPR_PREDICATE

/// !x on bool.
struct logical_not : elementwise_op {
  static constexpr std::string_view name = "logical_not";
  static constexpr auto dtypes = boolean;
  static constexpr bool predicate = true;
  template <class C> TEXPR_HOST_DEVICE static constexpr bool apply(C x) { return !x; }
};

/// cond ? a : b; its dtype is that of a and b.
struct where : elementwise_op {
  static constexpr std::string_view name = "where";
  static constexpr auto dtypes = numeric_and_bool;
  static constexpr bool selects = true;
  template <class T> TEXPR_HOST_DEVICE static constexpr T apply(bool c, T a, T b) { return c ? a : b; }
};

/// Conversion to To; float to integer saturates and maps NaN to 0; its dtype is the target To.
template <class To>
struct cast : elementwise_op {
  static constexpr std::string_view name = "cast";
  static constexpr auto dtypes = all_dtypes;  ///< The target: every stored dtype converts to every other.
  using target = To;
};

} // namespace texpr::op

namespace texpr::detail {
/// Ops whose result is bool (comparisons, logical ops).
template <class Op> concept predicate_op = requires { requires Op::predicate; };
/// Ops that select between operands (where): no arithmetic, dtype of the branches.
template <class Op> concept selecting_op = requires { requires Op::selects; };
/// cast<To>.
template <class Op> concept cast_op = requires { typename Op::target; };
} // namespace texpr::detail

namespace texpr::detail {
/// Applies elementwise Op to stored operand values, giving dtype R: 16-bit floats widen to float and round back
/// once; predicates give bool; where selects without arithmetic; cast converts (saturating, NaN to 0).
template <class Op, class R, class... V> TEXPR_HOST_DEVICE R apply_op(V... v) {
  if constexpr (selecting_op<Op>) return Op::apply(v...);
  else if constexpr (cast_op<Op> && is_float8_v<R>) return narrow<R>(widen(v)...);  // one rounding, from a double too
  else if constexpr (cast_op<Op>) return narrow<R>(convert<compute_t<R>>(widen(v)...));
  else if constexpr (predicate_op<Op>) return Op::apply(widen(v)...);
  else return narrow<R>(Op::apply(widen(v)...));
}
} // namespace texpr::detail
