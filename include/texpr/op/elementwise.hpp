// Elementwise op tags: each is an empty struct whose static apply() is the per-element maths,
// shared by every backend so that the host tests exercise the same code the GPU runs.
#pragma once

#include <limits>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/detail/math.hpp"

namespace texpr::op {

/// Leaf reading a tensor or view from memory (not a kernel; placement shows where the memory lives).
struct leaf { static constexpr std::string_view name = "leaf"; };
/// Leaf holding a constant (not a kernel; readable from any backend).
struct scalar { static constexpr std::string_view name = "scalar"; };

/// a + b (integers wrap around).
struct add {
  static constexpr std::string_view name = "add";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_add(a, b);
    else return a + b;
  }
};
/// a - b (integers wrap around).
struct subtract {
  static constexpr std::string_view name = "subtract";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_sub(a, b);
    else return a - b;
  }
};
/// a * b (integers wrap around).
struct multiply {
  static constexpr std::string_view name = "multiply";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_mul(a, b);
    else return a * b;
  }
};
/// a / b; integer division truncates, x / 0 is 0 and min / -1 is min (defined, never a trap).
struct divide {
  static constexpr std::string_view name = "divide";
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
struct maximum {
  static constexpr std::string_view name = "maximum";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if (detail::is_nan(b)) return b;
    return b > a ? b : a;
  }
};
/// Smaller of a and b; NaN propagates, ties (±0 included) return a.
struct minimum {
  static constexpr std::string_view name = "minimum";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
};
/// a raised to b (floating dtypes).
struct pow {
  static constexpr std::string_view name = "pow";
  template <class C> TEXPR_HOST_DEVICE static C apply(C a, C b) { return detail::pow_(a, b); }
};
/// ELU: x for x > 0, alpha * (exp(x) - 1) otherwise; alpha arrives as a scalar operand.
struct elu {
  static constexpr std::string_view name = "elu";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x, C alpha) { return x > C(0) ? x : alpha * detail::expm1_(x); }
};

/// -x (integers wrap around).
struct negate {
  static constexpr std::string_view name = "negate";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_sub(C(0), x);
    else return -x;
  }
};
/// e^x.
struct exp {
  static constexpr std::string_view name = "exp";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::exp_(x); }
};
/// Natural logarithm.
struct log {
  static constexpr std::string_view name = "log";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::log_(x); }
};
/// Square root.
struct sqrt {
  static constexpr std::string_view name = "sqrt";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::sqrt_(x); }
};
/// |x|; for integers abs(min) is min (wrap-around, defined).
struct abs {
  static constexpr std::string_view name = "abs";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if constexpr (std::is_integral_v<C>) return x < 0 ? detail::wrap_sub(C(0), x) : x;
    else return detail::fabs_(x);
  }
};
/// Hyperbolic tangent.
struct tanh {
  static constexpr std::string_view name = "tanh";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::tanh_(x); }
};
/// Logistic function 1 / (1 + e^-x), evaluated without overflow for large |x|.
struct sigmoid {
  static constexpr std::string_view name = "sigmoid";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    if (x >= C(0)) return C(1) / (C(1) + detail::exp_(-x));
    const C e = detail::exp_(x);
    return e / (C(1) + e);
  }
};
/// max(x, 0); NaN propagates.
struct relu {
  static constexpr std::string_view name = "relu";
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if (detail::is_nan(x)) return x;
    return x > C(0) ? x : C(0);
  }
};

/// Ops whose result is bool whatever the operand dtype.
#define TEXPR_PREDICATE(NAME, EXPR)                                                  \
  struct NAME {                                                                      \
    static constexpr std::string_view name = #NAME;                                  \
    static constexpr bool predicate = true;                                          \
    template <class C> TEXPR_HOST_DEVICE static constexpr bool apply(C a, C b) { return EXPR; } \
  };
/// a == b.
TEXPR_PREDICATE(equal, a == b)
/// a != b.
TEXPR_PREDICATE(not_equal, a != b)
/// a < b.
TEXPR_PREDICATE(less, a < b)
/// a <= b.
TEXPR_PREDICATE(less_equal, a <= b)
/// a > b.
TEXPR_PREDICATE(greater, a > b)
/// a >= b.
TEXPR_PREDICATE(greater_equal, a >= b)
/// a && b on bool.
TEXPR_PREDICATE(logical_and, a && b)
/// a || b on bool.
TEXPR_PREDICATE(logical_or, a || b)
#undef TEXPR_PREDICATE

/// !x on bool.
struct logical_not {
  static constexpr std::string_view name = "logical_not";
  static constexpr bool predicate = true;
  template <class C> TEXPR_HOST_DEVICE static constexpr bool apply(C x) { return !x; }
};

/// cond ? a : b; its dtype is that of a and b.
struct where {
  static constexpr std::string_view name = "where";
  static constexpr bool selects = true;
  template <class T> TEXPR_HOST_DEVICE static constexpr T apply(bool c, T a, T b) { return c ? a : b; }
};

/// Conversion to To; float to integer saturates and maps NaN to 0; its dtype is the target To.
template <class To>
struct cast {
  static constexpr std::string_view name = "cast";
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
