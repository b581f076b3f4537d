// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convolution and pooling, opt-in (texpr/texpr.hpp does not include it): tx::conv2d, tx::conv1d,
// tx::conv_transpose2d, tx::max_pool2d, tx::avg_pool2d, tx::adaptive_avg_pool2d and tx::batch_norm over NCHW images
// as PyTorch's, with gradients. The host rows use texpr's own GEMM (nothing to link: texpr::texpr is enough). The
// rows are in the host registry table as usual; cuda has none yet, so evaluating one on cuda is the usual compile
// error naming op, dtype, cuda.
#pragma once

#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "texpr/texpr.hpp"
#include "texpr/expr/conv.hpp"
#include "texpr/backend/host/conv.hpp"

namespace texpr {
namespace detail {

/// The node of window op Op over the operands a..., captured, with window w and result shape s.
template <class Op, class... A> auto make_window(const window2d& w, const shape_t<4>& s, A&&... a) {
  return window_expr<Op, captured_t<A>...>(w, s, capture(std::forward<A>(a))...);
}

/// Compile-time checks of a window op's operand: an NCHW image (rank 4) of float or double.
template <class X> constexpr void check_image_operand() {
  static_assert(captured_t<X>::rank == 4, "texpr: conv2d and the 2-D pools take NCHW images of rank 4 (one image: unsqueeze(x, 0))");
}

} // namespace detail

/// Lazy 2-D cross-correlation of images x (N, C, H, W) with filters w (O, C / groups, KH, KW), as
/// torch.nn.functional.conv2d without bias (add a bias as `+ reshape(b, {1, O, 1, 1})`): result (N, O, OH, OW) with
/// OH = (H + pad_top + pad_bottom - dilation_h (KH - 1) - 1) / stride_h + 1 (likewise OW). Options:
/// `{.stride, .padding, .dilation, .groups}`; padding one value, {h, w}, {top, bottom, left, right} or "same".
/// Channels not divisible by groups, w's channels not C / groups, or a kernel larger than the padded image throw
/// tx::shape_error naming both shapes.
template <operand X, operand W>
auto conv2d(X&& x, W&& w, const conv2d_options& o = {}, texpr::source_location loc = texpr::source_location::current()) {
  detail::check_image_operand<X>();
  static_assert(detail::captured_t<W>::rank == 4, "texpr: conv2d's filters are OIHW (rank 4)");
  static_assert(std::is_same_v<typename detail::captured_t<X>::value_type, typename detail::captured_t<W>::value_type>,
                "texpr: conv2d needs x and w of one dtype (cast one)");
  auto cx = detail::capture(std::forward<X>(x));
  auto cw = detail::capture(std::forward<W>(w));
  shape_t<4> out{};
  const auto win = detail::conv2d_window(cx.shape(), cw.shape(), o, out, "conv2d", to_string(cx.shape()), to_string(cw.shape()), loc);
  return window_expr<op::conv2d, decltype(cx), decltype(cw)>(win, out, std::move(cx), std::move(cw));
}

/// Lazy 1-D cross-correlation of signals x (N, C, L) with filters w (O, C / groups, K), as
/// torch.nn.functional.conv1d without bias: conv2d over a unit height. Options `{.stride, .padding, .dilation,
/// .groups}`; padding one value, {left, right}, or "same".
template <operand X, operand W>
auto conv1d(X&& x, W&& w, const conv1d_options& o = {}, texpr::source_location loc = texpr::source_location::current()) {
  static_assert(detail::captured_t<X>::rank == 3, "texpr: conv1d takes signals (N, C, L) of rank 3");
  static_assert(detail::captured_t<W>::rank == 3, "texpr: conv1d's filters are (O, C / groups, K), rank 3");
  static_assert(std::is_same_v<typename detail::captured_t<X>::value_type, typename detail::captured_t<W>::value_type>,
                "texpr: conv1d needs x and w of one dtype (cast one)");
  auto cx = unsqueeze(detail::capture(std::forward<X>(x)), 2);
  auto cw = unsqueeze(detail::capture(std::forward<W>(w)), 2);
  const auto xs = cx.shape(), ws = cw.shape();
  padding2d pad(0, 0, o.padding.left, o.padding.right);
  pad.same = o.padding.same;
  const conv2d_options o2{{1, o.stride}, pad, {1, o.dilation}, o.groups};
  shape_t<4> out{};
  const auto win = detail::conv2d_window(xs, ws, o2, out, "conv1d", to_string(shape_t<3>{xs[0], xs[1], xs[3]}),
                                         to_string(shape_t<3>{ws[0], ws[1], ws[3]}), loc);
  return squeeze(window_expr<op::conv2d, decltype(cx), decltype(cw)>(win, out, std::move(cx), std::move(cw)), 2);
}

/// Lazy transposed convolution of x (N, C_in, H, W) with filters w (C_in, C_out / groups, KH, KW), as
/// torch.nn.functional.conv_transpose2d without bias: the input gradient of the conv2d with these options, result
/// (N, C_out, OH, OW), OH = (H - 1) stride_h - top - bottom + dilation_h (KH - 1) + output_padding_h + 1.
template <operand X, operand W>
auto conv_transpose2d(X&& x, W&& w, const conv_transpose2d_options& o = {}, texpr::source_location loc = texpr::source_location::current()) {
  detail::check_image_operand<X>();
  static_assert(detail::captured_t<W>::rank == 4, "texpr: conv_transpose2d's filters are (C_in, C_out / groups, KH, KW), rank 4");
  static_assert(std::is_same_v<typename detail::captured_t<X>::value_type, typename detail::captured_t<W>::value_type>,
                "texpr: conv_transpose2d needs x and w of one dtype (cast one)");
  auto cx = detail::capture(std::forward<X>(x));
  auto cw = detail::capture(std::forward<W>(w));
  shape_t<4> out{};
  const auto win = detail::conv_transpose2d_window(cx.shape(), cw.shape(), o, out, loc);
  return window_expr<op::conv_transpose2d, decltype(cx), decltype(cw)>(win, out, std::move(cx), std::move(cw));
}

/// Lazy maximum of each window of each channel of x (N, C, H, W), as torch.nn.functional.max_pool2d (ceil_mode
/// false): `{.kernel, .stride (default: the kernel), .padding (at most half the kernel, read as -inf), .dilation}`.
/// NaN wins a window, as PyTorch. The gradient goes to each window's first maximum.
template <operand X> auto max_pool2d(X&& x, const pool2d_options& o, texpr::source_location loc = texpr::source_location::current()) {
  detail::check_image_operand<X>();
  auto cx = detail::capture(std::forward<X>(x));
  shape_t<4> out{};
  const auto win = detail::pool2d_window(cx.shape(), o, true, out, "max_pool2d", loc);
  return window_expr<op::max_pool2d, decltype(cx)>(win, out, std::move(cx));
}

/// Lazy mean of each window of each channel of x (N, C, H, W), as torch.nn.functional.avg_pool2d (ceil_mode false,
/// no divisor_override): `{.kernel, .stride (default: the kernel), .padding (at most half the kernel),
/// .count_include_pad (default true: padding counts in the divisor)}`.
template <operand X> auto avg_pool2d(X&& x, const pool2d_options& o, texpr::source_location loc = texpr::source_location::current()) {
  detail::check_image_operand<X>();
  auto cx = detail::capture(std::forward<X>(x));
  shape_t<4> out{};
  const auto win = detail::pool2d_window(cx.shape(), o, false, out, "avg_pool2d", loc);
  return window_expr<op::avg_pool2d, decltype(cx)>(win, out, std::move(cx));
}

/// Lazy mean of each cell of an oh x ow grid over each channel of x (N, C, H, W), as
/// torch.nn.functional.adaptive_avg_pool2d(x, {oh, ow}): cell i of oh covers rows [floor(i H / oh), ceil((i + 1) H /
/// oh)) (cells overlap when oh does not divide H). An extent below 1 throws tx::shape_error.
template <operand X> auto adaptive_avg_pool2d(X&& x, pair2d size, texpr::source_location loc = texpr::source_location::current()) {
  detail::check_image_operand<X>();
  auto cx = detail::capture(std::forward<X>(x));
  const auto s = cx.shape();
  if (size.h < 1 || size.w < 1)
    detail::window_error("adaptive_avg_pool2d", to_string(s), "", "the output size must be at least 1 x 1, got " + std::to_string(size.h) +
                                                                   " x " + std::to_string(size.w), loc);
  return window_expr<op::adaptive_avg_pool2d, decltype(cx)>(detail::window2d{}, shape_t<4>{s[0], s[1], size.h, size.w}, std::move(cx));
}

namespace detail {

/// The channel shape of x (N, C, ...): (1, C, 1, ...), what a per-channel value broadcasts from.
template <std::size_t R> shape_t<R> channel_shape(const shape_t<R>& x) {
  shape_t<R> s{};
  for (std::size_t d = 0; d != R; ++d) s[d] = d == 1 ? x[1] : 1;
  return s;
}

/// batch_norm_stats' node for part (0 the mean, 1 1 / sqrt(var + eps)) of x, with batch_norm node n's statistics
/// and options.
template <class N, class X> auto batch_norm_statistic(const N& n, const X& x, int part) {
  using CX = captured_t<const X&>;
  return batch_norm_expr<op::batch_norm_stats, CX::rank, CX>(n.running(), n.options(), part, channel_shape(x.shape()), capture(x));
}

} // namespace detail

/// Lazy batch normalisation of x (N, C, ...) (rank 2 or more; (N, C, H, W) images), as
/// torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps): per channel
/// c, (x - mean_c) / sqrt(var_c + eps) * weight_c + bias_c. Training (`{.training = true}`): mean and biased
/// variance of the batch over every axis but 1, and each evaluation of the node updates running_mean and
/// running_var in place, running = (1 - momentum) running + momentum batch, with the unbiased variance (count /
/// (count - 1)) for running_var. Otherwise the running statistics are read. weight, bias and the running
/// statistics have shape (C) (else tx::shape_error naming each shape); training on one value per channel throws
/// tx::shape_error (as PyTorch); eps must be finite and >= 0 (std::invalid_argument). Gradients to x, weight and
/// bias through tx::grad; none to the running statistics, and none of second order.
template <operand X, operand W, operand Bias, class T, class B>
auto batch_norm(X&& x, W&& weight, Bias&& bias, const view<T, 1, B>& running_mean, const view<T, 1, B>& running_var,
                const batch_norm_options& o = {}, texpr::source_location loc = texpr::source_location::current()) {
  using CX = detail::captured_t<X>;
  using CW = detail::captured_t<W>;
  using CB = detail::captured_t<Bias>;
  static_assert(CX::rank >= 2, "texpr: batch_norm takes x of shape (N, C, ...), rank 2 or more");
  static_assert(CW::rank == 1 && CB::rank == 1, "texpr: batch_norm takes weight and bias of shape (C)");
  static_assert(is_floating_v<typename CX::value_type>, "texpr: batch_norm takes a floating operand");
  detail::check_same_dtype<typename CX::value_type, typename CW::value_type>();
  detail::check_same_dtype<typename CX::value_type, typename CB::value_type>();
  detail::check_same_dtype<typename CX::value_type, T>();
  detail::check_same_backend<typename CX::backend, typename CW::backend>();
  detail::check_same_backend<typename CX::backend, typename CB::backend>();
  detail::check_same_backend<typename CX::backend, B>();
  auto cx = detail::capture(std::forward<X>(x));
  auto cw = detail::capture(std::forward<W>(weight));
  auto cb = detail::capture(std::forward<Bias>(bias));
  const auto s = cx.shape();
  const index_t c = s[1];
  if (cw.shape()[0] != c || cb.shape()[0] != c || running_mean.shape()[0] != c || running_var.shape()[0] != c)
    throw shape_error(detail::at(loc) + "texpr: batch_norm needs weight, bias, running_mean and running_var of shape (" +
                      std::to_string(c) + ",), x's channels: x shape = " + to_string(s) + " weight shape = " + to_string(cw.shape()) +
                      " bias shape = " + to_string(cb.shape()) + " running_mean shape = " + to_string(running_mean.shape()) +
                      " running_var shape = " + to_string(running_var.shape()));
  if (o.training && c > 0 && shape_size(s) / c == 1)
    throw shape_error(detail::at(loc) + "texpr: batch_norm in training needs more than one value per channel: x shape = " + to_string(s));
  if (o.training && shape_size(s) == 0)
    throw shape_error(detail::at(loc) + "texpr: batch_norm in training needs a non-empty batch: x shape = " + to_string(s));
  if (!(o.eps >= 0) || !(o.eps < std::numeric_limits<double>::infinity()))
    throw std::invalid_argument(detail::at(loc) + "texpr: batch_norm needs a finite eps >= 0, got eps = " + std::to_string(o.eps));
  const detail::running_stats<T> r{running_mean.data(), running_mean.strides()[0], running_var.data(), running_var.strides()[0]};
  return batch_norm_expr<op::batch_norm, CX::rank, decltype(cx), decltype(cw), decltype(cb)>(r, o, 0, s, std::move(cx), std::move(cw), std::move(cb));
}

/// batch_norm with running statistics held in tensors (updated in place in training).
template <operand X, operand W, operand Bias, class T, class B>
auto batch_norm(X&& x, W&& weight, Bias&& bias, tensor<T, 1, B>& running_mean, tensor<T, 1, B>& running_var,
                const batch_norm_options& o = {}, texpr::source_location loc = texpr::source_location::current()) {
  return batch_norm(std::forward<X>(x), std::forward<W>(weight), std::forward<Bias>(bias), running_mean.view(), running_var.view(), o, loc);
}

// ---- gradients -------------------------------------------------------------------------------------------------
// conv2d, its two gradients and conv2d_input_grad's transpose pairing close under differentiation: each op's
// gradients are the other two (or itself) over the same window, so second derivatives need no new kernel.

/// conv2d (operands x, w): dx = conv2d_input_grad(g, w), dw = conv2d_weight_grad(x, g).
template <> struct gradient_rule<op::conv2d> {
  static constexpr std::string_view derivative =
      "dx = conv2d_input_grad(g, w) (g through wᵀ, folded onto x's windows), dw = conv2d_weight_grad(x, g) (g times x's "
      "windows, summed over the batch)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(1 - I);
  template <std::size_t I, class N, class G, class Out, class X, class W>
  static auto partial(const N& n, const G& g, const Out&, const X& x, const W& w) {
    if constexpr (I == 0) return detail::make_window<op::conv2d_input_grad>(n.window(), detail::get<0>(n.operands()).shape(), g, w);
    else return detail::make_window<op::conv2d_weight_grad>(n.window(), detail::get<1>(n.operands()).shape(), x, g);
  }
};

/// conv2d_input_grad (operands dy, w; linear in each): d(dy) = conv2d(g, w), dw = conv2d_weight_grad(g, dy).
template <> struct gradient_rule<op::conv2d_input_grad> {
  static constexpr std::string_view derivative = "d(dy) = conv2d(g, w), dw = conv2d_weight_grad(g, dy) (its transpose pairings)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(1 - I);
  template <std::size_t I, class N, class G, class Out, class Dy, class W>
  static auto partial(const N& n, const G& g, const Out&, const Dy& dy, const W& w) {
    if constexpr (I == 0) return detail::make_window<op::conv2d>(n.window(), detail::get<0>(n.operands()).shape(), g, w);
    else return detail::make_window<op::conv2d_weight_grad>(n.window(), detail::get<1>(n.operands()).shape(), g, dy);
  }
};

/// conv_transpose2d (operands x, w): conv2d_input_grad's rule (it is that op): dx = conv2d(g, w),
/// dw = conv2d_weight_grad(g, x).
template <> struct gradient_rule<op::conv_transpose2d> {
  static constexpr std::string_view derivative = "dx = conv2d(g, w), dw = conv2d_weight_grad(g, x) (the convolution it transposes)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(1 - I);
  template <std::size_t I, class N, class G, class Out, class X, class W>
  static auto partial(const N& n, const G& g, const Out&, const X& x, const W& w) {
    if constexpr (I == 0) return detail::make_window<op::conv2d>(n.window(), detail::get<0>(n.operands()).shape(), g, w);
    else return detail::make_window<op::conv2d_weight_grad>(n.window(), detail::get<1>(n.operands()).shape(), g, x);
  }
};

/// conv2d_weight_grad (operands x, dy; linear in each): dx = conv2d_input_grad(dy, g), d(dy) = conv2d(x, g).
template <> struct gradient_rule<op::conv2d_weight_grad> {
  static constexpr std::string_view derivative = "dx = conv2d_input_grad(dy, g), d(dy) = conv2d(x, g) (its transpose pairings)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(1 - I);
  template <std::size_t I, class N, class G, class Out, class X, class Dy>
  static auto partial(const N& n, const G& g, const Out&, const X& x, const Dy& dy) {
    if constexpr (I == 0) return detail::make_window<op::conv2d_input_grad>(n.window(), detail::get<0>(n.operands()).shape(), dy, g);
    else return detail::make_window<op::conv2d>(n.window(), detail::get<1>(n.operands()).shape(), x, g);
  }
};

/// max_pool2d: g routed to each window's first maximum (max_pool2d_grad, which reads x to find it).
template <> struct gradient_rule<op::max_pool2d> {
  static constexpr std::string_view derivative =
      "dx = max_pool2d_grad(x, g): each window's g to its first maximum (as PyTorch), summed where windows overlap";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X& x) {
    return detail::make_window<op::max_pool2d_grad>(n.window(), detail::get<0>(n.operands()).shape(), x, g);
  }
};

/// avg_pool2d (linear): g over each window's divisor, spread over the window.
template <> struct gradient_rule<op::avg_pool2d> {
  static constexpr std::string_view derivative = "dx = avg_pool2d_grad(g): g / divisor spread over each window, summed where windows overlap";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return detail::make_window<op::avg_pool2d_grad>(n.window(), detail::get<0>(n.operands()).shape(), g);
  }
};

/// avg_pool2d_grad (linear, avg_pool2d's transpose): d(dy) = avg_pool2d(g).
template <> struct gradient_rule<op::avg_pool2d_grad> {
  static constexpr std::string_view derivative = "d(dy) = avg_pool2d(g) (its transpose)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class Dy> static auto partial(const N& n, const G& g, const Out&, const Dy&) {
    return detail::make_window<op::avg_pool2d>(n.window(), detail::get<0>(n.operands()).shape(), g);
  }
};

/// adaptive_avg_pool2d (linear): g over each cell's size, spread over the cell.
template <> struct gradient_rule<op::adaptive_avg_pool2d> {
  static constexpr std::string_view derivative = "dx = adaptive_avg_pool2d_grad(g): g / cell size spread over each cell, summed where cells overlap";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N& n, const G& g, const Out&, const X&) {
    return detail::make_window<op::adaptive_avg_pool2d_grad>(n.window(), detail::get<0>(n.operands()).shape(), g);
  }
};

/// adaptive_avg_pool2d_grad (linear, adaptive_avg_pool2d's transpose): d(dy) = adaptive_avg_pool2d(g).
template <> struct gradient_rule<op::adaptive_avg_pool2d_grad> {
  static constexpr std::string_view derivative = "d(dy) = adaptive_avg_pool2d(g) (its transpose)";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class Dy> static auto partial(const N& n, const G& g, const Out&, const Dy&) {
    return detail::make_window<op::adaptive_avg_pool2d>(n.window(), detail::get<0>(n.operands()).shape(), g);
  }
};

/// batch_norm (operands x, weight, bias), with xhat = (x - mean) rstd from batch_norm_stats over the saved x (the
/// batch's statistics in training, the running ones otherwise; the running statistics are not updated again).
template <> struct gradient_rule<op::batch_norm> {
  static constexpr std::string_view derivative =
      "dx = rstd (g w - t (mean_c(g w) + xhat mean_c(g w xhat))), dw = sum_c(g xhat), db = sum_c(g), with mean_c and "
      "sum_c over every axis but 1, xhat = (x - mean) rstd and rstd = 1 / sqrt(var + eps); training: the batch's "
      "statistics, t = 1; eval: the running ones, t = 0";
  template <std::size_t I> static constexpr unsigned uses =
      I == 0 ? detail::uses_operand(0) | detail::uses_operand(1) : (I == 1 ? detail::uses_operand(0) : 0u);
  template <std::size_t I, class N, class G, class Out, class X, class W, class Bias>
  static auto partial(const N& n, const G& g, const Out&, const X& x, const W& w, const Bias& b) {
    const auto chan = detail::channel_shape(detail::get<0>(n.operands()).shape());
    [[maybe_unused]] auto rstd = [&] { return detail::batch_norm_statistic(n, x, 1); };
    [[maybe_unused]] auto xhat = [&] { return (x - detail::batch_norm_statistic(n, x, 0)) * rstd(); };
    if constexpr (I == 0) {
      const index_t count = chan[1] == 0 ? 0 : shape_size(detail::get<0>(n.operands()).shape()) / chan[1];
      // eval mode's statistics are constants: the same expression with the batch terms scaled by t = 0, so both modes
      // have one gradient type
      const double t = n.options().training && count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
      auto gw = g * reshape(w, chan);
      return rstd() * (gw - (sum_to(gw, chan) + xhat() * sum_to(gw * xhat(), chan)) * t);
    } else if constexpr (I == 1) {
      return reshape(sum_to(g * xhat(), chan), w.shape());
    } else {
      return reshape(sum_to(g, chan), b.shape());
    }
  }
};

} // namespace texpr
