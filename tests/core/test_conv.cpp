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

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

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
  // one thread and two give the same values (a large case: each image's GEMM, 32 x 576 x 144 multiply-adds, is past
  // the 2^21 at which GEMMs thread; a small one: images per task)
  tx::tensor<float, 4> big({2, 16, 24, 24}), bw({32, 16, 3, 3});
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

// ---- batch_norm ------------------------------------------------------------------------------------------------

namespace {

struct gb_tag;

/// batch_norm by direct loops in long double over contiguous x read as (N, C, S): y, the gradients of sum(y * gy)
/// and the running statistics after one update (training) or as they were (eval); dx_terms, the largest
/// |w rstd g|: the size of the terms dx's subtraction cancels (with two values per channel dx is all cancellation).
struct bn_reference {
  std::vector<long double> y, dx, dw, db, rm, rv;
  long double dx_terms = 0;
};
bn_reference bn_loops(const double* x, const double* w, const double* b, const double* gy, const double* rm, const double* rv,
                      tx::index_t n, tx::index_t c, tx::index_t s, bool training, long double momentum, long double eps) {
  bn_reference r{std::vector<long double>(static_cast<std::size_t>(n * c * s)), std::vector<long double>(static_cast<std::size_t>(n * c * s)),
                 {}, {}, {}, {}};
  auto at = [&](tx::index_t i, tx::index_t ch, tx::index_t j) { return static_cast<std::size_t>((i * c + ch) * s + j); };
  const long double count = static_cast<long double>(n * s);
  for (tx::index_t ch = 0; ch < c; ++ch) {
    long double mean = 0, var = 0;
    for (tx::index_t i = 0; i < n; ++i)
      for (tx::index_t j = 0; j < s; ++j) mean += x[at(i, ch, j)];
    mean /= count;
    for (tx::index_t i = 0; i < n; ++i)
      for (tx::index_t j = 0; j < s; ++j) var += (x[at(i, ch, j)] - mean) * (x[at(i, ch, j)] - mean);
    var /= count;
    if (training) {
      r.rm.push_back((1 - momentum) * rm[ch] + momentum * mean);
      r.rv.push_back((1 - momentum) * rv[ch] + momentum * var * count / (count - 1));
    } else {
      mean = rm[ch];
      var = rv[ch];
      r.rm.push_back(rm[ch]);
      r.rv.push_back(rv[ch]);
    }
    const long double rstd = 1 / std::sqrt(var + eps);
    long double sg = 0, sgx = 0;
    for (tx::index_t i = 0; i < n; ++i)
      for (tx::index_t j = 0; j < s; ++j) {
        const long double xhat = (x[at(i, ch, j)] - mean) * rstd;
        r.y[at(i, ch, j)] = xhat * w[ch] + b[ch];
        sg += gy[at(i, ch, j)];
        sgx += gy[at(i, ch, j)] * xhat;
      }
    r.db.push_back(sg);
    r.dw.push_back(sgx);
    for (tx::index_t i = 0; i < n; ++i)
      for (tx::index_t j = 0; j < s; ++j) {
        const long double xhat = (x[at(i, ch, j)] - mean) * rstd, g = gy[at(i, ch, j)];
        // training: the statistics depend on x, which takes away the gradient's mean and its projection on xhat
        r.dx_terms = std::max(r.dx_terms, std::fabs(w[ch] * rstd * g));
        r.dx[at(i, ch, j)] = training ? w[ch] * rstd * (g - sg / count - xhat * sgx / count) : w[ch] * rstd * g;
      }
  }
  return r;
}

/// The largest difference between t's elements (contiguous) and want's, relative to want's largest magnitude (or
/// to `floor` where that is larger).
template <class T, std::size_t R> long double relative_to(const tx::tensor<T, R>& t, const std::vector<long double>& want, long double floor = 0) {
  REQUIRE(static_cast<std::size_t>(t.size()) == want.size());
  long double err = 0, scale = floor;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(static_cast<long double>(t.data()[i]) - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return scale > 0 ? err / scale : err;
}
template <class T, std::size_t R> std::vector<long double> as_long(const tx::tensor<T, R>& t) {
  return std::vector<long double>(t.data(), t.data() + t.size());
}

template <class T, std::size_t R> void check_bn_case(const tx::npz_archive& f, const std::string& key) {
  const auto p = f.get<double, 1>(key + "params");
  const tx::batch_norm_options o{.training = p(0) != 0, .momentum = p(1), .eps = p(2)};
  const auto xd = f.get<double, R>(key + "x"), gyd = f.get<double, R>(key + "gy");
  const auto wd = f.get<double, 1>(key + "w"), bd = f.get<double, 1>(key + "b");
  const auto rm0 = f.get<double, 1>(key + "rm0"), rv0 = f.get<double, 1>(key + "rv0");
  const auto x = tx::eval(tx::cast<T>(xd)), gy = tx::eval(tx::cast<T>(gyd));
  const auto w = tx::eval(tx::cast<T>(wd)), b = tx::eval(tx::cast<T>(bd));
  auto rm = tx::eval(tx::cast<T>(rm0)), rv = tx::eval(tx::cast<T>(rv0));
  const auto torch = [&](const char* name) { return as_long(f.get<double, 1>(key + name)); };
  // one evaluation of the node: the values and one update
  const auto y = tx::eval(tx::batch_norm(x, w, b, rm, rv, o));
  CHECK(relative_to(y, as_long(f.get<double, R>(key + "y"))) <= tolerance<T>);
  CHECK(relative_to(rm, torch("rm1")) <= tolerance<T>);
  CHECK(relative_to(rv, torch("rv1")) <= tolerance<T>);
  // value_and_grad evaluated together: the node once more (PyTorch's second forward call), and the gradients
  auto px = tx::param<gx_tag>(x);
  auto pw = tx::param<gw_tag>(w);
  auto pb = tx::param<gb_tag>(b);
  const auto [loss, dx, dw, db] = tx::eval_all(tx::value_and_grad(tx::sum(tx::batch_norm(px, pw, pb, rm, rv, o) * gy), px, pw, pb));
  // the loops, from the same start
  const tx::index_t n = xd.shape()[0], c = xd.shape()[1], s = n * c == 0 ? 0 : xd.size() / (n * c);
  const auto ref = bn_loops(xd.data(), wd.data(), bd.data(), gyd.data(), rm0.data(), rv0.data(), n, c, s, o.training, p(1), p(2));
  // dx relative to the terms it is the difference of (float: 1e-5 of those, not of a dx that cancels to ~eps)
  CHECK(relative_to(dx, as_long(f.get<double, R>(key + "dx")), ref.dx_terms) <= tolerance<T>);
  CHECK(relative_to(dw, torch("dw")) <= tolerance<T>);
  CHECK(relative_to(db, torch("db")) <= tolerance<T>);
  CHECK(relative_to(rm, torch("rm2")) <= tolerance<T>);
  CHECK(relative_to(rv, torch("rv2")) <= tolerance<T>);
  CHECK(relative_to(y, ref.y) <= tolerance<T>);
  CHECK(relative_to(dx, ref.dx, ref.dx_terms) <= tolerance<T>);
  CHECK(relative_to(dw, ref.dw) <= tolerance<T>);
  CHECK(relative_to(db, ref.db) <= tolerance<T>);
  CHECK(relative_to(f.get<double, 1>(key + "rm1"), ref.rm) <= 1e-12L);
  CHECK(relative_to(f.get<double, 1>(key + "rv1"), ref.rv) <= 1e-12L);
}

} // namespace

TEST_CASE("batch_norm: values, gradients and running statistics against PyTorch and direct loops, float64 and float32") {
  const auto f = tx::load_npz(fixture());
  const tx::index_t cases = count(f, "bn_count");
  CHECK(cases >= 8);
  for (tx::index_t i = 0; i < cases; ++i) {
    const std::string key = "bn" + std::to_string(i) + "_";
    INFO("batch_norm case ", i);
    if (f.get<double, 1>(key + "params")(3) == 2) {
      check_bn_case<double, 2>(f, key);
      check_bn_case<float, 2>(f, key);
    } else {
      check_bn_case<double, 4>(f, key);
      check_bn_case<float, 4>(f, key);
    }
  }
}

TEST_CASE("batch_norm: the running statistics are updated once per evaluation of the node") {
  tx::tensor<double, 4> x({3, 2, 2, 3}), gy({3, 2, 2, 3});
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = std::sin(0.7 * static_cast<double>(i)) + 0.1 * static_cast<double>(i);
  for (tx::index_t i = 0; i < gy.size(); ++i) gy.data()[i] = std::cos(0.3 * static_cast<double>(i));
  const tx::tensor<double, 1> w({2}, {1.5, 1.5}), b({2}, {0.25, 0.25});
  tx::tensor<double, 1> rm({2}, {0.0, 0.0}), rv({2}, {1.0, 1.0});
  // momentum 1: the loops' "running" statistics are the batch's (the variance unbiased)
  const auto batch = bn_loops(x.data(), w.data(), b.data(), gy.data(), rm.data(), rv.data(), 3, 2, 6, true, 1.0L, 1e-5L);
  // the statistics expected after k updates on the same batch: running <- 0.9 running + 0.1 batch, k times
  auto after = [&](int k, bool var) {
    std::vector<long double> r(2);
    for (std::size_t ch = 0; ch < 2; ++ch) {
      long double v = var ? 1 : 0;
      for (int i = 0; i < k; ++i) v = 0.9L * v + 0.1L * (var ? batch.rv : batch.rm)[ch];
      r[ch] = v;
    }
    return r;
  };
  auto px = tx::param<gx_tag>(x);
  const tx::batch_norm_options train{.training = true};
  // building an expression updates nothing; evaluating it updates once
  const auto node = tx::batch_norm(x, w, b, rm, rv, train);
  CHECK(relative_to(rm, after(0, false)) == 0);
  (void)tx::eval(node);
  CHECK(relative_to(rm, after(1, false)) <= 1e-14L);
  CHECK(relative_to(rv, after(1, true)) <= 1e-14L);
  // the loss alone, then its gradients: two evaluations of the node (as calling PyTorch's forward twice); square's
  // gradient reads the node's value, so the gradient graph evaluates it
  const auto loss = tx::sum(tx::square(tx::batch_norm(px, w, b, rm, rv, train)) * gy);
  (void)tx::eval(loss);
  CHECK(relative_to(rm, after(2, false)) <= 1e-14L);
  (void)tx::eval_all(tx::grad(loss, px));
  CHECK(relative_to(rm, after(3, false)) <= 1e-14L);
  CHECK(relative_to(rv, after(3, true)) <= 1e-14L);
  // loss and gradients in one eval_all (value_and_grad): once
  (void)tx::eval_all(tx::value_and_grad(loss, px));
  CHECK(relative_to(rm, after(4, false)) <= 1e-14L);
  // a gradient graph that does not read the node's value (batch_norm's own gradient recomputes the batch statistics
  // through batch_norm_stats, which updates nothing) does not evaluate it
  (void)tx::eval_all(tx::grad(tx::sum(tx::batch_norm(px, w, b, rm, rv, train) * gy), px));
  CHECK(relative_to(rm, after(4, false)) <= 1e-14L);
  // eval mode never writes
  (void)tx::eval_all(tx::value_and_grad(tx::sum(tx::square(tx::batch_norm(px, w, b, rm, rv))), px));
  CHECK(relative_to(rm, after(4, false)) <= 1e-14L);
  CHECK(relative_to(rv, after(4, true)) <= 1e-14L);
}

TEST_CASE("batch_norm: strided and expression operands, strided running statistics, threads") {
  tx::tensor<double, 4> x({4, 3, 5, 6}), gy({4, 3, 5, 6});
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = 2 + std::sin(0.37 * static_cast<double>(i));
  for (tx::index_t i = 0; i < gy.size(); ++i) gy.data()[i] = std::cos(0.11 * static_cast<double>(i));
  const tx::tensor<double, 1> w({3}, {0.5, 0.75, 1.0}), b({3}, {-1.0, 0.0, 1.0});
  const tx::tensor<double, 1> rm({3}, {0.25, 0.25, 0.25}), rv({3}, {2.0, 2.0, 2.0});
  const auto ref = bn_loops(x.data(), w.data(), b.data(), gy.data(), rm.data(), rv.data(), 4, 3, 30, true, 0.2L, 1e-4L);
  const tx::batch_norm_options o{.training = true, .momentum = 0.2, .eps = 1e-4};
  // x as a permuted view of a permuted copy, w as an expression, the running statistics as every other element
  const auto xt = tx::eval(tx::permute(x, {3, 1, 0, 2}));
  tx::tensor<double, 1> stats({6}, {0.25, 2.0, 0.25, 2.0, 0.25, 2.0});
  const tx::view<double, 1, tx::host> sm(stats.data(), {3}, {2}), sv(stats.data() + 1, {3}, {2});
  const auto y = tx::eval(tx::batch_norm(tx::permute(xt, {2, 1, 3, 0}), w * 1.0, b, sm, sv, o));
  CHECK(relative_to(y, ref.y) <= 1e-13L);
  for (int i = 0; i < 3; ++i) {
    CHECK(std::fabs(stats.data()[2 * i] - ref.rm[static_cast<std::size_t>(i)]) <= 1e-14L);
    CHECK(std::fabs(stats.data()[2 * i + 1] - ref.rv[static_cast<std::size_t>(i)]) <= 1e-14L);
  }
  // one thread and two agree exactly (each channel's sums run in one task)
  tx::tensor<float, 4> big({8, 16, 32, 32});
  for (tx::index_t i = 0; i < big.size(); ++i) big.data()[i] = static_cast<float>(std::sin(0.001 * static_cast<double>(i)));
  const tx::tensor<float, 1> bw = tx::full({16}, 1.0f), bb = tx::full({16}, 0.0f);
  tx::tensor<float, 1> m1 = tx::full({16}, 0.0f), v1 = tx::full({16}, 1.0f), m2 = tx::full({16}, 0.0f), v2 = tx::full({16}, 1.0f);
  const int threads = tx::num_threads();
  tx::set_num_threads(1);
  const auto one = tx::eval(tx::batch_norm(big, bw, bb, m1, v1, {.training = true}));
  tx::set_num_threads(2);
  const auto two = tx::eval(tx::batch_norm(big, bw, bb, m2, v2, {.training = true}));
  tx::set_num_threads(threads);
  CHECK(relative_to(two, as_long(one)) == 0);
  CHECK(relative_to(m2, as_long(m1)) == 0);
  CHECK(relative_to(v2, as_long(v1)) == 0);
}

TEST_CASE("batch_norm: errors name the op and the shapes; placement names the rows") {
  tx::tensor<float, 4> x({2, 3, 4, 4});
  tx::tensor<float, 1> w({3}), b({3}), rm({3}), rv({3}), four({4});
  auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
    INFO(msg);
    CHECK(!msg.empty());
    for (const char* p : parts) CHECK(msg.find(p) != std::string::npos);
  };
  has(error_of([&] { (void)tx::batch_norm(x, four, b, rm, rv); }), {"batch_norm", "(2, 3, 4, 4)", "weight shape = (4,)", "(3,)"});
  has(error_of([&] { (void)tx::batch_norm(x, w, four, rm, rv); }), {"batch_norm", "bias shape = (4,)"});
  has(error_of([&] { (void)tx::batch_norm(x, w, b, four, rv); }), {"batch_norm", "running_mean shape = (4,)"});
  has(error_of([&] { (void)tx::batch_norm(x, w, b, rm, four); }), {"batch_norm", "running_var shape = (4,)"});
  // one value per channel in training (PyTorch raises too); fine in eval
  tx::tensor<float, 4> single({1, 3, 1, 1});
  has(error_of([&] { (void)tx::batch_norm(single, w, b, rm, rv, {.training = true}); }), {"batch_norm", "more than one value per channel", "(1, 3, 1, 1)"});
  has(error_of([&] { (void)tx::batch_norm(tx::tensor<float, 2>({1, 3}), w, b, rm, rv, {.training = true}); }), {"more than one value per channel", "(1, 3)"});
  CHECK(error_of([&] { (void)tx::eval(tx::batch_norm(single, w, b, rm, rv)); }).empty());
  CHECK_THROWS_AS((void)tx::batch_norm(x, w, b, rm, rv, {.eps = -1}), std::invalid_argument);
  auto px = tx::param<gx_tag>(x);
  const auto [dx] = tx::grad(tx::sum(tx::batch_norm(px, w, b, rm, rv, {.training = true})), px);
  const std::string p = tx::placement(tx::batch_norm(x, w, b, rm, rv)) + tx::placement(dx);
  INFO(p);
  for (const char* impl : {"batch_norm ", "batch_norm_loops", "batch_norm_stats"}) CHECK(p.find(impl) != std::string::npos);
}
