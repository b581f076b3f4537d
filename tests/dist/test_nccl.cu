// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::dist::nccl_comm on one device: a single-rank communicator (ncclCommInitAll), whose allreduce and broadcast
// leave the data as it was (sum and mean over one rank), on tensors, views and a gradient tuple. The main is
// tests/cuda/main.cpp: without a device the program exits 77 (skipped).
#include <doctest/doctest.h>

#include <cstdint>
#include <tuple>

#include <texpr/texpr.hpp>
#include <texpr/dist/nccl.hpp>

namespace tx = texpr;

TEST_CASE_TEMPLATE("nccl allreduce over one rank keeps the data, sum and mean", T, float, double, std::int32_t, std::int64_t) {
  auto comm = tx::dist::nccl_comm::single_device(0);
  CHECK(comm.size() == 1);
  CHECK(comm.rank() == 0);
  tx::tensor<T, 1> h({5}, {T(1), T(-2), T(3), T(40), T(5)});
  auto d = tx::to_device(h);
  tx::dist::allreduce(comm, d, tx::dist::op::sum);
  tx::dist::allreduce(comm, d.view(), tx::dist::op::mean);
  tx::dist::broadcast(comm, d, 0);
  const auto back = tx::to_host(d);  // waits for the tensor's stream, on which the collectives were enqueued
  for (tx::index_t i = 0; i < 5; ++i) CHECK(back(i) == h(i));
}

TEST_CASE("nccl allreduce of a gradient tuple (one NCCL group) and allgather's shape check") {
  auto comm = tx::dist::nccl_comm::single_device(0);
  auto grads = std::tuple{tx::tensor<float, 0, tx::cuda>(tx::full<tx::cuda>(tx::shape_t<0>{}, 2.5f)),
                          tx::tensor<float, 2, tx::cuda>(tx::full<tx::cuda>({3, 4}, -1.0f))};
  tx::dist::allreduce(comm, grads, tx::dist::op::mean);
  CHECK(std::get<0>(grads).item() == 2.5f);
  CHECK(tx::sum(std::get<1>(grads)).item() == -12.0f);

  const auto in = tx::tensor<float, 2, tx::cuda>(tx::full<tx::cuda>({2, 3}, 7.0f));
  tx::tensor<float, 2, tx::cuda> out({2, 3});
  tx::dist::allgather(comm, in, out);
  CHECK(tx::sum(out).item() == 42.0f);
  tx::tensor<float, 2, tx::cuda> wrong({4, 3});
  CHECK_THROWS_AS(tx::dist::allgather(comm, in, wrong), tx::shape_error);
}
