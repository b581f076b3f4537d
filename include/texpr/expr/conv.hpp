// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convolution and pooling nodes (op/conv.hpp): the options users pass (tx::conv2d_options, tx::pool2d_options),
// the window they resolve to (detail::window2d), window_expr (one node type for every op of the family: the op
// tag, the operands, the window and the result shape), and the shape checks that name the op and both shapes.
// Reached through texpr/conv.hpp.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/conv.hpp"

namespace texpr {

/// Two extents, (height, width): one value means both (`.stride = 2`, `.stride = {2, 1}`).
struct pair2d {
  index_t h = 1;  ///< Along the height (axis 2 of NCHW).
  index_t w = 1;  ///< Along the width (axis 3).
  /// Both 1.
  constexpr pair2d() = default;
  /// Both v.
  constexpr pair2d(index_t v) : h(v), w(v) {}  // NOLINT: implicit, so `.stride = 2` reads as in PyTorch
  /// h along the height, w along the width.
  constexpr pair2d(index_t h_, index_t w_) : h(h_), w(w_) {}
};

/// Zero padding of an image: one value (all sides), {height, width} (each symmetric), {top, bottom, left, right}
/// (asymmetric), or "same" (output extent = input extent at stride 1, the odd cell at the bottom and right, as
/// PyTorch) or "valid" (none).
struct padding2d {
  std::array<index_t, 4> sides{};  ///< top, bottom, left, right.
  bool same = false;               ///< "same": resolved from the kernel by the op.
  /// None.
  constexpr padding2d() = default;
  /// p on every side.
  constexpr padding2d(index_t p) : sides{p, p, p, p} {}  // NOLINT: implicit, `.padding = 1`
  /// h above and below, w left and right.
  constexpr padding2d(index_t h, index_t w) : sides{h, h, w, w} {}
  /// Each side on its own.
  constexpr padding2d(index_t top, index_t bottom, index_t left, index_t right) : sides{top, bottom, left, right} {}
  /// "same" or "valid" (another word throws tx::shape_error).
  template <std::size_t N> padding2d(const char (&mode)[N]) {  // NOLINT: implicit, `.padding = "same"`
    const std::string_view m(mode, N - 1);
    if (m == "same") same = true;
    else if (m != "valid") throw shape_error("texpr: padding \"" + std::string(m) + "\": the words are \"same\" and \"valid\"");
  }
};

/// Zero padding of a signal: one value (both ends), {left, right}, "same" or "valid".
struct padding1d {
  index_t left = 0;   ///< Before the first element.
  index_t right = 0;  ///< After the last.
  bool same = false;  ///< "same": resolved from the kernel by the op.
  /// None.
  constexpr padding1d() = default;
  /// p at each end.
  constexpr padding1d(index_t p) : left(p), right(p) {}  // NOLINT: implicit, `.padding = 1`
  /// l before, r after.
  constexpr padding1d(index_t l, index_t r) : left(l), right(r) {}
  /// "same" or "valid" (another word throws tx::shape_error).
  template <std::size_t N> padding1d(const char (&mode)[N]) : same(padding2d(mode).same) {}  // NOLINT: implicit
};

/// The options of tx::conv2d (PyTorch's names and defaults): `tx::conv2d(x, w, {.stride = 2, .padding = 1})`.
struct conv2d_options {
  pair2d stride{1};    ///< Step between windows.
  padding2d padding{}; ///< Zeros around the image.
  pair2d dilation{1};  ///< Step between a window's taps.
  index_t groups = 1;  ///< Channel groups: input and output channels split in `groups`, group g sees only its own.
};

/// The options of tx::conv_transpose2d (PyTorch's names and defaults).
struct conv_transpose2d_options {
  pair2d stride{1};          ///< Step between the windows of the convolution this one transposes.
  padding2d padding{};       ///< That convolution's padding: rows and columns cropped from the result (not "same").
  pair2d output_padding{0};  ///< Rows (columns) added at the bottom (right): below the stride or the dilation.
  pair2d dilation{1};        ///< Step between a window's taps.
  index_t groups = 1;        ///< Channel groups.
};

/// The options of tx::conv1d: as conv2d's, along the one spatial axis.
struct conv1d_options {
  index_t stride = 1;   ///< Step between windows.
  padding1d padding{};  ///< Zeros at each end.
  index_t dilation = 1; ///< Step between a window's taps.
  index_t groups = 1;   ///< Channel groups.
};

/// The options of tx::max_pool2d and tx::avg_pool2d (PyTorch's names; ceil_mode is not offered).
struct pool2d_options {
  pair2d kernel{1};               ///< Window extent.
  pair2d stride{0};               ///< Step between windows; 0 (the default) means the kernel's extent, as PyTorch.
  padding2d padding{};            ///< Padding (at most half the kernel; max pooling reads it as -inf).
  pair2d dilation{1};             ///< Step between a window's taps (max_pool2d only, as PyTorch).
  bool count_include_pad = true;  ///< avg_pool2d: padding counts in each window's divisor (PyTorch's default).
};

namespace detail {

/// A resolved 2-D window: extents, steps, dilation and padding per spatial axis (0: height, 1: width), groups, and
/// avg_pool2d's divisor rule. Every op of the family carries one.
struct window2d {
  std::array<index_t, 2> kernel{1, 1}, stride{1, 1}, dilation{1, 1};
  std::array<index_t, 2> pad_begin{0, 0}, pad_end{0, 0};  // top, left; bottom, right
  index_t groups = 1;
  bool count_include_pad = true;
  /// The dilated kernel's extent along axis a.
  constexpr index_t span(int a) const { return dilation[a] * (kernel[a] - 1) + 1; }
  /// The number of windows along axis a of an input of extent in (checked beforehand to be at least 1).
  constexpr index_t out_extent(index_t in, int a) const { return (in + pad_begin[a] + pad_end[a] - span(a)) / stride[a] + 1; }
};

} // namespace detail

/// Op of 2-D windows over NCHW images: conv2d and its gradients (two operands), the pools and their gradients (one
/// or two). The result shape is stored: a gradient's shape is its forward input's, which the window does not
/// determine (floor division drops rows).
template <class Op, class... Cs> class window_expr : public expr_base<window_expr<Op, Cs...>> {
  using first = detail::tuple_element_t<0, detail::tuple<Cs...>>;

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<Cs...>;
  using value_type = typename first::value_type;
  using kernel_dtype = value_type;
  using backend = typename detail::common_backend<typename Cs::backend...>::type;
  static constexpr std::size_t rank = 4;

  /// Op of the operands (checked by the builders) over window w, with result shape s.
  window_expr(const detail::window2d& w, const shape_t<4>& s, Cs... c) : c_{{std::move(c)}...}, w_(w), s_(s) {}
  /// The result shape.
  shape_t<4> shape() const { return s_; }
  /// The operands.
  const detail::tuple<Cs...>& operands() const { return c_; }
  /// The window (kernel, stride, dilation, padding, groups).
  const detail::window2d& window() const { return w_; }
  /// The same op over other operands of the same shapes.
  template <class... Ds> window_expr<Op, Ds...> with_operands(Ds... d) const { return window_expr<Op, Ds...>(w_, s_, std::move(d)...); }

 private:
  detail::tuple<Cs...> c_;
  detail::window2d w_;
  shape_t<4> s_;
};

/// The options of tx::batch_norm (PyTorch's names and defaults).
struct batch_norm_options {
  bool training = false;  ///< Normalise by the batch's statistics and update the running ones (else by the running ones).
  double momentum = 0.1;  ///< Weight of the batch's statistic in each update of a running one.
  double eps = 1e-5;      ///< Added to the variance under the square root.
};

namespace detail {

/// batch_norm's running statistics: C values each at a stride, in memory the user owns (read in eval mode, updated
/// in place in training). Raw pointers, not views: the node layer sits below the tensor layer.
template <class T> struct running_stats {
  T* mean = nullptr;         ///< running_mean's first element.
  index_t mean_stride = 1;   ///< Its stride.
  T* var = nullptr;          ///< running_var's first element.
  index_t var_stride = 1;    ///< Its stride.
};

} // namespace detail

/// batch_norm (operands x, weight, bias) and batch_norm_stats (operand x) over x (N, C, ...): the op, the operands,
/// the running statistics, the options and the result shape (x's; (1, C, 1, ...) for a statistic).
template <class Op, std::size_t R, class... Cs> class batch_norm_expr : public expr_base<batch_norm_expr<Op, R, Cs...>> {
  using first = detail::tuple_element_t<0, detail::tuple<Cs...>>;

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<Cs...>;
  using value_type = typename first::value_type;
  using kernel_dtype = value_type;
  using backend = typename detail::common_backend<typename Cs::backend...>::type;
  static constexpr std::size_t rank = R;

  /// Op of the operands (checked by tx::batch_norm) with running statistics r and options o, result shape s.
  /// part selects batch_norm_stats' statistic: 0 the mean, 1 the reciprocal standard deviation (batch_norm: 0).
  batch_norm_expr(const detail::running_stats<value_type>& r, const batch_norm_options& o, int part, const shape_t<R>& s, Cs... c)
      : c_{{std::move(c)}...}, r_(r), o_(o), part_(part), s_(s) {}
  /// The result shape.
  shape_t<R> shape() const { return s_; }
  /// The operands.
  const detail::tuple<Cs...>& operands() const { return c_; }
  /// The running statistics (read in eval mode, updated by batch_norm in training).
  const detail::running_stats<value_type>& running() const { return r_; }
  /// training, momentum, eps.
  const batch_norm_options& options() const { return o_; }
  /// batch_norm_stats: 0 the mean, 1 1 / sqrt(var + eps).
  int part() const { return part_; }
  /// The same op over other operands of the same shapes.
  template <class... Ds> batch_norm_expr<Op, R, Ds...> with_operands(Ds... d) const {
    return batch_norm_expr<Op, R, Ds...>(r_, o_, part_, s_, std::move(d)...);
  }

 private:
  detail::tuple<Cs...> c_;
  detail::running_stats<value_type> r_;
  batch_norm_options o_;
  int part_ = 0;
  shape_t<R> s_;
};

namespace detail {

/// Throws the shape_error of op on x (and w) of the given shapes: "texpr: OP of x of shape (..) and w of shape
/// (..): why".
[[noreturn]] inline void window_error(std::string_view op, const std::string& x, const std::string& w, const std::string& why,
                                      const texpr::source_location& loc) {
  throw shape_error(at(loc) + "texpr: " + std::string(op) + " of x of shape " + x + (w.empty() ? "" : " and w of shape " + w) +
                    ": " + why);
}

/// Checks the steps, dilation and padding of a window and that it fits the padded image of extents (h, w); "same"
/// padding is resolved here (stride 1 only, as PyTorch). xs and ws are the shapes the user passed, for the message.
inline void check_window(window2d& win, const padding2d& pad, index_t h, index_t w, std::string_view op, const std::string& xs,
                         const std::string& ws, const texpr::source_location& loc) {
  for (int a = 0; a < 2; ++a) {
    if (win.kernel[a] < 1) window_error(op, xs, ws, "the kernel's extents must be at least 1", loc);
    if (win.stride[a] < 1) window_error(op, xs, ws, "stride must be at least 1, got " + std::to_string(win.stride[a]), loc);
    if (win.dilation[a] < 1) window_error(op, xs, ws, "dilation must be at least 1, got " + std::to_string(win.dilation[a]), loc);
  }
  if (pad.same) {
    if (win.stride[0] != 1 || win.stride[1] != 1) window_error(op, xs, ws, "padding \"same\" needs stride 1 (as PyTorch)", loc);
    for (int a = 0; a < 2; ++a) {
      const index_t total = win.span(a) - 1;
      win.pad_begin[a] = total / 2;
      win.pad_end[a] = total - total / 2;
    }
  } else {
    win.pad_begin = {pad.sides[0], pad.sides[2]};
    win.pad_end = {pad.sides[1], pad.sides[3]};
  }
  for (int a = 0; a < 2; ++a)
    if (win.pad_begin[a] < 0 || win.pad_end[a] < 0) window_error(op, xs, ws, "padding must not be negative", loc);
  const index_t in[2] = {h, w};
  for (int a = 0; a < 2; ++a)
    if (in[a] + win.pad_begin[a] + win.pad_end[a] < win.span(a))
      window_error(op, xs, ws,
                   std::string("the kernel (") + (a ? "width " : "height ") + std::to_string(win.span(a)) +
                       (win.dilation[a] > 1 ? " dilated" : "") + ") is larger than the padded input (" +
                       std::to_string(in[a] + win.pad_begin[a] + win.pad_end[a]) + ")",
                   loc);
}

/// conv2d's window for x (N, C, H, W) and w (O, C / groups, KH, KW), checked; out receives (N, O, OH, OW). xs and
/// ws are the user's shapes for the message (conv1d passes its 3-D ones).
inline window2d conv2d_window(const shape_t<4>& x, const shape_t<4>& w, const conv2d_options& o, shape_t<4>& out, std::string_view op,
                              const std::string& xs, const std::string& ws, const texpr::source_location& loc) {
  const index_t g = o.groups;
  if (g < 1) window_error(op, xs, ws, "groups must be at least 1, got " + std::to_string(g), loc);
  if (x[1] % g != 0) window_error(op, xs, ws, "x's " + std::to_string(x[1]) + " channels are not divisible by groups = " + std::to_string(g), loc);
  if (w[0] % g != 0) window_error(op, xs, ws, "w's " + std::to_string(w[0]) + " output channels are not divisible by groups = " + std::to_string(g), loc);
  if (w[1] * g != x[1])
    window_error(op, xs, ws, "w has " + std::to_string(w[1]) + " input channels per group; x's " + std::to_string(x[1]) +
                                 " channels in " + std::to_string(g) + " group(s) need " + std::to_string(x[1] / g), loc);
  window2d win;
  win.kernel = {w[2], w[3]};
  win.stride = {o.stride.h, o.stride.w};
  win.dilation = {o.dilation.h, o.dilation.w};
  win.groups = g;
  check_window(win, o.padding, x[2], x[3], op, xs, ws, loc);
  out = {x[0], w[0], win.out_extent(x[2], 0), win.out_extent(x[3], 1)};
  return win;
}

/// conv_transpose2d's window for x (N, C_in, H, W) and w (C_in, C_out / groups, KH, KW), checked; out receives
/// (N, C_out, OH, OW) with OH = (H - 1) stride - top - bottom + dilation (KH - 1) + output_padding + 1.
inline window2d conv_transpose2d_window(const shape_t<4>& x, const shape_t<4>& w, const conv_transpose2d_options& o, shape_t<4>& out,
                                        const texpr::source_location& loc) {
  constexpr std::string_view op = "conv_transpose2d";
  const std::string xs = to_string(x), ws = to_string(w);
  const index_t g = o.groups;
  if (g < 1) window_error(op, xs, ws, "groups must be at least 1, got " + std::to_string(g), loc);
  if (w[0] != x[1]) window_error(op, xs, ws, "w's first axis must be x's " + std::to_string(x[1]) + " channels", loc);
  if (x[1] % g != 0) window_error(op, xs, ws, "x's " + std::to_string(x[1]) + " channels are not divisible by groups = " + std::to_string(g), loc);
  if (o.padding.same) window_error(op, xs, ws, "takes numeric padding, not \"same\"", loc);
  window2d win;
  win.kernel = {w[2], w[3]};
  win.stride = {o.stride.h, o.stride.w};
  win.dilation = {o.dilation.h, o.dilation.w};
  win.groups = g;
  win.pad_begin = {o.padding.sides[0], o.padding.sides[2]};
  win.pad_end = {o.padding.sides[1], o.padding.sides[3]};
  const index_t extra[2] = {o.output_padding.h, o.output_padding.w}, in[2] = {x[2], x[3]};
  index_t extent[2] = {0, 0};
  for (int a = 0; a < 2; ++a) {
    if (win.kernel[a] < 1 || win.stride[a] < 1 || win.dilation[a] < 1)
      window_error(op, xs, ws, "kernel extents, stride and dilation must be at least 1", loc);
    if (win.pad_begin[a] < 0 || win.pad_end[a] < 0 || extra[a] < 0) window_error(op, xs, ws, "padding must not be negative", loc);
    if (extra[a] >= std::max(win.stride[a], win.dilation[a]))
      window_error(op, xs, ws, "output_padding must be smaller than the stride or the dilation (as PyTorch), got " + std::to_string(extra[a]), loc);
    extent[a] = (in[a] - 1) * win.stride[a] - win.pad_begin[a] - win.pad_end[a] + win.span(a) + extra[a];
    if (extent[a] < 1) window_error(op, xs, ws, "the padding crops the whole result (extent " + std::to_string(extent[a]) + ")", loc);
  }
  out = {x[0], w[1] * g, extent[0], extent[1]};
  return win;
}

/// A pool's window for x (N, C, H, W), checked (padding at most half the kernel, as PyTorch: no window is all
/// padding); out receives (N, C, OH, OW).
inline window2d pool2d_window(const shape_t<4>& x, const pool2d_options& o, bool dilation_allowed, shape_t<4>& out, std::string_view op,
                              const texpr::source_location& loc) {
  const std::string xs = to_string(x);
  window2d win;
  win.kernel = {o.kernel.h, o.kernel.w};
  win.stride = {o.stride.h == 0 ? o.kernel.h : o.stride.h, o.stride.w == 0 ? o.kernel.w : o.stride.w};
  win.dilation = {o.dilation.h, o.dilation.w};
  win.count_include_pad = o.count_include_pad;
  if (!dilation_allowed && (win.dilation[0] != 1 || win.dilation[1] != 1)) window_error(op, xs, "", "has no dilation (as PyTorch)", loc);
  if (o.padding.same) window_error(op, xs, "", "takes numeric padding (at most half the kernel), not \"same\"", loc);
  check_window(win, o.padding, x[2], x[3], op, xs, "", loc);
  for (int a = 0; a < 2; ++a)
    if (2 * std::max(win.pad_begin[a], win.pad_end[a]) > win.kernel[a])
      window_error(op, xs, "", "padding must be at most half the kernel (as PyTorch), got " + std::to_string(std::max(win.pad_begin[a], win.pad_end[a])) +
                                   " for a kernel of " + std::to_string(win.kernel[a]), loc);
  out = {x[0], x[1], win.out_extent(x[2], 0), win.out_extent(x[3], 1)};
  return win;
}

/// The node of Op over the captured operands, window and result shape.
template <class Op, class... Cs> auto window_node(const window2d& w, const shape_t<4>& s, Cs... c) {
  return window_expr<Op, Cs...>(w, s, std::move(c)...);
}

} // namespace detail
} // namespace texpr
