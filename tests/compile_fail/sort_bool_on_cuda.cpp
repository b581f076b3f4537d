// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// require_on<cuda> of a sort of bools: no cuda row (the ordering ops take numbers); names op, dtype and backend.
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::sort, texpr::dtype::boolean, texpr::cuda>
// expected-errors: 1
#include <texpr/sort.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using T = bool;
#else
using T = std::int32_t;
#endif
tx::tensor<T, 2, tx::cuda>& device_tensor();
void f() {
  auto g = tx::require_on<tx::cuda>(tx::sort(device_tensor(), 1));
  (void)g;
}
