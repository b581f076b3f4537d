// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::cuda_stream: the stream texpr's cuda work runs on when no stream is given. It is a texpr-owned,
// non-blocking stream, never the legacy default stream: capture into a CUDA graph cannot start on the legacy
// stream, and work there serialises with every other blocking stream of the process.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <atomic>
#include <mutex>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/core/stream.hpp"

namespace texpr {

/// texpr's stream on the current device: created on first use (cudaStreamNonBlocking), shared by every thread,
/// kept until the process ends. Tensors and evaluations given no stream run here; it does not wait for the legacy
/// default stream, so order your own CUDA work against it (pass it to your calls, or synchronise it).
inline stream_t cuda_stream() {
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64)
    throw cuda_error("cudaGetDevice(&dev)", "device ordinal beyond texpr's 64-device table", __FILE__, __LINE__, 0);
  static std::atomic<stream_t> streams[64] = {};
  if (stream_t s = streams[dev].load(std::memory_order_acquire)) return s;
  static std::mutex creating;
  std::lock_guard<std::mutex> lock(creating);
  if (stream_t s = streams[dev].load(std::memory_order_acquire)) return s;
  cudaStream_t s = nullptr;
  TEXPR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  streams[dev].store(s, std::memory_order_release);
  return s;
}

namespace detail {
/// The stream work asked for on `s` runs on: `s`, or texpr's stream when `s` is null.
inline stream_t resolve_stream(stream_t s) { return s ? s : cuda_stream(); }
} // namespace detail

} // namespace texpr

#endif // __CUDACC__
