// Reductions on the GPU. Over everything: cub::DeviceReduce reading the fused expression through a
// transform iterator (no temporary for the input) and writing through a transform output iterator that
// finalises (mean divides there), so it is one pass. Along an axis: purpose-written kernels, a warp or a
// block per row for the contiguous last axis, and 32-column tiles with coalesced reads for any other axis;
// short outputs over long axes split the axis into chunks and combine the partials in a second small pass.
#pragma once

#if defined(__CUDACC__)

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <cstddef>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/reduction.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

/// Op::combine as a binary functor (for CUB and the kernels below).
template <class Op> struct combine_fn {
  template <class A> TEXPR_HOST_DEVICE A operator()(const A& a, const A& b) const { return Op::combine(a, b); }
};

/// Element i (row-major over shape) of the fused accessor, widened to the accumulator type. Dense trees read
/// by linear index; others unravel. One functor type for both, so CUB is instantiated once per tree type.
template <class Acc, class A, std::size_t R> struct element_reader {
  Acc acc;
  index_pack<R> shape;
  bool dense;
  TEXPR_HOST_DEVICE A operator()(index_t i) const {
    if (dense) return static_cast<A>(widen(acc.linear(i)));
    index_t idx[R > 0 ? R : 1] = {};
    unravel(i, shape, R, idx);
    return static_cast<A>(widen(acc.at(idx)));
  }
};

/// Turns the accumulated value into the stored result (mean divides by the count here).
template <class Op, class A, class T> struct finalize_fn {
  index_t n;
  TEXPR_HOST_DEVICE T operator()(A v) const { return narrow<T>(Op::finalize(v, n)); }
};

template <class T> __global__ void write_value(T* out, T v) { *out = v; }

/// cub::DeviceReduce::Reduce with a stream-ordered scratch buffer.
template <class In, class Out, class ReduceOp, class A>
void cub_reduce(In in, Out out, index_t n, ReduceOp op, A init, stream_t stream) {
  std::size_t bytes = 0;
  TEXPR_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, in, out, n, op, init, stream));
  device_scratch scratch(bytes, stream);
  TEXPR_CUDA_CHECK(cub::DeviceReduce::Reduce(scratch.p, bytes, in, out, n, op, init, stream));
}

/// *out = Op over all elements of acc (shape in_shape); out is device memory; nothing synchronises.
template <class Op, std::size_t R, class Acc, class T>
void reduce_all(const Acc& acc, const shape_t<R>& in_shape, T* out, stream_t stream) {
  using A = op::accumulator_t<T>;
  const index_t n = shape_size(in_shape);
  const A init = Op::template identity<A>();
  if (n == 0) {
    write_value<T><<<1, 1, 0, stream>>>(out, narrow<T>(Op::finalize(init, 0)));
    TEXPR_CUDA_CHECK_LAUNCH();
    return;
  }
  auto sink = thrust::make_transform_output_iterator(out, finalize_fn<Op, A, T>{n});
  const thrust::counting_iterator<index_t> first(0);
  const element_reader<Acc, A, R> reader{acc, pack(in_shape), acc.dense()};
  cub_reduce(thrust::make_transform_iterator(first, reader), sink, n, combine_fn<Op>{}, init, stream);
}

// ---- axis reductions -------------------------------------------------------------------------------------

/// Rows of the input along its last axis: row r is positioned once (seek_row), then read by in_row.
template <class Acc, class A, std::size_t R> struct row_source {
  Acc acc;
  index_pack<R> shape;
  struct cursor {
    Acc a;
    __device__ A operator()(index_t j) const { return static_cast<A>(widen(a.in_row(j))); }
  };
  __device__ cursor row(index_t r) const {
    index_t idx[R] = {};
    unravel(r, shape, R - 1, idx);
    cursor c{acc};
    c.a.seek_row(idx);
    return c;
  }
};

/// Rows of a [rows][len] buffer of partial results.
template <class A> struct partial_row_source {
  const A* p;
  index_t len;
  struct cursor {
    const A* row;
    __device__ A operator()(index_t j) const { return row[j]; }
  };
  __device__ cursor row(index_t r) const { return {p + r * len}; }
};

/// Column (o, j) of the input viewed as [outer][len][inner], read along the reduced axis.
template <class Acc, class A, std::size_t R> struct column_source {
  Acc acc;
  index_pack<R> shape;
  std::size_t axis;
  bool dense;
  index_t len, inner;
  struct cursor {
    Acc a;
    index_t idx[R];
    std::size_t axis;
    bool dense;
    index_t base, step;
    __device__ A operator()(index_t l) {
      if (dense) return static_cast<A>(widen(a.linear(base + l * step)));
      idx[axis] = l;
      return static_cast<A>(widen(a.at(idx)));
    }
  };
  __device__ cursor column(index_t o, index_t j) const {
    cursor c{acc, {}, axis, dense, o * len * inner + j, inner};
    if (!dense) {
      for (std::size_t d = axis; d-- > 0;) {
        c.idx[d] = o % shape.v[d];
        o /= shape.v[d];
      }
      for (std::size_t d = R; d-- > axis + 1;) {
        c.idx[d] = j % shape.v[d];
        j /= shape.v[d];
      }
    }
    return c;
  }
};

/// Columns of an [outer][len][inner] buffer of partial results.
template <class A> struct partial_column_source {
  const A* p;
  index_t len, inner;
  struct cursor {
    const A* q;
    index_t step;
    __device__ A operator()(index_t l) const { return q[l * step]; }
  };
  __device__ cursor column(index_t o, index_t j) const { return {p + o * len * inner + j, inner}; }
};

/// Stores final results: narrowed, with Op::finalize over the full axis length.
template <class Op, class A, class T> struct final_writer {
  T* out;
  index_t len;
  __device__ void operator()(index_t i, A v) const { out[i] = narrow<T>(Op::finalize(v, len)); }
};

/// Stores partial accumulators for the combining pass.
template <class A> struct partial_writer {
  A* out;
  __device__ void operator()(index_t i, A v) const { out[i] = v; }
};

/// Reduces rows * chunks row segments; a group of Group threads (a warp or the whole block) per segment.
/// Segment v covers row v / chunks, elements [c * chunk_len, (c + 1) * chunk_len) with c = v % chunks.
template <class Op, class A, int Group, class Source, class Writer>
__global__ void __launch_bounds__(block_threads) reduce_rows(Source src, Writer out, index_t rows, index_t chunks,
                                                             index_t len, index_t chunk_len, A init) {
  constexpr int groups = block_threads / Group;
  const combine_fn<Op> op{};
  const int group = static_cast<int>(threadIdx.x) / Group;
  const int lane = static_cast<int>(threadIdx.x) % Group;
  const index_t segments = rows * chunks;
  for (index_t v = static_cast<index_t>(blockIdx.x) * groups + group; v < segments;
       v += static_cast<index_t>(gridDim.x) * groups) {
    const index_t r = v / chunks, c = v % chunks;
    const index_t j0 = c * chunk_len;
    const index_t j1 = j0 + chunk_len < len ? j0 + chunk_len : len;
    const auto cur = src.row(r);
    A a0 = init, a1 = init;  // two independent chains keep two loads in flight
    index_t j = j0 + lane;
    for (; j + Group < j1; j += 2 * Group) {
      a0 = op(a0, cur(j));
      a1 = op(a1, cur(j + Group));
    }
    if (j < j1) a0 = op(a0, cur(j));
    A t = op(a0, a1);
    if constexpr (Group == 32) {
      using warp_reduce = cub::WarpReduce<A>;
      __shared__ typename warp_reduce::TempStorage warp_tmp[groups];
      t = warp_reduce(warp_tmp[group]).Reduce(t, op);
      if (lane == 0) out(v, t);
    } else {
      static_assert(Group == block_threads, "texpr: reduce_rows groups are a warp or the whole block");
      using block_reduce = cub::BlockReduce<A, block_threads>;
      __shared__ typename block_reduce::TempStorage block_tmp;
      t = block_reduce(block_tmp).Reduce(t, op);
      if (threadIdx.x == 0) out(v, t);
      __syncthreads();  // block_tmp is reused by the next segment
    }
  }
}

inline constexpr int column_tile = 32;                           // columns per block: one warp reads 32 in a row
inline constexpr int column_slices = block_threads / column_tile;  // rows of the axis read in parallel per tile
inline constexpr int column_block_rows = 64;                     // rows summed per partial (bounds the error growth)

/// Reduces the middle axis of [outer][len][inner]: a block per 32-column tile (and chunk of the axis),
/// threadIdx.x along the contiguous columns so each warp's reads are coalesced.
template <class Op, class A, class Source, class Writer>
__global__ void __launch_bounds__(block_threads) reduce_columns(Source src, Writer out, index_t outer, index_t len,
                                                                index_t inner, index_t chunks, index_t chunk_len, A init) {
  const combine_fn<Op> op{};
  __shared__ A part[column_slices][column_tile + 1];
  const index_t col_tiles = ceil_div(inner, column_tile);
  const index_t tiles = outer * col_tiles * chunks;
  for (index_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const index_t c = t % chunks, rest = t / chunks;
    const index_t o = rest / col_tiles;
    const index_t j = (rest % col_tiles) * column_tile + threadIdx.x;
    const index_t l0 = c * chunk_len;
    const index_t l1 = l0 + chunk_len < len ? l0 + chunk_len : len;
    A total = init;
    if (j < inner) {
      auto col = src.column(o, j);
      A block = init;
      int count = 0;
      for (index_t l = l0 + threadIdx.y; l < l1; l += column_slices) {
        block = op(block, col(l));
        if (++count == column_block_rows) {
          total = op(total, block);
          block = init;
          count = 0;
        }
      }
      total = op(total, block);
    }
    part[threadIdx.y][threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.y == 0 && j < inner) {
      A r = part[0][threadIdx.x];
      for (int y = 1; y < column_slices; ++y) r = op(r, part[y][threadIdx.x]);
      out((o * chunks + c) * inner + j, r);
    }
    __syncthreads();
  }
}

/// Splits an axis of length len into chunks so that `units` work items become about `target`.
inline void split_axis(index_t units, index_t len, index_t min_chunk, index_t target, index_t& chunks, index_t& chunk_len) {
  chunks = 1;
  chunk_len = len;
  if (units >= target || len <= 2 * min_chunk) return;
  const index_t want = ceil_div(target, units < 1 ? 1 : units);
  const index_t most = ceil_div(len, min_chunk);
  const index_t k = want < most ? want : most;
  chunk_len = ceil_div(len, k);
  chunks = ceil_div(len, chunk_len);
}

/// dest = Op of acc (input shape in_shape) along axis; dest is contiguous. Nothing synchronises.
template <class Op, std::size_t R, class Acc, class T>
void reduce_axis(const Acc& acc, const shape_t<R>& in_shape, std::size_t axis, const view<T, R - 1, cuda>& dest,
                 stream_t stream) {
  using A = op::accumulator_t<T>;
  const index_t n_out = dest.size();
  if (n_out == 0) return;
  const index_t len = in_shape[axis];
  const A init = Op::template identity<A>();
  const final_writer<Op, A, T> fin{dest.data(), len};
  const index_t target = static_cast<index_t>(multiprocessor_count()) * 4;  // blocks that keep every SM busy
  if (axis == R - 1) {
    const index_t rows = n_out;
    const row_source<Acc, A, R> src{acc, pack(in_shape)};
    constexpr int warps = block_threads / 32;
    if (len <= 1024) {  // short rows: a warp each
      reduce_rows<Op, A, 32><<<grid_for(ceil_div(rows, warps)), block_threads, 0, stream>>>(src, fin, rows, 1, len, len, init);
      TEXPR_CUDA_CHECK_LAUNCH();
      return;
    }
    index_t chunks = 1, chunk_len = len;
    split_axis(rows, len, 4096, target, chunks, chunk_len);
    if (chunks == 1) {
      reduce_rows<Op, A, block_threads><<<grid_for(rows), block_threads, 0, stream>>>(src, fin, rows, 1, len, len, init);
      TEXPR_CUDA_CHECK_LAUNCH();
      return;
    }
    device_scratch partial(sizeof(A) * static_cast<std::size_t>(rows * chunks), stream);
    A* p = static_cast<A*>(partial.p);
    reduce_rows<Op, A, block_threads><<<grid_for(rows * chunks), block_threads, 0, stream>>>(
        src, partial_writer<A>{p}, rows, chunks, len, chunk_len, init);
    TEXPR_CUDA_CHECK_LAUNCH();
    reduce_rows<Op, A, 32><<<grid_for(ceil_div(rows, warps)), block_threads, 0, stream>>>(
        partial_row_source<A>{p, chunks}, fin, rows, 1, chunks, chunks, init);
    TEXPR_CUDA_CHECK_LAUNCH();
    return;
  }
  index_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= in_shape[d];
  for (std::size_t d = axis + 1; d < R; ++d) inner *= in_shape[d];
  const column_source<Acc, A, R> src{acc, pack(in_shape), axis, acc.dense(), len, inner};
  const dim3 block(column_tile, column_slices);
  const index_t tiles = outer * ceil_div(inner, column_tile);
  index_t chunks = 1, chunk_len = len;
  split_axis(tiles, len, 256, target, chunks, chunk_len);
  if (chunks == 1) {
    reduce_columns<Op, A><<<grid_for(tiles), block, 0, stream>>>(src, fin, outer, len, inner, 1, len, init);
    TEXPR_CUDA_CHECK_LAUNCH();
    return;
  }
  device_scratch partial(sizeof(A) * static_cast<std::size_t>(outer * chunks * inner), stream);
  A* p = static_cast<A*>(partial.p);
  reduce_columns<Op, A><<<grid_for(tiles * chunks), block, 0, stream>>>(src, partial_writer<A>{p}, outer, len, inner,
                                                                         chunks, chunk_len, init);
  TEXPR_CUDA_CHECK_LAUNCH();
  reduce_columns<Op, A><<<grid_for(tiles), block, 0, stream>>>(partial_column_source<A>{p, chunks, inner}, fin, outer,
                                                                chunks, inner, 1, chunks, init);
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::detail::cuda_impl

#endif // __CUDACC__
