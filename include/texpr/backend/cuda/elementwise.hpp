// cuda_kernels::fused_elementwise: one grid-stride kernel per evaluated elementwise tree. Dense trees read by linear
// index, four elements per thread, with vector loads and stores when every operand and the destination are aligned;
// broadcast or strided trees unravel the index and read through at().
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/accessor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

inline constexpr int ilp = 4;  // elements per thread per step: independent loads in flight

/// V elements of U written as one aligned memory transaction.
template <class U, int V> struct alignas(sizeof(U) * V) aligned_vec {
  U v[V];
};

/// ilp consecutive dense elements from i: vector loads when the accessor offers them.
template <class Acc, class T> __device__ inline void load_dense(const Acc& a, index_t i, T (&out)[ilp]) {
  if constexpr (vector_loadable<Acc>) {
    a.template load<ilp>(i, out);
  } else {
#pragma unroll
    for (int k = 0; k < ilp; ++k) out[k] = a.linear(i + k);
  }
}

/// Dense tree, aligned operands and destination: each thread handles ilp consecutive elements per step with vector
/// loads and one vector store; the last n % ilp elements are written by the first threads.
template <class T, class Acc>
__global__ void __launch_bounds__(block_threads) assign_vectorized(T* __restrict__ d, Acc acc, index_t n) {
  const index_t chunks = n / ilp;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  const index_t first = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (index_t c = first; c < chunks; c += stride) {
    const index_t i = c * ilp;
    aligned_vec<T, ilp> out;
    load_dense(acc, i, out.v);
    *reinterpret_cast<aligned_vec<T, ilp>*>(d + i) = out;
  }
  const index_t tail = chunks * ilp + first;
  if (tail < n) d[tail] = acc.linear(tail);
}

/// Dense tree, unaligned memory: ilp coalesced elements per thread per step (blockDim apart).
template <class T, class Acc>
__global__ void __launch_bounds__(block_threads) assign_dense(T* __restrict__ d, Acc acc, index_t n) {
  const index_t tile = static_cast<index_t>(blockDim.x) * ilp;
  for (index_t base = static_cast<index_t>(blockIdx.x) * tile; base < n; base += static_cast<index_t>(gridDim.x) * tile) {
    T v[ilp];
#pragma unroll
    for (int k = 0; k < ilp; ++k) {
      const index_t i = base + k * static_cast<index_t>(blockDim.x) + threadIdx.x;
      if (i < n) v[k] = acc.linear(i);
    }
#pragma unroll
    for (int k = 0; k < ilp; ++k) {
      const index_t i = base + k * static_cast<index_t>(blockDim.x) + threadIdx.x;
      if (i < n) d[i] = v[k];
    }
  }
}

/// Broadcast or strided operands, or a strided destination: unravel the flat index over the output shape.
template <class T, std::size_t R, class Acc>
__global__ void __launch_bounds__(block_threads)
    assign_strided(T* d, Acc acc, index_pack<R> shape, index_pack<R> dest_strides, index_t n) {
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    index_t idx[R > 0 ? R : 1] = {};
    unravel(i, shape, idx);
    index_t off = 0;
#pragma unroll
    for (std::size_t k = 0; k != R; ++k) off += idx[k] * dest_strides.v[k];
    d[off] = acc.at(idx);
  }
}

} // namespace texpr::detail::cuda_impl

namespace texpr::cuda_kernels {

template <class T, std::size_t R, class Acc>
void fused_elementwise::assign(const view<T, R, cuda>& dest, const Acc& acc, context<cuda>& ctx) {
  using namespace detail::cuda_impl;
  static_assert(accessor<Acc>, "texpr: fused_elementwise reads accessors (see eval/accessor.hpp)");
  const index_t n = dest.size();
  if (n == 0) return;
  T* d = dest.data();
  const stream_t stream = ctx.stream;
  if (acc.dense() && dest.is_contiguous()) {
    bool aligned = reinterpret_cast<std::uintptr_t>(d) % sizeof(aligned_vec<T, ilp>) == 0;
    if constexpr (detail::vector_loadable<Acc>) aligned = aligned && acc.aligned(sizeof(aligned_vec<T, ilp>));
    if (aligned) {
      assign_vectorized<T, Acc><<<grid_for(ceil_div(n, block_threads * ilp)), block_threads, 0, stream>>>(d, acc, n);
    } else {
      assign_dense<T, Acc><<<grid_for(ceil_div(n, block_threads * ilp)), block_threads, 0, stream>>>(d, acc, n);
    }
  } else {
    assign_strided<T, R, Acc><<<grid_for(ceil_div(n, block_threads)), block_threads, 0, stream>>>(
        d, acc, pack(dest.shape()), pack(dest.strides()), n);
  }
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
