// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Multi-tensor updates: one launch applies an optimiser's per-element rule to up to multi_tensor_width tensors
// (parameter, gradient, state), instead of one fused elementwise launch per tensor written. A small model's step
// updates many small tensors, so launches, not bandwidth, are its cost.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <string_view>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/stream.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/stream.hpp"

namespace texpr::detail::cuda_impl {

/// Tensors per launch: the pointer table travels as a kernel parameter (8 x 4 pointers and a count: 320 bytes).
inline constexpr int multi_tensor_width = 8;

/// The table one launch reads: for tensor k, its parameter p, gradient g, optional state s1 and s2 (null when the
/// rule has none) and its element count n. All contiguous, all of dtype T.
template <class T> struct multi_tensor_table {
  T* p[multi_tensor_width] = {};
  const T* g[multi_tensor_width] = {};
  T* s1[multi_tensor_width] = {};
  T* s2[multi_tensor_width] = {};
  index_t n[multi_tensor_width] = {};
  int count = 0;
};

/// SGD without momentum: p -= lr (g + wd p).
template <class T> struct sgd_plain_rule {
  T lr, wd;
  __device__ void operator()(T& p, T g, T*, T*) const { p = p - lr * (g + wd * p); }
};
/// SGD with a momentum buffer b (s1): b = momentum b + (1 - dampening) (g + wd p), or b = g + wd p at the first
/// step (b is not read then: it is fresh memory); p -= lr b, or with Nesterov p -= lr ((g + wd p) + momentum b).
template <class T> struct sgd_momentum_rule {
  T lr, wd, momentum, dampening;
  bool nesterov, first;
  __device__ void operator()(T& p, T g, T* b, T*) const {
    const T d = g + wd * p;
    const T nb = first ? d : momentum * *b + (T(1) - dampening) * d;
    *b = nb;
    p = nesterov ? p - lr * (d + momentum * nb) : p - lr * nb;
  }
};
/// Adam and AdamW, with moments m (s1) and v (s2): d = g + l2 p; m = beta1 m + (1 - beta1) d;
/// v = beta2 v + (1 - beta2) d^2; p = decay p - step_size m / (sqrt(v) / bias2_sqrt + eps). At the first step m
/// and v are fresh memory, not read: their terms are zero (beta * 0 adds exactly nothing).
template <class T> struct adam_rule {
  T beta1, beta2, l2, decay, step_size, bias2_sqrt, eps;
  bool first;
  __device__ void operator()(T& p, T g, T* m, T* v) const {
    const T d = g + l2 * p;
    const T nm = first ? (T(1) - beta1) * d : beta1 * *m + (T(1) - beta1) * d;
    const T nv = first ? (T(1) - beta2) * (d * d) : beta2 * *v + (T(1) - beta2) * (d * d);
    *m = nm;
    *v = nv;
    p = decay * p - step_size * (nm / (::sqrt(nv) / bias2_sqrt + eps));
  }
};

/// blockIdx.y picks the tensor; blocks stride over its elements. Each element is read and written by one thread.
template <class T, class Rule> __global__ void multi_tensor_apply(multi_tensor_table<T> table, Rule rule) {
  const int k = static_cast<int>(blockIdx.y);
  if (k >= table.count) return;
  const index_t n = table.n[k];
  T* const p = table.p[k];
  const T* const g = table.g[k];
  T* const s1 = table.s1[k];
  T* const s2 = table.s2[k];
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    T value = p[i];
    rule(value, g[i], s1 ? s1 + i : nullptr, s2 ? s2 + i : nullptr);
    p[i] = value;
  }
}

/// Enqueues table's update on `stream`: one launch, recorded in the kernel log as multi_tensor_update of `op`.
template <class T, class Rule>
void launch_multi_tensor(const multi_tensor_table<T>& table, const Rule& rule, stream_t stream, std::string_view op) {
  if (table.count == 0) return;
  index_t largest = 0;
  for (int k = 0; k < table.count; ++k) largest = table.n[k] > largest ? table.n[k] : largest;
  if (largest == 0) return;
  const dim3 grid(grid_for(ceil_div(largest, block_threads)), static_cast<unsigned>(table.count));
  multi_tensor_apply<T, Rule><<<grid, block_threads, 0, resolve_stream(stream)>>>(table, rule);
  TEXPR_CUDA_CHECK_LAUNCH();
  if (kernel_log::active()) kernel_log::record_kernel("multi_tensor_update", op, dtype_name_v<T>, "cuda");
}

} // namespace texpr::detail::cuda_impl

#endif // __CUDACC__
