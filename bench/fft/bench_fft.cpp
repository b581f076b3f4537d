// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine's timing program, driven by bench/fft/run.py (which times NumPy's np.fft in the same run).
// Reads one case a line from stdin, `<case> <dtype> <n0> [n1] <reps>`, and prints the best of `reps` timed calls
// in seconds, after one untimed call (the plan is built and cached there, as NumPy's first call builds its plan):
//   c2c  double N       complex forward, out of place (as np.fft.fft(x))
//   r2c  double N       real forward (np.fft.rfft)
//   c2r  double N       real backward with 1 / N (np.fft.irfft)
//   fft2 double R C     rows, then columns in gathered blocks, out of place (np.fft.fft2)
//   fft2_inplace_columns double R C   the same, the column pass as one [R][C] interleaved batch with no copy
//   fftw_c2c double N   FFTW3's out-of-place complex forward (FFTW_MEASURE plan), only when built with
//                       -DTEXPR_BENCH_FFTW and -lfftw3 (FFTW3 is GPL: a measurement, never a texpr dependency)
//   eigen_c2c double N  Eigen's unsupported FFT module (its default kissfft backend), with -DTEXPR_BENCH_EIGEN
//   kissfft_c2c float N KissFFT (Debian's libkissfft-dev, float only), with -DTEXPR_BENCH_KISSFFT -lkissfft-float
#include <texpr/backend/host/fft_engine.hpp>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#if defined(TEXPR_BENCH_FFTW)
#include <fftw3.h>
#endif
#if defined(TEXPR_BENCH_EIGEN)
#include <unsupported/Eigen/FFT>
#endif
#if defined(TEXPR_BENCH_KISSFFT)
#include <kissfft/kiss_fft.h>
#endif

namespace {

namespace d = texpr::detail;

template <class F>
double best_of(int reps, F&& f) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

template <class T>
std::vector<std::complex<T>> signal(std::size_t n) {
  std::vector<std::complex<T>> z(n);
  for (std::size_t i = 0; i < n; ++i)
    z[i] = {static_cast<T>((i * 7919 % 1009) / 1009.0 - 0.5), static_cast<T>((i * 104729 % 997) / 997.0 - 0.5)};
  return z;
}

template <class T>
double run(const std::string& name, std::size_t n0, std::size_t n1, int reps) {
  if (name == "c2c") {
    const auto x = signal<T>(n0);
    std::vector<std::complex<T>> y(n0);
    return best_of(reps, [&] { d::fft_c2c<T>(n0, x.data(), {1, 0}, y.data(), {1, 0}, 1, true, T(1)); });
  }
  if (name == "r2c" || name == "c2r") {
    std::vector<T> x(n0);
    for (std::size_t i = 0; i < n0; ++i) x[i] = static_cast<T>((i * 7919 % 1009) / 1009.0 - 0.5);
    std::vector<std::complex<T>> y(n0 / 2 + 1);
    d::fft_r2c<T>(n0, x.data(), {1, 0}, y.data(), {1, 0}, 1, T(1));
    if (name == "r2c") return best_of(reps, [&] { d::fft_r2c<T>(n0, x.data(), {1, 0}, y.data(), {1, 0}, 1, T(1)); });
    return best_of(reps, [&] { d::fft_c2r<T>(n0, y.data(), {1, 0}, x.data(), {1, 0}, 1, T(1) / static_cast<T>(n0)); });
  }
  if (name == "fft2" || name == "fft2_inplace_columns") {
    const auto x = signal<T>(n0 * n1);
    std::vector<std::complex<T>> y(n0 * n1);
    const auto rows = static_cast<std::ptrdiff_t>(n1);
    const bool blocks = name == "fft2";
    const auto& plan = *d::fft_cached_plan<d::fft_complex_plan<T>>(n0);
    return best_of(reps, [&] {
      d::fft_c2c<T>(n1, x.data(), {1, rows}, y.data(), {1, rows}, n0, true, T(1));
      if (blocks)
        d::fft_c2c<T>(plan, y.data(), {rows, 1}, y.data(), {rows, 1}, n1, true, T(1));
      else {
        T* scratch = d::fft_scratch<T>(2 * plan.scratch_size(n1));
        plan.template run<true>(reinterpret_cast<T*>(y.data()), reinterpret_cast<T*>(y.data()), scratch, n1);
      }
    });
  }
#if defined(TEXPR_BENCH_FFTW)
  if (name == "fftw_c2c" && std::is_same_v<T, double>) {
    auto* in = fftw_alloc_complex(n0);
    auto* out = fftw_alloc_complex(n0);
    fftw_plan p = fftw_plan_dft_1d(static_cast<int>(n0), in, out, FFTW_FORWARD, FFTW_MEASURE);
    const auto x = signal<double>(n0);
    for (std::size_t i = 0; i < n0; ++i) {
      in[i][0] = x[i].real();
      in[i][1] = x[i].imag();
    }
    const double t = best_of(reps, [&] { fftw_execute(p); });
    fftw_destroy_plan(p);
    fftw_free(in);
    fftw_free(out);
    return t;
  }
#endif
#if defined(TEXPR_BENCH_EIGEN)
  if (name == "eigen_c2c") {
    Eigen::FFT<T> fft;
    const auto x = signal<T>(n0);
    std::vector<std::complex<T>> y(n0);
    return best_of(reps, [&] { fft.fwd(y.data(), x.data(), static_cast<int>(n0)); });
  }
#endif
#if defined(TEXPR_BENCH_KISSFFT)
  if (name == "kissfft_c2c" && std::is_same_v<T, float>) {
    kiss_fft_cfg cfg = kiss_fft_alloc(static_cast<int>(n0), 0, nullptr, nullptr);
    const auto x = signal<float>(n0);
    std::vector<kiss_fft_cpx> in(n0), out(n0);
    for (std::size_t i = 0; i < n0; ++i) in[i] = {x[i].real(), x[i].imag()};
    const double t = best_of(reps, [&] { kiss_fft(cfg, in.data(), out.data()); });
    kiss_fft_free(cfg);
    return t;
  }
#endif
  return -1;  // not built in, or unknown
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string name, dtype;
    std::vector<std::size_t> numbers;
    words >> name >> dtype;
    for (std::size_t v; words >> v;) numbers.push_back(v);
    if (numbers.size() < 2) {
      std::cout << -1 << std::endl;
      continue;
    }
    const int reps = static_cast<int>(numbers.back());
    const std::size_t n0 = numbers[0], n1 = numbers.size() > 2 ? numbers[1] : 1;
    const double t = dtype == "float" ? run<float>(name, n0, n1, reps) : run<double>(name, n0, n1, reps);
    std::cout << t << std::endl;
  }
}
