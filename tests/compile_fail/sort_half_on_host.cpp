// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sorting float16 on the host: 16-bit floats are storage types there (cuda sorts them); names op, dtype, backend.
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::sort, texpr::dtype::float16, texpr::host>
// expected-errors: 1
#include <texpr/sort.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<tx::half, 1> a({3});
#ifdef TEXPR_KO
  tx::tensor<tx::half, 1> r = tx::sort(a);
#else
  tx::tensor<tx::half, 1> r = tx::cast<tx::half>(tx::sort(tx::cast<float>(a)));
#endif
  return static_cast<int>(r.size());
}
