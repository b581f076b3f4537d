// Assigning a rank-2 expression to a rank-1 tensor.
// expected-error: rank differs
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 2> a({2, 2});
#ifdef TEXPR_KO
  tx::tensor<float, 1> r = a * 2.0f;
#else
  tx::tensor<float, 1> r = tx::sum(a * 2.0f, 0);
#endif
  return static_cast<int>(r.size());
}
