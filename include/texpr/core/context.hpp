// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The evaluation context: the stream an evaluation runs on and the temporaries it must keep alive.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "texpr/core/stream.hpp"

namespace texpr {

namespace detail {
inline std::uint64_t next_context_id() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}
} // namespace detail

/// State of one evaluation on Backend: its stream, the temporaries that sub-results were materialised into, the
/// saved values (autograd's, tx::share's) computed so far, and an identity those values are cached by. Graphs
/// evaluated in one context (tx::eval_all) compute each saved value once.
template <class Backend> struct context {
  stream_t stream = nullptr;                   ///< The stream every kernel is enqueued on (ignored on host).
  std::vector<std::shared_ptr<void>> keep;     ///< Temporaries, kept until the computation that made them ends.
  std::vector<std::shared_ptr<void>> values;   ///< Saved values computed here, kept until their last reader is done.
  std::uint64_t id = detail::next_context_id();  ///< Unique per context.
};

namespace detail {
/// Scopes the temporaries made from here to the end of a computation (a saved value's, or one graph of
/// tx::eval_all): they are released when it ends, since only it reads them. Saved values are not temporaries.
template <class Backend> class temporaries_scope {
 public:
  /// Marks ctx's temporaries now.
  explicit temporaries_scope(context<Backend>& ctx) : ctx_(ctx), mark_(ctx.keep.size()) {}
  ~temporaries_scope() { ctx_.keep.erase(ctx_.keep.begin() + static_cast<std::ptrdiff_t>(mark_), ctx_.keep.end()); }
  temporaries_scope(const temporaries_scope&) = delete;
  temporaries_scope& operator=(const temporaries_scope&) = delete;

 private:
  context<Backend>& ctx_;
  std::size_t mark_;
};
} // namespace detail

} // namespace texpr
