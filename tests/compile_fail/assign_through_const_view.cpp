// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A view of const elements is read-only.
// expected-error: cannot assign through a view of const elements
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
int main() {
  float mem[4] = {1, 2, 3, 4};
#ifdef TEXPR_KO
  tx::view<const float, 1> v(mem, {4});
#else
  tx::view<float, 1> v(mem, {4});
#endif
  v = v * 2.0f;
  return static_cast<int>(mem[0]);
}
