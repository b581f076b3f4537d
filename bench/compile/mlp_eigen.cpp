// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time case (6), Eigen Tensor side: the MLP forward pass of case 5 as one translation unit.
#include <unsupported/Eigen/CXX11/Tensor>

using mat = Eigen::Tensor<float, 2, Eigen::RowMajor>;
using vec = Eigen::Tensor<float, 1, Eigen::RowMajor>;

static mat dense_elu(const mat& x, const mat& w, const vec& b) {
  const Eigen::array<Eigen::IndexPair<int>, 1> mm{Eigen::IndexPair<int>(1, 0)};
  const Eigen::array<Eigen::Index, 2> row{1, b.dimension(0)}, rows{x.dimension(0), 1};
  mat z = x.contract(w, mm) + b.reshape(row).broadcast(rows);
  return z.cwiseMax(0.0f) + (z.cwiseMin(0.0f).exp() - 1.0f);
}

float forward(const mat& x, const mat& target, const mat& w1, const vec& b1, const mat& w2, const vec& b2,
              const mat& w3, const vec& b3) {
  const Eigen::array<Eigen::IndexPair<int>, 1> mm{Eigen::IndexPair<int>(1, 0)};
  mat h1 = dense_elu(x, w1, b1);
  mat h2 = dense_elu(h1, w2, b2);
  const Eigen::array<Eigen::Index, 2> row{1, b3.dimension(0)}, rows{h2.dimension(0), 1};
  mat y = h2.contract(w3, mm) + b3.reshape(row).broadcast(rows);
  Eigen::Tensor<float, 0, Eigen::RowMajor> loss = (y - target).square().mean();
  return loss();
}

int main() {
  mat x(64, 784), target(64, 10), w1(784, 256), w2(256, 256), w3(256, 10);
  vec b1(256), b2(256), b3(10);
  x.setZero(); target.setZero(); w1.setZero(); w2.setZero(); w3.setZero();
  b1.setZero(); b2.setZero(); b3.setZero();
  return forward(x, target, w1, b1, w2, b2, w3, b3) == 0.0f ? 0 : 1;
}
