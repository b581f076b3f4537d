// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled mode's one translation unit: with TEXPR_COMPILED_KERNELS defined in every translation unit of a
// program, the host GEMM family (float and double, every ISA's micro-kernels) is declared `extern template`
// everywhere and compiled only in the one .cpp file that includes this header first. Header-only (no define, no
// such file) stays the default; both produce the same code. With the single header, define
// TEXPR_COMPILED_KERNELS_HERE before including it in that one file instead.
#pragma once

#if !defined(TEXPR_COMPILED_KERNELS)
#error "texpr: define TEXPR_COMPILED_KERNELS in every translation unit of the program, this one included (compiled_kernels.hpp compiles what the others then declare extern)"
#endif
#if defined(TEXPR_VERSION_MAJOR) && !defined(TEXPR_COMPILED_KERNELS_HERE)
#error "texpr: include texpr/compiled_kernels.hpp before any other texpr header in its translation unit"
#endif

#define TEXPR_COMPILED_KERNELS_HERE 1  // backend/host/gemm.hpp: instantiate here, declare extern elsewhere
#include "texpr/texpr.hpp"
