// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::tensor: owning, row-major storage whose memory space is part of its type.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include "texpr/core/source_location.hpp"
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/memory.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

/// Owning, row-major tensor. Rank is fixed at compile time, extents at run time, memory on Backend.
/// Copies are explicit (clone()); a moved-from tensor is valid and empty. Expressions refer to a named tensor (they
/// do not copy it); one evaluated after the tensor was destroyed or moved from throws std::logic_error.
template <class T, std::size_t Rank, class Backend>
class tensor : public expr_base<tensor<T, Rank, Backend>> {
  static_assert(is_backend_v<Backend>, "texpr: a tensor's backend must be tx::host or tx::cuda");
  static_assert(!std::is_const_v<T> && !std::is_reference_v<T>, "texpr: tensor element type must be a plain value type");

 public:
  using value_type = T;                             ///< Element type (dtype).
  using backend = Backend;                          ///< Where the memory lives.
  static constexpr std::size_t rank = Rank;         ///< Number of dimensions.

  /// An empty tensor (no storage, size 0).
  tensor() = default;

  /// Allocates a zero-filled tensor of the given shape (on `stream` for cuda; ignored on host).
  explicit tensor(const shape_t<Rank>& shape, stream_t stream = nullptr) { allocate(shape, stream, true); }

  /// Allocates a host tensor and fills it, row-major, from `values`; the count must match the shape (else
  /// shape_error naming the caller's file:line).
  tensor(const shape_t<Rank>& shape, std::initializer_list<T> values,
         texpr::source_location loc = texpr::source_location::current()) {
    static_assert(std::is_same_v<Backend, host>, "texpr: only host tensors take initial values; build on host, then tx::to_device");
    if (static_cast<index_t>(values.size()) != checked_size(shape))
      throw shape_error(detail::at(loc) + "texpr: " + std::to_string(values.size()) + " initial values for a tensor of shape " +
                        texpr::to_string(shape) + " (" + std::to_string(checked_size(shape)) + " elements)");
    allocate(shape, nullptr, false);
    std::copy(values.begin(), values.end(), data_);
  }

  /// Evaluates an expression (or copies a view) into a new tensor, on `stream` for cuda (default: the stream of
  /// the expression's first tensor operand). Shape errors name the caller's file:line.
  template <operand E>
    requires(!std::is_same_v<std::remove_cvref_t<E>, tensor>)
  tensor(E&& e, stream_t stream = nullptr,  // NOLINT: implicit on purpose, `tensor c = a + b;`
         texpr::source_location loc = texpr::source_location::current()) {
    evaluate_to(detail::evaluation_entry{}, *this, std::forward<E>(e), stream, &loc);  // *this is empty: it takes e's shape
  }

  /// Moves o's storage here; o becomes empty (and expressions referring to o throw until o holds storage again).
  tensor(tensor&& o) noexcept {
    swap(o);
    if (detail::liveness* l = o.live_.load(std::memory_order_acquire)) l->moved_from();
  }
  /// Moves o's storage here; o becomes empty.
  tensor& operator=(tensor&& o) noexcept {
    if (this != &o) tensor(std::move(o)).swap(*this);
    return *this;
  }
  tensor(const tensor&) = delete;  // texpr: tensors are move-only; copy explicitly with t.clone() or tx::eval(t)
  /// Copies o's elements into this tensor's storage (shapes must match unless this tensor is empty).
  tensor& operator=(const tensor& o) {
    if (this != &o) evaluate_to(detail::evaluation_entry{}, *this, o, stream_, nullptr);
    return *this;
  }
  /// Evaluates e into this tensor's storage, on the tensor's stream; a shape mismatch throws shape_error
  /// (a tensor without storage is allocated to e's shape).
  template <operand E>
    requires(!std::is_same_v<std::remove_cvref_t<E>, tensor>)
  tensor& operator=(E&& e) {
    evaluate_to(detail::evaluation_entry{}, *this, std::forward<E>(e), stream_, nullptr);
    return *this;
  }
  ~tensor() {
    reset();
    if (detail::liveness* l = live_.load(std::memory_order_acquire)) {
      l->destroyed();
      l->release();
    }
  }

  /// In-place elementwise updates (`w -= lr * g`): the right side broadcasts to this tensor's shape.
  template <class E> tensor& operator+=(E&& e) { return *this = *this + std::forward<E>(e); }
  /// In-place subtraction; see operator+=.
  template <class E> tensor& operator-=(E&& e) { return *this = *this - std::forward<E>(e); }
  /// In-place multiplication; see operator+=.
  template <class E> tensor& operator*=(E&& e) { return *this = *this * std::forward<E>(e); }
  /// In-place division; see operator+=.
  template <class E> tensor& operator/=(E&& e) { return *this = *this / std::forward<E>(e); }

  /// Extents, outermost first.
  const shape_t<Rank>& shape() const noexcept { return shape_; }
  /// Extent of dimension d.
  index_t extent(std::size_t d) const { return shape_.at(d); }
  /// Row-major strides in elements.
  shape_t<Rank> strides() const noexcept { return contiguous_strides(shape_); }
  /// Number of elements (0 for an empty tensor).
  index_t size() const noexcept { return size_; }
  /// True when the tensor holds no elements.
  bool empty() const noexcept { return size_ == 0; }
  /// Pointer to the first element (device memory for cuda).
  T* data() noexcept { return data_; }
  /// Pointer to the first element (device memory for cuda).
  const T* data() const noexcept { return data_; }
  /// The stream the memory was allocated on (cuda) and on which assignments run.
  stream_t stream() const noexcept { return stream_; }
  /// A mutable view of the whole tensor (on the tensor's stream).
  texpr::view<T, Rank, Backend> view() noexcept {
    return {detail::unchecked_t{}, data_, shape_, contiguous_strides(shape_), stream_};
  }
  /// A read-only view of the whole tensor (on the tensor's stream).
  texpr::view<const T, Rank, Backend> view() const noexcept {
    return {detail::unchecked_t{}, data_, shape_, contiguous_strides(shape_), stream_};
  }
  /// A deep copy on the same backend and stream.
  tensor clone() const {
    detail::require_memory_compiler<Backend>();
    tensor t;
    t.allocate(shape_, stream_, false);
    detail::memory<Backend>::copy(t.data_, data_, sizeof(T) * static_cast<std::size_t>(size_), stream_);
    return t;
  }

  /// Host element access with bounds checks that stay on in release builds.
  template <class... I>
    requires(sizeof...(I) == Rank && (std::is_integral_v<I> && ...))
  T& operator()(I... i) {
    return data_[offset(i...)];
  }
  /// Host element access with bounds checks that stay on in release builds.
  template <class... I>
    requires(sizeof...(I) == Rank && (std::is_integral_v<I> && ...))
  const T& operator()(I... i) const {
    return data_[offset(i...)];
  }

  /// Swaps storage with o (each keeps its identity: expressions referring to this tensor read o's old storage).
  void swap(tensor& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(shape_, o.shape_);
    std::swap(size_, o.size_);
    std::swap(release_, o.release_);
    std::swap(stream_, o.stream_);
    holds_storage();
    o.holds_storage();
  }

  /// The record that tells expressions referring to this tensor whether it still exists (made on first use).
  detail::liveness_ref liveness() const {
    detail::liveness* l = live_.load(std::memory_order_acquire);
    if (l == nullptr) {
      auto* fresh = new detail::liveness;
      if (live_.compare_exchange_strong(l, fresh, std::memory_order_acq_rel)) l = fresh;
      else delete fresh;  // another thread made it first; l is theirs
    }
    return detail::liveness_ref(l);
  }

  /// Frees the storage; the tensor becomes empty.
  void reset() noexcept {
    if (release_) release_(data_, stream_);
    data_ = nullptr;
    release_ = nullptr;
    shape_ = {};
    size_ = 0;
  }

  /// Replaces the storage with a fresh, uninitialised buffer of the given shape (used by evaluation).
  void allocate_uninitialized(const shape_t<Rank>& shape, stream_t stream) { allocate(shape, stream, false); }

 private:
  static index_t checked_size(const shape_t<Rank>& shape) {
    detail::check_shape(shape, sizeof(T), "tensor");
    return shape_size(shape);
  }

  void allocate(const shape_t<Rank>& shape, stream_t stream, bool zero) {
    detail::require_memory_compiler<Backend>();
    stream = detail::memory<Backend>::resolve(stream);
    const index_t n = checked_size(shape);
    const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(n);
    // Allocate before releasing, so a failed allocation leaves this tensor as it was.
    void* p = detail::memory<Backend>::allocate(bytes, stream);
    if (zero) {
      try {
        detail::memory<Backend>::zero(p, bytes, stream);
      } catch (...) {
        detail::memory<Backend>::release(p, stream);
        throw;
      }
    }
    reset();
    holds_storage();
    data_ = static_cast<T*>(p);
    shape_ = shape;
    size_ = n;
    stream_ = stream;
    release_ = &detail::memory<Backend>::release;
  }

  template <class... I> index_t offset(I... i) const {
    static_assert(std::is_same_v<Backend, host>,
                  "texpr: element access reads host memory; copy a cuda tensor with tx::to_host first");
    const index_t idx[] = {static_cast<index_t>(i)..., 0};
    index_t off = 0;
    for (std::size_t d = 0; d != Rank; ++d) {
      if (idx[d] < 0 || idx[d] >= shape_[d])
        throw std::out_of_range("texpr: index " + std::to_string(idx[d]) + " out of range for dimension " +
                                std::to_string(d) + " of tensor with shape " + texpr::to_string(shape_));
      off = off * shape_[d] + idx[d];
    }
    if constexpr (Rank == 0)
      if (!data_) throw std::out_of_range("texpr: element access on an empty rank-0 tensor");
    return off;
  }

  void holds_storage() noexcept {
    if (detail::liveness* l = live_.load(std::memory_order_acquire)) l->holds_storage();
  }

  T* data_ = nullptr;
  mutable std::atomic<detail::liveness*> live_{nullptr};  // shared with reference leaves; see liveness()
  shape_t<Rank> shape_{};
  index_t size_ = 0;
  detail::release_fn release_ = nullptr;
  stream_t stream_ = nullptr;
};

} // namespace texpr
