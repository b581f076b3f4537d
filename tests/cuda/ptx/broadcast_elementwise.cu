// Instantiates the cuda broadcast elementwise kernels that the PTX check reads (tests/cmake/check_ptx_broadcast.cmake):
// a bias add with ELU (a rank-1 operand broadcast over rows) and a rank-3 broadcast.
#include <texpr/texpr.hpp>

namespace tx = texpr;

void bias_elu(const tx::tensor<float, 2, tx::cuda>& x, const tx::tensor<float, 1, tx::cuda>& b,
              tx::tensor<float, 2, tx::cuda>& out) {
  out = tx::elu(x + b);
}
void broadcast3(const tx::tensor<float, 3, tx::cuda>& x, const tx::tensor<float, 2, tx::cuda>& y,
                tx::tensor<float, 3, tx::cuda>& out) {
  out = x * y;
}
