// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host's FFT kernels (texpr/fft.hpp includes this): the rows fft_c2c, fft_r2c and fft_c2r run texpr's own FFT
// engine (fft_engine.hpp) over the lines of one axis of the operand's contiguous memory; a line cut or padded to the
// transform's length goes through one fitted copy first.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstring>

#include "texpr/backend/host/fft_engine.hpp"
#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/fft.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::host_impl {

/// The extents before and after `axis` of s, multiplied out (the batch of an axis' lines: outer x inner).
template <std::size_t R>
void fft_batch(const shape_t<R>& s, std::size_t axis, index_t& outer, index_t& inner) {
  outer = 1;
  inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= s[d];
  for (std::size_t d = axis + 1; d < R; ++d) inner *= s[d];
}

/// Copies src (contiguous, lines of length m along the axis) into dst (contiguous, lines of length `need`): each
/// line cut to `need` or padded with zeros, as NumPy's n.
template <class T>
void fft_fit_lines(const T* src, index_t outer, index_t m, index_t inner, index_t need, T* dst) {
  const index_t keep = std::min(m, need);
  for (index_t o = 0; o < outer; ++o) {
    if (keep > 0)
      std::memcpy(dst + o * need * inner, src + o * m * inner, static_cast<std::size_t>(keep * inner) * sizeof(T));
    std::fill(dst + (o * need + keep) * inner, dst + (o + 1) * need * inner, T(0));
  }
}

/// Calls transform(in, in_layout, out, out_layout, count) over every line of the axis: lines of length in_length
/// in `in` and out_length in `out`, both contiguous arrays of outer x length x inner. A last axis is a batch of
/// rows; another axis a batch of inner strided lines per outer index. The lines are spread over the pool in ranges
/// of at least 16 (a strided block's lines) and about 64 Ki values; each line is computed the same whatever the
/// thread count.
template <class In, class Out, class F>
void fft_each_batch(const In* in, index_t in_length, Out* out, index_t out_length, index_t outer, index_t inner,
                    F transform) {
  const index_t lines = outer * inner;
  const index_t grain = std::max<index_t>(16, (index_t{1} << 16) / std::max<index_t>(1, in_length + out_length));
  for_ranges(lines, grain, [&](index_t first, index_t last) {
    if (inner == 1) {
      transform(in + first * in_length, fft_layout{1, in_length}, out + first * out_length, fft_layout{1, out_length},
                static_cast<std::size_t>(last - first));
      return;
    }
    for (index_t l = first; l < last;) {  // the range's lines, an outer index at a time
      const index_t o = l / inner, i = l % inner, end = std::min(last, (o + 1) * inner);
      transform(in + o * in_length * inner + i, fft_layout{inner, 1}, out + o * out_length * inner + i,
                fft_layout{inner, 1}, static_cast<std::size_t>(end - l));
      l = end;
    }
  });
}

/// Runs node n's transform into dest: the operand read contiguous, fitted to `need` values per line (the
/// transform's input length) where its extent differs, then transform over the lines.
template <class N, class T, std::size_t R, class F>
void fft_run(const N& n, const view<T, R, host>& dest, context<host>& ctx, index_t need, F transform) {
  const auto a = materialize_contiguous(get<0>(n.operands()), ctx);
  using In = typename N::kernel_dtype;
  index_t outer = 0, inner = 0;
  fft_batch(a.shape(), n.axis(), outer, inner);
  const index_t m = a.shape()[n.axis()];
  const In* in = a.data();
  if (m != need) {
    auto s = a.shape();
    s[n.axis()] = need;
    auto& fitted = temporary<In, R, host>(s, ctx);
    if (outer * inner > 0) fft_fit_lines(a.data(), outer, m, inner, need, fitted.view().data());
    in = fitted.view().data();
  }
  fft_each_batch(in, need, dest.data(), dest.shape()[n.axis()], outer, inner, transform);
}

}  // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R>
void fft_c2c::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  using real = typename T::value_type;
  const auto length = static_cast<std::size_t>(n.length());
  const auto scale = static_cast<real>(n.scale());
  constexpr bool forward = std::is_same_v<typename N::op_type, op::fft>;
  detail::host_impl::fft_run(n, dest, ctx, n.length(),
                             [&](const T* in, detail::fft_layout li, T* out, detail::fft_layout lo, std::size_t count) {
                               detail::fft_c2c<real>(length, in, li, out, lo, count, forward, scale);
                             });
}

template <class N, class T, std::size_t R>
void fft_r2c::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  using real = typename T::value_type;
  const auto length = static_cast<std::size_t>(n.length());
  const auto scale = static_cast<real>(n.scale());
  detail::host_impl::fft_run(n, dest, ctx, n.length(),
                             [&](const real* in, detail::fft_layout li, T* out, detail::fft_layout lo,
                                 std::size_t count) { detail::fft_r2c<real>(length, in, li, out, lo, count, scale); });
}

template <class N, class T, std::size_t R>
void fft_c2r::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  const auto length = static_cast<std::size_t>(n.length());
  const auto scale = static_cast<T>(n.scale());
  detail::host_impl::fft_run(n, dest, ctx, n.length() / 2 + 1,
                             [&](const std::complex<T>* in, detail::fft_layout li, T* out, detail::fft_layout lo,
                                 std::size_t count) { detail::fft_c2r<T>(length, in, li, out, lo, count, scale); });
}

}  // namespace texpr::host_kernels
