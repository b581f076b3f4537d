// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compute type of the complex dtypes: complex_value<T>, a pair of reals with texpr's own host+device arithmetic.
#pragma once

#include <complex>
#include <type_traits>

#include "texpr/core/config.hpp"

namespace texpr::detail {

// Why texpr's own arithmetic and not std::complex's or cuda::std::complex's: std::complex's operators are not
// __device__ (and libstdc++'s multiply and divide call libgcc's __mulsc3/__divdc3, which device code cannot reach);
// cuda::std::complex exists only under nvcc, so the host would compute with another type and other formulas (its
// operator* adds C99 Annex G's infinity recovery). One struct used by both backends gives the same values on the host
// and the GPU, and its formulas are NumPy's: the textbook product and Smith's quotient. The stored dtype stays
// std::complex<T> (two T, real first: the layout of cuComplex / cuDoubleComplex and of NumPy's complex64/128).

/// A complex number as arithmetic sees it (the stored dtype is std::complex<T>; widen/narrow convert).
template <class T> struct complex_value {
  T re;  ///< Real part.
  T im;  ///< Imaginary part.
  /// re + i im (a real converts with a zero imaginary part).
  TEXPR_HOST_DEVICE constexpr complex_value(T r = T(0), T i = T(0)) : re(r), im(i) {}
  /// A real of another type, converted (so that `A(0)` and `static_cast<A>(n)` in generic code work).
  template <class U>
    requires std::is_arithmetic_v<U>
  TEXPR_HOST_DEVICE constexpr complex_value(U r) : re(static_cast<T>(r)), im(T(0)) {}
};

/// -z.
template <class T> TEXPR_HOST_DEVICE constexpr complex_value<T> operator-(complex_value<T> z) { return {-z.re, -z.im}; }
/// a + b.
template <class T> TEXPR_HOST_DEVICE constexpr complex_value<T> operator+(complex_value<T> a, complex_value<T> b) {
  return {a.re + b.re, a.im + b.im};
}
/// a - b.
template <class T> TEXPR_HOST_DEVICE constexpr complex_value<T> operator-(complex_value<T> a, complex_value<T> b) {
  return {a.re - b.re, a.im - b.im};
}
/// a * b by the textbook formula (as NumPy; no C99 Annex G recovery of infinities from NaN parts).
template <class T> TEXPR_HOST_DEVICE constexpr complex_value<T> operator*(complex_value<T> a, complex_value<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
/// a / b by Smith's algorithm (scaled by the larger part of b, so |b|^2 cannot overflow), as NumPy; b == 0 gives
/// a's parts divided by +0 (infinities or NaN), as NumPy.
template <class T> TEXPR_HOST_DEVICE constexpr complex_value<T> operator/(complex_value<T> a, complex_value<T> b) {
  const T abs_re = b.re < T(0) ? -b.re : b.re;
  const T abs_im = b.im < T(0) ? -b.im : b.im;
  if (abs_re >= abs_im) {
    if (abs_re == T(0) && abs_im == T(0)) return {a.re / abs_re, a.im / abs_im};
    const T ratio = b.im / b.re;
    const T scale = T(1) / (b.re + b.im * ratio);
    return {(a.re + a.im * ratio) * scale, (a.im - a.re * ratio) * scale};
  }
  const T ratio = b.re / b.im;
  const T scale = T(1) / (b.im + b.re * ratio);
  return {(a.re * ratio + a.im) * scale, (a.im * ratio - a.re) * scale};
}
/// a == b, part by part (what tests and the scalar paths need; not an op: complex ops are declared elsewhere).
template <class T> TEXPR_HOST_DEVICE constexpr bool operator==(complex_value<T> a, complex_value<T> b) {
  return a.re == b.re && a.im == b.im;
}
/// The complex conjugate re - i im.
template <class T> TEXPR_HOST_DEVICE constexpr complex_value<T> conj(complex_value<T> z) { return {z.re, -z.im}; }

/// The parts of a stored std::complex<T> (its array-of-two layout is guaranteed by the standard, which also keeps
/// device code off std::complex's host-only member functions).
template <class T> TEXPR_HOST_DEVICE inline complex_value<T> complex_parts(const std::complex<T>& z) {
  const T* p = reinterpret_cast<const T*>(&z);
  return {p[0], p[1]};
}
/// A stored std::complex<T> of a complex_value.
template <class T> TEXPR_HOST_DEVICE inline std::complex<T> complex_store(complex_value<T> z) {
  std::complex<T> r;
  T* p = reinterpret_cast<T*>(&r);
  p[0] = z.re;
  p[1] = z.im;
  return r;
}

} // namespace texpr::detail
