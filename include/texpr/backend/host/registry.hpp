// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host kernel registry: one row per op that runs on the CPU, with its dtypes and the implementation that runs
// it. Read it as a table. The support matrix in docs/support_matrix.md and README.md is generated from it.
#pragma once

#include <cstddef>
#include <string_view>

#include "texpr/core/backend.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/op/composite.hpp"
#include "texpr/op/elementwise.hpp"
#include "texpr/op/generator.hpp"
#include "texpr/op/indexing.hpp"
#include "texpr/op/layout.hpp"
#include "texpr/op/matmul.hpp"
#include "texpr/op/reduction.hpp"
#include "texpr/op/scan.hpp"
#include "texpr/op/sort.hpp"
#include "texpr/op/linalg.hpp"
#include "texpr/op/fft.hpp"
#include "texpr/op/conv.hpp"
#include "texpr/registry/epilogue.hpp"
#include "texpr/registry/kernel.hpp"
#include "texpr/tensor/view.hpp"

/// The host's implementations. Each is what a row names: its entry point is what evaluation calls, and its name
/// is what tx::placement prints. Their bodies are in backend/host/*.hpp (included by texpr.hpp).
namespace texpr::host_kernels {

/// One pass over the destination for a whole elementwise tree, vectorised and threaded (elementwise.hpp).
struct fused_elementwise {
  static constexpr std::string_view name = "fused_elementwise";  ///< Shown by tx::placement.
  /// One element of an elementwise op (16-bit floats computed in float).
  template <class Op, class R, class... V> TEXPR_HOST_DEVICE static R apply(V... v) { return detail::apply_op<Op, R>(v...); }
  /// dest = acc, elementwise; dest may be strided.
  template <class T, std::size_t R, class Acc> static void assign(const view<T, R, host>& dest, const Acc& acc, context<host>& ctx);
};

/// A layout as the operand's memory with other extents and strides: no kernel, no copy (layout.hpp).
struct strided_view {
  static constexpr std::string_view name = "strided_view";  ///< Shown by tx::placement.
  /// The memory layout node n describes.
  template <class N> static texpr::view<const typename N::value_type, N::rank, host> view_of(const N& n, context<host>& ctx);
};

/// A composite op (softmax, log_softmax, cross_entropy, layer_norm, the indexing ops): operands evaluated once into memory, then
/// the op's expansion, whose passes are other rows of this table (layout.hpp).
struct composed {
  static constexpr std::string_view name = "composed";  ///< Shown by tx::placement.
  /// dest = the composite node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// Concatenation: each operand evaluated by a fused pass into its slice of the destination (layout.hpp).
struct copy_slices {
  static constexpr std::string_view name = "copy_slices";  ///< Shown by tx::placement.
  /// dest = the concat node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// Blocked pairwise reductions, 16 lanes per block of 256, blocks combined as a binary tree (reduce.hpp).
struct pairwise_reduce {
  static constexpr std::string_view name = "pairwise_reduce";  ///< Shown by tx::placement.
  /// dest = the reduction node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// Scans along an axis: a running value per line, lines across the pool, a long line cut into blocks whose totals
/// are folded first; the operand read fused (scan.hpp).
struct line_scan {
  static constexpr std::string_view name = "line_scan";  ///< Shown by tx::placement.
  /// dest = the scan node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// Stable LSD radix sort of each line's order keys with their payloads (the value for sort, the position for
/// argsort): 8-bit digits, a digit every key shares skipped, lines across the pool, a long line's passes split
/// across it; the operand read fused (sort.hpp, with texpr/sort.hpp).
struct radix_sort {
  static constexpr std::string_view name = "radix_sort";  ///< Shown by tx::placement.
  /// dest = the sort or argsort node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// topk: each line's k best (key, position) kept in a sorted buffer, every other element rejected by one compare
/// with its last (k up to 32; a larger k sorts the line as radix_sort does); the operand read fused (sort.hpp).
struct top_k_select {
  static constexpr std::string_view name = "top_k_select";  ///< Shown by tx::placement.
  /// dest = the topk node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// scatter: zeros, then each element of g written at its (distinct) position, a line per task (sort.hpp).
struct scatter_rows {
  static constexpr std::string_view name = "scatter_rows";  ///< Shown by tx::placement.
  /// dest = the scatter node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// cholesky through LAPACK's potrf, a matrix of the batch per call (linalg.hpp, with texpr/linalg.hpp).
struct lapack_potrf {
  static constexpr std::string_view name = "lapack_potrf";  ///< Shown by tx::placement.
  /// dest = the cholesky node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// solve_triangular through LAPACK's trtrs (linalg.hpp, with texpr/linalg.hpp).
struct lapack_trtrs {
  static constexpr std::string_view name = "lapack_trtrs";  ///< Shown by tx::placement.
  /// dest = the solve_triangular node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// solve through LAPACK's getrf and getrs (LU with partial pivoting; linalg.hpp, with texpr/linalg.hpp).
struct lapack_gesv {
  static constexpr std::string_view name = "lapack_gesv";  ///< Shown by tx::placement.
  /// dest = the solve node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// slogdet through LAPACK's getrf: the sign and log|det| from U's diagonal and the row swaps (linalg.hpp).
struct lapack_getrf_det {
  static constexpr std::string_view name = "lapack_getrf_det";  ///< Shown by tx::placement.
  /// dest = the slogdet node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// eigh through LAPACK's syevd (divide and conquer), eigenvalues and eigenvectors (linalg.hpp).
struct lapack_syevd {
  static constexpr std::string_view name = "lapack_syevd";  ///< Shown by tx::placement.
  /// dest = the eigh node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// eigvalsh through LAPACK's syevd asked for eigenvalues only (linalg.hpp).
struct lapack_syevd_values {
  static constexpr std::string_view name = "lapack_syevd_values";  ///< Shown by tx::placement.
  /// dest = the eigvalsh node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// svd through LAPACK's gesdd (divide and conquer, as NumPy), singular values and vectors (linalg.hpp).
struct lapack_gesdd {
  static constexpr std::string_view name = "lapack_gesdd";  ///< Shown by tx::placement.
  /// dest = the svd node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// svdvals through LAPACK's gesdd asked for singular values only (linalg.hpp).
struct lapack_gesdd_values {
  static constexpr std::string_view name = "lapack_gesdd_values";  ///< Shown by tx::placement.
  /// dest = the svdvals node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// qr through LAPACK's geqrf (Householder reflections, R) and orgqr (Q from them), as NumPy (linalg.hpp).
struct lapack_geqrf_orgqr {
  static constexpr std::string_view name = "lapack_geqrf_orgqr";  ///< Shown by tx::placement.
  /// dest = the qr node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// lstsq through LAPACK's gelsd (SVD by divide and conquer; the minimum-norm solution), as NumPy (linalg.hpp).
struct lapack_gelsd {
  static constexpr std::string_view name = "lapack_gelsd";  ///< Shown by tx::placement.
  /// dest = the lstsq node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// lu_factor through LAPACK's getrf (LU with partial pivoting of A itself; linalg.hpp).
struct lapack_getrf {
  static constexpr std::string_view name = "lapack_getrf";  ///< Shown by tx::placement.
  /// dest = the lu_factor node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// lu_solve through LAPACK's getrs with lu_factor's LU and pivots (linalg.hpp).
struct lapack_getrs {
  static constexpr std::string_view name = "lapack_getrs";  ///< Shown by tx::placement.
  /// dest = the lu_solve node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// fft and ifft: texpr's FFT engine (mixed radix, Bluestein for large prime factors) over the complex lines of one
/// axis, batched (fft.hpp, with texpr/fft.hpp).
struct fft_c2c {
  static constexpr std::string_view name = "fft_c2c";  ///< Shown by tx::placement.
  /// dest = the fft or ifft node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// rfft: the FFT engine's real-input transform, n / 2 + 1 frequencies per line (fft.hpp, with texpr/fft.hpp).
struct fft_r2c {
  static constexpr std::string_view name = "fft_r2c";  ///< Shown by tx::placement.
  /// dest = the rfft node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// irfft: the FFT engine's real-output transform of n / 2 + 1 frequencies per line (fft.hpp, with texpr/fft.hpp).
struct fft_c2r {
  static constexpr std::string_view name = "fft_c2r";  ///< Shown by tx::placement.
  /// dest = the irfft node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// conv2d and its filter gradient: each image's windows unfolded into a column matrix (im2col), multiplied by the
/// blocked GEMM per image and group; a 1x1 window at stride 1 is the image itself (conv.hpp, with texpr/conv.hpp).
struct im2col_gemm {
  static constexpr std::string_view name = "im2col_gemm";  ///< Shown by tx::placement.
  /// dest = the conv2d or conv2d_weight_grad node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// conv2d's input gradient and conv_transpose2d (the same product): the blocked GEMM of the filters transposed with the output gradient, per image and
/// group, folded back onto the image's windows (col2im; conv.hpp, with texpr/conv.hpp).
struct gemm_col2im {
  static constexpr std::string_view name = "gemm_col2im";  ///< Shown by tx::placement.
  /// dest = the conv2d_input_grad or conv_transpose2d node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// Pooling and its gradients: direct loops over each window, a channel plane per task (conv.hpp, with
/// texpr/conv.hpp).
struct pool_loops {
  static constexpr std::string_view name = "pool_loops";  ///< Shown by tx::placement.
  /// dest = the max_pool2d, avg_pool2d or gradient node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// batch_norm and its statistics: per channel, a mean pass and a squared-deviation pass (accumulated in double),
/// then one pass writing the result; training updates the running statistics once, after the passes (conv.hpp,
/// with texpr/conv.hpp).
struct batch_norm_loops {
  static constexpr std::string_view name = "batch_norm_loops";  ///< Shown by tx::placement.
  /// dest = the batch_norm or batch_norm_stats node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// Packed, register-blocked GEMM with AVX-512/AVX2/portable micro-kernels chosen at run time (gemm.hpp).
struct blocked_gemm {
  static constexpr std::string_view name = "blocked_gemm";  ///< Shown by tx::placement.
  /// dest = the matmul node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// matmul of complex64/complex128 as one real GEMM of the blocked kernel (gemm.hpp): A's parts read in place as an
/// (m x 2k) real matrix, B expanded to the (2k x 2n) real matrix of 2x2 blocks [re im; -im re], C written as the
/// (m x 2n) real matrix of its parts: the four real products of the textbook formula, as BLAS's cgemm/zgemm
/// (matmul.hpp).
struct complex_gemm {
  static constexpr std::string_view name = "complex_gemm";  ///< Shown by tx::placement.
  /// dest = the matmul node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// A product of 8-bit operands into a wider result (scaled_matmul): plain loops, B widened once per batch, int32
/// (wrapping) or float accumulation; the reference the GPU's tensor-core GEMMs are checked against (matmul.hpp).
struct widening_gemm {
  static constexpr std::string_view name = "widening_gemm";  ///< Shown by tx::placement.
  /// dest = the scaled_matmul node n (dest contiguous).
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

/// An elementwise tree over one matmul (elu(x w + b)) applied to each block of the GEMM's output as soon as the
/// block is final, while it is in cache: the product is never written out and read back (matmul.hpp).
struct gemm_epilogue {
  static constexpr std::string_view name = "blocked_gemm_epilogue";  ///< Shown by tx::placement.
  /// dest = n (an epilogue tree, expr/epilogue.hpp), when detail::dispatch_of chose it: the product is not
  /// broadcast, dest is contiguous and no operand overlaps it.
  template <class N, class T, std::size_t R> static void run(const N& n, const view<T, R, host>& dest, context<host>& ctx);
};

} // namespace texpr::host_kernels

// clang-format off
/// The host table. Columns: op tag (in texpr::op; T is the dtype where the op depends on it), dtypes (the op's
/// declared set, adjusted), implementation. Integer mean is absent because mean declares floating dtypes only:
/// cast to a floating dtype first (no implicit promotion). The 16-bit floats are storage types on the host:
/// only cast and copy take them. The 8-bit types (eight_bit: float8_e4m3, float8_e5m2, int8)
/// are storage types on both backends: cast and copy.
#define TEXPR_HOST_REGISTRY(X) \
  X(add,            declared,              fused_elementwise) \
  X(subtract,       declared,              fused_elementwise) \
  X(multiply,       declared,              fused_elementwise) \
  X(divide,         declared,              fused_elementwise) \
  X(maximum,        declared,              fused_elementwise) \
  X(minimum,        declared,              fused_elementwise) \
  X(pow,            declared,              fused_elementwise) \
  X(elu,            declared,              fused_elementwise) \
  X(exp,            declared,              fused_elementwise) \
  X(log,            declared,              fused_elementwise) \
  X(sqrt,           declared,              fused_elementwise) \
  X(tanh,           declared,              fused_elementwise) \
  X(sigmoid,        declared,              fused_elementwise) \
  X(negate,         declared,              fused_elementwise) \
  X(abs,            declared,              fused_elementwise) \
  X(relu,           declared,              fused_elementwise) \
  X(log1p,          declared,              fused_elementwise) \
  X(expm1,          declared,              fused_elementwise) \
  X(softplus,       declared,              fused_elementwise) \
  X(gelu,           declared,              fused_elementwise) \
  X(gelu_grad,      declared,              fused_elementwise) \
  X(silu,           declared,              fused_elementwise) \
  X(mish,           declared,              fused_elementwise) \
  X(square,         declared,              fused_elementwise) \
  X(rsqrt,          declared,              fused_elementwise) \
  X(sign,           declared,              fused_elementwise) \
  X(floor,          declared,              fused_elementwise) \
  X(ceil,           declared,              fused_elementwise) \
  X(round,          declared,              fused_elementwise) \
  X(sin,            declared,              fused_elementwise) \
  X(cos,            declared,              fused_elementwise) \
  X(clamp,          declared,              fused_elementwise) \
  X(conj,           declared,              fused_elementwise) \
  X(real,           declared,              fused_elementwise) \
  X(imag,           declared,              fused_elementwise) \
  X(angle,          declared,              fused_elementwise) \
  X(make_complex,   declared,              fused_elementwise) \
  X(matmul,         complex_dtypes,        complex_gemm) \
  X(equal,          declared,              fused_elementwise) \
  X(not_equal,      declared,              fused_elementwise) \
  X(less,           declared,              fused_elementwise) \
  X(less_equal,     declared,              fused_elementwise) \
  X(greater,        declared,              fused_elementwise) \
  X(greater_equal,  declared,              fused_elementwise) \
  X(logical_and,    declared,              fused_elementwise) \
  X(logical_or,     declared,              fused_elementwise) \
  X(logical_not,    declared,              fused_elementwise) \
  X(where,          declared,              fused_elementwise) \
  X(cast<T>,        declared + eight_bit,  fused_elementwise) \
  X(copy,           declared + eight_bit,  fused_elementwise) \
  X(arange,         declared,              fused_elementwise) \
  X(uniform,        declared,              fused_elementwise) \
  X(normal,         declared,              fused_elementwise) \
  X(dropout_mask,   declared,              fused_elementwise) \
  X(pick,           declared,              fused_elementwise) \
  X(indexed_read,   declared,              fused_elementwise) \
  X(indexed_sum,    declared,              fused_elementwise) \
  X(transpose,      declared,              strided_view) \
  X(permute,        declared,              strided_view) \
  X(reshape,        declared,              strided_view) \
  X(slice,          declared,              strided_view) \
  X(unsqueeze,      declared,              strided_view) \
  X(squeeze,        declared,              strided_view) \
  X(diagonal,       declared,              strided_view) \
  X(broadcast_to,   declared,              strided_view) \
  X(concat,         declared,              copy_slices) \
  X(sum,            declared,              pairwise_reduce) \
  X(sum_to,         declared,              pairwise_reduce) \
  X(mean,           declared,              pairwise_reduce) \
  X(prod,           declared,              pairwise_reduce) \
  X(max,            declared,              pairwise_reduce) \
  X(min,            declared,              pairwise_reduce) \
  X(argmax,         declared,              pairwise_reduce) \
  X(argmin,         declared,              pairwise_reduce) \
  X(var,            declared,              pairwise_reduce) \
  X(stddev,         declared,              pairwise_reduce) \
  X(logsumexp,      declared,              pairwise_reduce) \
  X(any,            declared,              pairwise_reduce) \
  X(all,            declared,              pairwise_reduce) \
  X(cumsum,         declared,              line_scan) \
  X(cumprod,        declared,              line_scan) \
  X(cummax,         declared,              line_scan) \
  X(cummin,         declared,              line_scan) \
  X(logcumsumexp,   declared,              line_scan) \
  X(cumargmax,      declared,              line_scan) \
  X(cumargmin,      declared,              line_scan) \
  X(linear_recurrence, declared,           line_scan) \
  X(sort,           declared,              radix_sort) \
  X(argsort,        declared,              radix_sort) \
  X(topk,           declared,              top_k_select) \
  X(topk_values,    declared,              composed) \
  X(scatter,        declared,              scatter_rows) \
  X(cholesky,       declared,              lapack_potrf) \
  X(solve_triangular, declared,            lapack_trtrs) \
  X(solve,          declared,              lapack_gesv) \
  X(slogdet,        declared,              lapack_getrf_det) \
  X(eigh,           declared,              lapack_syevd) \
  X(eigvalsh,       declared,              lapack_syevd_values) \
  X(svd,            declared,              lapack_gesdd) \
  X(svdvals,        declared,              lapack_gesdd_values) \
  X(qr,             declared,              lapack_geqrf_orgqr) \
  X(lstsq,          declared,              lapack_gelsd) \
  X(lu_factor,      declared,              lapack_getrf) \
  X(lu_solve,       declared,              lapack_getrs) \
  X(fft,            dtype_set<std::complex<float>>{},  fft_c2c) \
  X(fft,            dtype_set<std::complex<double>>{}, fft_c2c) \
  X(ifft,           dtype_set<std::complex<float>>{},  fft_c2c) \
  X(ifft,           dtype_set<std::complex<double>>{}, fft_c2c) \
  X(rfft,           dtype_set<float>{},                fft_r2c) \
  X(rfft,           dtype_set<double>{},               fft_r2c) \
  X(irfft,          dtype_set<std::complex<float>>{},  fft_c2r) \
  X(irfft,          dtype_set<std::complex<double>>{}, fft_c2r) \
  X(conv2d,         declared,              im2col_gemm) \
  X(conv2d_input_grad, declared,           gemm_col2im) \
  X(conv_transpose2d, declared,            gemm_col2im) \
  X(conv2d_weight_grad, declared,          im2col_gemm) \
  X(max_pool2d,     declared,              pool_loops) \
  X(max_pool2d_grad, declared,             pool_loops) \
  X(avg_pool2d,     declared,              pool_loops) \
  X(avg_pool2d_grad, declared,             pool_loops) \
  X(adaptive_avg_pool2d, declared,         pool_loops) \
  X(adaptive_avg_pool2d_grad, declared,    pool_loops) \
  X(batch_norm,     declared,              batch_norm_loops) \
  X(batch_norm_stats, declared,            batch_norm_loops) \
  X(softmax,        declared,              composed) \
  X(log_softmax,    declared,              composed) \
  X(cross_entropy,  declared,              composed) \
  X(cross_entropy_grad, declared,             composed) \
  X(layer_norm,     declared,              composed) \
  X(index_select,   declared,              composed) \
  X(gather,         declared,              composed) \
  X(embedding,      declared,              composed) \
  X(index_add,      declared,              composed) \
  X(scatter_add,    declared,              composed) \
  X(matmul,         declared - complex_dtypes, blocked_gemm) \
  X(scaled_matmul,  declared,              widening_gemm)
// clang-format on

namespace texpr {

#define TEXPR_HOST_ROW(OP, DTYPES, IMPL) TEXPR_REGISTRY_SPECIALISATION(host, host_kernels, OP, DTYPES, IMPL)
TEXPR_HOST_REGISTRY(TEXPR_HOST_ROW)
#undef TEXPR_HOST_ROW

namespace detail::host_rows {
using T = dtype_parameter;  // what `cast<T>` names in the rows below
#define TEXPR_HOST_ROW(OP, DTYPES, IMPL) TEXPR_REGISTRY_ROW_TYPE(host, host_kernels, OP, DTYPES, IMPL)
using rows = type_list<TEXPR_HOST_REGISTRY(TEXPR_HOST_ROW) void>;
#undef TEXPR_HOST_ROW
} // namespace detail::host_rows

/// The host runs elementwise trees over a matmul as the GEMM's epilogue.
template <> struct fused_epilogue<host> {
  static constexpr bool available = true;  ///< See host_kernels::gemm_epilogue.
  using impl = host_kernels::gemm_epilogue;  ///< What evaluation calls.
};

/// The host table's rows, in order (tests, the support matrix and the parity check enumerate them).
using host_rows = detail::strip_void_t<detail::host_rows::rows>;
/// Every (op, dtype) the host registers, row by row.
using host_registry = registry_entries_t<host_rows>;

} // namespace texpr
