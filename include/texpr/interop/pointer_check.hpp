// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::interop_error and tx::check_device_pointer: checks on memory that other libraries hand to texpr.
#pragma once

#include <stdexcept>

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/core/config.hpp"
#endif

namespace texpr {

/// Thrown when memory from another library is not what texpr was asked to view (dtype, rank, device, offset,
/// host memory for a cuda view); what() names what was expected and what was found.
struct interop_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

#if defined(__CUDACC__)

namespace detail {
inline std::string pointer_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}
} // namespace detail

/// Throws interop_error unless p is memory the current device can read at that address: cudaMalloc(Async) memory
/// of the current device, managed memory, or mapped pinned host memory. `what` starts the message (the caller's
/// name). Host memory that CUDA does not know is the mistake this catches. nvcc only.
inline void check_device_pointer(const void* p, std::string_view what = "check_device_pointer") {
  const std::string who = "texpr: " + std::string(what) + ": ";
  if (!p) throw interop_error(who + "expected device memory for tx::cuda, got a null pointer");
  cudaPointerAttributes a{};
  TEXPR_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
  switch (a.type) {
    case cudaMemoryTypeUnregistered:
      throw interop_error(who + "expected device memory for tx::cuda, got host memory at " + detail::pointer_text(p) +
                          " (not allocated or registered by CUDA); copy it with tx::to_device, or view it as tx::host");
    case cudaMemoryTypeHost:
      if (a.devicePointer != p)  // pinned but not mapped at the same address (no unified addressing)
        throw interop_error(who + "pinned host memory at " + detail::pointer_text(p) +
                            " is not mapped into the device's address space; allocate it with cudaHostAllocMapped");
      return;
    case cudaMemoryTypeDevice: {
      int current = 0;
      TEXPR_CUDA_CHECK(cudaGetDevice(&current));
      if (a.device != current)
        throw interop_error(who + "memory at " + detail::pointer_text(p) + " is on cuda device " +
                            std::to_string(a.device) + ", the current device is " + std::to_string(current) +
                            "; call cudaSetDevice(" + std::to_string(a.device) + ") first");
      return;
    }
    default:  // cudaMemoryTypeManaged: readable from every device
      return;
  }
}

namespace detail {
/// check_device_pointer for the interop entry points: on in debug builds (NDEBUG undefined) and wherever
/// TEXPR_CHECK_DEVICE_POINTERS is defined, a no-op otherwise (it costs a driver call). Empty memory is not checked:
/// its pointer may be null.
inline void auto_check_device_pointer([[maybe_unused]] const void* p, [[maybe_unused]] index_t size,
                                      [[maybe_unused]] std::string_view what) {
#if !defined(NDEBUG) || defined(TEXPR_CHECK_DEVICE_POINTERS)
  if (size != 0) check_device_pointer(p, what);
#endif
}
} // namespace detail

#endif // __CUDACC__

} // namespace texpr
