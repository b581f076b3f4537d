// detail::memory<cuda>: stream-ordered device allocation (cudaMallocAsync), zero-fill and copies.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/memory.hpp"

namespace texpr::detail {

/// Device memory from the current device's stream-ordered pool; every operation is enqueued on `stream`.
template <> struct memory<cuda> {
  /// Enqueues an allocation; out of memory throws cuda_error and changes nothing else.
  static void* allocate(std::size_t bytes, stream_t stream) {
    if (bytes == 0) return nullptr;
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
