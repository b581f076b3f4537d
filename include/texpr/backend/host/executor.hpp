// Host execution: fused elementwise loops, pairwise reductions, axis reductions and GEMM.
// Contiguous inputs take linear-index loops the compiler vectorises; broadcast or strided inputs go
// row by row, so index arithmetic happens once per row, not per element, and each row is cut into chunks
// in which every leaf reads with unit stride (a pointer into the row, or a small per-leaf buffer for
// broadcast and strided leaves), so those loops vectorise too.
// Large loops are split over the thread pool of parallel.hpp. Reductions cut their input at boundaries
// that depend only on its shape and combine the parts in a fixed order: the result does not depend on the
// thread count.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "texpr/backend/host/gemm.hpp"
#include "texpr/backend/host/parallel.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/reduction.hpp"

namespace texpr::detail {

template <class B> struct executor;

namespace host_impl {

inline constexpr index_t lanes = 16;   // independent accumulators: vectorisable and pairwise-like
inline constexpr index_t block = 256;  // elements per block before the cascade (error grows as block/lanes)

// Reduces get(begin .. begin+len) with `lanes` accumulators, then a tree over the lanes.
template <class Op, class A, class Get> A reduce_block(const Get& get, index_t begin, index_t len) {
  A lane[lanes];
  for (auto& l : lane) l = Op::template identity<A>();
  index_t i = 0;
  for (; i + lanes <= len; i += lanes)
    for (index_t k = 0; k < lanes; ++k) lane[k] = Op::combine(lane[k], static_cast<A>(widen(get(begin + i + k))));
  for (; i < len; ++i) lane[0] = Op::combine(lane[0], static_cast<A>(widen(get(begin + i))));
  for (index_t w = lanes / 2; w > 0; w /= 2)
    for (index_t k = 0; k < w; ++k) lane[k] = Op::combine(lane[k], lane[k + w]);
  return lane[0];
}

// Pairwise combination of block results (a binary counter): error grows with log2(blocks).
template <class Op, class A> struct cascade {
  A stack[64];
  int top = 0;
  std::size_t count = 0;
  void push(A v) {
    for (std::size_t c = count++; c & 1u; c >>= 1) v = Op::combine(stack[--top], v);
    stack[top++] = v;
  }
  A result() const {
    A r = Op::template identity<A>();
    for (int i = top; i-- > 0;) r = Op::combine(stack[i], r);
    return r;
  }
};

// The per-column twin of cascade: the same binary counter over rows of block results (one value per output
// column of an axis reduction), so each column is combined exactly as cascade combines scalars.
template <class Op, class A> struct column_cascade {
  index_t width;         // columns per row
  std::vector<A> stack;  // level l holds row l: columns [l * width, (l + 1) * width)
  index_t top = 0;
  std::size_t count = 0;
  // Room for `blocks` pushes: the counter never holds more than bit_width(blocks) rows.
  column_cascade(index_t width_, index_t blocks)
      : width(width_), stack(static_cast<std::size_t>(width_) * std::bit_width(static_cast<std::size_t>(blocks))) {}
  void clear() {
    top = 0;
    count = 0;
  }
  // Pushes the row v[0, w) (w <= width); v is overwritten.
  void push(A* v, index_t w) {
    for (std::size_t c = count++; c & 1u; c >>= 1) {
      const A* below = stack.data() + --top * width;
      for (index_t j = 0; j < w; ++j) v[j] = Op::combine(below[j], v[j]);
    }
    A* slot = stack.data() + top++ * width;
    for (index_t j = 0; j < w; ++j) slot[j] = v[j];
  }
  // out[0, w) = the combined columns, newest row first (as cascade::result).
  void result(A* out, index_t w) const {
    for (index_t j = 0; j < w; ++j) out[j] = Op::template identity<A>();
    for (index_t i = top; i-- > 0;) {
      const A* s = stack.data() + i * width;
      for (index_t j = 0; j < w; ++j) out[j] = Op::combine(s[j], out[j]);
    }
  }
};

// G consecutive full blocks from `begin` at once, each reduced exactly as reduce_block does (same order of
// operations, so the same result), interleaved so that G accumulator chains and G lane trees overlap.
template <int G, class Op, class A, class Get> void reduce_blocks(const Get& get, index_t begin, A* out) {
  A lane[G][lanes];
  for (auto& l : lane)
    for (auto& v : l) v = Op::template identity<A>();
  for (index_t i = 0; i < block; i += lanes)
    for (int g = 0; g < G; ++g)
      for (index_t k = 0; k < lanes; ++k)
        lane[g][k] = Op::combine(lane[g][k], static_cast<A>(widen(get(begin + g * block + i + k))));
  for (index_t w = lanes / 2; w > 0; w /= 2)
    for (int g = 0; g < G; ++g)
      for (index_t k = 0; k < w; ++k) lane[g][k] = Op::combine(lane[g][k], lane[g][k + w]);
  for (int g = 0; g < G; ++g) out[g] = lane[g][0];
}

// Pushes the block results of get(0 .. n) into c, in order.
template <class Op, class A, class Get> void push_blocks(cascade<Op, A>& c, const Get& get, index_t n) {
  constexpr int G = 4;
  index_t b = 0;
  for (; b + G * block <= n; b += G * block) {
    A r[G];
    reduce_blocks<G, Op, A>(get, b, r);
    for (const A& v : r) c.push(v);
  }
  for (; b < n; b += block) c.push(reduce_block<Op, A>(get, b, n - b < block ? n - b : block));
}

template <class Op, class A, class Get> A reduce_range(const Get& get, index_t n) {
  cascade<Op, A> c;
  push_blocks<Op, A>(c, get, n);
  return c.result();
}

// Advances a row-major multi-index over the first R-1 dimensions of shape.
template <std::size_t R> void next_row(index_t* idx, const shape_t<R>& shape) {
  for (std::size_t d = R - 1; d-- > 0;) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}


// ---- Row chunks: unit-stride views of one row of an accessor tree ----------------------------------------

inline constexpr index_t chunk = 1024;  // elements per row chunk (a multiple of block)

// Buffers for the leaves of one row_chunk tree (owned by the task that uses the tree).
struct chunk_arena {
  std::vector<std::unique_ptr<unsigned char[]>> blocks;
  template <class T> T* get() {
    blocks.emplace_back(new unsigned char[sizeof(T) * chunk + 64]);
    auto addr = reinterpret_cast<std::uintptr_t>(blocks.back().get());
    return reinterpret_cast<T*>((addr + 63) & ~std::uintptr_t(63));
  }
};

// A row_chunk tree is small (pointers and accessor copies), so the loops run on a local copy of it: its
// members then cannot alias the output, and the compiler keeps them in registers.

// Generic node: reads through a copy of the accessor's own in_row (scalars, and node types unknown here).
template <class Acc> struct row_chunk {
  Acc src{};
  index_t j0 = 0;
  void init(chunk_arena&) {}
  void bind(const Acc& a, index_t) { src = a; }
  void start(index_t first, index_t) { j0 = first; }
  auto linear(index_t i) const { return src.in_row(j0 + i); }
};

// Leaf: a pointer into the row when its stride is 1, else a buffer (filled once per row for a broadcast
// leaf, gathered per chunk for a strided one).
template <class T, std::size_t RO> struct row_chunk<leaf_accessor<T, RO>> {
  const T* row = nullptr;
  index_t stride = 1;
  const T* p = nullptr;
  T* buf = nullptr;
  void init(chunk_arena& arena) { buf = arena.get<T>(); }
  void bind(const leaf_accessor<T, RO>& a, index_t len) {
    row = a.row;
    stride = a.row_stride;
    if (stride == 0) {
      const T v = row[0];
      for (index_t i = 0, e = len < chunk ? len : chunk; i < e; ++i) buf[i] = v;
      p = buf;
    }
  }
  void start(index_t first, index_t len) {
    if (stride == 1) {
      p = row + first;
    } else if (stride != 0) {
      for (index_t i = 0; i < len; ++i) buf[i] = row[(first + i) * stride];
      p = buf;
    }
  }
  T linear(index_t i) const { return p[i]; }
};

template <std::size_t I, class M> const auto& map_child(const M& m) {
  if constexpr (I == 0) return m.a0;
  else if constexpr (I == 1) return m.a1;
  else return m.a2;
}

// Map node: its children's chunks, combined by the op.
template <class Op, class R, class... A> struct row_chunk<map_accessor<Op, R, A...>> {
  std::tuple<row_chunk<A>...> ch;
  void init(chunk_arena& arena) {
    std::apply([&](auto&... c) { (c.init(arena), ...); }, ch);
  }
  void bind(const map_accessor<Op, R, A...>& a, index_t len) {
    bind_all(a, len, std::index_sequence_for<A...>{});
  }
  void start(index_t first, index_t len) {
    std::apply([&](auto&... c) { (c.start(first, len), ...); }, ch);
  }
  R linear(index_t i) const {
    return std::apply([&](const auto&... c) { return apply_op<Op, R>(c.linear(i)...); }, ch);
  }

 private:
  template <std::size_t... I> void bind_all(const map_accessor<Op, R, A...>& a, index_t len, std::index_sequence<I...>) {
    (std::get<I>(ch).bind(map_child<I>(a), len), ...);
  }
};

// Calls f(chunk_view, j0, n) over row `idx` of acc (len elements) in unit-stride chunks.
template <std::size_t R, class Acc, class F>
void for_row_chunks(Acc& acc, row_chunk<Acc>& rc, const index_t* idx, index_t len, F&& f) {
  acc.seek_row(idx);
  rc.bind(acc, len);
  for (index_t j0 = 0; j0 < len; j0 += chunk) {
    const index_t n = len - j0 < chunk ? len - j0 : chunk;
    rc.start(j0, n);
    const row_chunk<Acc> local = rc;
    f(local, j0, n);
  }
}

// Multi-index of row r (the first R-1 dimensions of shape).
template <std::size_t R> void row_index(index_t r, const shape_t<R>& shape, index_t* idx) {
  for (std::size_t d = R - 1; d-- > 0;) {
    idx[d] = r % shape[d];
    r /= shape[d];
  }
}

// Runs f(begin, end) over [0, n) cut into pieces of at least `grain` units, on the pool when worth it. One call
// path for serial and threaded runs, so f's body is compiled once.
template <class F> void for_ranges(index_t n, index_t grain, F&& f) {
  if (n <= 0) return;
  const index_t tasks = task_count(n, grain);
  // a few pieces per thread for load balance
  const index_t pieces = tasks <= 1 ? 1 : (tasks * 4 < n / grain ? tasks * 4 : n / grain);
  parallel_for(pieces, [&](index_t t) { f(n * t / pieces, n * (t + 1) / pieces); });
}

inline constexpr index_t elementwise_grain = 1 << 15;
inline constexpr index_t reduce_chunk = block << 8;  // fixed reduction pieces: 256 blocks

} // namespace host_impl

/// The host backend's executor: what evaluation calls once placement has been checked.
template <> struct executor<host> {
  /// dest = acc, elementwise; dest may be strided.
  template <class T, std::size_t R, class Acc>
  static void assign(const view<T, R, host>& dest, Acc acc, context<host>&) {
    using namespace host_impl;
    const index_t n = dest.size();
    if (n == 0) return;
    T* d = dest.data();
    if constexpr (R == 0) {
      d[0] = acc.linear(0);
    } else {
      if (acc.dense() && dest.is_contiguous()) {
        for_ranges(n, elementwise_grain, [&](index_t b, index_t e) {
          for (index_t i = b; i < e; ++i) d[i] = acc.linear(i);
        });
        return;
      }
      const auto& shape = dest.shape();
      const auto& ds = dest.strides();
      const index_t len = shape[R - 1], step = ds[R - 1];
      const index_t rows = n / len;
      for_ranges(rows, (elementwise_grain + len - 1) / len, [&](index_t r0, index_t r1) {
        Acc a = acc;
        chunk_arena arena;
        auto rc = std::make_unique<row_chunk<Acc>>();
        rc->init(arena);
        index_t idx[R] = {};
        row_index(r0, shape, idx);
        for (index_t r = r0; r < r1; ++r, next_row(idx, shape)) {
          index_t off = 0;
          for (std::size_t k = 0; k + 1 < R; ++k) off += idx[k] * ds[k];
          T* row = d + off;
          for_row_chunks<R>(a, *rc, idx, len, [&](const row_chunk<Acc>& c, index_t j0, index_t m) {
            if (step == 1) {
              T* out = row + j0;
              for (index_t j = 0; j < m; ++j) out[j] = c.linear(j);
            } else {
              T* out = row + j0 * step;
              for (index_t j = 0; j < m; ++j) out[j * step] = c.linear(j);
            }
          });
        }
      });
    }
  }

  /// *out = Op over every element of acc (shape in_shape), pairwise in blocks.
  template <class Op, std::size_t R, class Acc, class T>
  static void reduce_all(Acc acc, const shape_t<R>& in_shape, T* out, context<host>&) {
    using namespace host_impl;
    using A = op::accumulator_t<T>;
    const index_t n = shape_size(in_shape);
    A total = Op::template identity<A>();
    if constexpr (R == 0) {
      total = static_cast<A>(widen(acc.linear(0)));
    } else if (n > 0) {
      if (acc.dense()) {
        // Fixed pieces of reduce_chunk elements, combined pairwise in order (independent of the thread count).
        const index_t pieces = (n + reduce_chunk - 1) / reduce_chunk;
        if (pieces == 1) {
          total = reduce_range<Op, A>([&](index_t i) { return acc.linear(i); }, n);
        } else {
          std::vector<A> part(static_cast<std::size_t>(pieces));
          for_ranges(pieces, 1, [&](index_t p0, index_t p1) {
            for (index_t p = p0; p < p1; ++p) {
              const index_t b = p * reduce_chunk, e = b + reduce_chunk < n ? b + reduce_chunk : n;
              part[static_cast<std::size_t>(p)] =
                  reduce_range<Op, A>([&](index_t i) { return acc.linear(b + i); }, e - b);
            }
          });
          cascade<Op, A> c;
          for (const A& v : part) c.push(v);
          total = c.result();
        }
      } else {
        // Rows, grouped into pieces that depend only on the shape; each row reduces pairwise in blocks.
        const index_t len = in_shape[R - 1], rows = n / len;
        const index_t rows_per_piece = len >= reduce_chunk ? 1 : reduce_chunk / len;
        const index_t pieces = (rows + rows_per_piece - 1) / rows_per_piece;
        std::vector<A> part(static_cast<std::size_t>(pieces));
        for_ranges(pieces, 1, [&](index_t p0, index_t p1) {
          Acc a = acc;
          chunk_arena arena;
        auto rc = std::make_unique<row_chunk<Acc>>();
        rc->init(arena);
          for (index_t p = p0; p < p1; ++p) {
            const index_t r0 = p * rows_per_piece, r1 = r0 + rows_per_piece < rows ? r0 + rows_per_piece : rows;
            index_t idx[R] = {};
            row_index(r0, in_shape, idx);
            cascade<Op, A> rows_c;
            for (index_t r = r0; r < r1; ++r, next_row(idx, in_shape)) {
              cascade<Op, A> c;
              for_row_chunks<R>(a, *rc, idx, len, [&](const row_chunk<Acc>& ch, index_t, index_t m) {
                push_blocks<Op, A>(c, [&](index_t j) { return ch.linear(j); }, m);
              });
              rows_c.push(c.result());
            }
            part[static_cast<std::size_t>(p)] = rows_c.result();
          }
        });
        cascade<Op, A> c;
        for (const A& v : part) c.push(v);
        total = c.result();
      }
    }
    *out = narrow<T>(Op::finalize(total, n));
  }

  /// dest = Op of acc (shape in_shape) along axis; dest is contiguous with the axis removed.
  template <class Op, std::size_t R, class Acc, class T>
  static void reduce_axis(Acc acc, const shape_t<R>& in_shape, std::size_t axis, const view<T, R - 1, host>& dest,
                          context<host>&) {
    using namespace host_impl;
    using A = op::accumulator_t<T>;
    T* out = dest.data();
    const index_t n_out = dest.size();
    if (n_out == 0) return;
    const index_t len = in_shape[axis];
    if (axis == R - 1) {
      // Each output element reduces one row, pairwise in blocks; rows are independent, so threads split them.
      for_ranges(n_out, (elementwise_grain + len) / (len + 1), [&](index_t r0, index_t r1) {
        if (acc.dense()) {
          for (index_t r = r0; r < r1; ++r) {
            const index_t base = r * len;
            const A v = reduce_range<Op, A>([&](index_t j) { return acc.linear(base + j); }, len);
            out[r] = narrow<T>(Op::finalize(v, len));
          }
          return;
        }
        Acc a = acc;
        chunk_arena arena;
        auto rc = std::make_unique<row_chunk<Acc>>();
        rc->init(arena);
        index_t idx[R] = {};
        row_index(r0, in_shape, idx);
        for (index_t r = r0; r < r1; ++r, next_row(idx, in_shape)) {
          cascade<Op, A> c;
          for_row_chunks<R>(a, *rc, idx, len, [&](const row_chunk<Acc>& ch, index_t, index_t m) {
            push_blocks<Op, A>(c, [&](index_t j) { return ch.linear(j); }, m);
          });
          out[r] = narrow<T>(Op::finalize(c.result(), len));
        }
      });
      return;
    }
    if constexpr (R >= 2) {  // (rank 1 has only its last axis)
      // Reducing a non-last axis: stream whole rows and accumulate them into a row of accumulators, in
      // blocks of 16 rows whose per-column results go through a per-column pairwise cascade, so every output
      // element sees the same summation depth as a reduction over everything (16 sequential, then log2).
      // Threads split the (outer, mid, column-chunk) tiles; each output element is computed the same way
      // whatever the split.
      index_t outer = 1, mid = 1;
      for (std::size_t d = 0; d < axis; ++d) outer *= in_shape[d];
      for (std::size_t d = axis + 1; d + 1 < R; ++d) mid *= in_shape[d];
      const index_t inner = in_shape[R - 1];
      constexpr index_t rows_per_block = 16;
      const index_t col_chunks = (inner + chunk - 1) / chunk;
      const index_t tiles = outer * mid * col_chunks;
      const index_t tile_work = len * (inner < chunk ? inner : chunk);
      for_ranges(tiles, (elementwise_grain + tile_work) / (tile_work + 1), [&](index_t t0, index_t t1) {
        Acc a = acc;
        std::unique_ptr<row_chunk<Acc>> rc;
        chunk_arena arena;
        if (!acc.dense()) {
          rc = std::make_unique<row_chunk<Acc>>();
          rc->init(arena);
        }
        alignas(64) A part[chunk];
        column_cascade<Op, A> columns(chunk, (len + rows_per_block - 1) / rows_per_block);
        for (index_t t = t0; t < t1; ++t) {
          const index_t cc = t % col_chunks, om = t / col_chunks;
          const index_t o = om / mid, m = om % mid;
          const index_t j0 = cc * chunk, w = inner - j0 < chunk ? inner - j0 : chunk;
          columns.clear();
          for (index_t l0 = 0; l0 < len; l0 += rows_per_block) {
            for (index_t j = 0; j < w; ++j) part[j] = Op::template identity<A>();
            const index_t l1 = l0 + rows_per_block < len ? l0 + rows_per_block : len;
            for (index_t l = l0; l < l1; ++l) {
              if (acc.dense()) {
                const index_t base = ((o * len + l) * mid + m) * inner + j0;
                for (index_t j = 0; j < w; ++j) part[j] = Op::combine(part[j], static_cast<A>(widen(a.linear(base + j))));
              } else {
                index_t idx[R] = {};
                index_t rem = o;
                for (std::size_t d = axis; d-- > 0;) {
                  idx[d] = rem % in_shape[d];
                  rem /= in_shape[d];
                }
                idx[axis] = l;
                rem = m;
                for (std::size_t d = R - 1; d-- > axis + 1;) {
                  idx[d] = rem % in_shape[d];
                  rem /= in_shape[d];
                }
                a.seek_row(idx);
                rc->bind(a, inner);
                rc->start(j0, w);
                const row_chunk<Acc> ch = *rc;
                for (index_t j = 0; j < w; ++j) part[j] = Op::combine(part[j], static_cast<A>(widen(ch.linear(j))));
              }
            }
            columns.push(part, w);
          }
          columns.result(part, w);
          T* o_row = out + (o * mid + m) * inner + j0;
          for (index_t j = 0; j < w; ++j) o_row[j] = narrow<T>(Op::finalize(part[j], len));
        }
      });
    }
  }

  /// C[b] = A[b] x B[b] for b < batch, row-major and contiguous; a step of 0 shares a matrix across batches.
  template <class T>
  static void gemm(index_t batch, index_t m, index_t n, index_t k, const T* a, index_t a_step, const T* b,
                   index_t b_step, T* c, index_t c_step, context<host>&) {
    for (index_t i = 0; i < batch; ++i) host_impl::gemm(m, n, k, a + i * a_step, b + i * b_step, c + i * c_step);
  }
};

} // namespace texpr::detail
