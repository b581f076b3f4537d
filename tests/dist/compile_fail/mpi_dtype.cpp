// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::dist::mpi_comm maps float, double, int32 and int64 to MPI datatypes; other dtypes are refused with the remedy.
// expected-error: texpr: tx::dist::mpi_comm moves float, double, int32 and int64 tensors; cast this one with tx::cast
// expected-errors: 1
#include <cstdint>
#include <texpr/texpr.hpp>
#include <texpr/dist/mpi.hpp>
namespace tx = texpr;
void f() {
  const tx::dist::mpi_comm comm;
#ifdef TEXPR_KO
  tx::tensor<std::int16_t, 1> t({4});
#else
  tx::tensor<std::int32_t, 1> t({4});
#endif
  tx::dist::broadcast(comm, t, 0);
}
