// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Collectives of more than INT_MAX elements: the chunks MPI is called with, counted by a stand-in for the MPI calls
// (no 16 GiB buffers), and the chunked paths run for real over small chunks on every rank.
#include <doctest/doctest.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include <texpr/texpr.hpp>
#include <texpr/dist/mpi.hpp>

namespace tx = texpr;

namespace {

using chunk = std::pair<tx::index_t, tx::index_t>;  // (offset, count)

/// The chunks for_each_chunk cuts `total` into.
std::vector<chunk> chunks_of(tx::index_t total, tx::index_t max_chunk = INT_MAX) {
  std::vector<chunk> out;
  tx::detail::for_each_chunk(total, max_chunk, [&](tx::index_t at, tx::index_t n) { out.emplace_back(at, n); });
  return out;
}

/// Stands in for the MPI calls: records each call's offset and count (and allgather's per-rank size), touches nothing.
struct recording_calls {
  static inline std::vector<chunk> calls;
  static inline std::vector<tx::index_t> per_rank;
  template <class T> static int allreduce(T*, tx::index_t offset, int count, MPI_Comm) {
    calls.emplace_back(offset, count);
    return MPI_SUCCESS;
  }
  template <class T> static int broadcast(T*, tx::index_t offset, int count, int, MPI_Comm) {
    calls.emplace_back(offset, count);
    return MPI_SUCCESS;
  }
  template <class T> static int allgather(const T*, T*, tx::index_t offset, int count, tx::index_t each, MPI_Comm) {
    calls.emplace_back(offset, count);
    per_rank.push_back(each);
    return MPI_SUCCESS;
  }
  static void clear() {
    calls.clear();
    per_rank.clear();
  }
};

constexpr tx::index_t int_max = INT_MAX;
constexpr tx::index_t two_31 = tx::index_t(1) << 31;
constexpr tx::index_t two_32 = tx::index_t(1) << 32;

} // namespace

TEST_CASE("counts above INT_MAX are cut into chunks of at most INT_MAX, in order, covering every element once") {
  CHECK(chunks_of(0).empty());
  CHECK(chunks_of(1) == std::vector<chunk>{{0, 1}});
  CHECK(chunks_of(int_max) == std::vector<chunk>{{0, int_max}});
  CHECK(chunks_of(int_max + 1) == std::vector<chunk>{{0, int_max}, {int_max, 1}});
  CHECK(chunks_of(two_31) == std::vector<chunk>{{0, int_max}, {int_max, 1}});
  CHECK(chunks_of(two_32 + 5) == std::vector<chunk>{{0, int_max}, {int_max, int_max}, {2 * int_max, 7}});
  CHECK(chunks_of(10, 4) == std::vector<chunk>{{0, 4}, {4, 4}, {8, 2}});
  CHECK_THROWS_AS(chunks_of(10, 0), std::invalid_argument);
}

TEST_CASE("allreduce, broadcast and allgather call MPI once per chunk: 0, INT_MAX, INT_MAX + 1, 2^31, 2^32 + 5 elements") {
  const MPI_Comm world = MPI_COMM_WORLD;
  float* none = nullptr;  // the stand-in never reads it
  for (const tx::index_t total : {tx::index_t(0), int_max, int_max + 1, two_31, two_32 + 5}) {
    CAPTURE(total);
    const auto want = chunks_of(total);
    recording_calls::clear();
    tx::detail::mpi_allreduce_chunked<recording_calls>(none, total, world);
    CHECK(recording_calls::calls == want);
    recording_calls::clear();
    tx::detail::mpi_broadcast_chunked<recording_calls>(none, total, 0, world);
    CHECK(recording_calls::calls == want);
    recording_calls::clear();
    tx::detail::mpi_allgather_chunked<recording_calls>(static_cast<const float*>(none), none, total, world);
    CHECK(recording_calls::calls == want);
    CHECK(recording_calls::per_rank == std::vector<tx::index_t>(want.size(), total));
    for (const auto& [at, n] : recording_calls::calls) CHECK(n <= int_max);
  }
}

TEST_CASE("the chunked collectives give the unchunked results (real MPI, chunks of 3 elements)") {
  const tx::dist::mpi_comm comm;
  const int rank = comm.rank(), ranks = comm.size();
  constexpr tx::index_t n = 10;
  std::vector<double> v(n);
  for (tx::index_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<double>(rank * 100 + i);
  tx::detail::mpi_allreduce_chunked(v.data(), n, comm.native(), 3);
  for (tx::index_t i = 0; i < n; ++i)
    CHECK(v[static_cast<std::size_t>(i)] == static_cast<double>(100 * ranks * (ranks - 1) / 2 + ranks * i));

  std::vector<std::int64_t> b(n, rank == 0 ? 7 : -1);
  b[n - 1] = rank == 0 ? 9 : -1;
  tx::detail::mpi_broadcast_chunked(b.data(), n, 0, comm.native(), 3);
  CHECK(b[0] == 7);
  CHECK(b[n - 2] == 7);
  CHECK(b[n - 1] == 9);

  constexpr tx::index_t each = 7;
  std::vector<float> in(each), out(static_cast<std::size_t>(each * ranks), -1.0f);
  for (tx::index_t i = 0; i < each; ++i) in[static_cast<std::size_t>(i)] = static_cast<float>(rank * 10 + i);
  tx::detail::mpi_allgather_chunked(static_cast<const float*>(in.data()), out.data(), each, comm.native(), 3);
  for (int r = 0; r < ranks; ++r)
    for (tx::index_t i = 0; i < each; ++i) CHECK(out[static_cast<std::size_t>(r * each + i)] == static_cast<float>(r * 10 + i));
}
