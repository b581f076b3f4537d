// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Backend tags: where memory lives and where kernels run.
#pragma once

#include <string_view>
#include <type_traits>

namespace texpr {

/// The CPU backend: memory in host RAM, kernels compiled by the host compiler.
struct host {
  /// Printed in placement reports.
  static constexpr std::string_view name = "host";
};

/// The CUDA backend: memory on the current GPU, kernels compiled by nvcc.
struct cuda {
  /// Printed in placement reports.
  static constexpr std::string_view name = "cuda";
};

/// Backend of leaves that live in no memory (scalars): readable from every backend.
struct any_backend {
  /// Printed in placement reports.
  static constexpr std::string_view name = "any";
};

/// True for the tag types usable as a tensor's backend.
template <class B>
inline constexpr bool is_backend_v = std::is_same_v<B, host> || std::is_same_v<B, cuda>;

/// Holds when B is a backend tag (host or cuda).
template <class B>
concept backend_tag = is_backend_v<B>;

} // namespace texpr
