// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// texpr's side of the peer benchmark (bench/peers/run.sh): one case, one thread count, inputs from .npy files
// written by NumPy (peers.py make), output written as .npy for the cross-check. Prints "median_ms <t>".
//   texpr_peer CASE THREADS DIR
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include <texpr/conv.hpp>
#include <texpr/interop/npy.hpp>
#include <texpr/sort.hpp>
#include <texpr/linalg.hpp>
#include <texpr/texpr.hpp>

namespace tx = texpr;

namespace {

template <class F> double median_ms(F&& f, int reps) {
  f();  // warm-up (allocations, page faults, thread pool start)
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class X, class W1, class B1, class W2, class B2, class W3, class B3>
auto logits(const X& x, const W1& w1, const B1& b1, const W2& w2, const B2& b2, const W3& w3, const B3& b3) {
  auto h1 = tx::elu(tx::matmul(x, w1) + b1);
  auto h2 = tx::elu(tx::matmul(h1, w2) + b2);
  return tx::matmul(h2, w3) + b3;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: texpr_peer CASE THREADS DIR\n");
    return 2;
  }
  const std::string c = argv[1], dir = argv[3];
  tx::set_num_threads(std::stoi(argv[2]));
  const auto in = [&](const char* name) { return dir + "/" + name + ".npy"; };
  const std::string out = dir + "/out_texpr_" + c + ".npy";
  double ms = 0;
  if (c == "fused_sum") {
    auto a = tx::load_npy<float, 1>(in("a")), b = tx::load_npy<float, 1>(in("b")), d = tx::load_npy<float, 1>(in("c"));
    tx::tensor<float, 0> r = tx::sum(a * b + d);
    ms = median_ms([&] { r = tx::sum(a * b + d); }, 15);
    tx::save_npy(out, r);
  } else if (c == "mean_axis1") {
    auto x = tx::load_npy<float, 2>(in("x"));
    tx::tensor<float, 1> r = tx::mean(x, 1);
    ms = median_ms([&] { r = tx::mean(x, 1); }, 15);
    tx::save_npy(out, r);
  } else if (c == "elu_chain") {
    auto x = tx::load_npy<float, 2>(in("x"));
    auto mu = tx::load_npy<float, 1>(in("mu")), s = tx::load_npy<float, 1>(in("s")), b = tx::load_npy<float, 1>(in("bias"));
    tx::tensor<float, 2> r = tx::elu((x - mu) * s + b) * 0.5f + x;
    ms = median_ms([&] { r = tx::elu((x - mu) * s + b) * 0.5f + x; }, 11);
    tx::save_npy(out, r);
  } else if (c == "matmul") {
    auto a = tx::load_npy<float, 2>(in("ma")), b = tx::load_npy<float, 2>(in("mb"));
    tx::tensor<float, 2> r = tx::matmul(a, b);
    ms = median_ms([&] { r = tx::matmul(a, b); }, 11);
    tx::save_npy(out, r);
  } else if (c == "mlp_forward" || c == "sgd_step") {
    auto w1 = tx::load_npy<float, 2>(in("w1")), w2 = tx::load_npy<float, 2>(in("w2")), w3 = tx::load_npy<float, 2>(in("w3"));
    auto b1 = tx::load_npy<float, 1>(in("b1")), b2 = tx::load_npy<float, 1>(in("b2")), b3 = tx::load_npy<float, 1>(in("b3"));
    if (c == "mlp_forward") {
      auto x = tx::load_npy<float, 2>(in("x64")), y = tx::load_npy<float, 2>(in("y64"));
      tx::tensor<float, 0> r = tx::mean(tx::square(logits(x, w1, b1, w2, b2, w3, b3) - y));
      ms = median_ms([&] { r = tx::mean(tx::square(logits(x, w1, b1, w2, b2, w3, b3) - y)); }, 31);
      tx::save_npy(out, r);
    } else {
      auto x = tx::load_npy<float, 2>(in("x128")), y = tx::load_npy<float, 2>(in("y128"));
      // One SGD step: the loss's gradients with respect to all six parameters, then six updated parameters (new
      // tensors, as the peers': every repetition does the same work from the same weights).
      const auto step = [&] {
        auto p1 = tx::param<struct w1_tag>(w1);
        auto q1 = tx::param<struct b1_tag>(b1);
        auto p2 = tx::param<struct w2_tag>(w2);
        auto q2 = tx::param<struct b2_tag>(b2);
        auto p3 = tx::param<struct w3_tag>(w3);
        auto q3 = tx::param<struct b3_tag>(b3);
        auto [l, g1, h1, g2, h2, g3, h3] =
            tx::eval_all(tx::value_and_grad(tx::mean(tx::square(logits(x, p1, q1, p2, q2, p3, q3) - y)), p1, q1, p2, q2, p3, q3));
        return std::make_tuple(tx::tensor<float, 2>(w1 - 0.1f * g1), tx::tensor<float, 1>(b1 - 0.1f * h1),
                               tx::tensor<float, 2>(w2 - 0.1f * g2), tx::tensor<float, 1>(b2 - 0.1f * h2),
                               tx::tensor<float, 2>(w3 - 0.1f * g3), tx::tensor<float, 1>(b3 - 0.1f * h3));
      };
      auto updated = step();
      ms = median_ms([&] { updated = step(); }, 21);
      // Saved as the peers save theirs: the six updated parameters flattened, one after another.
      tx::index_t total = 0;
      std::apply([&](const auto&... t) { ((total += t.size()), ...); }, updated);
      tx::tensor<float, 1> flat(tx::shape_t<1>{total});
      tx::index_t at = 0;
      std::apply([&](const auto&... t) { ((std::copy(t.data(), t.data() + t.size(), flat.data() + at), at += t.size()), ...); }, updated);
      tx::save_npy(out, flat);
    }
  } else if (c == "adam_step") {
    // AdamW (lr 1e-3, weight decay 1e-2, PyTorch's other defaults) on the seed MLP's six parameters, in place, as
    // torch.optim.AdamW(foreach=True).step() in the peers. Checked: the first step's parameters.
    auto w1 = tx::load_npy<float, 2>(in("w1")), w2 = tx::load_npy<float, 2>(in("w2")), w3 = tx::load_npy<float, 2>(in("w3"));
    auto b1 = tx::load_npy<float, 1>(in("b1")), b2 = tx::load_npy<float, 1>(in("b2")), b3 = tx::load_npy<float, 1>(in("b3"));
    auto gw1 = tx::load_npy<float, 2>(in("gw1")), gw2 = tx::load_npy<float, 2>(in("gw2")), gw3 = tx::load_npy<float, 2>(in("gw3"));
    auto gb1 = tx::load_npy<float, 1>(in("gb1")), gb2 = tx::load_npy<float, 1>(in("gb2")), gb3 = tx::load_npy<float, 1>(in("gb3"));
    const tx::optim::adamw_options options{.lr = 1e-3, .weight_decay = 1e-2};
    const auto grads = std::tie(gw1, gb1, gw2, gb2, gw3, gb3);
    auto first = std::make_tuple(w1.clone(), b1.clone(), w2.clone(), b2.clone(), w3.clone(), b3.clone());
    {
      tx::optim::adamw once(std::apply([](auto&... t) { return std::tie(t...); }, first), options);
      once.step(grads);
    }
    tx::optim::adamw opt(std::tie(w1, b1, w2, b2, w3, b3), options);
    ms = median_ms([&] { opt.step(grads); }, 51);
    tx::index_t total = 0;
    std::apply([&](const auto&... t) { ((total += t.size()), ...); }, first);
    tx::tensor<float, 1> flat(tx::shape_t<1>{total});
    tx::index_t at = 0;
    std::apply([&](const auto&... t) { ((std::copy(t.data(), t.data() + t.size(), flat.data() + at), at += t.size()), ...); }, first);
    tx::save_npy(out, flat);
  } else if (c == "softmax") {
    auto z = tx::load_npy<float, 2>(in("logits"));
    tx::tensor<float, 2> r = tx::softmax(z, 1);
    ms = median_ms([&] { r = tx::softmax(z, 1); }, 11);
    tx::save_npy(out, r);
  } else if (c == "cross_entropy") {
    auto z = tx::load_npy<float, 2>(in("logits"));
    auto l = tx::load_npy<std::int64_t, 1>(in("labels"));
    tx::tensor<float, 0> r = tx::cross_entropy(z, l);
    ms = median_ms([&] { r = tx::cross_entropy(z, l); }, 15);
    tx::save_npy(out, r);
  } else if (c == "copy_flat") {
    auto a = tx::load_npy<float, 1>(in("a"));
    tx::tensor<float, 1> r = a.clone();
    ms = median_ms([&] { r = a; }, 15);  // the memory-bandwidth anchor of the scans
    tx::save_npy(out, r);
  } else if (c == "cumsum_flat") {
    auto a = tx::load_npy<float, 1>(in("a"));
    tx::tensor<float, 1> r = tx::cumsum(a, 0);
    ms = median_ms([&] { r = tx::cumsum(a, 0); }, 11);
    tx::save_npy(out, r);
  } else if (c == "cumsum_axis0" || c == "cumsum_axis1") {
    auto x = tx::load_npy<float, 2>(in("x"));
    const tx::index_t axis = c == "cumsum_axis0" ? 0 : 1;
    tx::tensor<float, 2> r = tx::cumsum(x, axis);
    ms = median_ms([&] { r = tx::cumsum(x, axis); }, 7);
    tx::save_npy(out, r);
  } else if (c == "sort_flat" || c == "argsort_flat") {
    auto x = tx::load_npy<float, 1>(in("sflat"));
    if (c == "sort_flat") {
      tx::tensor<float, 1> r = tx::sort(x);
      ms = median_ms([&] { r = tx::sort(x); }, 7);
      tx::save_npy(out, r);
    } else {
      tx::tensor<std::int64_t, 1> r = tx::argsort(x);
      ms = median_ms([&] { r = tx::argsort(x); }, 7);
      tx::save_npy(out, r);
    }
  } else if (c == "sort_rows" || c == "argsort_rows") {
    auto x = tx::load_npy<float, 2>(in("srows"));
    if (c == "sort_rows") {
      tx::tensor<float, 2> r = tx::sort(x, 1);
      ms = median_ms([&] { r = tx::sort(x, 1); }, 5);
      tx::save_npy(out, r);
    } else {
      tx::tensor<std::int64_t, 2> r = tx::argsort(x, 1);
      ms = median_ms([&] { r = tx::argsort(x, 1); }, 5);
      tx::save_npy(out, r);
    }
  } else if (c == "topk") {
    auto x = tx::load_npy<float, 2>(in("tk"));
    auto [v, i] = tx::topk(x, 8, 1);
    auto [values, indices] = tx::eval_all(v, i);  // both results, as the peers compute both
    ms = median_ms([&] { std::tie(values, indices) = tx::eval_all(v, i); }, 5);
    tx::save_npy(out, values);
  } else if (c == "einsum_bmm" || c == "bmm") {
    auto a = tx::load_npy<float, 3>(in("ea")), b = tx::load_npy<float, 3>(in("eb"));
    tx::tensor<float, 3> r = tx::matmul(a, b);
    if (c == "einsum_bmm") ms = median_ms([&] { r = tx::einsum<"bij,bjk->bik">(a, b); }, 9);
    else ms = median_ms([&] { r = tx::matmul(a, b); }, 9);  // what the einsum lowers to
    tx::save_npy(out, r);
  } else if (c.rfind("cholesky_", 0) == 0) {
    auto a = tx::load_npy<double, 2>(in(("spd" + c.substr(9)).c_str()));
    tx::tensor<double, 2> r = tx::linalg::cholesky(a);
    ms = median_ms([&] { r = tx::linalg::cholesky(a); }, c == "cholesky_256" ? 21 : 7);
    tx::save_npy(out, r);
  } else if (c == "solve_256" || c == "solve_1024") {
    auto a = tx::load_npy<double, 2>(in(("ga" + c.substr(6)).c_str())), b = tx::load_npy<double, 2>(in(("gb" + c.substr(6)).c_str()));
    tx::tensor<double, 2> r = tx::linalg::solve(a, b);
    ms = median_ms([&] { r = tx::linalg::solve(a, b); }, c == "solve_256" ? 21 : 7);
    tx::save_npy(out, r);
  } else if (c == "solve_batched") {
    auto a = tx::load_npy<double, 3>(in("ba")), b = tx::load_npy<double, 3>(in("bb"));
    tx::tensor<double, 3> r = tx::linalg::solve(a, b);
    ms = median_ms([&] { r = tx::linalg::solve(a, b); }, 21);
    tx::save_npy(out, r);
  } else if (c.rfind("conv", 0) == 0) {  // conv3x3_64_56, conv3x3_128_28, conv1x1_256_56, each also "_train"
    const bool train = c.ends_with("_train");
    const std::string base = train ? c.substr(0, c.size() - 6) : c;
    const bool one = base == "conv1x1_256_56";
    const std::string n = one ? "256" : base == "conv3x3_64_56" ? "64" : "128";
    auto x = tx::load_npy<float, 4>(in(("cx" + n).c_str()));
    auto w = tx::load_npy<float, 4>(in(one ? "cw1" : ("cw" + n).c_str()));
    auto g = tx::load_npy<float, 4>(in(one ? "cg1" : ("cg" + n).c_str()));
    const tx::conv2d_options o{.padding = one ? 0 : 1};
    if (!train) {
      tx::tensor<float, 4> r = tx::conv2d(x, w, o);
      ms = median_ms([&] { r = tx::conv2d(x, w, o); }, 5);
      tx::save_npy(out, r);
    } else {  // the forward and both gradients of sum(conv2d(x, w) * g), as a training step runs them
      struct tag_x {};
      struct tag_w {};
      const auto px = tx::param<tag_x>(x);
      const auto pw = tx::param<tag_w>(w);
      auto run = [&] { return tx::eval_all(tx::value_and_grad(tx::sum(tx::conv2d(px, pw, o) * g), px, pw)); };
      auto r = run();
      ms = median_ms([&] { r = run(); }, 5);
      const auto& dx = std::get<1>(r);
      const auto& dw = std::get<2>(r);
      tx::tensor<float, 1> both({dx.size() + dw.size()});
      std::copy(dx.data(), dx.data() + dx.size(), both.data());
      std::copy(dw.data(), dw.data() + dw.size(), both.data() + dx.size());
      tx::save_npy(out, both);
    }
  } else {
    std::fprintf(stderr, "texpr_peer: unknown case %s\n", c.c_str());
    return 2;
  }
  std::printf("median_ms %.6f\n", ms);
  return 0;
}
