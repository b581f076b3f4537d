// detail::executor<cuda>: the four entry points evaluation calls once placement has been checked.
// Every one enqueues on the evaluation's stream and returns without waiting for the device.
#pragma once

#if defined(__CUDACC__)

#include <cstddef>

#include "texpr/backend/cuda/elementwise.hpp"
#include "texpr/backend/cuda/gemm.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/reduction.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

template <class B> struct executor;

/// The cuda backend's executor.
template <> struct executor<cuda> {
  /// dest = acc, elementwise, in one fused kernel; dest may be strided.
  template <class T, std::size_t R, class Acc>
  static void assign(const view<T, R, cuda>& dest, Acc acc, context<cuda>& ctx) {
    cuda_impl::assign(dest, acc, ctx.stream);
  }

  /// *out (device memory) = Op over every element of acc; one CUB pass, the result stays on the device.
  template <class Op, std::size_t R, class Acc, class T>
  static void reduce_all(Acc acc, const shape_t<R>& in_shape, T* out, context<cuda>& ctx) {
    cuda_impl::reduce_all<Op>(acc, in_shape, out, ctx.stream);
  }

  /// dest = Op of acc along axis; dest is contiguous with the axis removed.
  template <class Op, std::size_t R, class Acc, class T>
  static void reduce_axis(Acc acc, const shape_t<R>& in_shape, std::size_t axis, const view<T, R - 1, cuda>& dest,
                          context<cuda>& ctx) {
    cuda_impl::reduce_axis<Op>(acc, in_shape, axis, dest, ctx.stream);
  }

  /// C[b] = A[b] x B[b] through cuBLAS; row-major contiguous, a step of 0 shares a matrix across batches.
  template <class T>
  static void gemm(index_t batch, index_t m, index_t n, index_t k, const T* a, index_t a_step, const T* b,
                   index_t b_step, T* c, index_t c_step, context<cuda>& ctx) {
    cuda_impl::gemm(batch, m, n, k, a, a_step, b, b_step, c, c_step, ctx.stream);
  }
};

} // namespace texpr::detail

#endif // __CUDACC__
