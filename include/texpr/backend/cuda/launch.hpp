// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Launch helpers shared by the cuda kernels: grid sizing, index packs and small functors.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/shape.hpp"

namespace texpr::detail::cuda_impl {

inline constexpr int block_threads = 256;  // 8 warps: enough to hide latency, small enough for many blocks per SM

/// Extents or strides passed to a kernel by value (std::array is not device-callable without relaxed constexpr).
template <std::size_t R> struct index_pack {
  index_t v[R > 0 ? R : 1] = {};
};

template <std::size_t R> index_pack<R> pack(const shape_t<R>& s) {
  index_pack<R> p;
  for (std::size_t d = 0; d != R; ++d) p.v[d] = s[d];
  return p;
}

/// SM count of the current device, cached per device (the attribute query is cheap but not free).
inline int multiprocessor_count() {
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  static std::atomic<int> cache[64] = {};
  if (dev >= 0 && dev < 64) {
    if (const int n = cache[dev].load(std::memory_order_relaxed)) return n;
  }
  int n = 0;
  TEXPR_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
  if (n <= 0) n = 1;
  if (dev >= 0 && dev < 64) cache[dev].store(n, std::memory_order_relaxed);
  return n;
}

/// Blocks for a grid-stride loop over `units` block-sized units of work: enough to fill the GPU a few
/// times over, no more (the loop covers the rest).
inline unsigned grid_for(index_t units) {
  const index_t cap = static_cast<index_t>(multiprocessor_count()) * 16;
  const index_t g = units < 1 ? 1 : (units < cap ? units : cap);
  return static_cast<unsigned>(g);
}

/// Ceiling division for non-negative values.
constexpr index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

/// Row-major unravel of a flat index over all R extents of `shape` (last fastest). Unrolled over the compile-time
/// rank, so idx stays in registers.
template <std::size_t R> TEXPR_HOST_DEVICE inline void unravel(index_t flat, const index_pack<R>& shape, index_t* idx) {
#if defined(TEXPR_DEVICE_CODE)
#pragma unroll
#endif
  for (int d = static_cast<int>(R) - 1; d >= 0; --d) {
    idx[d] = flat % shape.v[d];
    flat /= shape.v[d];
  }
}

} // namespace texpr::detail::cuda_impl

#endif // __CUDACC__
