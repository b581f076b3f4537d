// Compiled mode's one translation unit: with TEXPR_COMPILED_KERNELS defined in every translation unit of a
// program, the host GEMM family (float and double, every ISA's micro-kernels) is declared `extern template`
// everywhere and compiled only where this header is included, in exactly one .cpp file. Header-only (no define,
// no such file) stays the default; both produce the same code.
#pragma once

#if !defined(TEXPR_COMPILED_KERNELS)
#error "texpr: define TEXPR_COMPILED_KERNELS in every translation unit of the program, this one included (compiled_kernels.hpp compiles what the others then declare extern)"
#endif

#include "texpr/texpr.hpp"

namespace texpr::detail::host_impl {
template void gemm<float>(index_t, index_t, index_t, const float*, index_t, index_t, const float*, index_t, index_t,
                          float*, const block_callback*);
template void gemm<double>(index_t, index_t, index_t, const double*, index_t, index_t, const double*, index_t,
                           index_t, double*, const block_callback*);
} // namespace texpr::detail::host_impl
