// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// require_on<cuda> of an fft of complex64: no cuda row until cuFFT's are registered (tx::fft has host rows only so
// far); names op, dtype and backend. The twin runs the same fft on the host.
// expected-error: texpr: no kernel for this node on this backend
// expected-error: no_kernel<texpr::op::fft, texpr::dtype::complex64, texpr::cuda>
// expected-errors: 1
#include <texpr/fft.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using Backend = tx::cuda;
#else
using Backend = tx::host;
#endif
tx::tensor<std::complex<float>, 2, Backend>& signal();
void f() {
  auto y = tx::require_on<Backend>(tx::fft::fft(signal()));
  (void)y;
}
