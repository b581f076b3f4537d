// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// item() reads device data on the host and waits for it: its value cannot be part of a captured step. The message
// says to capture the expression and read its result after replay.
// expected-error: not an expression but a value already on the host
// expected-error: read its result tensor after replay
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
tx::tensor<float, 1, tx::cuda>& device_loss_terms();
tx::tensor<float, 1, tx::host>& host_loss_terms();
void f() {
#ifdef TEXPR_KO
  (void)tx::require_capturable(tx::mean(host_loss_terms()).item());
#else
  (void)tx::require_capturable(tx::mean(device_loss_terms()));
#endif
}
