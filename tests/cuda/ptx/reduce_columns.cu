// Instantiates the cuda axis reductions that the PTX check reads (tests/cmake/check_ptx.cmake): a sum over a
// non-last axis of a rank-3 float tensor, read from memory and through a fused elementwise operand.
#include <texpr/texpr.hpp>

namespace tx = texpr;

void sum_middle(const tx::tensor<float, 3, tx::cuda>& x, tx::tensor<float, 2, tx::cuda>& out) { out = tx::sum(x, 1); }
void sum_first_fused(const tx::tensor<float, 3, tx::cuda>& x, tx::tensor<float, 2, tx::cuda>& out) {
  out = tx::sum(tx::exp(x) * 2.0f, 0);
}
