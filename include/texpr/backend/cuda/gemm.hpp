// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_kernels::cublas_gemm: matmul on the GPU through cuBLAS (cublasGemmStridedBatchedEx): float (TF32 opt-in),
// double, half and bfloat16 (fp32 accumulation), complex64 and complex128 (CUDA_C_32F / CUDA_C_64F). One cached
// cuBLAS handle per device and thread, its stream set per call. Transposed, vector and batch-broadcast operands are
// read in place.
#pragma once

#if defined(__CUDACC__)

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <complex>
#include <stdexcept>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <type_traits>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/eval/matmul_plan.hpp"

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

/// One library handle per device for the calling thread (cuBLAS, cuBLASLt), made by Create on first use and
/// released by Destroy at thread exit.
template <class Handle, class Status, Status (*Create)(Handle*), Status (*Destroy)(Handle)> Handle per_device_handle() {
  struct cache {
    Handle h[64] = {};
    ~cache() {
      for (auto& x : h)
        if (x) (void)Destroy(x);  // errors at exit have nobody to report to
    }
  };
  thread_local cache handles;
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) throw cuda_error("cudaGetDevice(&dev)", "device ordinal beyond texpr's 64-device cache", __FILE__, __LINE__, 0);
  if (!handles.h[dev]) TEXPR_CUDA_CHECK(Create(&handles.h[dev]));
  return handles.h[dev];
}

/// One cuBLAS handle per device for the calling thread.
inline cublasHandle_t cublas_handle() { return per_device_handle<cublasHandle_t, cublasStatus_t, &cublasCreate, &cublasDestroy>(); }

/// cuBLAS's workspace for GEMMs on `stream` (32 MiB on compute capability 9.x, 4 MiB before, as cuBLAS
/// recommends): allocated once per device and stream outside texpr's block cache and kept until the process ends,
/// so that cuBLAS never allocates inside a GEMM (which it would do inside a CUDA graph capture).
struct cublas_workspace {
  void* p = nullptr;
  std::size_t bytes = 0;
};
inline cublas_workspace workspace_for(stream_t stream) {
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  static std::mutex mutex;
  static auto* spaces = new std::map<std::pair<int, stream_t>, cublas_workspace>;  // never destroyed: used at exit
  std::lock_guard<std::mutex> lock(mutex);
  cublas_workspace& w = (*spaces)[{dev, stream}];
  if (!w.p) {
    int major = 0;
    TEXPR_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    const std::size_t bytes = std::size_t(major >= 9 ? 32 : 4) << 20;
    TEXPR_CUDA_CHECK(cudaMalloc(&w.p, bytes));
    w.bytes = bytes;
    kernel_log::record_allocation(bytes);
  }
  return w;
}

/// Points handle h at `stream` and at the workspace texpr keeps for it (cublasSetStream resets the workspace to
/// cuBLAS's own pool, so both are set together).
inline void bind_cublas(cublasHandle_t h, stream_t stream) {
  const cublas_workspace w = workspace_for(stream);
  TEXPR_CUDA_CHECK(cublasSetStream(h, stream));
  TEXPR_CUDA_CHECK(cublasSetWorkspace(h, w.p, w.bytes));
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

// The complex dtypes (std::complex<T> has cuComplex's and cuDoubleComplex's layout): cuBLAS's cgemm and zgemm through
// the same call, with complex scales and fp32 / fp64 compute (TF32 stays a float-matmul opt-in).
template <> struct gemm_types<std::complex<float>> {
  static constexpr cudaDataType_t data = CUDA_C_32F;
  using scale = std::complex<float>;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_32F; }
};
template <> struct gemm_types<std::complex<double>> {
  static constexpr cudaDataType_t data = CUDA_C_64F;
  using scale = std::complex<double>;
  static cublasComputeType_t compute() { return CUBLAS_COMPUTE_64F; }
};

inline int blas_int(index_t v, const char* what) {
  if (v > INT_MAX)
    throw shape_error(std::string("texpr: matmul ") + what + " of " + std::to_string(v) +
                      " exceeds cuBLAS's 32-bit limit; split the product");
  return static_cast<int>(v);
}

/// How cuBLAS (column-major) reads an operand whose element (i, j) is at i * rs + j * cs, as the matrix of
/// `rows` x `cols` it must see: untransposed when columns are contiguous in cuBLAS's sense, else transposed.
struct blas_operand {
  cublasOperation_t op = CUBLAS_OP_N;
  index_t ld = 1;
  bool ok = false;  // false: neither stride is 1 (the operand is copied to contiguous memory first)
};

/// Our row-major operand X (r x c, strides rs, cs) is, to cuBLAS, the column-major matrix X^T (c x r). cuBLAS
/// multiplies op(M) with M column-major of leading dimension ld: X^T with op N needs cs == 1 (ld = rs); X with op T
/// (X^T = op(X)) needs rs == 1 (ld = cs). A dimension of 1 has no stride to speak of.
inline blas_operand blas_layout(index_t r, index_t c, index_t rs, index_t cs) {
  blas_operand o;
  if (cs == 1 || c == 1) {
    o.op = CUBLAS_OP_N;
    o.ld = r == 1 ? (c > 1 ? c : 1) : rs;
    o.ok = o.ld >= (c > 1 ? c : 1);
  }
  if (!o.ok && (rs == 1 || r == 1)) {
    o.op = CUBLAS_OP_T;
    o.ld = c == 1 ? (r > 1 ? r : 1) : cs;
    o.ok = o.ld >= (r > 1 ? r : 1);
  }
  return o;
}

/// C (batch of m x n, row-major, contiguous) = A B for a plan's operands (strided, batch-broadcast). cuBLAS computes
/// C^T = B^T A^T: our row-major buffers are the transposes in its column-major terms, and no data moves.
template <class T, std::size_t BR>
void gemm(const matmul_plan<T, BR>& p, T* c, stream_t stream) {
  const index_t batches = p.batch_count();
  if (batches == 0 || p.m == 0 || p.n == 0) return;
  if (p.k == 0) {  // an empty sum: C = 0 (cuBLAS's beta path is not relied on for this)
    TEXPR_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(T) * static_cast<std::size_t>(batches * p.m * p.n), stream));
    return;
  }
  const blas_operand lb = blas_layout(p.k, p.n, p.b.rs, p.b.cs);  // the first cuBLAS operand: B^T (n x k)
  const blas_operand la = blas_layout(p.m, p.k, p.a.rs, p.a.cs);  // the second: A^T (k x m)
  if (!la.ok || !lb.ok) throw std::logic_error("texpr: cuBLAS operand layout (copied to contiguous before)");
  using types = gemm_types<T>;
  const typename types::scale alpha(1), beta(0);
  cublasHandle_t h = cublas_handle();
  bind_cublas(h, stream);
  // The last batch dimension is cuBLAS's strided batch; any others are a loop here.
  const index_t inner = BR > 0 ? p.batch[BR > 0 ? BR - 1 : 0] : 1;
  const index_t a_step = BR > 0 ? p.a.batch_strides[BR > 0 ? BR - 1 : 0] : 0;
  const index_t b_step = BR > 0 ? p.b.batch_strides[BR > 0 ? BR - 1 : 0] : 0;
  for (index_t q = 0; q < batches; q += inner) {
    const auto [oa, ob] = p.offsets(q);
    TEXPR_CUDA_CHECK(cublasGemmStridedBatchedEx(
        h, lb.op, la.op, blas_int(p.n, "dimension n"), blas_int(p.m, "dimension m"), blas_int(p.k, "dimension k"), &alpha,
        p.b.data + ob, types::data, blas_int(lb.ld, "leading dimension"), b_step, p.a.data + oa, types::data,
        blas_int(la.ld, "leading dimension"), a_step, &beta, c + q * p.m * p.n, types::data, blas_int(p.n, "dimension n"),
        p.m * p.n, blas_int(inner, "batch"), types::compute(), CUBLAS_GEMM_DEFAULT));
  }
}

} // namespace detail::cuda_impl

namespace cuda_kernels {

template <class N, class T, std::size_t R>
void cublas_gemm::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using namespace detail;
  const auto va = materialize(get<0>(n.operands()), ctx);
  const auto vb = materialize(get<1>(n.operands()), ctx);
  auto p = make_matmul_plan(n, va, vb);
  // An operand whose rows and columns both have a stride other than 1 cannot be a cuBLAS matrix: copy it (from the
  // memory above: its operand is not evaluated twice).
  if (!reads_in_place(p.m, p.k, p.a.rs, p.a.cs)) {
    const auto c = materialize_contiguous(va, ctx);
    p.a.data = c.data();
    p.a.rs = p.k;
    p.a.cs = 1;
    fill_batch_strides(c, std::remove_cvref_t<decltype(get<0>(n.operands()))>::rank >= 2 ? 2 : 1, p.batch, p.a.batch_strides);
  }
  if (!reads_in_place(p.k, p.n, p.b.rs, p.b.cs)) {
    const auto c = materialize_contiguous(vb, ctx);
    p.b.data = c.data();
    p.b.rs = p.n;
    p.b.cs = 1;
    fill_batch_strides(c, std::remove_cvref_t<decltype(get<1>(n.operands()))>::rank >= 2 ? 2 : 1, p.batch, p.b.batch_strides);
  }
  cuda_impl::gemm(p, dest.data(), ctx.stream);
}

} // namespace cuda_kernels
} // namespace texpr

#endif // __CUDACC__
