// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time diagnostics. Each is a class template whose instantiation fails with a fixed message; the
// compiler prints its template arguments (op, dtype, backends, ranks), so the error names what is wrong.
#pragma once

#include <cstddef>

#include "texpr/core/backend.hpp"
#include "texpr/detail/type_list.hpp"

namespace texpr::diagnostic {

/// Instantiated for the first graph node whose (op, dtype) has no kernel on Backend. The message lists only the
/// remedies that apply on that backend.
template <class Op, class Dtype, class Backend> struct no_kernel {
  static_assert(detail::always_false_v<Op, Dtype, Backend>,
                "texpr: no kernel for this node on this backend; the node is no_kernel<op, dtype, backend> in the "
                "instantiation note. Convert its operands to a dtype the backend has (tx::cast<T>(e)). texpr never "
                "falls back silently.");
};
/// no_kernel on the host: converting is the only remedy.
template <class Op, class Dtype> struct no_kernel<Op, Dtype, host> {
  static_assert(detail::always_false_v<Op, Dtype>,
                "texpr: no kernel for this node on this backend; the node is no_kernel<op, dtype, backend> in the "
                "instantiation note. The host has no kernel for this op on this dtype: convert its operands "
                "(tx::cast<float>(e) or tx::cast<double>(e)). texpr never promotes implicitly.");
};
/// no_kernel on cuda: convert, or evaluate that part on the host explicitly.
template <class Op, class Dtype> struct no_kernel<Op, Dtype, cuda> {
  static_assert(detail::always_false_v<Op, Dtype>,
                "texpr: no kernel for this node on this backend; the node is no_kernel<op, dtype, backend> in the "
                "instantiation note. Convert its operands to a dtype cuda has (tx::cast<float>(e)), or copy them "
                "with tx::to_host and evaluate on the host. texpr never falls back silently.");
};

/// Instantiated for the first graph node whose kernel user code forbids through tx::forbidden.
template <class Op, class Dtype, class Backend> struct kernel_forbidden {
  static_assert(detail::always_false_v<Op, Dtype, Backend>,
                "texpr: this node's kernel is forbidden by a tx::forbidden specialisation in your code; the node is "
                "kernel_forbidden<op, dtype, backend> in the instantiation note. Cast to another dtype.");
};

/// Instantiated for the first graph node whose kernel needs a newer GPU than Target, one of the architectures the
/// translation unit is built for (sm<75>); Needed is the oldest it runs on (sm<80>).
template <class Op, class Dtype, class Backend, class Target, class Needed> struct kernel_needs_newer_arch {
  static_assert(detail::always_false_v<Op, Dtype, Backend, Target, Needed>,
                "texpr: this node's kernel needs a newer GPU architecture than one this code is built for; the node "
                "is kernel_needs_newer_arch<op, dtype, backend, built for sm<N>, needs sm<M>> in the instantiation "
                "note. Build only for architectures that have it (nvcc -arch=sm_M, CMAKE_CUDA_ARCHITECTURES; "
                "TEXPR_CUDA_ARCHS for a host compiler), or convert its operands to a dtype the older GPU has "
                "(tx::cast<float>(e)).");
};

/// Instantiated for the first graph node whose kernel user code forbids, through tx::forbidden_on_arch, on Target,
/// one of the architectures the translation unit is built for.
template <class Op, class Dtype, class Target> struct kernel_forbidden_on_arch {
  static_assert(detail::always_false_v<Op, Dtype, Target>,
                "texpr: this node's kernel is forbidden on one of the architectures this code is built for, by a "
                "tx::forbidden_on_arch specialisation in your code; the node is kernel_forbidden_on_arch<op, dtype, "
                "sm<N>> in the instantiation note. Cast to another dtype, or build for other architectures.");
};

/// Instantiated for the first leaf whose memory lives on another backend than the one evaluating.
template <class LeafBackend, class Backend> struct operand_on_other_backend {
  static_assert(detail::always_false_v<LeafBackend, Backend>,
                "texpr: an operand lives in another backend's memory than the backend evaluating the graph "
                "(operand_on_other_backend<operand's backend, evaluating backend>); copy it explicitly with "
                "tx::to_device(t) or tx::to_host(t). texpr never copies implicitly.");
};

/// Instantiated when one expression mixes operands from two backends.
template <class BackendA, class BackendB> struct mixed_backends {
  static_assert(detail::always_false_v<BackendA, BackendB>,
                "texpr: operands live on different backends (mixed_backends<a, b>); copy one side explicitly with "
                "tx::to_device(t) or tx::to_host(t). texpr never copies implicitly.");
};

/// Instantiated when one expression mixes dtypes.
template <class DtypeA, class DtypeB> struct mixed_dtypes {
  static_assert(detail::always_false_v<DtypeA, DtypeB>,
                "texpr: operands have different dtypes (mixed_dtypes<a, b>) and texpr never promotes implicitly; "
                "convert one side with tx::cast<T>(e).");
};

/// Instantiated when a floating scalar meets an integer tensor.
template <class TensorDtype, class Scalar> struct floating_scalar_with_integer_tensor {
  static_assert(detail::always_false_v<TensorDtype, Scalar>,
                "texpr: a floating scalar with an integer tensor would truncate silently; use an integer scalar or "
                "convert the tensor with tx::cast<float>(e).");
};

/// Instantiated when an op that orders values (<, <=, >, >=, maximum, minimum, max, min, argmax, argmin) meets a
/// complex dtype: complex numbers have no order (PyTorch rejects these too; NumPy's lexicographic order is rarely
/// what is meant).
template <class Op, class Dtype> struct complex_has_no_order {
  static_assert(detail::always_false_v<Op, Dtype>,
                "texpr: complex numbers have no order (complex_has_no_order<op, dtype> in the instantiation note); "
                "compare or reduce a real view of them instead: tx::real(z), tx::imag(z) or tx::abs(z).");
};

/// The rank of the expression in a rank_mismatch diagnostic.
template <std::size_t R> struct expression_rank {};
/// The rank of the destination (tensor or view) in a rank_mismatch diagnostic.
template <std::size_t R> struct destination_rank {};

/// Instantiated when an expression is assigned to a tensor or view of another rank.
template <class ExpressionRank, class DestinationRank> struct rank_mismatch {
  static_assert(detail::always_false_v<ExpressionRank, DestinationRank>,
                "texpr: the expression's rank differs from the destination's rank (rank_mismatch<expression_rank<"
                "N>, destination_rank<M>> in the instantiation note); reduce, reshape or unsqueeze the expression, "
                "or declare the destination with the expression's rank.");
};

} // namespace texpr::diagnostic
