// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// embedding (and index_select, gather) read at int32 or int64 indices: float ids, e.g. a one-hot or a tensor of
// the wrong dtype passed by mistake, are rejected when the node is built, with one error.
// expected-error: texpr: indices must be int32 or int64
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 2> table({3, 2}, {1, 2, 3, 4, 5, 6});
#ifdef TEXPR_KO
  tx::tensor<float, 1> ids({2}, {0, 2});
#else
  tx::tensor<std::int32_t, 1> ids({2}, {0, 2});
#endif
  return tx::sum(tx::embedding(ids, table)).item() > 0 ? 0 : 1;
}
