// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine's plan cache: the plans of the lengths most recently used, per plan kind and precision.
//
// Building a plan costs about as much as a few transforms of its length (factors, twiddles, and for Bluestein one
// transform of the filter), so repeated transforms reuse it: fft_cached_plan<fft_complex_plan<double>>(n) returns
// the same immutable plan to every caller until it falls out of the cache. Each kind (complex or real, float or
// double) keeps its fft_plan_cache_capacity most recently used lengths; a plan evicted while a transform still runs
// lives on in that caller's shared_ptr. One mutex per kind guards the list; a plan is built outside the lock, so
// a long build never blocks lookups (two threads missing on one length at once may both build it; one copy stays).
#pragma once

#include <cstddef>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace texpr::detail {

/// How many lengths each plan kind keeps (NumPy's pocketfft keeps 16; a plan of length n holds about n twiddles).
inline constexpr std::size_t fft_plan_cache_capacity = 16;

/// The cached plan of kind Plan (fft_complex_plan<T> or fft_real_plan<T>) for length n, built on first use.
template <class Plan>
std::shared_ptr<const Plan> fft_cached_plan(std::size_t n) {
  struct cache {
    std::mutex mutex;
    std::list<std::pair<std::size_t, std::shared_ptr<const Plan>>> entries;  // most recently used first
    std::shared_ptr<const Plan> find(std::size_t length) {                   // under the lock
      for (auto it = entries.begin(); it != entries.end(); ++it)
        if (it->first == length) {
          entries.splice(entries.begin(), entries, it);
          return entries.front().second;
        }
      return nullptr;
    }
  };
  static cache c;  // (an inline function's static: one per program, not per translation unit)
  {
    const std::lock_guard<std::mutex> lock(c.mutex);
    if (auto plan = c.find(n)) return plan;
  }
  auto built = std::make_shared<const Plan>(n);
  const std::lock_guard<std::mutex> lock(c.mutex);
  if (auto plan = c.find(n)) return plan;
  c.entries.emplace_front(n, built);
  if (c.entries.size() > fft_plan_cache_capacity) c.entries.pop_back();
  return built;
}

}  // namespace texpr::detail
