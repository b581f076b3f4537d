// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sorting, opt-in (texpr/texpr.hpp does not include it): tx::sort, tx::argsort and tx::topk on both backends, with
// gradients. Under nvcc it brings CUB's device-wide radix sorts, whose headers cost about 10 s of nvcc time per
// translation unit; only the units that sort pay for them. The rows are in both registry tables as usual.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>

#include "texpr/texpr.hpp"
#include "texpr/expr/sort.hpp"
#include "texpr/backend/host/sort.hpp"
#if defined(__CUDACC__)
#include "texpr/backend/cuda/sort.hpp"
#endif

namespace texpr {

/// What tx::topk returns: the k values of each line and their positions (int64), as `auto [values, indices] =`.
template <class Values, class Indices> struct topk_result {
  Values values;    ///< The k largest (smallest) of each line, in that order: a lazy expression.
  Indices indices;  ///< Their positions along the axis (int64): a shared value, computed once for both.
};

/// The k largest (largest = false: smallest) elements of each line of e along `axis` and their positions, largest
/// (smallest) first, ties to the lower position, NaN the largest (torch.topk; jax.lax.top_k). k outside
/// [0, extent] is a tx::shape_error naming k and the extent. One selection per evaluation serves both results:
/// the positions are a shared value (tx::share) and the values are e read at them; e itself is shared (computed
/// once) when it is not memory. Gradient through the values.
template <operand E>
auto topk(E&& e, index_t k, index_t axis = -1, bool largest = true, texpr::source_location loc = texpr::source_location::current()) {
  auto x = share(std::forward<E>(e));
  auto positions = detail::topk_positions(x, k, axis, largest, loc);
  const std::size_t a = positions.axis();
  auto indices = share(std::move(positions));
  auto values = detail::topk_values_of(x, indices, a);
  return topk_result<decltype(values), decltype(indices)>{std::move(values), std::move(indices)};
}

/// sort: g written back through the permutation that sorted x (scatter at argsort(x): each element once).
template <> struct gradient_rule<op::sort> {
  static constexpr std::string_view derivative =
      "dx = scatter(zeros like x, axis, argsort(x), g): each element of g back to where its value came from";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X& x) {
    auto order = sort_expr<op::argsort, detail::captured_t<const X&>>(detail::capture(x), n.axis(), n.k(), n.descending());
    return detail::scatter_distinct(n.axis(), x.shape()[n.axis()], g, std::move(order));
  }
};
/// topk_values (operands: x, positions): g written at the positions (scatter); none to the positions.
template <> struct gradient_rule<op::topk_values> {
  static constexpr std::string_view derivative =
      "dx = scatter(zeros like x, axis, indices, g): each value's g to its position; none to the indices";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? detail::uses_operand(1) : 0u;
  template <std::size_t I, class N, class G, class Out, class X, class L>
  static auto partial(const N& n, const G& g, const Out&, const X&, const L& l) {
    if constexpr (I == 1) return no_gradient{};
    else return detail::scatter_distinct(n.axis(), detail::get<0>(n.operands()).shape()[n.axis()], g, l);
  }
};
/// scatter (operands: g, positions): the result's gradient read back at the positions; none to the positions.
template <> struct gradient_rule<op::scatter> {
  static constexpr std::string_view derivative = "dg = the incoming gradient read at the positions; none to the positions";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? detail::uses_operand(1) : 0u;
  template <std::size_t I, class N, class G, class Out, class V, class L>
  static auto partial(const N& n, const G& g, const Out&, const V&, const L& l) {
    if constexpr (I == 1) return no_gradient{};
    else return detail::topk_values_of(detail::capture(g), detail::capture(l), n.axis());
  }
};

} // namespace texpr
