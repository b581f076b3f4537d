// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::dist::nccl_comm and its collectives on cuda tensors (optional; nvcc only, needs NCCL's nccl.h; empty for other
// compilers). Calls enqueue on a stream and return; a host tensor is a compile error (copy it, or use mpi_comm).
// NCCL's counts are size_t, so one call moves any number of elements (mpi_comm cuts counts above INT_MAX).
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/backend/cuda/stream.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/dist/collective.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::dist {

/// A NCCL communicator and the stream its collectives use for tensors on the default stream. Either wraps one the
/// caller created (ncclCommInitRank with an id broadcast over MPI; not destroyed here) or, from single_device(),
/// owns a one-rank communicator. Collectives through it move cuda tensors.
class nccl_comm {
 public:
  using backend = cuda;  ///< Where the tensors it moves live.

  /// Wraps `comm` (not destroyed); `stream` is used for tensors whose own stream is the default one.
  nccl_comm(ncclComm_t comm, cudaStream_t stream = nullptr) noexcept : comm_(comm), stream_(stream) {}
  /// A one-rank communicator over `device` (ncclCommInitAll), owned: destroyed with this object.
  static nccl_comm single_device(int device = 0) {
    ncclComm_t c = nullptr;
    check(ncclCommInitAll(&c, 1, &device), "ncclCommInitAll");
    nccl_comm n(c, nullptr);
    n.owned_ = true;
    return n;
  }
  /// Moves the communicator (and its ownership) here.
  nccl_comm(nccl_comm&& o) noexcept : comm_(std::exchange(o.comm_, nullptr)), stream_(o.stream_), owned_(std::exchange(o.owned_, false)) {}
  nccl_comm& operator=(nccl_comm&&) = delete;
  nccl_comm(const nccl_comm&) = delete;
  nccl_comm& operator=(const nccl_comm&) = delete;
  ~nccl_comm() {
    if (owned_ && comm_) ncclCommDestroy(comm_);
  }

  /// This process's rank in the communicator.
  int rank() const {
    int r = 0;
    check(ncclCommUserRank(comm_, &r), "ncclCommUserRank");
    return r;
  }
  /// The number of ranks.
  int size() const {
    int s = 0;
    check(ncclCommCount(comm_, &s), "ncclCommCount");
    return s;
  }
  /// The wrapped ncclComm_t.
  ncclComm_t native() const noexcept { return comm_; }
  /// The stream used for tensors on the default stream.
  cudaStream_t stream() const noexcept { return stream_; }
  /// The stream a collective on memory of stream `s` runs on: `s`; for the default, the communicator's, else
  /// texpr's stream (tx::cuda_stream(), where texpr wrote the memory), never the legacy stream.
  cudaStream_t stream_for(stream_t s) const {
    if (s) return reinterpret_cast<cudaStream_t>(s);
    return stream_ ? stream_ : cuda_stream();
  }

  /// Throws std::runtime_error naming the NCCL call when `status` is not ncclSuccess.
  static void check(ncclResult_t status, const char* call) {
    if (status != ncclSuccess) throw std::runtime_error(std::string("texpr: ") + call + " failed: " + ncclGetErrorString(status));
  }

 private:
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool owned_ = false;
};

} // namespace texpr::dist

namespace texpr::detail {

/// The NCCL datatype of a texpr dtype (float, double, int32, int64, half, bfloat16).
template <class T> ncclDataType_t nccl_datatype() {
  if constexpr (std::is_same_v<T, float>) return ncclFloat32;
  else if constexpr (std::is_same_v<T, double>) return ncclFloat64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return ncclInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return ncclInt64;
  else if constexpr (std::is_same_v<T, half>) return ncclFloat16;
  else return ncclBfloat16;
}

/// The dtypes nccl_comm moves.
template <class T>
inline constexpr bool nccl_dtype_v = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, std::int32_t> ||
                                     std::is_same_v<T, std::int64_t> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// One diagnostic per mistake at the collective's call: a host tensor, an unsupported dtype, or (when `writes`)
/// read-only memory. Returns whether the call may go on.
template <class X, bool Writes> constexpr bool nccl_accepts() {
  using traits = dist_traits_t<X>;
  constexpr bool on_cuda = std::is_same_v<typename traits::backend, cuda>;
  static_assert(on_cuda, "texpr: tx::dist::nccl_comm moves cuda tensors; this tensor is on host (copy it with tx::to_device, or use tx::dist::mpi_comm)");
  constexpr bool dtype_ok = !on_cuda || nccl_dtype_v<typename traits::value_type>;
  static_assert(dtype_ok, "texpr: tx::dist::nccl_comm moves float, double, int32, int64, half and bfloat16 tensors; cast this one with tx::cast");
  constexpr bool write_ok = !on_cuda || !dtype_ok || !Writes || traits::writable;
  static_assert(write_ok, "texpr: this tx::dist collective writes its tensor; this one is read-only (const)");
  return on_cuda && dtype_ok && write_ok;
}

} // namespace texpr::detail

namespace texpr::dist {

/// Reduces `t` (a cuda tensor or contiguous view) across the ranks in place with ncclAllReduce (ncclSum or
/// ncclAvg), enqueued on the tensor's stream (the communicator's if that is the default); returns without waiting.
template <detail::dist_buffer X> void allreduce(const nccl_comm& comm, X&& t, op how = op::sum) {
  if constexpr (detail::nccl_accepts<X, true>()) {
    using T = typename detail::dist_traits_t<X>::value_type;
    const auto s = detail::dist_span_of(t, "allreduce");
    nccl_comm::check(ncclAllReduce(s.data, s.data, static_cast<std::size_t>(s.count), detail::nccl_datatype<T>(),
                                   how == op::mean ? ncclAvg : ncclSum, comm.native(), comm.stream_for(s.stream)),
                     "ncclAllReduce");
  }
}

/// Reduces every tensor of a tuple (what tx::eval_all returns) in place: one ncclAllReduce per tensor inside one
/// ncclGroupStart/ncclGroupEnd, which NCCL launches as one operation.
template <class... X>
  requires(detail::is_tensor_tuple<std::tuple<X...>>::value)
void allreduce(const nccl_comm& comm, std::tuple<X...>& tensors, op how = op::sum) {
  if constexpr ((detail::nccl_accepts<X, true>() && ...)) {
    nccl_comm::check(ncclGroupStart(), "ncclGroupStart");
    try {
      std::apply([&](auto&... t) { (allreduce(comm, t, how), ...); }, tensors);
    } catch (...) {
      ncclGroupEnd();
      throw;
    }
    nccl_comm::check(ncclGroupEnd(), "ncclGroupEnd");
  }
}

/// Copies `t` from rank `root` to every other rank, in place, with ncclBroadcast on the tensor's stream.
template <detail::dist_buffer X> void broadcast(const nccl_comm& comm, X&& t, int root = 0) {
  if constexpr (detail::nccl_accepts<X, true>()) {
    using T = typename detail::dist_traits_t<X>::value_type;
    const auto s = detail::dist_span_of(t, "broadcast");
    nccl_comm::check(ncclBroadcast(s.data, s.data, static_cast<std::size_t>(s.count), detail::nccl_datatype<T>(), root, comm.native(),
                                   comm.stream_for(s.stream)),
                     "ncclBroadcast");
  }
}

/// Concatenates every rank's `in` along the first axis, in rank order, into `out` (first extent size() times
/// in's, else shape_error naming both shapes) with ncclAllGather on the output's stream.
template <detail::dist_buffer In, detail::dist_buffer Out> void allgather(const nccl_comm& comm, const In& in, Out&& out) {
  if constexpr (detail::nccl_accepts<const In&, false>() && detail::nccl_accepts<Out, true>()) {
    using T = typename detail::dist_traits_t<In>::value_type;
    static_assert(std::is_same_v<T, typename detail::dist_traits_t<Out>::value_type>,
                  "texpr: tx::dist::allgather needs an output of the input's dtype");
    const auto i = detail::dist_span_of(in, "allgather");
    const auto o = detail::dist_span_of(out, "allgather");
    detail::check_allgather_shapes(i.shape, o.shape, comm.size());
    nccl_comm::check(ncclAllGather(i.data, o.data, static_cast<std::size_t>(i.count), detail::nccl_datatype<T>(), comm.native(),
                                   comm.stream_for(o.stream)),
                     "ncclAllGather");
  }
}

} // namespace texpr::dist

#endif // __CUDACC__
