// What every expression node shares: the node concept, evaluation context, leaf accessors and operand capture.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/detail/type_list.hpp"
#include "texpr/fwd.hpp"
#include "texpr/op/elementwise.hpp"

namespace texpr {

namespace detail {
template <class T> struct is_tensor : std::false_type {};
template <class T, std::size_t R, class B> struct is_tensor<tensor<T, R, B>> : std::true_type {};
template <class T> struct is_view : std::false_type {};
template <class T, std::size_t R, class B> struct is_view<view<T, R, B>> : std::true_type {};
} // namespace detail

/// True for tx::tensor types.
template <class T> inline constexpr bool is_tensor_v = detail::is_tensor<std::remove_cvref_t<T>>::value;
/// True for tx::view types.
template <class T> inline constexpr bool is_view_v = detail::is_view<std::remove_cvref_t<T>>::value;

/// Holds for expression graph nodes (views included; tensors become nodes when captured).
template <class E>
concept node = requires { typename std::remove_cvref_t<E>::texpr_node; };

/// Holds for anything usable as an operand of a texpr expression: tensors, views and expressions.
template <class E>
concept operand = node<E> || is_tensor_v<E>;

namespace detail {

template <class T, std::size_t R, class B, class E> void assign_new(tensor<T, R, B>& t, E&& e, stream_t stream);
template <class T, std::size_t R, class B, class E> void assign_to(tensor<T, R, B>& t, E&& e, stream_t stream);
template <class T, std::size_t R, class B, class E> void assign_to_view(const view<T, R, B>& v, E&& e, stream_t stream);

/// Tag for constructors that skip checks on memory texpr manages itself.
struct unchecked_t {};

/// Evaluation state: the stream and the temporaries that materialised sub-results need to outlive.
template <class Backend> struct context {
  stream_t stream = nullptr;
  std::vector<std::shared_ptr<void>> keep;
};

/// What aliasing checks need to know about one leaf's memory.
struct leaf_memory {
  const void* lo;      // first byte the leaf may read (nullptr when it reads nothing)
  const void* hi;      // one past the last byte
  const void* data;    // element (0, ..., 0)
  index_t size;        // element count
  bool contiguous;     // row-major contiguous
};

/// Device-copyable reader of one leaf, broadcast to an output shape of rank RO.
template <class T, std::size_t RO> struct leaf_accessor {
  static constexpr std::size_t n = RO > 0 ? RO : 1;
  const T* p = nullptr;
  index_t st[n] = {};  // strides in output index space; 0 on broadcast dimensions
  const T* row = nullptr;
  index_t row_stride = 0;
  bool is_dense = false;

  bool dense() const { return is_dense; }
  TEXPR_HOST_DEVICE T linear(index_t i) const { return p[i]; }
  TEXPR_HOST_DEVICE T at(const index_t* idx) const {
    index_t off = 0;
    for (std::size_t d = 0; d != RO; ++d) off += idx[d] * st[d];
    return p[off];
  }
  TEXPR_HOST_DEVICE void seek_row(const index_t* idx) {
    index_t off = 0;
    if constexpr (RO > 0) {
      for (std::size_t d = 0; d + 1 < RO; ++d) off += idx[d] * st[d];
      row_stride = st[RO - 1];
    }
    row = p + off;
  }
  TEXPR_HOST_DEVICE T in_row(index_t j) const { return row[j * row_stride]; }
};

/// Builds a leaf accessor; throws shape_error if the leaf does not broadcast to `out`.
template <class T, std::size_t R, std::size_t RO>
leaf_accessor<T, RO> make_leaf_accessor(const T* p, const shape_t<R>& shape, const shape_t<R>& strides,
                                        const shape_t<RO>& out) {
  static_assert(R <= RO, "texpr: an operand cannot have a higher rank than the expression result");
  check_broadcastable(shape, out, "operand");
  leaf_accessor<T, RO> a;
  a.p = p;
  const auto contiguous = contiguous_strides(out);
  bool dense = true;
  for (std::size_t d = 0; d != RO; ++d) {
    index_t s = 0;
    if (d + R + 1 > RO) {
      const std::size_t ld = d + R - RO;
      s = shape[ld] == 1 ? 0 : strides[ld];  // size-1 dimensions never advance (broadcast or trivial)
    }
    a.st[d] = s;
    if (out[d] != 1 && s != contiguous[d]) dense = false;
  }
  a.is_dense = dense;
  a.row = p;  // evaluators seek_row before reading rows
  return a;
}

/// Memory description of a (pointer, shape, strides) leaf.
template <class T, std::size_t R>
leaf_memory describe_leaf(const T* p, const shape_t<R>& shape, const shape_t<R>& strides) {
  leaf_memory m{p, p, p, shape_size(shape), true};
  const auto cs = contiguous_strides(shape);
  index_t lo = 0, hi = 0;
  bool empty = false;
  for (std::size_t d = 0; d != R; ++d) {
    if (shape[d] == 0) empty = true;
    if (shape[d] > 1 && strides[d] != cs[d]) m.contiguous = false;
    const index_t span = (shape[d] - 1) * strides[d];
    if (span < 0) lo += span;
    else hi += span;
  }
  if (empty || !p) return {nullptr, nullptr, p, 0, m.contiguous};
  m.lo = p + lo;
  m.hi = p + hi + 1;
  return m;
}

} // namespace detail

/// CRTP base of every expression node and of tensor/view: shared members such as item() and size().
template <class Derived> struct expr_base {
  /// Number of elements of the expression's result.
  index_t size() const { return shape_size(static_cast<const Derived&>(*this).shape()); }
  /// Evaluates a rank-0 expression and returns its value on the host (synchronises on cuda).
  auto item() const;
};

/// A constant leaf; it has the dtype of the tensor it meets and is readable from any backend.
template <class T> class scalar_expr : public expr_base<scalar_expr<T>> {
  T value_;

 public:
  using texpr_node = void;
  using value_type = T;
  using kernel_dtype = T;
  using op_type = op::scalar;
  using backend = any_backend;
  using children = detail::type_list<>;
  static constexpr std::size_t rank = 0;
  static constexpr bool is_elementwise = true;

  /// Wraps a value already converted to the tensor's dtype.
  explicit scalar_expr(T v) : value_(v) {}
  /// The constant.
  T value() const { return value_; }
  /// Always ().
  shape_t<0> shape() const { return {}; }

  struct accessor_type {
    T v;
    bool dense() const { return true; }
    TEXPR_HOST_DEVICE T linear(index_t) const { return v; }
    TEXPR_HOST_DEVICE T at(const index_t*) const { return v; }
    TEXPR_HOST_DEVICE void seek_row(const index_t*) {}
    TEXPR_HOST_DEVICE T in_row(index_t) const { return v; }
  };
  template <std::size_t RO, class B> accessor_type accessor(const shape_t<RO>&, detail::context<B>&) const {
    return {value_};
  }
  template <class F> void for_each_child(F&&) const {}
  template <class F> void for_each_leaf(F&&, bool) const {}
};

/// Leaf referring to a named tensor: the graph reads the tensor's current data when evaluated.
template <class Tensor> class tensor_ref : public expr_base<tensor_ref<Tensor>> {
  const Tensor* t_;

 public:
  using texpr_node = void;
  using value_type = typename Tensor::value_type;
  using kernel_dtype = value_type;
  using op_type = op::leaf;
  using backend = typename Tensor::backend;
  using children = detail::type_list<>;
  static constexpr std::size_t rank = Tensor::rank;
  static constexpr bool is_elementwise = true;

  /// References t; t must outlive the expression (as for any named variable captured by reference).
  explicit tensor_ref(const Tensor& t) : t_(&t) {}
  /// The referenced tensor's current shape.
  shape_t<rank> shape() const { return t_->shape(); }
  /// The referenced tensor.
  const Tensor& get() const { return *t_; }
  template <std::size_t RO, class B> auto accessor(const shape_t<RO>& out, detail::context<B>&) const {
    return detail::make_leaf_accessor(t_->data(), t_->shape(), contiguous_strides(t_->shape()), out);
  }
  template <class F> void for_each_child(F&&) const {}
  template <class F> void for_each_leaf(F&& f, bool direct) const {
    f(detail::describe_leaf(t_->data(), t_->shape(), contiguous_strides(t_->shape())), direct);
  }
};

/// Leaf owning a tensor that was a temporary when the expression was built, so `auto e = ...` never dangles.
template <class Tensor> class tensor_owner : public expr_base<tensor_owner<Tensor>> {
  std::shared_ptr<const Tensor> t_;

 public:
  using texpr_node = void;
  using value_type = typename Tensor::value_type;
  using kernel_dtype = value_type;
  using op_type = op::leaf;
  using backend = typename Tensor::backend;
  using children = detail::type_list<>;
  static constexpr std::size_t rank = Tensor::rank;
  static constexpr bool is_elementwise = true;

  /// Takes ownership of a moved-in tensor (shared by copies of the expression).
  explicit tensor_owner(Tensor&& t) : t_(std::make_shared<const Tensor>(std::move(t))) {}
  /// The owned tensor's shape.
  shape_t<rank> shape() const { return t_->shape(); }
  /// The owned tensor.
  const Tensor& get() const { return *t_; }
  template <std::size_t RO, class B> auto accessor(const shape_t<RO>& out, detail::context<B>&) const {
    return detail::make_leaf_accessor(t_->data(), t_->shape(), contiguous_strides(t_->shape()), out);
  }
  template <class F> void for_each_child(F&&) const {}
  template <class F> void for_each_leaf(F&& f, bool direct) const {
    f(detail::describe_leaf(t_->data(), t_->shape(), contiguous_strides(t_->shape())), direct);
  }
};

namespace detail {

/// Turns an operand into the node stored in a graph: named tensors by reference, temporaries moved in,
/// views and expression nodes by value.
template <class E> auto capture(E&& e) {
  using D = std::remove_cvref_t<E>;
  if constexpr (is_tensor_v<D>) {
    if constexpr (std::is_lvalue_reference_v<E>) return tensor_ref<D>(e);
    else return tensor_owner<D>(std::move(e));
  } else {
    static_assert(node<D>, "texpr: operand is not a texpr tensor, view or expression");
    return D(std::forward<E>(e));
  }
}

/// The node type an operand becomes inside a graph.
template <class E> using captured_t = decltype(capture(std::declval<E>()));

/// The backend two operands share; any_backend (scalars) defers to the other side.
template <class A, class B> struct join_backend {
  using type = std::conditional_t<std::is_same_v<A, any_backend>, B, A>;
};
template <class... Bs> struct common_backend;
template <class B> struct common_backend<B> { using type = B; };
template <class B1, class B2, class... Bs> struct common_backend<B1, B2, Bs...> {
  using type = typename common_backend<typename join_backend<B1, B2>::type, Bs...>::type;
};

} // namespace detail
} // namespace texpr
