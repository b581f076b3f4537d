// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What tx::dist's communicators share: the reduction ops, the contiguous buffer of a tensor or view, and the
// compile-time checks (placement, dtype, writability) that make a wrong call fail at the user's line.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::dist {

/// The reduction an allreduce applies across ranks: the sum, or the sum divided by the number of ranks (integer
/// dtypes divide as C++ does, truncating toward zero).
enum class op { sum, mean };

} // namespace texpr::dist

namespace texpr::detail {

/// Which tensors and views a collective moves: element type, rank, backend, and whether it may write them.
template <class X> struct dist_buffer_traits {
  static constexpr bool valid = false;
};
template <class T, std::size_t R, class B> struct dist_buffer_traits<tensor<T, R, B>> {
  static constexpr bool valid = true;
  static constexpr bool writable = true;
  using value_type = T;
  using backend = B;
};
template <class T, std::size_t R, class B> struct dist_buffer_traits<const tensor<T, R, B>> {
  static constexpr bool valid = true;
  static constexpr bool writable = false;
  using value_type = T;
  using backend = B;
};
template <class T, std::size_t R, class B> struct dist_buffer_traits<view<T, R, B>> {
  static constexpr bool valid = true;
  static constexpr bool writable = !std::is_const_v<T>;
  using value_type = std::remove_const_t<T>;
  using backend = B;
};
template <class T, std::size_t R, class B> struct dist_buffer_traits<const view<T, R, B>> : dist_buffer_traits<view<T, R, B>> {};

/// A tensor or a view (any reference to one): what tx::dist's collectives take.
template <class X> concept dist_buffer = dist_buffer_traits<std::remove_reference_t<X>>::valid;

/// The traits of a dist_buffer reference.
template <class X> using dist_traits_t = dist_buffer_traits<std::remove_reference_t<X>>;

/// The contiguous memory a collective moves: first element, element count, shape (for messages).
template <class T, std::size_t R> struct dist_span {
  T* data;
  index_t count;
  shape_t<R> shape;
  stream_t stream;
};

/// A tensor's storage.
template <class T, std::size_t R, class B> dist_span<T, R> dist_span_of(tensor<T, R, B>& t, const char*) {
  return {t.data(), t.size(), t.shape(), t.stream()};
}
/// A read-only tensor's storage.
template <class T, std::size_t R, class B> dist_span<const T, R> dist_span_of(const tensor<T, R, B>& t, const char*) {
  return {t.data(), t.size(), t.shape(), t.stream()};
}
/// A view's memory; a collective moves one contiguous block, so a strided view is a shape_error naming `what`.
template <class T, std::size_t R, class B> dist_span<T, R> dist_span_of(const view<T, R, B>& v, const char* what) {
  if (!v.is_contiguous())
    throw shape_error(std::string("texpr: tx::dist::") + what + " needs contiguous memory; this view of shape " +
                      texpr::to_string(v.shape()) + " has strides " + texpr::to_string(v.strides()) +
                      " (copy it into a tensor first)");
  return {v.data(), v.size(), v.shape(), v.stream()};
}

/// allgather's shapes: out's first axis is `ranks` times in's, the other axes equal; a shape_error names both.
template <std::size_t R> void check_allgather_shapes(const shape_t<R>& in, const shape_t<R>& out, int ranks) {
  static_assert(R >= 1, "texpr: tx::dist::allgather concatenates along the first axis; a rank-0 tensor has none (unsqueeze it)");
  bool ok = out[0] == in[0] * ranks;
  for (std::size_t d = 1; d < R; ++d) ok = ok && out[d] == in[d];
  if (!ok) {
    shape_t<R> want = in;
    want[0] = in[0] * ranks;
    throw shape_error("texpr: tx::dist::allgather over " + std::to_string(ranks) + " ranks of an input of shape " +
                      texpr::to_string(in) + " needs an output of shape " + texpr::to_string(want) +
                      "; the output has shape " + texpr::to_string(out));
  }
}

/// Calls f(offset, count) for consecutive chunks of at most `max_chunk` (> 0) elements that cover [0, total) in
/// order, none when total is 0. MPI counts are int: a collective over more elements runs one call per chunk.
template <class F> void for_each_chunk(index_t total, index_t max_chunk, F&& f) {
  if (max_chunk <= 0) throw std::invalid_argument("texpr: for_each_chunk needs a positive chunk size, not " + std::to_string(max_chunk));
  for (index_t at = 0; at < total;) {
    const index_t n = total - at < max_chunk ? total - at : max_chunk;
    f(at, n);
    at += n;
  }
}

/// Holds for a std::tuple of tensors (what tx::eval_all returns).
template <class X> struct is_tensor_tuple : std::false_type {};
template <class... T, std::size_t... R, class... B>
struct is_tensor_tuple<std::tuple<tensor<T, R, B>...>> : std::true_type {};

/// The element type shared by every tensor of a tuple, or void when they differ.
template <class... X> struct common_dtype {
  using type = void;
};
template <class X, class... Y>
  requires(std::is_same_v<typename X::value_type, typename Y::value_type> && ...)
struct common_dtype<X, Y...> {
  using type = typename X::value_type;
};

} // namespace texpr::detail
