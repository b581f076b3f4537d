// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The evaluation context: the stream an evaluation runs on and the temporaries it must keep alive.
#pragma once

#include <atomic>
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

/// State of one evaluation on Backend: its stream, the temporaries that sub-results were materialised into (they
/// live as long as the context), and an identity that shared sub-results (autograd's saved values) are cached by.
/// Graphs evaluated in one context (tx::eval_all) compute each shared sub-result once.
template <class Backend> struct context {
  stream_t stream = nullptr;                   ///< The stream every kernel is enqueued on (ignored on host).
  std::vector<std::shared_ptr<void>> keep;     ///< Temporaries kept until the context ends.
  std::uint64_t id = detail::next_context_id();  ///< Unique per context.
};

} // namespace texpr
