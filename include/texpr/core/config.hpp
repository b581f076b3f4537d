// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiler glue shared by every texpr header: version, host/device markers, index type.
#pragma once

#include <cstddef>
#include <cstdint>

/// Library version, major part.
#define TEXPR_VERSION_MAJOR 0
/// Library version, minor part.
#define TEXPR_VERSION_MINOR 1
/// Library version, patch part.
#define TEXPR_VERSION_PATCH 0

#if defined(__CUDACC__)
/// Marks functions callable from host and device code under nvcc; empty elsewhere.
#define TEXPR_HOST_DEVICE __host__ __device__
#else
#define TEXPR_HOST_DEVICE
#endif

/// Keeps a host function out of line. Graph-level entry points (one per node type) use it: inlined, each was
/// optimised again at every call site, and -O2 spent most of a gradient TU's time in the inliner.
#define TEXPR_NOINLINE [[gnu::noinline]]

/// Marks the placement walk's functions (tx::placement, tx::planned_kernels), which a training step's TU
/// instantiates once per saved value but runs only when a report is asked for: compiled for size, not speed.
#define TEXPR_REPORT_PATH [[gnu::cold]]

#if defined(__clang__) && !defined(__CUDACC__) && defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
/// On a parameter whose object the result refers to, so that clang warns when the result outlives it (a function
/// returning `t * 2` over its local tensor t: -Wreturn-stack-address; -Wdangling for other cases). Empty for other
/// compilers (g++ 12 has no equivalent attribute) and under nvcc.
#define TEXPR_LIFETIMEBOUND [[clang::lifetimebound]]
#endif
#endif
#ifndef TEXPR_LIFETIMEBOUND
#define TEXPR_LIFETIMEBOUND
#endif

#if defined(__CUDA_ARCH__)
/// Defined while nvcc compiles device code.
#define TEXPR_DEVICE_CODE 1
#endif

namespace texpr::detail {
/// True in translation units compiled by nvcc, the only ones that can evaluate cuda graphs.
inline constexpr bool cuda_compiler_v =
#if defined(__CUDACC__)
    true;
#else
    false;
#endif
} // namespace texpr::detail

namespace texpr {

/// Signed index and extent type used for shapes, strides and element counts.
using index_t = std::int64_t;

} // namespace texpr
