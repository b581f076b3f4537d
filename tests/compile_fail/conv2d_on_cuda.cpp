// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// require_on<cuda> of a float conv2d: no cuda row (texpr/conv.hpp's family has host rows only so far; cuDNN's are
// to come); names op, dtype and backend. The twin runs the same conv2d on the host.
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::conv2d, texpr::dtype::float32, texpr::cuda>
// expected-errors: 1
#include <texpr/conv.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using Backend = tx::cuda;
#else
using Backend = tx::host;
#endif
tx::tensor<float, 4, Backend>& images();
tx::tensor<float, 4, Backend>& filters();
void f() {
  auto y = tx::require_on<Backend>(tx::conv2d(images(), filters(), {.padding = 1}));
  (void)y;
}
