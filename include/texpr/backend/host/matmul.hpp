// host_kernels::blocked_gemm: a matmul node as a batch of GEMMs (gemm.hpp) reading its operands in place.
#pragma once

#include <cstddef>

#include "texpr/backend/host/gemm.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/matmul_plan.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::host_kernels {

template <class N, class T, std::size_t R>
void blocked_gemm::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  const auto p = detail::make_matmul_plan(n, ctx);
  T* c = dest.data();
  const index_t batches = p.batch_count();
  for (index_t q = 0; q < batches; ++q) {
    const auto [oa, ob] = p.offsets(q);
    detail::host_impl::gemm(p.m, p.n, p.k, p.a.data + oa, p.a.rs, p.a.cs, p.b.data + ob, p.b.rs, p.b.cs,
                            c + q * p.m * p.n);
  }
}

} // namespace texpr::host_kernels
