// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradient rules: one tx::gradient_rule per differentiable op, built from registered ops only, so gradient graphs
// run wherever the forward ops do. A unary op's rule is in its definition (op/elementwise.hpp), adapted here; the
// others are specialisations in this file. docs/gradients.md is generated from both.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "texpr/core/dtype.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/expr/concat.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/generator.hpp"
#include "texpr/expr/indexing.hpp"
#include "texpr/expr/layout.hpp"
#include "texpr/expr/matmul.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/expr/scan.hpp"
#include "texpr/expr/softmax.hpp"
#include "texpr/op/composite.hpp"
#include "texpr/op/elementwise.hpp"
#include "texpr/op/indexing.hpp"
#include "texpr/op/layout.hpp"
#include "texpr/op/matmul.hpp"
#include "texpr/op/reduction.hpp"
#include "texpr/op/scan.hpp"

namespace texpr {

/// Returned by a rule for an operand the result does not depend on differentiably (a where condition, integer
/// casts).
struct no_gradient {};

/// Gradient rule of op Op. A specialisation has:
///   derivative          the rule in words, for the generated table in docs/gradients.md;
///   `uses<I>`           what `partial<I>` reads of the forward pass, as bits: 1 the result, 2 << j operand j
///                       (tx::grad saves exactly these values, once);
///   `partial<I>(n, g, out, x...)`  the gradient for operand I, given the forward node n (shapes, axes, parameters),
///                       the incoming gradient g, the result `out` and the operands x... (lazy expressions).
/// For elementwise ops, g and the returned contribution may be broadcast beyond operand I's shape: texpr sums it
/// back. Other ops return exactly operand I's shape. An op without a rule makes tx::grad fail to compile, naming
/// the op; give your own unary op a gradient in its definition (docs/adding_an_op.md), or specialise gradient_rule.
template <class Op> struct gradient_rule;

namespace detail {
template <class Op> concept has_gradient_rule = requires { sizeof(gradient_rule<Op>); };

/// Bits of what gradient_rule<Op> reads for operand I of node N: its uses_of<N, I> where it depends on the node's
/// operand types, else its uses<I> (a rule that states nothing reads everything).
template <class Op, std::size_t I, class N = void> constexpr unsigned rule_uses() {
  if constexpr (!std::is_void_v<N> && requires { gradient_rule<Op>::template uses_of<N, I>; })
    return gradient_rule<Op>::template uses_of<N, I>;
  else if constexpr (requires { gradient_rule<Op>::template uses<I>; }) return gradient_rule<Op>::template uses<I>;
  else return ~0u;
}
inline constexpr unsigned uses_out = 1;  ///< uses<I> bit: the op's result.
/// uses<I> bit: operand j.
constexpr unsigned uses_operand(std::size_t j) { return 2u << j; }

template <class N> struct is_constant_node : std::bool_constant<op::category_v<typename N::op_type> == op::kind::constant> {};

/// What an op definition's gradient builds other nodes with (op/definition.hpp): op/ cannot name expr/'s
/// functions, so tx::grad hands it this.
struct rule_builder {
  /// The node of elementwise Op over x....
  template <class Op, class... X> static auto map(const X&... x) { return make_map<Op>(x...); }
  /// where(c, a, b), a or b possibly a number.
  template <class C, class A, class B> static auto where(const C& c, const A& a, const B& b) { return texpr::where(c, a, b); }
  /// a * b, folded to one constant when both are constants.
  template <class A, class B> static auto mul(const A& a, const B& b);
  /// a + s for a number s, folded when a is a rank-0 constant.
  template <class A> static auto shift(const A& a, double s);
};

/// a * b, folded to one constant when both are constants (the seed 1 times 1/n, alpha, an exponent).
template <class A, class B> auto mul(const A& a, const B& b) {
  using T = typename A::value_type;
  if constexpr (is_constant_node<A>::value && is_constant_node<B>::value) {
    if constexpr (A::rank >= B::rank) return constant_expr<T, A::rank, any_backend>(a.value() * b.value(), broadcast_shapes(a.shape(), b.shape()));
    else return constant_expr<T, B::rank, any_backend>(a.value() * b.value(), broadcast_shapes(a.shape(), b.shape()));
  } else {
    return a * b;
  }
}
/// a * s for a number s, folded when a is a constant.
template <class A> auto scale(const A& a, double s) {
  using T = typename A::value_type;
  if constexpr (is_constant_node<A>::value)
    return constant_expr<T, A::rank, any_backend>(static_cast<T>(static_cast<double>(a.value()) * s), a.shape());
  else return a * s;
}
/// a + s for a number s, folded when a is a rank-0 constant.
template <class A> auto shift(const A& a, double s) {
  using T = typename A::value_type;
  if constexpr (is_constant_node<A>::value && A::rank == 0) return scalar_expr<T>(static_cast<T>(static_cast<double>(a.value()) + s));
  else return a + s;
}

template <class A, class B> auto rule_builder::mul(const A& a, const B& b) { return detail::mul(a, b); }
template <class A> auto rule_builder::shift(const A& a, double s) { return detail::shift(a, s); }

/// slice's gradient: g (the slice's shape) placed at the positions node n selects of zeros of its operand's shape,
/// for every step, with one expression type whatever the parameters: g in ascending order of position (reversed
/// by a slice for a negative step), each element followed by |step| - 1 zeros along a new axis (a concat,
/// reshaped to interleave them), cut to the positions that exist and padded with zeros before and after (a
/// concat along the axis). Two passes over x's shape, with registered ops only.
template <class N, class G> auto unslice(const N& n, const G& g) {
  using T = typename G::value_type;
  constexpr std::size_t R = N::rank;
  const auto& p = n.params();
  const std::size_t a = p.axis;
  const auto xs = n.child().shape();
  const index_t extent = xs[a], count = p.count;
  const index_t step = p.step < 0 ? -p.step : p.step;  // |step| < extent when count > 1 (else it is 1)
  // The lowest selected position; with nothing selected, no g at all.
  const index_t low = count == 0 ? 0 : (p.step > 0 ? p.first : p.first + p.step * (count - 1));
  auto ascending = p.step > 0 ? slice(g, static_cast<index_t>(a), 0, count, 1)
                              : slice(g, static_cast<index_t>(a), -1, std::numeric_limits<index_t>::min(), -1);
  shape_t<R + 1> gaps{};
  for (std::size_t d = 0, i = 0; d != R + 1; ++d) gaps[d] = d == a + 1 ? step - 1 : xs[i++];
  gaps[a] = count;
  auto spread_out = texpr::concat(static_cast<index_t>(a + 1), unsqueeze(std::move(ascending), static_cast<index_t>(a + 1)),
                           constant_expr<T, R + 1, any_backend>(T(0), gaps));
  shape_t<R> flat = xs;
  flat[a] = count * step;  // < 2 extent: count > 1 means (count - 1) step < extent
  const index_t kept = flat[a] < extent - low ? flat[a] : extent - low;
  shape_t<R> before = xs, after = xs;
  before[a] = low;
  after[a] = extent - low - kept;
  return texpr::concat(static_cast<index_t>(a), constant_expr<T, R, any_backend>(T(0), before),
                slice(reshape(std::move(spread_out), flat), static_cast<index_t>(a), 0, kept),
                constant_expr<T, R, any_backend>(T(0), after));
}

/// v (a reduction's result or gradient) spread back over the reduction's input: its reduced axes reinstated with
/// extent 1, then broadcast.
template <class N, class V> auto spread(const N& n, const V& v) {
  using C = std::remove_cvref_t<decltype(n.child())>;
  if constexpr (is_constant_node<V>::value && V::rank == 0)  // the seed (or a folded constant): no memory at all
    return constant_expr<typename V::value_type, C::rank, any_backend>(v.value(), n.child().shape());
  else return broadcast_to(reshape(v, n.kept_shape()), n.child().shape());
}
/// The same reduction's axes, kept, of another expression (a reduction by Op2 of x, shaped to broadcast back).
template <class Op2, class N, class X> auto reduce_kept(const N& n, X x) {
  using C = std::remove_cvref_t<decltype(n.child())>;
  return reduce_expr<Op2, captured_t<X>, C::rank>(capture(std::move(x)), Op2{}, n.axes());
}
} // namespace detail

// ---- elementwise -----------------------------------------------------------------------------------------

/// d elu(x, alpha) = g for x > 0, g (out + alpha) otherwise (e^x read from the result, not recomputed).
template <> struct gradient_rule<op::elu> {
  static constexpr std::string_view derivative =
      "dx = g * where(out > 0, 1, out + alpha) for a constant alpha >= 0, else g * where(x > 0, 1, out + alpha); "
      "dalpha = g * where(x > 0, 0, out / alpha)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out | detail::uses_operand(0) | detail::uses_operand(1);
  /// With a constant alpha (tx::elu(x), tx::elu(x, 0.5)), dx reads the result only: x need not be kept, so
  /// elu(x w + b) is computed and saved as one value (one GEMM epilogue on the host, one fused pass on cuda).
  template <class N, std::size_t I>
  static constexpr unsigned uses_of =
      I == 0 && detail::is_constant_node<detail::tuple_element_t<1, std::remove_cvref_t<decltype(std::declval<const N&>().operands())>>>::value
          ? detail::uses_out
          : uses<I>;
  template <std::size_t I, class N, class G, class Out, class X, class Alpha>
  static auto partial(const N&, const G& g, const Out& out, const X& x, const Alpha& alpha) {
    // g appears once: a rule that repeats it duplicates everything below it in the fused gradient.
    if constexpr (I == 0 && detail::is_constant_node<Alpha>::value) {
      // x > 0 exactly where out > 0 when alpha >= 0 (for alpha < 0, elu(x) > 0 for x < 0 too).
      if (alpha.value() < 0)
        throw std::domain_error("texpr: tx::grad of elu with a negative alpha is not supported (its gradient is "
                                "computed from the result, which needs alpha >= 0)");
      (void)x;
      return g * where(out > 0, 1, out + alpha);
    } else if constexpr (I == 0) {
      return g * where(x > 0, 1, out + alpha);
    } else {
      return g * where(x > 0, 0, out / alpha);
    }
  }
};
/// An elementwise op whose definition carries its gradient (op/definition.hpp): the rule is the definition's.
template <class Op>
  requires op::gradient_definition<Op>
struct gradient_rule<Op> {
  static constexpr std::string_view derivative = Op::derivative;  ///< From the op's definition.
  /// From the op's definition: one `reads` for a unary op, `reads<I>` per operand otherwise.
  template <std::size_t I> static constexpr unsigned uses = op::gradient_reads<Op, I>();
  /// The definition's gradient for operand I, given the builder of other ops' nodes.
  template <std::size_t I, class N, class G, class Out, class... X> static auto partial(const N&, const G& g, const Out& out, const X&... x) {
    if constexpr (sizeof...(X) == 1) return Op::gradient(detail::rule_builder{}, g, out, x...);
    else return Op::template gradient<I>(detail::rule_builder{}, g, out, x...);
  }
};

/// clamp(x, lo, hi) = min(max(x, lo), hi): the gradient goes to whichever of x, lo, hi the result is.
template <> struct gradient_rule<op::clamp> {
  static constexpr std::string_view derivative =
      "dx = where(lo <= x <= hi, g, 0), dlo = where(x < lo <= hi, g, 0), dhi = where(max(x, lo) > hi, g, 0)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(0) | detail::uses_operand(1) | detail::uses_operand(2);
  template <std::size_t I, class N, class G, class Out, class X, class Lo, class Hi>
  static auto partial(const N&, const G& g, const Out&, const X& x, const Lo& lo, const Hi& hi) {
    if constexpr (I == 0) return where((x >= lo) && (x <= hi), g, 0);
    else if constexpr (I == 1) return where((x < lo) && (lo <= hi), g, 0);
    else return where(maximum(x, lo) > hi, g, 0);
  }
};
/// where(c, a, b): the gradient goes to the selected branch; none to the condition.
template <> struct gradient_rule<op::where> {
  static constexpr std::string_view derivative = "da = where(c, g, 0), db = where(c, 0, g), no gradient to the condition c";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? 0u : detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class C, class A, class B>
  static auto partial(const N&, const G& g, const Out&, const C& c, const A&, const B&) {
    if constexpr (I == 0) return no_gradient{};
    else if constexpr (I == 1) return where(c, g, 0);
    else return where(c, 0, g);
  }
};
/// cast<To>(x) between floating dtypes: the gradient cast back to x's dtype; none from integers or bool.
template <class To> struct gradient_rule<op::cast<To>> {
  static constexpr std::string_view derivative = "dx = cast<dtype of x>(g) between floating dtypes; no gradient from integers or bool";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N&, const G& g, const Out&, const X&) {
    using from = typename X::value_type;
    if constexpr (is_floating_v<from> && is_floating_v<To>) return cast<from>(g);
    else return no_gradient{};
  }
};

// ---- reductions ------------------------------------------------------------------------------------------

/// sum: g spread back over the reduced axes.
template <> struct gradient_rule<op::sum> {
  static constexpr std::string_view derivative = "dx = g broadcast back over the reduced axes";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return detail::spread(n, g);
  }
};
/// sum_to: g broadcast back to the operand's shape.
template <> struct gradient_rule<op::sum_to> : gradient_rule<op::sum> {};
/// mean: g / count spread back.
template <> struct gradient_rule<op::mean> {
  static constexpr std::string_view derivative = "dx = g / n broadcast back over the reduced axes (n elements per result)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return detail::scale(detail::spread(n, g), 1.0 / static_cast<double>(n.reduced_size()));
  }
};
/// max/min: g shared equally among the elements equal to the extreme value.
template <class Op> struct extreme_gradient_rule {
  static constexpr std::string_view derivative = "dx = where(x == out, g / count(x == out), 0): shared among ties";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out | detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X& x) {
    using T = typename X::value_type;
    const auto hit = x == detail::spread(n, out);
    auto count = broadcast_to(detail::reduce_kept<op::sum>(n, cast<T>(hit)), n.child().shape());
    return where(hit, detail::spread(n, g) / count, 0);
  }
};
/// max: see extreme_gradient_rule.
template <> struct gradient_rule<op::max> : extreme_gradient_rule<op::max> {};
/// min: see extreme_gradient_rule.
template <> struct gradient_rule<op::min> : extreme_gradient_rule<op::min> {};
/// prod, zero-safe: with no zero in a product, g out / x; with one, g times the product of the others at the zero
/// and 0 elsewhere; with two or more, 0.
template <> struct gradient_rule<op::prod> {
  static constexpr std::string_view derivative =
      "dx = g * out / x without zeros; with one zero, g * (product of the others) at the zero and 0 elsewhere; "
      "with more, 0";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out | detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X& x) {
    using T = typename X::value_type;
    const auto is_zero = x == 0;
    auto zeros = broadcast_to(detail::reduce_kept<op::sum>(n, cast<T>(is_zero)), n.child().shape());
    auto others = broadcast_to(detail::reduce_kept<op::prod>(n, where(is_zero, 1, x)), n.child().shape());
    return detail::spread(n, g) * where(zeros == 0, detail::spread(n, out) / x, where((zeros == 1) && is_zero, others, 0));
  }
};

/// var: g * 2 (x - mean) / (n - ddof) spread back; stddev: g * (x - mean) / ((n - ddof) * out).
template <class Op> struct moment_gradient_rule {
  static constexpr bool is_std = std::is_same_v<Op, op::stddev>;  ///< stddev (else var)
  static constexpr std::string_view derivative =
      is_std ? "dx = g * (x - mean(x)) / ((n - ddof) * out)" : "dx = g * 2 (x - mean(x)) / (n - ddof)";
  template <std::size_t I> static constexpr unsigned uses = (is_std ? detail::uses_out : 0u) | detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X& x) {
    const double dof = static_cast<double>(n.reduced_size() - n.op().ddof);
    auto centred = x - broadcast_to(detail::reduce_kept<op::mean>(n, x), n.child().shape());
    if constexpr (is_std) return detail::spread(n, g) * detail::scale(centred, 1.0 / dof) / detail::spread(n, out);
    else return detail::spread(n, g) * detail::scale(centred, 2.0 / dof);
  }
};
/// var: see moment_gradient_rule.
template <> struct gradient_rule<op::var> : moment_gradient_rule<op::var> {};
/// stddev: see moment_gradient_rule.
template <> struct gradient_rule<op::stddev> : moment_gradient_rule<op::stddev> {};
/// logsumexp: g times the softmax of x along the reduced axes.
template <> struct gradient_rule<op::logsumexp> {
  static constexpr std::string_view derivative = "dx = g * exp(x - out) (g times softmax(x))";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out | detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X& x) {
    return detail::spread(n, g) * exp(x - detail::spread(n, out));
  }
};

// ---- scans -----------------------------------------------------------------------------------------------

namespace detail {
/// The scan of node n's axis by Op2 over x, in the other direction than n's (what a scan's gradient sums with).
template <class Op2, class N, class X> auto rescan(const N& n, X x) {
  return scan_expr<Op2, captured_t<X>>(capture(std::move(x)), n.axis(), !n.reverse());
}

/// x moved one place along `axis`, by `offset` (+1: element i is x's element i - 1; -1: element i + 1), the place
/// left free filled with `fill`. One expression type for either direction (a slice of x padded at both ends), since
/// a scan's direction is a run-time property of its node.
template <class X, class T> auto shifted(const X& x, std::size_t axis, int offset, T fill) {
  using C = captured_t<const X&>;
  using B = typename C::backend;
  constexpr std::size_t R = C::rank;
  auto edge_shape = x.shape();
  edge_shape[axis] = 1;
  const index_t n = x.shape()[axis];
  const auto a = static_cast<index_t>(axis);
  auto padded = concat(a, constant_expr<T, R, B>(fill, edge_shape), x, constant_expr<T, R, B>(fill, edge_shape));
  return slice(std::move(padded), a, 1 - offset, 1 - offset + n);
}
} // namespace detail

/// cumprod, without dividing by x (exact where x has zeros): dx_k = (the product before k) * s_k, where
/// s_k = g_k + x_(k+1) s_(k+1) is a linear recurrence from the other end.
template <> struct gradient_rule<op::cumprod> {
  static constexpr std::string_view derivative =
      "dx_k = y_(k-1) * s_k with s_k = g_k + x_(k+1) s_(k+1) (linear_recurrence from the other end; y = cumprod(x), "
      "y_(-1) = 1): no division, exact with zeros in x";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out | detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X& x) {
    using T = typename N::value_type;
    const int towards_later = n.reverse() ? -1 : 1;  // the scan's direction, as a shift
    auto next = detail::shifted(x, n.axis(), -towards_later, T(0));     // x_(k+1) in scan order
    auto before = detail::shifted(out, n.axis(), towards_later, T(1));  // y_(k-1) in scan order
    auto s = recurrence_expr<detail::captured_t<decltype(next)>, detail::captured_t<const G&>>(std::move(next), detail::capture(g),
                                                                                           n.axis(), !n.reverse());
    return std::move(before) * std::move(s);
  }
};

/// linear_recurrence h_k = a_k h_(k-1) + b_k: with c_k = g_k + a_(k+1) c_(k+1) (the same recurrence from the other
/// end), db = c and da = c * h_(k-1).
template <> struct gradient_rule<op::linear_recurrence> {
  static constexpr std::string_view derivative =
      "db = c, da_k = c_k * h_(k-1), with c_k = g_k + a_(k+1) c_(k+1) (linear_recurrence from the other end; h_(-1) = 0)";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? (detail::uses_out | detail::uses_operand(0)) : detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class A, class Bt>
  static auto partial(const N& n, const G& g, const Out& out, const A& a, const Bt&) {
    using T = typename N::value_type;
    const int towards_later = n.reverse() ? -1 : 1;
    auto next = detail::shifted(a, n.axis(), -towards_later, T(0));
    auto c = recurrence_expr<detail::captured_t<decltype(next)>, detail::captured_t<const G&>>(std::move(next), detail::capture(g),
                                                                                           n.axis(), !n.reverse());
    if constexpr (I == 1) return c;
    else return std::move(c) * detail::shifted(out, n.axis(), towards_later, T(0));
  }
};

/// cumsum: each element reaches every later result, so dx is g summed from the other end.
template <> struct gradient_rule<op::cumsum> {
  static constexpr std::string_view derivative = "dx = cumsum(g) along the axis in the other direction";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return detail::rescan<op::cumsum>(n, g);
  }
};
/// cummax / cummin: g goes to the first position of each prefix's extreme (cumargmax: ties to the first).
template <class Arg> struct running_extreme_gradient_rule {
  static constexpr std::string_view derivative =
      "dx = scatter_add(zeros like x, axis, cumarg(x), g): each result's g to the first position of its prefix's "
      "extreme (ties: the first)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X& x) {
    auto at = scan_expr<Arg, detail::captured_t<const X&>>(detail::capture(x), n.axis(), n.reverse());
    return detail::scatter_add(n.axis(), x.shape()[n.axis()], g, std::move(at));
  }
};
/// cummax: see running_extreme_gradient_rule.
template <> struct gradient_rule<op::cummax> : running_extreme_gradient_rule<op::cumargmax> {};
/// cummin: see running_extreme_gradient_rule.
template <> struct gradient_rule<op::cummin> : running_extreme_gradient_rule<op::cumargmin> {};
/// logcumsumexp: dx_j = sum over later i of g_i exp(x_j - out_i), as the difference of two reversed
/// logcumsumexps of log(max(+-g, 0)) - out, so that nothing overflows (exp(x_j - out_i) <= 1).
template <> struct gradient_rule<op::logcumsumexp> {
  static constexpr std::string_view derivative =
      "dx = exp(x + rlcse(log(max(g, 0)) - out)) - exp(x + rlcse(log(max(-g, 0)) - out)), rlcse = logcumsumexp "
      "in the other direction";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out | detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X& x) {
    auto up = detail::rescan<op::logcumsumexp>(n, log(maximum(g, 0)) - out);
    auto down = detail::rescan<op::logcumsumexp>(n, log(maximum(-g, 0)) - out);
    return exp(x + std::move(up)) - exp(x + std::move(down));
  }
};

// ---- composites ------------------------------------------------------------------------------------------

/// softmax: dx = out * (g - sum(g * out, axis)), the Jacobian-vector product without the Jacobian.
template <> struct gradient_rule<op::softmax> {
  static constexpr std::string_view derivative = "dx = out * (g - sum(g * out, axis, keepdims))";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X&) {
    return out * (g - sum(g * out, static_cast<index_t>(n.axis()), keepdims));
  }
};
/// log_softmax: dx = g - exp(out) * sum(g, axis).
template <> struct gradient_rule<op::log_softmax> {
  static constexpr std::string_view derivative = "dx = g - exp(out) * sum(g, axis, keepdims)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out& out, const X&) {
    return g - exp(out) * sum(g, static_cast<index_t>(n.axis()), keepdims);
  }
};
/// cross_entropy: dz = g * (softmax(z, 1) - one_hot(labels)) / batch as one cross_entropy_grad node (a constant g
/// folded into its scale), which a backend may compute in one pass per row; no gradient to the integer labels.
template <> struct gradient_rule<op::cross_entropy> {
  static constexpr std::string_view derivative =
      "dz = g * (softmax(z, 1) - one_hot(labels, classes)) / batch (one cross_entropy_grad node); none to the labels";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? detail::uses_operand(0) | detail::uses_operand(1) : 0u;
  template <std::size_t I, class N, class G, class Out, class Z, class L>
  static auto partial(const N&, const G& g, const Out&, const Z& z, const L& l) {
    if constexpr (I == 1) {
      return no_gradient{};
    } else {
      using CZ = detail::captured_t<const Z&>;
      using CL = detail::captured_t<const L&>;
      const auto shape = z.shape();
      if constexpr (detail::is_constant_node<G>::value && G::rank == 0) {
        const double scale = static_cast<double>(detail::widen(g.value()));  // (16-bit floats widen first)
        return composite_expr<op::cross_entropy_grad, 2, CZ, CL>(1, scale, shape, detail::capture(z), detail::capture(l));
      } else {
        static_assert(G::rank == 0, "texpr: cross_entropy's incoming gradient is a scalar");
        using CG = detail::captured_t<const G&>;
        return composite_expr<op::cross_entropy_grad, 2, CZ, CL, CG>(1, 1.0, shape, detail::capture(z),
                                                                     detail::capture(l), detail::capture(g));
      }
    }
  }
};

/// layer_norm over the last axis, with xhat = (x - mean) * rstd, rstd = rsqrt(var + eps), recomputed from x.
template <> struct gradient_rule<op::layer_norm> {
  static constexpr std::string_view derivative =
      "dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)), dw = sum_to(g * xhat), db = sum_to(g), with "
      "xhat = (x - mean(x)) * rstd and rstd = rsqrt(var(x) + eps) along the last axis";
  template <std::size_t I> static constexpr unsigned uses =
      I == 0 ? detail::uses_operand(0) | detail::uses_operand(1) : (I == 1 ? detail::uses_operand(0) : 0u);
  template <std::size_t I, class N, class G, class Out, class X, class W, class B>
  static auto partial(const N& n, const G& g, const Out&, const X& x, const W& w, const B& b) {
    const auto a = static_cast<index_t>(n.axis());
    // g is saved (it flows into a computed node): reading it several times reads memory.
    [[maybe_unused]] auto rstd = [&] { return rsqrt(var(x, a, keepdims) + n.parameter()); };
    [[maybe_unused]] auto xhat = [&] { return (x - mean(x, a, keepdims)) * rstd(); };
    if constexpr (I == 0) {
      return rstd() * (g * w - mean(g * w, a, keepdims) - xhat() * mean(g * w * xhat(), a, keepdims));
    } else if constexpr (I == 1) {
      return sum_to(g * xhat(), w.shape());
    } else {
      return sum_to(g, b.shape());
    }
  }
};

// ---- indexing --------------------------------------------------------------------------------------------

/// index_select: each slice of g summed into the slice of x its index names (index_add into zeros); none to the
/// indices.
template <> struct gradient_rule<op::index_select> {
  static constexpr std::string_view derivative =
      "dx = index_add(zeros like x, axis, indices, g) (a deterministic sum per element of x); none to the indices";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? detail::uses_operand(1) : 0u;
  template <std::size_t I, class N, class G, class Out, class X, class L>
  static auto partial(const N& n, const G& g, const Out&, const X&, const L& l) {
    if constexpr (I == 1) return no_gradient{};
    else return detail::index_add(n.axis(), detail::get<0>(n.operands()).shape()[n.axis()], g, l);
  }
};
/// gather: each element of g summed into the element of x its index names (scatter_add into zeros); none to the
/// indices.
template <> struct gradient_rule<op::gather> {
  static constexpr std::string_view derivative =
      "dx = scatter_add(zeros like x, axis, indices, g) (a deterministic sum per element of x); none to the indices";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? detail::uses_operand(1) : 0u;
  template <std::size_t I, class N, class G, class Out, class X, class L>
  static auto partial(const N& n, const G& g, const Out&, const X&, const L& l) {
    if constexpr (I == 1) return no_gradient{};
    else return detail::scatter_add(n.axis(), detail::get<0>(n.operands()).shape()[n.axis()], g, l);
  }
};
/// embedding (operands: weight, indices): the rows of g summed into the weight rows their indices name.
template <> struct gradient_rule<op::embedding> {
  static constexpr std::string_view derivative =
      "dweight = index_add(zeros like weight, 0, flattened indices, g as (indices, D)) (a deterministic sum per "
      "element of weight); none to the indices";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? detail::uses_operand(1) : 0u;
  template <std::size_t I, class N, class G, class Out, class W, class L>
  static auto partial(const N& n, const G& g, const Out&, const W&, const L& l) {
    if constexpr (I == 1) {
      return no_gradient{};
    } else {
      const auto ws = detail::get<0>(n.operands()).shape();
      return detail::index_add(0, ws[0], reshape(g, {-1, ws[1]}), reshape(l, {-1}));
    }
  }
};

// ---- matmul ----------------------------------------------------------------------------------------------

/// C = A B: dA = g B^T, dB = A^T g, summed over broadcast batch dimensions; vectors as in NumPy.
template <> struct gradient_rule<op::matmul> {
  static constexpr std::string_view derivative = "dA = g B^T, dB = A^T g (summed over broadcast batch dimensions)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(1 - I);
  template <std::size_t I, class N, class G, class Out, class A, class B>
  static auto partial(const N& n, const G& g, const Out&, const A& a, const B& b) {
    using NA = detail::tuple_element_t<0, std::remove_cvref_t<decltype(n.operands())>>;
    using NB = detail::tuple_element_t<1, std::remove_cvref_t<decltype(n.operands())>>;
    const auto as = detail::get<0>(n.operands()).shape();
    const auto bs = detail::get<1>(n.operands()).shape();
    if constexpr (NA::rank == 1 && NB::rank == 1) {  // dot: C = sum_k a_k b_k
      if constexpr (I == 0) return g * b;
      else return g * a;
    } else if constexpr (NA::rank == 1) {  // (k) x (..., k, n) -> (..., n)
      if constexpr (I == 0) return sum_to(matmul(unsqueeze(g, -2), transpose(b)), as);
      else return sum_to(matmul(unsqueeze(a, -1), unsqueeze(g, -2)), bs);
    } else if constexpr (NB::rank == 1) {  // (..., m, k) x (k) -> (..., m)
      if constexpr (I == 0) return sum_to(matmul(unsqueeze(g, -1), unsqueeze(b, -2)), as);
      else return sum_to(squeeze(matmul(transpose(a), unsqueeze(g, -1)), -1), bs);
    } else if constexpr (NA::rank == 2 && NB::rank == 2) {  // no batch dimensions: nothing to sum
      if constexpr (I == 0) return matmul(g, transpose(b));
      else return matmul(transpose(a), g);
    } else {
      if constexpr (I == 0) return sum_to(matmul(g, transpose(b)), as);
      else return sum_to(matmul(transpose(a), g), bs);
    }
  }
};

// ---- layouts ---------------------------------------------------------------------------------------------

/// transpose: g transposed back.
template <> struct gradient_rule<op::transpose> {
  static constexpr std::string_view derivative = "dx = transpose(g)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N&, const G& g, const Out&, const X&) {
    return transpose(g);
  }
};
/// permute: g permuted by the inverse permutation.
template <> struct gradient_rule<op::permute> {
  static constexpr std::string_view derivative = "dx = permute(g, inverse permutation)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    constexpr std::size_t R = N::rank;
    typename N::params_type inv;
    for (std::size_t d = 0; d != R; ++d) inv.perm[n.params().perm[d]] = d;
    return layout_expr<op::permute, detail::captured_t<const G&>, R>(detail::capture(g), inv);
  }
};
/// reshape: g reshaped to the operand's shape.
template <> struct gradient_rule<op::reshape> {
  static constexpr std::string_view derivative = "dx = reshape(g, shape of x)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return reshape(g, n.child().shape());
  }
};
/// unsqueeze: the inserted axis removed.
template <> struct gradient_rule<op::unsqueeze> {
  static constexpr std::string_view derivative = "dx = squeeze(g, axis)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return squeeze(g, static_cast<index_t>(n.params().axis));
  }
};
/// squeeze: the removed axis reinserted.
template <> struct gradient_rule<op::squeeze> {
  static constexpr std::string_view derivative = "dx = unsqueeze(g, axis)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return unsqueeze(g, static_cast<index_t>(n.params().axis));
  }
};
/// diagonal: g on the diagonal of zeros of the operand's shape: g times an identity pattern, its two last axes moved
/// back to the operand's two axes.
template <> struct gradient_rule<op::diagonal> {
  static constexpr std::string_view derivative =
      "dx = zeros of x's shape with g on the diagonal of the two axes (where(i == j, g, 0) over the pair, permuted back)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    constexpr std::size_t R = N::rank + 1;  // the operand's rank
    using T = typename N::value_type;
    using B = typename N::backend;
    const index_t extent = n.shape()[N::rank - 1];
    auto rows = reshape(arange<std::int64_t, B>(extent), {extent, 1});
    auto cols = reshape(arange<std::int64_t, B>(extent), {1, extent});
    auto spread = where(rows == cols, unsqueeze(g, -1), T(0));  // (..., n, n): g[..., i] where i == j
    // Result axis d of `spread` is: the operand's axes other than the pair, in order, then axis1, then axis2.
    typename op::permute::template params<R, R> back;
    const auto& p = n.params();
    std::size_t order[R] = {};
    for (std::size_t d = 0, o = 0; d != R; ++d)
      if (d != p.axis1 && d != p.axis2) order[o++] = d;
    order[R - 2] = p.axis1;
    order[R - 1] = p.axis2;
    for (std::size_t d = 0; d != R; ++d) back.perm[order[d]] = d;
    return layout_expr<op::permute, detail::captured_t<decltype(spread)>, R>(std::move(spread), back);
  }
};
/// slice: g placed at the sliced positions of zeros of the operand's shape (detail::unslice).
template <> struct gradient_rule<op::slice> {
  static constexpr std::string_view derivative =
      "dx = zeros of x's shape with g at the sliced positions (any step: g interleaved with abs(step) - 1 zeros by a "
      "concat and a reshape, padded by a concat)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return detail::unslice(n, g);
  }
};
/// concat: each operand's slice of g.
template <> struct gradient_rule<op::concat> {
  static constexpr std::string_view derivative = "d operand i = slice(g, axis, offset of i, offset of i + its extent)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class... X> static auto partial(const N& n, const G& g, const Out&, const X&...) {
    const auto a = n.axis();
    const index_t begin = n.offset(I);
    return slice(g, static_cast<index_t>(a), begin, begin + detail::get<I>(n.operands()).shape()[a]);
  }
};
/// broadcast_to: g summed back to the operand's shape.
template <> struct gradient_rule<op::broadcast_to> {
  static constexpr std::string_view derivative = "dx = sum_to(g, shape of x)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return sum_to(g, n.child().shape());
  }
};

} // namespace texpr
