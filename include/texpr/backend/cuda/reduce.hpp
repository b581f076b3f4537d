// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_kernels::block_reduce: reductions on the GPU with warp-shuffle and shared-memory trees (hand-written: a few
// lines over op.combine, where cub::BlockReduce's headers lengthen every nvcc translation unit's compile).
// Over everything: one launch; each block reads a grid-stride share of the fused operand (16-byte vector loads
// when it is dense and aligned) into four accumulators in registers, and the last block to finish (an atomic
// ticket) combines the blocks' partials and finalises. Along the last axis: a warp per line, or a block per line
// for long ones, split in chunks when there are few lines (16-byte loads along dense aligned rows). Along any other
// axis: tiles of 128 columns (256 for dtypes of 2 bytes or less) that warps read along the contiguous columns, in
// 16-byte loads of adjacent columns when the operand is dense and aligned, else through a cursor per column
// positioned once (seek) that keeps one offset and one step per operand in registers; both paths fold each column
// in the same order. The plan (which path, extents, chunks) is eval/reduction_plan.hpp's.
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
#include "texpr/eval/reduction_plan.hpp"
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
// Not cub::BlockReduce: its PTX is as free of local memory, but nvcc took ~10% longer on examples/mlp/mlp.cu.
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

/// *p read past the L1 cache (another block wrote it during this launch).
template <class A> __device__ inline A load_volatile(const A* p) {
  constexpr bool words = sizeof(A) % 4 == 0;
  using U = std::conditional_t<words, unsigned int, unsigned char>;
  U w[sizeof(A) / sizeof(U)];
#pragma unroll
  for (std::size_t k = 0; k < sizeof(A) / sizeof(U); ++k) w[k] = reinterpret_cast<const volatile U*>(p)[k];
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

/// Loads each thread issues per step along lines before combining them (reduce_lines), going to the two chains
/// a0/a1 alternately. Sixteen was slower on every reduction.
inline constexpr int reduce_loads = 8;

/// The accumulators of one thread over everything: four chains in registers (named, never indexed at run time).
template <class A, class Op> struct chains {
  A a0, a1, a2, a3;
  __device__ explicit chains(const Op& op) : a0(op.template identity<A>()), a1(a0), a2(a0), a3(a0) {}
  /// Element k (a compile-time position in an unrolled step) into chain k % 4.
  template <int K> __device__ void take(const Op& op, const A& v) {
    if constexpr (K % 4 == 0) a0 = op.combine(a0, v);
    else if constexpr (K % 4 == 1) a1 = op.combine(a1, v);
    else if constexpr (K % 4 == 2) a2 = op.combine(a2, v);
    else a3 = op.combine(a3, v);
  }
  __device__ A total(const Op& op) const { return op.combine(op.combine(a0, a1), op.combine(a2, a3)); }
};

/// Elements per 16-byte vector load of an accessor yielding V.
template <class V> inline constexpr int vector_width = sizeof(V) >= 16 ? 1 : static_cast<int>(16 / sizeof(V));

template <int K, int W, class A, class Op, class V> __device__ inline void take_all(chains<A, Op>& c, const Op& op, const V (&x)[W], index_t i) {
  if constexpr (K < W) {
    c.template take<K>(op, op.template lift<A>(widen(x[K]), i + K));
    take_all<K + 1, W>(c, op, x, i);
  }
}

/// *out = op over the n elements acc reads, in one launch: each block combines a grid-stride share into
/// partial[blockIdx.x]; the last block to finish (by the stream's ticket, zero before the launch and reset by that
/// block) combines the partials in block order and writes the finalised result. `vec`: acc is dense and its memory aligned to 16 bytes, so it is
/// read in 16-byte vector loads (every memory leaf of a fused operand included).
template <class T, class A, std::size_t R, class Op, class Acc>
__global__ void __launch_bounds__(block_threads)
    reduce_all_once(Op op, Acc acc, bool dense, bool vec, index_pack<R> shape, index_t n, A* partial, unsigned* ticket, T* out) {
  using V = typename Acc::value_type;
  constexpr int W = vector_width<V>;
  chains<A, Op> c(op);
  const index_t threads = static_cast<index_t>(gridDim.x) * blockDim.x;
  const index_t t = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  index_t i = t;
  if constexpr (vector_loadable<Acc>) {
    if (vec) {
      const index_t groups = n / W;
      index_t g = t;
      for (; g + threads < groups; g += 2 * threads) {  // two 16-byte loads in flight per thread
        V x[W], y[W];
        acc.template load<W>(g * W, x);
        acc.template load<W>((g + threads) * W, y);
        take_all<0, W>(c, op, x, g * W);
        take_all<0, W>(c, op, y, (g + threads) * W);
      }
      if (g < groups) {
        V x[W];
        acc.template load<W>(g * W, x);
        take_all<0, W>(c, op, x, g * W);
      }
      i = groups * W + t;
    }
  }
  if (dense) {
    for (; i + 3 * threads < n; i += 4 * threads) {
      const V x0 = acc.linear(i), x1 = acc.linear(i + threads), x2 = acc.linear(i + 2 * threads), x3 = acc.linear(i + 3 * threads);
      c.template take<0>(op, op.template lift<A>(widen(x0), i));
      c.template take<1>(op, op.template lift<A>(widen(x1), i + threads));
      c.template take<2>(op, op.template lift<A>(widen(x2), i + 2 * threads));
      c.template take<3>(op, op.template lift<A>(widen(x3), i + 3 * threads));
    }
    for (; i < n; i += threads) c.template take<0>(op, op.template lift<A>(widen(acc.linear(i)), i));
  } else {
    for (; i < n; i += threads) {
      index_t idx[R > 0 ? R : 1] = {};
      unravel(i, shape, idx);
      c.template take<0>(op, op.template lift<A>(widen(acc.at(idx)), i));
    }
  }
  A v = block_combine(op, c.total(op));
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = v;
    __threadfence();  // the partial is visible before the ticket says so
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  A a = op.template identity<A>();
  for (index_t b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    a = op.combine(a, load_volatile(partial + b));
  }
  a = block_combine(op, a);
  if (threadIdx.x == 0) {
    out[0] = op.template finalize<T>(a, n);
    *ticket = 0;  // for the next launch on this stream (stream_tickets)
  }
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
  using value_type = typename Acc::value_type;
  Acc acc;
  index_pack<R> shape;  // the operand's shape; lines run along its last axis
  bool vec = false;     // dense, 16-byte aligned, and every row starts on 16 bytes: rows read by load()
  static constexpr bool lifted = true;
  static constexpr bool vector = vector_loadable<Acc>;
  /// W elements of row r from j (a multiple of W), as vector loads (only when vec).
  template <int W> __device__ void load(index_t r, index_t j, value_type (&x)[W]) const {
    acc.template load<W>(r * shape.v[R - 1] + j, x);
  }
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
  static constexpr bool vector = false;
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
      bool done = false;
      if constexpr (Source::vector) {
        if (src.vec) {  // [v0, v1) in vector loads of W elements (two in flight), the ends one element a lane
          using V = typename Source::value_type;
          constexpr int W = vector_width<V>;
          const index_t v0 = (j0 + W - 1) / W * W, v1 = j1 / W * W > v0 ? j1 / W * W : v0;
          for (index_t h = j0 + lane; h < (v0 < j1 ? v0 : j1); h += Group) a0 = op.combine(a0, get(h));
          index_t g = v0 / W + lane;
          for (; g + Group < v1 / W; g += 2 * Group) {
            V x[W], y[W];
            src.template load<W>(r, g * W, x);
            src.template load<W>(r, (g + Group) * W, y);
#pragma unroll
            for (int k = 0; k < W; ++k) a0 = op.combine(a0, op.template lift<A>(widen(x[k]), g * W + k));
#pragma unroll
            for (int k = 0; k < W; ++k) a1 = op.combine(a1, op.template lift<A>(widen(y[k]), (g + Group) * W + k));
          }
          if (g < v1 / W) {
            V x[W];
            src.template load<W>(r, g * W, x);
#pragma unroll
            for (int k = 0; k < W; ++k) a0 = op.combine(a0, op.template lift<A>(widen(x[k]), g * W + k));
          }
          for (index_t h = v1 + lane; h < j1; h += Group) a1 = op.combine(a1, get(h));
          done = true;
        }
      }
      index_t j = done ? j1 : j0 + lane;
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
inline constexpr int column_width = column_tile * column_groups;  // columns per block tile (the axis split's unit)
inline constexpr int column_slices = block_threads / column_tile;  // positions along the axis read in parallel

/// Elements per vector load along the columns of an operand yielding V: 16 bytes, at most 8 elements (a tile
/// keeps column_tile * 8 columns); 1 means no vector path.
template <class V> inline constexpr int column_vector_width = vector_width<V> < 8 ? vector_width<V> : 8;
/// Accumulators per thread of a column tile read W columns per load (column_groups at least: four loads in flight).
template <int W> inline constexpr int column_accumulators = W > column_groups ? W : column_groups;

/// Columns (o, j) of the operand viewed as [outer][len][inner] (len the reduced axis).
template <class Acc, std::size_t R> struct column_source {
  using value_type = typename Acc::value_type;
  Acc acc;
  index_pack<R> shape;
  std::size_t axis;
  bool vec = false;  // dense, aligned, and inner a multiple of the vector width: tiles read by load()
  static constexpr bool lifted = true;
  static constexpr bool vector = vector_loadable<Acc> && column_vector_width<value_type> > 1;
  /// W adjacent elements from row-major offset i (a multiple of W), as vector loads (only when vec).
  template <int W> __device__ void load(index_t i, value_type (&x)[W]) const { acc.template load<W>(i, x); }
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
  static constexpr bool vector = false;
  struct cursor {
    const A* q;
    index_t step;
    __device__ A along(index_t l) const { return q[l * step]; }
  };
  __device__ cursor column(index_t o, index_t j) const { return {p + o * len * inner + j, inner}; }
};

/// The tiles of reduce_columns, read W columns per load: W = 1 walks column_groups columns 32 apart through
/// cursors (any layout); W > 1 reads W adjacent columns per 16-byte load at a row-major offset (a dense operand).
/// Thread (x, y) folds positions y, y + column_slices, ... of its columns, and column k's slices are combined in
/// slice order, whatever W: the same fold per column on both paths, so their results are bitwise equal. Columns
/// past `inner` re-read the last load (a cache hit) so that the loads need no predicate; their results are not
/// written. part: column_slices rows of column_width + 1 accumulators (the padding spreads a column's slices over
/// the banks).
template <int W, class A, class Op, class Source, class Writer>
__device__ inline void reduce_column_tiles(const Op& op, const Source& src, const Writer& out, A* part, index_t outer,
                                           index_t len, index_t inner, index_t chunks, index_t chunk_len) {
  constexpr int K = column_accumulators<W>;  // accumulators per thread
  constexpr int G = K / W;                   // loads per thread and position
  constexpr int tile = column_tile * K;      // columns per block tile
  constexpr int stride = column_width + 1;
  const int x = static_cast<int>(threadIdx.x), y = static_cast<int>(threadIdx.y);
  const index_t col_tiles = ceil_div(inner, static_cast<index_t>(tile));
  const index_t tiles = outer * col_tiles * chunks;
  for (index_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const index_t c = t % chunks, rest = t / chunks;
    const index_t o = rest / col_tiles;
    const index_t first = (rest % col_tiles) * tile;
    const index_t l0 = c * chunk_len;
    const index_t l1 = l0 + chunk_len < len ? l0 + chunk_len : len;
    A total[K];
#pragma unroll
    for (int k = 0; k < K; ++k) total[k] = op.template identity<A>();
    if constexpr (W == 1) {
      decltype(src.column(o, first)) col[G];
#pragma unroll
      for (int q = 0; q < G; ++q) {
        const index_t j = first + q * column_tile + x;
        col[q] = src.column(o, j < inner ? j : inner - 1);
      }
      for (index_t l = l0 + y; l < l1; l += column_slices) {
#pragma unroll
        for (int q = 0; q < G; ++q) {
          if constexpr (Source::lifted) total[q] = op.combine(total[q], op.template lift<A>(widen(col[q].along(l)), l));
          else total[q] = op.combine(total[q], col[q].along(l));
        }
      }
    } else {
      using V = typename Source::value_type;
      index_t off[G];
#pragma unroll
      for (int q = 0; q < G; ++q) {
        const index_t j = first + static_cast<index_t>(q * column_tile + x) * W;
        off[q] = (o * len + l0 + y) * inner + (j < inner ? j : inner - W);
      }
      const index_t step = column_slices * inner;
      for (index_t l = l0 + y; l < l1; l += column_slices) {
        V v[G][W];
#pragma unroll
        for (int q = 0; q < G; ++q) src.template load<W>(off[q], v[q]);
#pragma unroll
        for (int q = 0; q < G; ++q) {
#pragma unroll
          for (int k = 0; k < W; ++k)
            total[q * W + k] = op.combine(total[q * W + k], op.template lift<A>(widen(v[q][k]), l));
          off[q] += step;
        }
      }
    }
    // The slices of each column combined in slice order, a round of column_groups accumulators per thread at a
    // time (shared memory for a 128-column tile whatever K): thread s < column_width takes slot s of the round,
    // accumulator k of lane s % column_tile, which holds column ((k / W) * column_tile + lane) * W + k % W.
#pragma unroll
    for (int round = 0; round < K / column_groups; ++round) {
#pragma unroll
      for (int g = 0; g < column_groups; ++g) part[y * stride + g * column_tile + x] = total[round * column_groups + g];
      __syncthreads();
      const int s = y * column_tile + x;
      if (s < column_width) {
        const int k = round * column_groups + s / column_tile, lane = s % column_tile;
        const index_t j = first + static_cast<index_t>((k / W) * column_tile + lane) * W + k % W;
        if (j < inner) {
          A r = part[s];
          for (int z = 1; z < column_slices; ++z) r = op.combine(r, part[z * stride + s]);
          out((o * chunks + c) * inner + j, r);
        }
      }
      __syncthreads();
    }
  }
}

/// Reduces the middle axis of [outer][len][inner]: a block per tile of columns (and chunk of the axis), threadIdx.x
/// along the contiguous columns so each warp's reads are coalesced. Each thread keeps four or more columns (four
/// loads in flight, and a quarter of the block synchronisations per byte that one column per thread needed, which
/// read 2.0 TB/s on an H200 for a 64 x 1024 x 1024 sum over axis 0); a dense, aligned operand is read in 16-byte
/// vector loads of adjacent columns (src.vec), anything else through per-column cursors.
template <class A, class Op, class Source, class Writer>
__global__ void __launch_bounds__(block_threads)
    reduce_columns(Op op, Source src, Writer out, index_t outer, index_t len, index_t inner, index_t chunks, index_t chunk_len) {
  constexpr int W = [] {
    if constexpr (Source::vector) return column_vector_width<typename Source::value_type>;
    else return 1;
  }();
  __shared__ alignas(16) unsigned char raw[column_slices * (column_width + 1) * sizeof(A)];
  A* part = reinterpret_cast<A*>(raw);
  if constexpr (W > 1) {
    if (src.vec) {
      reduce_column_tiles<W, A>(op, src, out, part, outer, len, inner, chunks, chunk_len);
      return;
    }
  }
  reduce_column_tiles<1, A>(op, src, out, part, outer, len, inner, chunks, chunk_len);
}

template <class T, class A, class Op> __global__ void write_empty(Op op, T* out) { *out = op.template finalize<T>(op.template identity<A>(), 0); }

/// The cuda's two reduction kernels, as eval/reduction_plan.hpp's driver calls them; nothing synchronises.
struct reduction_kernels {
  stream_t stream;

  /// *out (device memory) = op over every element acc reads: one launch (no memset: the stream's ticket is zero, and
  /// the last block resets it).
  template <class A, class Op, class Acc, std::size_t R, class T>
  void all(const Op& op, const Acc& acc, const reduction_plan<R>& p, T* out) const {
    const index_t n = p.size;
    if (n == 0) {
      write_empty<T, A, Op><<<1, 1, 0, stream>>>(op, out);
      TEXPR_CUDA_CHECK_LAUNCH();
      return;
    }
    const index_t blocks = grid_for(ceil_div(n, 4 * block_threads));
    const ticketed_scratch<A> scratch(static_cast<std::size_t>(blocks), stream);  // one block from texpr's cache
    A* partial = scratch.partials;
    unsigned* ticket = scratch.ticket;
    const bool dense = acc.dense();
    bool vec = false;
    if constexpr (vector_loadable<Acc>) vec = dense && acc.aligned(16);
    reduce_all_once<T, A, R><<<static_cast<unsigned>(blocks), block_threads, 0, stream>>>(op, acc, dense, vec, pack(p.shape), n,
                                                                                         partial, ticket, out);
    TEXPR_CUDA_CHECK_LAUNCH();
  }

  /// out[...] = op of acc along p.axis; out is contiguous with the axis removed.
  template <class A, class Op, class Acc, std::size_t R, class T>
  void axis(const Op& op, const Acc& acc, const reduction_plan<R>& p, T* out) const {
    if (p.n_out == 0) return;
    const index_t len = p.len;
    const final_writer<Op, A, T> fin{op, out, len};
    const index_t target = static_cast<index_t>(multiprocessor_count()) * 4;  // blocks that keep every SM busy
    if (p.along_rows()) {
      const index_t rows = p.n_out;
      row_source<Acc, R> src{acc, pack(p.shape)};
      if constexpr (vector_loadable<Acc>)
        src.vec = acc.dense() && acc.aligned(16) && len % vector_width<typename Acc::value_type> == 0;
      constexpr int warps = block_threads / 32;
      if (len <= 1024) {  // short lines: a warp each
        reduce_lines<A, 32><<<grid_for(ceil_div(rows, warps)), block_threads, 0, stream>>>(op, src, fin, rows, 1, len, len);
        TEXPR_CUDA_CHECK_LAUNCH();
        return;
      }
      const axis_split sp = split_axis(rows, len, 4096, target);
      if (sp.chunks == 1) {
        reduce_lines<A, block_threads><<<grid_for(rows), block_threads, 0, stream>>>(op, src, fin, rows, 1, len, len);
        TEXPR_CUDA_CHECK_LAUNCH();
        return;
      }
      device_scratch partial(sizeof(A) * static_cast<std::size_t>(rows * sp.chunks), stream);
      A* q = static_cast<A*>(partial.p);
      reduce_lines<A, block_threads><<<grid_for(rows * sp.chunks), block_threads, 0, stream>>>(
          op, src, partial_writer<A>{q}, rows, sp.chunks, len, sp.chunk_len);
      TEXPR_CUDA_CHECK_LAUNCH();
      reduce_lines<A, 32><<<grid_for(ceil_div(rows, warps)), block_threads, 0, stream>>>(op, partial_rows<A>{q, sp.chunks}, fin,
                                                                                         rows, 1, sp.chunks, sp.chunks);
      TEXPR_CUDA_CHECK_LAUNCH();
      return;
    }
    const index_t outer = p.outer, inner = p.after();
    column_source<Acc, R> src{acc, pack(p.shape), p.axis};
    index_t tile = column_width;
    if constexpr (column_source<Acc, R>::vector) {
      using V = typename Acc::value_type;
      constexpr int W = column_vector_width<V>;
      src.vec = acc.dense() && acc.aligned(sizeof(V) * W) && inner % W == 0;
      if (src.vec) tile = column_tile * column_accumulators<W>;
    }
    const dim3 block(column_tile, column_slices);
    const index_t tiles = outer * ceil_div(inner, column_width);
    // The split counts 128-column tiles on both paths: the same chunks, so the same fold per column.
    const axis_split sp = split_axis(tiles, len, 256, target);
    const index_t blocks = outer * ceil_div(inner, tile) * sp.chunks;
    if (sp.chunks == 1) {
      reduce_columns<A><<<grid_for(blocks), block, 0, stream>>>(op, src, fin, outer, len, inner, 1, len);
      TEXPR_CUDA_CHECK_LAUNCH();
      return;
    }
    device_scratch partial(sizeof(A) * static_cast<std::size_t>(outer * sp.chunks * inner), stream);
    A* q = static_cast<A*>(partial.p);
    reduce_columns<A><<<grid_for(blocks), block, 0, stream>>>(op, src, partial_writer<A>{q}, outer, len, inner,
                                                               sp.chunks, sp.chunk_len);
    TEXPR_CUDA_CHECK_LAUNCH();
    reduce_columns<A><<<grid_for(tiles), block, 0, stream>>>(op, partial_columns<A>{q, sp.chunks, inner}, fin, outer, sp.chunks,
                                                             inner, 1, sp.chunks);
    TEXPR_CUDA_CHECK_LAUNCH();
  }
};

} // namespace texpr::detail::cuda_impl

namespace texpr::cuda_kernels {

template <class N, class T, std::size_t R>
void block_reduce::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  detail::run_reduction(n, dest, ctx, detail::cuda_impl::reduction_kernels{ctx.stream});
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
