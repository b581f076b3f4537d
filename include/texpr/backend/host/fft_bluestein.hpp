// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine's Bluestein (chirp-z) transform: a length n with a large prime factor as a convolution of
// length M >= 2n - 1, run by two mixed-radix transforms of a length with factors 2, 3 and 5 only.
//
// With jk = (j^2 + k^2 - (k - j)^2) / 2 and c_j = exp(-i pi j^2 / n), the forward transform is
// X_k = c_k * sum_j (x_j c_j) conj(c_(k-j)): a pointwise product, a circular convolution with conj(c), and another
// pointwise product. The backward transform is conj(forward(conj(x))), the conjugations folded into those products.
// j^2 is reduced modulo 2n in integers before it becomes an angle, so the chirp stays accurate for large n.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "texpr/backend/host/fft_mixed_radix.hpp"
#include "texpr/backend/host/fft_roots.hpp"

namespace texpr::detail {

/// The smallest 2^a 3^b 5^c >= n: the convolution length, cheaper than the next power of two (up to 2x smaller)
/// and still run by the written-out butterflies only.
inline std::size_t fft_smooth_size(std::size_t n) {
  std::size_t best = 1;
  while (best < n) best *= 2;
  for (std::size_t f5 = 1; f5 < best; f5 *= 5)
    for (std::size_t f35 = f5; f35 < best; f35 *= 3) {
      std::size_t v = f35;
      while (v < n) v *= 2;
      if (v < best) best = v;
    }
  return best;
}

/// Bluestein's transform of one length in precision T. Immutable once built.
template <class T>
class fft_bluestein {
 public:
  /// The plan for length n (n >= 2).
  explicit fft_bluestein(std::size_t n) : n_(n), m_(fft_smooth_size(2 * n - 1)), inner_(m_) {
    const std::uint64_t two_n = 2 * static_cast<std::uint64_t>(n);
    chirp_.resize(2 * n);
    for (std::size_t k = 0; k < n; ++k) {
      const std::uint64_t kk = static_cast<std::uint64_t>(k) * k % two_n;
      const fft_complex<double> c = fft_root(kk, two_n);  // exp(-i pi k^2 / n)
      chirp_[2 * k] = static_cast<T>(c.re);
      chirp_[2 * k + 1] = static_cast<T>(c.im);
    }
    // the filter conj(c) at offsets 0..n-1 and -(n-1)..-1 (wrapped), transformed once and scaled by 1 / M so the
    // backward inner transform of the product needs no normalisation
    std::vector<T> b(2 * m_, T(0)), scratch(2 * inner_.scratch_size(1));
    for (std::size_t k = 0; k < n; ++k) {
      b[2 * k] = chirp_[2 * k];
      b[2 * k + 1] = -chirp_[2 * k + 1];
      if (k != 0) {
        b[2 * (m_ - k)] = b[2 * k];
        b[2 * (m_ - k) + 1] = b[2 * k + 1];
      }
    }
    inner_.template run<true>(b.data(), b.data(), scratch.data(), 1);
    const T scale = T(1) / static_cast<T>(m_);
    for (T& v : b) v *= scale;
    filter_ = std::move(b);
  }

  /// The length.
  std::size_t size() const noexcept { return n_; }
  /// The convolution length M.
  std::size_t convolution_size() const noexcept { return m_; }
  /// Complex values of scratch that run() needs for s interleaved sequences.
  std::size_t scratch_size(std::size_t s) const noexcept { return m_ * s + inner_.scratch_size(s); }

  /// Transforms s interleaved sequences from `in` to `out` (layout as fft_mixed_radix::run; `in` may equal `out`),
  /// unnormalised; `scratch` holds scratch_size(s) complex values.
  template <bool Forward>
  void run(const T* in, T* out, T* scratch, std::size_t s) const {
    T* a = scratch;  // the convolution operand, M * s values
    T* inner_scratch = scratch + 2 * m_ * s;
    for (std::size_t j = 0; j < n_; ++j) {
      const fft_complex<T> c = fft_load(chirp_.data(), j);
      for (std::size_t q = 0; q < s; ++q) {
        fft_complex<T> x = fft_load(in, q + s * j);
        if constexpr (!Forward) x.im = -x.im;
        fft_store(a, q + s * j, fft_mul<false>(x, c));
      }
    }
    for (std::size_t i = 2 * n_ * s; i < 2 * m_ * s; ++i) a[i] = T(0);
    inner_.template run<true>(a, a, inner_scratch, s);
    for (std::size_t k = 0; k < m_; ++k) {
      const fft_complex<T> f = fft_load(filter_.data(), k);
      for (std::size_t q = 0; q < s; ++q) fft_store(a, q + s * k, fft_mul<false>(fft_load(a, q + s * k), f));
    }
    inner_.template run<false>(a, a, inner_scratch, s);
    for (std::size_t k = 0; k < n_; ++k) {
      const fft_complex<T> c = fft_load(chirp_.data(), k);
      for (std::size_t q = 0; q < s; ++q) {
        fft_complex<T> y = fft_mul<false>(fft_load(a, q + s * k), c);
        if constexpr (!Forward) y.im = -y.im;
        fft_store(out, q + s * k, y);
      }
    }
  }

 private:
  std::size_t n_, m_;
  fft_mixed_radix<T> inner_;
  std::vector<T> chirp_;   // c_k, k < n, (re, im) pairs
  std::vector<T> filter_;  // the transformed conj(c) filter over M, times 1 / M
};

}  // namespace texpr::detail
