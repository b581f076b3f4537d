// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What every expression node is: the node concept, the CRTP base, the leaves (named tensors, moved-in
// temporaries, constants) and operand capture. Nodes are data; the evaluation layer (eval/) reads them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include "texpr/core/source_location.hpp"
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/diagnostics.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/tuple.hpp"
#include "texpr/detail/type_list.hpp"
#include "texpr/fwd.hpp"
#include "texpr/op/kind.hpp"

namespace texpr {

namespace detail {
/// Names the op and dtype when an op that orders values meets a complex operand (its operands share one dtype:
/// the first one's is named).
template <class Op, class T, class... Rest> constexpr void check_ordered() {
  if constexpr (op::orders_values<Op> && (is_complex_v<T> || (is_complex_v<Rest> || ...)))
    (void)sizeof(diagnostic::complex_has_no_order<Op, dtype_tag_t<T>>);
}

template <class T> struct is_tensor : std::false_type {};
template <class T, std::size_t R, class B> struct is_tensor<tensor<T, R, B>> : std::true_type {};
template <class T> struct is_view : std::false_type {};
template <class T, std::size_t R, class B> struct is_view<view<T, R, B>> : std::true_type {};
/// First argument of the evaluation entry points that tensors, views and writable layouts call (evaluate_to,
/// evaluate_to_view, evaluate_through): eval/assign.hpp defines them, and argument-dependent lookup finds them
/// where those templates are instantiated, so no lower layer declares anything of the evaluation layer.
struct evaluation_entry {};
} // namespace detail

/// True for tx::tensor types.
template <class T> inline constexpr bool is_tensor_v = detail::is_tensor<std::remove_cvref_t<T>>::value;
/// True for tx::view types.
template <class T> inline constexpr bool is_view_v = detail::is_view<std::remove_cvref_t<T>>::value;

/// Holds for expression graph nodes. Every node N has:
///   texpr_node             a marker;
///   op_type                its op tag: what it is, the registry key, and (op_type::category) how it is read;
///   value_type             its result dtype;
///   kernel_dtype           the dtype its registry row is looked up with (the operands'; for cast, the target);
///   backend                where its memory operands live (any_backend for constants);
///   children, rank         the operand node types (a type_list) and the result rank;
///   shape()                the result shape, validated when the node was built;
///   operands()             a detail::tuple (an aggregate) of the operand nodes.
/// Leaves over memory (op::kind::memory) also have storage(ctx), the view they read; constants value().
template <class E>
concept node = requires { typename std::remove_cvref_t<E>::texpr_node; };

/// Holds for anything usable as an operand of a texpr expression: tensors, views and expressions.
template <class E>
concept operand = node<E> || is_tensor_v<E>;

/// CRTP base of every expression node and of tensor/view: shared members such as item() and size().
template <class Derived> struct expr_base {
  /// Number of elements of the expression's result.
  index_t size() const { return shape_size(static_cast<const Derived&>(*this).shape()); }
  /// Evaluates a rank-0 expression and returns its value on the host (waits for the device on cuda).
  auto item(texpr::source_location loc = texpr::source_location::current()) const;
};

namespace detail {
/// Tag for constructors that skip checks on memory texpr manages itself.
struct unchecked_t {};
/// The empty operand tuple of leaves.
inline const tuple<>& no_operands() {
  static const tuple<> none{};
  return none;
}
} // namespace detail

/// A constant broadcast to a shape: a scalar in an expression (rank 0, readable from any backend) or a lazy
/// tx::zeros / ones / full (on Backend, costing no memory until assigned).
template <class T, std::size_t R = 0, class Backend = any_backend>
class constant_expr : public expr_base<constant_expr<T, R, Backend>> {
  T value_;
  shape_t<R> shape_{};

 public:
  using texpr_node = void;
  using op_type = op::constant;
  using value_type = T;
  using kernel_dtype = T;
  using backend = Backend;
  using children = detail::type_list<>;
  static constexpr std::size_t rank = R;

  /// A rank-0 constant (a value already converted to the tensor's dtype).
  explicit constant_expr(T v) : value_(v) {}
  /// The value v in every element of `shape`.
  constant_expr(T v, const shape_t<R>& shape) : value_(v), shape_(shape) {
    for (auto e : shape)
      if (e < 0) throw shape_error("texpr: negative extent in shape " + to_string(shape));
  }
  /// The constant.
  T value() const { return value_; }
  /// Its shape.
  const shape_t<R>& shape() const { return shape_; }
  /// No operands.
  const detail::tuple<>& operands() const { return detail::no_operands(); }
};

/// The rank-0 constant a scalar becomes.
template <class T> using scalar_expr = constant_expr<T, 0, any_backend>;

namespace detail {

/// Whether a tensor object still holds what the expressions referencing it were built over. The tensor and every
/// reference leaf over it share the record (an intrusive count), so a leaf finds out, before it reads, that its
/// tensor was destroyed or moved from, instead of reading freed memory. A tensor makes its record the first time an
/// expression references it; a check is one atomic load.
class liveness {
 public:
  /// What a leaf finds: its tensor is there, was moved from since the leaf was made, or was destroyed.
  enum class state : unsigned char { alive, moved_from, destroyed };
  liveness() = default;
  liveness(const liveness&) = delete;
  liveness& operator=(const liveness&) = delete;

  /// The number of moves out of the tensor so far: a leaf made after a move may read the empty moved-from tensor.
  std::uint64_t generation() const noexcept { return word_.load(std::memory_order_acquire) >> 2; }
  /// The state for a leaf made at `generation`.
  state get(std::uint64_t generation) const noexcept {
    const std::uint64_t w = word_.load(std::memory_order_acquire);
    if (w & destroyed_bit) return state::destroyed;
    if ((w & moved_bit) && (w >> 2) != generation) return state::moved_from;
    return state::alive;
  }
  /// The tensor's storage was moved out: leaves made before now fail until it holds storage again.
  void moved_from() noexcept { word_.store((((word_.load(std::memory_order_relaxed) >> 2) + 1) << 2) | moved_bit, std::memory_order_release); }
  /// The tensor holds storage (again).
  void holds_storage() noexcept { word_.fetch_and(~moved_bit, std::memory_order_acq_rel); }
  /// The tensor is gone.
  void destroyed() noexcept { word_.fetch_or(destroyed_bit, std::memory_order_acq_rel); }
  /// Adds a holder.
  void acquire() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  /// Drops a holder; the last one frees the record.
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  static constexpr std::uint64_t destroyed_bit = 1, moved_bit = 2;
  std::atomic<std::uint64_t> word_{0};   // generation << 2 | moved_bit | destroyed_bit
  std::atomic<std::size_t> refs_{1};     // the tensor's own
};

/// A counted hold on a liveness record, with the generation it was taken at.
class liveness_ref {
  liveness* p_ = nullptr;
  std::uint64_t generation_ = 0;

 public:
  /// Holds nothing (reads as alive).
  liveness_ref() = default;
  /// Holds p from its current generation on.
  explicit liveness_ref(liveness* p) noexcept : p_(p) {
    if (p_) {
      p_->acquire();
      generation_ = p_->generation();
    }
  }
  /// Holds what o holds.
  liveness_ref(const liveness_ref& o) noexcept : p_(o.p_), generation_(o.generation_) {
    if (p_) p_->acquire();
  }
  /// Takes o's hold.
  liveness_ref(liveness_ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)), generation_(o.generation_) {}
  /// Holds what o holds.
  liveness_ref& operator=(liveness_ref o) noexcept {
    std::swap(p_, o.p_);
    std::swap(generation_, o.generation_);
    return *this;
  }
  ~liveness_ref() {
    if (p_) p_->release();
  }
  /// The held tensor's state, as this hold sees it.
  liveness::state get() const noexcept { return p_ ? p_->get(generation_) : liveness::state::alive; }
};

/// A reference leaf's pointer to its named tensor, checked before each use: a destroyed or moved-from tensor is a
/// std::logic_error naming the tensor's dtype, rank and backend, never a read of freed memory.
template <class Tensor> class tensor_handle {
  Tensor* t_;
  liveness_ref live_;

 public:
  /// Refers to t and shares its liveness record.
  explicit tensor_handle(Tensor& t) : t_(&t), live_(t.liveness()) {}
  /// The tensor; throws std::logic_error when it no longer exists.
  Tensor& get() const {
    if (const auto s = live_.get(); s != liveness::state::alive) [[unlikely]]
      dangling(s);
    return *t_;
  }

 private:
  [[noreturn]] static void dangling(liveness::state s) {
    using U = std::remove_const_t<Tensor>;
    throw std::logic_error(
        std::string("texpr: an expression reads a tensor that no longer exists (") +
        (s == liveness::state::destroyed ? "destroyed" : "moved from") + "): a " + std::string(dtype_name_v<typename U::value_type>) +
        " tensor of rank " + std::to_string(U::rank) + " on " + std::string(U::backend::name) +
        ". An expression refers to the named tensors it reads; keep them alive and in place until it is evaluated, "
        "or std::move a tensor into the expression (docs/semantics.md, \"Expression lifetimes\")");
  }
};

} // namespace detail

/// Leaf referring to a named tensor: the graph reads the tensor's current data when evaluated. Tensor is const
/// when the tensor was const where the expression was built; otherwise the leaf can be assigned through. Reading
/// it after the tensor was destroyed or moved from throws std::logic_error.
template <class Tensor> class tensor_ref : public expr_base<tensor_ref<Tensor>> {
  detail::tensor_handle<Tensor> t_;

 public:
  using texpr_node = void;
  using value_type = typename std::remove_const_t<Tensor>::value_type;
  using kernel_dtype = value_type;
  using op_type = op::leaf;
  using backend = typename std::remove_const_t<Tensor>::backend;
  using children = detail::type_list<>;
  static constexpr std::size_t rank = std::remove_const_t<Tensor>::rank;
  /// True when the expression may write to the tensor (a layout of it on the left of `=`).
  static constexpr bool writable = !std::is_const_v<Tensor>;

  /// References t; t must outlive the expression (as for any named variable captured by reference).
  explicit tensor_ref(Tensor& t) : t_(t) {}
  /// The referenced tensor's current shape.
  shape_t<rank> shape() const { return t_.get().shape(); }
  /// The referenced tensor.
  Tensor& get() const { return t_.get(); }
  /// The memory the leaf reads.
  template <class B> view<const value_type, rank, backend> storage(context<B>&) const { return std::as_const(t_.get()).view(); }
  /// The memory, writable (only for a leaf of a non-const tensor).
  view<value_type, rank, backend> writable_storage() const
    requires writable
  {
    return t_.get().view();
  }
  /// No operands.
  const detail::tuple<>& operands() const { return detail::no_operands(); }
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
  static constexpr bool writable = false;  ///< A temporary: writing to it would be lost.

  /// Takes ownership of a moved-in tensor (shared by copies of the expression).
  explicit tensor_owner(Tensor&& t) : t_(std::make_shared<const Tensor>(std::move(t))) {}
  /// The owned tensor's shape.
  shape_t<rank> shape() const { return t_->shape(); }
  /// The owned tensor.
  const Tensor& get() const { return *t_; }
  /// The memory the leaf reads.
  template <class B> view<const value_type, rank, backend> storage(context<B>&) const { return t_->view(); }
  /// No operands.
  const detail::tuple<>& operands() const { return detail::no_operands(); }
};

namespace detail {

/// Turns an operand into the node stored in a graph: named tensors by reference (const when they were const),
/// temporaries moved in, views and expression nodes by value.
template <class E> auto capture(E&& e) {
  using D = std::remove_cvref_t<E>;
  if constexpr (is_tensor_v<D>) {
    if constexpr (std::is_lvalue_reference_v<E>) return tensor_ref<std::remove_reference_t<E>>(e);
    else return tensor_owner<D>(std::move(e));
  } else {
    static_assert(node<D>, "texpr: operand is not a texpr tensor, view or expression");
    return D(std::forward<E>(e));
  }
}

/// The node type an operand becomes inside a graph.
template <class E> using captured_t = decltype(capture(std::declval<E>()));

/// The backend two operands share; any_backend (constants) defers to the other side.
template <class A, class B> struct join_backend {
  using type = std::conditional_t<std::is_same_v<A, any_backend>, B, A>;
};
template <class... Bs> struct common_backend { using type = any_backend; };
template <class B> struct common_backend<B> { using type = B; };
template <class B1, class B2, class... Bs> struct common_backend<B1, B2, Bs...> {
  using type = typename common_backend<typename join_backend<B1, B2>::type, Bs...>::type;
};

/// The op kind of node N.
template <class N> inline constexpr op::kind kind_of_v = op::category_v<typename std::remove_cvref_t<N>::op_type>;

/// Calls f(child) for each operand of n, in order.
template <class N, class F> void for_each_operand(const N& n, F&& f) {
  detail::apply([&](const auto&... c) { (f(c), ...); }, n.operands());
}

} // namespace detail
} // namespace texpr
