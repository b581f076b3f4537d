// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda ordering kernels (texpr/sort.hpp includes this under nvcc): cub_radix_sort (sort, argsort, topk) and
// scatter_rows (scatter). A kernel reads the operand fused and writes each line's order keys (detail::order_key)
// and payloads (the value's bits, or the position) line after line; CUB sorts the pairs, stably, over all their
// bits: cub::DeviceSegmentedRadixSort with a segment per line (a block per segment; CUB's DeviceSegmentedSort is
// faster on many short lines but copies its bin counts to the host and waits between kernels, so it cannot be
// captured), or cub::DeviceRadixSort for a single line; a last kernel writes the first k of each line into the
// result. Keys, payloads and CUB's temporary storage are one block from texpr's device cache.
// CUB's device-wide headers are why texpr.hpp does not include this: about 10 s of nvcc time per unit.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/backend/cuda/scan.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/sort.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

/// The bits of x as an unsigned integer of its width (a sort's payload).
template <class P, class V> __device__ inline P payload_bits(V x) {
  static_assert(sizeof(P) == sizeof(V), "texpr: a sort's payload has the value's width");
  P p;
  memcpy(&p, &x, sizeof p);
  return p;
}

/// Each element of the lines of acc (in `lines`' order) as its order key and its payload, line after line.
template <class V, class K, class P, bool Positions, class Acc, std::size_t R>
__global__ void __launch_bounds__(block_threads)
    order_keys(Acc acc, scan_lines<R> lines, index_t n_lines, bool descending, K* keys, P* payload) {
  const index_t len = lines.shape.v[lines.axis];
  const index_t total = n_lines * len;
  for (index_t e = static_cast<index_t>(blockIdx.x) * block_threads + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * block_threads) {
    const index_t line = e / len, j = e % len;
    index_t idx[R > 0 ? R : 1];
    (void)lines.locate(line, idx);
    idx[lines.axis] = j;
    const V v = acc.at(idx);
    keys[e] = order_key(v, descending);
    if constexpr (Positions) payload[e] = static_cast<P>(j);
    else payload[e] = payload_bits<P>(v);
  }
}

/// The first k payloads of each sorted line into the contiguous result (k along the axis, `inner` its stride).
template <class T, class P, bool Positions>
__global__ void __launch_bounds__(block_threads)
    write_first(const P* payload, index_t len, index_t k, index_t inner, index_t n_lines, T* out) {
  const index_t total = n_lines * k;
  for (index_t e = static_cast<index_t>(blockIdx.x) * block_threads + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * block_threads) {
    const index_t line = e / k, j = e % k;
    const P p = payload[line * len + j];
    T* o = out + (line / inner) * (k * inner) + line % inner + j * inner;
    if constexpr (Positions) {
      *o = static_cast<T>(p);
    } else {
      T v;
      memcpy(&v, &p, sizeof v);
      *o = v;
    }
  }
}

/// Segment offsets of equal lines, computed rather than stored: segment i starts at (first + i) * len.
struct line_offsets {
  int len;
  int first;
  __host__ __device__ int operator[](int i) const { return (first + i) * len; }
};

/// Bytes rounded up to CUB's 256-byte alignment.
constexpr std::size_t aligned_bytes(std::size_t b) { return (b + 255) / 256 * 256; }

/// Sorts the lines of acc (shape s) along axis into out (contiguous, k along the axis): see the file comment.
template <class V, class P, bool Positions, class Acc, std::size_t R, class T>
void sort_lines(const Acc& acc, const shape_t<R>& s, std::size_t axis, index_t k, bool descending, T* out, stream_t stream) {
  using K = order_key_t<V>;
  scan_lines<R> lines{pack(s), axis, 1};
  for (std::size_t d = axis + 1; d < R; ++d) lines.inner *= s[d];
  const index_t len = s[axis];
  const index_t n_lines = shape_size(s) / len;
  const index_t total = n_lines * len;
  // Lines per CUB call: its segmented sort counts items in an int.
  const index_t batch = len > INT_MAX ? 0 : (n_lines < INT_MAX / len ? n_lines : INT_MAX / len);
  if (n_lines > 1 && batch == 0)
    throw shape_error("texpr: sort on cuda: a line of " + std::to_string(len) + " elements is longer than CUB's "
                      "segmented sort takes (2^31 - 1) and there are " + std::to_string(n_lines) + " of them");
  std::size_t temp = 0;
  const K* nk = nullptr;
  const P* np = nullptr;
  if (n_lines == 1) {
    TEXPR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, nk, const_cast<K*>(nk), np, const_cast<P*>(np),
                                                     total, 0, static_cast<int>(sizeof(K) * 8), stream));
  } else {
    TEXPR_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
        nullptr, temp, nk, const_cast<K*>(nk), np, const_cast<P*>(np), static_cast<int>(batch * len), static_cast<int>(batch),
        line_offsets{static_cast<int>(len), 0}, line_offsets{static_cast<int>(len), 1}, 0, static_cast<int>(sizeof(K) * 8), stream));
  }
  const std::size_t kb = aligned_bytes(sizeof(K) * static_cast<std::size_t>(total));
  const std::size_t pb = aligned_bytes(sizeof(P) * static_cast<std::size_t>(total));
  const device_scratch scratch(2 * kb + 2 * pb + aligned_bytes(temp), stream);
  auto* base = static_cast<unsigned char*>(scratch.p);
  K* keys_in = reinterpret_cast<K*>(base);
  K* keys_out = reinterpret_cast<K*>(base + kb);
  P* pay_in = reinterpret_cast<P*>(base + 2 * kb);
  P* pay_out = reinterpret_cast<P*>(base + 2 * kb + pb);
  void* cub_temp = base + 2 * kb + 2 * pb;
  order_keys<V, K, P, Positions><<<grid_for(ceil_div(total, block_threads)), block_threads, 0, stream>>>(
      acc, lines, n_lines, descending, keys_in, pay_in);
  TEXPR_CUDA_CHECK_LAUNCH();
  if (n_lines == 1) {
    TEXPR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(cub_temp, temp, keys_in, keys_out, pay_in, pay_out, total, 0,
                                                     static_cast<int>(sizeof(K) * 8), stream));
  } else {
    for (index_t first = 0; first < n_lines; first += batch) {
      const index_t here = n_lines - first < batch ? n_lines - first : batch;
      const index_t at = first * len;
      std::size_t bytes = temp;
      TEXPR_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
          cub_temp, bytes, keys_in + at, keys_out + at, pay_in + at, pay_out + at, static_cast<int>(here * len),
          static_cast<int>(here), line_offsets{static_cast<int>(len), 0}, line_offsets{static_cast<int>(len), 1}, 0,
          static_cast<int>(sizeof(K) * 8), stream));
    }
  }
  write_first<T, P, Positions><<<grid_for(ceil_div(n_lines * k, block_threads)), block_threads, 0, stream>>>(
      pay_out, len, k, lines.inner, n_lines, out);
  TEXPR_CUDA_CHECK_LAUNCH();
}

/// dest = g written at positions idx (int64 memory with g's strides' shape) along axis into zeros (contiguous,
/// `extent` along the axis): a thread per element of g.
template <class T, class I, std::size_t R>
__global__ void __launch_bounds__(block_threads)
    scatter_positions(const T* g, index_pack<R> g_strides, const I* idx, index_pack<R> idx_strides, index_pack<R> shape,
                      std::size_t axis, index_t extent, index_t inner, index_t total, T* out) {
  for (index_t e = static_cast<index_t>(blockIdx.x) * block_threads + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * block_threads) {
    index_t at[R > 0 ? R : 1];
    unravel(e, shape, at);
    index_t go = 0, io = 0;
#pragma unroll
    for (std::size_t d = 0; d < R; ++d) {
      go += at[d] * g_strides.v[d];
      io += at[d] * idx_strides.v[d];
    }
    const index_t j = static_cast<index_t>(idx[io]);
    if (j < 0 || j >= extent) continue;
    index_t outer = 0;
#pragma unroll
    for (std::size_t d = 0; d < R; ++d)
      if (d < axis) outer = outer * shape.v[d] + at[d];
    index_t in = 0;
#pragma unroll
    for (std::size_t d = 0; d < R; ++d)
      if (d > axis) in = in * shape.v[d] + at[d];
    out[(outer * extent + j) * inner + in] = g[go];
  }
}

} // namespace texpr::detail::cuda_impl

namespace texpr::cuda_kernels {

template <class N, class T, std::size_t R>
void cub_radix_sort::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using V = typename N::kernel_dtype;
  using Op = typename N::op_type;
  const auto s = n.child().shape();
  if (shape_size(s) == 0 || n.k() == 0) return;
  const auto acc = detail::read(n.child(), s, ctx);
  if constexpr (Op::positions) {
    if (s[n.axis()] <= static_cast<index_t>(UINT32_MAX))
      detail::cuda_impl::sort_lines<V, std::uint32_t, true>(acc, s, n.axis(), n.k(), n.descending(), dest.data(), ctx.stream);
    else
      detail::cuda_impl::sort_lines<V, std::uint64_t, true>(acc, s, n.axis(), n.k(), n.descending(), dest.data(), ctx.stream);
  } else {
    detail::cuda_impl::sort_lines<V, detail::order_key_t<V>, false>(acc, s, n.axis(), n.k(), n.descending(), dest.data(), ctx.stream);
  }
}

template <class N, class T, std::size_t R>
void scatter_rows::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using I = typename std::remove_cvref_t<decltype(detail::get<1>(n.operands()))>::value_type;
  const auto g = detail::materialize(detail::get<0>(n.operands()), ctx);
  const auto idx = detail::materialize(detail::get<1>(n.operands()), ctx);
  const auto s = n.shape();
  detail::memory<cuda>::zero(dest.data(), sizeof(T) * static_cast<std::size_t>(shape_size(s)), ctx.stream);
  const index_t total = g.size();
  if (total == 0) return;
  index_t inner = 1;
  for (std::size_t d = n.axis() + 1; d < R; ++d) inner *= s[d];
  detail::cuda_impl::scatter_positions<T, I, R><<<detail::cuda_impl::grid_for(detail::cuda_impl::ceil_div(total, detail::cuda_impl::block_threads)),
                                                   detail::cuda_impl::block_threads, 0, ctx.stream>>>(
      g.data(), detail::cuda_impl::pack(g.strides()), idx.data(), detail::cuda_impl::pack(idx.strides()),
      detail::cuda_impl::pack(g.shape()), n.axis(), s[n.axis()], inner, total, dest.data());
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
