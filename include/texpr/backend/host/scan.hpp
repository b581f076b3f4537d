// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host's scans (host_kernels::line_scan): the operand read fused, row by row (lines along its last axis) in
// unit-stride chunks. Along the last axis each row is one running value; along another axis each (outer, inner)
// column keeps a row of running values, updated row after row (a loop over the row the compiler vectorises).
// Independent lines go to the pool; a line too long for its share of the threads is cut into blocks whose totals
// are folded first (one fused read more), then each block scans from its carry in parallel.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/parallel.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/scan.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::host_impl {

/// A scan's operand as [outer][len][mid][row]: `len` the scanned axis, `row` the last axis (1 when the scanned
/// axis is the last), `mid` the axes between them.
struct scan_shape {
  index_t outer = 1, len = 1, mid = 1, row = 1;
};
template <std::size_t R> scan_shape scan_shape_of(const shape_t<R>& s, std::size_t axis) {
  scan_shape p;
  p.len = s[axis];
  for (std::size_t d = 0; d < axis; ++d) p.outer *= s[d];
  if (axis + 1 < R) {
    for (std::size_t d = axis + 1; d + 1 < R; ++d) p.mid *= s[d];
    p.row = s[R - 1];
  }
  return p;
}

/// Elements per task below which threading a scan does not pay.
inline constexpr index_t scan_grain = 1 << 15;
/// Elements per block of a long line cut into blocks.
inline constexpr index_t scan_block = 1 << 14;

/// Scans of one operand by Op into accumulators A, writing T: the driver below calls these per task.
template <class Op, class A, class T, class Acc, std::size_t R> struct scan_engine {
  const Op& op;
  const Acc& acc;
  const shape_t<R>& shape;
  bool reverse;
  T* out;

  /// Calls f(chunk, j0, n) for the chunks of elements [b, e) of operand row r, ascending or (descending) from the
  /// end.
  template <class F> void row_chunks(line_reader<Acc>& lines, index_t r, index_t b, index_t e, bool descending, F&& f) const {
    index_t idx[R] = {};
    row_index(r, shape, idx);
    lines.acc.seek(idx, R - 1);
    lines.reader->bind(lines.acc, shape[R - 1]);
    const index_t chunks = (e - b + chunk_elements - 1) / chunk_elements;
    for (index_t c = 0; c < chunks; ++c) {
      const index_t j0 = descending ? (e - (c + 1) * chunk_elements < b ? b : e - (c + 1) * chunk_elements) : b + c * chunk_elements;
      const index_t j1 = descending ? e - c * chunk_elements : (j0 + chunk_elements < e ? j0 + chunk_elements : e);
      lines.reader->start(j0, j1 - j0);
      const chunk_reader_t<Acc> local = *lines.reader;
      f(local, j0, j1 - j0);
    }
  }

  /// Elements [b, e) of row r (a scan along the last axis) from running value a; returns the value after them.
  A scan_row(line_reader<Acc>& lines, index_t r, index_t b, index_t e, A a, bool write) const {
    const index_t len = shape[R - 1];
    T* o = out + r * len;
    row_chunks(lines, r, b, e, reverse, [&](const auto& ch, index_t j0, index_t n) {
      if (!reverse) {
        for (index_t k = 0; k < n; ++k) {
          a = op.combine(a, op.template lift<A>(widen(ch[k]), j0 + k));
          if (write) o[j0 + k] = op.template finalize<T>(a, j0 + k + 1);
        }
      } else {
        for (index_t k = n; k-- > 0;) {
          a = op.combine(a, op.template lift<A>(widen(ch[k]), j0 + k));
          if (write) o[j0 + k] = op.template finalize<T>(a, len - (j0 + k));
        }
      }
    });
    return a;
  }

  /// Column unit u = (outer o, mid m) of a scan along another axis: its row of running values, row after row.
  void scan_columns(line_reader<Acc>& lines, const scan_shape& p, index_t u, std::vector<A>& run) const {
    const index_t o = u / p.mid, m = u % p.mid;
    run.assign(static_cast<std::size_t>(p.row), op.template identity<A>());
    A* rv = run.data();
    for (index_t s = 0; s < p.len; ++s) {
      const index_t l = reverse ? p.len - 1 - s : s;
      const index_t r = (o * p.len + l) * p.mid + m;  // the operand row
      T* orow = out + r * p.row;
      const index_t count = s + 1;
      row_chunks(lines, r, 0, p.row, false, [&](const auto& ch, index_t j0, index_t n) {
        for (index_t k = 0; k < n; ++k) {
          const A v = op.combine(rv[j0 + k], op.template lift<A>(widen(ch[k]), l));
          rv[j0 + k] = v;
          orow[j0 + k] = op.template finalize<T>(v, count);
        }
      });
    }
  }
};

/// dest = Op scanned along `axis` of the operand acc reads (shape s); dest contiguous.
template <class Op, class A, class T, class Acc, std::size_t R>
void run_scan(const Op& op, const Acc& acc, const shape_t<R>& s, std::size_t axis, bool reverse, T* out) {
  const index_t size = shape_size(s);
  if (size == 0) return;
  const scan_shape p = scan_shape_of(s, axis);
  const scan_engine<Op, A, T, Acc, R> eng{op, acc, s, reverse, out};
  if (axis + 1 < R) {
    const index_t units = p.outer * p.mid;
    const index_t per_unit = p.len * p.row;
    for_ranges(units, per_unit >= scan_grain ? 1 : scan_grain / per_unit, [&](index_t u0, index_t u1) {
      line_reader<Acc> lines(acc);
      std::vector<A> run;
      for (index_t u = u0; u < u1; ++u) eng.scan_columns(lines, p, u, run);
    });
    return;
  }
  const index_t rows = size / p.len;
  const index_t threads = task_count(size, scan_grain);
  const index_t blocks = (p.len + scan_block - 1) / scan_block;
  if (rows >= threads || blocks < 2) {
    for_ranges(rows, p.len >= scan_grain ? 1 : scan_grain / p.len, [&](index_t r0, index_t r1) {
      line_reader<Acc> lines(acc);
      for (index_t r = r0; r < r1; ++r) eng.scan_row(lines, r, 0, p.len, op.template identity<A>(), true);
    });
    return;
  }
  // Few long rows: each row's blocks folded in parallel, their carries scanned, then the blocks scanned from them.
  std::vector<A> carry(static_cast<std::size_t>(rows * blocks), op.template identity<A>());
  const auto block_range = [&](index_t b, index_t& lo, index_t& hi) {
    lo = b * scan_block;
    hi = lo + scan_block < p.len ? lo + scan_block : p.len;
  };
  parallel_for(rows * blocks, [&](index_t t) {
    line_reader<Acc> lines(acc);
    index_t lo, hi;
    block_range(t % blocks, lo, hi);
    carry[static_cast<std::size_t>(t)] = eng.scan_row(lines, t / blocks, lo, hi, op.template identity<A>(), false);
  });
  for (index_t r = 0; r < rows; ++r) {  // exclusive scan of the block totals, in scan order
    A run = op.template identity<A>();
    for (index_t k = 0; k < blocks; ++k) {
      const index_t b = reverse ? blocks - 1 - k : k;
      A& c = carry[static_cast<std::size_t>(r * blocks + b)];
      const A total = c;
      c = run;
      run = op.combine(run, total);
    }
  }
  parallel_for(rows * blocks, [&](index_t t) {
    line_reader<Acc> lines(acc);
    index_t lo, hi;
    block_range(t % blocks, lo, hi);
    eng.scan_row(lines, t / blocks, lo, hi, carry[static_cast<std::size_t>(t)], true);
  });
}

} // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R>
void line_scan::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  using KT = typename N::kernel_dtype;
  using Reduction = typename N::op_type::reduction;
  using A = typename Reduction::template accumulator<KT>;
  const auto acc = detail::scan_operand(n, ctx);
  detail::host_impl::run_scan<Reduction, A, T>(n.op(), acc, n.shape(), n.axis(), n.reverse(), dest.data());
}

} // namespace texpr::host_kernels
