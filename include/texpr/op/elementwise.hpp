// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise op tags: each is an empty struct naming its dtypes, whose static apply() is the per-element maths,
// shared by every backend so that the host tests exercise the same code the GPU runs.
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <string_view>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/definition.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// a + b (integers wrap around).
struct add : elementwise_op {
  static constexpr std::string_view name = "add";
  static constexpr std::string_view summary = "a + b (integers wrap around)";
  static constexpr auto dtypes = numeric + complex_dtypes;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_add(a, b);
    else return a + b;
  }
  static constexpr std::string_view derivative = "da = g, db = g";
  template <std::size_t I> static constexpr unsigned reads = 0;
  template <std::size_t I> static auto gradient(auto, const auto& g, const auto&, const auto&, const auto&) { return g; }
};
/// a - b (integers wrap around).
struct subtract : elementwise_op {
  static constexpr std::string_view name = "subtract";
  static constexpr std::string_view summary = "a - b (integers wrap around)";
  static constexpr auto dtypes = numeric + complex_dtypes;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_sub(a, b);
    else return a - b;
  }
  static constexpr std::string_view derivative = "da = g, db = -g";
  template <std::size_t I> static constexpr unsigned reads = 0;
  template <std::size_t I> static auto gradient(auto, const auto& g, const auto&, const auto&, const auto&) {
    if constexpr (I == 0) return g;
    else return -g;
  }
};
/// a * b (integers wrap around; complex by the textbook formula, as NumPy).
struct multiply : elementwise_op {
  static constexpr std::string_view name = "multiply";
  static constexpr std::string_view summary = "a * b (integers wrap around)";
  static constexpr auto dtypes = numeric + complex_dtypes;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_mul(a, b);
    else return a * b;
  }
  static constexpr std::string_view derivative = "da = g * b, db = g * a";
  template <std::size_t I> static constexpr unsigned reads = reads_operand(1 - I);
  template <std::size_t I> static auto gradient(auto e, const auto& g, const auto&, const auto& a, const auto& b) {
    if constexpr (I == 0) return e.mul(g, b);  // folded when both are constants (the seed times 1/n)
    else return e.mul(g, a);
  }
};
/// a / b; integer division truncates, x / 0 is 0 and min / -1 is min (defined, never a trap); complex by Smith's
/// algorithm, as NumPy.
struct divide : elementwise_op {
  static constexpr std::string_view name = "divide";
  static constexpr std::string_view summary = "a / b; integer division truncates, x / 0 is 0 and min / -1 is min (defined, never a trap)";
  static constexpr auto dtypes = numeric + complex_dtypes;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return C(0);
      if (b == C(-1)) return detail::wrap_sub(C(0), a);
      return a / b;
    } else {
      return a / b;
    }
  }
  static constexpr std::string_view derivative = "da = g / b, db = -g * out / b";
  template <std::size_t I> static constexpr unsigned reads = reads_operand(1) | (I == 1 ? reads_result : 0u);
  template <std::size_t I> static auto gradient(auto, const auto& g, const auto& out, const auto&, const auto& b) {
    if constexpr (I == 0) return g / b;
    else return -(g * out) / b;
  }
};
/// Larger of a and b; NaN propagates, ties (±0 included) return a.
struct maximum : elementwise_op {
  static constexpr std::string_view name = "maximum";
  static constexpr bool orders = true;  ///< Not defined on complex.
  static constexpr std::string_view summary = "larger of a and b; NaN propagates, ties (±0 included) return a";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if (detail::is_nan(b)) return b;
    return b > a ? b : a;
  }
  static constexpr std::string_view derivative = "da = where(b > a, 0, g), db = where(b > a, g, 0) (ties go to a)";
  template <std::size_t I> static constexpr unsigned reads = reads_operand(0) | reads_operand(1);
  template <std::size_t I> static auto gradient(auto e, const auto& g, const auto&, const auto& a, const auto& b) {
    if constexpr (I == 0) return e.where(b > a, 0, g);
    else return e.where(b > a, g, 0);
  }
};
/// Smaller of a and b; NaN propagates, ties (±0 included) return a.
struct minimum : elementwise_op {
  static constexpr std::string_view name = "minimum";
  static constexpr bool orders = true;  ///< Not defined on complex.
  static constexpr std::string_view summary = "smaller of a and b; NaN propagates, ties (±0 included) return a";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C a, C b) {
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
  static constexpr std::string_view derivative = "da = where(b < a, 0, g), db = where(b < a, g, 0) (ties go to a)";
  template <std::size_t I> static constexpr unsigned reads = reads_operand(0) | reads_operand(1);
  template <std::size_t I> static auto gradient(auto e, const auto& g, const auto&, const auto& a, const auto& b) {
    if constexpr (I == 0) return e.where(b < a, 0, g);
    else return e.where(b < a, g, 0);
  }
};
struct log;  // pow's gradient reads it
/// a raised to b (floating dtypes).
struct pow : elementwise_op {
  static constexpr std::string_view name = "pow";
  static constexpr std::string_view summary = "a raised to b (floating dtypes)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C a, C b) { return detail::pow_(a, b); }
  static constexpr std::string_view derivative = "da = g * b * a^(b - 1), db = g * out * log(a)";
  template <std::size_t I> static constexpr unsigned reads =
      I == 0 ? reads_operand(0) | reads_operand(1) : reads_result | reads_operand(0);
  template <std::size_t I> static auto gradient(auto e, const auto& g, const auto& out, const auto& a, const auto& b) {
    if constexpr (I == 0) return e.mul(e.mul(g, b), e.template map<pow>(a, e.shift(b, -1)));
    else return g * out * e.template map<log>(a);
  }
};
/// ELU: x for x > 0, alpha * (exp(x) - 1) otherwise; alpha arrives as a scalar operand.
struct elu : elementwise_op {
  static constexpr std::string_view name = "elu";
  static constexpr std::string_view summary = "ELU: x for x > 0, alpha * (exp(x) - 1) otherwise; alpha arrives as a scalar operand";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x, C alpha) {
    const C negative = alpha * detail::expm1_(x);  // computed for every x, so the loop has no branch
    return detail::select(x > C(0), x, negative);
  }
};

// ---- unary ops -------------------------------------------------------------------------------------------------
// Each definition is the whole op (docs/adding_an_op.md): `summary` (the doc line in the generated docs),
// `apply` (what every backend runs), `domain` and `reference` (what the tests compare with, in long double from
// the mathematical definition), and its gradient (`derivative`, `reads`, `gradient`). Ops whose integer results
// wrap keep their integer test reference in tests/core/reference.hpp, which needs 128-bit arithmetic.

/// -x (integers wrap around).
struct negate : elementwise_op {
  static constexpr std::string_view name = "negate";
  static constexpr std::string_view summary = "-x (integers wrap around)";
  static constexpr auto dtypes = numeric + complex_dtypes;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_sub(C(0), x);
    else return -x;
  }
  static constexpr std::string_view derivative = "dx = -g";
  static constexpr unsigned reads = 0;
  static auto gradient(auto, const auto& g, const auto&, const auto&) { return -g; }
};
/// e^x (complex: e^re (cos im + i sin im)).
struct exp : elementwise_op {
  static constexpr std::string_view name = "exp";
  static constexpr std::string_view summary = "e^x (complex: e^re (cos im + i sin im))";
  static constexpr auto dtypes = floating + complex_dtypes;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::exp_(x); }
  static constexpr reference_domain domain{-5, 5};
  static long double reference(long double x) { return std::exp(x); }
  static constexpr std::string_view derivative = "dx = g * out";
  static constexpr unsigned reads = reads_result;
  static auto gradient(auto, const auto& g, const auto& out, const auto&) { return g * out; }
};
/// Natural logarithm (on the host texpr's own, detail/vmath.hpp).
struct log : elementwise_op {
  static constexpr std::string_view name = "log";
  static constexpr std::string_view summary = "natural logarithm";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::vmath_log_(x); }
  static constexpr reference_domain domain{0.01, 50};
  static long double reference(long double x) { return std::log(x); }
  static constexpr std::string_view derivative = "dx = g / x";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto, const auto& g, const auto&, const auto& x) { return g / x; }
};
/// Square root.
struct sqrt : elementwise_op {
  static constexpr std::string_view name = "sqrt";
  static constexpr std::string_view summary = "square root";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::sqrt_(x); }
  static constexpr reference_domain domain{0, 50};
  static long double reference(long double x) { return std::sqrt(x); }
  static constexpr std::string_view derivative = "dx = g / (2 * out)";
  static constexpr unsigned reads = reads_result;
  static auto gradient(auto, const auto& g, const auto& out, const auto&) { return g / (2 * out); }
};
struct sign;  // abs's gradient reads it
/// |x|; for integers abs(min) is min (wrap-around, defined); for complex the modulus, a real (hypot(re, im)).
struct abs : elementwise_op {
  static constexpr std::string_view name = "abs";
  static constexpr std::string_view summary = "|x|; for integers abs(min) is min (wrap-around); complex: the modulus hypot(re, im), real";
  static constexpr auto dtypes = numeric + complex_dtypes;
  /// The result dtype for operand dtype T: T's real dtype (float32 for complex64).
  template <class T> using result = real_of_t<T>;
  template <class C> TEXPR_HOST_DEVICE static constexpr auto apply(C x) {
    if constexpr (std::is_integral_v<C>) return x < 0 ? detail::wrap_sub(C(0), x) : x;
    else return detail::fabs_(x);
  }
  static constexpr std::string_view derivative = "dx = g * sign(x) (0 at x = 0)";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto&, const auto& x) { return g * e.template map<sign>(x); }
};
/// Hyperbolic tangent.
struct tanh : elementwise_op {
  static constexpr std::string_view name = "tanh";
  static constexpr std::string_view summary = "hyperbolic tangent";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::tanh_(x); }
  static constexpr reference_domain domain{-5, 5};
  static long double reference(long double x) { return std::tanh(x); }
  static constexpr std::string_view derivative = "dx = g * (1 - out^2)";
  static constexpr unsigned reads = reads_result;
  static auto gradient(auto, const auto& g, const auto& out, const auto&) { return g * (1 - out * out); }
};
/// Logistic function 1 / (1 + e^-x), evaluated without overflow for large |x|.
struct sigmoid : elementwise_op {
  static constexpr std::string_view name = "sigmoid";
  static constexpr std::string_view summary = "logistic function 1 / (1 + e^-x)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::sigmoid_(x); }
  static constexpr reference_domain domain{-20, 20};
  static long double reference(long double x) { return 1 / (1 + std::exp(-x)); }
  static constexpr std::string_view derivative = "dx = g * out * (1 - out)";
  static constexpr unsigned reads = reads_result;
  static auto gradient(auto, const auto& g, const auto& out, const auto&) { return g * out * (1 - out); }
};
/// max(x, 0); NaN propagates.
struct relu : elementwise_op {
  static constexpr std::string_view name = "relu";
  static constexpr std::string_view summary = "max(x, 0); NaN propagates";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if (detail::is_nan(x)) return x;
    return x > C(0) ? x : C(0);
  }
  static constexpr std::string_view derivative = "dx = where(x > 0, g, 0)";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto&, const auto& x) { return e.where(x > 0, g, 0); }
};
/// log(1 + x), accurate near 0.
struct log1p : elementwise_op {
  static constexpr std::string_view name = "log1p";
  static constexpr std::string_view summary = "log(1 + x), accurate near 0";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::log1p_(x); }
  static constexpr reference_domain domain{-0.9, 5};
  static long double reference(long double x) { return std::log1p(x); }
  static constexpr std::string_view derivative = "dx = g / (1 + x)";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto, const auto& g, const auto&, const auto& x) { return g / (x + 1); }
};
/// e^x - 1, accurate near 0.
struct expm1 : elementwise_op {
  static constexpr std::string_view name = "expm1";
  static constexpr std::string_view summary = "e^x - 1, accurate near 0";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::expm1_(x); }
  static constexpr reference_domain domain{-5, 5};
  static long double reference(long double x) { return std::expm1(x); }
  static constexpr std::string_view derivative = "dx = g * (out + 1)";
  static constexpr unsigned reads = reads_result;
  static auto gradient(auto, const auto& g, const auto& out, const auto&) { return g * (out + 1); }
};
/// log(1 + e^x), without overflow for large x (x + log1p(e^-x) for x > 0).
struct softplus : elementwise_op {
  static constexpr std::string_view name = "softplus";
  static constexpr std::string_view summary = "log(1 + e^x), without overflow for large x";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    return x > C(0) ? x + detail::log1p_(detail::exp_(-x)) : detail::log1p_(detail::exp_(x));
  }
  static constexpr reference_domain domain{-30, 30};
  static long double reference(long double x) { return std::log1p(std::exp(x)); }
  static constexpr std::string_view derivative = "dx = g * sigmoid(x)";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto&, const auto& x) { return g * e.template map<sigmoid>(x); }
};
/// d gelu / dx = Phi(x) + x phi(x): the helper node of gelu's gradient rule (a registered op, so it shows in placement).
struct gelu_grad : elementwise_op {
  static constexpr std::string_view name = "gelu_grad";
  static constexpr std::string_view summary = "Phi(x) + x phi(x), the derivative of gelu (its gradient's node)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    const C pdf = detail::exp_(C(-0.5) * x * x) * C(0.39894228040143267794);
    return detail::normal_cdf(x) + x * pdf;
  }
  static constexpr reference_domain domain{-6, 6};
  static long double reference(long double x) {
    return (1 + std::erf(x / std::sqrt(2.0L))) / 2 + x * std::exp(-x * x / 2) / std::sqrt(2 * 3.14159265358979323846264338327950288L);
  }
};
/// GELU with the exact normal CDF: x * (1 + erf(x / sqrt 2)) / 2 (PyTorch's default, not the tanh approximation).
struct gelu : elementwise_op {
  static constexpr std::string_view name = "gelu";
  static constexpr std::string_view summary = "x * Phi(x) with the exact normal CDF (PyTorch's default)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return x * detail::normal_cdf(x); }
  static constexpr reference_domain domain{-6, 6};
  static long double reference(long double x) { return x * (1 + std::erf(x / std::sqrt(2.0L))) / 2; }
  static constexpr std::string_view derivative = "dx = g * gelu_grad(x), gelu_grad(x) = Phi(x) + x phi(x)";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto&, const auto& x) { return g * e.template map<gelu_grad>(x); }
};
/// SiLU (swish): x * sigmoid(x).
struct silu : elementwise_op {
  static constexpr std::string_view name = "silu";
  static constexpr std::string_view summary = "x * sigmoid(x) (swish)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) {
    // x / (1 + e^-x), with e^x / (1 + e^x) for x < 0 so that e^-x cannot overflow
    if (x >= C(0)) return x / (C(1) + detail::exp_(-x));
    const C e = detail::exp_(x);
    return x * e / (C(1) + e);
  }
  static constexpr reference_domain domain{-30, 30};
  static long double reference(long double x) { return x / (1 + std::exp(-x)); }
  // s + x s (1 - s) = out + s (1 - out): one sigmoid per element, not two
  static constexpr std::string_view derivative = "dx = g * (out + s * (1 - out)), s = sigmoid(x)";
  static constexpr unsigned reads = reads_result | reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto& out, const auto& x) {
    return g * (out + e.template map<sigmoid>(x) * (1 - out));
  }
};
/// Mish: x * tanh(softplus(x)).
struct mish : elementwise_op {
  static constexpr std::string_view name = "mish";
  static constexpr std::string_view summary = "x * tanh(softplus(x)) (Mish)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return x * detail::tanh_(softplus::apply(x)); }
  static constexpr reference_domain domain{-6, 6};
  static long double reference(long double x) { return x * std::tanh(std::log1p(std::exp(x))); }
  static constexpr std::string_view derivative = "dx = g * (t + x * (1 - t^2) * sigmoid(x)), t = tanh(softplus(x))";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto&, const auto& x) {
    const auto t = e.template map<tanh>(e.template map<softplus>(x));
    return g * (t + x * (1 - t * t) * e.template map<sigmoid>(x));
  }
};
/// x * x (integers wrap around).
struct square : elementwise_op {
  static constexpr std::string_view name = "square";
  static constexpr std::string_view summary = "x * x (integers wrap around)";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if constexpr (std::is_integral_v<C>) return detail::wrap_mul(x, x);
    else return x * x;
  }
  static constexpr std::string_view derivative = "dx = 2 * g * x";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto, const auto& g, const auto&, const auto& x) { return g * (x * 2); }
};
/// 1 / sqrt(x).
struct rsqrt : elementwise_op {
  static constexpr std::string_view name = "rsqrt";
  static constexpr std::string_view summary = "1 / sqrt(x)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return C(1) / detail::sqrt_(x); }
  static constexpr reference_domain domain{0.01, 50};
  static long double reference(long double x) { return 1 / std::sqrt(x); }
  static constexpr std::string_view derivative = "dx = -g * out^3 / 2";
  static constexpr unsigned reads = reads_result;
  static auto gradient(auto, const auto& g, const auto& out, const auto&) { return g * (out * out * out * -0.5); }
};
/// -1, 0 or 1 by the sign of x (0 for ±0; NaN stays NaN).
struct sign : elementwise_op {
  static constexpr std::string_view name = "sign";
  static constexpr std::string_view summary = "-1, 0 or 1 by the sign of x (NaN stays NaN)";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x) {
    if (detail::is_nan(x)) return x;
    return x > C(0) ? C(1) : x < C(0) ? C(-1) : C(0);
  }
};
/// Largest integer value not above x.
struct floor : elementwise_op {
  static constexpr std::string_view name = "floor";
  static constexpr std::string_view summary = "largest integer value not above x";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::floor_(x); }
  static constexpr reference_domain domain{-20, 20};
  static long double reference(long double x) { return std::floor(x); }
};
/// Smallest integer value not below x.
struct ceil : elementwise_op {
  static constexpr std::string_view name = "ceil";
  static constexpr std::string_view summary = "smallest integer value not below x";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::ceil_(x); }
  static constexpr reference_domain domain{-20, 20};
  static long double reference(long double x) { return std::ceil(x); }
};
/// Nearest integer value, halves to even (as NumPy and PyTorch): round(0.5) = 0, round(1.5) = 2.
struct round : elementwise_op {
  static constexpr std::string_view name = "round";
  static constexpr std::string_view summary = "nearest integer value, halves to even (as NumPy)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::nearbyint_(x); }
  static constexpr reference_domain domain{-20, 20};
  static long double reference(long double x) { return std::nearbyint(x); }
};
struct cos;  // sin's gradient reads it
/// Sine (radians).
struct sin : elementwise_op {
  static constexpr std::string_view name = "sin";
  static constexpr std::string_view summary = "sine (radians)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::sin_(x); }
  static constexpr reference_domain domain{-7, 7};
  static long double reference(long double x) { return std::sin(x); }
  static constexpr std::string_view derivative = "dx = g * cos(x)";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto&, const auto& x) { return g * e.template map<cos>(x); }
};
/// Cosine (radians).
struct cos : elementwise_op {
  static constexpr std::string_view name = "cos";
  static constexpr std::string_view summary = "cosine (radians)";
  static constexpr auto dtypes = floating;
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return detail::cos_(x); }
  static constexpr reference_domain domain{-7, 7};
  static long double reference(long double x) { return std::cos(x); }
  static constexpr std::string_view derivative = "dx = -g * sin(x)";
  static constexpr unsigned reads = reads_operand(0);
  static auto gradient(auto e, const auto& g, const auto&, const auto& x) { return g * -e.template map<sin>(x); }
};
/// min(max(x, lo), hi), as PyTorch's clamp (hi wins when lo > hi); NaN in x propagates.
struct clamp : elementwise_op {
  static constexpr std::string_view name = "clamp";
  static constexpr std::string_view summary = "min(max(x, lo), hi), as PyTorch's clamp (hi wins when lo > hi); NaN in x propagates";
  static constexpr auto dtypes = numeric;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C x, C lo, C hi) {
    if (detail::is_nan(x)) return x;
    const C y = x < lo ? lo : x;
    return y > hi ? hi : y;
  }
};

// ---- complex ops ----------------------------------------------------------------------------------------------
// Defined on the complex dtypes only (NumPy also takes reals in real/imag/conj/angle; texpr asks for a cast first, as
// for every other dtype change). Their values are checked against NumPy's (tests/core/test_complex.cpp); they have
// no gradient yet: tx::grad of a graph with a complex node is a compile error.

/// The complex conjugate re - i im.
struct conj : elementwise_op {
  static constexpr std::string_view name = "conj";
  static constexpr std::string_view summary = "complex conjugate re - i im";
  static constexpr auto dtypes = complex_dtypes;
  template <class C> TEXPR_HOST_DEVICE static constexpr C apply(C z) { return detail::conj(z); }
};
/// The real part of a complex number (a real result).
struct real : elementwise_op {
  static constexpr std::string_view name = "real";
  static constexpr std::string_view summary = "real part of a complex number (a real result)";
  static constexpr auto dtypes = complex_dtypes;
  /// The result dtype for operand dtype T: T's real dtype.
  template <class T> using result = real_of_t<T>;
  template <class C> TEXPR_HOST_DEVICE static constexpr auto apply(C z) { return z.re; }
};
/// The imaginary part of a complex number (a real result).
struct imag : elementwise_op {
  static constexpr std::string_view name = "imag";
  static constexpr std::string_view summary = "imaginary part of a complex number (a real result)";
  static constexpr auto dtypes = complex_dtypes;
  /// The result dtype for operand dtype T: T's real dtype.
  template <class T> using result = real_of_t<T>;
  template <class C> TEXPR_HOST_DEVICE static constexpr auto apply(C z) { return z.im; }
};
/// The argument of a complex number, atan2(im, re) in [-pi, pi] (a real result).
struct angle : elementwise_op {
  static constexpr std::string_view name = "angle";
  static constexpr std::string_view summary = "argument atan2(im, re) of a complex number, in [-pi, pi] (a real result)";
  static constexpr auto dtypes = complex_dtypes;
  /// The result dtype for operand dtype T: T's real dtype.
  template <class T> using result = real_of_t<T>;
  template <class C> TEXPR_HOST_DEVICE static auto apply(C z) { return detail::atan2_(z.im, z.re); }
};
/// re + i im from two reals of one dtype (complex64 from float32, complex128 from float64).
struct make_complex : elementwise_op {
  static constexpr std::string_view name = "make_complex";
  static constexpr std::string_view summary = "re + i im from two reals (complex64 from float32, complex128 from float64)";
  static constexpr auto dtypes = floating;  ///< The operands' dtype.
  /// The result dtype for operand dtype T: std::complex<T>.
  template <class T> using result = std::complex<T>;
  template <class C> TEXPR_HOST_DEVICE static constexpr detail::complex_value<C> apply(C re, C im) { return {re, im}; }
};

/// Ops whose result is bool whatever the operand dtype.
#define TEXPR_PREDICATE(NAME, DTYPES, EXPR, ORDERS)                                  \
  struct NAME : elementwise_op {                                                     \
    static constexpr std::string_view name = #NAME;                                  \
    static constexpr bool orders = ORDERS;                                           \
    static constexpr std::string_view summary = #EXPR " (bool result)";              \
    static constexpr auto dtypes = DTYPES;                                           \
    static constexpr bool predicate = true;                                          \
    template <class C> TEXPR_HOST_DEVICE static constexpr bool apply(C a, C b) { return EXPR; } \
  };
/// a == b.
TEXPR_PREDICATE(equal, numeric_and_bool + complex_dtypes, a == b, false)
/// a != b.
TEXPR_PREDICATE(not_equal, numeric_and_bool + complex_dtypes, a != b, false)
/// a < b.
TEXPR_PREDICATE(less, numeric, a < b, true)
/// a <= b.
TEXPR_PREDICATE(less_equal, numeric, a <= b, true)
/// a > b.
TEXPR_PREDICATE(greater, numeric, a > b, true)
/// a >= b.
TEXPR_PREDICATE(greater_equal, numeric, a >= b, true)
/// a && b on bool.
TEXPR_PREDICATE(logical_and, boolean, a && b, false)
/// a || b on bool.
TEXPR_PREDICATE(logical_or, boolean, a || b, false)
#undef TEXPR_PREDICATE

/// !x on bool.
struct logical_not : elementwise_op {
  static constexpr std::string_view name = "logical_not";
  static constexpr std::string_view summary = "!x on bool";
  static constexpr auto dtypes = boolean;
  static constexpr bool predicate = true;  ///< Its result is bool.
  template <class C> TEXPR_HOST_DEVICE static constexpr bool apply(C x) { return !x; }
};

/// cond ? a : b; its dtype is that of a and b.
struct where : elementwise_op {
  static constexpr std::string_view name = "where";
  static constexpr std::string_view summary = "cond ? a : b; its dtype is that of a and b";
  static constexpr auto dtypes = numeric_and_bool + complex_dtypes;
  static constexpr bool selects = true;  ///< Reads a bool condition and two values of the result's dtype.
  template <class T> TEXPR_HOST_DEVICE static constexpr T apply(bool c, T a, T b) { return c ? a : b; }
};

/// Conversion to To; float to integer saturates and maps NaN to 0; a real converts to complex with imaginary part 0;
/// its dtype is the target To.
template <class To>
struct cast : elementwise_op {
  static constexpr std::string_view name = "cast";
  static constexpr std::string_view summary = "conversion to To; float to integer saturates and maps NaN to 0; its dtype is the target To";
  /// The target: every stored dtype converts to every other, and every one to complex (tx::cast rejects complex
  /// to real).
  static constexpr auto dtypes = all_dtypes + complex_dtypes;
  using target = To;  ///< The dtype converted to.
};

} // namespace texpr::op

/// The unary ops that have a tx:: function of their name, which expr/elementwise.hpp generates from this list.
#define TEXPR_UNARY_FUNCTIONS(X) \
  X(exp) X(log) X(sqrt) X(abs) X(tanh) X(sigmoid) X(relu) X(logical_not) X(log1p) X(expm1) X(softplus) X(gelu) \
  X(silu) X(mish) X(square) X(rsqrt) X(sign) X(floor) X(ceil) X(round) X(sin) X(cos) X(conj) X(real) X(imag) X(angle)

namespace texpr::detail {
/// Ops whose result is bool (comparisons, logical ops).
template <class Op> concept predicate_op = requires { requires Op::predicate; };
/// Ops that select between operands (where): no arithmetic, dtype of the branches.
template <class Op> concept selecting_op = requires { requires Op::selects; };
/// cast<To>.
template <class Op> concept cast_op = requires { typename Op::target; };
/// The result dtype of elementwise Op (not a predicate) on operand dtype T: its `result<T>` (abs and real of a
/// complex are real, make_complex of reals complex), or T.
template <class Op, class T> struct elementwise_result { using type = T; };
template <class Op, class T>
  requires requires { typename Op::template result<T>; }
struct elementwise_result<Op, T> { using type = typename Op::template result<T>; };
} // namespace texpr::detail

namespace texpr::detail {
/// The value of arithmetic Op (or a cast to a non-8-bit R) on stored operand values, in the compute type, before
/// apply_op stores it as R: so a backend that rounds several results at once rounds the same values.
template <class Op, class R, class... V>
TEXPR_HOST_DEVICE auto compute_op(V... v) {
  if constexpr (cast_op<Op>)
    return convert<compute_t<R>>(widen(v)...);
  else
    return Op::apply(widen(v)...);
}

/// Applies elementwise Op to stored operand values, giving dtype R: 16-bit floats widen to float and round back
/// once; predicates give bool; where selects without arithmetic; cast converts (saturating, NaN to 0).
template <class Op, class R, class... V> TEXPR_HOST_DEVICE R apply_op(V... v) {
  if constexpr (selecting_op<Op>) return Op::apply(v...);
  else if constexpr (cast_op<Op> && is_float8_v<R>) return narrow<R>(widen(v)...);  // one rounding, from a double too
  else if constexpr (predicate_op<Op>) return Op::apply(widen(v)...);
  else
    return narrow<R>(compute_op<Op, R>(v...));
}
} // namespace texpr::detail
