// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Trains a 784-256-256-10 ELU network with plain SGD (tx::optim::sgd) and softmax cross-entropy (tx::cross_entropy on integer
// labels) on synthetic MNIST-shaped data, forward and backward as texpr graphs; weights start from
// tx::random::normal and accuracy is tx::argmax against the labels. Built by a host compiler it runs on the CPU; built by nvcc the same source runs on the
// GPU, and the static_asserts below prove that the forward and every gradient graph have cuda kernels.
// Exit code 0 only if the loss falls by half within the step budget and test accuracy beats 80%.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <texpr/texpr.hpp>

namespace tx = texpr;

#if defined(__CUDACC__)
using backend = tx::cuda;
#else
using backend = tx::host;
#endif

namespace {

constexpr tx::index_t features = 784, hidden = 256, classes = 10;

template <std::size_t R> using tensor = tx::tensor<float, R, backend>;

/// The network's parameters, on the backend.
template <class B> struct model {
  tx::tensor<float, 2, B> w1, w2, w3;
  tx::tensor<float, 1, B> b1, b2, b3;
};

/// Logits of a batch: elu(elu(x W1 + b1) W2 + b2) W3 + b3. W and b are tensors or tx::param leaves.
template <class X, class W1, class B1, class W2, class B2, class W3, class B3>
auto logits(const X& x, const W1& w1, const B1& b1, const W2& w2, const B2& b2, const W3& w3, const B3& b3) {
  auto h1 = tx::elu(tx::matmul(x, w1) + b1);
  auto h2 = tx::elu(tx::matmul(h1, w2) + b2);
  return tx::matmul(h2, w3) + b3;
}

/// One training step as graphs: (loss, d loss / d w1, d b1, d w2, d b2, d w3, d b3). The loss is the softmax
/// cross-entropy against integer class labels, averaged over the batch.
template <class X, class Y, class B> auto train_step(const X& x, const Y& labels, const model<B>& m) {
  const auto params = tx::params(m.w1, m.b1, m.w2, m.b2, m.w3, m.b3);  // no tag type per parameter
  const auto& [w1, b1, w2, b2, w3, b3] = params;
  auto loss = tx::cross_entropy(logits(x, w1, b1, w2, b2, w3, b3), labels);
  return tx::value_and_grad(loss, params);
}

template <class B> using batch_t = tx::view<const float, 2, B>;
template <class B> using labels_t = tx::view<const std::int64_t, 1, B>;
template <class B>
using step_t = decltype(train_step(std::declval<batch_t<B>>(), std::declval<labels_t<B>>(), std::declval<const model<B>&>()));

// The whole step, forward and backward, has a kernel for every node on this build's backend...
static_assert(tx::all_run_on<step_t<backend>, backend>);
// ... and, checked by any compiler, on cuda: the loss graph and every gradient graph.
static_assert(tx::runs_on<std::tuple_element_t<0, step_t<tx::cuda>>, tx::cuda>, "forward graph must run on cuda");
static_assert(tx::all_run_on<step_t<tx::cuda>, tx::cuda>, "every backward graph must run on cuda");

template <class T, std::size_t R> tx::tensor<T, R, backend> upload(tx::tensor<T, R, tx::host>&& t) {
#if defined(__CUDACC__)
  return tx::to_device(t);
#else
  return std::move(t);
#endif
}

/// Synthetic MNIST-shaped data: 10 classes, each a cloud of unit-variance Gaussian noise around its own
/// random prototype in 784 dimensions. The nearest-prototype rule is linear, and checked to be perfect.
struct dataset {
  tx::tensor<float, 2> x;               // (n, 784) inputs
  tx::tensor<std::int64_t, 1> labels;  // (n) classes
};

dataset make_data(tx::index_t n, const std::vector<float>& prototypes, std::mt19937& rng) {
  dataset d{tx::tensor<float, 2>({n, features}), tx::tensor<std::int64_t, 1>({n})};
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, classes - 1);
  for (tx::index_t i = 0; i < n; ++i) {
    const int c = pick(rng);
    d.labels(i) = c;
    for (tx::index_t j = 0; j < features; ++j) d.x(i, j) = 0.25f * prototypes[static_cast<std::size_t>(c * features + j)] + noise(rng);
  }
  return d;
}

/// Accuracy of the linear nearest-prototype classifier: argmax_c x.p_c - |p_c|^2 / 2 (scaled prototypes).
double linear_rule_accuracy(const dataset& d, const std::vector<float>& prototypes) {
  tx::index_t right = 0;
  const tx::index_t n = d.x.extent(0);
  for (tx::index_t i = 0; i < n; ++i) {
    int best = 0;
    double best_score = -1e300;
    for (int c = 0; c < classes; ++c) {
      double score = 0;
      for (tx::index_t j = 0; j < features; ++j) {
        const double p = 0.25 * prototypes[static_cast<std::size_t>(c * features + j)];
        score += d.x(i, j) * p - 0.5 * p * p;
      }
      if (score > best_score) best_score = score, best = c;
    }
    right += best == d.labels(i);
  }
  return static_cast<double>(right) / static_cast<double>(n);
}

/// A (in, out) weight matrix drawn from N(0, 1/in) by texpr's counter-based generator, on the backend: the same
/// seed gives the same weights on host and cuda.
tx::tensor<float, 2, backend> init_weight(tx::index_t in, tx::index_t out, std::uint64_t seed) {
  return tx::random::normal<float, backend>({in, out}, seed, 0.0f, 1.0f / std::sqrt(static_cast<float>(in)));
}

/// Fraction of samples whose largest logit is their label: argmax, compare and mean all run on the backend.
template <class B> double accuracy(const tx::tensor<float, 2, B>& x, const tx::tensor<std::int64_t, 1, B>& labels, const model<B>& m) {
  return tx::mean(tx::cast<float>(tx::argmax(logits(x, m.w1, m.b1, m.w2, m.b2, m.w3, m.b3), 1) == labels)).item();
}

long arg(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(__CUDACC__)
  // --placement 1 (CTest, no GPU needed): the static_asserts above were compiled by nvcc; nothing touches the device.
  if (arg(argc, argv, "--placement", 0) != 0) {
    std::puts("mlp: the forward and every gradient graph are placed on cuda (checked by nvcc at compile time)");
    return 0;
  }
#endif
  const tx::index_t train_n = arg(argc, argv, "--samples", 2048);
  const tx::index_t test_n = 1024;
  const tx::index_t batch = arg(argc, argv, "--batch", 128);
  const long steps = arg(argc, argv, "--steps", 150);
  const long every = arg(argc, argv, "--print-every", 10);
  const float lr = 0.1f;

  std::mt19937 rng(7);
  std::vector<float> prototypes(static_cast<std::size_t>(classes * features));
  std::normal_distribution<float> unit(0.0f, 1.0f);
  for (auto& p : prototypes) p = unit(rng);
  const dataset train = make_data(train_n, prototypes, rng);
  const dataset test = make_data(test_n, prototypes, rng);
  std::printf("texpr mlp on %s: %lld training and %lld test samples, %lld -> %lld -> %lld -> %lld ELU network, "
              "batch %lld, SGD lr %.2f, softmax cross-entropy\n",
              std::string(backend::name).c_str(), static_cast<long long>(train_n), static_cast<long long>(test_n),
              static_cast<long long>(features), static_cast<long long>(hidden), static_cast<long long>(hidden),
              static_cast<long long>(classes), static_cast<long long>(batch), static_cast<double>(lr));
  std::printf("data check: the linear nearest-prototype rule classifies %.1f%% of the test set\n",
              100 * linear_rule_accuracy(test, prototypes));

  model<backend> m{init_weight(features, hidden, 1), init_weight(hidden, hidden, 2), init_weight(hidden, classes, 3),
                   tx::zeros<float, backend>({hidden}), tx::zeros<float, backend>({hidden}), tx::zeros<float, backend>({classes})};
  const auto x_train = upload(train.x.clone());
  const auto y_train = upload(train.labels.clone());
  const auto x_test = upload(test.x.clone());
  const auto y_test = upload(test.labels.clone());

  tx::optim::sgd opt(std::tie(m.w1, m.b1, m.w2, m.b2, m.w3, m.b3), {.lr = lr});
  const double chance_accuracy = accuracy(x_test, y_test, m);
  double first_loss = 0, last_loss = 0;
  long halved_at = -1;
  const auto start = std::chrono::steady_clock::now();
  // --capture (cuda): the step is captured once into a CUDA graph and replayed, the batch copied into fixed staging
  // tensors that the graphs read (docs/semantics.md, "Capturing a step into a CUDA graph").
  const bool capture = arg(argc, argv, "--capture", 0) != 0;
#if defined(__CUDACC__)
  const bool captured_run = capture;
  if (capture) {
    tensor<2> xs(tx::shape_t<2>{batch, features});
    tx::tensor<std::int64_t, 1, backend> ys(tx::shape_t<1>{batch});
    const auto graphs = train_step(batch_t<backend>(xs.view()), labels_t<backend>(ys.view()), m);  // built once
    const auto update = [&](const auto& r) { opt.step(r); };
    std::optional<decltype(tx::capture_step(graphs, update))> captured;
    for (long step = 0; step < steps; ++step) {
      const tx::index_t first = (step * batch) % (train_n - batch + 1);
      xs = batch_t<backend>(x_train.data() + first * features, {batch, features});  // into the same memory
      ys = labels_t<backend>(y_train.data() + first, {batch});
      if (step == 0) {  // the first step eagerly (it fills texpr's device cache), then the capture
        const auto result = tx::eval_all(graphs);
        opt.step(result);
        last_loss = std::get<0>(result).item();
        captured.emplace(tx::capture_step(graphs, update));
        std::printf("captured the step: %zu graph nodes, replayed with one launch per step\n", captured->graph().nodes());
      } else {
        captured->replay();
        last_loss = std::get<0>(captured->results()).item();
      }
      if (step == 0) first_loss = last_loss;
      if (halved_at < 0 && last_loss <= 0.5 * first_loss) halved_at = step;
      if (step % every == 0 || step + 1 == steps) std::printf("step %4ld  loss %.5f\n", step, last_loss);
    }
  }
#else
  const bool captured_run = false;
  if (capture) std::printf("--capture needs the cuda build (mlp_cuda); running eagerly\n");
#endif
  for (long step = 0; step < steps && !captured_run; ++step) {
    const tx::index_t first = (step * batch) % (train_n - batch + 1);
    const batch_t<backend> xb(x_train.data() + first * features, {batch, features});
    const labels_t<backend> yb(y_train.data() + first, {batch});
    const auto graphs = train_step(xb, yb, m);
    if (step == 0) {
      std::printf("\nforward graph (the loss):\n%s", tx::placement(std::get<0>(graphs)).c_str());
      std::printf("\nbackward graph d loss / d w1 (the deepest gradient; the other five use the same nodes):\n%s\n",
                  tx::placement(std::get<1>(graphs)).c_str());
    }
    // Evaluate the loss and all six gradients together: shared memos (forward matmuls, incoming gradients)
    // are computed once.
    const auto result = tx::eval_all(graphs);  // (loss, d w1, d b1, d w2, d b2, d w3, d b3)
    opt.step(result);                          // w -= lr * dw in place (cuda: one launch for all six)
    last_loss = std::get<0>(result).item();
    if (step == 0) first_loss = last_loss;
    if (halved_at < 0 && last_loss <= 0.5 * first_loss) halved_at = step;
    if (step % every == 0 || step + 1 == steps) std::printf("step %4ld  loss %.5f\n", step, last_loss);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double test_accuracy = accuracy(x_test, y_test, m);
  std::printf("\n%ld steps in %.2f s (%.1f ms per step); loss %.5f -> %.5f (halved at step %ld); test accuracy "
              "%.1f%% (before training %.1f%%, chance 10%%)\n",
              steps, seconds, 1000 * seconds / static_cast<double>(steps), first_loss, last_loss, halved_at,
              100 * test_accuracy, 100 * chance_accuracy);
  const bool ok = halved_at >= 0 && test_accuracy > 0.8;
  std::printf("%s\n", ok ? "OK: the loss halved and accuracy beats chance by a wide margin"
                         : "FAILED: the loss did not halve or accuracy is not above 80%");
  return ok ? 0 : 1;
}
