// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host's convolution and pooling kernels (texpr/conv.hpp includes this). conv2d and its filter gradient unfold
// each image's windows into a column matrix (im2col: a row per (channel, tap), a column per output position) and
// multiply it with texpr's blocked GEMM (gemm.hpp), one product per image and group; the input gradient multiplies
// first and folds the columns back (col2im). A 1x1 window at stride 1 without padding is the image itself: no
// unfolding. Small products run an image per task; large ones one at a time, the GEMM threading itself. Pooling
// is direct loops, a channel plane per task.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <type_traits>

#include "texpr/backend/host/gemm.hpp"
#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/conv.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::host_impl {

/// The extents of one convolution: image (c, h, w), output (o, oh, ow), per group cg input and og output channels,
/// kk = cg * kh * kw rows of the column matrix, ohw its columns.
struct conv_geometry {
  index_t n, c, h, w, o, oh, ow, cg, og, kk, ohw;
  window2d win;
  /// True when the column matrix is the image itself (1x1 window, stride 1, no padding).
  bool identity() const {
    return win.kernel[0] == 1 && win.kernel[1] == 1 && win.stride[0] == 1 && win.stride[1] == 1 && win.pad_begin[0] == 0 &&
           win.pad_begin[1] == 0 && win.pad_end[0] == 0 && win.pad_end[1] == 0;
  }
};

inline conv_geometry make_conv_geometry(const shape_t<4>& x, const shape_t<4>& y, const window2d& win) {
  conv_geometry g{x[0], x[1], x[2], x[3], y[1], y[2], y[3], 0, 0, 0, 0, win};
  g.cg = g.c / win.groups;
  g.og = g.o / win.groups;
  g.kk = g.cg * win.kernel[0] * win.kernel[1];
  g.ohw = g.oh * g.ow;
  return g;
}

/// The output columns [lo, hi) along one axis whose tap at offset `tap` (already dilated) reads inside [0, in).
inline void valid_range(index_t out, index_t stride, index_t pad, index_t tap, index_t in, index_t& lo, index_t& hi) {
  // position p reads p * stride - pad + tap: in range for p >= ceil((pad - tap) / stride), p < ceil((in + pad - tap) / stride)
  auto ceil_div = [](index_t a, index_t b) { return a <= 0 ? -((-a) / b) : (a + b - 1) / b; };
  lo = std::clamp<index_t>(ceil_div(pad - tap, stride), 0, out);
  hi = std::clamp<index_t>(ceil_div(in + pad - tap, stride), lo, out);
}

/// Rows [r0, r1) of the column matrix of img (cg channels of h x w, contiguous) into col (row r at col + r * ld).
template <class T> void im2col(const T* img, const conv_geometry& g, T* col, index_t ld, index_t r0, index_t r1) {
  const auto& k = g.win;
  for (index_t r = r0; r < r1; ++r) {
    const index_t c = r / (k.kernel[0] * k.kernel[1]), i = r / k.kernel[1] % k.kernel[0], j = r % k.kernel[1];
    const T* plane = img + c * g.h * g.w;
    T* row = col + r * ld;
    index_t y0, y1, x0, x1;
    valid_range(g.oh, k.stride[0], k.pad_begin[0], i * k.dilation[0], g.h, y0, y1);
    valid_range(g.ow, k.stride[1], k.pad_begin[1], j * k.dilation[1], g.w, x0, x1);
    std::fill(row, row + y0 * g.ow, T(0));
    for (index_t oy = y0; oy < y1; ++oy) {
      const T* src = plane + (oy * k.stride[0] - k.pad_begin[0] + i * k.dilation[0]) * g.w - k.pad_begin[1] + j * k.dilation[1];
      T* dst = row + oy * g.ow;
      std::fill(dst, dst + x0, T(0));
      if (k.stride[1] == 1) std::copy(src + x0, src + x1, dst + x0);
      else for (index_t ox = x0; ox < x1; ++ox) dst[ox] = src[ox * k.stride[1]];
      std::fill(dst + x1, dst + g.ow, T(0));
    }
    std::fill(row + y1 * g.ow, row + g.oh * g.ow, T(0));
  }
}

/// Adds the column matrix col (row r at col + r * ld) back onto img's windows (cg channels of h x w): the
/// transpose of im2col. Channels [c0, c1) only, so tasks on different channels never write the same element.
template <class T> void col2im_add(const T* col, index_t ld, const conv_geometry& g, T* img, index_t c0, index_t c1) {
  const auto& k = g.win;
  const index_t taps = k.kernel[0] * k.kernel[1];
  for (index_t r = c0 * taps; r < c1 * taps; ++r) {
    const index_t c = r / taps, i = r / k.kernel[1] % k.kernel[0], j = r % k.kernel[1];
    T* plane = img + c * g.h * g.w;
    const T* row = col + r * ld;
    index_t y0, y1, x0, x1;
    valid_range(g.oh, k.stride[0], k.pad_begin[0], i * k.dilation[0], g.h, y0, y1);
    valid_range(g.ow, k.stride[1], k.pad_begin[1], j * k.dilation[1], g.w, x0, x1);
    for (index_t oy = y0; oy < y1; ++oy) {
      T* dst = plane + (oy * k.stride[0] - k.pad_begin[0] + i * k.dilation[0]) * g.w - k.pad_begin[1] + j * k.dilation[1];
      const T* src = row + oy * g.ow;
      for (index_t ox = x0; ox < x1; ++ox) dst[ox * k.stride[1]] += src[ox];
    }
  }
}

/// An uninitialised buffer of n elements (the column matrices are written in full before they are read).
template <class T> std::unique_ptr<T[]> buffer(index_t n) { return std::unique_ptr<T[]>(new T[static_cast<std::size_t>(std::max<index_t>(n, 1))]); }

/// Runs f(t, col) for t in [0, tasks) with a column buffer of `col_size` per running task: one task at a time when
/// a task's GEMM (`work` multiply-adds) is worth threading by itself, else tasks spread over the pool.
template <class T, class F> void for_each_product(index_t tasks, double work, index_t col_size, F&& f) {
  if (work >= gemm_thread_threshold || tasks == 1) {
    auto col = buffer<T>(col_size);
    for (index_t t = 0; t < tasks; ++t) f(t, col.get(), true);
    return;
  }
  for_ranges(tasks, 1, [&](index_t t0, index_t t1) {
    auto col = buffer<T>(col_size);
    for (index_t t = t0; t < t1; ++t) f(t, col.get(), false);
  });
}

/// Splits [0, rows) over the pool when `threaded` (a lone large product), else runs it here.
template <class F> void rows_maybe_threaded(bool threaded, index_t rows, index_t row_size, F&& f) {
  if (threaded) for_ranges(rows, std::max<index_t>(1, elementwise_grain / std::max<index_t>(row_size, 1)), f);
  else f(index_t(0), rows);
}

/// y = conv2d(x, w): per image and group, W_g (og x kk) times the image's column matrix (kk x ohw), written
/// straight into y's (og x ohw) block.
template <class T> void conv2d_forward(const T* x, const T* w, T* y, const conv_geometry& g) {
  const index_t groups = g.win.groups;
  const bool identity = g.identity();
  const double work = double(g.og) * double(g.ohw) * double(g.kk);
  for_each_product<T>(g.n * groups, work, identity ? 0 : g.kk * g.ohw, [&](index_t t, T* col, bool threaded) {
    const index_t b = t / groups, q = t % groups;
    const T* img = x + (b * g.c + q * g.cg) * g.h * g.w;
    if (!identity) rows_maybe_threaded(threaded, g.kk, g.ohw, [&](index_t r0, index_t r1) { im2col(img, g, col, g.ohw, r0, r1); });
    gemm(g.og, g.ohw, g.kk, w + q * g.og * g.kk, g.kk, index_t(1), identity ? img : col, g.ohw, index_t(1),
         y + (b * g.o + q * g.og) * g.ohw);
  });
}

/// dx = conv2d_input_grad(dy, w): per image and group, W_gᵀ (kk x og) times dy's block (og x ohw), folded back
/// onto the image (col2im; the 1x1 case writes the product straight into dx).
template <class T> void conv2d_input_grad(const T* dy, const T* w, T* dx, const conv_geometry& g) {
  const index_t groups = g.win.groups;
  const bool identity = g.identity();
  const double work = double(g.og) * double(g.ohw) * double(g.kk);
  for_each_product<T>(g.n * groups, work, identity ? 0 : g.kk * g.ohw, [&](index_t t, T* col, bool threaded) {
    const index_t b = t / groups, q = t % groups;
    T* img = dx + (b * g.c + q * g.cg) * g.h * g.w;
    const T* wq = w + q * g.og * g.kk;
    const T* dyq = dy + (b * g.o + q * g.og) * g.ohw;
    if (identity) {
      gemm(g.kk, g.ohw, g.og, wq, index_t(1), g.kk, dyq, g.ohw, index_t(1), img);
      return;
    }
    gemm(g.kk, g.ohw, g.og, wq, index_t(1), g.kk, dyq, g.ohw, index_t(1), col);
    rows_maybe_threaded(threaded, g.cg, g.h * g.w, [&](index_t c0, index_t c1) {
      std::fill(img + c0 * g.h * g.w, img + c1 * g.h * g.w, T(0));
      col2im_add(col, g.ohw, g, img, c0, c1);
    });
  });
}

/// Images per column matrix for the filter gradient: the batch folded into the GEMM's depth up to about 2^22
/// elements of columns (16 MiB of float), so small images still make one long product.
inline index_t images_per_chunk(const conv_geometry& g) {
  const index_t per_image = std::max<index_t>(1, g.kk * g.ohw);
  return std::clamp<index_t>((index_t(1) << 22) / per_image, 1, std::max<index_t>(g.n, 1));
}

/// dw = conv2d_weight_grad(x, dy): per group, dy's blocks of a chunk of images side by side (og x nb*ohw) times
/// the chunk's column matrices transposed (nb*ohw x kk), summed over the chunks.
template <class T> void conv2d_weight_grad(const T* x, const T* dy, T* dw, const conv_geometry& g) {
  const index_t groups = g.win.groups;
  std::fill(dw, dw + g.o * g.kk, T(0));
  if (g.n == 0 || g.kk == 0 || g.og == 0) return;
  const index_t nb = images_per_chunk(g), chunks = (g.n + nb - 1) / nb, span = nb * g.ohw;
  const double work = double(g.og) * double(span) * double(g.kk);
  for_each_product<T>(groups, work, g.kk * span + g.og * span + g.og * g.kk, [&](index_t q, T* col, bool threaded) {
    T* dyq = col + g.kk * span;  // dy's rows of this group, the chunk's images side by side
    T* part = dyq + g.og * span;
    T* dwq = dw + q * g.og * g.kk;
    for (index_t ch = 0; ch < chunks; ++ch) {
      const index_t b0 = ch * nb, b1 = std::min(g.n, b0 + nb), cols = (b1 - b0) * g.ohw;
      rows_maybe_threaded(threaded, b1 - b0, g.kk * g.ohw, [&](index_t i0, index_t i1) {
        for (index_t b = b0 + i0; b < b0 + i1; ++b) {
          im2col(x + (b * g.c + q * g.cg) * g.h * g.w, g, col + (b - b0) * g.ohw, cols, 0, g.kk);
          for (index_t r = 0; r < g.og; ++r) {
            const T* src = dy + (b * g.o + q * g.og + r) * g.ohw;
            std::copy(src, src + g.ohw, dyq + r * cols + (b - b0) * g.ohw);
          }
        }
      });
      gemm(g.og, g.kk, cols, dyq, cols, index_t(1), col, index_t(1), cols, part);
      for (index_t i = 0; i < g.og * g.kk; ++i) dwq[i] += part[i];
    }
  });
}

/// The divisor of avg_pool2d's window at (oy, ox): the whole kernel when padding counts (a window never reaches past
/// the padding here), else its taps inside the image.
inline index_t pool_divisor(const window2d& k, index_t h, index_t w, index_t oy, index_t ox) {
  if (k.count_include_pad) return k.kernel[0] * k.kernel[1];
  const index_t y0 = oy * k.stride[0] - k.pad_begin[0], x0 = ox * k.stride[1] - k.pad_begin[1];
  const index_t rows = std::min(y0 + k.kernel[0], h) - std::max<index_t>(y0, 0);
  const index_t cols = std::min(x0 + k.kernel[1], w) - std::max<index_t>(x0, 0);
  return rows * cols;
}

/// The position (in the h x w plane) of the first maximum of window (oy, ox), as PyTorch picks it: a later tap
/// wins only if greater, or NaN; -1 never (each window holds a tap inside the image). m receives the maximum.
template <class T> index_t window_argmax(const T* plane, const window2d& k, index_t h, index_t w, index_t oy, index_t ox, T& m) {
  index_t at = -1;
  m = -std::numeric_limits<T>::infinity();
  for (index_t i = 0; i < k.kernel[0]; ++i) {
    const index_t y = oy * k.stride[0] - k.pad_begin[0] + i * k.dilation[0];
    if (y < 0 || y >= h) continue;
    for (index_t j = 0; j < k.kernel[1]; ++j) {
      const index_t x = ox * k.stride[1] - k.pad_begin[1] + j * k.dilation[1];
      if (x < 0 || x >= w) continue;
      const T v = plane[y * w + x];
      if (at < 0 || v > m || std::isnan(v)) {
        m = v;
        at = y * w + x;
      }
    }
  }
  return at;
}

/// Cell i of n along an axis of extent in, as adaptive pooling cuts it: [floor(i in / n), ceil((i + 1) in / n)).
inline void adaptive_cell(index_t i, index_t in, index_t n, index_t& begin, index_t& end) {
  begin = i * in / n;
  end = ((i + 1) * in + n - 1) / n;
}

/// Runs f(plane) for each of `planes` channel planes, spread over the pool by `per_plane` units of work.
template <class F> void for_each_plane(index_t planes, index_t per_plane, F&& f) {
  for_ranges(planes, std::max<index_t>(1, elementwise_grain / std::max<index_t>(per_plane, 1)), [&](index_t p0, index_t p1) {
    for (index_t p = p0; p < p1; ++p) f(p);
  });
}

/// The mean and biased variance of channel ch of contiguous x (batch, channels, spatial): two passes (mean, then
/// squared deviations) accumulated in double, so a large mean does not cancel the variance away.
template <class T> void channel_moments(const T* x, index_t batch, index_t channels, index_t spatial, index_t ch, double& mean, double& var) {
  const double count = static_cast<double>(batch * spatial);
  double s = 0;
  for (index_t b = 0; b < batch; ++b)
    for (const T* p = x + (b * channels + ch) * spatial, *e = p + spatial; p != e; ++p) s += static_cast<double>(*p);
  mean = s / count;
  double q = 0;
  for (index_t b = 0; b < batch; ++b)
    for (const T* p = x + (b * channels + ch) * spatial, *e = p + spatial; p != e; ++p) {
      const double d = static_cast<double>(*p) - mean;
      q += d * d;
    }
  var = q / count;
}

} // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R> void im2col_gemm::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  if constexpr (std::is_same_v<typename N::op_type, op::conv2d>) {
    if (dest.size() == 0) return;
    hi::conv2d_forward(a.data(), b.data(), dest.data(), hi::make_conv_geometry(a.shape(), dest.shape(), n.window()));
  } else {  // conv2d_weight_grad(x, dy)
    if (dest.size() == 0) return;
    hi::conv2d_weight_grad(a.data(), b.data(), dest.data(), hi::make_conv_geometry(a.shape(), b.shape(), n.window()));
  }
}

template <class N, class T, std::size_t R> void gemm_col2im::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto dy = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto w = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  if (dest.size() == 0) return;
  hi::conv2d_input_grad(dy.data(), w.data(), dest.data(), hi::make_conv_geometry(dest.shape(), dy.shape(), n.window()));
}

template <class N, class T, std::size_t R> void pool_loops::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  using Op = typename N::op_type;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  if (dest.size() == 0) return;
  const auto& k = n.window();
  T* out = dest.data();
  const T* in = a.data();
  if constexpr (std::is_same_v<Op, op::adaptive_avg_pool2d> || std::is_same_v<Op, op::adaptive_avg_pool2d_grad>) {
    // forward: a is x, dest the grid; gradient: a is dy (the grid), dest x's shape
    constexpr bool forward = std::is_same_v<Op, op::adaptive_avg_pool2d>;
    const auto& image = forward ? a.shape() : dest.shape();
    const auto& grid = forward ? dest.shape() : a.shape();
    const index_t h = image[2], w = image[3], oh = grid[2], ow = grid[3];
    hi::for_each_plane(dest.shape()[0] * dest.shape()[1], h * w + oh * ow, [&](index_t p) {
      if constexpr (!forward) std::fill(out + p * h * w, out + (p + 1) * h * w, T(0));
      for (index_t oy = 0; oy < oh; ++oy)
        for (index_t ox = 0; ox < ow; ++ox) {
          index_t y0, y1, x0, x1;
          hi::adaptive_cell(oy, h, oh, y0, y1);
          hi::adaptive_cell(ox, w, ow, x0, x1);
          const T size = static_cast<T>((y1 - y0) * (x1 - x0));
          if constexpr (forward) {
            T s = 0;
            for (index_t y = y0; y < y1; ++y)
              for (index_t x = x0; x < x1; ++x) s += in[p * h * w + y * w + x];
            out[p * oh * ow + oy * ow + ox] = s / size;
          } else {
            const T share = in[p * oh * ow + oy * ow + ox] / size;
            for (index_t y = y0; y < y1; ++y)
              for (index_t x = x0; x < x1; ++x) out[p * h * w + y * w + x] += share;
          }
        }
    });
  } else if constexpr (std::is_same_v<Op, op::max_pool2d> || std::is_same_v<Op, op::avg_pool2d>) {
    const index_t h = a.shape()[2], w = a.shape()[3], oh = dest.shape()[2], ow = dest.shape()[3];
    hi::for_each_plane(dest.shape()[0] * dest.shape()[1], oh * ow * k.kernel[0] * k.kernel[1], [&](index_t p) {
      const T* plane = in + p * h * w;
      T* o = out + p * oh * ow;
      for (index_t oy = 0; oy < oh; ++oy)
        for (index_t ox = 0; ox < ow; ++ox) {
          if constexpr (std::is_same_v<Op, op::max_pool2d>) {
            hi::window_argmax(plane, k, h, w, oy, ox, o[oy * ow + ox]);
          } else {
            T s = 0;
            for (index_t i = 0; i < k.kernel[0]; ++i) {
              const index_t y = oy * k.stride[0] - k.pad_begin[0] + i;
              if (y < 0 || y >= h) continue;
              for (index_t j = 0; j < k.kernel[1]; ++j) {
                const index_t x = ox * k.stride[1] - k.pad_begin[1] + j;
                if (x >= 0 && x < w) s += plane[y * w + x];
              }
            }
            o[oy * ow + ox] = s / static_cast<T>(hi::pool_divisor(k, h, w, oy, ox));
          }
        }
    });
  } else {
    // the gradients: operand 0 is x (max) or dy (avg); dy is the last operand
    const auto dy = detail::materialize_contiguous(detail::get<N::children::size - 1>(n.operands()), ctx);
    const index_t h = dest.shape()[2], w = dest.shape()[3], oh = dy.shape()[2], ow = dy.shape()[3];
    hi::for_each_plane(dest.shape()[0] * dest.shape()[1], oh * ow * k.kernel[0] * k.kernel[1], [&](index_t p) {
      T* d = out + p * h * w;
      const T* g = dy.data() + p * oh * ow;
      std::fill(d, d + h * w, T(0));
      for (index_t oy = 0; oy < oh; ++oy)
        for (index_t ox = 0; ox < ow; ++ox) {
          if constexpr (std::is_same_v<Op, op::max_pool2d_grad>) {
            T m;
            const index_t at = hi::window_argmax(in + p * h * w, k, h, w, oy, ox, m);
            if (at >= 0) d[at] += g[oy * ow + ox];
          } else {
            const T share = g[oy * ow + ox] / static_cast<T>(hi::pool_divisor(k, h, w, oy, ox));
            for (index_t i = 0; i < k.kernel[0]; ++i) {
              const index_t y = oy * k.stride[0] - k.pad_begin[0] + i;
              if (y < 0 || y >= h) continue;
              for (index_t j = 0; j < k.kernel[1]; ++j) {
                const index_t x = ox * k.stride[1] - k.pad_begin[1] + j;
                if (x >= 0 && x < w) d[y * w + x] += share;
              }
            }
          }
        }
    });
  }
}

template <class N, class T, std::size_t R> void batch_norm_loops::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  constexpr bool forward = std::is_same_v<typename N::op_type, op::batch_norm>;
  const auto x = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto& xs = x.shape();
  const index_t batch = xs[0], channels = xs[1];
  index_t spatial = 1;
  for (std::size_t d = 2; d < R; ++d) spatial *= xs[d];
  const auto& o = n.options();
  const auto& run = n.running();
  // one task per channel: each reads only its channel's elements and writes only its own statistics
  const index_t grain = std::max<index_t>(1, hi::elementwise_grain / std::max<index_t>(batch * spatial, 1));
  auto stats = hi::buffer<double>(2 * channels);
  double* mean = stats.get();
  double* rstd = mean + channels;
  hi::for_ranges(channels, grain, [&](index_t c0, index_t c1) {
    for (index_t c = c0; c < c1; ++c) {
      double m, v;
      if (o.training) hi::channel_moments(x.data(), batch, channels, spatial, c, m, v);
      else {
        m = static_cast<double>(run.mean[c * run.mean_stride]);
        v = static_cast<double>(run.var[c * run.var_stride]);
      }
      mean[c] = m;
      rstd[c] = 1.0 / std::sqrt(v + o.eps);
      if constexpr (forward) {
        if (o.training) {
          // as PyTorch: the running variance takes the unbiased estimate (count / (count - 1); count > 1 is checked)
          const double count = static_cast<double>(batch * spatial);
          run.mean[c * run.mean_stride] = static_cast<T>((1 - o.momentum) * static_cast<double>(run.mean[c * run.mean_stride]) + o.momentum * m);
          run.var[c * run.var_stride] =
              static_cast<T>((1 - o.momentum) * static_cast<double>(run.var[c * run.var_stride]) + o.momentum * v * count / (count - 1));
        }
      }
    }
  });
  if constexpr (!forward) {
    const double* part = n.part() == 0 ? mean : rstd;
    for (index_t c = 0; c < channels; ++c) dest.data()[c] = static_cast<T>(part[c]);
  } else {
    const auto w = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
    const auto b = detail::materialize_contiguous(detail::get<2>(n.operands()), ctx);
    T* y = dest.data();
    hi::for_ranges(batch * channels, std::max<index_t>(1, hi::elementwise_grain / std::max<index_t>(spatial, 1)), [&](index_t p0, index_t p1) {
      for (index_t p = p0; p < p1; ++p) {
        const index_t c = p % channels;
        // (x - mean) * (rstd * w) + b: the centring stays first, so a large mean cancels exactly
        const double scale = rstd[c] * static_cast<double>(w.data()[c]), m = mean[c], shift = static_cast<double>(b.data()[c]);
        const T* in = x.data() + p * spatial;
        T* out = y + p * spatial;
        for (index_t i = 0; i < spatial; ++i) out[i] = static_cast<T>((static_cast<double>(in[i]) - m) * scale + shift);
      }
    });
  }
}

} // namespace texpr::host_kernels
