// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Column sums written by the kernel that writes the values they sum: a bias gradient (the sum over the batch of
// the delta that feeds its layer's weight gradient) comes out of the delta's own launch instead of a reduction of
// its own. Each block sums the rows it wrote, from L1/L2, into its partial row; the last block to finish adds the
// partials in block order, so the sums do not depend on block scheduling (the pattern of the one-launch full
// reduction, reduce.hpp).
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "texpr/backend/cuda/elementwise.hpp"
#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/accessor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

/// The type column sums of T run in: double for double, float otherwise (16-bit values widen).
template <class T> using column_sums_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

/// Blocks for a launch with column sums over [rows, cols] in groups of `group` rows: one per group, at most 4 per
/// multiprocessor (the last block adds one partial row per block) and fewer when the partial rows would pass 4 MiB.
inline unsigned column_sums_grid(index_t rows, index_t cols, index_t group, std::size_t acc_bytes) {
  const index_t budget = static_cast<index_t>((std::size_t{4} << 20) / (acc_bytes * static_cast<std::size_t>(cols)));
  const index_t cap = static_cast<index_t>(multiprocessor_count()) * 4;
  index_t g = ceil_div(rows, group);
  if (g > cap) g = cap;
  if (g > budget) g = budget;
  return static_cast<unsigned>(g < 1 ? 1 : g);
}

/// Called by every thread of a block once the block has written its rows of the row-major [rows, cols] values d
/// (row groups blockIdx.x, blockIdx.x + gridDim.x, ... of `group` rows): sums those rows per column into the
/// block's partial row; the last block adds the partial rows in block order into sums. d is read back, not
/// through the read-only cache (this launch wrote it).
template <class A, class T>
__device__ void block_column_sums(const T* d, index_t rows, index_t cols, index_t group, A* partials, unsigned* ticket,
                                  T* sums) {
  __shared__ bool last;
  __syncthreads();  // the block's writes of d are visible to all its threads
  const index_t step = static_cast<index_t>(gridDim.x) * group;
  for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
    A s = 0;
    for (index_t g0 = static_cast<index_t>(blockIdx.x) * group; g0 < rows; g0 += step) {
      const index_t g1 = g0 + group < rows ? g0 + group : rows;
      for (index_t r = g0; r < g1; ++r) s += static_cast<A>(d[r * cols + c]);
    }
    partials[static_cast<index_t>(blockIdx.x) * cols + c] = s;
  }
  __threadfence();  // the partials are visible before the ticket says so
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  const volatile A* p = partials;
  for (index_t c = threadIdx.x; c < cols; c += blockDim.x) {
    A s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += p[static_cast<index_t>(b) * cols + c];
    sums[c] = static_cast<T>(s);
  }
  if (threadIdx.x == 0) *ticket = 0;
}

/// d = acc over [rows, cols] (d contiguous), a block per group of rows, then the column sums of what it wrote.
/// Dense trees read by linear index; others unravel each index (this path serves deltas, mostly dense).
template <class A, class T, std::size_t R, class Acc>
__global__ void __launch_bounds__(block_threads)
    assign_rows_column_sums(T* d, Acc acc, bool dense, index_pack<R> shape, index_t rows, index_t cols, index_t group,
                            A* partials, unsigned* ticket, T* sums) {
  const index_t step = static_cast<index_t>(gridDim.x) * group;
  for (index_t g0 = static_cast<index_t>(blockIdx.x) * group; g0 < rows; g0 += step) {
    const index_t end = (g0 + group < rows ? g0 + group : rows) * cols;
    for (index_t i = g0 * cols + threadIdx.x; i < end; i += blockDim.x) {
      if (dense) {
        d[i] = acc.linear(i);
      } else {
        index_t idx[R > 0 ? R : 1] = {};
        unravel_as<index_t>(i, shape, idx);
        d[i] = acc.at(idx);
      }
    }
  }
  block_column_sums<A>(d, rows, cols, group, partials, ticket, sums);
}

} // namespace texpr::detail::cuda_impl

namespace texpr::cuda_kernels {

template <class T, std::size_t R, class Acc>
void fused_elementwise::assign_with_column_sums(const view<T, R, cuda>& dest, const Acc& acc, T* sums, index_t cols,
                                                context<cuda>& ctx) {
  using namespace detail::cuda_impl;
  using A = column_sums_acc_t<T>;
  const index_t rows = dest.size() / cols;
  const index_t group = cols >= 2048 ? 1 : 2048 / cols;  // about 2048 elements per block and group
  const unsigned blocks = column_sums_grid(rows, cols, group, sizeof(A));
  const detail::ticketed_scratch<A> scratch(static_cast<std::size_t>(blocks) * static_cast<std::size_t>(cols), ctx.stream);
  assign_rows_column_sums<A, T, R, Acc><<<blocks, block_threads, 0, ctx.stream>>>(
      dest.data(), acc, acc.dense(), pack(dest.shape()), rows, cols, group, scratch.partials, scratch.ticket, sums);
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
