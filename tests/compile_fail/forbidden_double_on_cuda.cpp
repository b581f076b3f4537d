// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A user policy forbids double on cuda; a double graph on cuda then fails, naming the node.
// expected-error: forbidden by a tx::forbidden specialisation
// expected-errors: 1
// expected-error: kernel_forbidden<texpr::op::multiply, texpr::dtype::float64, texpr::cuda>
#include <texpr/texpr.hpp>
namespace tx = texpr;
template <class Op> struct texpr::forbidden<Op, double, texpr::cuda> : std::true_type {};
#ifdef TEXPR_KO
using T = double;
#else
using T = float;
#endif
tx::tensor<T, 1, tx::cuda>& device_tensor();
void f() { (void)tx::require_on<tx::cuda>(device_tensor() * T(2)); }
