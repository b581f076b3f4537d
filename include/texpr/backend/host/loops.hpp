// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Loop helpers shared by the host kernels: splitting work over the thread pool, walking the rows (lines along the
// last axis) of an output, and reading a line of an accessor in unit-stride chunks.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "texpr/backend/host/parallel.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/accessor.hpp"

namespace texpr::detail::host_impl {

/// Advances a row-major multi-index over the first R-1 dimensions of shape.
template <std::size_t R> void next_row(index_t* idx, const shape_t<R>& shape) {
  for (std::size_t d = R - 1; d-- > 0;) {
    if (++idx[d] < shape[d]) return;
    idx[d] = 0;
  }
}

/// Multi-index of row r (the first R-1 dimensions of shape).
template <std::size_t R> void row_index(index_t r, const shape_t<R>& shape, index_t* idx) {
  for (std::size_t d = R - 1; d-- > 0;) {
    idx[d] = r % shape[d];
    r /= shape[d];
  }
}

/// Runs f(begin, end) over [0, n) cut into pieces of at least `grain` units, on the pool when worth it. One call
/// path for serial and threaded runs, so f's body is compiled once.
template <class F> void for_ranges(index_t n, index_t grain, F&& f) {
  if (n <= 0) return;
  const index_t tasks = task_count(n, grain);
  // a few pieces per thread for load balance
  const index_t pieces = tasks <= 1 ? 1 : (tasks * 4 < n / grain ? tasks * 4 : n / grain);
  parallel_for(pieces, [&](index_t t) { f(n * t / pieces, n * (t + 1) / pieces); });
}

/// Elementwise work per task below which threading does not pay.
inline constexpr index_t elementwise_grain = 1 << 15;

/// One task's state for reading the lines of accessor Acc in chunks: its own copy of the accessor, its chunk
/// reader and the reader's buffers.
template <class Acc> struct line_reader {
  Acc acc;
  chunk_arena arena;
  chunk_reader_t<Acc> state{};
  chunk_reader_t<Acc>* reader = &state;  // (the loops use it through a pointer, as a cursor)
  explicit line_reader(const Acc& a) : acc(a) { reader->init(arena); }
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;

  /// Calls f(chunk, j0, n) over the line through idx along the last axis (len elements) in unit-stride chunks.
  /// The chunk reader is copied into a local so its members cannot alias the output (they stay in registers).
  template <std::size_t R, class F> void for_chunks(const index_t* idx, index_t len, F&& f) {
    acc.seek(idx, R - 1);
    reader->bind(acc, len);
    for (index_t j0 = 0; j0 < len; j0 += chunk_elements) {
      const index_t n = len - j0 < chunk_elements ? len - j0 : chunk_elements;
      reader->start(j0, n);
      const chunk_reader_t<Acc> local = *reader;
      f(local, j0, n);
    }
  }

  /// Like for_chunks, over columns [c0, c1) of the line only (a fused epilogue's block of a GEMM output).
  template <std::size_t R, class F> void for_chunks_in(const index_t* idx, index_t len, index_t c0, index_t c1, F&& f) {
    acc.seek(idx, R - 1);
    reader->bind(acc, len);
    for (index_t j0 = c0; j0 < c1; j0 += chunk_elements) {
      const index_t n = c1 - j0 < chunk_elements ? c1 - j0 : chunk_elements;
      reader->start(j0, n);
      const chunk_reader_t<Acc> local = *reader;
      f(local, j0, n);
    }
  }
};

} // namespace texpr::detail::host_impl
