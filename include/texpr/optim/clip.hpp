// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::optim::clip_grad_norm: gradient clipping by global L2 norm (torch.nn.utils.clip_grad_norm_).
#pragma once

#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/optim/parameters.hpp"

namespace texpr::detail {

/// A gradient clip_grad_norm may scale: a tensor or a view of mutable elements.
template <class G> struct clippable : std::false_type {};
template <class T, std::size_t R, class B> struct clippable<tensor<T, R, B>> : std::true_type {
  using value_type = T;
  using backend = B;
};
template <class T, std::size_t R, class B>
  requires(!std::is_const_v<T>)
struct clippable<view<T, R, B>> : std::true_type {
  using value_type = T;
  using backend = B;
};

} // namespace texpr::detail

namespace texpr::optim {

/// Scales the gradients in place so that their global L2 norm (over all elements of all of them) is at most
/// max_norm, and returns that norm as it was before scaling. As torch.nn.utils.clip_grad_norm_: the scale is
/// max_norm / (norm + 1e-6), applied only when below 1. `grads`: a tuple of tensors or mutable views of one dtype
/// and backend (std::tie(gw, gb), or tx::eval_all(tx::grad(...))'s result). Costs one reduction per gradient,
/// one host wait for the norm, and, when clipping, one fused in-place pass per gradient.
template <class Grads> double clip_grad_norm(Grads&& grads, double max_norm) {
  return std::apply(
      [max_norm](auto&... g) -> double {
        static_assert(sizeof...(g) > 0, "texpr: clip_grad_norm needs at least one gradient");
        static_assert(((detail::clippable<std::remove_cvref_t<decltype(g)>>::value &&
                       !std::is_const_v<std::remove_reference_t<decltype(g)>>) && ...),
                      "texpr: clip_grad_norm scales gradients in place: pass a tuple of tensors or mutable views, "
                      "e.g. std::tie(gw, gb) (not value_and_grad's tuple with the loss)");
        using first = std::tuple_element_t<0, std::tuple<std::remove_cvref_t<decltype(g)>...>>;
        using T = typename detail::clippable<first>::value_type;
        static_assert((std::is_same_v<typename detail::clippable<std::remove_cvref_t<decltype(g)>>::value_type, T> && ...),
                      "texpr: clip_grad_norm needs gradients of one dtype");
        const auto sum_of_squares = [](const auto& x) {
          const auto v = detail::optim_gradient<std::remove_cvref_t<decltype(x)>>::of(x);
          return texpr::sum(v * v);
        };
        const double norm = std::sqrt(static_cast<double>((sum_of_squares(g) + ...).item()));
        const double scale = max_norm / (norm + 1e-6);
        if (scale < 1)
          ((g = detail::optim_gradient<std::remove_cvref_t<decltype(g)>>::of(g) * scale), ...);
        return norm;
      },
      grads);
}

} // namespace texpr::optim
