// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::as_view over Thrust device memory (thrust::device_vector, thrust::device_ptr); empty outside nvcc.
#pragma once

#if defined(__CUDACC__)

#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/interop/pointer_check.hpp"
#include "texpr/interop/ranges.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

namespace detail {
template <class V> struct is_device_vector : std::false_type {};
template <class T, class A> struct is_device_vector<thrust::device_vector<T, A>> : std::true_type {};

/// Element type of a view of device_vector reference V: const when V is.
template <class V>
using device_vector_element_t =
    std::conditional_t<std::is_const_v<std::remove_reference_t<V>>, const typename std::remove_cvref_t<V>::value_type,
                       typename std::remove_cvref_t<V>::value_type>;

/// Fails to compile for a temporary device_vector: its view would dangle at the end of the statement.
template <class V> constexpr void require_lasting_device_vector() {
  static_assert(std::is_lvalue_reference_v<V>,
                "texpr: as_view of a temporary thrust::device_vector would dangle; keep it in a variable and view it");
}
} // namespace detail

/// Holds for thrust::device_vector types (any allocator), cv-qualified or references.
template <class V>
concept device_vector_type = detail::is_device_vector<std::remove_cvref_t<V>>::value;

/// A rank-1 cuda view of a thrust::device_vector's elements (const elements for a const vector). The vector must
/// outlive the view and keep its size (a resize may move the memory). Evaluations through the view run on texpr's
/// stream (tx::cuda_stream()), which does not wait for the legacy default stream thrust's algorithms use: before
/// thrust reads what texpr wrote, synchronise it (or run thrust with thrust::cuda::par.on(tx::cuda_stream())).
template <class V>
  requires device_vector_type<V>
view<detail::device_vector_element_t<V>, 1, cuda> as_view(V&& v) {
  detail::require_lasting_device_vector<V>();
  auto* p = thrust::raw_pointer_cast(v.data());
  const auto n = static_cast<index_t>(v.size());
  detail::auto_check_device_pointer(p, n, "as_view");
  return view<detail::device_vector_element_t<V>, 1, cuda>(p, shape_t<1>{n});
}

/// A row-major cuda view of a thrust::device_vector with the given shape; sizes must match (else shape_error
/// naming both, from the caller's file:line).
template <class V, std::size_t R>
  requires device_vector_type<V>
view<detail::device_vector_element_t<V>, R, cuda> as_view(
    V&& v, const shape_t<R>& shape, texpr::source_location loc = texpr::source_location::current()) {
  detail::require_lasting_device_vector<V>();
  auto* p = thrust::raw_pointer_cast(v.data());
  detail::check_view_size<detail::device_vector_element_t<V>>(static_cast<index_t>(v.size()), shape,
                                                              "a thrust::device_vector", loc);
  detail::auto_check_device_pointer(p, shape_size(shape), "as_view");
  return view<detail::device_vector_element_t<V>, R, cuda>(p, shape);
}

/// as_view(device_vector, shape) with the shape as a braced list: `tx::as_view(v, {2, 3})`.
template <class V, std::size_t R>
  requires device_vector_type<V>
view<detail::device_vector_element_t<V>, R, cuda> as_view(
    V&& v, const index_t (&shape)[R], texpr::source_location loc = texpr::source_location::current()) {
  return as_view(std::forward<V>(v), detail::to_shape(shape), loc);
}

/// A row-major cuda view of `shape` elements from a thrust::device_ptr (wrap a raw device pointer with
/// thrust::device_pointer_cast). texpr cannot know the allocation's size: the memory must hold the shape and
/// outlive the view. The pointer is checked (check_device_pointer) in debug builds or with
/// TEXPR_CHECK_DEVICE_POINTERS.
template <class T, std::size_t R> view<T, R, cuda> as_view(thrust::device_ptr<T> p, const shape_t<R>& shape) {
  for (auto e : shape)
    if (e < 0) throw shape_error("texpr: as_view: negative extent in shape " + texpr::to_string(shape));
  T* raw = thrust::raw_pointer_cast(p);
  detail::auto_check_device_pointer(raw, shape_size(shape), "as_view");
  return view<T, R, cuda>(raw, shape);
}

/// as_view(device_ptr, shape) with the shape as a braced list: `tx::as_view(p, {2, 3})`.
template <class T, std::size_t R> view<T, R, cuda> as_view(thrust::device_ptr<T> p, const index_t (&shape)[R]) {
  return as_view(p, detail::to_shape(shape));
}

} // namespace texpr

#endif // __CUDACC__
