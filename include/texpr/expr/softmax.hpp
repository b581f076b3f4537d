// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The composite ops: softmax, log_softmax, cross_entropy and layer_norm are composite nodes whose operands are
// evaluated once into memory and then read by their expansion's passes (softmax family: a max pass, then a fused
// pass of exp(x - max): summed, or for softmax written into the result and divided by its sum; layer_norm: mean and
// variance passes, then one fused pass); one_hot is an elementwise expression.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/generator.hpp"
#include "texpr/expr/layout.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/op/composite.hpp"

namespace texpr {

namespace detail {
template <class L> concept class_label = std::is_same_v<typename captured_t<L>::value_type, std::int32_t> ||
                                         std::is_same_v<typename captured_t<L>::value_type, std::int64_t>;

/// The shift the softmax family subtracts before exp, kept in memory as a small (..., 1, ...) tensor: the maximum
/// along `axis` (a max pass), or 0 where the maximum is infinite or NaN, so that +inf gives +inf, all -inf gives
/// -inf and NaN gives NaN. Kept rather than fused, so the exp pass reads one value per element instead of
/// recomputing the test.
template <class K, class X> auto max_shift(K& keep, std::size_t axis, const X& x) {
  auto m = keep(max(x, static_cast<index_t>(axis), keepdims));
  return keep(where(abs(m) < std::numeric_limits<float>::infinity(), m, 0));  // inf in m's dtype
}
/// log(sum(exp(x))) along `axis`, kept, in memory: max_shift, then one fused pass summing exp(x - shift) (the
/// vectorised host exp), log(sum) + shift materialised by `keep`. Faster than the one-pass logsumexp reduction,
/// whose per-element rescale does not vectorise.
template <class K, class X> auto logsumexp_kept(K& keep, std::size_t axis, const X& x) {
  auto shift = max_shift(keep, axis, x);
  return keep(log(sum(exp(x - shift), static_cast<index_t>(axis), keepdims)) + shift);
}
/// softmax's expansion over x (memory): e = exp(x - shift), then e / sum(e, axis). One exp per element: e is
/// evaluated into the result (keep.result, from compose_into; an intermediate where the hook has none) and the
/// last pass divides it in place.
template <class K, class X> auto expand(op::softmax, std::size_t axis, K& keep, const X& x) {
  auto shifted = exp(x - max_shift(keep, axis, x));
  const auto e = [&] {
    if constexpr (requires { keep.result(shifted); }) return keep.result(shifted);
    else return keep(shifted);
  }();
  // The sums are kept first: read inside the division's pass, a reduction of the result would count as an
  // aliased read of the destination and send the pass through a temporary.
  return e / keep(sum(e, static_cast<index_t>(axis), keepdims));
}
/// log_softmax's expansion over x (memory): x - logsumexp(x, axis, keepdims).
template <class K, class X> auto expand(op::log_softmax, std::size_t axis, K& keep, const X& x) {
  return x - logsumexp_kept(keep, axis, x);
}
/// Whether each entry along a new last axis of `classes` entries is its label: the labels' shape + (classes), bool,
/// broadcast (one_hot, and the cross_entropy gradient's mask).
template <class L> auto class_mask(L&& labels, index_t classes) {
  using CL = captured_t<L>;
  return unsqueeze(std::forward<L>(labels), -1) == arange<typename CL::value_type, typename CL::backend>(classes);
}
/// Whether each column of logits z (batch, classes) is its row's label: (batch, classes) bool, broadcast.
template <class Z, class L> auto label_mask(const Z& z, const L& l) { return class_mask(l, z.shape()[1]); }
/// z[i, l[i]] for each row of logits z and labels l (both memory: views), NaN for a label outside [0, classes):
/// the `pick` generator, one element read per row.
template <class Z, class L> auto pick(const Z& z, const L& l) {
  using T = typename Z::value_type;
  using I = typename L::value_type;
  // (No static_assert on I: cross_entropy, the only caller, rejects other label dtypes with its own one error.)
  const typename op::pick::source<T> src{z.data(),  z.strides()[0],  z.strides()[1], z.shape()[1],
                                         l.data(), l.strides()[0], std::is_same_v<I, std::int64_t>};
  return generator_expr<op::pick, T, 1, typename Z::backend>(src, shape_t<1>{z.shape()[0]});
}
/// cross_entropy's expansion over logits z and labels l (memory): mean(log(sum(exp(z - shift))) + (shift -
/// z[i, l i])) over the rows, NaN for a label outside [0, classes). The two terms are >= 0 for finite rows, so
/// large logits lose nothing to cancellation; the label logits are read by `pick`, one per row.
template <class K, class Z, class L> auto expand(op::cross_entropy, std::size_t, K& keep, const Z& z, const L& l) {
  auto shift = max_shift(keep, 1, z);
  auto sums = keep(sum(exp(z - shift), 1));
  auto picked = keep(pick(z, l));  // a pass of its own: a loop of independent loads, not behind the mean's logs
  return mean(log(sums) + (squeeze(shift, 1) - picked));
}
/// cross_entropy_grad's expansion over logits z, labels l (memory) and, when g is not folded into `scale`, the
/// incoming gradient g (rank 0, memory): scale * g * (exp(z - logsumexp(z, 1)) - one_hot(l)) / batch, a
/// logsumexp pass and one fused pass. A label outside [0, classes) matches no column: its row is the softmax.
template <class K, class Z, class L, class... G>
auto expand(op::cross_entropy_grad, std::size_t, double scale, K&, const Z& z, const L& l, const G&... g) {
  using T = typename Z::value_type;
  static_assert(sizeof...(G) <= 1, "texpr: cross_entropy_grad takes at most one incoming gradient");
  auto difference = exp(z - logsumexp(z, 1, keepdims)) - cast<T>(label_mask(z, l));
  const double per_row = 1.0 / static_cast<double>(z.shape()[0]);
  if constexpr (sizeof...(G) == 0) return (static_cast<T>(scale) * difference) * per_row;
  else return ((g * ...) * difference) * per_row;  // (scale is 1: g is not a constant)
}
/// layer_norm's expansion over x, weight and bias (memory) along `axis` (the last): the mean and rsqrt(var + eps)
/// kept as small (..., 1) tensors (a mean pass, a variance pass, one small pass), then (x - mean) * rstd * weight
/// + bias in one fused pass.
template <class K, class X, class W, class Bias>
auto expand(op::layer_norm, std::size_t axis, double eps, K& keep, const X& x, const W& w, const Bias& b) {
  const auto a = static_cast<index_t>(axis);
  auto mu = keep(mean(x, a, keepdims));
  auto rstd = keep(rsqrt(var(x, a, keepdims) + eps));
  return (x - mu) * rstd * w + b;
}
/// What composite_expr::expand passes first: its call is unqualified, so argument-dependent lookup through this
/// tag finds expansions declared in headers included later (expr/indexing.hpp) as well as those above.
struct expansion_tag {};
/// The expansions above, reached through the tag.
template <class Op, class... A>
auto expand_composite(expansion_tag, Op op, A&&... a) -> decltype(expand(op, std::forward<A>(a)...)) {
  return expand(op, std::forward<A>(a)...);
}
} // namespace detail

/// A composite node: Op over operands C... with result rank R, evaluated by expanding it into registered
/// primitives over its operands' memory (each operand evaluated once).
template <class Op, std::size_t R, class... C> class composite_expr : public expr_base<composite_expr<Op, R, C...>> {
  using first = std::tuple_element_t<0, std::tuple<C...>>;

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C...>;
  using value_type = typename first::value_type;
  using kernel_dtype = value_type;
  using backend = typename detail::common_backend<typename C::backend...>::type;
  static constexpr std::size_t rank = R;

  /// Op of c... along `axis` (normalised), with result shape `shape`.
  composite_expr(std::size_t axis, const shape_t<R>& shape, C... c) : c_{{std::move(c)}...}, axis_(axis), shape_(shape) {}
  /// The same, for an op with a numeric parameter (layer_norm's eps).
  composite_expr(std::size_t axis, double parameter, const shape_t<R>& shape, C... c)
      : c_{{std::move(c)}...}, axis_(axis), parameter_(parameter), shape_(shape) {}
  /// The result shape.
  const shape_t<R>& shape() const { return shape_; }
  /// The operands, in order.
  const detail::tuple<C...>& operands() const { return c_; }
  /// The axis the op works along.
  std::size_t axis() const { return axis_; }
  /// The op's numeric parameter (layer_norm's eps; 0 for ops without one).
  double parameter() const { return parameter_; }
  /// The op's definition in registered primitives over v... (the operands' memory, as views); keep(e) turns an
  /// intermediate expression into memory (evaluation passes one that materialises it in the context).
  template <class K, class... V> auto expand(K& keep, const V&... v) const {
    if constexpr (requires { Op::parameter_name; }) return expand_composite(detail::expansion_tag{}, Op{}, axis_, parameter_, keep, v...);
    else return expand_composite(detail::expansion_tag{}, Op{}, axis_, keep, v...);
  }
  /// The same op over other operands of the same shapes.
  template <class... D> composite_expr<Op, R, D...> with_operands(D... d) const {
    return composite_expr<Op, R, D...>(axis_, parameter_, shape_, std::move(d)...);
  }

 private:
  detail::tuple<C...> c_;
  std::size_t axis_;
  double parameter_ = 0;
  shape_t<R> shape_{};
};


/// exp(e - logsumexp(e, axis)) along one axis (negative counts from the end), as torch.softmax: stable for large
/// logits. e is evaluated once; then a max pass, a fused sum of exp(e - max) and one fused elementwise pass.
template <operand E> auto softmax(E&& e, index_t axis, texpr::source_location loc = texpr::source_location::current()) {
  using C = detail::captured_t<E>;
  static_assert(is_floating_v<typename C::value_type>, "texpr: softmax takes a floating operand");
  auto c = detail::capture(std::forward<E>(e));
  const std::size_t a = detail::reduction_axis(axis, c.shape(), "softmax", loc);
  const auto s = c.shape();
  return composite_expr<op::softmax, C::rank, C>(a, s, std::move(c));
}

/// e - logsumexp(e, axis) along one axis: the log of softmax without its underflow. e is evaluated once.
template <operand E> auto log_softmax(E&& e, index_t axis, texpr::source_location loc = texpr::source_location::current()) {
  using C = detail::captured_t<E>;
  static_assert(is_floating_v<typename C::value_type>, "texpr: log_softmax takes a floating operand");
  auto c = detail::capture(std::forward<E>(e));
  const std::size_t a = detail::reduction_axis(axis, c.shape(), "log_softmax", loc);
  const auto s = c.shape();
  return composite_expr<op::log_softmax, C::rank, C>(a, s, std::move(c));
}

/// Layer normalisation over the last axis, as torch.nn.functional.layer_norm(x, (D,), weight, bias, eps):
/// (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the biased variance (dividing by D) of each
/// row along the last axis, and weight and bias of shape (D). x is evaluated once; then a mean pass, a variance
/// pass and one fused elementwise pass. Throws shape_error for weight or bias of another extent than D, and
/// std::invalid_argument for an eps that is negative or not finite.
template <operand E, operand W, operand Bias>
auto layer_norm(E&& x, W&& weight, Bias&& bias, double eps = 1e-5,
                texpr::source_location loc = texpr::source_location::current()) {
  using CX = detail::captured_t<E>;
  using CW = detail::captured_t<W>;
  using CB = detail::captured_t<Bias>;
  static_assert(is_floating_v<typename CX::value_type>, "texpr: layer_norm takes a floating operand");
  static_assert(CX::rank >= 1, "texpr: layer_norm normalises the last axis of an operand of rank 1 or more");
  static_assert(CW::rank == 1 && CB::rank == 1, "texpr: layer_norm takes weight and bias of shape (D), D the last extent of x");
  detail::check_same_dtype<typename CX::value_type, typename CW::value_type>();
  detail::check_same_dtype<typename CX::value_type, typename CB::value_type>();
  detail::check_same_backend<typename CX::backend, typename CW::backend>();
  detail::check_same_backend<typename CX::backend, typename CB::backend>();
  auto c = detail::capture(std::forward<E>(x));
  auto w = detail::capture(std::forward<W>(weight));
  auto b = detail::capture(std::forward<Bias>(bias));
  const auto s = c.shape();
  const index_t d = s[CX::rank - 1];
  if (w.shape()[0] != d || b.shape()[0] != d)
    throw shape_error(detail::at(loc) + "texpr: layer_norm needs weight and bias of shape (" + std::to_string(d) +
                      ",): x shape = " + to_string(s) + " weight shape = " + to_string(w.shape()) +
                      " bias shape = " + to_string(b.shape()));
  if (!(eps >= 0) || !(eps < std::numeric_limits<double>::infinity()))
    throw std::invalid_argument(detail::at(loc) + "texpr: layer_norm needs a finite eps >= 0, got eps = " + std::to_string(eps));
  return composite_expr<op::layer_norm, CX::rank, CX, CW, CB>(CX::rank - 1, eps, s, std::move(c), std::move(w), std::move(b));
}

/// One-hot encoding: labels of rank R (int32 or int64) to rank R + 1 with `classes` entries along the new last
/// axis, 1 at the label and 0 elsewhere, of dtype T (float unless given). A label outside [0, classes) gives a
/// row of zeros (it is not checked: the labels may be on the device).
template <class T = float, operand L> auto one_hot(L&& labels, index_t classes, texpr::source_location loc = texpr::source_location::current()) {
  static_assert(detail::class_label<L>, "texpr: one_hot takes int32 or int64 class labels");
  if (classes < 1) throw shape_error(detail::at(loc) + "texpr: one_hot needs at least one class, got " + std::to_string(classes));
  constexpr std::size_t R = detail::captured_t<L>::rank;
  shape_t<R + 1> result{};
  for (std::size_t d = 0; d != R; ++d) result[d] = labels.shape()[d];
  result[R] = classes;
  detail::check_shape(result, sizeof(T), "one_hot", &loc);
  return cast<T>(detail::class_mask(std::forward<L>(labels), classes));
}

/// Softmax cross-entropy of logits (batch, classes) against int32/int64 class labels (batch), averaged over the
/// batch, as PyTorch's F.cross_entropy: mean(logsumexp(z, 1) - z[i, label i]). The logits are evaluated once;
/// then a max pass, a sum of exp(z - max) and a mean that reads each row's label logit (one element per row): no
/// probabilities are materialised. A label outside [0, classes) makes the loss NaN (PyTorch raises; here the
/// labels may be on the device and are not read on the host).
template <operand Z, operand L>
auto cross_entropy(Z&& logits, L&& labels, texpr::source_location loc = texpr::source_location::current()) {
  using CZ = detail::captured_t<Z>;
  using CL = detail::captured_t<L>;
  static_assert(CZ::rank == 2, "texpr: cross_entropy takes logits of shape (batch, classes)");
  static_assert(CL::rank == 1, "texpr: cross_entropy takes labels of shape (batch)");
  static_assert(detail::class_label<L>, "texpr: cross_entropy takes int32 or int64 class labels");
  static_assert(is_floating_v<typename CZ::value_type>, "texpr: cross_entropy takes floating logits");
  auto z = detail::capture(std::forward<Z>(logits));
  auto l = detail::capture(std::forward<L>(labels));
  if (z.shape()[0] != l.shape()[0])
    throw shape_error(detail::at(loc) + "texpr: cross_entropy needs one label per row of the logits: logits shape = " +
                      to_string(z.shape()) + " labels shape = " + to_string(l.shape()));
  return composite_expr<op::cross_entropy, 0, CZ, CL>(1, shape_t<0>{}, std::move(z), std::move(l));
}

} // namespace texpr
