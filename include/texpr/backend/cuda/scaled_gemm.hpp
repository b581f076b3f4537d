// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuda_kernels::cublaslt_gemm: scaled_matmul of 8-bit operands on the GPU through cuBLASLt (cublasLtMatmul): int8
// with int32 accumulation (CUBLAS_COMPUTE_32I), float8_e4m3 with float accumulation and output (FP8 tensor cores,
// sm_89+), the per-tensor scales folded into alpha. One cached cuBLASLt handle per device and thread, and one
// cached plan (descriptors, algorithm) per shape.
#pragma once

#if defined(__CUDACC__)

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
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

/// One cuBLASLt handle per device for the calling thread.
inline cublasLtHandle_t cublaslt_handle() {
  return per_device_handle<cublasLtHandle_t, cublasStatus_t, &cublasLtCreate, &cublasLtDestroy>();
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

/// Destroys a cuBLASLt descriptor with its owner.
template <class H, cublasStatus_t (*Destroy)(H)> struct lt_owned {
  H h = nullptr;
  lt_owned() = default;
  lt_owned(const lt_owned&) = delete;
  lt_owned& operator=(const lt_owned&) = delete;
  ~lt_owned() {
    if (h) (void)Destroy(h);
  }
};

/// The descriptors and the algorithm of one GEMM shape, chosen once per thread, device and shape (the heuristic
/// query and the descriptors cost tens of microseconds: a tenth of a large FP8 GEMM's time on a fast GPU).
struct lt_plan {
  lt_owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> op;
  lt_owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> la, lb, lc;
  cublasLtMatmulAlgo_t algo{};
  bool found = false;
};

/// The largest power of two (at most 256) dividing base's address and every step in bytes: what cuBLASLt may
/// assume of every pointer a GEMM over these batches passes (it assumes 256 unless told).
inline std::uint32_t lt_alignment(const void* base, std::uintptr_t step_bytes) {
  const std::uintptr_t bits = reinterpret_cast<std::uintptr_t>(base) | step_bytes | 256u;
  return static_cast<std::uint32_t>(bits & (~bits + 1));
}

/// The cached plan for (device, 8-bit dtype T, m, n, k, lda, ldb, the operands' and result's alignments) with a
/// workspace of ws bytes.
template <class T>
const lt_plan& lt_plan_for(int m, int n, int k, std::int64_t lda, std::int64_t ldb, std::uint32_t align_a,
                           std::uint32_t align_b, std::uint32_t align_c, std::uint64_t ws) {
  using types = lt_types<T>;
  using key_t = std::tuple<int, int, int, int, std::int64_t, std::int64_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>;
  thread_local std::map<key_t, std::unique_ptr<lt_plan>> plans;
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  auto& slot = plans[key_t{dev, m, n, k, lda, ldb, align_a, align_b, align_c, ws}];
  if (slot) return *slot;
  auto p = std::make_unique<lt_plan>();
  TEXPR_CUDA_CHECK(cublasLtMatmulDescCreate(&p->op.h, types::compute, types::scale));
  const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  TEXPR_CUDA_CHECK(cublasLtMatmulDescSetAttribute(p->op.h, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof transposed));
  TEXPR_CUDA_CHECK(cublasLtMatmulDescSetAttribute(p->op.h, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain));
  // cuBLAS's first operand is our B seen transposed: stored as k x n column-major (ld = B's column stride).
  const auto u = [](int v) { return static_cast<std::uint64_t>(v); };
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&p->la.h, types::in, u(k), u(n), ldb));
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&p->lb.h, types::in, u(k), u(m), lda));
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&p->lc.h, types::out, u(n), u(m), n));
  lt_owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref;
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref.h));
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  // cuBLAS's A is our B, its B our A.
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b, sizeof align_b));
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a, sizeof align_a));
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof align_c));
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.h, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof align_c));
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  TEXPR_CUDA_CHECK(cublasLtMatmulAlgoGetHeuristic(cublaslt_handle(), p->op.h, p->la.h, p->lb.h, p->lc.h, p->lc.h, pref.h, 1,
                                                  &best, &found));
  p->algo = best.algo;
  p->found = found > 0;
  slot = std::move(p);
  return *slot;
}

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
  const int m = blas_int(p.m, "dimension m"), n = blas_int(p.n, "dimension n"), k = blas_int(p.k, "dimension k");
  // A: its row stride, B: its column stride (a vector's is k: it is one row, or one column)
  const std::int64_t lda = p.m == 1 ? p.k : p.a.rs, ldb = p.n == 1 ? p.k : p.b.cs;
  std::uintptr_t a_steps = 0, b_steps = 0;  // every batch offset is a sum of these (elements are bytes)
  for (std::size_t d = 0; d != BR; ++d) {
    a_steps |= static_cast<std::uintptr_t>(p.a.batch_strides[d]);
    b_steps |= static_cast<std::uintptr_t>(p.b.batch_strides[d]);
  }
  const lt_plan& plan = lt_plan_for<T>(m, n, k, lda, ldb, lt_alignment(p.a.data, a_steps), lt_alignment(p.b.data, b_steps),
                                       lt_alignment(c, static_cast<std::uintptr_t>(p.m * p.n) * sizeof(R)),
                                       static_cast<std::uint64_t>(workspace.size()));
  if (!plan.found)
    throw shape_error("texpr: scaled_matmul of " + std::string(dtype_name_v<T>) + " (" + std::to_string(p.m) + " x " +
                      std::to_string(p.k) + ") by (" + std::to_string(p.k) + " x " + std::to_string(p.n) +
                      "): cuBLASLt has no algorithm for these extents (8-bit GEMMs need k, and the leading "
                      "dimensions, multiples of 16 bytes); pad the operands");
  using scale_t = std::conditional_t<std::is_same_v<T, std::int8_t>, std::int32_t, float>;
  const scale_t alpha = static_cast<scale_t>(scale), beta = 0;
  cublasLtHandle_t h = cublaslt_handle();
  for (index_t q = 0; q < batches; ++q) {
    const auto [oa, ob] = p.offsets(q);
    R* out = c + q * p.m * p.n;
    TEXPR_CUDA_CHECK(cublasLtMatmul(h, plan.op.h, &alpha, p.b.data + ob, plan.la.h, p.a.data + oa, plan.lb.h, &beta, out,
                                    plan.lc.h, out, plan.lc.h, &plan.algo, workspace.data(), workspace.size(), stream));
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
