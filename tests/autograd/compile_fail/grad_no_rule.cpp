// tx::grad through an op without a gradient rule (prod) fails to compile, naming the op and dtype.
// expected-error: no_gradient_rule<texpr::op::prod, texpr::dtype::float64>
// The compiling twin uses sum, which has a rule.
#include <texpr/texpr.hpp>

namespace tx = texpr;

double product_gradient(const tx::tensor<double, 1>& v) {
  auto p = tx::param<struct P>(v);
#if defined(TEXPR_KO)
  auto loss = tx::prod(tx::exp(p));
#else
  auto loss = tx::sum(tx::exp(p));
#endif
  auto [dp] = tx::grad(loss, p);
  return tx::sum(dp).item();
}
