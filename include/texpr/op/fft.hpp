// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Discrete Fourier transform op tags (the family texpr/fft.hpp adds): one transform along one axis of a tensor,
// every other axis a batch. Each reads its operand from memory (evaluated first when it is an expression): the FFT
// engine takes strided lines, not accessors.
#pragma once

#include <string_view>

#include "texpr/core/dtype_set.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of the FFT ops: computed by the FFT engine over the lines of one axis.
struct fft_op {
  static constexpr kind category = kind::computed;             ///< Evaluated by a transform per line.
  static constexpr std::string_view header = "texpr/fft.hpp";  ///< The opt-in header that brings the op.
};

/// The forward complex transform along one axis, X_k = s sum_j x_j exp(-2 pi i jk / n) (numpy.fft.fft; s from
/// the normalisation mode).
struct fft : fft_op {
  static constexpr std::string_view name = "fft";  ///< Shown by tx::placement.
  static constexpr auto dtypes = complex_dtypes;   ///< complex64 and complex128.
  static constexpr std::string_view summary =
      "forward discrete Fourier transform of complex lines along one axis (numpy.fft.fft), any length";
};
/// The backward complex transform along one axis, x_j = s sum_k X_k exp(+2 pi i jk / n) (numpy.fft.ifft).
struct ifft : fft_op {
  static constexpr std::string_view name = "ifft";  ///< Shown by tx::placement.
  static constexpr auto dtypes = complex_dtypes;    ///< complex64 and complex128.
  static constexpr std::string_view summary =
      "inverse discrete Fourier transform of complex lines along one axis (numpy.fft.ifft), any length";
};
/// The forward transform of real lines of length n to their n / 2 + 1 non-negative frequencies (numpy.fft.rfft).
struct rfft : fft_op {
  static constexpr std::string_view name = "rfft";  ///< Shown by tx::placement.
  static constexpr auto dtypes = floating;          ///< float (to complex64) and double (to complex128).
  static constexpr std::string_view summary =
      "forward transform of real lines to their n/2+1 non-negative frequencies (numpy.fft.rfft)";
};
/// The backward transform of n / 2 + 1 non-negative frequencies of a Hermitian spectrum to a real line of length n
/// (numpy.fft.irfft); the imaginary parts of the zero and (even n) Nyquist frequencies are ignored.
struct irfft : fft_op {
  static constexpr std::string_view name = "irfft";  ///< Shown by tx::placement.
  static constexpr auto dtypes = complex_dtypes;     ///< complex64 (to float) and complex128 (to double).
  static constexpr std::string_view summary =
      "inverse of rfft: n/2+1 frequencies of a Hermitian spectrum to real lines of length n (numpy.fft.irfft)";
};

}  // namespace texpr::op
