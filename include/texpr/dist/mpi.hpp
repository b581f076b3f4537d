// tx::dist::mpi_comm and its collectives on host tensors (optional; needs an MPI implementation's mpi.h). The calls
// block until the collective completes; a cuda tensor is a compile error (copy it to host, or use nccl_comm).
#pragma once

#include <mpi.h>

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
    using T = typename detail::dist_traits_t<X>::value_type;
    const auto s = detail::dist_span_of(t, "allreduce");
    mpi_comm::check(MPI_Allreduce(MPI_IN_PLACE, s.data, static_cast<int>(s.count), detail::mpi_datatype<T>(), MPI_SUM, comm.native()),
                    "MPI_Allreduce");
    if (how == op::mean) detail::divide_by_ranks(s.data, s.count, comm.size());
  }
}

/// Reduces every tensor of a tuple (what tx::eval_all returns: a loss and its gradients) across the ranks in
/// place. When all share one dtype they travel packed in one buffer, one MPI_Allreduce per call; otherwise one
/// call per tensor.
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
      mpi_comm::check(MPI_Allreduce(MPI_IN_PLACE, packed.data(), static_cast<int>(total), detail::mpi_datatype<T>(), MPI_SUM, comm.native()),
                      "MPI_Allreduce");
      if (how == op::mean) detail::divide_by_ranks(packed.data(), total, comm.size());
      at = 0;
      std::apply([&](auto&... t) { ((std::copy(packed.data() + at, packed.data() + at + t.size(), t.data()), at += t.size()), ...); }, tensors);
    }
  }
}

/// Copies `t` from rank `root` to every other rank, in place (same shape on every rank). Blocks until done.
template <detail::dist_buffer X> void broadcast(const mpi_comm& comm, X&& t, int root = 0) {
  if constexpr (detail::mpi_accepts<X, true>()) {
    using T = typename detail::dist_traits_t<X>::value_type;
    const auto s = detail::dist_span_of(t, "broadcast");
    mpi_comm::check(MPI_Bcast(s.data, static_cast<int>(s.count), detail::mpi_datatype<T>(), root, comm.native()), "MPI_Bcast");
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
    mpi_comm::check(MPI_Allgather(i.data, static_cast<int>(i.count), detail::mpi_datatype<T>(), o.data, static_cast<int>(i.count),
                                  detail::mpi_datatype<T>(), comm.native()),
                    "MPI_Allgather");
  }
}

} // namespace texpr::dist
