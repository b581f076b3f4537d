// matmul on the GPU through cuBLAS (cublasGemmStridedBatchedEx): float (TF32 opt-in), double, half and
// bfloat16 (fp32 accumulation). One cached cuBLAS handle per device and thread, its stream set per call.
#pragma once

#if defined(__CUDACC__)

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <string>
#include <type_traits>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"

namespace texpr {

namespace detail::cuda_impl {
inline std::atomic<bool>& tf32_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}
} // namespace detail::cuda_impl

/// Lets float matmul use TF32 tensor cores (about 10 mantissa bits per product, much faster); off by
/// default, so float matmul is exact fp32 unless you opt in. Process-wide; affects later evaluations only.
inline void set_cuda_tf32(bool enabled) noexcept { detail::cuda_impl::tf32_flag().store(enabled, std::memory_order_relaxed); }

/// Whether float matmul may use TF32 (see set_cuda_tf32).
inline bool cuda_tf32() noexcept { return detail::cuda_impl::tf32_flag().load(std::memory_order_relaxed); }

namespace detail::cuda_impl {

/// One cuBLAS handle per device for the calling thread, created on first use, destroyed at thread exit.
inline cublasHandle_t cublas_handle() {
  struct cache {
    cublasHandle_t h[64] = {};
    ~cache() {
      for (auto& x : h)
        if (x) (void)cublasDestroy(x);  // errors at exit have nobody to report to
    }
  };
  thread_local cache handles;
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) throw cuda_error("cudaGetDevice(&dev)", "device ordinal beyond texpr's 64-device cache", __FILE__, __LINE__, 0);
  if (!handles.h[dev]) TEXPR_CUDA_CHECK(cublasCreate(&handles.h[dev]));
  return handles.h[dev];
}

template <class T> struct gemm_types;
template <> struct gemm_types<float> {
  static constexpr cudaDataType_t data = CUDA_R_32F;
  using scale = float;
  static cublasComputeType_t compute() { return cuda_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F; }
};
template <> struct gemm_types<double> {
  static constexpr cudaDataType_t data = CUDA_R_64F;
  using scale = double;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_64F; }
};
template <> struct gemm_types<half> {
  static constexpr cudaDataType_t data = CUDA_R_16F;
  using scale = float;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_32F; }
};
template <> struct gemm_types<bfloat16> {
  static constexpr cudaDataType_t data = CUDA_R_16BF;
  using scale = float;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_32F; }
};

inline int blas_int(index_t v, const char* what) {
  if (v > INT_MAX)
    throw shape_error(std::string("texpr: matmul ") + what + " of " + std::to_string(v) +
                      " exceeds cuBLAS's 32-bit limit; split the product");
  return static_cast<int>(v);
}

/// C[b] = A[b] B[b], row-major and contiguous, for b < batch; a step of 0 shares that matrix across batches.
/// cuBLAS is column-major, so it computes C^T = B^T A^T: row-major buffers read as column-major are the
/// transposes, and no data moves.
template <class T>
void gemm(index_t batch, index_t m, index_t n, index_t k, const T* a, index_t a_step, const T* b, index_t b_step,
          T* c, index_t c_step, stream_t stream) {
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: C = 0 (cuBLAS's beta path is not relied on for this)
    TEXPR_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(T) * static_cast<std::size_t>(batch * m * n), stream));
    return;
  }
  using types = gemm_types<T>;
  const typename types::scale alpha(1), beta(0);
  cublasHandle_t h = cublas_handle();
  TEXPR_CUDA_CHECK(cublasSetStream(h, stream));
  TEXPR_CUDA_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, blas_int(n, "dimension n"),
                                              blas_int(m, "dimension m"), blas_int(k, "dimension k"), &alpha, b,
                                              types::data, blas_int(n, "dimension n"), b_step, a, types::data,
                                              blas_int(k, "dimension k"), a_step, &beta, c, types::data,
                                              blas_int(n, "dimension n"), c_step, blas_int(batch, "batch"),
                                              types::compute(), CUBLAS_GEMM_DEFAULT));
}

} // namespace detail::cuda_impl
} // namespace texpr

#endif // __CUDACC__
