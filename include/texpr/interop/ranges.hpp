// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::as_view over contiguous host ranges: std::span, std::vector, std::array, C arrays.
#pragma once

#include <cstddef>
#include <ranges>
#include <string>
#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

/// Holds for ranges whose elements sit contiguously in memory and whose size is known: what as_view wraps.
template <class R>
concept contiguous_sized_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R>;

namespace detail {

/// The element type a view of range R has: const when the range gives const access.
template <class R> using range_element_t = std::remove_reference_t<std::ranges::range_reference_t<R>>;

/// Fails to compile for a temporary container: its view would dangle at the end of the statement.
template <class R> constexpr void require_lasting_range() {
  static_assert(std::is_lvalue_reference_v<R> || std::ranges::borrowed_range<R>,
                "texpr: as_view of a temporary container would dangle; keep the container in a variable and view it");
}

/// Throws shape_error unless `size` elements fill `shape` exactly; names both, and `what` the memory.
template <class T, std::size_t R>
void check_view_size(index_t size, const shape_t<R>& shape, const char* what, const texpr::source_location& loc) {
  for (auto e : shape)
    if (e < 0) throw shape_error(at(loc) + "texpr: as_view: negative extent in shape " + texpr::to_string(shape));
  check_shape(shape, sizeof(T), "as_view", &loc);
  if (shape_size(shape) != size)
    throw shape_error(at(loc) + "texpr: as_view: " + what + " of " + std::to_string(size) +
                      " elements cannot be viewed with shape " + texpr::to_string(shape) + " (" +
                      std::to_string(shape_size(shape)) + " elements)");
}

} // namespace detail

/// A rank-1 host view of a contiguous range (std::span, std::vector, std::array, a C array): writes through the view
/// change the range's elements. A range with const access gives a view of const elements. The range's memory must
/// outlive the view; a temporary container is rejected at compile time.
template <class Range>
  requires contiguous_sized_range<Range>
view<detail::range_element_t<Range>, 1, host> as_view(Range&& range) {
  detail::require_lasting_range<Range>();
  const shape_t<1> shape{static_cast<index_t>(std::ranges::size(range))};
  return view<detail::range_element_t<Range>, 1, host>(std::ranges::data(range), shape);
}

/// A row-major host view of a contiguous range with the given shape; the range's size must equal the shape's
/// (else shape_error naming both, from the caller's file:line).
template <class Range, std::size_t R>
  requires contiguous_sized_range<Range>
view<detail::range_element_t<Range>, R, host> as_view(Range&& range, const shape_t<R>& shape,
                                                       texpr::source_location loc = texpr::source_location::current()) {
  detail::require_lasting_range<Range>();
  detail::check_view_size<detail::range_element_t<Range>>(static_cast<index_t>(std::ranges::size(range)), shape,
                                                          "a range", loc);
  return view<detail::range_element_t<Range>, R, host>(std::ranges::data(range), shape);
}

/// as_view(range, shape) with the shape as a braced list: `tx::as_view(v, {2, 3})`.
template <class Range, std::size_t R>
  requires contiguous_sized_range<Range>
view<detail::range_element_t<Range>, R, host> as_view(Range&& range, const index_t (&shape)[R],
                                                       texpr::source_location loc = texpr::source_location::current()) {
  return as_view(std::forward<Range>(range), detail::to_shape(shape), loc);
}

} // namespace texpr
