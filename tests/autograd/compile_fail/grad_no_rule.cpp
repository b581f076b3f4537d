// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::grad through an op without a gradient rule (a user op with a kernel but no tx::gradient_rule) fails to compile,
// naming the op and dtype, with one error. The compiling twin differentiates through exp, which has a rule.
// expected-error: no_gradient_rule<softplus, texpr::dtype::float64>
// expected-errors: 1
#include <texpr/texpr.hpp>

#include <cmath>

namespace tx = texpr;

struct softplus {
  static constexpr std::string_view name = "softplus";
  template <class C> static C apply(C x) { return std::log1p(std::exp(x)); }
};
template <> struct texpr::kernel<softplus, double, texpr::host> : texpr::host_kernels::fused_elementwise {};

double softplus_gradient(const tx::tensor<double, 1>& v) {
  auto p = tx::param<struct P>(v);
#if defined(TEXPR_KO)
  auto loss = tx::sum(tx::map<softplus>(p));
#else
  auto loss = tx::sum(tx::exp(p));
#endif
  auto [dp] = tx::grad(loss, p);
  return tx::sum(dp).item();
}
