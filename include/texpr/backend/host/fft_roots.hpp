// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine's scalar helpers: a complex value as two reals, and the roots of unity its plans store.
//
// The engine works on interleaved (re, im) arrays of T (std::complex<T>* seen through the array view the standard
// allows) and multiplies with plain real arithmetic: std::complex's operator* checks for NaN and infinities and
// calls __muldc3 on the slow path, which costs a branch per butterfly and blocks vectorisation.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace texpr::detail {

/// A complex value in registers: the engine's butterflies compute on these, loaded from and stored to (re, im) pairs.
template <class T>
struct fft_complex {
  T re;  ///< Real part.
  T im;  ///< Imaginary part.
};

/// a + b.
template <class T>
inline fft_complex<T> fft_add(fft_complex<T> a, fft_complex<T> b) {
  return {a.re + b.re, a.im + b.im};
}
/// a - b.
template <class T>
inline fft_complex<T> fft_sub(fft_complex<T> a, fft_complex<T> b) {
  return {a.re - b.re, a.im - b.im};
}
/// a * b, or a * conj(b) when Conj (the backward transform uses the forward twiddles conjugated).
template <bool Conj, class T>
inline fft_complex<T> fft_mul(fft_complex<T> a, fft_complex<T> b) {
  if constexpr (Conj)
    return {a.re * b.re + a.im * b.im, a.im * b.re - a.re * b.im};
  else
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
/// -i * a when Forward, +i * a otherwise: the quarter turn of a forward (e^{-i...}) or backward butterfly.
template <bool Forward, class T>
inline fft_complex<T> fft_rotate(fft_complex<T> a) {
  if constexpr (Forward)
    return {a.im, -a.re};
  else
    return {-a.im, a.re};
}
/// s * a for a real s.
template <class T>
inline fft_complex<T> fft_scale(T s, fft_complex<T> a) {
  return {s * a.re, s * a.im};
}
/// The complex at index i of an interleaved array.
template <class T>
inline fft_complex<T> fft_load(const T* p, std::size_t i) {
  return {p[2 * i], p[2 * i + 1]};
}
/// Stores v at index i of an interleaved array.
template <class T>
inline void fft_store(T* p, std::size_t i, fft_complex<T> v) {
  p[2 * i] = v.re;
  p[2 * i + 1] = v.im;
}

/// exp(-2 pi i k / n) in double, to about one ulp: k is first reduced to the octant [0, n/8] by the symmetries of
/// the circle, so sin and cos only see |angle| <= pi/4, where they are accurate and the argument's rounding is
/// smallest. Plans compute their twiddles through this (float plans round the double result).
inline fft_complex<double> fft_root(std::uint64_t k, std::uint64_t n) {
  k %= n;
  // angle = 2 pi k / n; work with 8k against n so the octant tests stay in integers
  const std::uint64_t k8 = 8 * k;
  const double two_pi = 6.283185307179586476925286766559;
  const auto at = [&](std::uint64_t num) {  // angle 2 pi num / (8 n) for num <= n: |angle| <= pi / 4
    const double a = two_pi * static_cast<double>(num) / static_cast<double>(8 * n);
    return fft_complex<double>{std::cos(a), std::sin(a)};
  };
  fft_complex<double> c;  // cos and sin of the angle
  if (k8 <= n)
    c = at(k8);
  else if (k8 <= 2 * n) {
    const auto r = at(2 * n - k8);
    c = {r.im, r.re};
  }  // pi/2 - x
  else if (k8 <= 3 * n) {
    const auto r = at(k8 - 2 * n);
    c = {-r.im, r.re};
  }  // pi/2 + x
  else if (k8 <= 4 * n) {
    const auto r = at(4 * n - k8);
    c = {-r.re, r.im};
  }  // pi - x
  else if (k8 <= 5 * n) {
    const auto r = at(k8 - 4 * n);
    c = {-r.re, -r.im};
  }  // pi + x
  else if (k8 <= 6 * n) {
    const auto r = at(6 * n - k8);
    c = {-r.im, -r.re};
  }  // 3pi/2 - x
  else if (k8 <= 7 * n) {
    const auto r = at(k8 - 6 * n);
    c = {r.im, -r.re};
  }  // 3pi/2 + x
  else {
    const auto r = at(8 * n - k8);
    c = {r.re, -r.im};
  }                      // 2pi - x
  return {c.re, -c.im};  // the forward sign
}

/// The roots exp(-2 pi i k / n), k in [0, n), on demand from two tables of about sqrt(n) entries each
/// (w^k = w^(hi * step) * w^lo): a plan needs about n twiddles spread over its passes, and computing each with sin and
/// cos would cost more than the transforms it serves; the product adds at most an ulp or two.
class fft_roots {
 public:
  /// Roots of unity of order n (n >= 1).
  explicit fft_roots(std::uint64_t n) : n_(n) {
    step_ = 1;
    while (step_ * step_ < n) ++step_;
    low_.reserve(step_);
    for (std::uint64_t i = 0; i < step_; ++i) low_.push_back(fft_root(i, n));
    high_.reserve(n / step_ + 1);
    for (std::uint64_t i = 0; i * step_ < n; ++i) high_.push_back(fft_root(i * step_, n));
  }
  /// exp(-2 pi i k / n) in double.
  fft_complex<double> operator()(std::uint64_t k) const {
    k %= n_;
    return fft_mul<false>(high_[k / step_], low_[k % step_]);
  }

 private:
  std::uint64_t n_;
  std::uint64_t step_;
  std::vector<fft_complex<double>> low_, high_;
};

}  // namespace texpr::detail
