// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Printing reads host memory: a cuda tensor (or an expression over one) is not copied implicitly to print it.
// expected-error: printing reads host memory; this tensor or expression is on cuda: print tx::to_host\(t\)
// expected-errors: 1
#include <iostream>
#include <texpr/texpr.hpp>
namespace tx = texpr;
tx::tensor<float, 2, tx::cuda>& device_tensor();
tx::tensor<float, 2, tx::host>& host_tensor();
void f() {
#ifdef TEXPR_KO
  std::cout << device_tensor() * 2.0f << '\n';
#else
  std::cout << host_tensor() * 2.0f << '\n';
#endif
}
