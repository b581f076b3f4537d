// Host execution: fused elementwise loops, pairwise reductions, axis reductions and GEMM.
// Contiguous inputs take linear-index loops the compiler vectorises; broadcast or strided inputs go
// row by row, so index arithmetic happens once per row, not per element.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

#include "texpr/backend/host/gemm.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/detail/math.hpp"
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

template <class Op, class A, class Get> A reduce_range(const Get& get, index_t n) {
  cascade<Op, A> c;
  for (index_t b = 0; b < n; b += block) c.push(reduce_block<Op, A>(get, b, n - b < block ? n - b : block));
  return c.result();
}

// Advances a row-major multi-index over the first R-1 dimensions of shape.
template <std::size_t R> void next_row(index_t* idx, const shape_t<R>& shape) {
  for (std::size_t d = R - 1; d-- > 0;) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

} // namespace host_impl

/// The host backend's executor: what evaluation calls once placement has been checked.
template <> struct executor<host> {
  /// dest = acc, elementwise; dest may be strided.
  template <class T, std::size_t R, class Acc>
  static void assign(const view<T, R, host>& dest, Acc acc, context<host>&) {
    const index_t n = dest.size();
    if (n == 0) return;
    T* d = dest.data();
    if constexpr (R == 0) {
      d[0] = acc.linear(0);
    } else {
      if (acc.dense() && dest.is_contiguous()) {
        for (index_t i = 0; i < n; ++i) d[i] = acc.linear(i);
        return;
      }
      const auto& shape = dest.shape();
      const auto& ds = dest.strides();
      const index_t len = shape[R - 1], step = ds[R - 1];
      index_t idx[R] = {};
      for (index_t r = 0, rows = n / len; r < rows; ++r, host_impl::next_row(idx, shape)) {
        acc.seek_row(idx);
        index_t off = 0;
        for (std::size_t k = 0; k + 1 < R; ++k) off += idx[k] * ds[k];
        T* row = d + off;
        if (step == 1)
          for (index_t j = 0; j < len; ++j) row[j] = acc.in_row(j);
        else
          for (index_t j = 0; j < len; ++j) row[j * step] = acc.in_row(j);
      }
    }
  }

  /// *out = Op over every element of acc (shape in_shape), pairwise in blocks.
  template <class Op, std::size_t R, class Acc, class T>
  static void reduce_all(Acc acc, const shape_t<R>& in_shape, T* out, context<host>&) {
    using A = op::accumulator_t<T>;
    const index_t n = shape_size(in_shape);
    A total = Op::template identity<A>();
    if constexpr (R == 0) {
      total = static_cast<A>(widen(acc.linear(0)));
    } else if (n > 0) {
      if (acc.dense()) {
        total = host_impl::reduce_range<Op, A>([&](index_t i) { return acc.linear(i); }, n);
      } else {
        const index_t len = in_shape[R - 1];
        host_impl::cascade<Op, A> c;
        index_t idx[R] = {};
        for (index_t r = 0, rows = n / len; r < rows; ++r, host_impl::next_row(idx, in_shape)) {
          acc.seek_row(idx);
          c.push(host_impl::reduce_range<Op, A>([&](index_t j) { return acc.in_row(j); }, len));
        }
        total = c.result();
      }
    }
    *out = narrow<T>(Op::finalize(total, n));
  }

  /// dest = Op of acc (shape in_shape) along axis; dest is contiguous with the axis removed.
  template <class Op, std::size_t R, class Acc, class T>
  static void reduce_axis(Acc acc, const shape_t<R>& in_shape, std::size_t axis, const view<T, R - 1, host>& dest,
                          context<host>&) {
    using A = op::accumulator_t<T>;
    T* out = dest.data();
    const index_t n_out = dest.size();
    if (n_out == 0) return;
    const index_t len = in_shape[axis];
    if (axis == R - 1) {
      // Each output element reduces one contiguous row.
      for (index_t r = 0; r < n_out; ++r) {
        A v;
        if (acc.dense()) {
          const index_t base = r * len;
          v = host_impl::reduce_range<Op, A>([&](index_t j) { return acc.linear(base + j); }, len);
        } else {
          index_t idx[R] = {};
          for (std::size_t d = R - 1, rem = static_cast<std::size_t>(r); d-- > 0;) {
            idx[d] = static_cast<index_t>(rem % static_cast<std::size_t>(in_shape[d]));
            rem /= static_cast<std::size_t>(in_shape[d]);
          }
          acc.seek_row(idx);
          v = host_impl::reduce_range<Op, A>([&](index_t j) { return acc.in_row(j); }, len);
        }
        out[r] = narrow<T>(Op::finalize(v, len));
      }
      return;
    }
    // Reducing a non-last axis: stream whole rows and accumulate them into a row of accumulators,
    // in blocks of rows so the error grows with the block length, not the axis length.
    index_t outer = 1, mid = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= in_shape[d];
    for (std::size_t d = axis + 1; d + 1 < R; ++d) mid *= in_shape[d];
    const index_t inner = in_shape[R - 1];
    std::vector<A> total(static_cast<std::size_t>(inner)), part(static_cast<std::size_t>(inner));
    constexpr index_t rows_per_block = 64;
    for (index_t o = 0; o < outer; ++o) {
      for (index_t m = 0; m < mid; ++m) {
        for (auto& t : total) t = Op::template identity<A>();
        for (index_t l0 = 0; l0 < len; l0 += rows_per_block) {
          for (auto& p : part) p = Op::template identity<A>();
          const index_t l1 = l0 + rows_per_block < len ? l0 + rows_per_block : len;
          for (index_t l = l0; l < l1; ++l) {
            A* pp = part.data();
            if (acc.dense()) {
              const index_t base = ((o * len + l) * mid + m) * inner;
              for (index_t j = 0; j < inner; ++j) pp[j] = Op::combine(pp[j], static_cast<A>(widen(acc.linear(base + j))));
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
              acc.seek_row(idx);
              for (index_t j = 0; j < inner; ++j) pp[j] = Op::combine(pp[j], static_cast<A>(widen(acc.in_row(j))));
            }
          }
          for (index_t j = 0; j < inner; ++j) total[static_cast<std::size_t>(j)] = Op::combine(total[static_cast<std::size_t>(j)], part[static_cast<std::size_t>(j)]);
        }
        T* o_row = out + (o * mid + m) * inner;
        for (index_t j = 0; j < inner; ++j) o_row[j] = narrow<T>(Op::finalize(total[static_cast<std::size_t>(j)], len));
      }
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
