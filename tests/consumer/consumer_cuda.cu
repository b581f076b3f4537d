// A user's CUDA translation unit: cuda tensor types and compile-time placement checks under nvcc.
// Compiled, never run (CI has no GPU).
#if !defined(TEXPR_CONSUMER_NO_CUDA_BACKEND)
#if __has_include(<texpr/backend/cuda/cuda.hpp>) || defined(TEXPR_CONSUMER_SINGLE_HEADER)
#include <texpr/texpr.hpp>
#else
// The CUDA backend has not landed yet, and the umbrella reaches it under nvcc: use the parts that
// compile everywhere (tensor types, the cuda registry, placement).
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

__global__ void consumer_kernel(float* out) { out[threadIdx.x] = TEXPR_VERSION_MINOR; }
#endif
