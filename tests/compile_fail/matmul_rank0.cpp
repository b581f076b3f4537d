// matmul takes matrices (rank 2) or batches of matrices (rank 3).
// expected-error: matmul takes operands of rank 2
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
#ifdef TEXPR_KO
  tx::tensor<float, 1> a({3});
#else
  tx::tensor<float, 2> a({3, 3});
#endif
  tx::tensor<float, 2> b({3, 3});
  return static_cast<int>(tx::matmul(a, b).size());
}
