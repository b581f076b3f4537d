// Gradient rules of the elementwise ops: one tx::gradient_rule specialisation per op tag, built from
// registered ops only, so gradient graphs run wherever the forward ops do.
#pragma once

#include <cstddef>
#include <type_traits>

#include "texpr/core/dtype.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/op/elementwise.hpp"

namespace texpr {

/// Returned by a rule for an operand the result does not depend on differentiably (a where condition,
/// comparison operands, integer casts).
struct no_gradient {};

/// Gradient rule of an elementwise op: `partial<I>(g, out, x...)` returns the contribution to operand I
/// given the incoming gradient g, the op's result `out` and its operands `x...` (all lazy expressions that
/// broadcast to one shape; texpr sums the contribution back to operand I's shape). Specialise it for
/// your own ops; an op without one makes tx::grad fail to compile, naming the op.
template <class Op> struct gradient_rule;

namespace detail {
template <class Op> concept has_gradient_rule = requires { sizeof(gradient_rule<Op>); };

template <class N> struct is_scalar_node : std::false_type {};
template <class T> struct is_scalar_node<scalar_expr<T>> : std::bool_constant<std::is_floating_point_v<T>> {};

/// a * b, folded to one constant when both are constants (the seed 1 times 1/n, alpha, an exponent).
template <class A, class B> auto mul(const A& a, const B& b) {
  if constexpr (is_scalar_node<A>::value && is_scalar_node<B>::value) return scalar_expr(a.value() * b.value());
  else return a * b;
}
/// a * s for a number s, folded when a is a constant.
template <class A> auto scale(const A& a, double s) {
  using T = typename A::value_type;
  if constexpr (is_scalar_node<A>::value) return scalar_expr<T>(static_cast<T>(a.value() * s));
  else return a * s;
}
/// a + s for a number s, folded when a is a constant.
template <class A> auto shift(const A& a, double s) {
  using T = typename A::value_type;
  if constexpr (is_scalar_node<A>::value) return scalar_expr<T>(static_cast<T>(a.value() + s));
  else return a + s;
}
} // namespace detail

/// d(a + b) = g, g.
template <> struct gradient_rule<op::add> {
  template <std::size_t I, class G, class Out, class A, class B>
  static auto partial(const G& g, const Out&, const A&, const B&) { return g; }
};
/// d(a - b) = g, -g.
template <> struct gradient_rule<op::subtract> {
  template <std::size_t I, class G, class Out, class A, class B>
  static auto partial(const G& g, const Out&, const A&, const B&) {
    if constexpr (I == 0) return g;
    else return -g;
  }
};
/// d(a * b) = g b, g a.
template <> struct gradient_rule<op::multiply> {
  template <std::size_t I, class G, class Out, class A, class B>
  static auto partial(const G& g, const Out&, const A& a, const B& b) {
    if constexpr (I == 0) return detail::mul(g, b);
    else return detail::mul(g, a);
  }
};
/// d(a / b) = g / b, -g a / b^2.
template <> struct gradient_rule<op::divide> {
  template <std::size_t I, class G, class Out, class A, class B>
  static auto partial(const G& g, const Out&, const A& a, const B& b) {
    if constexpr (I == 0) return g / b;
    else return -(g * a) / (b * b);
  }
};
/// maximum selects a unless b > a (ties and NaN in a go to a), and the gradient follows the selection.
template <> struct gradient_rule<op::maximum> {
  template <std::size_t I, class G, class Out, class A, class B>
  static auto partial(const G& g, const Out&, const A& a, const B& b) {
    if constexpr (I == 0) return where(b > a, 0, g);
    else return where(b > a, g, 0);
  }
};
/// minimum selects a unless b < a, and the gradient follows the selection.
template <> struct gradient_rule<op::minimum> {
  template <std::size_t I, class G, class Out, class A, class B>
  static auto partial(const G& g, const Out&, const A& a, const B& b) {
    if constexpr (I == 0) return where(b < a, 0, g);
    else return where(b < a, g, 0);
  }
};
/// d(a^b) = g b a^(b-1), g a^b log(a).
template <> struct gradient_rule<op::pow> {
  template <std::size_t I, class G, class Out, class A, class B>
  static auto partial(const G& g, const Out& out, const A& a, const B& b) {
    if constexpr (I == 0) return detail::mul(detail::mul(g, b), pow(a, detail::shift(b, -1)));
    else return g * out * log(a);
  }
};
/// d elu(x, alpha) = g for x > 0, g alpha e^x = g (out + alpha) otherwise (no exp: out is read from memory);
/// with respect to alpha: g (e^x - 1) = g out / alpha for x <= 0.
template <> struct gradient_rule<op::elu> {
  template <std::size_t I, class G, class Out, class X, class Alpha>
  static auto partial(const G& g, const Out& out, const X& x, const Alpha& alpha) {
    if constexpr (I == 0) return where(x > 0, g, g * (out + alpha));
    else return where(x > 0, 0, g * exp(x) - g);
  }
};
/// d(-x) = -g.
template <> struct gradient_rule<op::negate> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out&, const X&) { return -g; }
};
/// d e^x = g e^x.
template <> struct gradient_rule<op::exp> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out& out, const X&) {
    return g * out;
  }
};
/// d log x = g / x.
template <> struct gradient_rule<op::log> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out&, const X& x) {
    return g / x;
  }
};
/// d sqrt x = g / (2 sqrt x).
template <> struct gradient_rule<op::sqrt> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out& out, const X&) {
    return g / (2 * out);
  }
};
/// d |x| = g sign(x), with the subgradient 0 at x = 0.
template <> struct gradient_rule<op::abs> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out&, const X& x) {
    return where(x > 0, g, where(x < 0, -g, 0));
  }
};
/// d tanh x = g (1 - tanh^2 x).
template <> struct gradient_rule<op::tanh> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out& out, const X&) {
    return g * (1 - out * out);
  }
};
/// d sigmoid x = g s (1 - s).
template <> struct gradient_rule<op::sigmoid> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out& out, const X&) {
    return g * out * (1 - out);
  }
};
/// d relu x = g for x > 0, 0 otherwise (subgradient 0 at 0).
template <> struct gradient_rule<op::relu> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out&, const X& x) {
    return where(x > 0, g, 0);
  }
};
/// where(c, a, b): the gradient goes to the selected branch; none to the condition.
template <> struct gradient_rule<op::where> {
  template <std::size_t I, class G, class Out, class C, class A, class B>
  static auto partial(const G& g, const Out&, const C& c, const A&, const B&) {
    if constexpr (I == 0) return no_gradient{};
    else if constexpr (I == 1) return where(c, g, 0);
    else return where(c, 0, g);
  }
};
/// cast<To>(x) from a floating dtype: the gradient cast back to x's dtype; none from integers or bool.
template <class To> struct gradient_rule<op::cast<To>> {
  template <std::size_t I, class G, class Out, class X> static auto partial(const G& g, const Out&, const X&) {
    using from = typename X::value_type;
    if constexpr (is_floating_v<from> && is_floating_v<To>) return cast<from>(g);
    else return no_gradient{};
  }
};

/// Comparisons and logical ops are piecewise constant: no gradient.
#define TEXPR_NO_GRADIENT_RULE(OP)                                                                   \
  template <> struct gradient_rule<op::OP> {                                                         \
    template <std::size_t I, class G, class Out, class... X> static auto partial(const G&, const Out&, const X&...) { \
      return no_gradient{};                                                                          \
    }                                                                                                \
  };
TEXPR_NO_GRADIENT_RULE(equal)
TEXPR_NO_GRADIENT_RULE(not_equal)
TEXPR_NO_GRADIENT_RULE(less)
TEXPR_NO_GRADIENT_RULE(less_equal)
TEXPR_NO_GRADIENT_RULE(greater)
TEXPR_NO_GRADIENT_RULE(greater_equal)
TEXPR_NO_GRADIENT_RULE(logical_and)
TEXPR_NO_GRADIENT_RULE(logical_or)
TEXPR_NO_GRADIENT_RULE(logical_not)
#undef TEXPR_NO_GRADIENT_RULE

} // namespace texpr
