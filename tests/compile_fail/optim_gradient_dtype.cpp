// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An optimiser's gradients must match their parameters' dtype, rank and backend, in the parameters' order.
// expected-error: gradient's dtype, rank or backend differs from its parameter's
// expected-errors: 1
#include <texpr/texpr.hpp>
#include <tuple>
namespace tx = texpr;
int main() {
  tx::tensor<float, 2> w({2, 3});
  tx::tensor<float, 1> b({3});
  tx::tensor<float, 2> gw({2, 3});
  tx::tensor<float, 1> gb({3});
  tx::optim::sgd opt(std::tie(w, b), {.lr = 0.1});
#ifdef TEXPR_KO
  opt.step(std::tie(gb, gw));  // swapped: a rank-1 gradient for the rank-2 weight
#else
  opt.step(std::tie(gw, gb));
#endif
  return static_cast<int>(w(0, 0));
}
