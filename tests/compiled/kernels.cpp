// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiled mode's one translation unit (texpr/compiled_kernels.hpp): the host GEMM family is compiled here only.
#include <texpr/compiled_kernels.hpp>
