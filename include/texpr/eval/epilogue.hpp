// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading an epilogue tree (expr/epilogue.hpp) with its matmul node replaced by the GEMM's output memory, so that a
// backend's fused epilogue evaluates the rest of the tree over each finished block of the product in place.
#pragma once

#include <cstddef>
#include <utility>

#include "texpr/core/context.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/epilogue.hpp"

namespace texpr::detail {

template <std::size_t RO, class N, class T, class B>
auto read_epilogue(const N& n, const shape_t<RO>& out, context<B>& ctx, const T* product);

template <std::size_t RO, class N, class T, class B, std::size_t... I>
auto read_epilogue_map(const N& n, const shape_t<RO>& out, context<B>& ctx, const T* product, std::index_sequence<I...>) {
  using K = kernel<typename N::op_type, typename N::kernel_dtype, B>;
  using M = map_accessor<K, typename N::op_type, typename N::value_type,
                         decltype(read_epilogue(get<I>(n.operands()), out, ctx, product))...>;
  return M{{{read_epilogue(get<I>(n.operands()), out, ctx, product)}...}};
}

/// The accessor of epilogue tree n broadcast to `out`, its matmul node read from `product` (row-major, the matmul's
/// shape); every other operand is read (materialised if need be) as evaluation always does.
template <std::size_t RO, class N, class T, class B>
auto read_epilogue(const N& n, const shape_t<RO>& out, context<B>& ctx, const T* product) {
  if constexpr (is_matmul_node_v<N>)
    return make_strided_accessor(memory_source<T>{product}, n.shape(), contiguous_strides(n.shape()), out);
  else if constexpr (epilogue_matmuls<N>() == 1)
    return read_epilogue_map(n, out, ctx, product, std::make_index_sequence<N::children::size>{});
  else
    return read(n, out, ctx);
}

} // namespace texpr::detail
