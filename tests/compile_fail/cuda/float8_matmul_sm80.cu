// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FP8 tensor cores arrived with sm_89: built for sm_80, a float8_e4m3 scaled_matmul on cuda is rejected at compile
// time, naming the op, the dtype, cuda, the target it cannot run on and the one it needs. The same source compiles for
// sm_90.
// compile-flags-ko: -arch=sm_80
// compile-flags-ok: -arch=sm_90
// expected-error: static assertion failed with "texpr: this node's kernel needs a newer GPU architecture
// expected-errors: 1
// expected-error: Op=texpr::op::scaled_matmul, Dtype=texpr::dtype::float8_e4m3, Backend=texpr::cuda, Target=texpr::sm<80>, Needed=texpr::sm<89>
#include <texpr/texpr.hpp>

namespace tx = texpr;

int main() {
  tx::tensor<tx::float8_e4m3, 2, tx::cuda> a(tx::shape_t<2>{16, 32}), b(tx::shape_t<2>{32, 16});
  tx::tensor<float, 2, tx::cuda> c = tx::scaled_matmul(a, b, 0.5f, 2.0f);
  return static_cast<int>(c.size());
}
