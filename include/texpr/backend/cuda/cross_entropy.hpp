// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_kernels::row_cross_entropy: softmax cross-entropy in one launch, and row_cross_entropy_grad, its gradient
// with respect to the logits in one launch (a warp per row: the shift and sum of exp, then the row written).
// row_cross_entropy: A warp per row finds the row's shift (its
// maximum, or 0 where that is infinite or NaN), sums exp(z - shift) and reads the label's logit; each block adds
// its rows' losses in a fixed order, and the last block to finish adds the blocks' sums in a fixed order and
// writes the mean, so the result does not depend on block scheduling. The composite expansion (composed) takes 6
// launches for the same value.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "texpr/backend/cuda/column_sums.hpp"
#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::cuda_impl {

/// The type a row's sums run in: double for double logits, float otherwise (16-bit logits widen).
template <class T> using cross_entropy_acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

inline constexpr int cross_entropy_warps = block_threads / 32;  // rows a block works on at a time

template <class A> __device__ A warp_max(A v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const A other = __shfl_xor_sync(0xffffffffu, v, o);
    v = (other > v || other != other) ? other : v;  // NaN wins (a NaN v stays), as in the host's max
  }
  return v;
}
template <class A> __device__ A warp_sum(A v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// A row's shift (its maximum when finite, else 0: inf - inf would be NaN) and sum of exp(z - shift).
template <class A> struct shift_and_sum {
  A shift;  ///< Subtracted before exp.
  A sum;    ///< sum_j exp(z_j - shift).
};
/// shift_and_sum of a row, computed by the warp whose lane is `lane`; every lane gets both (the loss and its
/// gradient kernels share it).
template <class A, class T>
__device__ shift_and_sum<A> row_shift_and_sum(const T* row, index_t cs, index_t classes, int lane) {
  A m = -std::numeric_limits<A>::infinity();
  for (index_t j = lane; j < classes; j += 32) {
    const A v = static_cast<A>(row[j * cs]);
    m = (v > m || v != v) ? v : m;
  }
  m = warp_max(m);
  const A shift = (m == m && m != std::numeric_limits<A>::infinity() && m != -std::numeric_limits<A>::infinity()) ? m : A(0);
  A s = 0;
  for (index_t j = lane; j < classes; j += 32) s += ::exp(static_cast<A>(row[j * cs]) - shift);
  return {shift, warp_sum(s)};
}

/// mean over rows of log(sum_j exp(z_ij - s_i)) + s_i - z_i,l_i; NaN for a label outside [0, classes).
/// partials: one A per block; counter: zero before the launch, zero again after it.
template <class T, class I, class A>
__global__ void cross_entropy_rows(const T* __restrict__ z, index_t rs, index_t cs, const I* __restrict__ labels,
                                   index_t ls, index_t rows, index_t classes, A* __restrict__ partials,
                                   unsigned* __restrict__ counter, T* __restrict__ out) {
  __shared__ A warp_sums[cross_entropy_warps];
  __shared__ bool last;
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  A mine = 0;
  for (index_t r = static_cast<index_t>(blockIdx.x) * cross_entropy_warps + warp; r < rows;
       r += static_cast<index_t>(gridDim.x) * cross_entropy_warps) {
    const T* row = z + r * rs;
    const auto [shift, s] = row_shift_and_sum<A>(row, cs, classes, lane);
    if (lane == 0) {
      const auto label = static_cast<index_t>(labels[r * ls]);
      const A picked = label >= 0 && label < classes ? static_cast<A>(row[label * cs]) : std::numeric_limits<A>::quiet_NaN();
      mine += ::log(s) + (shift - picked);
    }
  }
  if (lane == 0) warp_sums[warp] = mine;
  __syncthreads();
  if (threadIdx.x == 0) {
    A block = 0;
    for (int w = 0; w < cross_entropy_warps; ++w) block += warp_sums[w];
    partials[blockIdx.x] = block;
    __threadfence();  // the partial is visible before the count says so
    last = atomicAdd(counter, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    A total = 0;
    const volatile A* p = partials;
    for (unsigned b = 0; b < gridDim.x; ++b) total += p[b];
    *out = static_cast<T>(total / static_cast<A>(rows));
    *counter = 0;
  }
}

/// dz = (exp(z - (shift + log(sum))) - one_hot(label)) * (scale * g / rows), a warp per row, dz contiguous; g is
/// read when given (else 1). The same formula as the composite expansion, so infinite and NaN logits give what
/// the host gives (a +inf logit: NaN there and 0 elsewhere in its row; a NaN or all -inf row: NaN), and a label
/// outside [0, classes) matches no column (its row is the softmax). With `sums`, the column sums of dz too
/// (block_column_sums: partials and ticket as there).
template <class T, class I, class A>
__global__ void cross_entropy_grad_rows(const T* __restrict__ z, index_t rs, index_t cs, const I* __restrict__ labels,
                                        index_t ls, const T* __restrict__ g, A factor, index_t rows, index_t classes,
                                        T* dz, A* partials, unsigned* ticket, T* sums) {
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const A f = g ? factor * static_cast<A>(*g) : factor;
  for (index_t r = static_cast<index_t>(blockIdx.x) * cross_entropy_warps + warp; r < rows;
       r += static_cast<index_t>(gridDim.x) * cross_entropy_warps) {
    const T* row = z + r * rs;
    const auto [shift, s] = row_shift_and_sum<A>(row, cs, classes, lane);
    const A lse = ::log(s) + shift;
    const auto label = static_cast<index_t>(labels[r * ls]);
    T* out = dz + r * classes;
    for (index_t j = lane; j < classes; j += 32) {
      const A p = ::exp(static_cast<A>(row[j * cs]) - lse);
      out[j] = static_cast<T>((p - (j == label ? A(1) : A(0))) * f);
    }
  }
  if (sums) block_column_sums<A>(dz, rows, classes, cross_entropy_warps, partials, ticket, sums);
}

} // namespace texpr::detail::cuda_impl

namespace texpr::cuda_kernels {

template <class N, class T, std::size_t R>
void row_cross_entropy::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using namespace detail;
  using A = cuda_impl::cross_entropy_acc_t<T>;
  const auto z = materialize(get<0>(n.operands()), ctx);  // in order, as tx::placement lists them
  const auto l = materialize(get<1>(n.operands()), ctx);
  const index_t rows = z.shape()[0], classes = z.shape()[1];
  const index_t wanted = cuda_impl::ceil_div(rows, cuda_impl::cross_entropy_warps);
  const unsigned blocks = cuda_impl::grid_for(wanted < 1 ? 1 : wanted);
  const ticketed_scratch<A> scratch(blocks, ctx.stream);  // the blocks' sums, then the counter
  cuda_impl::cross_entropy_rows<T, typename decltype(l)::value_type, A>
      <<<blocks, cuda_impl::block_threads, 0, ctx.stream>>>(z.data(), z.strides()[0], z.strides()[1], l.data(),
                                                            l.strides()[0], rows, classes, scratch.partials, scratch.ticket,
                                                            dest.data());
  TEXPR_CUDA_CHECK_LAUNCH();
}

template <class N, class T, std::size_t R>
void row_cross_entropy_grad::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using namespace detail;
  using A = cuda_impl::cross_entropy_acc_t<T>;
  // In order, as tx::placement lists them.
  const auto z = materialize(get<0>(n.operands()), ctx);
  const auto l = materialize(get<1>(n.operands()), ctx);
  const T* g = nullptr;
  if constexpr (N::children::size == 3) g = materialize(get<2>(n.operands()), ctx).data();
  const index_t rows = z.shape()[0], classes = z.shape()[1];
  if (rows == 0 || classes == 0) return;  // an empty result: nothing to write
  const A factor = static_cast<A>(n.parameter() / static_cast<double>(rows));
  const unsigned blocks = cuda_impl::grid_for(cuda_impl::ceil_div(rows, cuda_impl::cross_entropy_warps));
  cuda_impl::cross_entropy_grad_rows<T, typename decltype(l)::value_type, A>
      <<<blocks, cuda_impl::block_threads, 0, ctx.stream>>>(z.data(), z.strides()[0], z.strides()[1], l.data(),
                                                            l.strides()[0], g, factor, rows, classes, dest.data(),
                                                            nullptr, nullptr, nullptr);
  TEXPR_CUDA_CHECK_LAUNCH();
}

template <class N, class T, std::size_t R>
void row_cross_entropy_grad::run_with_column_sums(const N& n, const view<T, R, cuda>& dest, T* sums, index_t cols,
                                                  context<cuda>& ctx) {
  using namespace detail;
  using A = cuda_impl::cross_entropy_acc_t<T>;
  static_assert(std::is_same_v<A, cuda_impl::column_sums_acc_t<T>>, "texpr: one accumulator for the row and its sums");
  const auto z = materialize(get<0>(n.operands()), ctx);  // in order, as tx::placement lists them
  const auto l = materialize(get<1>(n.operands()), ctx);
  const T* g = nullptr;
  if constexpr (N::children::size == 3) g = materialize(get<2>(n.operands()), ctx).data();
  const index_t rows = z.shape()[0], classes = z.shape()[1];
  if (rows == 0 || classes != cols) throw std::logic_error("texpr: cross_entropy_grad's column sums need its rows");
  const A factor = static_cast<A>(n.parameter() / static_cast<double>(rows));
  const unsigned blocks = cuda_impl::column_sums_grid(rows, classes, cuda_impl::cross_entropy_warps, sizeof(A));
  const ticketed_scratch<A> scratch(static_cast<std::size_t>(blocks) * static_cast<std::size_t>(classes), ctx.stream);
  cuda_impl::cross_entropy_grad_rows<T, typename decltype(l)::value_type, A>
      <<<blocks, cuda_impl::block_threads, 0, ctx.stream>>>(z.data(), z.strides()[0], z.strides()[1], l.data(),
                                                            l.strides()[0], g, factor, rows, classes, dest.data(),
                                                            scratch.partials, scratch.ticket, sums);
  TEXPR_CUDA_CHECK_LAUNCH();
}

} // namespace texpr::cuda_kernels

#endif // __CUDACC__
