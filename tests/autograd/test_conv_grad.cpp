// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients through texpr/conv.hpp's ops against central differences in float64 (grad_check.hpp): conv2d for both
// operands (groups, unequal strides, asymmetric padding, dilation; 1x1; depthwise; "same"), conv_transpose2d, conv1d,
// max_pool2d (values kept apart so no window has a tie within the step), avg_pool2d with and without the padding
// counted, batch_norm (training and eval, (N, C, H, W) and (N, C)), and a small network chaining them (conv, tanh,
// max pool, conv, avg pool).
#include "grad_check.hpp"

#include <texpr/conv.hpp>

#include <algorithm>
#include <vector>

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("conv2d: both operands, every option") {
  auto g = grad_check::rng(61);
  auto x = random(tx::shape_t<4>{2, 4, 7, 6}, g);
  auto w = random(tx::shape_t<4>{6, 2, 3, 2}, g);
  const tx::conv2d_options o{.stride = {2, 1}, .padding = {1, 0, 2, 1}, .dilation = {1, 2}, .groups = 2};
  auto up = random(tx::shape_t<4>{2, 6, 3, 7}, g);
  check("conv2d, groups 2, strides, asymmetric padding, dilation", [&](auto px, auto pw) { return tx::sum(tx::tanh(tx::conv2d(px, pw, o)) * up); }, x, w);
  auto w1 = random(tx::shape_t<4>{3, 4, 1, 1}, g);
  check("conv2d 1x1", [&](auto px, auto pw) { return tx::sum(tx::square(tx::conv2d(px, pw))); }, x, w1);
  auto wd = random(tx::shape_t<4>{4, 1, 3, 3}, g);
  check("conv2d depthwise, same", [&](auto px, auto pw) { return tx::sum(tx::tanh(tx::conv2d(px, pw, {.padding = "same", .groups = 4}))); }, x, wd);
  auto ws = random(tx::shape_t<4>{2, 4, 2, 2}, g);
  check("conv2d stride > kernel", [&](auto px, auto pw) { return tx::sum(tx::square(tx::conv2d(px, pw, {.stride = 3}))); }, x, ws);
}

TEST_CASE("conv_transpose2d: both operands") {
  auto g = grad_check::rng(65);
  auto x = random(tx::shape_t<4>{2, 4, 3, 4}, g);
  auto w = random(tx::shape_t<4>{4, 3, 3, 2}, g);
  check("conv_transpose2d", [&](auto px, auto pw) {
    return tx::sum(tx::tanh(tx::conv_transpose2d(px, pw, {.stride = 2, .padding = {1, 0}, .output_padding = {1, 0}, .dilation = {1, 2}, .groups = 2})));
  }, x, w);
}

TEST_CASE("conv1d: both operands") {
  auto g = grad_check::rng(62);
  auto x = random(tx::shape_t<3>{2, 4, 9}, g);
  auto w = random(tx::shape_t<3>{4, 2, 3}, g);
  check("conv1d", [&](auto px, auto pw) { return tx::sum(tx::tanh(tx::conv1d(px, pw, {.stride = 2, .padding = {0, 2}, .dilation = 2, .groups = 2}))); }, x, w);
}

TEST_CASE("max_pool2d and avg_pool2d") {
  auto g = grad_check::rng(63);
  // distinct values on a grid of 0.01: no two taps of a window within the finite-difference step of each other
  tx::tensor<double, 4> x({2, 3, 7, 6});
  std::vector<double> values(static_cast<std::size_t>(x.size()));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.01 * static_cast<double>(i) - 1;
  std::shuffle(values.begin(), values.end(), g);
  std::copy(values.begin(), values.end(), x.data());
  auto up = random(tx::shape_t<4>{2, 3, 4, 3}, g);
  check("max_pool2d", [&](auto px) { return tx::sum(tx::max_pool2d(px, {.kernel = 3, .stride = {2, 2}, .padding = 1}) * up); }, x);
  check("max_pool2d, dilated", [&](auto px) { return tx::sum(tx::square(tx::max_pool2d(px, {.kernel = 2, .stride = 1, .dilation = 2}))); }, x);
  auto xa = random(tx::shape_t<4>{2, 3, 7, 6}, g);
  for (const bool counted : {true, false})
    check(counted ? "avg_pool2d, padding counted" : "avg_pool2d, padding not counted",
          [&](auto px) { return tx::sum(tx::square(tx::avg_pool2d(px, {.kernel = {3, 2}, .stride = {2, 1}, .padding = 1, .count_include_pad = counted}))); }, xa);
}

TEST_CASE("adaptive_avg_pool2d: overlapping cells") {
  auto g = grad_check::rng(66);
  auto x = random(tx::shape_t<4>{2, 2, 7, 5}, g);
  check("adaptive_avg_pool2d", [&](auto px) { return tx::sum(tx::square(tx::adaptive_avg_pool2d(px, {3, 2}))); }, x);
}

TEST_CASE("conv, tanh, max pool, conv, avg pool: every parameter") {
  auto g = grad_check::rng(64);
  auto x = random(tx::shape_t<4>{2, 2, 8, 8}, g, -2, 2, 0.05);
  auto w1 = random(tx::shape_t<4>{3, 2, 3, 3}, g);
  auto w2 = random(tx::shape_t<4>{2, 3, 2, 2}, g);
  auto b = random(tx::shape_t<4>{1, 3, 1, 1}, g);
  check("small cnn", [&](auto pw1, auto pw2, auto pb) {
    auto h = tx::max_pool2d(tx::tanh(tx::conv2d(x, pw1, {.padding = 1}) + pb), {.kernel = 2});
    return tx::sum(tx::square(tx::avg_pool2d(tx::conv2d(h, pw2), {.kernel = 3})));
  }, w1, w2, b);
}

TEST_CASE("batch_norm: x, weight and bias, training and eval") {
  auto g = grad_check::rng(67);
  auto x = random(tx::shape_t<4>{3, 2, 3, 2}, g);
  auto w = random(tx::shape_t<1>{2}, g);
  auto b = random(tx::shape_t<1>{2}, g);
  auto up = random(tx::shape_t<4>{3, 2, 3, 2}, g);
  // training updates these on every evaluation of the loss; its values do not read them, so the differences hold
  tx::tensor<double, 1> rm({2}, {0.5, -0.25}), rv({2}, {0.75, 1.5});
  check("batch_norm training", [&](auto px, auto pw, auto pb) {
    return tx::sum(tx::tanh(tx::batch_norm(px, pw, pb, rm, rv, {.training = true, .eps = 1e-3})) * up);
  }, x, w, b);
  check("batch_norm eval", [&](auto px, auto pw, auto pb) { return tx::sum(tx::tanh(tx::batch_norm(px, pw, pb, rm, rv)) * up); }, x, w, b);
  auto x2 = random(tx::shape_t<2>{5, 2}, g);
  check("batch_norm training (N, C)", [&](auto px, auto pw, auto pb) {
    return tx::sum(tx::square(tx::batch_norm(px, pw, pb, rm, rv, {.training = true})));
  }, x2, w, b);
  auto wc = random(tx::shape_t<4>{2, 1, 2, 2}, g);
  check("batch_norm after conv2d", [&](auto px, auto pw) {
    return tx::sum(tx::tanh(tx::batch_norm(tx::conv2d(px, wc, {.padding = 1, .groups = 2}), pw, b, rm, rv, {.training = true})));
  }, x, w);
}
