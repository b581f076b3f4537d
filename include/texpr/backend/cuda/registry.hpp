// The cuda kernel registry: one row per op that runs on the GPU, with its dtypes and the implementation that runs
// it. Read it as a table. It needs no CUDA headers, so any compiler can check placement; the implementations'
// bodies (backend/cuda/*.hpp) compile only under nvcc.
#pragma once

#include <cstddef>
#include <string_view>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/op/composite.hpp"
#include "texpr/op/elementwise.hpp"
#include "texpr/op/generator.hpp"
#include "texpr/op/layout.hpp"
#include "texpr/op/matmul.hpp"
#include "texpr/op/reduction.hpp"
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
  /// dest = acc, elementwise, enqueued on ctx.stream; dest may be strided.
  template <class T, std::size_t R, class Acc> static void assign(const view<T, R, cuda>& dest, const Acc& acc, context<cuda>& ctx);
};

/// A layout as the operand's memory with other extents and strides: no kernel, no copy (layout.hpp).
struct strided_view {
  static constexpr std::string_view name = "strided_view";  ///< Shown by tx::placement.
  /// Enqueues nothing (a view of memory): may run inside a CUDA graph capture (tx::capturable).
  static constexpr bool capture_safe = true;
  /// The memory layout node n describes.
  template <class N> static texpr::view<const typename N::value_type, N::rank, cuda> view_of(const N& n, context<cuda>& ctx);
};

/// A composite op (softmax, log_softmax, cross_entropy, layer_norm): operands evaluated once into memory, then
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

/// cuBLAS (cublasGemmStridedBatchedEx): fp32 (TF32 opt-in), fp64, and fp16/bf16 with fp32 accumulation (gemm.hpp).
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

} // namespace texpr::cuda_kernels

// clang-format off
/// The cuda table. Columns: op tag (in texpr::op; T is the dtype where the op depends on it), dtypes (the op's
/// declared set, adjusted), implementation. Differences from the host table, all deliberate (tests/core/
/// test_registry.cpp checks that there are no others): every op that computes in floating point also takes the
/// 16-bit floats (computed and accumulated in float), and matmul has no integer kernel (cuBLAS has none).
#define TEXPR_CUDA_REGISTRY(X) \
  X(add,            declared + half_floats,                    fused_elementwise) \
  X(subtract,       declared + half_floats,                    fused_elementwise) \
  X(multiply,       declared + half_floats,                    fused_elementwise) \
  X(divide,         declared + half_floats,                    fused_elementwise) \
  X(maximum,        declared + half_floats,                    fused_elementwise) \
  X(minimum,        declared + half_floats,                    fused_elementwise) \
  X(pow,            declared + half_floats,                    fused_elementwise) \
  X(elu,            declared + half_floats,                    fused_elementwise) \
  X(exp,            declared + half_floats,                    fused_elementwise) \
  X(log,            declared + half_floats,                    fused_elementwise) \
  X(sqrt,           declared + half_floats,                    fused_elementwise) \
  X(tanh,           declared + half_floats,                    fused_elementwise) \
  X(sigmoid,        declared + half_floats,                    fused_elementwise) \
  X(negate,         declared + half_floats,                    fused_elementwise) \
  X(abs,            declared + half_floats,                    fused_elementwise) \
  X(relu,           declared + half_floats,                    fused_elementwise) \
  X(log1p,          declared + half_floats,                    fused_elementwise) \
  X(expm1,          declared + half_floats,                    fused_elementwise) \
  X(softplus,       declared + half_floats,                    fused_elementwise) \
  X(gelu,           declared + half_floats,                    fused_elementwise) \
  X(gelu_grad,      declared + half_floats,                    fused_elementwise) \
  X(silu,           declared + half_floats,                    fused_elementwise) \
  X(mish,           declared + half_floats,                    fused_elementwise) \
  X(square,         declared + half_floats,                    fused_elementwise) \
  X(rsqrt,          declared + half_floats,                    fused_elementwise) \
  X(sign,           declared + half_floats,                    fused_elementwise) \
  X(floor,          declared + half_floats,                    fused_elementwise) \
  X(ceil,           declared + half_floats,                    fused_elementwise) \
  X(round,          declared + half_floats,                    fused_elementwise) \
  X(sin,            declared + half_floats,                    fused_elementwise) \
  X(cos,            declared + half_floats,                    fused_elementwise) \
  X(clamp,          declared + half_floats,                    fused_elementwise) \
  X(equal,          declared + half_floats,                    fused_elementwise) \
  X(not_equal,      declared + half_floats,                    fused_elementwise) \
  X(less,           declared + half_floats,                    fused_elementwise) \
  X(less_equal,     declared + half_floats,                    fused_elementwise) \
  X(greater,        declared + half_floats,                    fused_elementwise) \
  X(greater_equal,  declared + half_floats,                    fused_elementwise) \
  X(logical_and,    declared,                                  fused_elementwise) \
  X(logical_or,     declared,                                  fused_elementwise) \
  X(logical_not,    declared,                                  fused_elementwise) \
  X(where,          declared + half_floats,                    fused_elementwise) \
  X(cast<T>,        declared,                                  fused_elementwise) \
  X(copy,           declared,                                  fused_elementwise) \
  X(arange,         declared + half_floats,                    fused_elementwise) \
  X(uniform,        declared + half_floats,                    fused_elementwise) \
  X(normal,         declared + half_floats,                    fused_elementwise) \
  X(dropout_mask,   declared + half_floats,                    fused_elementwise) \
  X(pick,           declared + half_floats,                    fused_elementwise) \
  X(transpose,      declared,                                  strided_view) \
  X(permute,        declared,                                  strided_view) \
  X(reshape,        declared,                                  strided_view) \
  X(slice,          declared,                                  strided_view) \
  X(unsqueeze,      declared,                                  strided_view) \
  X(squeeze,        declared,                                  strided_view) \
  X(broadcast_to,   declared,                                  strided_view) \
  X(concat,         declared,                                  copy_slices) \
  X(sum,            declared + half_floats,                    block_reduce) \
  X(sum_to,         declared + half_floats,                    block_reduce) \
  X(mean,           declared + half_floats,                    block_reduce) \
  X(prod,           declared + half_floats,                    block_reduce) \
  X(max,            declared + half_floats,                    block_reduce) \
  X(min,            declared + half_floats,                    block_reduce) \
  X(argmax,         declared + half_floats,                    block_reduce) \
  X(argmin,         declared + half_floats,                    block_reduce) \
  X(var,            declared + half_floats,                    block_reduce) \
  X(stddev,         declared + half_floats,                    block_reduce) \
  X(logsumexp,      declared + half_floats,                    block_reduce) \
  X(softmax,        declared + half_floats,                    composed) \
  X(log_softmax,    declared + half_floats,                    composed) \
  X(cross_entropy,  declared + half_floats,                    row_cross_entropy) \
  X(cross_entropy_grad, declared + half_floats,                row_cross_entropy_grad) \
  X(layer_norm,     declared + half_floats,                    composed) \
  X(matmul,         declared + half_floats - signed_integral,  cublas_gemm)
// clang-format on

namespace texpr {

#define TEXPR_CUDA_ROW(OP, DTYPES, IMPL) TEXPR_REGISTRY_SPECIALISATION(cuda, cuda_kernels, OP, DTYPES, IMPL)
TEXPR_CUDA_REGISTRY(TEXPR_CUDA_ROW)
#undef TEXPR_CUDA_ROW

namespace detail::cuda_rows {
using T = dtype_parameter;  // what `cast<T>` names in the rows below
#define TEXPR_CUDA_ROW(OP, DTYPES, IMPL) TEXPR_REGISTRY_ROW_TYPE(cuda, cuda_kernels, OP, DTYPES, IMPL)
using rows = type_list<TEXPR_CUDA_REGISTRY(TEXPR_CUDA_ROW) void>;
#undef TEXPR_CUDA_ROW
} // namespace detail::cuda_rows

/// The cuda table's rows, in order (tests, the support matrix and the parity check enumerate them).
using cuda_rows = detail::strip_void_t<detail::cuda_rows::rows>;
/// Every (op, dtype) cuda registers, row by row.
using cuda_registry = registry_entries_t<cuda_rows>;

} // namespace texpr
