// detail::memory<cuda>: stream-ordered device allocation (cudaMallocAsync), zero-fill and copies.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/memory.hpp"

namespace texpr::detail {

/// Keeps freed memory in the current device's default pool instead of returning it to the driver at every
/// synchronisation (the pool's default release threshold is 0, so each to_host or item() would hand memory back
/// and the next step would map it again). Done once per device; the memory is still available to other pools
/// of this process and is returned when the process ends. Applications that share the GPU with other processes
/// can lower it again through cudaMemPoolSetAttribute.
inline void keep_pool_memory() {
  static std::atomic<std::uint64_t> done{0};  // one bit per device ordinal below 64
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  const std::uint64_t bit = dev >= 0 && dev < 64 ? std::uint64_t(1) << dev : 0;
  if (bit && (done.load(std::memory_order_relaxed) & bit)) return;
  cudaMemPool_t pool = nullptr;
  TEXPR_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  std::uint64_t threshold = UINT64_MAX;
  TEXPR_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  done.fetch_or(bit, std::memory_order_relaxed);
}

/// Device memory from the current device's stream-ordered pool; every operation is enqueued on `stream`.
template <> struct memory<cuda> {
  /// Enqueues an allocation; out of memory throws cuda_error and changes nothing else.
  static void* allocate(std::size_t bytes, stream_t stream) {
    if (bytes == 0) return nullptr;
    keep_pool_memory();
    void* p = nullptr;
    TEXPR_CUDA_CHECK(cudaMallocAsync(&p, bytes, stream));
    return p;
  }
  /// Enqueues the release after the work already on `stream` (so kernels still reading p finish first).
  static void release(void* p, stream_t stream) noexcept {
    // A destructor cannot report a failure; clear it so it does not surface at an unrelated later check.
    if (p && cudaFreeAsync(p, stream) != cudaSuccess) (void)cudaGetLastError();
  }
  static void zero(void* p, std::size_t bytes, stream_t stream) {
    if (bytes) TEXPR_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, stream));
  }
  static void copy(void* dst, const void* src, std::size_t bytes, stream_t stream) {
    if (bytes) TEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  }
  /// The one synchronising operation: the host needs the bytes when this returns.
  static void copy_to_host(void* dst, const void* src, std::size_t bytes, stream_t stream) {
    if (!bytes) return;
    TEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    TEXPR_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  /// Host to device; from pageable memory the runtime stages the source before returning.
  static void copy_from_host(void* dst, const void* src, std::size_t bytes, stream_t stream) {
    if (bytes) TEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
  }
};

/// A stream-ordered scratch buffer released (on the same stream) when it goes out of scope.
struct device_scratch {
  void* p = nullptr;
  stream_t stream = nullptr;
  device_scratch(std::size_t bytes, stream_t s) : p(memory<cuda>::allocate(bytes, s)), stream(s) {}
  device_scratch(const device_scratch&) = delete;
  device_scratch& operator=(const device_scratch&) = delete;
  ~device_scratch() { memory<cuda>::release(p, stream); }
};

} // namespace texpr::detail

#endif // __CUDACC__
