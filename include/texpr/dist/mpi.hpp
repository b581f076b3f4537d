// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::dist::mpi_comm and its collectives on host tensors (optional; needs an MPI implementation's mpi.h). The calls
// block until the collective completes; a cuda tensor is a compile error (copy it to host, or use nccl_comm). Any
// element count works: MPI counts are int, so more than INT_MAX elements go in several calls of at most INT_MAX.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/dist/collective.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::dist {

/// A view onto an MPI communicator texpr does not own (default MPI_COMM_WORLD): MPI must be initialised before its
/// first use and is finalised by the caller. Collectives through it move host tensors.
class mpi_comm {
 public:
  using backend = host;  ///< Where the tensors it moves live.

  /// Wraps `comm` (not duplicated, not freed).
  explicit mpi_comm(MPI_Comm comm = MPI_COMM_WORLD) noexcept : comm_(comm) {}

  /// This process's rank in the communicator.
  int rank() const {
    int r = 0;
    check(MPI_Comm_rank(comm_, &r), "MPI_Comm_rank");
    return r;
  }
  /// The number of ranks.
  int size() const {
    int s = 0;
    check(MPI_Comm_size(comm_, &s), "MPI_Comm_size");
    return s;
  }
  /// The wrapped MPI_Comm.
  MPI_Comm native() const noexcept { return comm_; }

  /// Throws std::runtime_error naming the MPI call when `status` is not MPI_SUCCESS (only reached when the
  /// communicator's error handler returns errors; MPI's default aborts the job first).
  static void check(int status, const char* call) {
    if (status == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(status, text, &length);
    throw std::runtime_error(std::string("texpr: ") + call + " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }

 private:
  MPI_Comm comm_;
};

} // namespace texpr::dist

namespace texpr::detail {

/// The MPI datatype of a texpr dtype (float, double, int32, int64).
template <class T> MPI_Datatype mpi_datatype() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  else return MPI_INT64_T;
}

/// The dtypes mpi_comm moves.
template <class T>
inline constexpr bool mpi_dtype_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                    std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

/// One diagnostic per mistake at the collective's call: a cuda tensor, an unsupported dtype, or (when `writes`)
/// read-only memory. Returns whether the call may go on, so the body compiles nothing else after an error.
template <class X, bool Writes> constexpr bool mpi_accepts() {
  using traits = dist_traits_t<X>;
  constexpr bool on_host = std::is_same_v<typename traits::backend, host>;
  static_assert(on_host, "texpr: tx::dist::mpi_comm moves host tensors; this tensor is on cuda (copy it with tx::to_host, or use tx::dist::nccl_comm)");
  constexpr bool dtype_ok = !on_host || mpi_dtype_v<typename traits::value_type>;
  static_assert(dtype_ok, "texpr: tx::dist::mpi_comm moves float, double, int32 and int64 tensors; cast this one with tx::cast");
  constexpr bool write_ok = !on_host || !dtype_ok || !Writes || traits::writable;
  static_assert(write_ok, "texpr: this tx::dist collective writes its tensor; this one is read-only (const)");
  return on_host && dtype_ok && write_ok;
}

/// The most elements one MPI call moves: MPI counts are int.
inline constexpr index_t mpi_max_count = INT_MAX;

/// The MPI calls behind the collectives, one chunk each: `count` elements from `offset` of a buffer. The chunked
/// collectives take the set of calls as a template parameter, so a test can count the calls of a 2^32-element
/// collective without the memory.
struct mpi_calls {
  /// Sums count elements at data + offset across the ranks, in place.
  template <class T> static int allreduce(T* data, index_t offset, int count, MPI_Comm comm) {
    return MPI_Allreduce(MPI_IN_PLACE, data + offset, count, mpi_datatype<T>(), MPI_SUM, comm);
  }
  /// Copies count elements at data + offset from rank root to the others.
  template <class T> static int broadcast(T* data, index_t offset, int count, int root, MPI_Comm comm) {
    return MPI_Bcast(data + offset, count, mpi_datatype<T>(), root, comm);
  }
  /// Gathers count elements at in + offset from every rank r into out + r * per_rank + offset (per_rank: the elements
  /// each rank contributes in all). A chunk of a larger contribution is received through a datatype of count
  /// elements whose extent is per_rank elements, so each rank's part lands at its own place.
  template <class T> static int allgather(const T* in, T* out, index_t offset, int count, index_t per_rank, MPI_Comm comm) {
    if (offset == 0 && per_rank == count) return MPI_Allgather(in, count, mpi_datatype<T>(), out, count, mpi_datatype<T>(), comm);
    MPI_Datatype block = MPI_DATATYPE_NULL, spaced = MPI_DATATYPE_NULL;
    int status = MPI_Type_contiguous(count, mpi_datatype<T>(), &block);
    if (status == MPI_SUCCESS)
      status = MPI_Type_create_resized(block, 0, static_cast<MPI_Aint>(per_rank) * static_cast<MPI_Aint>(sizeof(T)), &spaced);
    if (status == MPI_SUCCESS) status = MPI_Type_commit(&spaced);
    if (status == MPI_SUCCESS) status = MPI_Allgather(in + offset, count, mpi_datatype<T>(), out + offset, 1, spaced, comm);
    if (spaced != MPI_DATATYPE_NULL) MPI_Type_free(&spaced);
    if (block != MPI_DATATYPE_NULL) MPI_Type_free(&block);
    return status;
  }
};

/// Sums count elements at data across the ranks in place: one Calls::allreduce per chunk of at most max_chunk.
template <class Calls = mpi_calls, class T>
void mpi_allreduce_chunked(T* data, index_t count, MPI_Comm comm, index_t max_chunk = mpi_max_count) {
  for_each_chunk(count, max_chunk, [&](index_t at, index_t n) {
    dist::mpi_comm::check(Calls::allreduce(data, at, static_cast<int>(n), comm), "MPI_Allreduce");
  });
}

/// Copies count elements at data from rank root to the others: one Calls::broadcast per chunk of at most max_chunk.
template <class Calls = mpi_calls, class T>
void mpi_broadcast_chunked(T* data, index_t count, int root, MPI_Comm comm, index_t max_chunk = mpi_max_count) {
  for_each_chunk(count, max_chunk, [&](index_t at, index_t n) {
    dist::mpi_comm::check(Calls::broadcast(data, at, static_cast<int>(n), root, comm), "MPI_Bcast");
  });
}

/// Gathers count elements of every rank into out (rank r's at out + r * count): one Calls::allgather per chunk.
template <class Calls = mpi_calls, class T>
void mpi_allgather_chunked(const T* in, T* out, index_t count, MPI_Comm comm, index_t max_chunk = mpi_max_count) {
  for_each_chunk(count, max_chunk, [&](index_t at, index_t n) {
    dist::mpi_comm::check(Calls::allgather(in, out, at, static_cast<int>(n), count, comm), "MPI_Allgather");
  });
}

/// Divides n elements by the number of ranks (the mean after a sum).
template <class T> void divide_by_ranks(T* p, index_t n, int ranks) {
  const T r = static_cast<T>(ranks);
  for (index_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / r);
}

} // namespace texpr::detail

namespace texpr::dist {

/// Reduces `t` (a host tensor or contiguous view) across the ranks in place: every rank ends with the elementwise
/// sum, or mean. Blocks until done. A strided view throws shape_error.
template <detail::dist_buffer X> void allreduce(const mpi_comm& comm, X&& t, op how = op::sum) {
  if constexpr (detail::mpi_accepts<X, true>()) {
    const auto s = detail::dist_span_of(t, "allreduce");
    detail::mpi_allreduce_chunked(s.data, s.count, comm.native());
    if (how == op::mean) detail::divide_by_ranks(s.data, s.count, comm.size());
  }
}

/// Reduces every tensor of a tuple (what tx::eval_all returns: a loss and its gradients) across the ranks in
/// place. When all share one dtype they travel packed in one buffer, one MPI_Allreduce per call (per INT_MAX
/// elements); otherwise one call per tensor.
template <class... X>
  requires(detail::is_tensor_tuple<std::tuple<X...>>::value)
void allreduce(const mpi_comm& comm, std::tuple<X...>& tensors, op how = op::sum) {
  if constexpr ((detail::mpi_accepts<X, true>() && ...)) {
    using T = typename detail::common_dtype<X...>::type;
    if constexpr (std::is_void_v<T>) {
      std::apply([&](auto&... t) { (allreduce(comm, t, how), ...); }, tensors);
    } else {
      index_t total = 0;
      std::apply([&](auto&... t) { ((total += t.size()), ...); }, tensors);
      std::vector<T> packed(static_cast<std::size_t>(total));
      index_t at = 0;
      std::apply([&](auto&... t) { ((std::copy(t.data(), t.data() + t.size(), packed.data() + at), at += t.size()), ...); }, tensors);
      detail::mpi_allreduce_chunked(packed.data(), total, comm.native());
      if (how == op::mean) detail::divide_by_ranks(packed.data(), total, comm.size());
      at = 0;
      std::apply([&](auto&... t) { ((std::copy(packed.data() + at, packed.data() + at + t.size(), t.data()), at += t.size()), ...); }, tensors);
    }
  }
}

/// Copies `t` from rank `root` to every other rank, in place (same shape on every rank). Blocks until done.
template <detail::dist_buffer X> void broadcast(const mpi_comm& comm, X&& t, int root = 0) {
  if constexpr (detail::mpi_accepts<X, true>()) {
    const auto s = detail::dist_span_of(t, "broadcast");
    detail::mpi_broadcast_chunked(s.data, s.count, root, comm.native());
  }
}

/// Concatenates every rank's `in` along the first axis, in rank order, into `out` on every rank: out's first
/// extent is size() times in's, its other extents in's (else shape_error naming both shapes). Blocks until done.
template <detail::dist_buffer In, detail::dist_buffer Out> void allgather(const mpi_comm& comm, const In& in, Out&& out) {
  if constexpr (detail::mpi_accepts<const In&, false>() && detail::mpi_accepts<Out, true>()) {
    using T = typename detail::dist_traits_t<In>::value_type;
    static_assert(std::is_same_v<T, typename detail::dist_traits_t<Out>::value_type>,
                  "texpr: tx::dist::allgather needs an output of the input's dtype");
    const auto i = detail::dist_span_of(in, "allgather");
    const auto o = detail::dist_span_of(out, "allgather");
    detail::check_allgather_shapes(i.shape, o.shape, comm.size());
    detail::mpi_allgather_chunked(i.data, o.data, i.count, comm.native());
  }
}

} // namespace texpr::dist
