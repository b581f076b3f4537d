// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Allocating device memory in a translation unit not compiled by nvcc.
// expected-error: compile this file with nvcc
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using B = tx::cuda;
#else
using B = tx::host;
#endif
int main() {
  tx::tensor<float, 2, B> t({2, 2});
  return static_cast<int>(t.size());
}
