// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// var and stddev are defined on floating dtypes (their results are fractions): an integer operand is a compile
// error naming var and the dtype, with the cast that fixes it.
// expected-error: no_kernel<texpr::op::var, texpr::dtype::int64, texpr::host>
// expected-error: tx::cast<float>
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<std::int64_t, 1> a({3}, {1, 2, 4});
#ifdef TEXPR_KO
  return tx::var(a).item() > 0 ? 0 : 1;
#else
  return tx::var(tx::cast<double>(a)).item() > 0 ? 0 : 1;
#endif
}
