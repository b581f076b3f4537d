// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A graph of host tensors required on cuda: its leaves live in host memory.
// expected-error: lives in another backend's memory
// expected-errors: 1
// expected-error: tx::to_device
// expected-error: operand_on_other_backend<texpr::host, texpr::cuda>
#include <texpr/texpr.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using B = tx::host;
#else
using B = tx::cuda;
#endif
tx::tensor<float, 1, B>& tensor();
void f() { (void)tx::require_on<tx::cuda>(tx::exp(tensor()) + 1.0f); }
