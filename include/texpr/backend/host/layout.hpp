// host_kernels::strided_view: a layout node as the memory its operand is in, with the layout's extents and strides.
#pragma once

#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/read.hpp"

namespace texpr::host_kernels {

template <class N>
texpr::view<const typename N::value_type, N::rank, host> strided_view::view_of(const N& n, context<host>& ctx) {
  return detail::layout_storage(n, ctx);
}

} // namespace texpr::host_kernels
