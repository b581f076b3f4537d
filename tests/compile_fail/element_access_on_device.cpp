// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Element access reads host memory; a cuda tensor must be copied with tx::to_host first.
// expected-error: element access reads host memory
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using B = tx::cuda;
#else
using B = tx::host;
#endif
tx::tensor<float, 2, B>& tensor();
float f() { return tensor()(0, 1); }
