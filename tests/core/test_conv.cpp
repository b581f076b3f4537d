// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Convolution and pooling (texpr/conv.hpp) on the host beyond the registry's row checks: every case of PyTorch's
// fixture (tests/core/fixtures/conv.npz from torch_conv.py: 1x1, depthwise, groups, stride > kernel, asymmetric
// padding, dilation, empty batch, ties in max pooling) for the values and for tx::grad's gradients, each also
// against the direct loops of core/conv_reference.hpp; conv1d; "same" padding; operands that are expressions or
// strided; errors that name the op and both shapes; threads; placement.
#include <doctest/doctest.h>
#include <texpr/conv.hpp>
#include <texpr/interop/npz.hpp>

#include "core/conv_reference.hpp"

#include <cstdlib>
#include <string>

namespace tx = texpr;
namespace cr = conv_reference;

namespace {

struct gx_tag;
struct gw_tag;

std::string fixture() {
  const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
  REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
  return std::string(dir) + "/conv.npz";
}

tx::index_t count(const tx::npz_archive& f, const std::string& key) { return static_cast<tx::index_t>(f.get<double, 1>(key)(0)); }

/// float64 within 1e-12 of PyTorch and of the loops (relative to the largest value); float32 within 1e-5 (its eps
/// times sums of up to 72 products of normal values, with room).
template <class T> constexpr long double tolerance = std::is_same_v<T, double> ? 1e-12L : 1e-5L;

/// Case i's options and the references' window.
void conv_case(const tx::tensor<double, 1>& p, tx::conv2d_options& o, cr::window& k, const tx::shape_t<4>& ws) {
  auto at = [&](tx::index_t i) { return static_cast<tx::index_t>(p(i)); };
  o = {{at(0), at(1)}, {at(2), at(3), at(4), at(5)}, {at(6), at(7)}, at(8)};
  k = {ws[2], ws[3], at(0), at(1), at(2), at(3), at(4), at(5), at(6), at(7), at(8), true};
}

template <class T> void check_conv_cases(const tx::npz_archive& f) {
  const tx::index_t cases = count(f, "conv_count");
  CHECK(cases >= 25);
  for (tx::index_t i = 0; i < cases; ++i) {
    const std::string key = "conv" + std::to_string(i) + "_";
    INFO("conv2d case ", i, " ", tx::dtype_name_v<T>);
    const auto x = tx::eval(tx::cast<T>(f.get<double, 4>(key + "x")));
    const auto w = tx::eval(tx::cast<T>(f.get<double, 4>(key + "w")));
    const auto gy = tx::eval(tx::cast<T>(f.get<double, 4>(key + "gy")));
    tx::conv2d_options o;
    cr::window k;
    conv_case(f.get<double, 1>(key + "params"), o, k, w.shape());
    const auto y = tx::eval(tx::conv2d(x, w, o));
    auto px = tx::param<gx_tag>(x);
    auto pw = tx::param<gw_tag>(w);
    const auto [dx, dw] = tx::eval_all(tx::grad(tx::sum(tx::conv2d(px, pw, o) * gy), px, pw));
    CHECK(cr::relative_error(y, cr::from(f.get<double, 4>(key + "y"))) <= tolerance<T>);
    CHECK(cr::relative_error(dx, cr::from(f.get<double, 4>(key + "dx"))) <= tolerance<T>);
    CHECK(cr::relative_error(dw, cr::from(f.get<double, 4>(key + "dw"))) <= tolerance<T>);
    cr::image rdx, rdw;
    const auto rx = cr::from(x), rw = cr::from(w);
    cr::conv2d_grads(rx, rw, cr::from(gy), k, rdx, rdw);
    CHECK(cr::relative_error(y, cr::conv2d(rx, rw, k)) <= tolerance<T>);
    CHECK(cr::relative_error(dx, rdx) <= tolerance<T>);
    CHECK(cr::relative_error(dw, rdw) <= tolerance<T>);
  }
}

/// Pool case i's options and the references' window.
void pool_case(const tx::tensor<double, 1>& p, tx::pool2d_options& o, cr::window& k) {
  auto at = [&](tx::index_t i) { return static_cast<tx::index_t>(p(i)); };
  o = {{at(0), at(1)}, {at(2), at(3)}, {at(4), at(5)}, {at(6), at(7)}, p(8) != 0};
  k = {at(0), at(1), at(2), at(3), at(4), at(4), at(5), at(5), at(6), at(7), 1, p(8) != 0};
}

template <class T> void check_pool_cases(const tx::npz_archive& f) {
  const tx::index_t cases = count(f, "pool_count");
  for (tx::index_t i = 0; i < cases; ++i) {
    const std::string key = "pool" + std::to_string(i) + "_";
    INFO("pool case ", i, " ", tx::dtype_name_v<T>);
    const auto x = tx::eval(tx::cast<T>(f.get<double, 4>(key + "x")));
    const auto gmax = tx::eval(tx::cast<T>(f.get<double, 4>(key + "gmax")));
    const auto gavg = tx::eval(tx::cast<T>(f.get<double, 4>(key + "gavg")));
    tx::pool2d_options o;
    cr::window k;
    pool_case(f.get<double, 1>(key + "params"), o, k);
    tx::pool2d_options oa = o;
    oa.dilation = 1;  // PyTorch's avg_pool2d has none
    auto px = tx::param<gx_tag>(x);
    const auto [mx, av] = tx::eval_all(tx::max_pool2d(x, o), tx::avg_pool2d(x, oa));
    const auto [dmax] = tx::eval_all(tx::grad(tx::sum(tx::max_pool2d(px, o) * gmax), px));
    const auto [davg] = tx::eval_all(tx::grad(tx::sum(tx::avg_pool2d(px, oa) * gavg), px));
    CHECK(cr::relative_error(mx, cr::from(f.get<double, 4>(key + "max"))) <= tolerance<T>);
    CHECK(cr::relative_error(dmax, cr::from(f.get<double, 4>(key + "dmax"))) <= tolerance<T>);
    CHECK(cr::relative_error(av, cr::from(f.get<double, 4>(key + "avg"))) <= tolerance<T>);
    CHECK(cr::relative_error(davg, cr::from(f.get<double, 4>(key + "davg"))) <= tolerance<T>);
    const auto rx = cr::from(x), rgmax = cr::from(gmax), rgavg = cr::from(gavg);
    cr::image rdmax, rdavg;
    CHECK(cr::relative_error(mx, cr::max_pool2d(rx, k, &rgmax, &rdmax)) <= tolerance<T>);
    CHECK(cr::relative_error(dmax, rdmax) <= tolerance<T>);
    cr::window ka = k;
    ka.dh = ka.dw = 1;
    CHECK(cr::relative_error(av, cr::avg_pool2d(rx, ka, &rgavg, &rdavg)) <= tolerance<T>);
    CHECK(cr::relative_error(davg, rdavg) <= tolerance<T>);
  }
}

/// The message of the shape_error f throws ("" when it throws none).
template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const tx::shape_error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("conv2d and its gradients against PyTorch and direct loops, float64 and float32") {
  const auto f = tx::load_npz(fixture());
  check_conv_cases<double>(f);
  check_conv_cases<float>(f);
}

TEST_CASE("conv1d and its gradients against PyTorch") {
  const auto f = tx::load_npz(fixture());
  const tx::index_t cases = count(f, "conv1d_count");
  for (tx::index_t i = 0; i < cases; ++i) {
    const std::string key = "conv1d" + std::to_string(i) + "_";
    INFO("conv1d case ", i);
    const auto x = f.get<double, 3>(key + "x"), w = f.get<double, 3>(key + "w"), gy = f.get<double, 3>(key + "gy");
    const auto p = f.get<double, 1>(key + "params");
    auto at = [&](tx::index_t j) { return static_cast<tx::index_t>(p(j)); };
    const tx::conv1d_options o{at(0), {at(1), at(2)}, at(3), at(4)};
    auto px = tx::param<gx_tag>(x);
    auto pw = tx::param<gw_tag>(w);
    const auto y = tx::eval(tx::conv1d(x, w, o));
    const auto [dx, dw] = tx::eval_all(tx::grad(tx::sum(tx::conv1d(px, pw, o) * gy), px, pw));
    auto as4 = [](const auto& t) { return tx::eval(tx::unsqueeze(t, 2)); };
    CHECK(cr::relative_error(as4(y), cr::from(as4(f.get<double, 3>(key + "y")))) <= 1e-12L);
    CHECK(cr::relative_error(as4(dx), cr::from(as4(f.get<double, 3>(key + "dx")))) <= 1e-12L);
    CHECK(cr::relative_error(as4(dw), cr::from(as4(f.get<double, 3>(key + "dw")))) <= 1e-12L);
  }
}

TEST_CASE("conv_transpose2d and its gradients against PyTorch and the loops (conv2d's input gradient)") {
  const auto f = tx::load_npz(fixture());
  const tx::index_t cases = count(f, "convt_count");
  for (tx::index_t i = 0; i < cases; ++i) {
    const std::string key = "convt" + std::to_string(i) + "_";
    INFO("conv_transpose2d case ", i);
    const auto x = f.get<double, 4>(key + "x"), w = f.get<double, 4>(key + "w"), gy = f.get<double, 4>(key + "gy");
    const auto p = f.get<double, 1>(key + "params");
    auto at = [&](tx::index_t j) { return static_cast<tx::index_t>(p(j)); };
    const tx::conv_transpose2d_options o{{at(0), at(1)}, {at(2), at(3)}, {at(4), at(5)}, {at(6), at(7)}, at(8)};
    auto px = tx::param<gx_tag>(x);
    auto pw = tx::param<gw_tag>(w);
    const auto y = tx::eval(tx::conv_transpose2d(x, w, o));
    const auto [dx, dw] = tx::eval_all(tx::grad(tx::sum(tx::conv_transpose2d(px, pw, o) * gy), px, pw));
    CHECK(cr::relative_error(y, cr::from(f.get<double, 4>(key + "y"))) <= 1e-12L);
    CHECK(cr::relative_error(dx, cr::from(f.get<double, 4>(key + "dx"))) <= 1e-12L);
    CHECK(cr::relative_error(dw, cr::from(f.get<double, 4>(key + "dw"))) <= 1e-12L);
    // the loops: y is the input gradient of the convolution from y's shape to x's with upstream x
    const auto s = y.shape();
    cr::image want, unused;
    cr::conv2d_grads(cr::image(s[0], s[1], s[2], s[3]), cr::from(w), cr::from(x),
                     {w.shape()[2], w.shape()[3], at(0), at(1), at(2), at(2), at(3), at(3), at(6), at(7), at(8), true}, want, unused);
    CHECK(cr::relative_error(y, want) <= 1e-12L);
  }
}

TEST_CASE("max_pool2d and avg_pool2d and their gradients against PyTorch and direct loops, float64 and float32") {
  const auto f = tx::load_npz(fixture());
  check_pool_cases<double>(f);
  check_pool_cases<float>(f);
}

TEST_CASE("adaptive_avg_pool2d and its gradient against PyTorch and the loops") {
  const auto f = tx::load_npz(fixture());
  const tx::index_t cases = count(f, "adaptive_count");
  for (tx::index_t i = 0; i < cases; ++i) {
    const std::string key = "adaptive" + std::to_string(i) + "_";
    INFO("adaptive_avg_pool2d case ", i);
    const auto x = f.get<double, 4>(key + "x"), gy = f.get<double, 4>(key + "gy");
    const tx::index_t oh = gy.shape()[2], ow = gy.shape()[3];
    auto px = tx::param<gx_tag>(x);
    const auto y = tx::eval(tx::adaptive_avg_pool2d(x, {oh, ow}));
    const auto [dx] = tx::eval_all(tx::grad(tx::sum(tx::adaptive_avg_pool2d(px, {oh, ow}) * gy), px));
    CHECK(cr::relative_error(y, cr::from(f.get<double, 4>(key + "y"))) <= 1e-12L);
    CHECK(cr::relative_error(dx, cr::from(f.get<double, 4>(key + "dx"))) <= 1e-12L);
    const auto rgy = cr::from(gy);
    cr::image rdx;
    CHECK(cr::relative_error(y, cr::adaptive_avg_pool2d(cr::from(x), oh, ow, &rgy, &rdx)) <= 1e-12L);
    CHECK(cr::relative_error(dx, rdx) <= 1e-12L);
  }
  tx::tensor<double, 4> x({1, 1, 4, 4});
  CHECK(error_of([&] { (void)tx::adaptive_avg_pool2d(x, {0, 2}); }).find("adaptive_avg_pool2d of x of shape (1, 1, 4, 4)") != std::string::npos);
}

TEST_CASE("conv2d: \"same\" padding, asymmetric padding on the pools, expression and strided operands, threads") {
  tx::tensor<double, 4> x({3, 4, 9, 8}), w({6, 2, 3, 4});
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = std::sin(0.37 * static_cast<double>(i));
  for (tx::index_t i = 0; i < w.size(); ++i) w.data()[i] = std::cos(0.91 * static_cast<double>(i));
  const auto rx = cr::from(x), rw = cr::from(w);
  // "same" at stride 1: the total padding dilation (k - 1), the odd cell after (bottom, right), as PyTorch
  const auto same = tx::eval(tx::conv2d(x, w, {.padding = "same", .dilation = {2, 1}, .groups = 2}));
  CHECK(same.shape() == tx::shape_t<4>{3, 6, 9, 8});
  CHECK(cr::relative_error(same, cr::conv2d(rx, rw, {3, 4, 1, 1, 2, 2, 1, 2, 2, 1, 2, true})) <= 1e-13L);
  // operands that are expressions and strided views are evaluated into memory first
  const auto xt = tx::eval(tx::permute(x, {0, 1, 3, 2}));
  const auto via_views = tx::eval(tx::conv2d(tx::permute(xt, {0, 1, 3, 2}) * 1.0, tx::slice(w, 0, 0, 6), {.stride = 2, .groups = 2}));
  CHECK(cr::relative_error(via_views, cr::conv2d(rx, rw, {3, 4, 2, 2, 0, 0, 0, 0, 1, 1, 2, true})) <= 1e-13L);
  // asymmetric padding on the pools (PyTorch has none: the loops are the reference)
  const tx::pool2d_options po{.kernel = {3, 2}, .stride = {2, 1}, .padding = {0, 1, 1, 0}, .count_include_pad = false};
  CHECK(cr::relative_error(tx::eval(tx::avg_pool2d(x, po)), cr::avg_pool2d(rx, {3, 2, 2, 1, 0, 1, 1, 0, 1, 1, 1, false})) <= 1e-13L);
  CHECK(cr::relative_error(tx::eval(tx::max_pool2d(x, po)), cr::max_pool2d(rx, {3, 2, 2, 1, 0, 1, 1, 0, 1, 1, 1, false})) <= 1e-13L);
  // one thread and two give the same values (a large case: the GEMMs thread; a small one: images per task)
  tx::tensor<float, 4> big({2, 32, 40, 40}), bw({64, 32, 3, 3});
  for (tx::index_t i = 0; i < big.size(); ++i) big.data()[i] = static_cast<float>(std::sin(0.01 * static_cast<double>(i)));
  for (tx::index_t i = 0; i < bw.size(); ++i) bw.data()[i] = static_cast<float>(std::cos(0.05 * static_cast<double>(i)));
  const int threads = tx::num_threads();
  tx::set_num_threads(1);
  const auto one = tx::eval(tx::conv2d(big, bw, {.padding = 1}));
  const auto small_one = tx::eval(tx::conv2d(x, w, {.groups = 2}));
  tx::set_num_threads(2);
  const auto two = tx::eval(tx::conv2d(big, bw, {.padding = 1}));
  const auto small_two = tx::eval(tx::conv2d(x, w, {.groups = 2}));
  tx::set_num_threads(threads);
  CHECK(cr::relative_error(two, cr::from(one)) <= 1e-6L);
  CHECK(cr::relative_error(small_two, cr::from(small_one)) == 0);
  CHECK(cr::relative_error(one, cr::conv2d(cr::from(big), cr::from(bw), {3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true})) <= 1e-5L);
}

TEST_CASE("conv2d and the pools: shapes that do not fit are a shape_error naming the op and both shapes") {
  tx::tensor<float, 4> x({2, 6, 5, 5}), w({4, 3, 3, 3});
  auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
    INFO(msg);
    for (const char* p : parts) CHECK(msg.find(p) != std::string::npos);
  };
  has(error_of([&] { (void)tx::conv2d(x, w, {.groups = 4}); }), {"conv2d", "(2, 6, 5, 5)", "(4, 3, 3, 3)", "not divisible by groups = 4"});
  has(error_of([&] { (void)tx::conv2d(x, w); }), {"conv2d", "(2, 6, 5, 5)", "(4, 3, 3, 3)", "need 6"});
  has(error_of([&] { (void)tx::conv2d(x, tx::tensor<float, 4>({3, 3, 3, 3}), {.groups = 2}); }), {"w's 3 output channels"});
  has(error_of([&] { (void)tx::conv2d(x, tx::tensor<float, 4>({4, 6, 7, 3})); }), {"(4, 6, 7, 3)", "kernel (height 7) is larger than the padded input (5)"});
  has(error_of([&] { (void)tx::conv2d(x, tx::tensor<float, 4>({4, 6, 3, 3}), {.dilation = 3}); }), {"kernel (height 7 dilated)"});
  has(error_of([&] { (void)tx::conv2d(x, tx::tensor<float, 4>({4, 6, 3, 3}), {.stride = 0}); }), {"stride must be at least 1"});
  has(error_of([&] { (void)tx::conv2d(x, tx::tensor<float, 4>({4, 6, 3, 3}), {.stride = 2, .padding = "same"}); }), {"\"same\" needs stride 1"});
  has(error_of([&] { (void)tx::conv2d(x, tx::tensor<float, 4>({4, 6, 3, 3}), {.padding = -1}); }), {"padding must not be negative"});
  has(error_of([&] { (void)tx::conv2d(x, tx::tensor<float, 4>({4, 6, 3, 3}), {.padding = "full"}); }), {"\"same\" and \"valid\""});
  has(error_of([&] { (void)tx::conv1d(tx::tensor<float, 3>({2, 6, 5}), tx::tensor<float, 3>({4, 6, 6})); }),
      {"conv1d", "(2, 6, 5)", "(4, 6, 6)", "larger than the padded input"});
  has(error_of([&] { (void)tx::conv_transpose2d(x, w); }), {"conv_transpose2d", "(2, 6, 5, 5)", "(4, 3, 3, 3)", "w's first axis must be x's 6 channels"});
  has(error_of([&] { (void)tx::conv_transpose2d(x, tx::tensor<float, 4>({6, 1, 3, 3}), {.stride = 2, .output_padding = 2}); }),
      {"output_padding must be smaller than the stride or the dilation"});
  has(error_of([&] { (void)tx::max_pool2d(x, {.kernel = 2, .padding = 2}); }), {"max_pool2d", "(2, 6, 5, 5)", "at most half the kernel"});
  has(error_of([&] { (void)tx::avg_pool2d(x, {.kernel = 6}); }), {"avg_pool2d", "larger than the padded input"});
  has(error_of([&] { (void)tx::avg_pool2d(x, {.kernel = 2, .dilation = 2}); }), {"avg_pool2d", "no dilation"});
  // nothing thrown where everything fits, an empty batch included
  CHECK(error_of([&] { (void)tx::eval(tx::conv2d(tx::tensor<float, 4>({0, 6, 5, 5}), w, {.groups = 2})); }).empty());
}

TEST_CASE("conv2d and the pools: placement names each row's implementation") {
  tx::tensor<float, 4> x({1, 2, 6, 6}), w({2, 2, 3, 3});
  auto px = tx::param<gx_tag>(x);
  auto pw = tx::param<gw_tag>(w);
  const auto grads = tx::grad(tx::sum(tx::avg_pool2d(tx::conv2d(px, pw), {.kernel = 2})), px, pw);
  const std::string p = tx::placement(tx::conv2d(x, w)) + tx::placement(tx::max_pool2d(x, {.kernel = 2})) +
                        tx::placement(std::get<0>(grads)) + tx::placement(std::get<1>(grads));
  INFO(p);
  for (const char* impl : {"conv2d", "im2col_gemm", "max_pool2d", "pool_loops", "conv2d_input_grad", "gemm_col2im", "conv2d_weight_grad", "avg_pool2d_grad"})
    CHECK(p.find(impl) != std::string::npos);
}
