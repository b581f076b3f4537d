// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Direct-loop references for texpr/conv.hpp's ops, in long double, written from the definitions (a sum over each
// window's taps, a tap outside the image reading 0 or -inf), sharing nothing with the kernels (no im2col, no GEMM):
// the registry checks and tests/core/test_conv.cpp compare every op with them.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <texpr/conv.hpp>

namespace conv_reference {

namespace tx = texpr;
using ld = long double;

/// A window as the references read it.
struct window {
  tx::index_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pb = 0, pl = 0, pr = 0, dh = 1, dw = 1, groups = 1;
  bool count_include_pad = true;
  /// The output extent along an axis (floor, as PyTorch).
  static tx::index_t out(tx::index_t in, tx::index_t k, tx::index_t s, tx::index_t p0, tx::index_t p1, tx::index_t d) {
    return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
  }
};

/// NCHW values in long double with their shape.
struct image {
  tx::index_t n = 0, c = 0, h = 0, w = 0;
  std::vector<ld> v;
  image() = default;
  image(tx::index_t n_, tx::index_t c_, tx::index_t h_, tx::index_t w_) : n(n_), c(c_), h(h_), w(w_), v(static_cast<std::size_t>(n_ * c_ * h_ * w_), 0) {}
  ld& at(tx::index_t a, tx::index_t b, tx::index_t y, tx::index_t x) { return v[static_cast<std::size_t>(((a * c + b) * h + y) * w + x)]; }
  ld at(tx::index_t a, tx::index_t b, tx::index_t y, tx::index_t x) const { return v[static_cast<std::size_t>(((a * c + b) * h + y) * w + x)]; }
  /// Reads 0 outside the image (zero padding).
  ld padded(tx::index_t a, tx::index_t b, tx::index_t y, tx::index_t x) const { return inside(y, x) ? at(a, b, y, x) : 0; }
  bool inside(tx::index_t y, tx::index_t x) const { return y >= 0 && y < h && x >= 0 && x < w; }
};

/// A host tensor's values in long double.
template <class T> image from(const tx::tensor<T, 4>& t) {
  const auto s = t.shape();
  image m(s[0], s[1], s[2], s[3]);
  for (tx::index_t i = 0; i < t.size(); ++i) m.v[static_cast<std::size_t>(i)] = static_cast<ld>(t.data()[i]);
  return m;
}

/// y[b, o, i, j] = sum over the group's channels c and taps (p, q) of x[b, c, i sh - pt + p dh, j sw - pl + q dw] w[o, c, p, q].
inline image conv2d(const image& x, const image& w, const window& k) {
  const tx::index_t oh = window::out(x.h, k.kh, k.sh, k.pt, k.pb, k.dh), ow = window::out(x.w, k.kw, k.sw, k.pl, k.pr, k.dw);
  const tx::index_t cg = x.c / k.groups, og = w.n / k.groups;
  image y(x.n, w.n, oh, ow);
  for (tx::index_t b = 0; b < x.n; ++b)
    for (tx::index_t o = 0; o < w.n; ++o)
      for (tx::index_t i = 0; i < oh; ++i)
        for (tx::index_t j = 0; j < ow; ++j) {
          ld s = 0;
          for (tx::index_t c = 0; c < cg; ++c)
            for (tx::index_t p = 0; p < k.kh; ++p)
              for (tx::index_t q = 0; q < k.kw; ++q)
                s += x.padded(b, o / og * cg + c, i * k.sh - k.pt + p * k.dh, j * k.sw - k.pl + q * k.dw) * w.at(o, c, p, q);
          y.at(b, o, i, j) = s;
        }
  return y;
}

/// The gradients of sum(conv2d(x, w) * gy): dx (x's shape) and dw (w's shape), each tap's product differentiated.
inline void conv2d_grads(const image& x, const image& w, const image& gy, const window& k, image& dx, image& dw) {
  const tx::index_t cg = x.c / k.groups, og = w.n / k.groups;
  dx = image(x.n, x.c, x.h, x.w);
  dw = image(w.n, w.c, w.h, w.w);
  for (tx::index_t b = 0; b < x.n; ++b)
    for (tx::index_t o = 0; o < w.n; ++o)
      for (tx::index_t i = 0; i < gy.h; ++i)
        for (tx::index_t j = 0; j < gy.w; ++j)
          for (tx::index_t c = 0; c < cg; ++c)
            for (tx::index_t p = 0; p < k.kh; ++p)
              for (tx::index_t q = 0; q < k.kw; ++q) {
                const tx::index_t ch = o / og * cg + c, y = i * k.sh - k.pt + p * k.dh, xx = j * k.sw - k.pl + q * k.dw;
                if (!x.inside(y, xx)) continue;
                dx.at(b, ch, y, xx) += gy.at(b, o, i, j) * w.at(o, c, p, q);
                dw.at(o, c, p, q) += gy.at(b, o, i, j) * x.at(b, ch, y, xx);
              }
}

/// max_pool2d and its gradient for upstream g: the maximum over each window's taps inside the image, the
/// gradient to the first tap (row-major) holding it (a NaN tap wins, as PyTorch).
inline image max_pool2d(const image& x, const window& k, const image* g = nullptr, image* dx = nullptr) {
  const tx::index_t oh = window::out(x.h, k.kh, k.sh, k.pt, k.pb, k.dh), ow = window::out(x.w, k.kw, k.sw, k.pl, k.pr, k.dw);
  image y(x.n, x.c, oh, ow);
  if (dx) *dx = image(x.n, x.c, x.h, x.w);
  for (tx::index_t b = 0; b < x.n; ++b)
    for (tx::index_t c = 0; c < x.c; ++c)
      for (tx::index_t i = 0; i < oh; ++i)
        for (tx::index_t j = 0; j < ow; ++j) {
          ld m = -std::numeric_limits<ld>::infinity();
          tx::index_t my = -1, mx = -1;
          for (tx::index_t p = 0; p < k.kh; ++p)
            for (tx::index_t q = 0; q < k.kw; ++q) {
              const tx::index_t yy = i * k.sh - k.pt + p * k.dh, xx = j * k.sw - k.pl + q * k.dw;
              if (!x.inside(yy, xx)) continue;
              const ld v = x.at(b, c, yy, xx);
              if (my < 0 || v > m || std::isnan(v)) m = v, my = yy, mx = xx;
            }
          y.at(b, c, i, j) = m;
          if (dx && my >= 0) dx->at(b, c, my, mx) += g->at(b, c, i, j);
        }
  return y;
}

/// avg_pool2d and its gradient for upstream g: each window's sum over its taps inside the image, divided by the
/// kernel's size (count_include_pad) or by the number of those taps.
inline image avg_pool2d(const image& x, const window& k, const image* g = nullptr, image* dx = nullptr) {
  const tx::index_t oh = window::out(x.h, k.kh, k.sh, k.pt, k.pb, 1), ow = window::out(x.w, k.kw, k.sw, k.pl, k.pr, 1);
  image y(x.n, x.c, oh, ow);
  if (dx) *dx = image(x.n, x.c, x.h, x.w);
  for (tx::index_t b = 0; b < x.n; ++b)
    for (tx::index_t c = 0; c < x.c; ++c)
      for (tx::index_t i = 0; i < oh; ++i)
        for (tx::index_t j = 0; j < ow; ++j) {
          ld s = 0;
          tx::index_t inside = 0;
          for (tx::index_t p = 0; p < k.kh; ++p)
            for (tx::index_t q = 0; q < k.kw; ++q)
              if (x.inside(i * k.sh - k.pt + p, j * k.sw - k.pl + q)) s += x.at(b, c, i * k.sh - k.pt + p, j * k.sw - k.pl + q), ++inside;
          const ld divisor = k.count_include_pad ? ld(k.kh * k.kw) : ld(inside);
          y.at(b, c, i, j) = s / divisor;
          if (dx)
            for (tx::index_t p = 0; p < k.kh; ++p)
              for (tx::index_t q = 0; q < k.kw; ++q)
                if (x.inside(i * k.sh - k.pt + p, j * k.sw - k.pl + q)) dx->at(b, c, i * k.sh - k.pt + p, j * k.sw - k.pl + q) += g->at(b, c, i, j) / divisor;
        }
  return y;
}

/// adaptive_avg_pool2d to an oh x ow grid and its gradient for upstream g: cell (i, j) the mean of rows
/// [floor(i h / oh), ceil((i + 1) h / oh)) and the matching columns.
inline image adaptive_avg_pool2d(const image& x, tx::index_t oh, tx::index_t ow, const image* g = nullptr, image* dx = nullptr) {
  image y(x.n, x.c, oh, ow);
  if (dx) *dx = image(x.n, x.c, x.h, x.w);
  for (tx::index_t b = 0; b < x.n; ++b)
    for (tx::index_t c = 0; c < x.c; ++c)
      for (tx::index_t i = 0; i < oh; ++i)
        for (tx::index_t j = 0; j < ow; ++j) {
          const tx::index_t y0 = static_cast<tx::index_t>(std::floor(ld(i * x.h) / ld(oh))), y1 = static_cast<tx::index_t>(std::ceil(ld((i + 1) * x.h) / ld(oh)));
          const tx::index_t x0 = static_cast<tx::index_t>(std::floor(ld(j * x.w) / ld(ow))), x1 = static_cast<tx::index_t>(std::ceil(ld((j + 1) * x.w) / ld(ow)));
          ld s = 0;
          for (tx::index_t p = y0; p < y1; ++p)
            for (tx::index_t q = x0; q < x1; ++q) s += x.at(b, c, p, q);
          const ld size = ld((y1 - y0) * (x1 - x0));
          y.at(b, c, i, j) = s / size;
          if (dx)
            for (tx::index_t p = y0; p < y1; ++p)
              for (tx::index_t q = x0; q < x1; ++q) dx->at(b, c, p, q) += g->at(b, c, i, j) / size;
        }
  return y;
}

/// max |got - want| / (1 + max |want|) over every element (shapes must agree: a mismatch returns infinity).
template <class T> ld relative_error(const tx::tensor<T, 4>& got, const image& want) {
  const auto s = got.shape();
  if (s[0] != want.n || s[1] != want.c || s[2] != want.h || s[3] != want.w) return std::numeric_limits<ld>::infinity();
  ld err = 0, mag = 0;
  for (tx::index_t i = 0; i < got.size(); ++i) {
    const ld g = static_cast<ld>(got.data()[i]), w = want.v[static_cast<std::size_t>(i)];
    if (std::isnan(g) != std::isnan(w)) return std::numeric_limits<ld>::infinity();
    if (std::isnan(w)) continue;
    err = std::max(err, std::fabs(g - w));
    mag = std::max(mag, std::fabs(w));
  }
  return err / (1 + mag);
}

} // namespace conv_reference
