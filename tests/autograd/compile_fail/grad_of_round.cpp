// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// round (like floor, ceil, sign, argmax and the comparisons) has no gradient: tx::grad rejects it at compile time,
// naming the op and dtype, with one error. The compiling twin differentiates through the smooth silu instead.
// expected-error: no_gradient_rule<texpr::op::round, texpr::dtype::float64>
// expected-errors: 1
#include <texpr/texpr.hpp>

namespace tx = texpr;

double rounded_gradient(const tx::tensor<double, 1>& v) {
  auto p = tx::param<struct P>(v);
#if defined(TEXPR_KO)
  auto loss = tx::sum(tx::round(p));
#else
  auto loss = tx::sum(tx::silu(p));
#endif
  auto [dp] = tx::grad(loss, p);
  return tx::sum(dp).item();
}
