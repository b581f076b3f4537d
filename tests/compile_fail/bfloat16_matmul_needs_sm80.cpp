// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A host compiler checks cuda graphs for the architectures in TEXPR_CUDA_ARCHS (nvcc's own list under nvcc): with
// sm_75 among them, a bfloat16 matmul on cuda is rejected, naming the op, dtype, backend and both architectures.
// expected-error: needs a newer GPU architecture than one this code is built for
// expected-errors: 1
// expected-error: kernel_needs_newer_arch<texpr::op::matmul, texpr::dtype::bfloat16, texpr::cuda, texpr::sm<75>, texpr::sm<80> ?>
#ifdef TEXPR_KO
#define TEXPR_CUDA_ARCHS 90, 75
#else
#define TEXPR_CUDA_ARCHS 80, 90
#endif
#include <texpr/texpr.hpp>
namespace tx = texpr;
tx::tensor<tx::bfloat16, 2, tx::cuda>& device_tensor();
void f() { (void)tx::require_on<tx::cuda>(tx::matmul(device_tensor(), device_tensor())); }
