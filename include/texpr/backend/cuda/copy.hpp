// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::to_device and tx::to_host: the only copies between host and device memory, always explicit. Each runs on the
// stream given, else on the stream of the tensor (or view) it reads or of the expression's first tensor operand.
#pragma once

#if defined(__CUDACC__)

#include <cstddef>
#include <type_traits>
#include <utility>

#include "texpr/backend/cuda/memory.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

/// Copies a host tensor into a new device tensor allocated on `stream` (enqueued; returns once the source may be
/// reused, since host tensors are pageable memory).
template <class T, std::size_t R>
tensor<T, R, cuda> to_device(const tensor<T, R, host>& t, stream_t stream = nullptr) {
  tensor<T, R, cuda> d;
  d.allocate_uninitialized(t.shape(), stream);
  detail::memory<cuda>::copy_from_host(d.data(), t.data(), sizeof(T) * static_cast<std::size_t>(t.size()), stream);
  return d;
}

/// Copies a (possibly strided) host view into a new contiguous device tensor.
template <class T, std::size_t R>
tensor<std::remove_const_t<T>, R, cuda> to_device(const view<T, R, host>& v, stream_t stream = nullptr) {
  using V = std::remove_const_t<T>;
  if (v.is_contiguous()) {
    tensor<V, R, cuda> d;
    d.allocate_uninitialized(v.shape(), stream);
    detail::memory<cuda>::copy_from_host(d.data(), v.data(), sizeof(V) * static_cast<std::size_t>(v.size()), stream);
    return d;
  }
  const tensor<V, R, host> packed(v);  // gather on the host first: one contiguous transfer
  return to_device(packed, stream);
}

/// Copies a host tensor into an existing device tensor of the same shape, on the device tensor's stream (enqueued;
/// returns once the source may be reused). The device tensor keeps its address: this is how a new batch reaches a
/// captured step (tx::capture_step) through its staging tensors. Different shapes throw shape_error naming both.
template <class T, std::size_t R> void copy_into(tensor<T, R, cuda>& dst, const tensor<T, R, host>& src) {
  if (dst.shape() != src.shape())
    throw shape_error("texpr: copy_into a device tensor of shape " + to_string(dst.shape()) + " from a host tensor of shape " +
                      to_string(src.shape()));
  detail::memory<cuda>::copy_from_host(dst.data(), src.data(), sizeof(T) * static_cast<std::size_t>(src.size()), dst.stream());
}

/// Copies a device tensor to a new host tensor on the tensor's stream (or `stream`) and waits for it.
template <class T, std::size_t R> tensor<T, R, host> to_host(const tensor<T, R, cuda>& t, stream_t stream = nullptr) {
  tensor<T, R, host> h;
  h.allocate_uninitialized(t.shape(), nullptr);
  detail::memory<cuda>::copy_to_host(h.data(), t.data(), sizeof(T) * static_cast<std::size_t>(t.size()),
                                     stream ? stream : t.stream());
  return h;
}

/// Evaluates a device expression (or copies a strided device view) on `stream` (default: the view's stream or the
/// expression's first tensor's) and copies the result to the host, waiting for it.
template <operand E>
  requires(!is_tensor_v<E> && std::is_same_v<typename detail::captured_t<E>::backend, cuda>)
auto to_host(E&& e, stream_t stream = nullptr, source_location loc = source_location::current()) {
  using N = detail::captured_t<E>;
  using T = typename N::value_type;
  auto n = detail::capture(std::forward<E>(e));
  if (!stream) stream = detail::preferred_stream(n);
  if constexpr (is_view_v<E>) {
    if (n.is_contiguous()) {
      tensor<T, N::rank, host> h;
      h.allocate_uninitialized(n.shape(), nullptr);
      detail::memory<cuda>::copy_to_host(h.data(), n.data(), sizeof(T) * static_cast<std::size_t>(n.size()), stream);
      return h;
    }
  }
  const tensor<T, N::rank, cuda> d(std::move(n), stream, loc);
  return to_host(d, stream);
}

} // namespace texpr

#endif // __CUDACC__
