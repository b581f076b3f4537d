// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_kernels::strided_view: a layout node as the memory its operand is in, with the layout's extents and strides;
// copy_slices: a concatenation, each operand evaluated into its slice of the destination; composed: a composite
// op's expansion over its operands' memory.
#pragma once

#if defined(__CUDACC__)

#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"

#include <cstddef>
#include <utility>

namespace texpr::cuda_kernels {

template <class N>
texpr::view<const typename N::value_type, N::rank, cuda> strided_view::view_of(const N& n, context<cuda>& ctx) {
  return detail::layout_storage(n, ctx);
}

template <class N, class T, std::size_t R>
void copy_slices::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  detail::concat_into(n, dest, ctx, std::make_index_sequence<N::children::size>{});
}

template <class N, class T, std::size_t R>
void composed::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  detail::compose_into(n, dest, ctx, std::make_index_sequence<N::children::size>{});
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
