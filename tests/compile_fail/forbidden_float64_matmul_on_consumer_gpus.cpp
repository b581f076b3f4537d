// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A user policy for slow rows: float64 GEMMs run at 1/64 of float speed on consumer GPUs (sm_86, sm_89, sm_120), so
// this program forbids them there; built for sm_86 too, a float64 matmul on cuda is rejected, naming the target.
// expected-error: forbidden on one of the architectures this code is built for
// expected-errors: 1
// expected-error: kernel_forbidden_on_arch<texpr::op::matmul, texpr::dtype::float64, texpr::sm<86> ?>
#ifdef TEXPR_KO
#define TEXPR_CUDA_ARCHS 80, 86
#else
#define TEXPR_CUDA_ARCHS 80, 90
#endif
#include <texpr/texpr.hpp>
namespace tx = texpr;
template <int Arch>
  requires(Arch == 86 || Arch == 89 || Arch == 120)
struct texpr::forbidden_on_arch<texpr::op::matmul, double, Arch> : std::true_type {};
tx::tensor<double, 2, tx::cuda>& device_tensor();
void f() { (void)tx::require_on<tx::cuda>(tx::matmul(device_tensor(), device_tensor()) * 2.0); }
