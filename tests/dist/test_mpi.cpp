// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::dist over MPI, run by CTest under `mpiexec -n 2` (valid for any number of ranks, 1 included): each rank fills
// rank-dependent data and checks the exact result every rank must hold.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <tuple>

#include <texpr/texpr.hpp>
#include <texpr/dist/mpi.hpp>

namespace tx = texpr;

namespace {

/// Element i of rank r's data: small integers, so float sums are exact.
template <class T> T value(int r, tx::index_t i) { return static_cast<T>(3 * r + static_cast<int>(i) - 2); }

/// The sum over ranks of value(r, i).
template <class T> T sum_over_ranks(int ranks, tx::index_t i) {
  T s = 0;
  for (int r = 0; r < ranks; ++r) s = static_cast<T>(s + value<T>(r, i));
  return s;
}

template <class T> tx::tensor<T, 2> filled(int rank) {
  tx::tensor<T, 2> t({2, 3});
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 3; ++j) t(i, j) = value<T>(rank, i * 3 + j);
  return t;
}

} // namespace

TEST_CASE_TEMPLATE("allreduce sums and averages across ranks", T, float, double, std::int32_t, std::int64_t) {
  const tx::dist::mpi_comm comm;
  const int rank = comm.rank(), ranks = comm.size();
  auto s = filled<T>(rank);
  tx::dist::allreduce(comm, s, tx::dist::op::sum);
  auto m = filled<T>(rank);
  tx::dist::allreduce(comm, m.view(), tx::dist::op::mean);  // a contiguous view, reduced in place
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 3; ++j) {
      const T sum = sum_over_ranks<T>(ranks, i * 3 + j);
      CHECK(s(i, j) == sum);
      CHECK(m(i, j) == static_cast<T>(sum / static_cast<T>(ranks)));  // integers truncate, as C++ divides
    }
}

TEST_CASE("allreduce of a gradient tuple: one packed call, or one per dtype when they differ") {
  const tx::dist::mpi_comm comm;
  const int rank = comm.rank(), ranks = comm.size();
  auto grads = std::tuple{tx::tensor<float, 0>(tx::full(tx::shape_t<0>{}, static_cast<float>(rank))), filled<float>(rank),
                          tx::tensor<float, 1>(tx::full({4}, static_cast<float>(2 * rank)))};
  tx::dist::allreduce(comm, grads, tx::dist::op::mean);
  const float mean_rank = static_cast<float>(ranks - 1) / 2.0f;
  CHECK(std::get<0>(grads).item() == mean_rank);
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 3; ++j)
      CHECK(std::get<1>(grads)(i, j) == sum_over_ranks<float>(ranks, i * 3 + j) / static_cast<float>(ranks));
  for (tx::index_t i = 0; i < 4; ++i) CHECK(std::get<2>(grads)(i) == 2 * mean_rank);

  auto mixed = std::tuple{filled<double>(rank), filled<std::int64_t>(rank)};
  tx::dist::allreduce(comm, mixed, tx::dist::op::sum);
  CHECK(std::get<0>(mixed)(1, 2) == sum_over_ranks<double>(ranks, 5));
  CHECK(std::get<1>(mixed)(0, 1) == sum_over_ranks<std::int64_t>(ranks, 1));
}

TEST_CASE("broadcast copies the root's tensor to every rank") {
  const tx::dist::mpi_comm comm;
  const int rank = comm.rank(), ranks = comm.size();
  const int root = ranks - 1;
  auto t = filled<std::int32_t>(rank);
  tx::dist::broadcast(comm, t, root);
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 3; ++j) CHECK(t(i, j) == value<std::int32_t>(root, i * 3 + j));
}

TEST_CASE("allgather concatenates the ranks' tensors along the first axis, in rank order") {
  const tx::dist::mpi_comm comm;
  const int rank = comm.rank(), ranks = comm.size();
  const auto in = filled<double>(rank);
  tx::tensor<double, 2> out({2 * ranks, 3});
  tx::dist::allgather(comm, in, out);
  for (int r = 0; r < ranks; ++r)
    for (tx::index_t i = 0; i < 2; ++i)
      for (tx::index_t j = 0; j < 3; ++j) CHECK(out(2 * r + i, j) == value<double>(r, i * 3 + j));

  tx::tensor<double, 2> wrong({2 * ranks + 1, 3});
  const std::string want = "texpr: tx::dist::allgather over " + std::to_string(ranks) + " ranks of an input of shape (2, 3) needs an output of shape (" +
                           std::to_string(2 * ranks) + ", 3); the output has shape (" + std::to_string(2 * ranks + 1) + ", 3)";
  CHECK_THROWS_WITH_AS(tx::dist::allgather(comm, in, wrong), want.c_str(), tx::shape_error);
}

TEST_CASE("a strided view is refused with its shape and strides; a contiguous one is reduced in place") {
  const tx::dist::mpi_comm comm;
  auto t = filled<float>(comm.rank());
  const tx::view<float, 2, tx::host> columns(t.data(), {2, 2}, {3, 1});  // rows of 3, first two columns
  CHECK_THROWS_WITH_AS(tx::dist::allreduce(comm, columns, tx::dist::op::sum),
                       "texpr: tx::dist::allreduce needs contiguous memory; this view of shape (2, 2) has strides (3, 1) "
                       "(copy it into a tensor first)",
                       tx::shape_error);
  const tx::view<float, 1, tx::host> row(t.data() + 3, {3});
  tx::dist::allreduce(comm, row, tx::dist::op::sum);
  CHECK(t(1, 0) == sum_over_ranks<float>(comm.size(), 3));
  CHECK(t(0, 0) == value<float>(comm.rank(), 0));  // untouched outside the view
}
