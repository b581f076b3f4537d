// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Helpers for the CUDA tests: device copies of the host test tensors. The long double references are the host
// suite's (tests/core/reference.hpp).
#pragma once

#include "core/reference.hpp"

#include <cstddef>
#include <random>

namespace cutest {

/// The device copy of a host tensor (on the default stream).
template <class T, std::size_t R> tx::tensor<T, R, tx::cuda> dev(const tx::tensor<T, R>& h) { return tx::to_device(h); }

/// Fills a host tensor in index order with draws of `dist` from `g`, rounded to its dtype.
template <class T, std::size_t R, class Dist>
void fill(tx::tensor<T, R>& t, Dist& dist, std::mt19937_64& g) {
  for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(dist(g));
}

/// Sets tx::set_cuda_tf32 for a scope and restores the previous setting when the scope ends, also when a check
/// fails inside it (a REQUIRE throws).
struct tf32_scope {
  bool previous;
  explicit tf32_scope(bool enabled) : previous(tx::cuda_tf32()) { tx::set_cuda_tf32(enabled); }
  tf32_scope(const tf32_scope&) = delete;
  tf32_scope& operator=(const tf32_scope&) = delete;
  ~tf32_scope() { tx::set_cuda_tf32(previous); }
};

} // namespace cutest
