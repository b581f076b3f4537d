// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What every backend's matmul needs from a matmul node: its operands as memory and the product as a batch of
// (m x k) x (k x n) matrix products, each operand read through row, column and batch strides (vectors, transposed
// and broadcast operands need no copy).
#pragma once

#include <cstddef>
#include <utility>

#include "texpr/core/context.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/matmul.hpp"

namespace texpr::detail {

/// One operand of a batched product: element (q, i, j) of batch q is at data[offset(q) + i * rs + j * cs].
template <class T, std::size_t BR> struct matrix_operand {
  const T* data = nullptr;
  index_t rs = 0, cs = 0;      ///< row and column strides, in elements
  shape_t<BR> batch_strides{};  ///< per output batch dimension; 0 where the operand is broadcast
};

/// The product C = A B as `batch_count()` matrix products of (m x k) by (k x n), C row-major and contiguous with
/// m * n elements per batch.
template <class T, std::size_t BR> struct matmul_plan {
  index_t m = 0, n = 0, k = 0;
  shape_t<BR> batch{};  ///< output batch shape
  matrix_operand<T, BR> a, b;

  /// Number of matrix products.
  index_t batch_count() const { return shape_size(batch); }
  /// Element offsets of batch q's A and B.
  std::pair<index_t, index_t> offsets(index_t q) const {
    index_t oa = 0, ob = 0;
    for (std::size_t d = BR; d-- > 0;) {
      const index_t i = q % batch[d];
      q /= batch[d];
      oa += i * a.batch_strides[d];
      ob += i * b.batch_strides[d];
    }
    return {oa, ob};
  }
};

template <std::size_t BR, class V>
void fill_batch_strides(const V& v, std::size_t matrix_dims, const shape_t<BR>& batch, shape_t<BR>& out) {
  constexpr std::size_t R = std::remove_cvref_t<decltype(v.shape())>{}.size();
  for (std::size_t i = 0; i != BR; ++i) {
    const std::size_t from_end = BR - i;  // 1 = the batch dimension next to the matrix
    out[i] = 0;
    if (R >= matrix_dims + from_end) {
      const std::size_t d = R - matrix_dims - from_end;
      if (v.shape()[d] != 1 && batch[i] != 1) out[i] = v.strides()[d];
    }
  }
}

/// The plan of matmul node n over its operands' memory va and vb (views).
template <class N, class VA, class VB> auto make_matmul_plan(const N& n, const VA& va, const VB& vb) {
  using T = typename N::kernel_dtype;  // the operands' (a scaled_matmul's result is wider)
  constexpr std::size_t BR = N::batch_rank;
  constexpr std::size_t RA = std::remove_cvref_t<decltype(va.shape())>{}.size();
  constexpr std::size_t RB = std::remove_cvref_t<decltype(vb.shape())>{}.size();
  matmul_plan<T, BR> p;
  for (std::size_t i = 0; i != BR; ++i) p.batch[i] = n.shape()[i];
  p.a.data = va.data();
  p.b.data = vb.data();
  const matrix_layout la = matrix_of<0>(va.shape(), va.strides()), lb = matrix_of<1>(vb.shape(), vb.strides());
  p.m = la.rows;
  p.k = la.columns;
  p.a.rs = la.row_stride;
  p.a.cs = la.column_stride;
  p.n = lb.columns;
  p.b.rs = lb.row_stride;
  p.b.cs = lb.column_stride;
  if constexpr (RA >= 2) fill_batch_strides(va, 2, p.batch, p.a.batch_strides);
  if constexpr (RB >= 2) fill_batch_strides(vb, 2, p.batch, p.b.batch_strides);
  return p;
}

/// The plan of matmul node n on B; its operands are materialised only when they are not memory (or layouts of it).
template <class N, class B> auto make_matmul_plan(const N& n, context<B>& ctx) {
  const auto va = materialize(get<0>(n.operands()), ctx);
  const auto vb = materialize(get<1>(n.operands()), ctx);
  return make_matmul_plan(n, va, vb);
}

} // namespace texpr::detail
