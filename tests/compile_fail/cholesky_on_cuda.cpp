// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// require_on<cuda> of a cholesky of float16: no cuda row (cuSOLVER has no 16-bit factorisation); names op, dtype and
// backend. The twin places a float cholesky on cuda (the cusolver_potrf row).
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::cholesky, texpr::dtype::float16, texpr::cuda>
// expected-errors: 1
#include <texpr/linalg.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using T = tx::half;
using Backend = tx::cuda;
#else
using T = float;
using Backend = tx::cuda;
#endif
tx::tensor<T, 2, Backend>& matrix();
void f() {
  auto l = tx::require_on<Backend>(tx::linalg::cholesky(matrix()));
  (void)l;
}
