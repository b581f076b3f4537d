// Per-backend raw memory: allocation, release, zero-fill and copies. The cuda side lives in
// backend/cuda/memory.hpp and exists only under nvcc; elsewhere using it is a compile error.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

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

#if defined(__SANITIZE_ADDRESS__)
#define TEXPR_HOST_CACHE_DEFAULT_MB 0  // ASan must see every free: no reuse of released blocks
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEXPR_HOST_CACHE_DEFAULT_MB 0
#endif
#endif
#ifndef TEXPR_HOST_CACHE_DEFAULT_MB
#define TEXPR_HOST_CACHE_DEFAULT_MB 256
#endif

/// Released host blocks of 64 KiB or more, kept for reuse by size class. A training step allocates the same
/// temporaries every iteration; without reuse each is a fresh mmap whose pages fault in again (a quarter of the
/// host SGD step's time, issue 14). Bounded by TEXPR_HOST_CACHE_MB (default 256; 0 disables).
class host_block_cache {
 public:
  static constexpr std::size_t alignment = 64;
  static constexpr std::size_t min_bytes = std::size_t(1) << 16;

  static host_block_cache& instance() {
    static host_block_cache* cache = new host_block_cache;  // never destroyed: static tensors release into it at exit
    return *cache;
  }
  host_block_cache(const host_block_cache&) = delete;
  host_block_cache& operator=(const host_block_cache&) = delete;

  /// Bytes actually reserved for a request: size classes of 1/8 of a power of two at and above min_bytes.
  static std::size_t size_class(std::size_t bytes) {
    if (bytes < min_bytes) return bytes;
    std::size_t p = min_bytes;
    while (p * 2 <= bytes) p *= 2;
    const std::size_t step = p / 8;
    return (bytes + step - 1) / step * step;
  }

  /// A block of at least `bytes` (a class size from size_class), from the cache when one is free.
  void* take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i != free_.size(); ++i)
        if (free_[i].bytes == bytes) {
          void* p = free_[i].p;
          cached_ -= bytes;
          free_[i] = free_.back();
          free_.pop_back();
          return p;
        }
    }
    return ::operator new(bytes, std::align_val_t{alignment});
  }

  /// Returns a block taken with `bytes`; kept while the cache has room, else freed.
  void give(void* p, std::size_t bytes) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + bytes <= limit_ && free_.size() < 64) {
        try {
          free_.push_back({p, bytes});
          cached_ += bytes;
          return;
        } catch (...) {  // no room to record it: free it below
        }
      }
    }
    ::operator delete(p, std::align_val_t{alignment});
  }

  /// Frees cached blocks until at most `keep` bytes remain.
  void trim(std::size_t keep) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    while (cached_ > keep && !free_.empty()) {
      ::operator delete(free_.back().p, std::align_val_t{alignment});
      cached_ -= free_.back().bytes;
      free_.pop_back();
    }
  }

  /// Bytes held by the cache now.
  std::size_t cached_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  host_block_cache() {
    std::size_t mb = TEXPR_HOST_CACHE_DEFAULT_MB;
    if (const char* env = std::getenv("TEXPR_HOST_CACHE_MB")) mb = static_cast<std::size_t>(std::strtoull(env, nullptr, 10));
    limit_ = mb << 20;
  }
  struct block {
    void* p;
    std::size_t bytes;
  };
  std::mutex mutex_;
  std::vector<block> free_;
  std::size_t cached_ = 0, limit_ = 0;
};

template <> struct memory<host> {
  static constexpr std::size_t alignment = host_block_cache::alignment;  // a cache line; full vectors load aligned
  /// Number of host buffers allocated so far (tests use it to prove fusion allocates no temporaries).
  static inline std::atomic<std::size_t> allocations{0};
  // Blocks of min_bytes or more carry their class size in a header of one alignment unit before the data, so that
  // release (which is not told the size) can return them to the cache.
  static void* allocate(std::size_t bytes, stream_t) {
    if (bytes == 0) return nullptr;
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (bytes + alignment < host_block_cache::min_bytes) {
      auto* p = static_cast<unsigned char*>(::operator new(bytes + alignment, std::align_val_t{alignment}));
      const std::size_t tag = 0;
      std::memcpy(p, &tag, sizeof tag);
      return p + alignment;
    }
    const std::size_t total = host_block_cache::size_class(bytes + alignment);
    auto* p = static_cast<unsigned char*>(host_block_cache::instance().take(total));
    std::memcpy(p, &total, sizeof total);
    return p + alignment;
  }
  static void release(void* ptr, stream_t) noexcept {
    if (!ptr) return;
    auto* p = static_cast<unsigned char*>(ptr) - alignment;
    std::size_t total = 0;
    std::memcpy(&total, p, sizeof total);
    if (total == 0) ::operator delete(p, std::align_val_t{alignment});
    else host_block_cache::instance().give(p, total);
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
