// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Softmax regression (multinomial logistic regression) trained by gradient descent: tx::cross_entropy on integer
// labels, its gradient by tx::grad, accuracy by tx::argmax. The example checks itself against plain loops in
// long double: the loss and the gradient at the trained weights, and the predicted classes. Exit code 0 only if
// they agree and training reached 90% accuracy on separable data.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include <texpr/texpr.hpp>

namespace tx = texpr;

int main() {
  constexpr tx::index_t n = 600, d = 5, classes = 4;
  // Four Gaussian clouds around random centres in 5 dimensions.
  std::mt19937 rng(3);
  std::normal_distribution<double> unit(0.0, 1.0);
  std::vector<double> centres(static_cast<std::size_t>(classes * d));
  for (auto& c : centres) c = 2.5 * unit(rng);
  tx::tensor<double, 2> x({n, d});
  tx::tensor<std::int64_t, 1> labels({n});
  for (tx::index_t i = 0; i < n; ++i) {
    labels(i) = i % classes;
    for (tx::index_t j = 0; j < d; ++j) x(i, j) = centres[static_cast<std::size_t>(labels(i) * d + j)] + unit(rng);
  }

  tx::tensor<double, 2> w = tx::zeros<double>({d, classes});
  tx::tensor<double, 1> b = tx::zeros<double>({classes});
  const double lr = 0.5;
  double loss0 = 0, loss = 0;
  for (int step = 0; step < 200; ++step) {
    auto pw = tx::param<struct weights>(w);
    auto pb = tx::param<struct bias>(b);
    auto [l, gw, gb] = tx::eval_all(tx::value_and_grad(tx::cross_entropy(tx::matmul(x, pw) + pb, labels), pw, pb));
    if (step == 0) loss0 = l.item();
    loss = l.item();
    w = w - lr * gw;
    b = b - lr * gb;
  }
  tx::tensor<std::int64_t, 1> predicted = tx::argmax(tx::matmul(x, w) + b, 1);
  const double accuracy = tx::mean(tx::cast<double>(predicted == labels)).item();
  std::printf("softmax regression: %lld samples, %lld features, %lld classes; loss %.4f -> %.4f; accuracy %.1f%%\n",
              static_cast<long long>(n), static_cast<long long>(d), static_cast<long long>(classes), loss0, loss, 100 * accuracy);

  // The same quantities by plain loops in long double at the trained weights.
  auto p = tx::param<struct weights>(w);
  auto [l, gw] = tx::eval_all(tx::value_and_grad(tx::cross_entropy(tx::matmul(x, p) + b, labels), p));
  long double want_loss = 0;
  std::vector<long double> want_gw(static_cast<std::size_t>(d * classes), 0.0L);
  int wrong_class = 0;
  for (tx::index_t i = 0; i < n; ++i) {
    long double z[classes], m = -INFINITY, s = 0;
    tx::index_t best = 0;
    for (tx::index_t c = 0; c < classes; ++c) {
      z[c] = b(c);
      for (tx::index_t j = 0; j < d; ++j) z[c] += static_cast<long double>(x(i, j)) * w(j, c);
      m = std::max(m, z[c]);
      if (z[c] > z[best]) best = c;
    }
    for (tx::index_t c = 0; c < classes; ++c) s += std::exp(z[c] - m);
    want_loss += m + std::log(s) - z[labels(i)];
    for (tx::index_t c = 0; c < classes; ++c) {
      const long double g = (std::exp(z[c] - m) / s - (c == labels(i) ? 1 : 0)) / n;  // softmax - one_hot, / n
      for (tx::index_t j = 0; j < d; ++j) want_gw[static_cast<std::size_t>(j * classes + c)] += g * x(i, j);
    }
    wrong_class += best != predicted(i);
  }
  want_loss /= n;
  long double max_grad_error = 0;
  for (tx::index_t k = 0; k < d * classes; ++k)
    max_grad_error = std::max(max_grad_error, std::fabs(gw.data()[k] - want_gw[static_cast<std::size_t>(k)]));
  const long double loss_error = std::fabs(l.item() - want_loss);
  std::printf("check against long double loops: |loss error| %.2Lg, max |gradient error| %.2Lg, %d predictions differ\n",
              loss_error, max_grad_error, wrong_class);
  // Tolerances: double arithmetic over 600 samples, relative to values of order 1: 1e-12.
  const bool ok = loss_error <= 1e-12L && max_grad_error <= 1e-12L && wrong_class == 0 && accuracy >= 0.9 && loss < 0.5 * loss0;
  std::puts(ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
