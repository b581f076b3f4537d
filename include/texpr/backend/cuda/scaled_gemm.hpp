// cuda_kernels::cublaslt_gemm: scaled_matmul of 8-bit operands on the GPU through cuBLASLt (cublasLtMatmul): int8
// with int32 accumulation (CUBLAS_COMPUTE_32I), float8_e4m3 with float accumulation and output (FP8 tensor cores,
// sm_89+), the per-tensor scales folded into alpha. One cached cuBLASLt handle per device and thread.
#pragma once

#if defined(__CUDACC__)

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <type_traits>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/gemm.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/eval/matmul_plan.hpp"
#include "texpr/eval/read.hpp"

namespace texpr {
namespace detail::cuda_impl {

/// One cuBLASLt handle per device for the calling thread, created on first use, destroyed at thread exit.
inline cublasLtHandle_t cublaslt_handle() {
  struct cache {
    cublasLtHandle_t h[64] = {};
    ~cache() {
      for (auto& x : h)
        if (x) (void)cublasLtDestroy(x);  // errors at exit have nobody to report to
    }
  };
  thread_local cache handles;
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64) throw cuda_error("cudaGetDevice(&dev)", "device ordinal beyond texpr's 64-device cache", __FILE__, __LINE__, 0);
  if (!handles.h[dev]) TEXPR_CUDA_CHECK(cublasLtCreate(&handles.h[dev]));
  return handles.h[dev];
}

/// cuBLASLt's types for 8-bit operands of dtype T: operands, result, scale (alpha) and compute.
template <class T> struct lt_types;
template <> struct lt_types<std::int8_t> {
  static constexpr cudaDataType_t in = CUDA_R_8I, out = CUDA_R_32I, scale = CUDA_R_32I;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32I;
};
template <> struct lt_types<float8_e4m3> {
  static constexpr cudaDataType_t in = CUDA_R_8F_E4M3, out = CUDA_R_32F, scale = CUDA_R_32F;
  static constexpr cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};

/// Destroys a cuBLASLt descriptor at scope exit.
template <class H, cublasStatus_t (*Destroy)(H)> struct lt_owned {
  H h = nullptr;
  ~lt_owned() {
    if (h) (void)Destroy(h);
  }
};

/// C (batch of m x n, row-major, contiguous, R) = scale * A B for 8-bit operands, A row-major and B column-major
/// (each matrix's k elements contiguous: cuBLASLt's 8-bit GEMMs take only the "TN" layout). As for cuBLAS, C^T =
/// B^T A^T in column-major terms: B (its transpose contiguous) is the transposed first operand, A the second.
template <class T, std::size_t BR, class R>
void lt_gemm(const matmul_plan<T, BR>& p, R* c, float scale, tensor<std::int8_t, 1, cuda>& workspace, stream_t stream) {
  const index_t batches = p.batch_count();
  if (batches == 0 || p.m == 0 || p.n == 0) return;
  if (p.k == 0) {
    TEXPR_CUDA_CHECK(cudaMemsetAsync(c, 0, sizeof(R) * static_cast<std::size_t>(batches * p.m * p.n), stream));
    return;
  }
  using types = lt_types<T>;
  const int m = blas_int(p.m, "dimension m"), n = blas_int(p.n, "dimension n"), k = blas_int(p.k, "dimension k");
  // A: its row stride, B: its column stride (a vector's is k: it is one row, or one column)
  const std::int64_t lda = p.m == 1 ? p.k : p.a.rs, ldb = p.n == 1 ? p.k : p.b.cs;
  lt_owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> op;
  TEXPR_CUDA_CHECK(cublasLtMatmulDescCreate(&op.h, types::compute, types::scale));
  const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  TEXPR_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op.h, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof transposed));
  TEXPR_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op.h, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain));
  // cuBLAS's first operand is our B seen transposed: stored as k x n column-major (ld = B's column stride).
  lt_owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> la, lb, lc;
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&la.h, types::in, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(n), ldb));
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lb.h, types::in, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(m), lda));
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lc.h, types::out, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(m), n));
  lt_owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref;
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref.h));
  const std::uint64_t ws = static_cast<std::uint64_t>(workspace.size());
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtHandle_t h = cublaslt_handle();
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  TEXPR_CUDA_CHECK(cublasLtMatmulAlgoGetHeuristic(h, op.h, la.h, lb.h, lc.h, lc.h, pref.h, 1, &best, &found));
  if (found == 0)
    throw shape_error("texpr: scaled_matmul of " + std::string(dtype_name_v<T>) + " (" + std::to_string(p.m) + " x " +
                      std::to_string(p.k) + ") by (" + std::to_string(p.k) + " x " + std::to_string(p.n) +
                      "): cuBLASLt has no algorithm for these extents (8-bit GEMMs need k, and the leading "
                      "dimensions, multiples of 16 bytes); pad the operands");
  using scale_t = std::conditional_t<std::is_same_v<T, std::int8_t>, std::int32_t, float>;
  const scale_t alpha = static_cast<scale_t>(scale), beta = 0;
  for (index_t q = 0; q < batches; ++q) {
    const auto [oa, ob] = p.offsets(q);
    R* out = c + q * p.m * p.n;
    TEXPR_CUDA_CHECK(cublasLtMatmul(h, op.h, &alpha, p.b.data + ob, la.h, p.a.data + oa, lb.h, &beta, out, lc.h, out, lc.h,
                                    &best.algo, workspace.data(), workspace.size(), stream));
  }
}

} // namespace detail::cuda_impl

namespace cuda_kernels {

template <class N, class T, std::size_t R>
void cublaslt_gemm::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  using namespace detail;
  using In = typename N::kernel_dtype;
  const auto va = materialize(get<0>(n.operands()), ctx);
  const auto vb = materialize(get<1>(n.operands()), ctx);
  auto p = make_matmul_plan(n, va, vb);
  // The "TN" layout: A's rows and B's columns contiguous. A is copied row-major otherwise; B is copied as the
  // contiguous transpose of its matrices (its column-major form).
  if (!(p.a.cs == 1 || p.k == 1) || (p.m > 1 && p.a.rs < p.k)) {
    const auto c = materialize_contiguous(va, ctx);
    p.a.data = c.data();
    p.a.rs = p.k;
    p.a.cs = 1;
    fill_batch_strides(c, std::remove_cvref_t<decltype(get<0>(n.operands()))>::rank >= 2 ? 2 : 1, p.batch, p.a.batch_strides);
  }
  if (!(p.b.rs == 1 || p.k == 1) || (p.n > 1 && p.b.cs < p.k)) {
    constexpr std::size_t RB = std::remove_cvref_t<decltype(get<1>(n.operands()))>::rank;
    if constexpr (RB >= 2) {
      auto shape = vb.shape(), strides = vb.strides();
      std::swap(shape[RB - 1], shape[RB - 2]);
      std::swap(strides[RB - 1], strides[RB - 2]);
      const view<const In, RB, cuda> transposed(unchecked_t{}, vb.data(), shape, strides, vb.stream());
      const auto c = materialize_contiguous(transposed, ctx);  // (..., n, k) contiguous: B column-major
      p.b.data = c.data();
      p.b.rs = 1;
      p.b.cs = p.k;
      fill_batch_strides(c, 2, p.batch, p.b.batch_strides);
    } else {
      const auto c = materialize_contiguous(vb, ctx);  // a vector: (k) contiguous is one column
      p.b.data = c.data();
      p.b.rs = 1;
      p.b.cs = p.k;
    }
  }
  constexpr index_t workspace_bytes = index_t(32) << 20;
  auto& workspace = temporary<std::int8_t, 1, cuda>(shape_t<1>{workspace_bytes}, ctx);
  cuda_impl::lt_gemm(p, dest.data(), n.scale(), workspace, ctx.stream);
}

} // namespace cuda_kernels
} // namespace texpr

#endif // __CUDACC__
