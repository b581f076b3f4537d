// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A function returning an expression over its own local tensor: the expression would read a destroyed tensor.
// clang sees it through TEXPR_LIFETIMEBOUND ([[clang::lifetimebound]]); g++ 12 has no such check.
// expected-error: address of stack memory associated with local variable 't' returned
// expected-error: Wreturn-stack-address
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
auto doubled() {
  tx::tensor<float, 1> t({3}, {1.0f, 2.0f, 3.0f});
#ifdef TEXPR_KO
  return t * 2.0f;
#else
  return std::move(t) * 2.0f;  // the expression owns the tensor
#endif
}
int main() {
  tx::tensor<float, 1> r = doubled();
  return static_cast<int>(r(0));
}
