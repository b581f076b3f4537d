// cuda_kernels::block_reduce: reductions on the GPU with warp-shuffle and shared-memory trees (no CUB: its device
// dispatch is what made each reduction cost seconds of nvcc time). Over everything: one pass of grid-stride block
// partials reading the fused operand, then one block that combines them and finalises (mean divides there). Along
// the last axis: a warp per line, or a block per line for long ones, split in chunks when there are few lines.
// Along any other axis: 32-column tiles whose threads each walk one column, so a warp's reads are coalesced; each
// thread positions its line once (seek) and then keeps one offset and one step per operand in registers.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

/// v from the lane `delta` above, for any trivially copyable accumulator (shuffled as 32-bit words).
template <class A> __device__ inline A shuffle_down(const A& v, int delta) {
  constexpr int words = (sizeof(A) + 3) / 4;
  unsigned int w[words] = {};
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int k = 0; k < words; ++k) w[k] = __shfl_down_sync(0xFFFFFFFFu, w[k], delta);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

/// The combination of v over the warp, in lane 0.
template <class A, class Op> __device__ inline A warp_combine(const Op& op, A v) {
#pragma unroll
  for (int delta = 16; delta > 0; delta /= 2) v = op.combine(v, shuffle_down(v, delta));
  return v;
}

/// The combination of v over the block (blockDim.x * blockDim.y threads, a multiple of 32), in thread 0; every
/// thread of the block must call it.
template <class A, class Op> __device__ inline A block_combine(const Op& op, A v) {
  __shared__ alignas(16) unsigned char raw[32 * sizeof(A)];
  A* warps = reinterpret_cast<A*>(raw);
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  const int n_warps = static_cast<int>(blockDim.x * blockDim.y) / 32;
  v = warp_combine(op, v);
  __syncthreads();  // warps[] may still be read by a previous call
  if (t % 32 == 0) warps[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    v = t < n_warps ? warps[t] : op.template identity<A>();
    v = warp_combine(op, v);
  }
  return v;
}

/// Element i (row-major over shape) of the fused accessor, lifted into the accumulator.
template <class A, std::size_t R, class Op, class Acc>
__device__ inline A lifted_at(const Op& op, const Acc& acc, bool dense, const index_pack<R>& shape, index_t i) {
  if (dense) return op.template lift<A>(widen(acc.linear(i)), i);
  index_t idx[R > 0 ? R : 1] = {};
  unravel(i, shape, idx);
  return op.template lift<A>(widen(acc.at(idx)), i);
}

/// Accumulator chains per thread over everything. With two 4-byte loads in flight per thread the H200 read
/// 2.2 TB/s (about 16 KiB in flight per SM); saturating its memory takes about four times that.
inline constexpr int reduce_chains = 4;
/// Loads each thread issues per step before combining them (reduce_all, reduce_lines): eight, so four per chain
/// over everything; along lines they go to the two chains a0/a1 alternately, as the two-load steps did, so line
/// results are bitwise what they were. Sixteen was slower on every reduction.
inline constexpr int reduce_loads = 2 * reduce_chains;

/// Pass 1 over everything: each block combines a grid-stride share of the n elements into partial[blockIdx.x].
template <class A, std::size_t R, class Op, class Acc>
__global__ void __launch_bounds__(block_threads)
    reduce_all_partials(Op op, Acc acc, bool dense, index_pack<R> shape, index_t n, A* partial) {
  constexpr int U = reduce_loads;
  A a[reduce_chains];
#pragma unroll
  for (int k = 0; k < reduce_chains; ++k) a[k] = op.template identity<A>();
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (dense) {  // (hoisted: the unrolled steps then hold only loads and combines)
    for (; i + (U - 1) * stride < n; i += U * stride) {
      A vals[U];
#pragma unroll
      for (int k = 0; k < U; ++k) vals[k] = op.template lift<A>(widen(acc.linear(i + k * stride)), i + k * stride);
#pragma unroll
      for (int k = 0; k < U; ++k) a[k % reduce_chains] = op.combine(a[k % reduce_chains], vals[k]);
    }
  }
  for (int k = 0; i < n; i += stride, k = (k + 1) % reduce_chains) a[k] = op.combine(a[k], lifted_at<A>(op, acc, dense, shape, i));
#pragma unroll
  for (int k = 1; k < reduce_chains; ++k) a[0] = op.combine(a[0], a[k]);
  const A v = block_combine(op, a[0]);
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

/// Pass 2: one block combines the partials and writes the finalised result.
template <class T, class A, class Op>
__global__ void __launch_bounds__(block_threads) reduce_all_final(Op op, const A* partial, index_t parts, index_t n, T* out) {
  A a = op.template identity<A>();
  for (index_t i = threadIdx.x; i < parts; i += blockDim.x) a = op.combine(a, partial[i]);
  a = block_combine(op, a);
  if (threadIdx.x == 0) out[0] = op.template finalize<T>(a, n);
}

/// Stores final results: finalised over the full axis length.
template <class Op, class A, class T> struct final_writer {
  Op op;
  T* out;
  index_t len;
  __device__ void operator()(index_t i, A v) const { out[i] = op.template finalize<T>(v, len); }
};
/// Stores partial accumulators for the combining pass.
template <class A> struct partial_writer {
  A* out;
  __device__ void operator()(index_t i, A v) const { out[i] = v; }
};

/// Lines of the operand along its last axis: line r positioned once (seek), then read by along(j).
template <class Acc, std::size_t R> struct row_source {
  Acc acc;
  index_pack<R> shape;  // the operand's shape; lines run along its last axis
  static constexpr bool lifted = true;
  __device__ Acc line(index_t r) const {
    index_t idx[R] = {};
    // r enumerates the first R-1 axes (the last one is the line's)
#pragma unroll
    for (int d = static_cast<int>(R) - 2; d >= 0; --d) {
      idx[d] = r % shape.v[d];
      r /= shape.v[d];
    }
    Acc a = acc;
    a.seek(idx, R - 1);
    return a;
  }
};
/// Lines of a [rows][len] buffer of partial accumulators.
template <class A> struct partial_rows {
  const A* p;
  index_t len;
  static constexpr bool lifted = false;
  struct cursor {
    const A* q;
    __device__ A along(index_t j) const { return q[j]; }
  };
  __device__ cursor line(index_t r) const { return {p + r * len}; }
};

/// Reduces rows * chunks line segments with a group of Group threads (a warp, or the whole block) per segment.
/// Segment v covers line v / chunks, elements [c * chunk_len, (c + 1) * chunk_len) with c = v % chunks.
template <class A, int Group, class Op, class Source, class Writer>
__global__ void __launch_bounds__(block_threads)
    reduce_lines(Op op, Source src, Writer out, index_t rows, index_t chunks, index_t len, index_t chunk_len) {
  constexpr int groups = block_threads / Group;
  const int group = static_cast<int>(threadIdx.x) / Group;
  const int lane = static_cast<int>(threadIdx.x) % Group;
  const index_t segments = rows * chunks;
  // Every thread runs the same number of iterations (block_combine synchronises the whole block).
  const index_t rounds = ceil_div(segments, static_cast<index_t>(gridDim.x) * groups);
  for (index_t round = 0; round < rounds; ++round) {
    const index_t v = (round * gridDim.x + blockIdx.x) * groups + group;
    A a0 = op.template identity<A>(), a1 = op.template identity<A>();
    if (v < segments) {
      const index_t r = v / chunks, c = v % chunks;
      const index_t j0 = c * chunk_len;
      const index_t j1 = j0 + chunk_len < len ? j0 + chunk_len : len;
      const auto line = src.line(r);
      auto get = [&](index_t j) {
        if constexpr (Source::lifted) return op.template lift<A>(widen(line.along(j)), j);
        else return line.along(j);
      };
      index_t j = j0 + lane;
      constexpr int U = reduce_loads;
      for (; j + (U - 1) * Group < j1; j += U * Group) {
        decltype(get(j)) vals[U];
#pragma unroll
        for (int k = 0; k < U; ++k) vals[k] = get(j + k * Group);
#pragma unroll
        for (int k = 0; k < U; k += 2) {
          a0 = op.combine(a0, vals[k]);
          a1 = op.combine(a1, vals[k + 1]);
        }
      }
      for (; j + Group < j1; j += 2 * Group) {
        a0 = op.combine(a0, get(j));
        a1 = op.combine(a1, get(j + Group));
      }
      if (j < j1) a0 = op.combine(a0, get(j));
    }
    A t = op.combine(a0, a1);
    if constexpr (Group == 32) {
      t = warp_combine(op, t);
      if (lane == 0 && v < segments) out(v, t);
    } else {
      t = block_combine(op, t);
      if (threadIdx.x == 0 && v < segments) out(v, t);
    }
  }
}

inline constexpr int column_tile = 32;                             // columns one warp reads in a row
inline constexpr int column_groups = 4;                            // column_tile groups per thread: 128-column tiles
inline constexpr int column_width = column_tile * column_groups;  // columns per block tile
inline constexpr int column_slices = block_threads / column_tile;  // positions along the axis read in parallel

/// Columns (o, j) of the operand viewed as [outer][len][inner] (len the reduced axis).
template <class Acc, std::size_t R> struct column_source {
  Acc acc;
  index_pack<R> shape;
  std::size_t axis;
  static constexpr bool lifted = true;
  __device__ Acc column(index_t o, index_t j) const {
    index_t idx[R] = {};
    // o enumerates the axes before `axis`, j those after it (unrolled over the compile-time rank: registers only)
#pragma unroll
    for (int d = static_cast<int>(R) - 1; d >= 0; --d) {
      if (static_cast<std::size_t>(d) > axis) {
        idx[d] = j % shape.v[d];
        j /= shape.v[d];
      }
    }
#pragma unroll
    for (int d = static_cast<int>(R) - 1; d >= 0; --d) {
      if (static_cast<std::size_t>(d) < axis) {
        idx[d] = o % shape.v[d];
        o /= shape.v[d];
      }
    }
    Acc a = acc;
    a.seek(idx, axis);
    return a;
  }
};
/// Columns of an [outer][len][inner] buffer of partial accumulators.
template <class A> struct partial_columns {
  const A* p;
  index_t len, inner;
  static constexpr bool lifted = false;
  struct cursor {
    const A* q;
    index_t step;
    __device__ A along(index_t l) const { return q[l * step]; }
  };
  __device__ cursor column(index_t o, index_t j) const { return {p + o * len * inner + j, inner}; }
};

/// Reduces the middle axis of [outer][len][inner]: a block per 128-column tile (and chunk of the axis), threadIdx.x
/// along the contiguous columns so each warp's reads are coalesced. Each thread walks four columns 32 apart: four
/// loads in flight, and a quarter of the block synchronisations per byte that one column per thread needed (which
/// read 2.0 TB/s on an H200 for a 64 x 1024 x 1024 sum over axis 0). Columns past `inner` re-read the last column
/// (a cache hit) so that the loads need no predicate; their results are not written.
template <class A, class Op, class Source, class Writer>
__global__ void __launch_bounds__(block_threads)
    reduce_columns(Op op, Source src, Writer out, index_t outer, index_t len, index_t inner, index_t chunks, index_t chunk_len) {
  __shared__ alignas(16) unsigned char raw[column_slices * (column_width + 1) * sizeof(A)];
  A(*part)[column_width + 1] = reinterpret_cast<A(*)[column_width + 1]>(raw);
  const index_t col_tiles = ceil_div(inner, column_width);
  const index_t tiles = outer * col_tiles * chunks;
  for (index_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const index_t c = t % chunks, rest = t / chunks;
    const index_t o = rest / col_tiles;
    const index_t first = (rest % col_tiles) * column_width;
    const index_t l0 = c * chunk_len;
    const index_t l1 = l0 + chunk_len < len ? l0 + chunk_len : len;
    decltype(src.column(o, first)) col[column_groups];
    A total[column_groups];
#pragma unroll
    for (int q = 0; q < column_groups; ++q) {
      const index_t j = first + q * column_tile + threadIdx.x;
      col[q] = src.column(o, j < inner ? j : inner - 1);
      total[q] = op.template identity<A>();
    }
    for (index_t l = l0 + threadIdx.y; l < l1; l += column_slices) {
#pragma unroll
      for (int q = 0; q < column_groups; ++q) {
        if constexpr (Source::lifted) total[q] = op.combine(total[q], op.template lift<A>(widen(col[q].along(l)), l));
        else total[q] = op.combine(total[q], col[q].along(l));
      }
    }
#pragma unroll
    for (int q = 0; q < column_groups; ++q) part[threadIdx.y][q * column_tile + threadIdx.x] = total[q];
    __syncthreads();
    // The first column_width threads each combine one column's slices, in slice order.
    const int k = static_cast<int>(threadIdx.y * column_tile + threadIdx.x);
    if (k < column_width && first + k < inner) {
      A r = part[0][k];
      for (int y = 1; y < column_slices; ++y) r = op.combine(r, part[y][k]);
      out((o * chunks + c) * inner + first + k, r);
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

template <class T, class A, class Op> __global__ void write_empty(Op op, T* out) { *out = op.template finalize<T>(op.template identity<A>(), 0); }

/// *out (device memory) = op over every element acc reads (shape in_shape); nothing synchronises.
template <class T, class A, class Op, std::size_t R, class Acc>
void reduce_all(const Op& op, const Acc& acc, const shape_t<R>& in_shape, T* out, stream_t stream) {
  const index_t n = shape_size(in_shape);
  if (n == 0) {
    write_empty<T, A, Op><<<1, 1, 0, stream>>>(op, out);
    TEXPR_CUDA_CHECK_LAUNCH();
    return;
  }
  const index_t blocks = grid_for(ceil_div(n, 2 * block_threads));
  device_scratch partial(sizeof(A) * static_cast<std::size_t>(blocks), stream);
  A* p = static_cast<A*>(partial.p);
  reduce_all_partials<A, R><<<static_cast<unsigned>(blocks), block_threads, 0, stream>>>(op, acc, acc.dense(), pack(in_shape), n, p);
  TEXPR_CUDA_CHECK_LAUNCH();
  reduce_all_final<T, A><<<1, block_threads, 0, stream>>>(op, p, blocks, n, out);
  TEXPR_CUDA_CHECK_LAUNCH();
}

/// out[...] = op of acc (shape in_shape) along `axis`; out is contiguous with the axis removed. Nothing synchronises.
template <class T, class A, class Op, std::size_t R, class Acc>
void reduce_axis(const Op& op, const Acc& acc, const shape_t<R>& in_shape, std::size_t axis, T* out, index_t n_out, stream_t stream) {
  if (n_out == 0) return;
  const index_t len = in_shape[axis];
  const final_writer<Op, A, T> fin{op, out, len};
  const index_t target = static_cast<index_t>(multiprocessor_count()) * 4;  // blocks that keep every SM busy
  if (axis == R - 1) {
    const index_t rows = n_out;
    const row_source<Acc, R> src{acc, pack(in_shape)};
    constexpr int warps = block_threads / 32;
    if (len <= 1024) {  // short lines: a warp each
      reduce_lines<A, 32><<<grid_for(ceil_div(rows, warps)), block_threads, 0, stream>>>(op, src, fin, rows, 1, len, len);
      TEXPR_CUDA_CHECK_LAUNCH();
      return;
    }
    index_t chunks = 1, chunk_len = len;
    split_axis(rows, len, 4096, target, chunks, chunk_len);
    if (chunks == 1) {
      reduce_lines<A, block_threads><<<grid_for(rows), block_threads, 0, stream>>>(op, src, fin, rows, 1, len, len);
      TEXPR_CUDA_CHECK_LAUNCH();
      return;
    }
    device_scratch partial(sizeof(A) * static_cast<std::size_t>(rows * chunks), stream);
    A* p = static_cast<A*>(partial.p);
    reduce_lines<A, block_threads><<<grid_for(rows * chunks), block_threads, 0, stream>>>(op, src, partial_writer<A>{p}, rows,
                                                                                           chunks, len, chunk_len);
    TEXPR_CUDA_CHECK_LAUNCH();
    reduce_lines<A, 32><<<grid_for(ceil_div(rows, warps)), block_threads, 0, stream>>>(op, partial_rows<A>{p, chunks}, fin,
                                                                                       rows, 1, chunks, chunks);
    TEXPR_CUDA_CHECK_LAUNCH();
    return;
  }
  index_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= in_shape[d];
  for (std::size_t d = axis + 1; d < R; ++d) inner *= in_shape[d];
  const column_source<Acc, R> src{acc, pack(in_shape), axis};
  const dim3 block(column_tile, column_slices);
  const index_t tiles = outer * ceil_div(inner, column_width);
  index_t chunks = 1, chunk_len = len;
  split_axis(tiles, len, 256, target, chunks, chunk_len);
  if (chunks == 1) {
    reduce_columns<A><<<grid_for(tiles), block, 0, stream>>>(op, src, fin, outer, len, inner, 1, len);
    TEXPR_CUDA_CHECK_LAUNCH();
    return;
  }
  device_scratch partial(sizeof(A) * static_cast<std::size_t>(outer * chunks * inner), stream);
  A* p = static_cast<A*>(partial.p);
  reduce_columns<A><<<grid_for(tiles * chunks), block, 0, stream>>>(op, src, partial_writer<A>{p}, outer, len, inner, chunks,
                                                                     chunk_len);
  TEXPR_CUDA_CHECK_LAUNCH();
  reduce_columns<A><<<grid_for(tiles), block, 0, stream>>>(op, partial_columns<A>{p, chunks, inner}, fin, outer, chunks,
                                                           inner, 1, chunks);
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::detail::cuda_impl

namespace texpr::cuda_kernels {

template <class N, class T, std::size_t R>
void block_reduce::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using namespace detail::cuda_impl;
  using C = std::remove_cvref_t<decltype(n.child())>;
  using KT = typename N::kernel_dtype;
  using Op = typename N::op_type;
  using A = typename Op::template accumulator<KT>;
  constexpr std::size_t RC = C::rank;
  const Op& op = n.op();
  const auto in_shape = n.child().shape();
  if constexpr (Op::needs_nonempty) {
    bool empty_line = false;
    for (std::size_t d = 0; d != RC; ++d)
      if (n.reduces(d) && in_shape[d] == 0) empty_line = true;
    if (empty_line && dest.size() != 0)
      throw shape_error("texpr: " + std::string(Op::name) + " over an axis of length 0 (input shape " + to_string(in_shape) +
                        ") has no identity");
  }
  const int count = n.reduced_count();
  // (a reduction that reduces nothing never gets here: evaluation takes its operand as the result)
  // sum_to reads its operand from memory, so every sum_to of a dtype and rank shares its kernels (one per gradient
  // graph would cost minutes of nvcc time); the other reductions read their operand fused.
  const auto operand = [&] {
    if constexpr (N::operand_in_memory) return detail::materialize(n.child(), ctx);
    else return n.child();
  };
  if (R == 0 || n.reduces_all()) {
    reduce_all<T, A>(op, detail::read(operand(), in_shape, ctx), in_shape, dest.data(), ctx.stream);
    return;
  }
  // A rank-0 result reduces everything: no axis kernels are instantiated for it.
  if constexpr (RC >= 1 && R > 0) {
    if (count == 1) {
      std::size_t axis = 0;
      while (!n.reduces(axis)) ++axis;
      reduce_axis<T, A>(op, detail::read(operand(), in_shape, ctx), in_shape, axis, dest.data(), dest.size(), ctx.stream);
      return;
    }
    // Several axes (sum_to): one axis at a time, keeping each reduced axis with extent 1, the last into dest.
    // (argmax and argmin are not decomposable; their API reduces one axis or all, never this path)
    if constexpr (Op::decomposable && std::is_same_v<T, KT>) {
      const auto first = detail::materialize(n.child(), ctx);
      const T* data = first.data();
      shape_t<RC> shape = in_shape, strides = first.strides();
      int left = count;
      for (std::size_t axis = 0; axis < RC; ++axis) {
        if (!n.reduces(axis)) continue;
        const auto acc = make_strided_accessor(detail::memory_source<T>{data}, shape, strides, shape);
        shape_t<RC> next = shape;
        next[axis] = 1;
        T* target = --left == 0 ? dest.data() : detail::temporary<T, RC, cuda>(next, ctx).data();
        reduce_axis<T, A>(op, acc, shape, axis, target, shape_size(next), ctx.stream);
        if (left == 0) return;
        data = target;
        shape = next;
        strides = contiguous_strides(next);
      }
    }
  }
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
