// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time case for tx::grad: softmax regression (a linear layer, then the cross-entropy of a softmax written
// with the numerically stable log-sum-exp) as one translation unit, forward only (TEXPR_BENCH_GRAD=0) or a training
// step with tx::value_and_grad (TEXPR_BENCH_GRAD=1). bench/grad_compile_time.sh compares the two.
#include <texpr/texpr.hpp>

#include <tuple>

namespace tx = texpr;

#ifndef TEXPR_BENCH_GRAD
#define TEXPR_BENCH_GRAD 1
#endif

double step(const tx::tensor<double, 2>& x, const tx::tensor<double, 2>& onehot, tx::tensor<double, 2>& w,
            tx::tensor<double, 1>& b) {
  auto W = tx::param<struct W>(w);
  auto B = tx::param<struct B>(b);
  auto z = tx::matmul(x, W) + B;                           // (n, classes)
  auto m = tx::max(z, 1, tx::keepdims);                    // (n, 1): the shift that keeps exp finite
  auto lse = tx::log(tx::sum(tx::exp(z - m), 1, tx::keepdims)) + m;
  auto loss = tx::mean(tx::sum(onehot * (lse - z), 1));   // mean cross-entropy
#if TEXPR_BENCH_GRAD
  auto [l, gw, gb] = tx::eval_all(tx::value_and_grad(loss, W, B));
  w -= 0.5 * gw;
  b -= 0.5 * gb;
  return l();
#else
  return loss.item();
#endif
}

int main() {
  tx::tensor<double, 2> x({128, 20}), onehot({128, 5}), w({20, 5});
  tx::tensor<double, 1> b({5});
  return step(x, onehot, w, b) == 0.0 ? 0 : 1;
}
