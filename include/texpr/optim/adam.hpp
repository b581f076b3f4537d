// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::optim::adam and tx::optim::adamw: PyTorch's torch.optim.Adam (L2 weight decay added to the gradient) and
// torch.optim.AdamW (decoupled weight decay), three fused in-place passes per parameter.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/autograd/grad.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/optim/parameters.hpp"

namespace texpr::optim {

/// Adam's settings (PyTorch's defaults; betas as two fields).
struct adam_options {
  double lr = 1e-3;           ///< Learning rate (a step may pass its own).
  double beta1 = 0.9;         ///< Decay of the first moment (the gradients' running mean).
  double beta2 = 0.999;       ///< Decay of the second moment (the squared gradients' running mean).
  double eps = 1e-8;          ///< Added to the bias-corrected second moment's square root.
  double weight_decay = 0;    ///< L2 penalty: weight_decay * p is added to the gradient.
};

/// AdamW's settings (PyTorch's defaults: weight decay 1e-2).
struct adamw_options {
  double lr = 1e-3;             ///< Learning rate (a step may pass its own).
  double beta1 = 0.9;           ///< Decay of the first moment.
  double beta2 = 0.999;         ///< Decay of the second moment.
  double eps = 1e-8;            ///< Added to the bias-corrected second moment's square root.
  double weight_decay = 1e-2;   ///< Decoupled decay: p *= 1 - lr * weight_decay before the Adam step.
};

} // namespace texpr::optim

namespace texpr::detail {

// The update graphs over read-only views V of the parameter p, its gradient g and moments m and v. Evaluated in
// this order: m, then v, then p (m and v read p before it changes).
template <class V> auto adam_first_moment(V m, V g, double beta1) { return beta1 * m + (1 - beta1) * g; }
template <class V> auto adam_first_moment_l2(V m, V p, V g, double beta1, double wd) {
  return beta1 * m + (1 - beta1) * (g + wd * p);
}
template <class V> auto adam_second_moment(V v, V g, double beta2) { return beta2 * v + (1 - beta2) * (g * g); }
template <class V> auto adam_second_moment_l2(V v, V p, V g, double beta2, double wd) {
  return beta2 * v + (1 - beta2) * ((g + wd * p) * (g + wd * p));
}
// p decay - step_size m / (sqrt(v) / sqrt(1 - beta2^t) + eps), step_size = lr / (1 - beta1^t); decay is 1 for Adam
// and 1 - lr wd for AdamW (PyTorch's p.mul_(1 - lr wd) then p.addcdiv_(m, denom, -step_size), in one pass).
template <class V> auto adam_parameter(V p, V m, V v, double decay, double step_size, double bias2_sqrt, double eps) {
  return decay * p - step_size * (m / (texpr::sqrt(v) / bias2_sqrt + eps));
}

/// Every graph an Adam or AdamW step may evaluate for a parameter of type P (over its elements as one range; on cuda,
/// float and double parameters take the multi-tensor rule instead).
template <class P, class V = typename optim_parameter<P>::flat_view>
using adam_graphs_t =
    std::tuple<decltype(adam_first_moment(std::declval<V>(), std::declval<V>(), 0.0)),
               decltype(adam_first_moment_l2(std::declval<V>(), std::declval<V>(), std::declval<V>(), 0.0, 0.0)),
               decltype(adam_second_moment(std::declval<V>(), std::declval<V>(), 0.0)),
               decltype(adam_second_moment_l2(std::declval<V>(), std::declval<V>(), std::declval<V>(), 0.0, 0.0)),
               decltype(adam_parameter(std::declval<V>(), std::declval<V>(), std::declval<V>(), 0.0, 0.0, 0.0, 0.0))>;

/// One parameter's Adam update over rank-1 views of its elements p, gradient g and moments m, v: m, then v, then
/// p. One body per (dtype, backend), whatever the parameters' ranks.
template <class T, class B>
TEXPR_NOINLINE void adam_update(view<T, 1, B> p, view<const T, 1, B> g, view<T, 1, B> m, view<T, 1, B> v, bool l2,
                                double beta1, double beta2, double wd, double decay, double step_size,
                                double bias2_sqrt, double eps) {
  const view<const T, 1, B> pv = p, mv = m, vv = v;
  if (l2) {
    m = adam_first_moment_l2(mv, pv, g, beta1, wd);
    v = adam_second_moment_l2(vv, pv, g, beta2, wd);
  } else {
    m = adam_first_moment(mv, g, beta1);
    v = adam_second_moment(vv, g, beta2);
  }
  p = adam_parameter(pv, mv, vv, decay, step_size, bias2_sqrt, eps);
}

/// adam_update for parameter p (its moments m and v are zeroed at the first step): one body per (dtype, rank,
/// backend).
template <class T, std::size_t R, class B>
TEXPR_NOINLINE void adam_parameter_step(tensor<T, R, B>& p, const view<const T, R, B>& g, tensor<T, R, B>& m,
                                        tensor<T, R, B>& v, bool l2, double beta1, double beta2, double wd,
                                        double decay, double step_size, double bias2_sqrt, double eps) {
  if (m.empty() && p.size() != 0) {  // the first step: zero moments on the parameter's backend and stream
    m = tensor<T, R, B>(p.shape(), p.stream());
    v = tensor<T, R, B>(p.shape(), p.stream());
  }
  tensor<T, R, B> copy;  // a strided gradient's contiguous copy
  adam_update(flat(p.view()), flat_gradient(g, copy, p.stream()), flat(m.view()), flat(v.view()), l2, beta1, beta2,
              wd, decay, step_size, bias2_sqrt, eps);
}

/// Adam and AdamW: the moments of each parameter, allocated at the first step (zero on the host; on cuda the first
/// launch writes them), and the step.
template <bool Decoupled, class Options, class... P> class adam_family : public optimizer_parameters<P...> {
  using base = optimizer_parameters<P...>;
  static constexpr const char* name = Decoupled ? "adamw" : "adam";

 public:
  /// Every update graph a step may evaluate, for every parameter.
  using graphs = decltype(std::tuple_cat(std::declval<adam_graphs_t<P>>()...));
  static_assert((all_run_on<adam_graphs_t<P>, typename P::backend> && ...),
                "texpr: an Adam update has no kernel on its parameter's backend for its dtype");

  /// Updates `params` (e.g. std::tie(m.w1, m.b1)); throws std::invalid_argument for settings out of range.
  explicit adam_family(const std::tuple<P&...>& params, const Options& options) : base(params), options_(options) {
    check_option(options.lr >= 0, name, "lr must be >= 0");
    check_option(options.eps >= 0, name, "eps must be >= 0");
    check_option(options.beta1 >= 0 && options.beta1 < 1, name, "beta1 must be in [0, 1)");
    check_option(options.beta2 >= 0 && options.beta2 < 1, name, "beta2 must be in [0, 1)");
    check_option(options.weight_decay >= 0, name, "weight_decay must be >= 0");
  }

  /// One step at the options' learning rate. `grads`: one gradient (tensor or view) per parameter, in order, or
  /// value_and_grad's evaluated (loss, gradients...): `opt.step(std::tie(gw, gb))`, `opt.step(tx::eval_all(g))`.
  template <class Grads> void step(const Grads& grads) { step(grads, options_.lr); }

  /// One step at learning rate `lr` (e.g. a schedule's value: `opt.step(grads, schedule(opt.steps()))`).
  template <class Grads> void step(const Grads& grads, double lr) {
    const Options& o = options_;
    const auto t = static_cast<double>(this->steps_ + 1);
    const double step_size = lr / (1 - std::pow(o.beta1, t));
    const double bias2_sqrt = std::sqrt(1 - std::pow(o.beta2, t));
    const double decay = Decoupled ? 1 - lr * o.weight_decay : 1.0;
    const bool l2 = !Decoupled && o.weight_decay != 0;
    if constexpr (multi_tensor_update_v<P...>) {
      // cuda, float or double: m, v and p of every parameter in one launch per 8 (the first step too, which
      // allocates the moments and writes them without reading them).
      step_multi_tensor(grads, l2, decay, step_size, bias2_sqrt);
    } else {
      this->for_each_gradient(grads, [&](auto i, auto& p, auto g) {
        auto& [m, v] = std::get<decltype(i)::value>(moments_);
        adam_parameter_step(p, g, m, v, l2, o.beta1, o.beta2, o.weight_decay, decay, step_size, bias2_sqrt, o.eps);
      });
    }
    ++this->steps_;
  }

  /// The settings (lr is the rate of step(grads)).
  const Options& options() const noexcept { return options_; }
  /// Sets the learning rate of later step(grads) calls.
  void set_lr(double lr) { options_.lr = lr; }
  /// The first moment (exp_avg) of parameter I (empty before the first step).
  template <std::size_t I> const auto& exp_avg() const { return std::get<I>(moments_).first; }
  /// The second moment (exp_avg_sq) of parameter I (empty before the first step).
  template <std::size_t I> const auto& exp_avg_sq() const { return std::get<I>(moments_).second; }

 private:
  // cuda, float or double: m, v and p of every parameter in one launch per 8.
  template <class Grads>
  void step_multi_tensor([[maybe_unused]] const Grads& grads, [[maybe_unused]] bool l2, [[maybe_unused]] double decay,
                         [[maybe_unused]] double step_size, [[maybe_unused]] double bias2_sqrt) {
#if defined(__CUDACC__)
    using T = typename std::tuple_element_t<0, std::tuple<P...>>::value_type;
    const Options& o = options_;
    const bool first = this->steps_ == 0;
    const cuda_impl::adam_rule<T> rule{static_cast<T>(o.beta1), static_cast<T>(o.beta2),
                                       static_cast<T>(l2 ? o.weight_decay : 0.0), static_cast<T>(decay),
                                       static_cast<T>(step_size), static_cast<T>(bias2_sqrt),
                                       static_cast<T>(o.eps), first};
    this->multi_tensor_step(grads, rule, name, [&](auto i) {
      auto& [m, v] = std::get<decltype(i)::value>(moments_);
      if (first) {  // (the gradients are checked by now)
        const auto& p = *std::get<decltype(i)::value>(this->params_);
        m.allocate_uninitialized(p.shape(), p.stream());
        v.allocate_uninitialized(p.shape(), p.stream());
      }
      return std::pair<T*, T*>{m.data(), v.data()};
    });
#endif
  }

  Options options_;
  std::tuple<std::pair<std::remove_cvref_t<P>, std::remove_cvref_t<P>>...> moments_;
};

} // namespace texpr::detail

namespace texpr::optim {

/// Adam over parameters P... (tx::tensor types, any ranks and dtypes), PyTorch's formulas: with t the step
/// (from 1) and d = g + weight_decay p,
///   m = beta1 m + (1 - beta1) d;  v = beta2 v + (1 - beta2) d^2;
///   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
/// Three fused in-place passes per parameter (m, v, p: one per tensor written); the moments are allocated at the
/// first step, so later steps allocate nothing.
/// `tx::optim::adam opt(std::tie(m.w, m.b), {.lr = 1e-3}); opt.step(grads);`
template <class... P> class adam : public detail::adam_family<false, adam_options, P...> {
 public:
  /// Updates `params` (e.g. std::tie(m.w1, m.b1)); throws std::invalid_argument for settings out of range.
  explicit adam(const std::tuple<P&...>& params, const adam_options& options = {})
      : detail::adam_family<false, adam_options, P...>(params, options) {}
};
template <class... P> adam(const std::tuple<P&...>&) -> adam<P...>;
template <class... P> adam(const std::tuple<P&...>&, const adam_options&) -> adam<P...>;

/// AdamW over parameters P...: PyTorch's decoupled weight decay, p *= 1 - lr weight_decay, then Adam's step
/// without L2 (the decay is folded into the parameter's pass). Three fused in-place passes per parameter.
/// `tx::optim::adamw opt(std::tie(m.w, m.b), {.weight_decay = 0.01}); opt.step(grads, schedule(opt.steps()));`
template <class... P> class adamw : public detail::adam_family<true, adamw_options, P...> {
 public:
  /// Updates `params` (e.g. std::tie(m.w1, m.b1)); throws std::invalid_argument for settings out of range.
  explicit adamw(const std::tuple<P&...>& params, const adamw_options& options = {})
      : detail::adam_family<true, adamw_options, P...>(params, options) {}
};
template <class... P> adamw(const std::tuple<P&...>&) -> adamw<P...>;
template <class... P> adamw(const std::tuple<P&...>&, const adamw_options&) -> adamw<P...>;

} // namespace texpr::optim
