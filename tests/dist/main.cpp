// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// doctest main for the MPI test program: MPI_Init before the cases, MPI_Finalize after; every rank runs every case
// (collectives need all ranks), and the exit status is non-zero on any rank whose cases failed.

#include <doctest/doctest.h>

#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  doctest::Context context(argc, argv);
  if (rank != 0) context.setOption("out", "/dev/null");  // one report, rank 0's; failures still set the status
  const int failed = context.run();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
