// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine: batched complex (c2c), real-input (r2c) and real-output (c2r) transforms of lines with any
// element stride, in float or double, on std::complex<T> arrays. texpr's own code, under texpr's licence: no
// third-party FFT library is linked or copied (docs/install.md says why).
//
// A batch is `count` lines of length n; element i of line l sits at base + l * distance + i * stride (in elements;
// either may be negative; no two output elements may share an address). How a batch runs:
//  - unit-stride lines (rows of a row-major array): one line at a time, straight from input to output;
//  - strided lines (an axis that is not the last): a block of up to fft_block_lines lines is gathered into a
//    contiguous [n][lines] scratch block, transformed together (the passes' inner loop runs across the block's
//    lines), and scattered back. Transforming all the columns of a row-major array in place as one interleaved
//    batch, with no copy, measured the same within noise (bench/fft: 1024 x 1024) but needs scratch the size of
//    the whole array twice; a block needs a few hundred KiB, and also serves lines that are not adjacent.
// Plans come from fft_plan_cache.hpp; scratch is each thread's own buffer, kept for its next transform (it grows to
// the largest scratch the thread has needed: about three blocks, or three lines of a long transform).
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstring>
#include <vector>

#include "texpr/backend/host/fft_plan.hpp"
#include "texpr/backend/host/fft_plan_cache.hpp"
#include "texpr/backend/host/fft_roots.hpp"

namespace texpr::detail {

/// Where a batch's elements are: element i of line l at l * distance + i * stride from the base (in elements).
struct fft_layout {
  std::ptrdiff_t stride = 1;    ///< Between consecutive elements of one line.
  std::ptrdiff_t distance = 0;  ///< Between the first elements of consecutive lines.
};

/// The most lines a strided batch gathers into one scratch block: 16 complex doubles are two cache lines per row of
/// the block, and more lines only lengthen the block past the L2 cache for long lines.
inline constexpr std::size_t fft_block_lines = 16;
/// The bytes a gathered block aims at (with the passes' second buffer as large, both stay in a 1 MiB L2 cache).
inline constexpr std::size_t fft_block_bytes = std::size_t{256} << 10;

/// The calling thread's scratch of at least `count` values of T, reused by its next transform.
template <class T>
T* fft_scratch(std::size_t count) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < count) {
    buffer.clear();
    buffer.shrink_to_fit();  // (no copy of the old contents on growth)
    buffer.resize(count);
  }
  return buffer.data();
}

/// The lines a strided batch of length-n lines, each element `element_bytes`, gathers per block.
inline std::size_t fft_lines_per_block(std::size_t n, std::size_t element_bytes, std::size_t count) {
  const std::size_t fit = fft_block_bytes / std::max<std::size_t>(1, n * element_bytes);
  return std::clamp<std::size_t>(std::min(fit, count), 1, fft_block_lines);
}

/// v *= scale over `count` reals, unless scale is 1.
template <class T>
void fft_scale_all(T* v, std::size_t count, T scale) {
  if (scale != T(1))
    for (std::size_t i = 0; i < count; ++i) v[i] *= scale;
}

/// Copies lines first .. first + s of a batch (elements of W reals: 2 complex, 1 real; n of them a line) into the
/// contiguous block [n][s]. Adjacent lines (distance 1, an axis before the last) copy a row of the block at once.
template <std::size_t W, class T>
void fft_gather(const T* base, fft_layout layout, std::size_t first, std::size_t s, std::size_t n, T* block) {
  for (std::size_t i = 0; i < n; ++i) {
    const T* row = base + static_cast<std::ptrdiff_t>(W) * (static_cast<std::ptrdiff_t>(first) * layout.distance +
                                                            static_cast<std::ptrdiff_t>(i) * layout.stride);
    T* to = block + W * s * i;
    if (layout.distance == 1)
      std::memcpy(to, row, W * s * sizeof(T));
    else
      for (std::size_t q = 0; q < s; ++q)
        for (std::size_t w = 0; w < W; ++w)
          to[W * q + w] = row[static_cast<std::ptrdiff_t>(W * q) * layout.distance + static_cast<std::ptrdiff_t>(w)];
  }
}

/// The inverse of fft_gather, times `scale`.
template <std::size_t W, class T>
void fft_scatter(const T* block, std::size_t first, std::size_t s, std::size_t n, T* base, fft_layout layout, T scale) {
  for (std::size_t i = 0; i < n; ++i) {
    T* row = base + static_cast<std::ptrdiff_t>(W) * (static_cast<std::ptrdiff_t>(first) * layout.distance +
                                                      static_cast<std::ptrdiff_t>(i) * layout.stride);
    const T* from = block + W * s * i;
    if (layout.distance == 1 && scale == T(1))
      std::memcpy(row, from, W * s * sizeof(T));
    else if (layout.distance == 1)
      for (std::size_t j = 0; j < W * s; ++j) row[j] = scale * from[j];
    else
      for (std::size_t q = 0; q < s; ++q)
        for (std::size_t w = 0; w < W; ++w)
          row[static_cast<std::ptrdiff_t>(W * q) * layout.distance + static_cast<std::ptrdiff_t>(w)] =
              scale * from[W * q + w];
  }
}

/// Complex transforms of `count` lines of length n from `in` to `out` (`out` may be `in` with the same layout, or
/// must not overlap it), forward (exp(-2 pi i jk / n)) or backward (exp(+2 pi i jk / n)), every output times
/// `scale` (1 for NumPy's unnormalised forward, 1 / n for its ifft).
template <class T>
void fft_c2c(const fft_complex_plan<T>& plan, const std::complex<T>* in, fft_layout in_layout, std::complex<T>* out,
             fft_layout out_layout, std::size_t count, bool forward, T scale) {
  const std::size_t n = plan.size();
  if (count == 0 || n == 0) return;
  const T* src = reinterpret_cast<const T*>(in);
  T* dst = reinterpret_cast<T*>(out);
  const auto run = [&](const T* a, T* b, T* scratch, std::size_t s) {
    if (forward)
      plan.template run<true>(a, b, scratch, s);
    else
      plan.template run<false>(a, b, scratch, s);
  };
  if (in_layout.stride == 1 && out_layout.stride == 1) {
    T* scratch = fft_scratch<T>(2 * plan.scratch_size(1));
    for (std::size_t l = 0; l < count; ++l) {
      const std::ptrdiff_t li = static_cast<std::ptrdiff_t>(l);
      T* line = dst + 2 * li * out_layout.distance;
      run(src + 2 * li * in_layout.distance, line, scratch, 1);
      fft_scale_all(line, 2 * n, scale);
    }
    return;
  }
  const std::size_t lines = fft_lines_per_block(n, 2 * sizeof(T), count);
  T* block = fft_scratch<T>(2 * (n * lines + plan.scratch_size(lines)));
  T* scratch = block + 2 * n * lines;
  for (std::size_t first = 0; first < count; first += lines) {
    const std::size_t s = std::min(lines, count - first);
    fft_gather<2>(src, in_layout, first, s, n, block);
    run(block, block, scratch, s);
    fft_scatter<2>(block, first, s, n, dst, out_layout, scale);
  }
}

/// Real-input forward transforms of `count` real lines of length n to their n / 2 + 1 spectrum values (NumPy's
/// rfft), every output times `scale`; `in` and `out` must not overlap.
template <class T>
void fft_r2c(const fft_real_plan<T>& plan, const T* in, fft_layout in_layout, std::complex<T>* out,
             fft_layout out_layout, std::size_t count, T scale) {
  const std::size_t n = plan.size(), h = plan.spectrum_size();
  if (count == 0 || n == 0) return;
  T* dst = reinterpret_cast<T*>(out);
  if (in_layout.stride == 1 && out_layout.stride == 1) {
    T* scratch = fft_scratch<T>(2 * plan.scratch_size(1));
    for (std::size_t l = 0; l < count; ++l) {
      const std::ptrdiff_t li = static_cast<std::ptrdiff_t>(l);
      T* line = dst + 2 * li * out_layout.distance;
      plan.forward(in + li * in_layout.distance, line, scratch, 1);
      fft_scale_all(line, 2 * h, scale);
    }
    return;
  }
  const std::size_t lines = fft_lines_per_block(n, 2 * sizeof(T), count);
  T* real_block = fft_scratch<T>(n * lines + 2 * h * lines + 2 * plan.scratch_size(lines));
  T* spectrum = real_block + n * lines;
  T* scratch = spectrum + 2 * h * lines;
  for (std::size_t first = 0; first < count; first += lines) {
    const std::size_t s = std::min(lines, count - first);
    fft_gather<1>(in, in_layout, first, s, n, real_block);
    plan.forward(real_block, spectrum, scratch, s);
    fft_scatter<2>(spectrum, first, s, h, dst, out_layout, scale);
  }
}

/// Real-output backward transforms of `count` spectra of n / 2 + 1 values to real lines of length n (NumPy's
/// irfft with n), every output times `scale` (1 / n for NumPy's default); the imaginary parts of the zero (and for
/// an even n the Nyquist) frequency are ignored; `in` and `out` must not overlap.
template <class T>
void fft_c2r(const fft_real_plan<T>& plan, const std::complex<T>* in, fft_layout in_layout, T* out,
             fft_layout out_layout, std::size_t count, T scale) {
  const std::size_t n = plan.size(), h = plan.spectrum_size();
  if (count == 0 || n == 0) return;
  const T* src = reinterpret_cast<const T*>(in);
  if (in_layout.stride == 1 && out_layout.stride == 1) {
    T* scratch = fft_scratch<T>(2 * plan.scratch_size(1));
    for (std::size_t l = 0; l < count; ++l) {
      const std::ptrdiff_t li = static_cast<std::ptrdiff_t>(l);
      T* line = out + li * out_layout.distance;
      plan.backward(src + 2 * li * in_layout.distance, line, scratch, 1);
      fft_scale_all(line, n, scale);
    }
    return;
  }
  const std::size_t lines = fft_lines_per_block(n, 2 * sizeof(T), count);
  T* spectrum = fft_scratch<T>(2 * h * lines + n * lines + 2 * plan.scratch_size(lines));
  T* real_block = spectrum + 2 * h * lines;
  T* scratch = real_block + n * lines;
  for (std::size_t first = 0; first < count; first += lines) {
    const std::size_t s = std::min(lines, count - first);
    fft_gather<2>(src, in_layout, first, s, h, spectrum);
    plan.backward(spectrum, real_block, scratch, s);
    fft_scatter<1>(real_block, first, s, n, out, out_layout, scale);
  }
}

/// fft_c2c with the cached complex plan of length n.
template <class T>
void fft_c2c(std::size_t n, const std::complex<T>* in, fft_layout in_layout, std::complex<T>* out,
             fft_layout out_layout, std::size_t count, bool forward, T scale) {
  if (n == 0) return;
  fft_c2c(*fft_cached_plan<fft_complex_plan<T>>(n), in, in_layout, out, out_layout, count, forward, scale);
}
/// fft_r2c with the cached real plan of length n.
template <class T>
void fft_r2c(std::size_t n, const T* in, fft_layout in_layout, std::complex<T>* out, fft_layout out_layout,
             std::size_t count, T scale) {
  if (n == 0) return;
  fft_r2c(*fft_cached_plan<fft_real_plan<T>>(n), in, in_layout, out, out_layout, count, scale);
}
/// fft_c2r with the cached real plan of length n.
template <class T>
void fft_c2r(std::size_t n, const std::complex<T>* in, fft_layout in_layout, T* out, fft_layout out_layout,
             std::size_t count, T scale) {
  if (n == 0) return;
  fft_c2r(*fft_cached_plan<fft_real_plan<T>>(n), in, in_layout, out, out_layout, count, scale);
}

}  // namespace texpr::detail
