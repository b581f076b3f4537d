// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cross_entropy takes integer class labels (as PyTorch's F.cross_entropy with class indices): float labels,
// e.g. one-hot targets passed by mistake, are rejected when the loss is built, with one error.
// expected-error: texpr: cross_entropy takes int32 or int64 class labels
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 2> z({2, 3}, {1, 2, 3, 4, 5, 6});
#ifdef TEXPR_KO
  tx::tensor<float, 1> labels({2}, {0, 2});
#else
  tx::tensor<std::int64_t, 1> labels({2}, {0, 2});
#endif
  return tx::cross_entropy(z, labels).item() > 0 ? 0 : 1;
}
