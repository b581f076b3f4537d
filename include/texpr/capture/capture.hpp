// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::capture_step: a whole step (forward, backward, update) captured once into a CUDA graph and replayed with one
// launch per step; checked at compile time (tx::capturable) for every graph it evaluates.
#pragma once

#if defined(__CUDACC__)

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/autograd/grad.hpp"
#include "texpr/backend/cuda/graph.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/placement/capturable.hpp"

namespace texpr {

/// What tx::capture_step returns: the CUDA graph and the tensors its evaluation writes. The result tensors keep the
/// addresses captured: every replay() rewrites them in place, so read them (item(), to_host) after a replay, on
/// their stream, and do not reassign them.
template <class Results> class captured_step {
 public:
  /// Enqueues one replay (forward, backward, update) on the capture's stream; returns without waiting.
  void replay() const { graph_.replay(); }
  /// The evaluated graphs, in the order given to tx::capture_step (for tx::value_and_grad: the loss, then the gradients).
  const Results& results() const noexcept { return results_; }
  /// The captured graph.
  const cuda_graph& graph() const noexcept { return graph_; }
  /// Pairs a graph with the results its capture wrote (what tx::capture_step does).
  captured_step(Results&& r, cuda_graph&& g) : results_(std::move(r)), graph_(std::move(g)) {}

 private:
  Results results_;  // declared first: destroyed after the graph, whose blocks they are
  cuda_graph graph_;
};

namespace detail {
/// The default update of tx::capture_step: none.
struct no_update {
  template <class R> void operator()(const R&) const noexcept {}
};
template <class G> struct is_std_tuple : std::false_type {};
template <class... E> struct is_std_tuple<std::tuple<E...>> : std::true_type {};
} // namespace detail

/// Captures, on the stream of the graphs' first tensor (null: texpr's stream), the evaluation of `graphs` (one
/// expression, or a std::tuple of them as tx::value_and_grad returns) into fixed result tensors, followed by
/// `then(results)` (e.g. an optimiser's in-place step, `[&](const auto& r) { opt.step(r); }`), into one CUDA graph.
/// Each graph must be tx::capturable (checked at compile time). Run the same step once eagerly first: the capture
/// takes its temporaries from the blocks that step left in texpr's device cache, and cuBLAS's workspace is set up
/// then. Inputs are fixed buffers: build `graphs` on views of staging tensors and copy each batch into them before
/// replay(). `then` must update in place (`p -= lr * g`, tx::optim): a tensor it reassigns would keep the captured
/// address of its first result. A failure only the driver sees (a host wait, an allocation, an invalidated
/// capture) throws tx::cuda_error naming the call.
template <class G, class Then = detail::no_update> auto capture_step(const G& graphs, Then&& then = {}) {
  if constexpr (detail::is_std_tuple<G>::value) {
    std::apply([](const auto&... e) { ((void)require_capturable(e), ...); }, graphs);
  } else {
    (void)require_capturable(graphs);
  }
  using results_t = decltype(eval_all(graphs));
  std::optional<results_t> results;
  stream_t stream = nullptr;
  if constexpr (detail::is_std_tuple<G>::value)
    std::apply([&](const auto&... e) { ((stream = stream ? stream : detail::preferred_stream(detail::capture(e))), ...); }, graphs);
  else
    stream = detail::preferred_stream(detail::capture(graphs));
  cuda_graph g = cuda_graph::capture(stream, [&] {
    results.emplace(eval_all(graphs));
    then(std::as_const(*results));
  });
  return captured_step<results_t>(std::move(*results), std::move(g));
}

} // namespace texpr

#endif // __CUDACC__
