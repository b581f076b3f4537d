// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine's plans: a complex transform of any length (mixed radix, or Bluestein's when a large prime
// factor makes that cheaper), and the real-input (r2c) and real-output (c2r) transforms built on it.
//
// A plan is immutable once built and serves both directions, any batch and any thread; it allocates nothing when
// run (the caller passes scratch; see scratch_size). fft_plan_cache.hpp keeps built plans.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "texpr/backend/host/fft_bluestein.hpp"
#include "texpr/backend/host/fft_mixed_radix.hpp"
#include "texpr/backend/host/fft_roots.hpp"

namespace texpr::detail {

/// A rough cost of a mixed-radix transform of length n, in units of one radix-2 butterfly per element: what the
/// choice between the direct passes and Bluestein's compares (the constants are measured ratios of pass times on
/// x86-64, not operation counts: a generic radix-p pass costs about p / 4 radix-2 passes per element).
inline double fft_mixed_radix_cost(std::size_t n) {
  double per_element = 0;
  for (const std::size_t r : fft_factors(n)) {
    switch (r) {
      case 2:
        per_element += 1.0;
        break;
      case 3:
        per_element += 1.4;
        break;
      case 4:
        per_element += 1.5;
        break;
      case 5:
        per_element += 2.0;
        break;
      default:
        per_element += 0.3 * static_cast<double>(r);
        break;
    }
  }
  return static_cast<double>(n) * per_element;
}

/// True when Bluestein's transform is expected to beat the mixed-radix passes for length n: two transforms of the
/// smooth length M >= 2n - 1 plus three pointwise products, against the generic passes of n's large factors.
inline bool fft_prefers_bluestein(std::size_t n) {
  if (n < 2) return false;
  const std::size_t m = fft_smooth_size(2 * n - 1);
  const double chirp = 2 * fft_mixed_radix_cost(m) + 2.5 * static_cast<double>(m);
  return chirp < fft_mixed_radix_cost(n);
}

/// A complex transform of one length in precision T: the mixed-radix passes, or Bluestein's transform.
template <class T>
class fft_complex_plan {
 public:
  /// The plan for length n (n >= 1).
  explicit fft_complex_plan(std::size_t n) : n_(n) {
    if (fft_prefers_bluestein(n))
      chirp_ = std::make_unique<fft_bluestein<T>>(n);
    else
      direct_.emplace(n);
  }
  /// The length.
  std::size_t size() const noexcept { return n_; }
  /// True when the plan runs Bluestein's transform.
  bool uses_bluestein() const noexcept { return chirp_ != nullptr; }
  /// Complex values of scratch that run() needs for s interleaved sequences.
  std::size_t scratch_size(std::size_t s) const noexcept {
    return chirp_ ? chirp_->scratch_size(s) : direct_->scratch_size(s);
  }
  /// Transforms s interleaved sequences (element p of sequence q at [q + s * p], (re, im) pairs) from `in` to `out`,
  /// unnormalised; `in` may equal `out`; `scratch` holds scratch_size(s) complex values and overlaps neither.
  template <bool Forward>
  void run(const T* in, T* out, T* scratch, std::size_t s) const {
    if (chirp_)
      chirp_->template run<Forward>(in, out, scratch, s);
    else
      direct_->template run<Forward>(in, out, scratch, s);
  }

 private:
  std::size_t n_;
  std::optional<fft_mixed_radix<T>> direct_;
  std::unique_ptr<fft_bluestein<T>> chirp_;
};

/// A real-input forward (r2c) and real-output backward (c2r) transform of length n in precision T. An even n runs
/// as a complex transform of n / 2 (even samples as real parts, odd ones as imaginary parts) and one pass that
/// separates the two spectra: half the work of a complex transform of n. An odd n runs the complex transform of n.
template <class T>
class fft_real_plan {
 public:
  /// The plan for length n (n >= 1).
  explicit fft_real_plan(std::size_t n) : n_(n), complex_(n % 2 == 0 ? n / 2 : n) {
    if (n % 2 == 0) {
      const fft_roots w(n);
      twiddles_.reserve(n);
      for (std::size_t k = 0; k < n / 2; ++k) {
        const fft_complex<double> c = w(k);
        twiddles_.push_back(static_cast<T>(c.re));
        twiddles_.push_back(static_cast<T>(c.im));
      }
    }
  }
  /// The length of the real signal.
  std::size_t size() const noexcept { return n_; }
  /// The length of the spectrum: n / 2 + 1.
  std::size_t spectrum_size() const noexcept { return n_ / 2 + 1; }
  /// The complex transform the plan runs (length n / 2 or n).
  const fft_complex_plan<T>& complex_plan() const noexcept { return complex_; }
  /// Complex values of scratch that forward() and backward() need for s interleaved sequences.
  std::size_t scratch_size(std::size_t s) const noexcept { return complex_.size() * s + complex_.scratch_size(s); }

  /// r2c: s interleaved real sequences x[q + s * j] (j < n) to their spectra out[q + s * k] (k <= n / 2, (re, im)
  /// pairs), unnormalised. `scratch` holds scratch_size(s) complex values and overlaps neither.
  void forward(const T* x, T* out, T* scratch, std::size_t s) const {
    const std::size_t c = complex_.size();
    T* inner = scratch + 2 * c * s;  // the complex plan's own scratch
    if (n_ % 2 == 1) {
      for (std::size_t i = 0; i < n_ * s; ++i) fft_store(scratch, i, fft_complex<T>{x[i], T(0)});
      complex_.template run<true>(scratch, scratch, inner, s);
      std::memcpy(out, scratch, 2 * spectrum_size() * s * sizeof(T));
      return;
    }
    // z_j = x_2j + i x_2j+1: already that layout in memory when s == 1
    const T* z = x;
    if (s != 1) {
      for (std::size_t j = 0; j < c; ++j)
        for (std::size_t q = 0; q < s; ++q)
          fft_store(scratch, q + s * j, fft_complex<T>{x[q + s * 2 * j], x[q + s * (2 * j + 1)]});
      z = scratch;
    }
    complex_.template run<true>(z, out, inner, s);
    // Z = E + i O (E, O the spectra of the even and odd samples); X_k = E_k + w^k O_k, X_(h-k) = conj(E_k - w^k O_k)
    for (std::size_t q = 0; q < s; ++q) {
      const fft_complex<T> z0 = fft_load(out, q);
      fft_store(out, q, fft_complex<T>{z0.re + z0.im, T(0)});
      fft_store(out, q + s * c, fft_complex<T>{z0.re - z0.im, T(0)});
    }
    for (std::size_t k = 1; 2 * k <= c; ++k) {
      const fft_complex<T> w = fft_load(twiddles_.data(), k);
      for (std::size_t q = 0; q < s; ++q) {
        const fft_complex<T> a = fft_load(out, q + s * k), b = fft_load(out, q + s * (c - k));
        const fft_complex<T> even{T(0.5) * (a.re + b.re), T(0.5) * (a.im - b.im)};
        const fft_complex<T> odd{T(0.5) * (a.im + b.im), T(0.5) * (b.re - a.re)};
        const fft_complex<T> t = fft_mul<false>(odd, w);
        fft_store(out, q + s * k, fft_add(even, t));
        fft_store(out, q + s * (c - k), fft_complex<T>{even.re - t.re, t.im - even.im});
      }
    }
  }

  /// c2r: s interleaved spectra in[q + s * k] (k <= n / 2) to real sequences x[q + s * j] (j < n), unnormalised
  /// (n times NumPy's irfft). The imaginary parts of in[0] and, for an even n, in[n / 2] are ignored, as NumPy
  /// does. `scratch` holds scratch_size(s) complex values and overlaps neither.
  void backward(const T* in, T* x, T* scratch, std::size_t s) const {
    const std::size_t c = complex_.size();
    T* inner = scratch + 2 * c * s;
    if (n_ % 2 == 1) {
      // the Hermitian extension: X_(n-k) = conj(X_k)
      for (std::size_t q = 0; q < s; ++q) fft_store(scratch, q, fft_complex<T>{in[2 * q], T(0)});
      for (std::size_t k = 1; 2 * k < n_; ++k)
        for (std::size_t q = 0; q < s; ++q) {
          const fft_complex<T> v = fft_load(in, q + s * k);
          fft_store(scratch, q + s * k, v);
          fft_store(scratch, q + s * (n_ - k), fft_complex<T>{v.re, -v.im});
        }
      complex_.template run<false>(scratch, scratch, inner, s);
      for (std::size_t i = 0; i < n_ * s; ++i) x[i] = scratch[2 * i];
      return;
    }
    // Z_k = E_k + i O_k with E_k = X_k + conj(X_(h-k)) and O_k = (X_k - conj(X_(h-k))) conj(w^k): twice the
    // half-length spectra, so the unnormalised backward transform gives n x as the full-length one would
    T* z = s == 1 ? x : scratch;  // s == 1: x itself is the complex array z (x_2j + i x_2j+1)
    for (std::size_t q = 0; q < s; ++q) {
      const T x0 = in[2 * q], xh = in[2 * (q + s * c)];
      fft_store(z, q, fft_complex<T>{x0 + xh, x0 - xh});
    }
    for (std::size_t k = 1; 2 * k <= c; ++k) {
      const fft_complex<T> w = fft_load(twiddles_.data(), k);
      for (std::size_t q = 0; q < s; ++q) {
        const fft_complex<T> a = fft_load(in, q + s * k), b = fft_load(in, q + s * (c - k));
        const fft_complex<T> even{a.re + b.re, a.im - b.im};
        const fft_complex<T> odd = fft_mul<true>(fft_complex<T>{a.re - b.re, a.im + b.im}, w);
        // Z_k = E_k + i O_k; Z_(h-k) = conj(E_k) + i conj(O_k) (E and O are Hermitian over h)
        fft_store(z, q + s * k, fft_complex<T>{even.re - odd.im, even.im + odd.re});
        fft_store(z, q + s * (c - k), fft_complex<T>{even.re + odd.im, odd.re - even.im});
      }
    }
    complex_.template run<false>(z, z, inner, s);
    if (s != 1)
      for (std::size_t j = 0; j < c; ++j)
        for (std::size_t q = 0; q < s; ++q) {
          x[q + s * 2 * j] = z[2 * (q + s * j)];
          x[q + s * (2 * j + 1)] = z[2 * (q + s * j) + 1];
        }
  }

 private:
  std::size_t n_;
  fft_complex_plan<T> complex_;
  std::vector<T> twiddles_;  // w_n^k, k < n / 2 (even n only)
};

}  // namespace texpr::detail
