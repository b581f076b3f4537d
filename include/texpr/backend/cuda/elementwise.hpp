// cuda_kernels::fused_elementwise: one grid-stride kernel per evaluated elementwise tree. Dense trees read by linear
// index, four elements per thread, with vector loads and stores when every operand and the destination are aligned;
// broadcast or strided trees unravel the index once per ilp consecutive elements (32-bit division when the element
// count fits, no 64-bit division or remainder per dimension) and step along the last axis, reading through at().
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

/// Row-major unravel of `flat` over shape in index type I: 32-bit division and remainder (about a third of the
/// instructions of the 64-bit sequence) when the caller knows the element count fits.
template <class I, std::size_t R>
__device__ inline void unravel_as(I flat, const index_pack<R>& shape, index_t* idx) {
#pragma unroll
  for (int d = static_cast<int>(R) - 1; d > 0; --d) {
    const I e = static_cast<I>(shape.v[d]);
    idx[d] = static_cast<index_t>(flat % e);
    flat /= e;
  }
  if constexpr (R > 0) idx[0] = static_cast<index_t>(flat);
}

/// Broadcast or strided operands, or a strided destination: each thread takes ilp consecutive elements of the
/// output per step, unravels the first (in index type I: uint32_t when n < 2^32) and steps the others along the
/// last axis with a carry, so there is one unravel per ilp elements; the loads are issued before the stores.
template <class T, std::size_t R, class Acc, class I>
__global__ void __launch_bounds__(block_threads)
    assign_strided(T* d, Acc acc, index_pack<R> shape, index_pack<R> dest_strides, I n) {
  const I chunks = static_cast<I>((static_cast<index_t>(n) + ilp - 1) / ilp);
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I c = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {
    const I first = c * ilp;
    index_t idx[R > 0 ? R : 1] = {};
    unravel_as<I>(first, shape, idx);
    const int count = static_cast<index_t>(n) - static_cast<index_t>(first) < ilp
                          ? static_cast<int>(static_cast<index_t>(n) - static_cast<index_t>(first))
                          : ilp;
    T v[ilp];
    index_t off[ilp];
#pragma unroll
    for (int k = 0; k < ilp; ++k) {
      if (k < count) {
        v[k] = acc.at(idx);
        index_t o = 0;
#pragma unroll
        for (std::size_t q = 0; q != R; ++q) o += idx[q] * dest_strides.v[q];
        off[k] = o;
        if constexpr (R > 0) {  // the next element: one step along the last axis, carried outwards (unrolled: idx
          ++idx[R - 1];         // stays in registers)
#pragma unroll
          for (int q = static_cast<int>(R) - 1; q > 0; --q) {
            if (idx[q] == shape.v[q]) {
              idx[q] = 0;
              ++idx[q - 1];
            }
          }
        }
      }
    }
#pragma unroll
    for (int k = 0; k < ilp; ++k)
      if (k < count) d[off[k]] = v[k];
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
    const unsigned grid = grid_for(ceil_div(n, block_threads * ilp));
    // 32-bit index arithmetic while the element count (and so every flat index and chunk start) fits.
    if (n < (index_t(1) << 32) - block_threads * ilp)
      assign_strided<T, R, Acc, std::uint32_t><<<grid, block_threads, 0, stream>>>(
          d, acc, pack(dest.shape()), pack(dest.strides()), static_cast<std::uint32_t>(n));
    else
      assign_strided<T, R, Acc, index_t><<<grid, block_threads, 0, stream>>>(d, acc, pack(dest.shape()),
                                                                              pack(dest.strides()), n);
  }
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
