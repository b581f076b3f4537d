// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cuBLAS has bfloat16 GEMMs from sm_80 on: built for sm_75, a bfloat16 matmul on cuda is rejected at compile time,
// naming matmul, the dtype, cuda, the target it cannot run on and the one it needs. The same source compiles for sm_90.
// compile-flags-ko: -arch=sm_75
// compile-flags-ok: -arch=sm_90
// expected-error: static assertion failed with "texpr: this node's kernel needs a newer GPU architecture
// expected-errors: 1
// expected-error: Op=texpr::op::matmul, Dtype=texpr::dtype::bfloat16, Backend=texpr::cuda, Target=texpr::sm<75>, Needed=texpr::sm<80>
#include <texpr/texpr.hpp>

namespace tx = texpr;

int main() {
  tx::tensor<tx::bfloat16, 2, tx::cuda> a(tx::shape_t<2>{2, 3}), b(tx::shape_t<2>{3, 2});
  tx::tensor<tx::bfloat16, 2, tx::cuda> c = tx::matmul(a, b);
  return static_cast<int>(c.size());
}
