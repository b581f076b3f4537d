// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_kernels::fused_elementwise: one grid-stride kernel per evaluated elementwise tree. Dense trees read by linear
// index, 16 bytes per operand and thread (four floats, eight 16-bit values) with vector loads and stores when every
// operand and the destination are aligned; 16-bit results are computed two at a time (half_pairs.hpp). Broadcast
// trees of rank 2 and up whose rows are a multiple of that width and whose memory operands are contiguous or
// broadcast along the last axis read each row piece with one vector load per operand (rows kernel); others unravel
// the index once per ilp consecutive elements and step along the last axis, reading through at(). Both divide in
// 32 bits when the element count fits (no 64-bit division or remainder per dimension).
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

/// Elements per thread per step on the vector paths: 16 bytes of 16-bit values (one 128-bit load per operand of the
/// result's type), else ilp.
template <class T>
inline constexpr int elementwise_width = sizeof(T) == 2 ? 8 : ilp;

/// V elements of U written as one aligned memory transaction.
template <class U, int V> struct alignas(sizeof(U) * V) aligned_vec {
  U v[V];
};

/// W consecutive dense elements from i: vector loads when the accessor offers them.
template <int W, class Acc, class T>
__device__ inline void load_dense(const Acc& a, index_t i, T (&out)[W]) {
  if constexpr (vector_loadable<Acc>) {
    a.template load<W>(i, out);
  } else {
#pragma unroll
    for (int k = 0; k < W; ++k) out[k] = a.linear(i + k);
  }
}

/// Dense tree, aligned operands and destination: each thread handles elementwise_width<T> consecutive elements per step
/// with vector loads and one vector store; the last n % elementwise_width<T> elements are written by the first threads.
template <class T, class Acc>
__global__ void __launch_bounds__(block_threads) assign_vectorized(T* __restrict__ d, Acc acc, index_t n) {
  constexpr int W = elementwise_width<T>;
  const index_t chunks = n / W;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  const index_t first = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (index_t c = first; c < chunks; c += stride) {
    const index_t i = c * W;
    aligned_vec<T, W> out;
    load_dense<W>(acc, i, out.v);
    *reinterpret_cast<aligned_vec<T, W>*>(d + i) = out;
  }
  const index_t tail = chunks * W + first;
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

/// Broadcast operands, each contiguous (rows aligned) or broadcast along the last axis, into rows of a multiple of
/// W = elementwise_width<T> elements starting on 16 bytes: each thread takes W consecutive elements of one row per
/// step, unravels their first index in 32 bits, reads each operand with one vector load (or one load of its value
/// broadcast along the row) and stores one vector.
template <class T, std::size_t R, class Acc>
__global__ void __launch_bounds__(block_threads)
    assign_rows(T* __restrict__ d, Acc acc, index_pack<R> shape, index_pack<R> dest_strides, std::uint32_t n) {
  constexpr int W = elementwise_width<T>;
  const std::uint32_t chunks = n / W;
  const std::uint32_t stride = gridDim.x * blockDim.x;
  for (std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < chunks; c += stride) {
    index_t idx[R] = {};
    unravel_as<std::uint32_t>(c * W, shape, idx);
    aligned_vec<T, W> out;
    acc.template load_at<W>(idx, out.v);
    index_t o = 0;
#pragma unroll
    for (std::size_t q = 0; q != R; ++q) o += idx[q] * dest_strides.v[q];
    *reinterpret_cast<aligned_vec<T, W>*>(d + o) = out;
  }
}

/// True when the rows kernel can write dest from acc: dest's rows are contiguous, a multiple of W elements long and
/// start on multiples of W elements from a base aligned to W elements; acc's operands are rows_aligned. Rank 1
/// keeps the strided kernel (its unravel divides nothing; and one kernel fewer to compile per rank-1 tree).
template <int W, class T, std::size_t R, class Acc>
bool rows_fit(const view<T, R, cuda>& dest, const Acc& acc) {
  if constexpr (R < 2 || !detail::row_loadable<Acc>) {
    return false;
  } else {
    if (dest.shape()[R - 1] % W != 0 || dest.strides()[R - 1] != 1) return false;
    if (reinterpret_cast<std::uintptr_t>(dest.data()) % sizeof(aligned_vec<T, W>) != 0) return false;
    for (std::size_t q = 0; q + 1 < R; ++q)
      if (dest.strides()[q] % W != 0) return false;
    return acc.rows_aligned(sizeof(aligned_vec<T, W>));
  }
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
  constexpr int W = elementwise_width<T>;
  // 32-bit index arithmetic while the element count (and so every flat index and chunk start) fits.
  const bool small = n < (index_t(1) << 32) - block_threads * W;
  if (acc.dense() && dest.is_contiguous()) {
    bool aligned = reinterpret_cast<std::uintptr_t>(d) % sizeof(aligned_vec<T, W>) == 0;
    if constexpr (detail::vector_loadable<Acc>) aligned = aligned && acc.aligned(sizeof(aligned_vec<T, W>));
    if (aligned) {
      assign_vectorized<T, Acc><<<grid_for(ceil_div(n, block_threads * W)), block_threads, 0, stream>>>(d, acc, n);
    } else {
      assign_dense<T, Acc><<<grid_for(ceil_div(n, block_threads * ilp)), block_threads, 0, stream>>>(d, acc, n);
    }
  } else if (small && rows_fit<W>(dest, acc)) {
    if constexpr (R >= 2 && detail::row_loadable<Acc>)
      assign_rows<T, R, Acc><<<grid_for(ceil_div(n, block_threads * W)), block_threads, 0, stream>>>(
          d, acc, pack(dest.shape()), pack(dest.strides()), static_cast<std::uint32_t>(n));
  } else {
    const unsigned grid = grid_for(ceil_div(n, block_threads * ilp));
    if (small)
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
