// What every backend's matmul needs from a matmul node: its operands as memory and the product as a batch of
// (m x k) x (k x n) matrix products, each operand read through row, column and batch strides (vectors, transposed
// and broadcast operands need no copy).
#pragma once

#include <cstddef>
#include <utility>

#include "texpr/core/context.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/read.hpp"

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

/// The plan of matmul node n on B; its operands are materialised only when they are not memory (or layouts of it).
template <class N, class B> auto make_matmul_plan(const N& n, context<B>& ctx) {
  using T = typename N::value_type;
  constexpr std::size_t BR = N::batch_rank;
  const auto& na = get<0>(n.operands());
  const auto& nb = get<1>(n.operands());
  const auto va = materialize(na, ctx);
  const auto vb = materialize(nb, ctx);
  constexpr std::size_t RA = std::remove_cvref_t<decltype(na)>::rank, RB = std::remove_cvref_t<decltype(nb)>::rank;
  matmul_plan<T, BR> p;
  for (std::size_t i = 0; i != BR; ++i) p.batch[i] = n.shape()[i];
  p.a.data = va.data();
  p.b.data = vb.data();
  if constexpr (RA == 1) {
    p.m = 1;
    p.k = va.shape()[0];
    p.a.rs = 0;
    p.a.cs = va.strides()[0];
  } else {
    p.m = va.shape()[RA - 2];
    p.k = va.shape()[RA - 1];
    p.a.rs = va.strides()[RA - 2];
    p.a.cs = va.strides()[RA - 1];
    fill_batch_strides(va, 2, p.batch, p.a.batch_strides);
  }
  if constexpr (RB == 1) {
    p.n = 1;
    p.b.rs = vb.strides()[0];
    p.b.cs = 0;
  } else {
    p.n = vb.shape()[RB - 1];
    p.b.rs = vb.strides()[RB - 2];
    p.b.cs = vb.strides()[RB - 1];
    fill_batch_strides(vb, 2, p.batch, p.b.batch_strides);
  }
  return p;
}

} // namespace texpr::detail
