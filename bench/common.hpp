// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared benchmark helpers: machine limits measured in the run (streaming bandwidth, peak FLOP/s), a result
// collector that keeps each benchmark's median, and the table printer.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace bench {

using clock_type = std::chrono::steady_clock;

/// Runs f(thread_index) on `threads` std::threads and returns the wall seconds of the slowest.
inline double timed_parallel(int threads, const std::function<void(int)>& f) {
  const auto t0 = clock_type::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(f, t);
  f(0);
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

/// Best-of-`reps` bytes/second of plain streaming loops over `bytes_per_array`-byte arrays, split over threads.
struct bandwidth {
  double read = 0;   ///< sum of an array (integer adds: the compiler vectorises them freely)
  double triad = 0;  ///< a[i] = b[i] + s * c[i], counted as 3 arrays (as STREAM does)
};

inline bandwidth measure_bandwidth(int threads, std::size_t bytes_per_array = std::size_t(256) << 20, int reps = 7) {
  const std::size_t n = bytes_per_array / sizeof(float);
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] = c[i] = 1.0f;
  bandwidth bw;
  std::vector<std::uint64_t> sink(static_cast<std::size_t>(threads) * 8);
  for (int r = 0; r < reps; ++r) {
    const double t_read = timed_parallel(threads, [&](int t) {
      const std::size_t m = n / 2, b0 = m * t / threads, b1 = m * (t + 1) / threads;
      const auto* p = reinterpret_cast<const std::uint64_t*>(b.get());
      std::uint64_t s = 0;
      for (std::size_t i = b0; i < b1; ++i) s += p[i];
      sink[static_cast<std::size_t>(t) * 8] = s;
    });
    bw.read = std::max(bw.read, static_cast<double>(bytes_per_array) / t_read);
    const double t_triad = timed_parallel(threads, [&](int t) {
      const std::size_t b0 = n * t / threads, b1 = n * (t + 1) / threads;
      float* __restrict pa = a.get();
      const float* __restrict pb = b.get();
      const float* __restrict pc = c.get();
      for (std::size_t i = b0; i < b1; ++i) pa[i] = pb[i] + 0.5f * pc[i];
    });
    bw.triad = std::max(bw.triad, 3.0 * static_cast<double>(bytes_per_array) / t_triad);
  }
  benchmark::DoNotOptimize(sink.data());
  benchmark::DoNotOptimize(a.get());
  return bw;
}

/// Peak FLOP/s of one core for T (float or double): independent register-resident FMA chains, widest ISA.
template <class T> double measure_peak_flops_one_core();

#if defined(__AVX512F__)
#define TEXPR_BENCH_VEC_BYTES 64
#elif defined(__AVX__)
#define TEXPR_BENCH_VEC_BYTES 32
#else
#define TEXPR_BENCH_VEC_BYTES 16
#endif

template <class T> __attribute__((noinline)) T fma_chains(long iters, T seed) {
  typedef T vec __attribute__((vector_size(TEXPR_BENCH_VEC_BYTES)));
  constexpr int chains = 24;
  vec acc[chains];
  for (int i = 0; i < chains; ++i) acc[i] = vec{} + seed * static_cast<T>(i + 1);
  const vec m = vec{} + static_cast<T>(0.9999), add = vec{} + static_cast<T>(1e-6);
  for (long t = 0; t < iters; ++t) {
#pragma GCC unroll 24
    for (int i = 0; i < chains; ++i) acc[i] = acc[i] * m + add;  // contracted to FMA (-ffp-contract=fast)
  }
  vec s = acc[0];
  for (int i = 1; i < chains; ++i) s += acc[i];
  return s[0];
}

template <class T> double measure_peak_flops_one_core() {
  constexpr int lanes = TEXPR_BENCH_VEC_BYTES / sizeof(T);
  const long iters = 4000000;
  double best = 0;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = clock_type::now();
    benchmark::DoNotOptimize(fma_chains<T>(iters, static_cast<T>(0.001)));
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    best = std::max(best, 2.0 * 24 * lanes * static_cast<double>(iters) / s);
  }
  return best;
}

/// Median real time (seconds) of each benchmark, by name, plus the counters the table needs.
struct result {
  double seconds = 0;
};

class collector : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, result> medians;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        medians[r.run_name.function_name] = {r.GetAdjustedRealTime() * unit_seconds(r.time_unit)};
      else if (r.run_type == Run::RT_Iteration && r.repetitions <= 1)
        medians[r.run_name.function_name] = {r.GetAdjustedRealTime() * unit_seconds(r.time_unit)};
    }
    ConsoleReporter::ReportRuns(runs);
  }
  /// Seconds for `name`, or 0 when it did not run (filtered out).
  double get(const std::string& name) const {
    auto it = medians.find(name);
    return it == medians.end() ? 0.0 : it->second.seconds;
  }

 private:
  static double unit_seconds(benchmark::TimeUnit u) {
    switch (u) {
      case benchmark::kNanosecond: return 1e-9;
      case benchmark::kMicrosecond: return 1e-6;
      case benchmark::kMillisecond: return 1e-3;
      default: return 1.0;
    }
  }
};

}  // namespace bench
