// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// host_kernels::fused_elementwise: one pass over the destination for a whole elementwise tree. A dense tree and
// destination take a linear loop the compiler vectorises; otherwise the destination goes row by row, index
// arithmetic once per row, each row read in unit-stride chunks (pointers into memory, or small buffers for
// broadcast and strided operands), so those loops vectorise too. Large loops are split over the thread pool.
#pragma once

#include <cstddef>

#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::host_kernels {

template <class T, std::size_t R, class Acc>
void fused_elementwise::assign(const view<T, R, host>& dest, const Acc& acc, context<host>&) {
  using namespace detail::host_impl;
  static_assert(accessor<Acc>, "texpr: fused_elementwise reads accessors (see eval/accessor.hpp)");
  const index_t n = dest.size();
  if (n == 0) return;
  T* d = dest.data();
  if constexpr (R == 0) {
    d[0] = acc.linear(0);
  } else {
    if (acc.dense() && dest.is_contiguous()) {
      for_ranges(n, elementwise_grain, [&](index_t b, index_t e) {
        const Acc a = acc;  // a local copy: its members cannot alias d
        for (index_t i = b; i < e; ++i) d[i] = a.linear(i);
      });
      return;
    }
    const auto& shape = dest.shape();
    const auto& ds = dest.strides();
    const index_t len = shape[R - 1], step = ds[R - 1];
    const index_t rows = n / len;
    for_ranges(rows, (elementwise_grain + len - 1) / len, [&](index_t r0, index_t r1) {
      line_reader<Acc> lines(acc);
      index_t idx[R] = {};
      row_index(r0, shape, idx);
      for (index_t r = r0; r < r1; ++r, next_row(idx, shape)) {
        index_t off = 0;
        for (std::size_t k = 0; k + 1 < R; ++k) off += idx[k] * ds[k];
        T* row = d + off;
        lines.template for_chunks<R>(idx, len, [&](const auto& c, index_t j0, index_t m) {
          if (step == 1) {
            T* out = row + j0;
            for (index_t j = 0; j < m; ++j) out[j] = c[j];
          } else {
            T* out = row + j0 * step;
            for (index_t j = 0; j < m; ++j) out[j * step] = c[j];
          }
        });
      }
    });
  }
}

} // namespace texpr::host_kernels
