// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine's Stockham passes: one radix-r step of a decimation-in-frequency transform, radix 2, 3, 4 and 5
// written out and any odd radix by a generic loop.
//
// A pass sees `s` interleaved sequences of length n = r * m: element p of sequence q sits at x[q + s * p]. It
// combines the r elements p + j * m (j < r) of each sequence into r outputs, multiplies output k by the twiddle
// w_n^(p k), and writes them to y[q + s * (r p + k)]: the next pass then sees r * s interleaved sequences of length m,
// and after the last pass the transform of sequence q is in natural order at [q + s0 * k] (Stockham's autosort: no
// bit reversal). The loop over q is unit-stride, so a batch of lines laid out [n][lines] (an axis that is not the
// last of a row-major array, or lines gathered into a scratch block) vectorises across lines; a single line starts at
// s = 1 and gains width pass by pass.
#pragma once

#include <cstddef>
#include <vector>

#include "texpr/backend/host/fft_roots.hpp"

namespace texpr::detail {

/// The radix-2 butterfly (in place on a[0..1]).
struct fft_butterfly_2 {
  /// Applies it.
  template <bool Forward, class T>
  static void apply(fft_complex<T>* a) {
    const fft_complex<T> t = a[0];
    a[0] = fft_add(t, a[1]);
    a[1] = fft_sub(t, a[1]);
  }
};

/// The radix-3 butterfly: w_3 = -1/2 -+ i sqrt(3)/2, shared between outputs 1 and 2.
struct fft_butterfly_3 {
  /// Applies it.
  template <bool Forward, class T>
  static void apply(fft_complex<T>* a) {
    const T half_sqrt3 = T(0.866025403784438646763723170752936183L);
    const fft_complex<T> t1 = fft_add(a[1], a[2]);
    const fft_complex<T> t2 = fft_sub(a[0], fft_scale(T(0.5), t1));
    const fft_complex<T> t3 = fft_rotate<Forward>(fft_scale(half_sqrt3, fft_sub(a[1], a[2])));
    a[0] = fft_add(a[0], t1);
    a[1] = fft_add(t2, t3);
    a[2] = fft_sub(t2, t3);
  }
};

/// The radix-4 butterfly: multiplications by -+i are swaps, so it costs additions only.
struct fft_butterfly_4 {
  /// Applies it.
  template <bool Forward, class T>
  static void apply(fft_complex<T>* a) {
    const fft_complex<T> s02 = fft_add(a[0], a[2]), d02 = fft_sub(a[0], a[2]);
    const fft_complex<T> s13 = fft_add(a[1], a[3]), d13 = fft_rotate<Forward>(fft_sub(a[1], a[3]));
    a[0] = fft_add(s02, s13);
    a[1] = fft_add(d02, d13);
    a[2] = fft_sub(s02, s13);
    a[3] = fft_sub(d02, d13);
  }
};

/// The radix-5 butterfly: outputs k and 5 - k share their real-coefficient part and differ in the sign of the
/// rest (the symmetry of cos and sin about pi).
struct fft_butterfly_5 {
  /// Applies it.
  template <bool Forward, class T>
  static void apply(fft_complex<T>* a) {
    const T c1 = T(0.309016994374947424102293417182819059L), c2 = T(-0.809016994374947424102293417182819059L);
    const T s1 = T(0.951056516295153572116439333379382143L), s2 = T(0.587785252292473129168705954639072769L);
    const fft_complex<T> t1 = fft_add(a[1], a[4]), t2 = fft_add(a[2], a[3]);
    const fft_complex<T> t3 = fft_sub(a[1], a[4]), t4 = fft_sub(a[2], a[3]);
    const fft_complex<T> r1 = fft_add(a[0], fft_add(fft_scale(c1, t1), fft_scale(c2, t2)));
    const fft_complex<T> r2 = fft_add(a[0], fft_add(fft_scale(c2, t1), fft_scale(c1, t2)));
    const fft_complex<T> i1 = fft_rotate<Forward>(fft_add(fft_scale(s1, t3), fft_scale(s2, t4)));
    const fft_complex<T> i2 = fft_rotate<Forward>(fft_sub(fft_scale(s2, t3), fft_scale(s1, t4)));
    a[0] = fft_add(a[0], fft_add(t1, t2));
    a[1] = fft_add(r1, i1);
    a[4] = fft_sub(r1, i1);
    a[2] = fft_add(r2, i2);
    a[3] = fft_sub(r2, i2);
  }
};

/// The q loop of a pass at one p: butterflies of the s sequences, times the twiddles `w` unless Plain (p = 0, whose
/// twiddles are all 1).
template <std::size_t R, class Butterfly, bool Forward, bool Plain, class T>
inline void fft_pass_column(std::size_t m, std::size_t s, const T* x, T* y, const fft_complex<T>* w) {
  for (std::size_t q = 0; q < s; ++q) {
    fft_complex<T> a[R];
    for (std::size_t j = 0; j < R; ++j) a[j] = fft_load(x, q + s * m * j);
    Butterfly::template apply<Forward>(a);
    fft_store(y, q, a[0]);
    for (std::size_t k = 1; k < R; ++k) {
      if constexpr (Plain)
        fft_store(y, q + s * k, a[k]);
      else
        fft_store(y, q + s * k, fft_mul<!Forward>(a[k], w[k - 1]));
    }
  }
}

/// One radix-R pass (see the file comment): x holds s sequences of length R * m, y receives R * s of length m;
/// `twiddles` holds w_n^(p k) at [p * (R - 1) + k - 1] as (re, im) pairs.
template <std::size_t R, class Butterfly, bool Forward, class T>
void fft_pass(std::size_t m, std::size_t s, const T* x, T* y, const T* twiddles) {
  fft_pass_column<R, Butterfly, Forward, true>(m, s, x, y, static_cast<const fft_complex<T>*>(nullptr));
  for (std::size_t p = 1; p < m; ++p) {
    fft_complex<T> w[R - 1];
    for (std::size_t k = 0; k + 1 < R; ++k) w[k] = fft_load(twiddles, p * (R - 1) + k);
    fft_pass_column<R, Butterfly, Forward, false>(m, s, x + 2 * s * p, y + 2 * s * R * p, w);
  }
}

/// One pass of an odd radix r without a written-out butterfly: outputs k and r - k are formed together from the
/// sums and differences of inputs j and r - j, which halves the multiplications of the O(r^2) direct sum. `roots`
/// holds w_r^i (i < r); `work` has room for r - 1 values.
template <bool Forward, class T>
void fft_pass_generic(std::size_t r, std::size_t m, std::size_t s, const T* x, T* y, const T* twiddles, const T* roots,
                      fft_complex<T>* work) {
  const std::size_t h = (r - 1) / 2;
  fft_complex<T>* sums = work;
  fft_complex<T>* diffs = work + h;
  for (std::size_t p = 0; p < m; ++p) {
    for (std::size_t q = 0; q < s; ++q) {
      const std::size_t base = q + s * p;
      const fft_complex<T> a0 = fft_load(x, base);
      fft_complex<T> total = a0;
      for (std::size_t j = 1; j <= h; ++j) {
        const fft_complex<T> aj = fft_load(x, base + s * m * j), ar = fft_load(x, base + s * m * (r - j));
        sums[j - 1] = fft_add(aj, ar);
        diffs[j - 1] = fft_sub(aj, ar);
        total = fft_add(total, sums[j - 1]);
      }
      const std::size_t out = q + s * r * p;
      fft_store(y, out, total);
      for (std::size_t k = 1; k <= h; ++k) {
        // w_r^(jk) = c - i s: a_j w^(jk) + a_(r-j) w^(-jk) = c (a_j + a_(r-j)) - i s (a_j - a_(r-j))
        fft_complex<T> even = a0, odd{T(0), T(0)};
        std::size_t i = 0;
        for (std::size_t j = 1; j <= h; ++j) {
          i += k;
          if (i >= r) i -= r;
          const T c = roots[2 * i], sn = -roots[2 * i + 1];
          even = fft_add(even, fft_scale(c, sums[j - 1]));
          odd = fft_add(odd, fft_scale(sn, diffs[j - 1]));
        }
        const fft_complex<T> rot = fft_rotate<Forward>(odd);
        fft_complex<T> lo = fft_add(even, rot), hi = fft_sub(even, rot);
        if (p != 0) {
          lo = fft_mul<!Forward>(lo, fft_load(twiddles, p * (r - 1) + k - 1));
          hi = fft_mul<!Forward>(hi, fft_load(twiddles, p * (r - 1) + r - k - 1));
        }
        fft_store(y, out + s * k, lo);
        fft_store(y, out + s * (r - k), hi);
      }
    }
  }
}

}  // namespace texpr::detail
