// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// host_kernels::blocked_gemm: a matmul node as a batch of GEMMs (gemm.hpp) reading its operands in place;
// host_kernels::complex_gemm: complex matmul as one real GEMM per batch over the operands' parts;
// host_kernels::widening_gemm: scaled_matmul of 8-bit operands, plain loops; and
// host_kernels::gemm_epilogue: an elementwise tree over one matmul, applied to each finished block of the GEMM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "texpr/backend/host/gemm.hpp"
#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/detail/complex.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/eval/epilogue.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/matmul_plan.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::host_kernels {

template <class N, class T, std::size_t R>
void blocked_gemm::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  const auto p = detail::make_matmul_plan(n, ctx);
  T* c = dest.data();
  const index_t batches = p.batch_count();
  for (index_t q = 0; q < batches; ++q) {
    const auto [oa, ob] = p.offsets(q);
    detail::host_impl::gemm(p.m, p.n, p.k, p.a.data + oa, p.a.rs, p.a.cs, p.b.data + ob, p.b.rs, p.b.cs,
                            c + q * p.m * p.n);
  }
}

template <class N, class T, std::size_t R>
void complex_gemm::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  // One real GEMM rather than four (or Gauss's three): a single pass of the blocked kernel over A and B, no sums of
  // partial products afterwards, and each part of C is the textbook sum re*re - im*im (re*im + im*re) accumulated
  // along k, as BLAS's cgemm/zgemm. The three-product form saves a quarter of the flops but computes the imaginary
  // part as (ar + ai)(br + bi) - ar br - ai bi, whose cancellation loses the imaginary part's accuracy when it is
  // small beside the real one.
  using P = real_of_t<T>;
  const auto p = detail::make_matmul_plan(n, ctx);
  const index_t m = p.m, cols = p.n, k = p.k;
  P* c = reinterpret_cast<P*>(dest.data());
  std::vector<P> b2(static_cast<std::size_t>(4 * k * cols));  // B as the (2k x 2n) real matrix of 2x2 blocks
  std::vector<T> a_rows;                                      // A copied when its rows are not contiguous
  const bool a_in_place = p.a.cs == 1 || k == 1;
  if (!a_in_place) a_rows.resize(static_cast<std::size_t>(m * k));
  index_t b_built = -1;
  const index_t batches = p.batch_count();
  for (index_t q = 0; q < batches; ++q) {
    const auto [oa, ob] = p.offsets(q);
    if (ob != b_built) {  // a B broadcast over the batch is expanded once
      for (index_t l = 0; l < k; ++l)
        for (index_t j = 0; j < cols; ++j) {
          const auto z = detail::complex_parts(p.b.data[ob + l * p.b.rs + j * p.b.cs]);
          P* top = b2.data() + (2 * l) * (2 * cols) + 2 * j;  // row 2l meets A's real parts
          P* bottom = top + 2 * cols;                         // row 2l + 1 meets A's imaginary parts
          top[0] = z.re, top[1] = z.im, bottom[0] = -z.im, bottom[1] = z.re;
        }
      b_built = ob;
    }
    const P* a = reinterpret_cast<const P*>(p.a.data + oa);
    index_t a_rs = 2 * p.a.rs;
    if (!a_in_place) {
      for (index_t i = 0; i < m; ++i)
        for (index_t l = 0; l < k; ++l) a_rows[static_cast<std::size_t>(i * k + l)] = p.a.data[oa + i * p.a.rs + l * p.a.cs];
      a = reinterpret_cast<const P*>(a_rows.data());
      a_rs = 2 * k;
    }
    detail::host_impl::gemm<P>(m, 2 * cols, 2 * k, a, a_rs, 1, b2.data(), 2 * cols, 1, c + q * m * cols * 2);
  }
}

template <class N, class T, std::size_t R>
void widening_gemm::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  using In = typename N::kernel_dtype;
  const auto p = detail::make_matmul_plan(n, ctx);
  T* c = dest.data();
  const float scale = n.scale();
  std::vector<T> wide_b(static_cast<std::size_t>(p.k * p.n));  // one batch's B, widened, row-major
  const index_t batches = p.batch_count();
  for (index_t q = 0; q < batches; ++q) {
    const auto [oa, ob] = p.offsets(q);
    for (index_t l = 0; l < p.k; ++l)
      for (index_t j = 0; j < p.n; ++j)
        wide_b[static_cast<std::size_t>(l * p.n + j)] = static_cast<T>(detail::widen(p.b.data[ob + l * p.b.rs + j * p.b.cs]));
    for (index_t i = 0; i < p.m; ++i) {
      T* row = c + (q * p.m + i) * p.n;
      for (index_t j = 0; j < p.n; ++j) row[j] = T(0);
      for (index_t l = 0; l < p.k; ++l) {
        const T a = static_cast<T>(detail::widen(p.a.data[oa + i * p.a.rs + l * p.a.cs]));
        const T* b = wide_b.data() + l * p.n;
        if constexpr (std::is_same_v<In, std::int8_t>) {
          for (index_t j = 0; j < p.n; ++j) row[j] = detail::wrap_add(row[j], detail::wrap_mul(a, b[j]));
        } else {
          for (index_t j = 0; j < p.n; ++j) row[j] += a * b[j];
        }
      }
      if constexpr (!std::is_same_v<In, std::int8_t>)
        if (scale != 1.0f)
          for (index_t j = 0; j < p.n; ++j) row[j] *= scale;
    }
  }
}

} // namespace texpr::host_kernels

namespace texpr::detail::host_impl {

// The epilogue over one block of batch q's product: dest rows [r0, r1) x columns [c0, c1) = the tree, read with
// the product from dest itself.
template <class T, std::size_t R, class Acc> struct epilogue_block_pass {
  const Acc* acc;
  T* d;
  shape_t<R> shape;
  index_t rows_per_batch, q;
  static void run(void* self, index_t r0, index_t r1, index_t c0, index_t c1) {
    const auto& s = *static_cast<const epilogue_block_pass*>(self);
    line_reader<Acc> lines(*s.acc);
    index_t idx[R] = {};
    row_index(s.q * s.rows_per_batch + r0, s.shape, idx);
    const index_t len = s.shape[R - 1];
    for (index_t r = r0; r < r1; ++r, next_row(idx, s.shape)) {
      T* row = s.d + (s.q * s.rows_per_batch + r) * len;
      lines.template for_chunks_in<R>(idx, len, c0, c1, [&](const auto& c, index_t j0, index_t m) {
        T* out = row + j0;
        for (index_t j = 0; j < m; ++j) out[j] = c[j];
      });
    }
  }
};

} // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R>
void gemm_epilogue::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  // (dispatch_of chose this: the product has dest's shape, dest is contiguous and no operand overlaps it)
  const auto p = detail::make_matmul_plan(detail::epilogue_matmul(n), ctx);
  T* c = dest.data();
  const auto acc = detail::read_epilogue(n, dest.shape(), ctx, static_cast<const T*>(c));
  using pass = detail::host_impl::epilogue_block_pass<T, R, std::remove_const_t<decltype(acc)>>;
  const index_t batches = p.batch_count();
  for (index_t q = 0; q < batches; ++q) {
    const auto [oa, ob] = p.offsets(q);
    pass state{&acc, c, dest.shape(), p.m, q};
    const detail::host_impl::block_callback epi{&pass::run, &state};
    detail::host_impl::gemm(p.m, p.n, p.k, p.a.data + oa, p.a.rs, p.a.cs, p.b.data + ob, p.b.rs, p.b.cs,
                            c + q * p.m * p.n, &epi);
  }
}

} // namespace texpr::host_kernels
