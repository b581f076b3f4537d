// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::view: non-owning, possibly strided window onto memory texpr does not manage.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/expr/node.hpp"

namespace texpr {

/// Non-owning view over existing memory on Backend (never freed by texpr). T may be const. A view of a cuda
/// tensor carries the tensor's stream; evaluations through the view run on it.
/// Assigning an expression to a view writes through it; assigning a view copies elements.
template <class T, std::size_t Rank, class Backend>
class view : public expr_base<view<T, Rank, Backend>> {
  static_assert(is_backend_v<Backend>, "texpr: a view's backend must be tx::host or tx::cuda");

 public:
  using texpr_node = void;
  using element_type = T;                          ///< Element type, possibly const.
  using value_type = std::remove_const_t<T>;       ///< dtype.
  using kernel_dtype = value_type;
  using op_type = op::leaf;
  using backend = Backend;                         ///< Where the memory lives.
  using children = detail::type_list<>;
  static constexpr std::size_t rank = Rank;        ///< Number of dimensions.
  static constexpr bool writable = !std::is_const_v<T>;  ///< Whether expressions may be assigned through it.

  /// Wraps contiguous row-major memory of the given shape.
  view(T* data, const shape_t<Rank>& shape, stream_t stream = nullptr)
      : view(data, shape, (detail::check_shape(shape, sizeof(T), "view"), contiguous_strides(shape)), stream) {}
  /// Wraps strided memory; strides are in elements and may be zero or negative. Throws shape_error for a
  /// negative extent or a shape or strided span whose byte size overflows int64, std::invalid_argument for a
  /// non-empty shape over nullptr.
  view(T* data, const shape_t<Rank>& shape, const shape_t<Rank>& strides, stream_t stream = nullptr)
      : p_(data), shape_(shape), strides_(strides), stream_(stream) {
    detail::check_shape(shape, sizeof(T), "view");
    detail::check_strided_span(shape, strides, sizeof(T), "view");
    if (!data && shape_size(shape) != 0)
      throw std::invalid_argument("texpr: view of shape " + texpr::to_string(shape) + " over a null pointer");
  }
  /// Wraps memory texpr itself manages (tensor storage, layouts of it), skipping the user-input checks.
  view(detail::unchecked_t, T* data, const shape_t<Rank>& shape, const shape_t<Rank>& strides, stream_t stream) noexcept
      : p_(data), shape_(shape), strides_(strides), stream_(stream) {}
  /// A mutable view converts to a read-only one.
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  view(const view<U, Rank, Backend>& o) noexcept : p_(o.data()), shape_(o.shape()), strides_(o.strides()), stream_(o.stream()) {}

  view(const view&) = default;  ///< Another view of the same memory.
  /// Copies o's elements into the viewed memory (shapes must match).
  view& operator=(const view& o) {
    static_assert(!std::is_const_v<T>, "texpr: cannot assign through a view of const elements");
    if constexpr (!std::is_const_v<T>)
      if (this != &o) evaluate_to_view(detail::evaluation_entry{}, *this, o, nullptr);
    return *this;
  }
  /// Evaluates e into the viewed memory; shapes must match (shape_error otherwise).
  template <operand E>
    requires(!std::is_same_v<std::remove_cvref_t<E>, view>)
  view& operator=(E&& e) {
    static_assert(!std::is_const_v<T>, "texpr: cannot assign through a view of const elements");
    if constexpr (!std::is_const_v<T>) evaluate_to_view(detail::evaluation_entry{}, *this, std::forward<E>(e), nullptr);
    return *this;
  }

  /// Extents, outermost first.
  const shape_t<Rank>& shape() const noexcept { return shape_; }
  /// Strides in elements.
  const shape_t<Rank>& strides() const noexcept { return strides_; }
  /// Number of elements.
  index_t size() const noexcept { return shape_size(shape_); }
  /// Pointer to element (0, ..., 0).
  T* data() const noexcept { return p_; }
  /// The stream evaluations through this view run on (cuda; nullptr: the default stream).
  stream_t stream() const noexcept { return stream_; }
  /// True when the strides are row-major contiguous.
  bool is_contiguous() const noexcept {
    const auto cs = contiguous_strides(shape_);
    for (std::size_t d = 0; d != Rank; ++d)
      if (shape_[d] > 1 && strides_[d] != cs[d]) return false;
    return true;
  }

  /// Host element access with bounds checks.
  template <class... I>
    requires(sizeof...(I) == Rank && (std::is_integral_v<I> && ...))
  T& operator()(I... i) const {
    static_assert(std::is_same_v<Backend, host>,
                  "texpr: element access reads host memory; copy cuda data with tx::to_host first");
    const index_t idx[] = {static_cast<index_t>(i)..., 0};
    index_t off = 0;
    for (std::size_t d = 0; d != Rank; ++d) {
      if (idx[d] < 0 || idx[d] >= shape_[d])
        throw std::out_of_range("texpr: index " + std::to_string(idx[d]) + " out of range for dimension " +
                                std::to_string(d) + " of view with shape " + texpr::to_string(shape_));
      off += idx[d] * strides_[d];
    }
    return p_[off];
  }

  /// The memory the leaf reads (itself, read-only).
  template <class B> view<const value_type, Rank, Backend> storage(context<B>&) const { return *this; }
  /// The memory, writable.
  view writable_storage() const
    requires writable
  {
    return *this;
  }
  /// No operands.
  const detail::tuple<>& operands() const { return detail::no_operands(); }

 private:
  T* p_;
  shape_t<Rank> shape_;
  shape_t<Rank> strides_;
  stream_t stream_ = nullptr;
};

} // namespace texpr
