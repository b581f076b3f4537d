// Tensors are never copied implicitly: copy construction is deleted (use clone()).
// expected-error: deleted
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  tx::tensor<float, 1> a({3});
#ifdef TEXPR_KO
  tx::tensor<float, 1> b = a;
#else
  tx::tensor<float, 1> b = a.clone();
#endif
  return static_cast<int>(b.size());
}
