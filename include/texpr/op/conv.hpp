// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convolution and pooling op tags (the family texpr/conv.hpp adds): 2-D windows over NCHW images, as PyTorch's
// conv2d, max_pool2d and avg_pool2d, and the ops their gradients are made of. Each reads its operands from memory
// (evaluated first when they are expressions): the kernels walk windows, not accessors.
#pragma once

#include <string_view>

#include "texpr/core/dtype_set.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of the convolution and pooling ops: computed by a window kernel (im2col onto the GEMM, or direct loops),
/// on float and double.
struct window_op {
  static constexpr kind category = kind::computed;               ///< Evaluated by a window kernel.
  static constexpr auto dtypes = floating;                       ///< float and double.
  static constexpr std::string_view header = "texpr/conv.hpp";  ///< The opt-in header that brings the op.
};

/// Cross-correlation of NCHW images x with OIHW filters w (torch.nn.functional.conv2d, without bias): stride,
/// padding (zeros), dilation, groups.
struct conv2d : window_op {
  static constexpr std::string_view name = "conv2d";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "2-D cross-correlation of NCHW x with OIHW w: stride, zero padding, dilation, groups (torch conv2d, no bias)";
};
/// The gradient of conv2d with respect to its input: g (N, O, OH, OW) through w into the input's shape (a
/// transposed convolution; torch.nn.grad.conv2d_input, conv_transpose2d).
struct conv2d_input_grad : window_op {
  static constexpr std::string_view name = "conv2d_input_grad";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "conv2d's gradient for its input: g through wᵀ, scattered back onto the input's windows (a transposed convolution)";
};
/// The gradient of conv2d with respect to its filters: x's windows times g, summed over the batch
/// (torch.nn.grad.conv2d_weight).
struct conv2d_weight_grad : window_op {
  static constexpr std::string_view name = "conv2d_weight_grad";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "conv2d's gradient for its filters: g times x's windows, summed over the batch (torch.nn.grad.conv2d_weight)";
};
/// The transposed convolution of NCHW x with (C_in, C_out / groups, KH, KW) filters w
/// (torch.nn.functional.conv_transpose2d, without bias): conv2d's input gradient taken as an op of its own.
struct conv_transpose2d : window_op {
  static constexpr std::string_view name = "conv_transpose2d";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "2-D transposed convolution of NCHW x with (C_in, C_out / groups, KH, KW) w: stride, padding, output_padding, "
      "dilation, groups (torch conv_transpose2d, no bias)";
};
/// The maximum of each window of each channel (torch max_pool2d); padding reads as -inf.
struct max_pool2d : window_op {
  static constexpr std::string_view name = "max_pool2d";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "maximum of each window of each NCHW channel: kernel, stride, padding (-inf), dilation (torch max_pool2d)";
};
/// The gradient of max_pool2d: g routed to the first maximum of each window (as PyTorch), summed where windows
/// overlap.
struct max_pool2d_grad : window_op {
  static constexpr std::string_view name = "max_pool2d_grad";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "max_pool2d's gradient: g to each window's first maximum (NaN counts as the maximum), summed over windows";
};
/// The mean of each window of each channel (torch avg_pool2d): padding counted in the divisor or not
/// (count_include_pad).
struct avg_pool2d : window_op {
  static constexpr std::string_view name = "avg_pool2d";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "mean of each window of each NCHW channel: kernel, stride, zero padding counted or not (torch avg_pool2d)";
};
/// The mean of each of a fixed grid of windows of each channel (torch adaptive_avg_pool2d): output cell i of n
/// along an axis of extent h averages rows [floor(i h / n), ceil((i + 1) h / n)).
struct adaptive_avg_pool2d : window_op {
  static constexpr std::string_view name = "adaptive_avg_pool2d";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "mean of each cell of an OH x OW grid over each NCHW channel, cell i covering [floor(i H / OH), ceil((i + 1) H / OH)) "
      "(torch adaptive_avg_pool2d)";
};
/// The gradient of adaptive_avg_pool2d: g over each cell's size, spread over the cell.
struct adaptive_avg_pool2d_grad : window_op {
  static constexpr std::string_view name = "adaptive_avg_pool2d_grad";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "adaptive_avg_pool2d's gradient: g divided by each cell's size, spread over the cell";
};
/// The gradient of avg_pool2d: g over each window's divisor, spread over the window, summed where windows overlap.
struct avg_pool2d_grad : window_op {
  static constexpr std::string_view name = "avg_pool2d_grad";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "avg_pool2d's gradient: g divided by each window's divisor, spread over the window's positions";
};

/// Batch normalisation of (N, C, ...) x per channel (torch.nn.functional.batch_norm): with the batch's statistics
/// over every axis but 1 (training: the running statistics updated in place by the kernel), or the running ones.
/// Computed by one kernel so that the update happens once per evaluation of the node.
struct batch_norm {
  static constexpr kind category = kind::computed;                ///< Evaluated by the batch-norm kernel.
  static constexpr auto dtypes = floating;                        ///< float and double.
  static constexpr std::string_view header = "texpr/conv.hpp";   ///< The opt-in header that brings the op.
  static constexpr std::string_view name = "batch_norm";         ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "per-channel (axis 1) normalisation by the batch's mean and biased variance (training; running statistics updated "
      "in place) or by the running ones, times weight plus bias (torch batch_norm)";
};
/// One per-channel statistic batch_norm normalises with, shaped (1, C, 1, ...) to broadcast against x: the mean or
/// 1 / sqrt(var + eps), from the batch in training, from the running statistics otherwise. Pure (no update):
/// batch_norm's gradient reads it.
struct batch_norm_stats {
  static constexpr kind category = kind::computed;                ///< Evaluated by the batch-norm kernel.
  static constexpr auto dtypes = floating;                        ///< float and double.
  static constexpr std::string_view header = "texpr/conv.hpp";   ///< The opt-in header that brings the op.
  static constexpr std::string_view name = "batch_norm_stats";   ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "batch_norm's per-channel mean or 1 / sqrt(var + eps), shaped (1, C, 1, ...), from the batch (training) or the "
      "running statistics; updates nothing";
};

} // namespace texpr::op
