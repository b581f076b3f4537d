// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A captured graph runs on cuda: a node without a cuda kernel (an int64 matmul) is named with its op and dtype.
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::matmul, texpr::dtype::int64, texpr::cuda>
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using T = std::int64_t;
#else
using T = float;
#endif
tx::tensor<T, 2, tx::cuda>& weights();
static_assert(tx::capturable<decltype(tx::matmul(std::declval<tx::tensor<float, 2, tx::cuda>&>(), std::declval<tx::tensor<float, 2, tx::cuda>&>()))>);
void f() { (void)tx::require_capturable(tx::matmul(weights(), weights()) + T(1)); }
