// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A user's CUDA translation unit: cuda tensor types, compile-time placement checks and a device
// evaluation, compiled by nvcc through texpr::texpr (never run: CI has no GPU).
#if __has_include(<texpr/backend/cuda/cuda.hpp>) || defined(TEXPR_CONSUMER_SINGLE_HEADER)
#include <texpr/texpr.hpp>
#define TEXPR_CONSUMER_HAS_CUDA_BACKEND 1
#else
// Without the CUDA backend the umbrella cannot compile under nvcc: use the parts that compile
// everywhere (tensor types, the cuda registry, placement).
#include <texpr/backend/cuda/registry.hpp>
#include <texpr/backend/host/registry.hpp>
#include <texpr/expr/elementwise.hpp>
#include <texpr/placement/runs_on.hpp>
#include <texpr/tensor/tensor.hpp>
#endif

#include <utility>

namespace tx = texpr;

using dmat = tx::tensor<float, 2, tx::cuda>;
using hmat = tx::tensor<float, 2, tx::host>;

static_assert(std::is_same_v<dmat::backend, tx::cuda>);
static_assert(dmat::rank == 2);
static_assert(tx::runs_on<decltype(std::declval<const dmat&>() * 2.0f + std::declval<const dmat&>()), tx::cuda>);
static_assert(!tx::runs_on<decltype(std::declval<const dmat&>() + 1.0f), tx::host>);
static_assert(tx::runs_on<decltype(std::declval<const hmat&>() + 1.0f), tx::host>);
static_assert(!tx::runs_on<decltype(std::declval<const hmat&>() + 1.0f), tx::cuda>);

#if defined(TEXPR_CONSUMER_HAS_CUDA_BACKEND)
// Instantiates the device path (fused kernel, copies) without running it.
hmat consumer_axpy(const hmat& a, const hmat& b) {
  dmat da = tx::to_device(a);
  dmat db = tx::to_device(b);
  auto e = da * 2.0f + db;
  static_assert(tx::runs_on<decltype(e), tx::cuda>);
  dmat dc = tx::eval(e);
  return tx::to_host(dc);
}
#endif
