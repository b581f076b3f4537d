// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Signal processing with tx::fft and tx::linalg, self-checking: a noisy signal's spectrum (rfft) shows its two
// tones; a low-pass filter in the frequency domain (irfft of the masked spectrum) removes the interference; a
// least-squares fit (lstsq) of sines and cosines at the detected frequencies recovers each tone's amplitude and phase.
#include <texpr/fft.hpp>
#include <texpr/linalg.hpp>

#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>

namespace tx = texpr;

int main() {
  constexpr tx::index_t n = 1000;  // samples
  constexpr double rate = 1000.0;  // Hz: bins are 1 Hz apart
  constexpr double f1 = 50, f2 = 120, interference = 400, cutoff = 200;
  constexpr double a1 = 1.5, p1 = 0.3, a2 = 0.7, p2 = -1.1;
  constexpr double two_pi = 2 * std::numbers::pi;
  const tx::tensor<double, 1> t = tx::cast<double>(tx::arange<std::int64_t>(n)) * (1 / rate);
  const tx::tensor<double, 1> clean = a1 * tx::cos(t * (two_pi * f1) + p1) + a2 * tx::cos(t * (two_pi * f2) + p2);
  const tx::tensor<double, 1> signal = clean + 0.8 * tx::sin(t * (two_pi * interference));

  // The spectrum: |rfft| / (n / 2) is each tone's amplitude at its bin (the tones sit on bins: no leakage).
  const tx::tensor<std::complex<double>, 1> spectrum = tx::fft::rfft(signal);
  const tx::tensor<double, 1> freqs = tx::fft::rfftfreq(n, 1 / rate);
  const tx::tensor<double, 1> amplitude = tx::abs(spectrum) * (2.0 / n);
  std::printf("spectrum peaks (amplitude > 0.1):");
  int peaks = 0;
  for (tx::index_t k = 0; k < amplitude.size(); ++k)
    if (amplitude(k) > 0.1) std::printf(" %.0f Hz: %.3f", freqs(k), amplitude(k)), ++peaks;
  std::printf("\n");
  bool ok = peaks == 3 && std::abs(amplitude(50) - a1) < 1e-9 && std::abs(amplitude(120) - a2) < 1e-9 &&
            std::abs(amplitude(400) - 0.8) < 1e-9;

  // Low-pass: the spectrum times a mask of the bins at or below the cutoff, back to n samples.
  const auto pass = tx::make_complex(tx::cast<double>(freqs <= cutoff), tx::zeros<double>(freqs.shape()));
  const tx::tensor<double, 1> filtered = tx::fft::irfft(spectrum * pass, n);
  double worst = 0;
  for (tx::index_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(filtered(i) - clean(i)));
  std::printf("low-pass at %.0f Hz: max |filtered - clean| = %.2e\n", cutoff, worst);
  ok = ok && worst < 1e-11;

  // Least squares: filtered ≈ c1 cos(w1 t) + s1 sin(w1 t) + c2 cos(w2 t) + s2 sin(w2 t) (lstsq, LAPACK's gelsd).
  auto column = [&](auto&& e) { return tx::unsqueeze(std::forward<decltype(e)>(e), -1); };
  const tx::tensor<double, 2> design =
      tx::concat(1, column(tx::cos(t * (two_pi * f1))), column(tx::sin(t * (two_pi * f1))),
                 column(tx::cos(t * (two_pi * f2))), column(tx::sin(t * (two_pi * f2))));
  const tx::tensor<double, 2> x = tx::linalg::lstsq(design, tx::unsqueeze(filtered, -1));
  // a cos(w t + p) = a cos(p) cos(w t) - a sin(p) sin(w t)
  const double fit_a1 = std::hypot(x(0, 0), x(1, 0)), fit_p1 = std::atan2(-x(1, 0), x(0, 0));
  const double fit_a2 = std::hypot(x(2, 0), x(3, 0)), fit_p2 = std::atan2(-x(3, 0), x(2, 0));
  std::printf("least-squares fit: %.0f Hz amplitude %.6f phase %.6f; %.0f Hz amplitude %.6f phase %.6f\n", f1, fit_a1,
              fit_p1, f2, fit_a2, fit_p2);
  ok = ok && std::abs(fit_a1 - a1) < 1e-9 && std::abs(fit_p1 - p1) < 1e-9 && std::abs(fit_a2 - a2) < 1e-9 &&
       std::abs(fit_p2 - p2) < 1e-9;
  std::printf("%s\n", ok ? "signal: all checks passed" : "signal: CHECK FAILED");
  return ok ? 0 : 1;
}
