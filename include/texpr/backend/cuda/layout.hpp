// cuda_kernels::strided_view: a layout node as the memory its operand is in, with the layout's extents and strides.
#pragma once

#if defined(__CUDACC__)

#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/read.hpp"

namespace texpr::cuda_kernels {

template <class N>
texpr::view<const typename N::value_type, N::rank, cuda> strided_view::view_of(const N& n, context<cuda>& ctx) {
  return detail::layout_storage(n, ctx);
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
