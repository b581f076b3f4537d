// Per-backend raw memory: allocation, release, zero-fill and copies. The cuda side lives in
// backend/cuda/memory.hpp and exists only under nvcc; elsewhere using it is a compile error.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/type_list.hpp"

namespace texpr::detail {

/// Releases a buffer; a plain function pointer so tensors of any backend destroy correctly anywhere.
using release_fn = void (*)(void*, stream_t) noexcept;

/// Fails to compile, once per program however many places need it, when device memory is used outside nvcc.
template <class Backend> constexpr void require_memory_compiler() {
  static_assert(!std::is_same_v<Backend, cuda> || cuda_compiler_v,
                "texpr: device memory can only be allocated, copied or evaluated in a CUDA translation unit; "
                "compile this file with nvcc (the cuda types and registry are usable everywhere)");
}

/// Backend memory. Outside nvcc, memory<cuda> is this stand-in (callers check require_memory_compiler first, so the
/// one error above is the only one); under nvcc backend/cuda/memory.hpp specialises it.
template <class Backend> struct memory {
  static void* allocate(std::size_t, stream_t) { return nullptr; }
  static void release(void*, stream_t) noexcept {}
  static void zero(void*, std::size_t, stream_t) {}
  static void copy(void*, const void*, std::size_t, stream_t) {}
  static void copy_to_host(void*, const void*, std::size_t, stream_t) {}
};

template <> struct memory<host> {
  static constexpr std::size_t alignment = 64;  // a cache line; lets full vectors load aligned
  /// Number of host buffers allocated so far (tests use it to prove fusion allocates no temporaries).
  static inline std::atomic<std::size_t> allocations{0};
  static void* allocate(std::size_t bytes, stream_t) {
    if (bytes == 0) return nullptr;
    allocations.fetch_add(1, std::memory_order_relaxed);
    return ::operator new(bytes, std::align_val_t{alignment});
  }
  static void release(void* p, stream_t) noexcept {
    if (p) ::operator delete(p, std::align_val_t{alignment});
  }
  static void zero(void* p, std::size_t bytes, stream_t) {
    if (bytes) std::memset(p, 0, bytes);
  }
  static void copy(void* dst, const void* src, std::size_t bytes, stream_t) {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  static void copy_to_host(void* dst, const void* src, std::size_t bytes, stream_t) {
    if (bytes) std::memcpy(dst, src, bytes);
  }
};

} // namespace texpr::detail
