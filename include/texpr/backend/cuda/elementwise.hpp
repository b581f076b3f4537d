// Fused elementwise evaluation on the GPU: one grid-stride kernel per evaluated expression tree.
// Dense trees read by linear index, four elements per thread, with vector loads and stores when every leaf
// and the destination are aligned; broadcast or strided trees unravel the index and read through at().
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

inline constexpr int ilp = 4;  // elements per thread per step: independent loads in flight

/// V elements of U read or written as one aligned memory transaction.
template <class U, int V> struct alignas(sizeof(U) * V) aligned_vec {
  U v[V];
};

/// The value type an accessor yields.
template <class Acc> using acc_value_t = std::remove_cvref_t<decltype(std::declval<const Acc&>().linear(0))>;

/// Reads `ilp` consecutive elements of a dense accessor starting at i (a multiple of ilp). The primary
/// template works for any accessor (scalars, user accessors) through linear(); leaves and maps vectorise.
template <class Acc> struct vec_reader {
  static bool aligned(const Acc&) { return true; }
  __device__ static void load(const Acc& a, index_t i, acc_value_t<Acc> (&out)[ilp]) {
#pragma unroll
    for (int k = 0; k < ilp; ++k) out[k] = a.linear(i + k);
  }
};

template <class T, std::size_t RO> struct vec_reader<leaf_accessor<T, RO>> {
  static bool aligned(const leaf_accessor<T, RO>& a) {
    return reinterpret_cast<std::uintptr_t>(a.p) % sizeof(aligned_vec<T, ilp>) == 0;
  }
  __device__ static void load(const leaf_accessor<T, RO>& a, index_t i, T (&out)[ilp]) {
    const aligned_vec<T, ilp> v = *reinterpret_cast<const aligned_vec<T, ilp>*>(a.p + i);
#pragma unroll
    for (int k = 0; k < ilp; ++k) out[k] = v.v[k];
  }
};

template <class Op, class R, class A0> struct vec_reader<map_accessor<Op, R, A0>> {
  using M = map_accessor<Op, R, A0>;
  static bool aligned(const M& a) { return vec_reader<A0>::aligned(a.a0); }
  __device__ static void load(const M& a, index_t i, R (&out)[ilp]) {
    acc_value_t<A0> x0[ilp];
    vec_reader<A0>::load(a.a0, i, x0);
#pragma unroll
    for (int k = 0; k < ilp; ++k) out[k] = apply_op<Op, R>(x0[k]);
  }
};

template <class Op, class R, class A0, class A1> struct vec_reader<map_accessor<Op, R, A0, A1>> {
  using M = map_accessor<Op, R, A0, A1>;
  static bool aligned(const M& a) { return vec_reader<A0>::aligned(a.a0) && vec_reader<A1>::aligned(a.a1); }
  __device__ static void load(const M& a, index_t i, R (&out)[ilp]) {
    acc_value_t<A0> x0[ilp];
    acc_value_t<A1> x1[ilp];
    vec_reader<A0>::load(a.a0, i, x0);
    vec_reader<A1>::load(a.a1, i, x1);
#pragma unroll
    for (int k = 0; k < ilp; ++k) out[k] = apply_op<Op, R>(x0[k], x1[k]);
  }
};

template <class Op, class R, class A0, class A1, class A2> struct vec_reader<map_accessor<Op, R, A0, A1, A2>> {
  using M = map_accessor<Op, R, A0, A1, A2>;
  static bool aligned(const M& a) {
    return vec_reader<A0>::aligned(a.a0) && vec_reader<A1>::aligned(a.a1) && vec_reader<A2>::aligned(a.a2);
  }
  __device__ static void load(const M& a, index_t i, R (&out)[ilp]) {
    acc_value_t<A0> x0[ilp];
    acc_value_t<A1> x1[ilp];
    acc_value_t<A2> x2[ilp];
    vec_reader<A0>::load(a.a0, i, x0);
    vec_reader<A1>::load(a.a1, i, x1);
    vec_reader<A2>::load(a.a2, i, x2);
#pragma unroll
    for (int k = 0; k < ilp; ++k) out[k] = apply_op<Op, R>(x0[k], x1[k], x2[k]);
  }
};

/// Dense tree, aligned leaves and destination: each thread handles ilp consecutive elements per step with
/// vector loads and one vector store; the last n % ilp elements are written by the first threads.
template <class T, class Acc>
__global__ void __launch_bounds__(block_threads) assign_vectorized(T* __restrict__ d, Acc acc, index_t n) {
  const index_t chunks = n / ilp;
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  const index_t first = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (index_t c = first; c < chunks; c += stride) {
    const index_t i = c * ilp;
    aligned_vec<T, ilp> out;
    vec_reader<Acc>::load(acc, i, out.v);
    *reinterpret_cast<aligned_vec<T, ilp>*>(d + i) = out;
  }
  const index_t tail = chunks * ilp + first;
  if (tail < n) d[tail] = acc.linear(tail);
}

/// Dense tree, unaligned memory: ilp coalesced elements per thread per step (stride blockDim apart).
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
    unravel(i, shape, R, idx);
    index_t off = 0;
    for (std::size_t k = 0; k != R; ++k) off += idx[k] * dest_strides.v[k];
    d[off] = acc.at(idx);
  }
}

/// dest = acc on `stream`: picks the vectorised, dense or strided kernel; exactly one launch.
template <class T, std::size_t R, class Acc>
void assign(const view<T, R, cuda>& dest, const Acc& acc, stream_t stream) {
  const index_t n = dest.size();
  if (n == 0) return;
  T* d = dest.data();
  if (acc.dense() && dest.is_contiguous()) {
    if (vec_reader<Acc>::aligned(acc) && reinterpret_cast<std::uintptr_t>(d) % sizeof(aligned_vec<T, ilp>) == 0) {
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

} // namespace texpr::detail::cuda_impl

#endif // __CUDACC__
