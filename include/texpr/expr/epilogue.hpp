// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which graphs a backend's fused GEMM epilogue takes: an elementwise tree reading exactly one matmul node through
// elementwise nodes only (elu(matmul(x, w) + b), matmul(x, w) * s + y), with the matmul's dtype and rank, on a
// backend with a fused epilogue (registry/epilogue.hpp). Whether it runs fused is then decided at run time (the
// product must not be broadcast and no operand may overlap the destination).
#pragma once

#include <cstddef>
#include <type_traits>

#include "texpr/expr/node.hpp"
#include "texpr/op/kind.hpp"
#include "texpr/op/matmul.hpp"
#include "texpr/registry/epilogue.hpp"

namespace texpr::detail {

/// True for a matmul node.
template <class N> inline constexpr bool is_matmul_node_v = std::is_same_v<typename std::remove_cvref_t<N>::op_type, op::matmul>;

template <class N> constexpr std::size_t epilogue_matmuls();
template <class N, std::size_t... I> constexpr std::size_t epilogue_matmuls_below(std::index_sequence<I...>) {
  using Ops = std::remove_cvref_t<decltype(std::declval<const N&>().operands())>;
  return (std::size_t(0) + ... + epilogue_matmuls<tuple_element_t<I, Ops>>());
}
/// Number of matmul nodes N reads through elementwise nodes only (N itself counts when it is one).
template <class N> constexpr std::size_t epilogue_matmuls() {
  using M = std::remove_cvref_t<N>;
  if constexpr (is_matmul_node_v<M>) return 1;
  else if constexpr (kind_of_v<M> == op::kind::elementwise) return epilogue_matmuls_below<M>(std::make_index_sequence<M::children::size>{});
  else return 0;
}

/// The matmul node of an epilogue tree (the one epilogue_matmuls counts).
template <class N> const auto& epilogue_matmul(const N& n);
template <class N, std::size_t I = 0> const auto& epilogue_matmul_below(const N& n) {
  using C = std::remove_cvref_t<decltype(get<I>(n.operands()))>;
  if constexpr (epilogue_matmuls<C>() == 1) return epilogue_matmul(get<I>(n.operands()));
  else return epilogue_matmul_below<N, I + 1>(n);
}
template <class N> const auto& epilogue_matmul(const N& n) {
  if constexpr (is_matmul_node_v<N>) return n;
  else return epilogue_matmul_below(n);
}

template <class N, bool Tree = kind_of_v<N> == op::kind::elementwise && epilogue_matmuls<N>() == 1>
struct epilogue_shape : std::false_type {};
template <class N> struct epilogue_shape<N, true> {
  using M = std::remove_cvref_t<decltype(epilogue_matmul(std::declval<const N&>()))>;
  static constexpr bool value = std::is_same_v<typename M::value_type, typename N::value_type> && M::rank == N::rank &&
                                N::rank >= 2 && (std::is_same_v<typename N::value_type, float> || std::is_same_v<typename N::value_type, double>);
};

/// The shape half of the epilogue decision, shared by evaluation and tx::placement: elementwise root n runs as its
/// matmul's epilogue only when the product is not broadcast (it has n's shape) and is not empty. (Evaluation also
/// falls back when the destination is strided or overlaps an operand: placement assumes a fresh destination.)
template <class N> bool epilogue_fits(const N& n) {
  const auto& mm = epilogue_matmul(n);
  index_t size = 1;
  for (std::size_t d = 0; d != N::rank; ++d) size *= n.shape()[d];
  return mm.shape() == n.shape() && size != 0;
}

} // namespace texpr::detail

namespace texpr {

/// True when elementwise node N on Backend evaluates as its matmul's fused GEMM epilogue (when shapes and memory
/// allow at run time): what tx::placement shows as the node's kernel.
template <class N, class Backend>
inline constexpr bool has_gemm_epilogue_v = fused_epilogue<Backend>::available && detail::epilogue_shape<std::remove_cvref_t<N>>::value;

} // namespace texpr
