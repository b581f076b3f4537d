// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda linear algebra rows (texpr/linalg.hpp includes this): cuSOLVER's dense API (link texpr::linalg, which
// links CUDA::cusolver where CUDA is enabled). cuSOLVER is column-major and texpr row-major: a row-major lower factor
// is cuSOLVER's upper one, as on the host. `info` is never read during evaluation: it goes to a device buffer whose
// check runs at the next copy to the host (memory.hpp's deferred_checks), so an evaluation enqueues no host wait.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/linalg.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

inline void cuda_check(cusolverStatus_t s, const char* call, const char* file, int line) {
  if (s == CUSOLVER_STATUS_SUCCESS) return;
  throw cuda_error(call, "cusolverStatus_t " + std::to_string(static_cast<int>(s)), file, line, static_cast<int>(s));
}

namespace cuda_impl {

/// One cuSOLVER dense handle per device for the calling thread, made on first use and released at thread exit; its
/// stream is set per call (as cuBLAS's handle in gemm.hpp, whose cache checks cuBLAS's status type only).
inline cusolverDnHandle_t cusolver_handle() {
  struct cache {
    cusolverDnHandle_t h[64] = {};
    ~cache() {
      for (auto& x : h)
        if (x) (void)cusolverDnDestroy(x);  // errors at exit have nobody to report to
    }
  };
  thread_local cache handles;
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64)
    throw cuda_error("cudaGetDevice(&dev)", "device ordinal beyond texpr's 64-device cache", __FILE__, __LINE__, 0);
  if (!handles.h[dev]) TEXPR_CUDA_CHECK(cusolverDnCreate(&handles.h[dev]));
  return handles.h[dev];
}

/// The 64-bit API's options object, default options, one per thread (it holds no device state).
inline cusolverDnParams_t cusolver_params() {
  struct holder {
    cusolverDnParams_t p = nullptr;
    ~holder() {
      if (p) (void)cusolverDnDestroyParams(p);  // errors at exit have nobody to report to
    }
  };
  thread_local holder h;
  if (!h.p) TEXPR_CUDA_CHECK(cusolverDnCreateParams(&h.p));
  return h.p;
}

template <class T>
inline constexpr cudaDataType_t solver_type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;

/// Zeroes the strict upper triangle of each row-major n x n matrix (potrf leaves A's there).
template <class T>
__global__ void zero_above_diagonal(T* a, index_t n, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t r = (e / n) % n, c = e % n;
    if (c > r) a[e] = T(0);
  }
}

/// Adds the check of a batch's `info` (one int per matrix, device memory from texpr's cache, released by the
/// check): the first nonzero becomes tx::linalg_error naming op, the matrix and info, as the host's. op and why have
/// static storage (the error keeps op as a string_view).
inline void defer_info_check(std::string_view op, int* info, index_t batches, stream_t stream, const char* why) {
  deferred_checks::instance().add([op, info, batches, stream, why] {
    std::vector<int> host(static_cast<std::size_t>(batches));
    const cudaError_t copied =
        cudaMemcpyAsync(host.data(), info, sizeof(int) * host.size(), cudaMemcpyDeviceToHost, stream);
    const cudaError_t waited = copied == cudaSuccess ? cudaStreamSynchronize(stream) : copied;
    memory<cuda>::release(info, stream);
    TEXPR_CUDA_CHECK(waited);
    kernel_log::record_sync();
    for (index_t q = 0; q < batches; ++q)
      if (const int i = host[static_cast<std::size_t>(q)]; i != 0)
        throw linalg_error(op, q, i,
                           i < 0
                               ? "cuSOLVER rejected argument " + std::to_string(-i) + " (a texpr bug: please report it)"
                               : std::string(why) + " (at order " + std::to_string(i) + ")");
  });
}

}  // namespace cuda_impl
}  // namespace texpr::detail

namespace texpr::cuda_kernels {

template <class N, class T, std::size_t R>
void cusolver_potrf::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's potrf takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto s = n.shape();
  const index_t m = s[R - 1];
  index_t batches = 1;
  for (std::size_t d = 0; d + 2 < R; ++d) batches *= s[d];  // a tensor's extents: their product was checked
  const stream_t stream = detail::resolve_stream(ctx.stream);
  T* out = dest.data();
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(batches * m * m);
  if (out != a.data()) detail::memory<cuda>::copy(out, a.data(), bytes, stream);
  if (batches == 0 || m == 0) return;
  cusolverDnHandle_t h = ci::cusolver_handle();
  cusolverDnParams_t params = ci::cusolver_params();
  TEXPR_CUDA_CHECK(cusolverDnSetStream(h, stream));
  constexpr cudaDataType_t type = ci::solver_type<T>;
  std::size_t device_bytes = 0, host_bytes = 0;
  TEXPR_CUDA_CHECK(cusolverDnXpotrf_bufferSize(h, params, CUBLAS_FILL_MODE_UPPER, m, type, out, m, type, &device_bytes,
                                               &host_bytes));
  const detail::device_scratch workspace(device_bytes, stream);
  std::vector<unsigned char> host_workspace(host_bytes);
  auto* info =
      static_cast<int*>(detail::memory<cuda>::allocate(sizeof(int) * static_cast<std::size_t>(batches), stream));
  try {
    for (index_t q = 0; q < batches; ++q)  // row-major lower = cuSOLVER's upper
      TEXPR_CUDA_CHECK(cusolverDnXpotrf(h, params, CUBLAS_FILL_MODE_UPPER, m, type, out + q * m * m, m, type,
                                        workspace.p, device_bytes, host_bytes ? host_workspace.data() : nullptr,
                                        host_bytes, info + q));
    const index_t total = batches * m * m;
    ci::zero_above_diagonal<T>
        <<<ci::grid_for(ci::ceil_div(total, ci::block_threads)), ci::block_threads, 0, stream>>>(out, m, total);
    TEXPR_CUDA_CHECK_LAUNCH();
  } catch (...) {
    detail::memory<cuda>::release(info, stream);
    throw;
  }
  ci::defer_info_check(op::cholesky::name, info, batches, stream, "the matrix is not positive definite");
}

}  // namespace texpr::cuda_kernels

#endif  // __CUDACC__
