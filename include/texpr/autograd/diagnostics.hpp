// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time diagnostics of tx::grad; like the placement diagnostics, the compiler prints the arguments.
#pragma once

#include "texpr/detail/type_list.hpp"

namespace texpr::diagnostic {

/// Instantiated for the first node of a loss that tx::grad cannot differentiate.
template <class Op, class Dtype> struct no_gradient_rule {
  static_assert(detail::always_false_v<Op, Dtype>,
                "texpr: tx::grad has no gradient rule for this node (no_gradient_rule<op, dtype> in the instantiation "
                "note); for your own elementwise op specialise tx::gradient_rule<Op>.");
};

/// Instantiated for the first node of a loss that computes on a complex dtype: texpr has no complex gradients yet
/// (PyTorch's convention, the conjugate Wirtinger derivative, is the plan).
template <class Op, class Dtype> struct no_complex_gradient {
  static_assert(detail::always_false_v<Op, Dtype>,
                "texpr: tx::grad does not differentiate through complex dtypes yet (no_complex_gradient<op, dtype> in "
                "the instantiation note); compute the complex part outside the differentiated graph.");
};

/// Instantiated when a parameter passed to tx::grad does not occur in the loss.
template <class ParamTag> struct loss_does_not_depend_on {
  static_assert(detail::always_false_v<ParamTag>,
                "texpr: the loss does not depend on this parameter (loss_does_not_depend_on<tag>); its gradient "
                "would be zero everywhere. Pass only parameters the loss uses.");
};

/// Instantiated when a parameter reaches the loss only through non-differentiable ops (comparisons,
/// where conditions, casts to integers).
template <class ParamTag> struct loss_not_differentiable_in {
  static_assert(detail::always_false_v<ParamTag>,
                "texpr: the loss depends on this parameter only through comparisons, where conditions or integer "
                "casts (loss_not_differentiable_in<tag>); its gradient is zero everywhere.");
};

} // namespace texpr::diagnostic
