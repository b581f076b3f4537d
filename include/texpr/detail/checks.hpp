// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time checks at public entry points: mixed dtypes and mixed backends.
#pragma once

#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/diagnostics.hpp"

namespace texpr::detail {

// Rejects mixed dtypes and mixed backends at the user's call, naming both sides.
template <class A, class B> constexpr void check_same_dtype() {
  if constexpr (!std::is_same_v<A, B>) (void)sizeof(diagnostic::mixed_dtypes<dtype_tag_t<A>, dtype_tag_t<B>>);
}
/// True when operands on backends A and B can meet in one expression (equal, or one is any_backend).
template <class A, class B>
inline constexpr bool compatible_backends_v = std::is_same_v<A, B> || std::is_same_v<A, any_backend> || std::is_same_v<B, any_backend>;

template <class A, class B> constexpr void check_same_backend() {
  if constexpr (!std::is_same_v<A, B> && !std::is_same_v<A, any_backend> && !std::is_same_v<B, any_backend>)
    (void)sizeof(diagnostic::mixed_backends<A, B>);
}

} // namespace texpr::detail
