// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda kernel registry: one row per op that runs on the GPU, with its dtypes and the implementation that runs
// it. Read it as a table. It needs no CUDA headers, so any compiler can check placement; the implementations'
// bodies (backend/cuda/*.hpp) compile only under nvcc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "texpr/backend/cuda/half_pairs.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/op/composite.hpp"
#include "texpr/op/elementwise.hpp"
#include "texpr/op/generator.hpp"
#include "texpr/op/indexing.hpp"
#include "texpr/op/layout.hpp"
#include "texpr/op/linalg.hpp"
#include "texpr/op/matmul.hpp"
#include "texpr/op/reduction.hpp"
#include "texpr/op/scan.hpp"
#include "texpr/op/sort.hpp"
#include "texpr/registry/kernel.hpp"
#include "texpr/tensor/view.hpp"

/// The cuda backend's implementations. Each is what a row names: its entry point is what evaluation calls, and
/// its name is what tx::placement prints.
namespace texpr::cuda_kernels {

/// One fused kernel per evaluated elementwise tree: vector loads when aligned, grid-stride (elementwise.hpp).
struct fused_elementwise {
  static constexpr std::string_view name = "fused_elementwise";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// One element of an elementwise op (16-bit floats computed in float), on host and device.
  template <class Op, class R, class... V> TEXPR_HOST_DEVICE static R apply(V... v) { return detail::apply_op<Op, R>(v...); }
  /// N elements at once, bitwise apply's results; on the device 16-bit results two at a time (half_pairs.hpp).
  template <class Op, class R, int N, class... V>
  TEXPR_HOST_DEVICE static void apply_n(R (&out)[N], const V (&... in)[N]) {
    detail::cuda_impl::apply_pairs<Op, R>(out, in...);
  }
  /// dest = acc, elementwise, enqueued on ctx.stream; dest may be strided.
  template <class T, std::size_t R, class Acc> static void assign(const view<T, R, cuda>& dest, const Acc& acc, context<cuda>& ctx);
  /// What tx::placement and tx::kernel_log name the launch that also writes the column sums.
  static constexpr std::string_view column_sums_name = "fused_elementwise_column_sums";
  /// dest = acc (dest contiguous), and sums[c] = the sum of dest viewed as [size / cols, cols] over its rows, in
  /// the same launch (column_sums.hpp).
  template <class T, std::size_t R, class Acc>
  static void assign_with_column_sums(const view<T, R, cuda>& dest, const Acc& acc, T* sums, index_t cols, context<cuda>& ctx);
};

/// A layout as the operand's memory with other extents and strides: no kernel, no copy (layout.hpp).
struct strided_view {
  static constexpr std::string_view name = "strided_view";  ///< Shown by tx::placement.
  /// Enqueues nothing (a view of memory): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// The memory layout node n describes.
  template <class N> static texpr::view<const typename N::value_type, N::rank, cuda> view_of(const N& n, context<cuda>& ctx);
};

/// A composite op (softmax, log_softmax, cross_entropy, layer_norm, the indexing ops): operands evaluated once into memory, then
/// the op's expansion, whose passes are other rows of this table (layout.hpp).
struct composed {
  static constexpr std::string_view name = "composed";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// dest = the composite node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// Softmax cross-entropy in one launch: a warp per row, the mean finished by the last block (cross_entropy.hpp).
/// Runs the composite itself, so tx::placement lists its operands and this kernel, not an expansion.
struct row_cross_entropy {
  static constexpr std::string_view name = "row_cross_entropy";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// The composite is computed directly, not expanded into other rows.
  static constexpr bool runs_composite = true;
  /// dest = the cross_entropy node n (rank 0), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// Cross-entropy's gradient with respect to its logits in one launch: a warp per row finds the row's shift and
/// sum of exp, then writes (softmax - one_hot) * scale * g / batch (cross_entropy.hpp). Runs the composite itself.
struct row_cross_entropy_grad {
  static constexpr std::string_view name = "row_cross_entropy_grad";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// The composite is computed directly, not expanded into other rows.
  static constexpr bool runs_composite = true;
  /// dest = the cross_entropy_grad node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
  /// What tx::placement and tx::kernel_log name the launch that also writes the column sums.
  static constexpr std::string_view column_sums_name = "row_cross_entropy_grad_column_sums";
  /// run, and sums[c] = the sum of dest's column c (cols = its classes), in the same launch.
  template <class N, class T, std::size_t R>
  static void run_with_column_sums(const N& n, const view<T, R, cuda>& dest, T* sums, index_t cols, context<cuda>& ctx);
};

/// Concatenation: each operand evaluated by a fused kernel into its slice of the destination (layout.hpp).
struct copy_slices {
  static constexpr std::string_view name = "copy_slices";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// dest = the concat node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// Warp and block tree reductions, over everything in two passes (one pass per block, then one block), along an
/// axis a warp or a block per line (reduce.hpp).
struct block_reduce {
  static constexpr std::string_view name = "block_reduce";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// dest = the reduction node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// Scans along an axis: a block per line (a warp-shuffle scan per tile, a carry between tiles), or a thread per
/// line when there are many lines along an inner axis; the operand read fused (scan.hpp).
struct block_scan {
  static constexpr std::string_view name = "block_scan";  ///< Shown by tx::placement.
  /// Enqueues one kernel and nothing else (no host wait, no allocation): may run inside a CUDA graph capture
  /// (tx::capturable).
  static constexpr bool capture_safe = true;
  /// dest = the scan node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// sort, argsort and topk: each line's order keys (the operand read fused) with their payloads (the value, or the
/// position) sorted by CUB's radix sorts, cub::DeviceSegmentedRadixSort for several lines (a block per line, stable,
/// capturable: CUB's DeviceSegmentedSort waits for the host between its kernels) or cub::DeviceRadixSort for one;
/// topk keeps each line's first k (sort.hpp, with texpr/sort.hpp).
struct cub_radix_sort {
  static constexpr std::string_view name = "cub_radix_sort";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// dest = the ordering node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// scatter: a zeroing memset, then a thread per element of g writing it at its (distinct) position (sort.hpp).
struct scatter_rows {
  static constexpr std::string_view name = "scatter_rows";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// dest = the scatter node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// cuBLAS (cublasGemmStridedBatchedEx): fp32 (TF32 opt-in), fp64, and fp16/bf16 with fp32 accumulation; complex64
/// and complex128 as CUDA_C_32F / CUDA_C_64F (cuBLAS's cgemm/zgemm; fp32 and fp64 compute, no TF32) (gemm.hpp).
struct cublas_gemm {
  static constexpr std::string_view name = "cublas_gemm";  ///< Shown by tx::placement.
  /// Enqueues only stream-ordered work (no host wait, no host read of device data, allocations from texpr's device
  /// cache): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// Whether cuBLAS reads an (r x c) operand with row stride rs and column stride cs in place: one unit stride and
  /// a leading dimension no smaller than the other extent. run copies any other operand to contiguous memory
  /// first, and tx::placement lists that copy.
  static constexpr bool reads_in_place(index_t r, index_t c, index_t rs, index_t cs) {
    const index_t cw = c > 1 ? c : 1, rw = r > 1 ? r : 1;
    if ((cs == 1 || c == 1) && (r == 1 ? cw : rs) >= cw) return true;
    return (rs == 1 || r == 1) && (c == 1 ? rw : cs) >= rw;
  }
  /// dest = the matmul node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// cuBLASLt (cublasLtMatmul): scaled_matmul of int8 (int32 accumulation) and float8_e4m3 (float accumulation and
/// output, sm_89+), the scales folded into alpha; operands copied to its "TN" layout when they are not in it
/// (scaled_gemm.hpp). cuBLASLt has no float8_e5m2 x float8_e5m2 GEMM.
struct cublaslt_gemm {
  static constexpr std::string_view name = "cublaslt_gemm";  ///< Shown by tx::placement.
  /// dest = the scaled_matmul node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// solve_triangular through cuBLAS's 64-bit trsm, a call per matrix on the thread's cached cuBLAS handle: the row-major
/// A, B and X are column-major Aᵀ, Bᵀ and Xᵀ, so each matrix is the right-side solve Xᵀ Aᵀ = Bᵀ in the result, with
/// no transpose (linalg.hpp). trsm checks nothing, so a kernel writes each matrix's first zero on the diagonal as
/// `info`: tx::linalg_error at the next copy to the host, as LAPACK's trtrs on the host.
struct cublas_trsm {
  static constexpr std::string_view name = "cublas_trsm";  ///< Shown by tx::placement.
  /// dest = the solve_triangular node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// qr (reduced) through cuSOLVER's 64-bit geqrf and its legacy orgqr (the 64-bit API has none), a call of each per
/// matrix of A itself (A transposed to columns first), then two kernels packing R's rows and Q's columns as
/// (..., k, m + n), as the host's lapack_geqrf_orgqr (linalg.hpp).
struct cusolver_geqrf_orgqr {
  static constexpr std::string_view name = "cusolver_geqrf_orgqr";  ///< Shown by tx::placement.
  /// dest = the qr node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// svd through cuSOLVER's 64-bit gesvd per matrix, which takes m >= n only: a wide (or square) row-major A is a tall
/// column-major Aᵀ as it is, whose U' and V' are A's V and U; a tall A is transposed to columns first. One kernel packs
/// [U's column r, s_r, Vᴴ's row r] as the host's lapack_gesdd (linalg.hpp). Non-convergence becomes
/// tx::linalg_error at the next copy to the host.
struct cusolver_gesvd {
  static constexpr std::string_view name = "cusolver_gesvd";  ///< Shown by tx::placement.
  /// dest = the svd node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// svdvals through cuSOLVER's 64-bit gesvd without vectors, the values straight into the result (linalg.hpp).
struct cusolver_gesvd_values {
  static constexpr std::string_view name = "cusolver_gesvd_values";  ///< Shown by tx::placement.
  /// dest = the svdvals node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// lstsq through cuSOLVER's 64-bit gesvd per matrix (A = U S Vᵀ, in cusolver_gesvd's tall layout), then X =
/// V diag(s⁺) Uᵀ B by two strided-batched cuBLAS GEMMs around one kernel that divides by the singular values above
/// NumPy's cutoff eps max(m, n) s_max (read on the device) and zeroes the rest, the minimum-norm solution as the host's
/// lapack_gelsd (linalg.hpp). Non-convergence becomes tx::linalg_error at the next copy to the host.
struct cusolver_gesvd_lstsq {
  static constexpr std::string_view name = "cusolver_gesvd_lstsq";  ///< Shown by tx::placement.
  /// dest = the lstsq node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// cuSOLVER's 64-bit generic potrf (cusolverDnXpotrf), a call per matrix of the batch on one cached handle per
/// device and thread, its workspace from texpr's device cache; `info` stays on the device until the next copy to
/// the host (memory.hpp's deferred_checks), where a failure becomes tx::linalg_error (linalg.hpp, with
/// texpr/linalg.hpp). cuSOLVER has no 16-bit factorisation.
struct cusolver_potrf {
  static constexpr std::string_view name = "cusolver_potrf";  ///< Shown by tx::placement.
  /// dest = the cholesky node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// solve through cuSOLVER's 64-bit getrf and getrs (LU with partial pivoting), a call of each per matrix, as
/// cusolver_potrf: the row-major A is cuSOLVER's Aᵀ, so getrs solves the transposed system (linalg.hpp). A singular
/// matrix becomes tx::linalg_error at the next copy to the host.
struct cusolver_getrf_getrs {
  static constexpr std::string_view name = "cusolver_getrf_getrs";  ///< Shown by tx::placement.
  /// dest = the solve node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// slogdet through cuSOLVER's 64-bit getrf per matrix, then one kernel writing [sign, log|det|] from U's diagonal
/// and the row swaps; a singular matrix gives sign 0 and log|det| -inf (not an error, as on the host; linalg.hpp).
struct cusolver_getrf_det {
  static constexpr std::string_view name = "cusolver_getrf_det";  ///< Shown by tx::placement.
  /// dest = the slogdet node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// eigh through cuSOLVER's 64-bit syevd (divide and conquer) per matrix, eigenvalues and eigenvectors, then one
/// kernel packing them as (..., n, 1 + n) (linalg.hpp). Non-convergence becomes tx::linalg_error at the next copy to
/// the host.
struct cusolver_syevd {
  static constexpr std::string_view name = "cusolver_syevd";  ///< Shown by tx::placement.
  /// dest = the eigh node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// eigvalsh through cuSOLVER's 64-bit syevd asked for eigenvalues only, written straight into the result
/// (linalg.hpp).
struct cusolver_syevd_values {
  static constexpr std::string_view name = "cusolver_syevd_values";  ///< Shown by tx::placement.
  /// dest = the eigvalsh node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// lu_factor through cuSOLVER's 64-bit getrf per matrix of A itself (A transposed to columns first), then one kernel
/// packing LU's rows and the 1-based pivots as (..., n, n + 1) (linalg.hpp). A singular matrix becomes
/// tx::linalg_error at the next copy to the host.
struct cusolver_getrf {
  static constexpr std::string_view name = "cusolver_getrf";  ///< Shown by tx::placement.
  /// dest = the lu_factor node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

/// lu_solve through cuSOLVER's 64-bit getrs per matrix with lu_factor's LU and pivots (LU and B transposed to
/// columns, X back; linalg.hpp). Pivots outside 1..n become tx::linalg_error at the next copy to the host (getrs
/// is given the identity for them, so it never reads out of bounds).
struct cusolver_getrs {
  static constexpr std::string_view name = "cusolver_getrs";  ///< Shown by tx::placement.
  /// dest = the lu_solve node n (dest contiguous), enqueued on ctx.stream.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx);
};

} // namespace texpr::cuda_kernels

// clang-format off
/// The cuda table. Columns: op tag (in texpr::op; T is the dtype where the op depends on it), dtypes (the op's
/// declared set, adjusted), implementation, and the oldest GPU architecture the kernel runs on (any_arch; sm_80:
/// every dtype of the row needs sm_80 or newer; sm_80(set): those dtypes do). A graph checked for a build whose
/// targets include an older one does not compile (core/arch.hpp: the targets; docs/semantics.md). Differences
/// from the host table, all deliberate (tests/core/test_registry.cpp checks that there are no others): every op
/// that computes in floating point also takes the 16-bit floats (computed and accumulated in float), and matmul
/// has no integer kernel (cuBLAS has none), and scaled_matmul has no float8_e5m2 one (cuBLASLt pairs E5M2 only with
/// E4M3), and the linear algebra family (cuSOLVER and cuBLAS's trsm, with texpr/linalg.hpp: a row for each of its
/// ops) has no 16-bit floats (cuSOLVER has no 16-bit factorisation). cuBLAS has bfloat16 GEMMs from sm_80 on, int8
/// tensor cores from sm_75, FP8 ones from sm_89.
#define TEXPR_CUDA_REGISTRY(X) \
  X(add,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(subtract,       declared + half_floats,                    fused_elementwise,  any_arch) \
  X(multiply,       declared + half_floats,                    fused_elementwise,  any_arch) \
  X(divide,         declared + half_floats,                    fused_elementwise,  any_arch) \
  X(maximum,        declared + half_floats,                    fused_elementwise,  any_arch) \
  X(minimum,        declared + half_floats,                    fused_elementwise,  any_arch) \
  X(pow,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(elu,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(exp,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(log,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(sqrt,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(tanh,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(sigmoid,        declared + half_floats,                    fused_elementwise,  any_arch) \
  X(negate,         declared + half_floats,                    fused_elementwise,  any_arch) \
  X(abs,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(relu,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(log1p,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(expm1,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(softplus,       declared + half_floats,                    fused_elementwise,  any_arch) \
  X(gelu,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(gelu_grad,      declared + half_floats,                    fused_elementwise,  any_arch) \
  X(silu,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(mish,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(square,         declared + half_floats,                    fused_elementwise,  any_arch) \
  X(rsqrt,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(sign,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(floor,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(ceil,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(round,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(sin,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(cos,            declared + half_floats,                    fused_elementwise,  any_arch) \
  X(clamp,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(conj,           declared,                                  fused_elementwise,  any_arch) \
  X(real,           declared,                                  fused_elementwise,  any_arch) \
  X(imag,           declared,                                  fused_elementwise,  any_arch) \
  X(angle,          declared,                                  fused_elementwise,  any_arch) \
  X(make_complex,   declared,                                  fused_elementwise,  any_arch) \
  X(matmul,         complex_dtypes,                            cublas_gemm,        any_arch) \
  X(equal,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(not_equal,      declared + half_floats,                    fused_elementwise,  any_arch) \
  X(less,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(less_equal,     declared + half_floats,                    fused_elementwise,  any_arch) \
  X(greater,        declared + half_floats,                    fused_elementwise,  any_arch) \
  X(greater_equal,  declared + half_floats,                    fused_elementwise,  any_arch) \
  X(logical_and,    declared,                                  fused_elementwise,  any_arch) \
  X(logical_or,     declared,                                  fused_elementwise,  any_arch) \
  X(logical_not,    declared,                                  fused_elementwise,  any_arch) \
  X(where,          declared + half_floats,                    fused_elementwise,  any_arch) \
  X(cast<T>,        declared + eight_bit,                      fused_elementwise,  any_arch) \
  X(copy,           declared + eight_bit,                      fused_elementwise,  any_arch) \
  X(arange,         declared + half_floats,                    fused_elementwise,  any_arch) \
  X(uniform,        declared + half_floats,                    fused_elementwise,  any_arch) \
  X(normal,         declared + half_floats,                    fused_elementwise,  any_arch) \
  X(dropout_mask,   declared + half_floats,                    fused_elementwise,  any_arch) \
  X(pick,           declared + half_floats,                    fused_elementwise,  any_arch) \
  X(indexed_read,   declared + half_floats,                    fused_elementwise,  any_arch) \
  X(indexed_sum,    declared + half_floats,                    fused_elementwise,  any_arch) \
  X(transpose,      declared,                                  strided_view,       any_arch) \
  X(permute,        declared,                                  strided_view,       any_arch) \
  X(reshape,        declared,                                  strided_view,       any_arch) \
  X(slice,          declared,                                  strided_view,       any_arch) \
  X(unsqueeze,      declared,                                  strided_view,       any_arch) \
  X(squeeze,        declared,                                  strided_view,       any_arch) \
  X(diagonal,       declared,                                  strided_view,       any_arch) \
  X(broadcast_to,   declared,                                  strided_view,       any_arch) \
  X(concat,         declared,                                  copy_slices,        any_arch) \
  X(sum,            declared + half_floats,                    block_reduce,       any_arch) \
  X(sum_to,         declared + half_floats,                    block_reduce,       any_arch) \
  X(mean,           declared + half_floats,                    block_reduce,       any_arch) \
  X(prod,           declared + half_floats,                    block_reduce,       any_arch) \
  X(max,            declared + half_floats,                    block_reduce,       any_arch) \
  X(min,            declared + half_floats,                    block_reduce,       any_arch) \
  X(argmax,         declared + half_floats,                    block_reduce,       any_arch) \
  X(argmin,         declared + half_floats,                    block_reduce,       any_arch) \
  X(var,            declared + half_floats,                    block_reduce,       any_arch) \
  X(stddev,         declared + half_floats,                    block_reduce,       any_arch) \
  X(logsumexp,      declared + half_floats,                    block_reduce,       any_arch) \
  X(any,            declared,                                  block_reduce,       any_arch) \
  X(all,            declared,                                  block_reduce,       any_arch) \
  X(cumsum,         declared + half_floats,                    block_scan,         any_arch) \
  X(cumprod,        declared + half_floats,                    block_scan,         any_arch) \
  X(cummax,         declared + half_floats,                    block_scan,         any_arch) \
  X(cummin,         declared + half_floats,                    block_scan,         any_arch) \
  X(logcumsumexp,   declared + half_floats,                    block_scan,         any_arch) \
  X(cumargmax,      declared + half_floats,                    block_scan,         any_arch) \
  X(cumargmin,      declared + half_floats,                    block_scan,         any_arch) \
  X(linear_recurrence, declared + half_floats,                 block_scan,         any_arch) \
  X(sort,           declared + half_floats,                    cub_radix_sort,     any_arch) \
  X(argsort,        declared + half_floats,                    cub_radix_sort,     any_arch) \
  X(topk,           declared + half_floats,                    cub_radix_sort,     any_arch) \
  X(topk_values,    declared + half_floats,                    composed,           any_arch) \
  X(scatter,        declared + half_floats,                    scatter_rows,       any_arch) \
  X(softmax,        declared + half_floats,                    composed,           any_arch) \
  X(log_softmax,    declared + half_floats,                    composed,           any_arch) \
  X(cross_entropy,  declared + half_floats,                    row_cross_entropy,  any_arch) \
  X(cross_entropy_grad, declared + half_floats,                   row_cross_entropy_grad, any_arch) \
  X(layer_norm,     declared + half_floats,                    composed,           any_arch) \
  X(index_select,   declared + half_floats,                    composed,           any_arch) \
  X(gather,         declared + half_floats,                    composed,           any_arch) \
  X(embedding,      declared + half_floats,                    composed,           any_arch) \
  X(index_add,      declared + half_floats,                    composed,           any_arch) \
  X(scatter_add,    declared + half_floats,                    composed,           any_arch) \
  X(matmul,         declared + half_floats - signed_integral - complex_dtypes, cublas_gemm, sm_80(dtype_set<bfloat16>{})) \
  X(scaled_matmul,  declared - dtype_set<float8_e5m2>{},       cublaslt_gemm,      sm_75(dtype_set<std::int8_t>{}) + sm_89(float8)) \
  X(cholesky,       declared,                                  cusolver_potrf,     any_arch) \
  X(solve_triangular, declared,                                cublas_trsm,        any_arch) \
  X(solve,          declared,                                  cusolver_getrf_getrs, any_arch) \
  X(slogdet,        declared,                                  cusolver_getrf_det, any_arch) \
  X(eigh,           declared,                                  cusolver_syevd,     any_arch) \
  X(eigvalsh,       declared,                                  cusolver_syevd_values, any_arch) \
  X(lu_factor,      declared,                                  cusolver_getrf,     any_arch) \
  X(lu_solve,       declared,                                  cusolver_getrs,     any_arch) \
  X(qr,             declared,                                  cusolver_geqrf_orgqr, any_arch) \
  X(svd,            declared,                                  cusolver_gesvd,     any_arch) \
  X(svdvals,        declared,                                  cusolver_gesvd_values, any_arch) \
  X(lstsq,          declared,                                  cusolver_gesvd_lstsq, any_arch)
// clang-format on

namespace texpr {

#define TEXPR_CUDA_ROW(OP, DTYPES, IMPL, ARCH) TEXPR_REGISTRY_SPECIALISATION_ARCH(cuda, cuda_kernels, OP, DTYPES, IMPL, ARCH)
TEXPR_CUDA_REGISTRY(TEXPR_CUDA_ROW)
#undef TEXPR_CUDA_ROW

namespace detail::cuda_rows {
using T = dtype_parameter;  // what `cast<T>` names in the rows below
#define TEXPR_CUDA_ROW(OP, DTYPES, IMPL, ARCH) TEXPR_REGISTRY_ROW_TYPE_ARCH(cuda, cuda_kernels, OP, DTYPES, IMPL, ARCH)
using rows = type_list<TEXPR_CUDA_REGISTRY(TEXPR_CUDA_ROW) void>;
#undef TEXPR_CUDA_ROW
} // namespace detail::cuda_rows

/// The cuda table's rows, in order (tests, the support matrix and the parity check enumerate them).
using cuda_rows = detail::strip_void_t<detail::cuda_rows::rows>;
/// Every (op, dtype) cuda registers, row by row.
using cuda_registry = registry_entries_t<cuda_rows>;

} // namespace texpr
