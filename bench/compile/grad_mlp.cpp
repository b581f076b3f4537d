// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time case for tx::grad: the MLP (784-256-256-10 ELU, squared error) as one translation unit, either the
// forward pass only (TEXPR_BENCH_GRAD=0: the loss evaluated) or a whole training step (TEXPR_BENCH_GRAD=1: the loss
// and six gradients from tx::value_and_grad, evaluated together). bench/grad_compile_time.sh compares the two.
#include <texpr/texpr.hpp>

#include <tuple>

namespace tx = texpr;

#ifndef TEXPR_BENCH_GRAD
#define TEXPR_BENCH_GRAD 1
#endif

float step(const tx::tensor<float, 2>& x, const tx::tensor<float, 2>& y, tx::tensor<float, 2>& w1, tx::tensor<float, 1>& b1,
           tx::tensor<float, 2>& w2, tx::tensor<float, 1>& b2, tx::tensor<float, 2>& w3, tx::tensor<float, 1>& b3) {
  auto W1 = tx::param<struct W1>(w1);
  auto B1 = tx::param<struct B1>(b1);
  auto W2 = tx::param<struct W2>(w2);
  auto B2 = tx::param<struct B2>(b2);
  auto W3 = tx::param<struct W3>(w3);
  auto B3 = tx::param<struct B3>(b3);
  auto h1 = tx::elu(tx::matmul(x, W1) + B1);
  auto h2 = tx::elu(tx::matmul(h1, W2) + B2);
  auto loss = tx::mean(tx::pow(tx::matmul(h2, W3) + B3 - y, 2));
#if TEXPR_BENCH_GRAD
  auto [l, g1, c1, g2, c2, g3, c3] = tx::eval_all(tx::value_and_grad(loss, W1, B1, W2, B2, W3, B3));
  w1 -= 0.1f * g1;
  b1 -= 0.1f * c1;
  w2 -= 0.1f * g2;
  b2 -= 0.1f * c2;
  w3 -= 0.1f * g3;
  b3 -= 0.1f * c3;
  return l();
#else
  return loss.item();
#endif
}

int main() {
  tx::tensor<float, 2> x({64, 784}), y({64, 10}), w1({784, 256}), w2({256, 256}), w3({256, 10});
  tx::tensor<float, 1> b1({256}), b2({256}), b3({10});
  return step(x, y, w1, b1, w2, b2, w3, b3) == 0.0f ? 0 : 1;
}
