// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_kernels::block_scan: scans along an axis on the GPU, the operand read fused through its accessor (a cursor
// per line: seek once, then along(j)). Lines along the last axis, and lines along another axis when there are too
// few of them to give every thread one: a block per line, tiles of block_threads * scan_items elements, each thread
// scanning its scan_items consecutive elements, a warp-shuffle scan of the threads' totals and one of the warps'
// totals, and a running carry from tile to tile. Many lines along another axis: a thread per line, reading
// neighbouring lines' elements side by side (coalesced), one running value each.
// The block scan is hand-written (shuffles over op.combine) rather than cub::BlockScan: including
// cub/block/block_scan.cuh added 6 s of nvcc CPU time to a texpr translation unit of 16 s (+35%; measured with
// nvcc 13.0, -O2, compute_90), which every CUDA unit would pay.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/scan.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

/// Consecutive elements each thread of a line's block scans per tile.
inline constexpr int scan_items = 4;
/// Lines along an axis other than the last from which a thread per line is used (enough threads for the GPU).
inline constexpr index_t scan_column_lines = 8192;

/// v from the lane `delta` below, for any trivially copyable accumulator (shuffled as 32-bit words).
template <class A> __device__ inline A shuffle_up_words(const A& v, int delta) {
  constexpr int words = (sizeof(A) + 3) / 4;
  unsigned int w[words] = {};
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int k = 0; k < words; ++k) w[k] = __shfl_up_sync(0xFFFFFFFFu, w[k], delta);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

/// The inclusive scan of v over the warp's lanes (Kogge-Stone: five shuffles).
template <class A, class Op> __device__ inline A warp_inclusive_scan(const Op& op, A v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const A u = shuffle_up_words(v, d);
    if (lane >= d) v = op.combine(u, v);
  }
  return v;
}

/// The line through `line` (a flat index over the shape with the scanned axis removed): its index in `shape`
/// (idx[axis] = 0) and its first element's offset in the contiguous result.
template <std::size_t R> struct scan_lines {
  index_pack<R> shape;
  std::size_t axis;
  index_t inner;  // product of the extents after the axis: the result's stride along it
  __device__ index_t locate(index_t line, index_t* idx) const {
    index_t rest = line;
#pragma unroll
    for (int d = static_cast<int>(R) - 1; d >= 0; --d) {
      if (static_cast<std::size_t>(d) == axis) {
        idx[d] = 0;
        continue;
      }
      idx[d] = rest % shape.v[d];
      rest /= shape.v[d];
    }
    const index_t o = line / inner, i = line % inner;
    return o * shape.v[axis] * inner + i;
  }
};

/// A block per line: tiles of block_threads * scan_items elements in scan order, carried from tile to tile.
template <class T, class A, class Op, class Acc, std::size_t R>
__global__ void __launch_bounds__(block_threads)
    scan_by_block(Op op, Acc acc, scan_lines<R> lines, index_t n_lines, bool reverse, T* out) {
  __shared__ alignas(16) unsigned char raw[(block_threads / 32 + 1) * sizeof(A)];
  A* warp_total = reinterpret_cast<A*>(raw);  // [warps], then the tile's carry
  const int t = static_cast<int>(threadIdx.x), lane = t % 32, warp = t / 32;
  constexpr int warps = block_threads / 32;
  constexpr index_t tile = static_cast<index_t>(block_threads) * scan_items;
  const index_t len = lines.shape.v[lines.axis];
  for (index_t line = blockIdx.x; line < n_lines; line += gridDim.x) {
    index_t idx[R > 0 ? R : 1];
    const index_t base = lines.locate(line, idx);
    Acc cursor = acc;
    cursor.seek(idx, lines.axis);
    A carry = op.template identity<A>();
    for (index_t t0 = 0; t0 < len; t0 += tile) {
      A v[scan_items];
      A run = op.template identity<A>();
#pragma unroll
      for (int k = 0; k < scan_items; ++k) {
        const index_t q = t0 + static_cast<index_t>(t) * scan_items + k;  // position in scan order
        if (q < len) {
          const index_t j = reverse ? len - 1 - q : q;
          run = op.combine(run, op.template lift<A>(widen(cursor.along(j)), j));
        }
        v[k] = run;
      }
      // the exclusive prefix of this thread within the tile: its warp's lanes below, then the warps below
      const A inclusive = warp_inclusive_scan(op, run, lane);
      A below = shuffle_up_words(inclusive, 1);
      if (lane == 0) below = op.template identity<A>();
      __syncthreads();  // the previous tile's readers of warp_total are done
      if (lane == 31) warp_total[warp] = inclusive;
      __syncthreads();
      if (warp == 0) {
        const A w = lane < warps ? warp_total[lane] : op.template identity<A>();
        const A ws = warp_inclusive_scan(op, w, lane);
        if (lane < warps) warp_total[lane] = ws;  // now inclusive over the warps
      }
      __syncthreads();
      A prefix = carry;
      if (warp > 0) prefix = op.combine(prefix, warp_total[warp - 1]);
      prefix = op.combine(prefix, below);
#pragma unroll
      for (int k = 0; k < scan_items; ++k) {
        const index_t q = t0 + static_cast<index_t>(t) * scan_items + k;
        if (q < len) {
          const index_t j = reverse ? len - 1 - q : q;
          out[base + j * lines.inner] = op.template finalize<T>(op.combine(prefix, v[k]), q + 1);
        }
      }
      carry = op.combine(carry, warp_total[warps - 1]);
    }
  }
}

/// A thread per line: one running value, the line read in scan order; neighbouring threads read neighbouring lines.
template <class T, class A, class Op, class Acc, std::size_t R>
__global__ void __launch_bounds__(block_threads)
    scan_by_thread(Op op, Acc acc, scan_lines<R> lines, index_t n_lines, bool reverse, T* out) {
  const index_t len = lines.shape.v[lines.axis];
  for (index_t line = static_cast<index_t>(blockIdx.x) * block_threads + threadIdx.x; line < n_lines;
       line += static_cast<index_t>(gridDim.x) * block_threads) {
    index_t idx[R > 0 ? R : 1];
    const index_t base = lines.locate(line, idx);
    Acc cursor = acc;
    cursor.seek(idx, lines.axis);
    A run = op.template identity<A>();
    for (index_t q = 0; q < len; ++q) {
      const index_t j = reverse ? len - 1 - q : q;
      run = op.combine(run, op.template lift<A>(widen(cursor.along(j)), j));
      out[base + j * lines.inner] = op.template finalize<T>(run, q + 1);
    }
  }
}

/// Launches the scan of the operand acc reads (shape s) along `axis` into out (contiguous), on `stream`.
template <class A, class Op, class Acc, std::size_t R, class T>
void launch_scan(const Op& op, const Acc& acc, const shape_t<R>& s, std::size_t axis, bool reverse, T* out, stream_t stream) {
  const index_t size = shape_size(s);
  if (size == 0) return;
  scan_lines<R> lines{pack(s), axis, 1};
  for (std::size_t d = axis + 1; d < R; ++d) lines.inner *= s[d];
  const index_t n_lines = size / s[axis];
  if (lines.inner > 1 && n_lines >= scan_column_lines) {
    scan_by_thread<T, A><<<grid_for(ceil_div(n_lines, block_threads)), block_threads, 0, stream>>>(op, acc, lines, n_lines,
                                                                                                   reverse, out);
  } else {
    scan_by_block<T, A><<<grid_for(n_lines), block_threads, 0, stream>>>(op, acc, lines, n_lines, reverse, out);
  }
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::detail::cuda_impl

namespace texpr::cuda_kernels {

template <class N, class T, std::size_t R>
void block_scan::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using KT = typename N::kernel_dtype;
  using Reduction = typename N::op_type::reduction;
  using A = typename Reduction::template accumulator<KT>;
  const auto acc = detail::scan_operand(n, ctx);
  detail::cuda_impl::launch_scan<A>(n.op(), acc, n.shape(), n.axis(), n.reverse(), dest.data(), ctx.stream);
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
