// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::dist::nccl_comm moves device memory: a host tensor is refused at compile time, with the two remedies.
// expected-error: texpr: tx::dist::nccl_comm moves cuda tensors; this tensor is on host \(copy it with tx::to_device, or use tx::dist::mpi_comm\)
// expected-errors: 1
#include <texpr/texpr.hpp>
#include <texpr/dist/nccl.hpp>
namespace tx = texpr;
tx::tensor<float, 1, tx::cuda>& device_tensor();
tx::tensor<float, 1, tx::host>& host_tensor();
void f(const tx::dist::nccl_comm& comm) {
#ifdef TEXPR_KO
  tx::dist::allreduce(comm, host_tensor(), tx::dist::op::sum);
#else
  tx::dist::allreduce(comm, device_tensor(), tx::dist::op::sum);
#endif
}
