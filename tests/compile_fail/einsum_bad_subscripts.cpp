// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// einsum subscripts naming an output label no input has: a compile error with its own message, and nothing more.
// expected-error: texpr: einsum: an output label appears in no input term
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 2> a({2, 3}), b({3, 4});
#ifdef TEXPR_KO
  tx::tensor<float, 2> c = tx::einsum<"ij,jk->il">(a, b);
#else
  tx::tensor<float, 2> c = tx::einsum<"ij,jk->ik">(a, b);
#endif
  return static_cast<int>(c.size());
}
