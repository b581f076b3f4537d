// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU architectures: compute capabilities as types, and the list a translation unit is built for, which the
// compile-time placement checks of cuda graphs use.
#pragma once

#include <string>
#include <type_traits>

#include "texpr/core/backend.hpp"

namespace texpr {

/// A CUDA compute capability as nvcc's -arch names it: sm<80> is sm_80 (Ampere), sm<89> Ada, sm<90> Hopper.
/// Diagnostics print it.
template <int Arch> struct sm {
  static constexpr int value = Arch;  ///< The compute capability, major * 10 + minor.
};

/// The compute capabilities a cuda graph is checked for: it must run on every one of them.
template <int... Archs> struct cuda_targets {
  static constexpr int count = sizeof...(Archs);  ///< How many.
  /// "sm_75, sm_90", as tx::placement prints them.
  static std::string names() {
    std::string s;
    ((s += (s.empty() ? "sm_" : ", sm_") + std::to_string(Archs)), ...);
    return s;
  }
};

namespace detail {
/// cuda_targets of Archs / Scale (nvcc's list writes sm_75 as 750).
template <int Scale, int... Archs> struct scaled_targets {
  using type = cuda_targets<(Archs / Scale)...>;
};
} // namespace detail

// build_cuda_targets: under nvcc, every architecture the translation unit generates code for (__CUDA_ARCH_LIST__,
// the same in the host and the device passes: -arch, -gencode, CMAKE_CUDA_ARCHITECTURES); with another compiler,
// the list in TEXPR_CUDA_ARCHS (`-DTEXPR_CUDA_ARCHS=80,90`), else sm_75 alone: nvcc's default target and the
// oldest nvcc 13 builds for.
#if defined(__CUDA_ARCH_LIST__)
/// The architectures this translation unit is built for (see above).
using build_cuda_targets = typename detail::scaled_targets<10, __CUDA_ARCH_LIST__>::type;  // nvcc writes 750 for sm_75
#elif defined(TEXPR_CUDA_ARCHS)
/// The architectures this translation unit is built for (see above).
using build_cuda_targets = typename detail::scaled_targets<1, TEXPR_CUDA_ARCHS>::type;
#else
/// The architectures this translation unit is built for (see above).
using build_cuda_targets = cuda_targets<75>;
#endif

/// The architectures a placement check on Backend is made for: the build's on cuda, none on the host.
template <class Backend> using targets_of_t = std::conditional_t<std::is_same_v<Backend, cuda>, build_cuda_targets, cuda_targets<>>;

} // namespace texpr
