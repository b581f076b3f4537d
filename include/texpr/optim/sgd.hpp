// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::optim::sgd: stochastic gradient descent with momentum, dampening, Nesterov momentum and L2 weight decay,
// PyTorch's torch.optim.SGD formulas, each parameter updated by fused in-place passes.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/autograd/grad.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/optim/parameters.hpp"

namespace texpr::optim {

/// SGD's settings (PyTorch's names and defaults, lr aside).
struct sgd_options {
  double lr = 1e-2;           ///< Learning rate (a step may pass its own).
  double momentum = 0;        ///< Momentum factor (0: plain SGD, no state).
  double dampening = 0;       ///< Dampening of the gradient's share of the momentum buffer.
  double weight_decay = 0;    ///< L2 penalty: weight_decay * p is added to the gradient.
  bool nesterov = false;      ///< Nesterov momentum (needs momentum > 0 and dampening 0).
};

} // namespace texpr::optim

namespace texpr::detail {

// The update graphs, over read-only views V of the parameter p, its gradient g and momentum buffer b. d is the
// decayed gradient g + wd p.
template <class V> auto sgd_plain(V p, V g, double lr, double wd) { return p - lr * (g + wd * p); }
template <class V> auto sgd_buffer_start(V p, V g, double wd) { return g + wd * p; }
template <class V> auto sgd_buffer(V b, V g, double momentum, double dampening) {
  return momentum * b + (1 - dampening) * g;
}
template <class V> auto sgd_buffer_decayed(V b, V p, V g, double momentum, double dampening, double wd) {
  return momentum * b + (1 - dampening) * (g + wd * p);
}
template <class V> auto sgd_momentum_step(V p, V b, double lr) { return p - lr * b; }
template <class V> auto sgd_nesterov_step(V p, V b, V g, double lr, double momentum, double wd) {
  return p - lr * ((g + wd * p) + momentum * b);
}

/// Every graph an SGD step may evaluate for a parameter of type P (over its elements as one range; on cuda,
/// float and double parameters take the multi-tensor rule instead).
template <class P, class V = typename optim_parameter<P>::flat_view>
using sgd_graphs_t = std::tuple<decltype(sgd_plain(std::declval<V>(), std::declval<V>(), 0.0, 0.0)),
                                decltype(sgd_buffer_start(std::declval<V>(), std::declval<V>(), 0.0)),
                                decltype(sgd_buffer(std::declval<V>(), std::declval<V>(), 0.0, 0.0)),
                                decltype(sgd_buffer_decayed(std::declval<V>(), std::declval<V>(), std::declval<V>(), 0.0, 0.0, 0.0)),
                                decltype(sgd_momentum_step(std::declval<V>(), std::declval<V>(), 0.0)),
                                decltype(sgd_nesterov_step(std::declval<V>(), std::declval<V>(), std::declval<V>(), 0.0, 0.0, 0.0))>;

/// One parameter's SGD update over rank-1 views of its elements p, gradient g and momentum buffer b (unused
/// without momentum): one body per (dtype, backend), whatever the parameters' ranks.
template <class T, class B>
TEXPR_NOINLINE void sgd_update(view<T, 1, B> p, view<const T, 1, B> g, view<T, 1, B> b, bool first,
                               const optim::sgd_options& o, double lr) {
  const view<const T, 1, B> pv = p;
  if (o.momentum == 0) {
    p = sgd_plain(pv, g, lr, o.weight_decay);
    return;
  }
  const view<const T, 1, B> bv = b;
  if (first) b = sgd_buffer_start(pv, g, o.weight_decay);
  else if (o.weight_decay == 0) b = sgd_buffer(bv, g, o.momentum, o.dampening);
  else b = sgd_buffer_decayed(bv, pv, g, o.momentum, o.dampening, o.weight_decay);
  if (o.nesterov) p = sgd_nesterov_step(pv, bv, g, lr, o.momentum, o.weight_decay);
  else p = sgd_momentum_step(pv, bv, lr);
}

/// sgd_update for parameter p (its buffer b is allocated at the first step with momentum): one body per (dtype,
/// rank, backend).
template <class T, std::size_t R, class B>
TEXPR_NOINLINE void sgd_parameter_step(tensor<T, R, B>& p, const view<const T, R, B>& g, tensor<T, R, B>& b, bool first,
                                       const optim::sgd_options& o, double lr) {
  if (first && o.momentum != 0) b.allocate_uninitialized(p.shape(), p.stream());  // written by the first pass
  tensor<T, R, B> copy;  // a strided gradient's contiguous copy
  sgd_update(flat(p.view()), flat_gradient(g, copy, p.stream()), flat(b.view()), first, o, lr);
}

} // namespace texpr::detail

namespace texpr::optim {

/// SGD over parameters P... (tx::tensor types, any ranks and dtypes): per parameter, with d = g + weight_decay p,
///   momentum 0:        p -= lr d                                                  (1 pass, no state)
///   momentum buffer b: b = d at the first step, else b = momentum b + (1 - dampening) d;
///                      p -= lr b, or with Nesterov p -= lr (d + momentum b)       (2 passes)
/// Each pass is one fused in-place elementwise evaluation on the parameters' backend, over the tensor's elements
/// as one rank-1 range (a strided gradient is copied first); on cuda with float or double parameters a step is
/// instead one multi-tensor launch per 8 parameters, both passes in it. The buffers are allocated at the first
/// step, so later steps allocate nothing.
/// `tx::optim::sgd opt(std::tie(m.w, m.b), {.lr = 0.1, .momentum = 0.9}); opt.step(grads);`
template <class... P> class sgd : public detail::optimizer_parameters<P...> {
  using base = detail::optimizer_parameters<P...>;

 public:
  /// Every update graph a step may evaluate, for every parameter.
  using graphs = decltype(std::tuple_cat(std::declval<detail::sgd_graphs_t<P>>()...));
  static_assert((all_run_on<detail::sgd_graphs_t<P>, typename P::backend> && ...),
                "texpr: an SGD update has no kernel on its parameter's backend for its dtype");

  /// Updates `params` (e.g. std::tie(m.w1, m.b1)); throws std::invalid_argument for negative settings or Nesterov
  /// without momentum or with dampening.
  explicit sgd(const std::tuple<P&...>& params, const sgd_options& options = {}) : base(params), options_(options) {
    detail::check_option(options.lr >= 0, "sgd", "lr must be >= 0");
    detail::check_option(options.momentum >= 0, "sgd", "momentum must be >= 0");
    detail::check_option(options.weight_decay >= 0, "sgd", "weight_decay must be >= 0");
    detail::check_option(!options.nesterov || (options.momentum > 0 && options.dampening == 0), "sgd",
                         "Nesterov momentum requires a momentum > 0 and zero dampening");
  }

  /// One step at the options' learning rate. `grads`: one gradient (tensor or view) per parameter, in order, or
  /// value_and_grad's evaluated (loss, gradients...): `opt.step(std::tie(gw, gb))`, `opt.step(tx::eval_all(g))`.
  template <class Grads> void step(const Grads& grads) { step(grads, options_.lr); }

  /// One step at learning rate `lr` (e.g. a schedule's value: `opt.step(grads, schedule(opt.steps()))`).
  template <class Grads> void step(const Grads& grads, double lr) {
    const sgd_options& o = options_;
    const bool first = this->steps_ == 0;
    if constexpr (detail::multi_tensor_update_v<P...>) {
      step_multi_tensor(grads, lr, first);
    } else {
      this->for_each_gradient(grads, [&](auto i, auto& p, auto g) {
        detail::sgd_parameter_step(p, g, std::get<decltype(i)::value>(buffers_), first, o, lr);
      });
    }
    ++this->steps_;
  }

  /// The settings (lr is the rate of step(grads)).
  const sgd_options& options() const noexcept { return options_; }
  /// Sets the learning rate of later step(grads) calls.
  void set_lr(double lr) { options_.lr = lr; }
  /// The momentum buffer of parameter I (empty before the first step or without momentum).
  template <std::size_t I> const auto& momentum_buffer() const { return std::get<I>(buffers_); }

 private:
  // cuda, float or double: every parameter in one launch per 8 (the first step with momentum too, which
  // allocates the buffers and writes them without reading them).
  template <class Grads> void step_multi_tensor([[maybe_unused]] const Grads& grads, [[maybe_unused]] double lr,
                                                [[maybe_unused]] bool first) {
#if defined(__CUDACC__)
    using T = typename std::tuple_element_t<0, std::tuple<P...>>::value_type;
    const sgd_options& o = options_;
    if (o.momentum == 0) {
      const detail::cuda_impl::sgd_plain_rule<T> rule{static_cast<T>(lr), static_cast<T>(o.weight_decay)};
      this->multi_tensor_step(grads, rule, "sgd", [](auto) { return std::pair<T*, T*>{}; });
      return;
    }
    const detail::cuda_impl::sgd_momentum_rule<T> rule{static_cast<T>(lr), static_cast<T>(o.weight_decay),
                                                       static_cast<T>(o.momentum), static_cast<T>(o.dampening),
                                                       o.nesterov, first};
    this->multi_tensor_step(grads, rule, "sgd", [&](auto i) {
      auto& b = std::get<decltype(i)::value>(buffers_);
      if (first) {  // (the gradients are checked by now)
        const auto& p = *std::get<decltype(i)::value>(this->params_);
        b.allocate_uninitialized(p.shape(), p.stream());
      }
      return std::pair<T*, T*>{b.data(), nullptr};
    });
#endif
  }

  sgd_options options_;
  std::tuple<std::remove_cvref_t<P>...> buffers_;  // empty tensors until the first step with momentum
};

template <class... P> sgd(const std::tuple<P&...>&) -> sgd<P...>;
template <class... P> sgd(const std::tuple<P&...>&, const sgd_options&) -> sgd<P...>;

} // namespace texpr::optim
