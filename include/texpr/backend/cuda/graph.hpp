// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::cuda_graph: stream-ordered work captured once into a CUDA graph and replayed with one launch, with the
// device blocks the capture touched reserved for it.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <utility>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/stream.hpp"
#include "texpr/core/stream.hpp"

namespace texpr {

/// A captured, instantiated CUDA graph. replay() enqueues everything the capture recorded on the capture's stream
/// with one cudaGraphLaunch and returns without waiting. The graph owns the device blocks its work reads and writes
/// (temporaries and results allocated during capture): they stay reserved for it, so replays may reuse the captured
/// addresses, until the graph is destroyed. Tensors made before capture that the work reads or writes (parameters,
/// input staging tensors) must outlive it and keep their storage. Move-only.
class cuda_graph {
 public:
  /// An empty graph (replay throws).
  cuda_graph() = default;
  cuda_graph(const cuda_graph&) = delete;
  cuda_graph& operator=(const cuda_graph&) = delete;
  /// Takes o's graph; o becomes empty.
  cuda_graph(cuda_graph&& o) noexcept { swap(o); }
  /// Takes o's graph; this one's is destroyed.
  cuda_graph& operator=(cuda_graph&& o) noexcept {
    if (this != &o) cuda_graph(std::move(o)).swap(*this);
    return *this;
  }
  ~cuda_graph() { reset(); }

  /// Enqueues one replay on stream() (no host wait, no allocation).
  void replay() const {
    if (!exec_) throw cuda_error("cudaGraphLaunch", "an empty tx::cuda_graph (nothing was captured)", __FILE__, __LINE__, 0);
    TEXPR_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  }
  /// The stream the capture ran on and replays run on.
  stream_t stream() const noexcept { return stream_; }
  /// Number of nodes (kernels, GEMM kernels, copies, memsets) the graph holds.
  std::size_t nodes() const noexcept { return nodes_; }
  /// True when nothing was captured.
  bool empty() const noexcept { return exec_ == nullptr; }

  /// Captures what f enqueues on `stream` (null: texpr's stream) in thread-local mode: on this thread, a host
  /// wait, a pageable copy or an allocation from the driver fails, and the failure throws cuda_error naming the
  /// call; other threads are unaffected. texpr's allocations inside f come from blocks the device cache holds (run
  /// the work once before capturing it) and become the graph's.
  template <class F> static cuda_graph capture(stream_t stream, F&& f) {
    cuda_graph g;
    g.stream_ = detail::resolve_stream(stream);
    if (detail::active_graph_pool())
      throw cuda_error("cudaStreamBeginCapture", "a capture is already running on this thread", __FILE__, __LINE__,
                       static_cast<int>(cudaErrorIllegalState));
    g.pool_ = std::make_unique<detail::graph_pool>();
    TEXPR_CUDA_CHECK(cudaGetDevice(&g.pool_->device));
    g.pool_->stream = g.stream_;
    TEXPR_CUDA_CHECK(cudaStreamBeginCapture(g.stream_, cudaStreamCaptureModeThreadLocal));
    detail::active_graph_pool() = g.pool_.get();
    try {
      std::forward<F>(f)();
    } catch (...) {
      detail::active_graph_pool() = nullptr;
      cudaGraph_t broken = nullptr;
      if (cudaStreamEndCapture(g.stream_, &broken) != cudaSuccess) (void)cudaGetLastError();
      if (broken) (void)cudaGraphDestroy(broken);
      throw;  // g's destructor hands its blocks back
    }
    detail::active_graph_pool() = nullptr;
    TEXPR_CUDA_CHECK(cudaStreamEndCapture(g.stream_, &g.graph_));
    TEXPR_CUDA_CHECK(cudaGraphGetNodes(g.graph_, nullptr, &g.nodes_));
    TEXPR_CUDA_CHECK(cudaGraphInstantiate(&g.exec_, g.graph_, 0));
    return g;
  }

 private:
  void swap(cuda_graph& o) noexcept {
    std::swap(graph_, o.graph_);
    std::swap(exec_, o.exec_);
    std::swap(stream_, o.stream_);
    std::swap(nodes_, o.nodes_);
    std::swap(pool_, o.pool_);
  }
  void reset() noexcept {
    if (exec_ && cudaGraphExecDestroy(exec_) != cudaSuccess) (void)cudaGetLastError();
    if (graph_ && cudaGraphDestroy(graph_) != cudaSuccess) (void)cudaGetLastError();
    exec_ = nullptr;
    graph_ = nullptr;
    if (pool_) detail::device_block_cache::instance().release_graph_pool(*pool_);
    pool_.reset();
  }

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  stream_t stream_ = nullptr;
  std::size_t nodes_ = 0;
  std::unique_ptr<detail::graph_pool> pool_;
};

} // namespace texpr

#endif // __CUDACC__
