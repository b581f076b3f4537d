// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A shared value's type leaves its computation out, yet tx::grad still names the op without a gradient rule inside
// it, with one error, where the walk reaches the value. Making and evaluating such a value without differentiating
// it compiles (both builds). The compiling twin differentiates through a shared exp, which has a rule.
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
  const double value = tx::sum(tx::share(tx::map<softplus>(p)) * 2.0).item();
#if defined(TEXPR_KO)
  auto shared = tx::share(tx::map<softplus>(p));
#else
  auto shared = tx::share(tx::exp(p));
#endif
  auto [dp] = tx::grad(tx::sum(shared * shared), p);
  return value + tx::sum(dp).item();
}
