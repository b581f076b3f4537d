// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the optimisers share: the parameters they update in place, the gradients a step accepts (one tensor or view
// per parameter, optionally after value_and_grad's loss) with their checks, and the step counter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

#if defined(__CUDACC__)
#include <array>
#include <string_view>

#include "texpr/backend/cuda/multi_tensor.hpp"
#endif

namespace texpr::detail {

/// Whether parameters P... can be updated by multi-tensor launches: cuda tensors of one dtype, float or double,
/// in a CUDA translation unit (other dtypes and the host keep one fused pass per tensor written).
template <class... P>
inline constexpr bool multi_tensor_update_v =
    cuda_compiler_v && (std::is_same_v<typename P::backend, cuda> && ...) &&
    ((std::is_same_v<typename P::value_type, float> && ...) || (std::is_same_v<typename P::value_type, double> && ...));

/// What an optimiser updates: a mutable tx::tensor.
template <class P> struct optim_parameter : std::false_type {};
template <class T, std::size_t R, class B> struct optim_parameter<tensor<T, R, B>> : std::true_type {
  using read_view = view<const T, R, B>;  ///< How a step reads it (and its state and gradient).
  using flat_view = view<const T, 1, B>;  ///< How the update graphs read it: its elements as one range (flat).
};

/// A gradient: a tensor or a view (const or not), reduced to the read-only view the update graphs read.
template <class G> struct optim_gradient : std::false_type {};
template <class T, std::size_t R, class B> struct optim_gradient<tensor<T, R, B>> : std::true_type {
  using read_view = view<const T, R, B>;
  static read_view of(const tensor<T, R, B>& g) { return g.view(); }
};
template <class T, std::size_t R, class B> struct optim_gradient<view<T, R, B>> : std::true_type {
  using read_view = view<const std::remove_const_t<T>, R, B>;
  static read_view of(const view<T, R, B>& g) { return g; }
};

/// The elements of contiguous memory v as one rank-1 view, so that an optimiser's update graphs are instantiated
/// once per (dtype, backend), not once per parameter rank.
template <class T, std::size_t R, class B> view<T, 1, B> flat(const view<T, R, B>& v) noexcept {
  return view<T, 1, B>(unchecked_t{}, v.data(), shape_t<1>{v.size()}, shape_t<1>{1}, v.stream());
}

/// Gradient g as one rank-1 view: g itself when contiguous, else a contiguous copy made in `copy` on `stream` (the
/// parameter's, so the update that reads it is ordered after it). A strided gradient costs one copy rather than a
/// second instantiation of every update graph.
template <class T, std::size_t R, class B>
view<const T, 1, B> flat_gradient(const view<const T, R, B>& g, tensor<T, R, B>& copy, stream_t stream) {
  if (g.is_contiguous()) return flat(g);
  copy.allocate_uninitialized(g.shape(), stream);
  copy.view() = g;
  return flat(std::as_const(copy).view());
}

/// The parameters of an optimiser (held by address: they must outlive it and stay where they are), the step
/// counter, and the unpacking and checking of a step's gradients. Optimisers derive from it.
template <class... P> class optimizer_parameters {
  static_assert(sizeof...(P) > 0, "texpr: an optimiser needs at least one parameter, e.g. std::tie(m.w1, m.b1)");
  static_assert((optim_parameter<P>::value && ...),
                "texpr: optimiser parameters are updated in place: pass mutable tx::tensor objects, e.g. std::tie(m.w1, m.b1)");

 public:
  /// Number of parameters.
  static constexpr std::size_t size = sizeof...(P);

  /// Keeps the parameters' addresses.
  explicit optimizer_parameters(const std::tuple<P&...>& params)
      : params_(std::apply([](P&... p) { return std::tuple<P*...>{&p...}; }, params)) {}

  /// Steps taken so far: the index of the next step (what a schedule is called with).
  std::int64_t steps() const noexcept { return steps_; }

 protected:
  /// Calls f(std::integral_constant<std::size_t, I>{}, parameter I, gradient I as a read-only view) for each
  /// parameter, after checking every gradient's type and shape. `grads` holds one gradient per parameter, or
  /// value_and_grad's (loss, gradients...), whose loss is skipped.
  template <class Tuple, class F> void for_each_gradient(const Tuple& grads, F&& f) {
    using tuple_t = std::remove_cvref_t<Tuple>;
    constexpr std::size_t n = std::tuple_size_v<tuple_t>;
    constexpr bool counted = n == size || n == size + 1;
    static_assert(counted,
                  "texpr: an optimiser step needs one gradient per parameter, in the parameters' order, or "
                  "value_and_grad's evaluated (loss, gradients...)");
    if constexpr (counted) {
      constexpr std::size_t skip = n - size;
      using indices = std::index_sequence_for<P...>;
      constexpr bool readable = []<std::size_t... I>(std::index_sequence<I...>) {
        return (gradient_t<tuple_t, I + skip>::value && ...);
      }(indices{});
      static_assert(readable,
                    "texpr: an optimiser's gradients must be tensors or views: evaluate the gradient graphs first, "
                    "e.g. opt.step(tx::eval_all(tx::value_and_grad(loss, w, b)))");
      constexpr bool matching = []<std::size_t... I>(std::index_sequence<I...>) {
        if constexpr (readable)
          return (std::is_same_v<typename gradient_t<tuple_t, I + skip>::read_view,
                                 typename optim_parameter<std::tuple_element_t<I, std::tuple<P...>>>::read_view> && ...);
        else
          return true;
      }(indices{});
      static_assert(matching, "texpr: a gradient's dtype, rank or backend differs from its parameter's (gradients go "
                              "in the parameters' order)");
      if constexpr (readable && matching) {
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          (check_shape<I>(std::get<I + skip>(grads).shape()), ...);  // all before any update
          (f(std::integral_constant<std::size_t, I>{}, *std::get<I>(params_),
             gradient_t<tuple_t, I + skip>::of(std::get<I + skip>(grads))),
           ...);
        }(indices{});
      }
    }
  }

#if defined(__CUDACC__)
  /// Updates every parameter with `rule` in multi-tensor launches: one per multi_tensor_width consecutive
  /// parameters on one stream (a parameter on another stream starts a new launch). A strided gradient is first
  /// copied, contiguous, on its parameter's stream. state(i) gives parameter i's state pointers (s1, s2; null for
  /// none). Gradients are checked as for_each_gradient checks them, before anything is written.
  template <class Grads, class Rule, class State>
  void multi_tensor_step(const Grads& grads, const Rule& rule, std::string_view op, State&& state) {
    using T = typename std::tuple_element_t<0, std::tuple<P...>>::value_type;
    std::array<T*, size> ps{};
    std::array<const T*, size> gs{};
    std::array<index_t, size> ns{};
    std::array<std::pair<T*, T*>, size> ss{};
    std::array<stream_t, size> streams{};
    std::tuple<std::remove_cvref_t<P>...> copies;  // strided gradients, contiguous
    for_each_gradient(grads, [&](auto i, auto& p, auto g) {
      constexpr std::size_t k = decltype(i)::value;
      streams[k] = p.stream();
      gs[k] = flat_gradient(g, std::get<k>(copies), p.stream()).data();
      ps[k] = p.data();
      ns[k] = p.size();
      ss[k] = state(i);
    });
    cuda_impl::multi_tensor_table<T> table;
    stream_t stream = nullptr;
    for (std::size_t k = 0; k < size; ++k) {
      if (table.count == cuda_impl::multi_tensor_width || (table.count > 0 && streams[k] != stream)) {
        cuda_impl::launch_multi_tensor(table, rule, stream, op);
        table = {};
      }
      stream = streams[k];
      const int j = table.count++;
      table.p[j] = ps[k];
      table.g[j] = gs[k];
      table.s1[j] = ss[k].first;
      table.s2[j] = ss[k].second;
      table.n[j] = ns[k];
    }
    cuda_impl::launch_multi_tensor(table, rule, stream, op);
  }
#endif

  std::tuple<P*...> params_;  ///< The parameters, in the order they were given.
  std::int64_t steps_ = 0;    ///< Steps taken.

 private:
  template <class Tuple, std::size_t J>
  using gradient_t = optim_gradient<std::remove_cvref_t<std::tuple_element_t<J, Tuple>>>;

  template <std::size_t I, class Shape> void check_shape(const Shape& shape) const {
    const auto& p = *std::get<I>(params_);
    if (shape != p.shape()) throw_gradient_shape(I, to_string(shape), to_string(p.shape()));
  }
  // check_shape's message, built out of line once rather than in each parameter's check.
  [[noreturn]] TEXPR_NOINLINE static void throw_gradient_shape(std::size_t i, const std::string& shape, const std::string& param) {
    throw shape_error("texpr: optimiser step: gradient " + std::to_string(i) + " has shape " + shape +
                      " but its parameter has shape " + param);
  }
};

/// Throws std::invalid_argument naming the option unless `ok`.
inline void check_option(bool ok, const char* optimiser, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("texpr: ") + optimiser + ": " + what);
}

} // namespace texpr::detail
