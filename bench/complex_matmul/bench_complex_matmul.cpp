// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// texpr's complex matmul timed for run.py: reads "dtype n reps" lines on stdin, answers the best of reps calls in
// milliseconds (one untimed call first; the result tensor is preallocated and reused).
#include <texpr/texpr.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <iostream>
#include <string>

namespace tx = texpr;

template <class T> double best_ms(tx::index_t n, int reps) {
  tx::tensor<T, 2> a({n, n}), b({n, n}), c({n, n});
  for (tx::index_t i = 0; i < n * n; ++i) {
    a.data()[i] = T(std::sin(0.37 * double(i)), std::cos(0.11 * double(i)));
    b.data()[i] = T(std::cos(0.23 * double(i)), -std::sin(0.07 * double(i)));
  }
  c = tx::matmul(a, b);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    c = tx::matmul(a, b);
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

int main() {
  std::string dtype;
  long long n = 0;
  int reps = 0;
  while (std::cin >> dtype >> n >> reps) {
    const double ms = dtype == "complex64" ? best_ms<std::complex<float>>(n, reps) : best_ms<std::complex<double>>(n, reps);
    std::printf("%.6f\n", ms);
    std::fflush(stdout);
  }
}
