// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda backend (texpr.hpp includes it under nvcc): device memory, copies, device queries, and every
// implementation the cuda registry names: fused elementwise kernels, block reductions, cuBLAS matmul.
// Link CUDA::cudart and CUDA::cublas. Compile with --expt-relaxed-constexpr (the texpr CMake target adds it for
// CUDA sources): the shared per-element maths calls std::numeric_limits from device code.
#pragma once

#if defined(__CUDACC__)

#include "texpr/backend/cuda/column_sums.hpp"
#include "texpr/backend/cuda/copy.hpp"
#include "texpr/backend/cuda/cross_entropy.hpp"
#include "texpr/backend/cuda/device.hpp"
#include "texpr/backend/cuda/elementwise.hpp"
#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/gemm.hpp"
#include "texpr/backend/cuda/multi_tensor.hpp"
#include "texpr/backend/cuda/graph.hpp"
#include "texpr/backend/cuda/layout.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/reduce.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/backend/cuda/scan.hpp"
#include "texpr/backend/cuda/stream.hpp"
#include "texpr/backend/cuda/scaled_gemm.hpp"

#endif // __CUDACC__
