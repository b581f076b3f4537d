// Evaluation: writing a graph into a destination, materialising sub-results, tx::eval and item().
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "texpr/backend/host/executor.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/detail/memory.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/placement/runs_on.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

template <class N> inline constexpr bool is_leaf_v = std::is_same_v<typename N::op_type, op::leaf>;

/// The read-only view a leaf node reads from.
template <class N> auto leaf_view(const N& n) {
  using V = view<const typename N::value_type, N::rank, typename N::backend>;
  if constexpr (is_view_v<N>) return V(n);
  else return V(n.get().view());
}

/// Accessor over a node in its own shape (used by reductions to read their child).
template <class N, class B> auto read_accessor(const N& n, context<B>& ctx) { return n.accessor(n.shape(), ctx); }

template <class N, class T, std::size_t R, class B>
void evaluate_into(const view<T, R, B>& dest, const N& n, context<B>& ctx);

/// The node's value as a view: leaves as they are, anything else evaluated into a kept temporary.
template <class N, class B> auto materialize(const N& n, context<B>& ctx) {
  using T = typename N::value_type;
  using V = view<const T, N::rank, B>;
  if constexpr (is_leaf_v<N>) {
    return V(leaf_view(n));
  } else {
    auto t = std::make_shared<tensor<T, N::rank, B>>();
    t->allocate_uninitialized(n.shape(), ctx.stream);
    evaluate_into(t->view(), n, ctx);
    ctx.keep.push_back(t);
    return V(std::as_const(*t).view());
  }
}

/// Like materialize, but also copies strided leaves so the result is row-major contiguous (for GEMM).
template <class N, class B> auto materialize_contiguous(const N& n, context<B>& ctx) {
  using T = typename N::value_type;
  using V = view<const T, N::rank, B>;
  if constexpr (is_leaf_v<N>) {
    V v = leaf_view(n);
    if (v.is_contiguous()) return v;
    auto t = std::make_shared<tensor<T, N::rank, B>>();
    t->allocate_uninitialized(v.shape(), ctx.stream);
    evaluate_into(t->view(), v, ctx);
    ctx.keep.push_back(t);
    return V(std::as_const(*t).view());
  } else {
    return materialize(n, ctx);
  }
}

// True when writing dest while reading n could read an element after it was overwritten.
template <class N, class T, std::size_t R, class B> bool needs_buffer(const view<T, R, B>& dest, const N& n) {
  if constexpr (!N::is_elementwise)
    if (!dest.is_contiguous()) return true;
  const leaf_memory d = describe_leaf<T>(dest.data(), dest.shape(), dest.strides());
  if (!d.lo) return false;
  bool unsafe = false;
  n.for_each_leaf(
      [&](const leaf_memory& m, bool direct) {
        if (!m.lo || !(m.lo < d.hi && d.lo < m.hi)) return;
        // Reading each element exactly where it is written, in a fused pass, is safe (a = a + b).
        const bool same_layout = direct && m.data == d.data && m.contiguous && d.contiguous && m.size == d.size;
        if (!same_layout) unsafe = true;
      },
      true);
  return unsafe;
}

/// Evaluates node n into dest; the shapes must match exactly. Aliased reads go through a temporary.
template <class N, class T, std::size_t R, class B>
void evaluate_into(const view<T, R, B>& dest, const N& n, context<B>& ctx) {
  static_assert(R == N::rank, "texpr: destination rank differs from the expression's rank");
  check_same_dtype<T, typename N::value_type>();
  if constexpr (std::is_same_v<T, typename N::value_type>) {
    check_same_backend<B, typename N::backend>();
    if constexpr (std::is_same_v<B, typename N::backend> || std::is_same_v<typename N::backend, any_backend>) {
      check_placement<N, B>();
      if (n.shape() != dest.shape())
        throw shape_error("texpr: cannot assign an expression of shape " + texpr::to_string(n.shape()) +
                          " to a destination of shape " + texpr::to_string(dest.shape()));
      if (needs_buffer(dest, n)) {
        tensor<T, R, B> tmp;
        tmp.allocate_uninitialized(dest.shape(), ctx.stream);
        evaluate_into(tmp.view(), n, ctx);
        executor<B>::assign(dest, make_leaf_accessor<T>(tmp.data(), tmp.shape(), tmp.strides(), dest.shape()), ctx);
        return;
      }
      if constexpr (N::is_elementwise) executor<B>::assign(dest, n.accessor(dest.shape(), ctx), ctx);
      else n.evaluate_into(dest, ctx);
    }
  }
}

/// Evaluates e into a fresh allocation of t.
template <class T, std::size_t R, class B, class E> void assign_new(tensor<T, R, B>& t, E&& e, stream_t stream) {
  auto n = capture(std::forward<E>(e));
  static_assert(decltype(n)::rank == R, "texpr: the expression's rank differs from the tensor's rank");
  context<B> ctx{stream, {}};
  tensor<T, R, B> out;
  out.allocate_uninitialized(n.shape(), stream);
  evaluate_into(out.view(), n, ctx);
  t = std::move(out);
}

/// Evaluates e into t's storage; a tensor without storage (empty) takes e's shape.
template <class T, std::size_t R, class B, class E> void assign_to(tensor<T, R, B>& t, E&& e, stream_t stream) {
  auto n = capture(std::forward<E>(e));
  static_assert(decltype(n)::rank == R, "texpr: the expression's rank differs from the tensor's rank");
  context<B> ctx{stream, {}};
  if (t.data() == nullptr) {  // no storage yet (default, moved-from or size 0): take e's shape
    tensor<T, R, B> out;
    out.allocate_uninitialized(n.shape(), stream);
    evaluate_into(out.view(), n, ctx);
    t = std::move(out);
    return;
  }
  evaluate_into(t.view(), n, ctx);
}

/// Evaluates e through a view into memory texpr does not own.
template <class T, std::size_t R, class B, class E> void assign_to_view(const view<T, R, B>& v, E&& e, stream_t stream) {
  auto n = capture(std::forward<E>(e));
  static_assert(decltype(n)::rank == R, "texpr: the expression's rank differs from the view's rank");
  context<B> ctx{stream, {}};
  evaluate_into(v, n, ctx);
}

/// Copies one element from Backend memory to the host.
template <class B, class T> T read_element(const T* p, stream_t stream) {
  T v{};
  memory<B>::copy_to_host(&v, p, sizeof(T), stream);
  return v;
}

} // namespace texpr::detail

namespace texpr {

/// Evaluates e into a new tensor on e's backend (the graph must run there; checked at compile time).
template <operand E> auto eval(E&& e, stream_t stream = nullptr) {
  using N = detail::captured_t<E>;
  using B = typename N::backend;
  static_assert(backend_tag<B>, "texpr: cannot evaluate a graph with no tensor operand");
  using R = tensor<typename N::value_type, N::rank, B>;
  if constexpr (is_tensor_v<E> && std::is_lvalue_reference_v<E>) return R(std::as_const(e).view(), stream);  // deep copy
  else if constexpr (is_tensor_v<E>) return R(std::move(e));  // a temporary tensor is its own value
  else return R(std::forward<E>(e), stream);
}

template <class Derived> auto expr_base<Derived>::item() const {
  const auto& self = static_cast<const Derived&>(*this);
  using N = detail::captured_t<const Derived&>;
  using B = typename N::backend;
  static_assert(N::rank == 0, "texpr: item() needs a rank-0 expression (e.g. tx::sum(x)); use tx::eval for others");
  detail::context<B> ctx{};
  auto n = detail::capture(self);
  auto v = detail::materialize(n, ctx);
  if (v.data() == nullptr) throw shape_error("texpr: item() of an empty rank-0 tensor");
  return detail::read_element<B>(v.data(), ctx.stream);
}

} // namespace texpr
