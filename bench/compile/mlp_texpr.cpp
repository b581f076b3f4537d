// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time case (6), texpr side: the MLP forward pass of case 5 as one translation unit.
#include <texpr/texpr.hpp>

namespace tx = texpr;

float forward(const tx::tensor<float, 2>& x, const tx::tensor<float, 2>& target, const tx::tensor<float, 2>& w1,
              const tx::tensor<float, 1>& b1, const tx::tensor<float, 2>& w2, const tx::tensor<float, 1>& b2,
              const tx::tensor<float, 2>& w3, const tx::tensor<float, 1>& b3) {
  tx::tensor<float, 2> h1 = tx::elu(tx::matmul(x, w1) + b1);
  tx::tensor<float, 2> h2 = tx::elu(tx::matmul(h1, w2) + b2);
  tx::tensor<float, 2> y = tx::matmul(h2, w3) + b3;
  return tx::mean((y - target) * (y - target)).item();
}

int main() {
  tx::tensor<float, 2> x({64, 784}), target({64, 10}), w1({784, 256}), w2({256, 256}), w3({256, 10});
  tx::tensor<float, 1> b1({256}), b2({256}), b3({10});
  return forward(x, target, w1, b1, w2, b2, w3, b3) == 0.0f ? 0 : 1;
}
