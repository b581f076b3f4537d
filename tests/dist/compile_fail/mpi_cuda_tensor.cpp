// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::dist::mpi_comm moves host memory: a cuda tensor is refused at compile time, with the two remedies.
// expected-error: texpr: tx::dist::mpi_comm moves host tensors; this tensor is on cuda \(copy it with tx::to_host, or use tx::dist::nccl_comm\)
// expected-errors: 1
#include <texpr/texpr.hpp>
#include <texpr/dist/mpi.hpp>
namespace tx = texpr;
tx::tensor<float, 1, tx::cuda>& device_tensor();
tx::tensor<float, 1, tx::host>& host_tensor();
void f() {
  const tx::dist::mpi_comm comm;
#ifdef TEXPR_KO
  tx::dist::allreduce(comm, device_tensor(), tx::dist::op::mean);
#else
  tx::dist::allreduce(comm, host_tensor(), tx::dist::op::mean);
#endif
}
