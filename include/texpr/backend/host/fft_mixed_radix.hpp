// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine's mixed-radix complex transform: a length's factors (4s first, then 2, 3, 5 and odd primes)
// and the twiddles of each Stockham pass (fft_passes.hpp), computed once per plan.
//
// Every length factors this way; a large prime factor makes the generic pass cost O(p) per element, which is when
// fft_plan.hpp chooses Bluestein's transform instead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "texpr/backend/host/fft_passes.hpp"
#include "texpr/backend/host/fft_roots.hpp"

namespace texpr::detail {

/// n's factors in the order the passes take them: 4s, then a 2 if one is left, then odd primes ascending (3 and 5
/// first). Radix 4 needs only additions in its butterfly and halves the passes of radix 2.
inline std::vector<std::size_t> fft_factors(std::size_t n) {
  std::vector<std::size_t> out;
  while (n % 4 == 0) {
    out.push_back(4);
    n /= 4;
  }
  if (n % 2 == 0) {
    out.push_back(2);
    n /= 2;
  }
  for (std::size_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  if (n > 1) out.push_back(n);
  return out;
}

/// A mixed-radix complex transform of one length in precision T: its passes and their twiddles. Immutable once
/// built, so one plan serves any number of threads; both directions share it (the backward passes conjugate).
template <class T>
class fft_mixed_radix {
 public:
  /// One Stockham pass: radix r over sequences of length r * m.
  struct pass {
    std::size_t radix;    ///< r.
    std::size_t m;        ///< The sequence length after the pass.
    std::size_t twiddle;  ///< Where its twiddles start in twiddles_ (complex index).
    std::size_t root;     ///< Where w_r^i starts in roots_ (complex index; generic radices only).
  };

  /// The plan for length n (n >= 1).
  explicit fft_mixed_radix(std::size_t n) : n_(n) {
    const fft_roots w(n);
    std::size_t length = n;  // the sequence length the next pass sees
    for (const std::size_t r : fft_factors(n)) {
      const std::size_t m = length / r, stride = n / length;  // w_length^e = w_n^(e * stride)
      pass ps{r, m, twiddles_.size() / 2, roots_.size() / 2};
      for (std::size_t p = 0; p < m; ++p)
        for (std::size_t k = 1; k < r; ++k) push(twiddles_, w(static_cast<std::uint64_t>(p * k * stride)));
      if (r > 5) {
        for (std::size_t i = 0; i < r; ++i) push(roots_, w(static_cast<std::uint64_t>(i * (n / r))));
        max_radix_ = std::max(max_radix_, r);
      }
      passes_.push_back(ps);
      length = m;
    }
  }

  /// The length.
  std::size_t size() const noexcept { return n_; }
  /// The passes, in order.
  const std::vector<pass>& passes() const noexcept { return passes_; }

  /// Complex values of scratch that run() needs for s interleaved sequences: two buffers of n * s, so that an
  /// in-place transform with an odd number of passes needs no copy.
  std::size_t scratch_size(std::size_t s) const noexcept { return 2 * n_ * s; }

  /// Transforms s interleaved sequences (element p of sequence q at [q + s * p], complex as (re, im) pairs) from
  /// `in` to `out`, unnormalised. `scratch` holds scratch_size(s) complex values and overlaps neither; `in` may
  /// equal `out`.
  template <bool Forward>
  void run(const T* in, T* out, T* scratch, std::size_t s) const {
    const std::size_t count = passes_.size();
    if (count == 0) {
      if (in != out) std::memmove(out, in, 2 * n_ * s * sizeof(T));
      return;
    }
    // pass i writes `out` when count - 1 - i is even, so the last one always does, and `scratch` otherwise; when
    // the first would write `out` while reading it (in place, odd count), it writes the second scratch buffer
    T* const second = scratch + 2 * n_ * s;
    std::vector<fft_complex<T>> work(max_radix_);  // the generic pass's sums and differences (empty without one)
    const T* src = in;
    std::size_t seqs = s;
    for (std::size_t i = 0; i < count; ++i) {
      T* dst = (count - 1 - i) % 2 == 0 ? out : scratch;
      if (i == 0 && dst == in) dst = second;
      run_pass<Forward>(passes_[i], src, dst, seqs, work.data());
      seqs *= passes_[i].radix;
      src = dst;
    }
    if (src != out) std::memcpy(out, src, 2 * n_ * s * sizeof(T));  // in place with one pass: it wrote `second`
  }

 private:
  static void push(std::vector<T>& v, fft_complex<double> c) {
    v.push_back(static_cast<T>(c.re));
    v.push_back(static_cast<T>(c.im));
  }
  template <bool Forward>
  void run_pass(const pass& ps, const T* x, T* y, std::size_t s, fft_complex<T>* work) const {
    const T* tw = twiddles_.data() + 2 * ps.twiddle;
    switch (ps.radix) {
      case 2:
        fft_pass<2, fft_butterfly_2, Forward>(ps.m, s, x, y, tw);
        break;
      case 3:
        fft_pass<3, fft_butterfly_3, Forward>(ps.m, s, x, y, tw);
        break;
      case 4:
        fft_pass<4, fft_butterfly_4, Forward>(ps.m, s, x, y, tw);
        break;
      case 5:
        fft_pass<5, fft_butterfly_5, Forward>(ps.m, s, x, y, tw);
        break;
      default:
        fft_pass_generic<Forward>(ps.radix, ps.m, s, x, y, tw, roots_.data() + 2 * ps.root, work);
        break;
    }
  }

  std::size_t n_;
  std::size_t max_radix_ = 0;
  std::vector<pass> passes_;
  std::vector<T> twiddles_;  // every pass's w_length^(p k), (re, im) pairs
  std::vector<T> roots_;     // w_r^i of the generic passes, (re, im) pairs
};

}  // namespace texpr::detail
