// host_kernels::pairwise_reduce: reductions over everything, along one axis, or over several axes (sum_to). Each
// reduction accumulates blocks of 256 elements in 16 independent lanes (vectorisable, and each lane sums only
// 16 values) and combines the blocks pairwise (a binary counter), so the rounding error grows like
// (16 + log2(n / 256)) ulp rather than n. Inputs are cut at boundaries that depend only on their shape and the
// parts combined in a fixed order: the result does not depend on the thread count.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::host_impl {

inline constexpr index_t lanes = 16;   // independent accumulators: vectorisable and pairwise-like
inline constexpr index_t block = 256;  // elements per block before the cascade (error grows as block/lanes)
inline constexpr index_t reduce_chunk = block << 8;  // fixed reduction pieces: 256 blocks

// Element i (at index `base + i` of the reduced range) of get, lifted into the accumulator.
template <class A, class Op, class Get> A lifted(const Op& op, const Get& get, index_t base, index_t i) {
  return op.template lift<A>(widen(get(i)), base + i);
}

// Reduces get(begin .. begin+len) with `lanes` accumulators, then a tree over the lanes.
template <class A, class Op, class Get> A reduce_block(const Op& op, const Get& get, index_t base, index_t begin, index_t len) {
  A lane[lanes];
  for (auto& l : lane) l = op.template identity<A>();
  index_t i = 0;
  for (; i + lanes <= len; i += lanes)
    for (index_t k = 0; k < lanes; ++k) lane[k] = op.combine(lane[k], lifted<A>(op, get, base, begin + i + k));
  for (; i < len; ++i) lane[0] = op.combine(lane[0], lifted<A>(op, get, base, begin + i));
  for (index_t w = lanes / 2; w > 0; w /= 2)
    for (index_t k = 0; k < w; ++k) lane[k] = op.combine(lane[k], lane[k + w]);
  return lane[0];
}

// Pairwise combination of block results (a binary counter): error grows with log2(blocks).
template <class A, class Op> struct cascade {
  const Op& op;
  A stack[64];
  int top = 0;
  std::size_t count = 0;
  explicit cascade(const Op& o) : op(o) {}
  void push(A v) {
    for (std::size_t c = count++; c & 1u; c >>= 1) v = op.combine(stack[--top], v);
    stack[top++] = v;
  }
  A result() const {
    A r = op.template identity<A>();
    for (int i = top; i-- > 0;) r = op.combine(stack[i], r);
    return r;
  }
};

// The per-column twin of cascade: the same binary counter over rows of block results (one value per output
// column of an axis reduction), so each column is combined exactly as cascade combines scalars.
template <class A, class Op> struct column_cascade {
  const Op& op;
  index_t width;         // columns per row
  std::vector<A> stack;  // level l holds row l: columns [l * width, (l + 1) * width)
  index_t top = 0;
  std::size_t count = 0;
  // Room for `blocks` pushes: the counter never holds more than bit_width(blocks) rows.
  column_cascade(const Op& o, index_t width_, index_t blocks)
      : op(o), width(width_), stack(static_cast<std::size_t>(width_) * std::bit_width(static_cast<std::size_t>(blocks))) {}
  void clear() {
    top = 0;
    count = 0;
  }
  // Pushes the row v[0, w) (w <= width); v is overwritten.
  void push(A* v, index_t w) {
    for (std::size_t c = count++; c & 1u; c >>= 1) {
      const A* below = stack.data() + --top * width;
      for (index_t j = 0; j < w; ++j) v[j] = op.combine(below[j], v[j]);
    }
    A* slot = stack.data() + top++ * width;
    for (index_t j = 0; j < w; ++j) slot[j] = v[j];
  }
  // out[0, w) = the combined columns, newest row first (as cascade::result).
  void result(A* out, index_t w) const {
    for (index_t j = 0; j < w; ++j) out[j] = op.template identity<A>();
    for (index_t i = top; i-- > 0;) {
      const A* s = stack.data() + i * width;
      for (index_t j = 0; j < w; ++j) out[j] = op.combine(s[j], out[j]);
    }
  }
};

// G consecutive full blocks from `begin` at once, each reduced exactly as reduce_block does (same order of
// operations, so the same result), interleaved so that G accumulator chains and G lane trees overlap.
template <int G, class A, class Op, class Get> void reduce_blocks(const Op& op, const Get& get, index_t base, index_t begin, A* out) {
  A lane[G][lanes];
  for (auto& l : lane)
    for (auto& v : l) v = op.template identity<A>();
  for (index_t i = 0; i < block; i += lanes)
    for (int g = 0; g < G; ++g)
      for (index_t k = 0; k < lanes; ++k)
        lane[g][k] = op.combine(lane[g][k], lifted<A>(op, get, base, begin + g * block + i + k));
  for (index_t w = lanes / 2; w > 0; w /= 2)
    for (int g = 0; g < G; ++g)
      for (index_t k = 0; k < w; ++k) lane[g][k] = op.combine(lane[g][k], lane[g][k + w]);
  for (int g = 0; g < G; ++g) out[g] = lane[g][0];
}

// Pushes the block results of get(0 .. n) (indices base .. base + n of the reduced range) into c, in order.
template <class A, class Op, class Get> void push_blocks(cascade<A, Op>& c, const Get& get, index_t base, index_t n) {
  constexpr int G = 4;
  index_t b = 0;
  for (; b + G * block <= n; b += G * block) {
    A r[G];
    reduce_blocks<G, A>(c.op, get, base, b, r);
    for (const A& v : r) c.push(v);
  }
  for (; b < n; b += block) c.push(reduce_block<A>(c.op, get, base, b, n - b < block ? n - b : block));
}

template <class A, class Op, class Get> A reduce_range(const Op& op, const Get& get, index_t base, index_t n) {
  cascade<A, Op> c(op);
  push_blocks<A>(c, get, base, n);
  return c.result();
}

/// The accumulator over everything acc reads (shape in_shape), pairwise in blocks.
template <class A, class Op, std::size_t R, class Acc> A reduce_all(const Op& op, const Acc& acc, const shape_t<R>& in_shape) {
  const index_t n = shape_size(in_shape);
  if constexpr (R == 0) return op.template lift<A>(widen(acc.linear(0)), 0);
  if (n == 0) return op.template identity<A>();
  if (acc.dense()) {
    // Fixed pieces of reduce_chunk elements, combined pairwise in order (independent of the thread count).
    const index_t pieces = (n + reduce_chunk - 1) / reduce_chunk;
    if (pieces == 1) {
      const Acc a = acc;
      return reduce_range<A>(op, [&](index_t i) { return a.linear(i); }, 0, n);
    }
    std::vector<A> part(static_cast<std::size_t>(pieces));
    for_ranges(pieces, 1, [&](index_t p0, index_t p1) {
      const Acc a = acc;
      for (index_t p = p0; p < p1; ++p) {
        const index_t b = p * reduce_chunk, e = b + reduce_chunk < n ? b + reduce_chunk : n;
        part[static_cast<std::size_t>(p)] = reduce_range<A>(op, [&](index_t i) { return a.linear(b + i); }, b, e - b);
      }
    });
    cascade<A, Op> c(op);
    for (const A& v : part) c.push(v);
    return c.result();
  }
  if constexpr (R > 0) {
    // Rows, grouped into pieces that depend only on the shape; each row reduces pairwise in blocks.
    const index_t len = in_shape[R - 1], rows = n / len;
    const index_t rows_per_piece = len >= reduce_chunk ? 1 : reduce_chunk / len;
    const index_t pieces = (rows + rows_per_piece - 1) / rows_per_piece;
    std::vector<A> part(static_cast<std::size_t>(pieces));
    for_ranges(pieces, 1, [&](index_t p0, index_t p1) {
      line_reader<Acc> lines(acc);
      for (index_t p = p0; p < p1; ++p) {
        const index_t r0 = p * rows_per_piece, r1 = r0 + rows_per_piece < rows ? r0 + rows_per_piece : rows;
        index_t idx[R] = {};
        row_index(r0, in_shape, idx);
        cascade<A, Op> rows_c(op);
        for (index_t r = r0; r < r1; ++r, next_row(idx, in_shape)) {
          cascade<A, Op> c(op);
          lines.template for_chunks<R>(idx, len, [&](const auto& ch, index_t j0, index_t m) {
            push_blocks<A>(c, [&](index_t j) { return ch[j]; }, r * len + j0, m);
          });
          rows_c.push(c.result());
        }
        part[static_cast<std::size_t>(p)] = rows_c.result();
      }
    });
    cascade<A, Op> c(op);
    for (const A& v : part) c.push(v);
    return c.result();
  }
  return op.template identity<A>();
}

/// out[...] = the reduction of acc (shape in_shape) along `axis`; out is contiguous, the axis removed.
template <class A, class T, class Op, std::size_t R, class Acc>
void reduce_axis(const Op& op, const Acc& acc, const shape_t<R>& in_shape, std::size_t axis, T* out) {
  index_t n_out = 1;
  for (std::size_t d = 0; d != R; ++d)
    if (d != axis) n_out *= in_shape[d];
  if (n_out == 0) return;
  const index_t len = in_shape[axis];
  if (axis == R - 1) {
    // Each output element reduces one row, pairwise in blocks; rows are independent, so threads split them.
    for_ranges(n_out, (elementwise_grain + len) / (len + 1), [&](index_t r0, index_t r1) {
      if (acc.dense()) {
        const Acc a = acc;
        for (index_t r = r0; r < r1; ++r) {
          const index_t base = r * len;
          const A v = reduce_range<A>(op, [&](index_t j) { return a.linear(base + j); }, 0, len);
          out[r] = op.template finalize<T>(v, len);
        }
        return;
      }
      line_reader<Acc> lines(acc);
      index_t idx[R] = {};
      row_index(r0, in_shape, idx);
      for (index_t r = r0; r < r1; ++r, next_row(idx, in_shape)) {
        cascade<A, Op> c(op);
        lines.template for_chunks<R>(idx, len, [&](const auto& ch, index_t j0, index_t m) {
          push_blocks<A>(c, [&](index_t j) { return ch[j]; }, j0, m);
        });
        out[r] = op.template finalize<T>(c.result(), len);
      }
    });
    return;
  }
  if constexpr (R >= 2) {
    // A non-last axis: stream whole rows and accumulate them into a row of accumulators, in blocks of 16 rows
    // whose per-column results go through a per-column pairwise cascade, so every output element sees the same
    // summation depth as a reduction over everything (16 sequential, then log2). Threads split the (outer, mid,
    // column-chunk) tiles; each output element is computed the same way whatever the split.
    index_t outer = 1, mid = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= in_shape[d];
    for (std::size_t d = axis + 1; d + 1 < R; ++d) mid *= in_shape[d];
    const index_t inner = in_shape[R - 1];
    constexpr index_t rows_per_block = 16;
    const index_t col_chunks = (inner + chunk_elements - 1) / chunk_elements;
    const index_t tiles = outer * mid * col_chunks;
    const index_t tile_work = len * (inner < chunk_elements ? inner : chunk_elements);
    for_ranges(tiles, (elementwise_grain + tile_work) / (tile_work + 1), [&](index_t t0, index_t t1) {
      line_reader<Acc> lines(acc);
      const bool dense = acc.dense();
      auto part = std::make_unique<A[]>(static_cast<std::size_t>(chunk_elements));
      column_cascade<A, Op> columns(op, chunk_elements, (len + rows_per_block - 1) / rows_per_block);
      for (index_t t = t0; t < t1; ++t) {
        const index_t cc = t % col_chunks, om = t / col_chunks;
        const index_t o = om / mid, m = om % mid;
        const index_t j0 = cc * chunk_elements, w = inner - j0 < chunk_elements ? inner - j0 : chunk_elements;
        columns.clear();
        for (index_t l0 = 0; l0 < len; l0 += rows_per_block) {
          for (index_t j = 0; j < w; ++j) part[j] = op.template identity<A>();
          const index_t l1 = l0 + rows_per_block < len ? l0 + rows_per_block : len;
          for (index_t l = l0; l < l1; ++l) {
            if (dense) {
              const Acc& a = lines.acc;
              const index_t base = ((o * len + l) * mid + m) * inner + j0;
              for (index_t j = 0; j < w; ++j) part[j] = op.combine(part[j], op.template lift<A>(widen(a.linear(base + j)), l));
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
              lines.acc.seek(idx, R - 1);
              lines.reader->bind(lines.acc, inner);
              lines.reader->start(j0, w);
              const auto ch = *lines.reader;
              for (index_t j = 0; j < w; ++j) part[j] = op.combine(part[j], op.template lift<A>(widen(ch[j]), l));
            }
          }
          columns.push(part.get(), w);
        }
        columns.result(part.get(), w);
        T* o_row = out + (o * mid + m) * inner + j0;
        for (index_t j = 0; j < w; ++j) o_row[j] = op.template finalize<T>(part[j], len);
      }
    });
  }
}

} // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R>
void pairwise_reduce::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  using namespace detail::host_impl;
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
      throw shape_error("texpr: " + std::string(Op::name) + " over an axis of length 0 (input shape " +
                        to_string(in_shape) + ") has no identity");
  }
  const int count = n.reduced_count();
  if (count == 0) {
    // Nothing to reduce (sum_to of a gradient that was not broadcast): the operand is the result.
    if constexpr (R == RC && std::is_same_v<T, KT>) {
      detail::evaluate_into(dest, n.child(), ctx);
      return;
    }
  }
  // sum_to (a gradient summed over broadcast axes) reads its operand from memory, so every sum_to of a dtype and
  // rank shares one reduction instantiation; the other reductions read their operand fused.
  const auto operand = [&] {
    if constexpr (std::is_same_v<Op, op::sum_to>) return detail::materialize(n.child(), ctx);
    else return n.child();
  };
  if (R == 0 || n.reduces_all()) {
    const auto acc = detail::read(operand(), in_shape, ctx);
    const A total = reduce_all<A>(op, acc, in_shape);
    dest.data()[0] = op.template finalize<T>(total, shape_size(in_shape));
    return;
  }
  // A rank-0 result reduces everything: the axis paths are not instantiated for it (a loss's mean).
  if constexpr (RC >= 1 && R > 0) {
    if (count == 1) {
      std::size_t axis = 0;
      while (!n.reduces(axis)) ++axis;
      const auto acc = detail::read(operand(), in_shape, ctx);
      reduce_axis<A, T>(op, acc, in_shape, axis, dest.data());
      return;
    }
    // Several axes (sum_to): one axis at a time, keeping each reduced axis with extent 1, the last into dest.
    // (argmax and argmin are not decomposable; their API reduces one axis or all, never this path)
    if constexpr (Op::decomposable && std::is_same_v<T, KT>) {
      const auto first = detail::materialize(n.child(), ctx);
      const T* data = first.data();  // (views assign elements, so the current input is kept as pointer + layout)
      shape_t<RC> shape = in_shape, strides = first.strides();
      int left = count;
      for (std::size_t axis = 0; axis < RC; ++axis) {
        if (!n.reduces(axis)) continue;
        const auto acc = make_strided_accessor(detail::memory_source<T>{data}, shape, strides, shape);
        shape_t<RC> next = shape;
        next[axis] = 1;
        T* target = --left == 0 ? dest.data() : detail::temporary<T, RC, host>(next, ctx).data();
        reduce_axis<A, T>(op, acc, shape, axis, target);
        if (left == 0) return;
        data = target;
        shape = next;
        strides = contiguous_strides(next);
      }
    }
  }
}

} // namespace texpr::host_kernels
