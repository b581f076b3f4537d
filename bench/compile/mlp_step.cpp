// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time case: examples/mlp's training step alone, as one translation unit: the 784-256-256-10 ELU network's
// softmax cross-entropy, its six gradients from tx::value_and_grad over tx::params, evaluated together by
// tx::eval_all, and the SGD update (tx::optim::sgd). bench/compile_time.sh measures it beside the forward pass.
#include <texpr/texpr.hpp>

#include <cstdint>
#include <tuple>

namespace tx = texpr;

template <class Optimizer>
float train_step(const tx::tensor<float, 2>& x, const tx::tensor<std::int64_t, 1>& labels, tx::tensor<float, 2>& w1,
                 tx::tensor<float, 1>& b1, tx::tensor<float, 2>& w2, tx::tensor<float, 1>& b2, tx::tensor<float, 2>& w3,
                 tx::tensor<float, 1>& b3, Optimizer& opt) {
  const auto params = tx::params(w1, b1, w2, b2, w3, b3);
  const auto& [p1, q1, p2, q2, p3, q3] = params;
  const auto h1 = tx::elu(tx::matmul(x, p1) + q1);
  const auto h2 = tx::elu(tx::matmul(h1, p2) + q2);
  const auto loss = tx::cross_entropy(tx::matmul(h2, p3) + q3, labels);
  auto result = tx::eval_all(tx::value_and_grad(loss, params));
  opt.step(result);
  return std::get<0>(result).item();
}

int main() {
  tx::tensor<float, 2> x({128, 784}), w1({784, 256}), w2({256, 256}), w3({256, 10});
  tx::tensor<float, 1> b1({256}), b2({256}), b3({10});
  tx::tensor<std::int64_t, 1> labels({128});
  tx::optim::sgd opt(std::tie(w1, b1, w2, b2, w3, b3), {.lr = 0.1f});
  return train_step(x, labels, w1, b1, w2, b2, w3, b3, opt) > 0 ? 0 : 1;
}
