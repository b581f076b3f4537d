// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading nodes: the accessor of any node (by its op kind, never its concrete type), its value as memory
// (materialised when it is not memory already), and the memory a layout node describes.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/context.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/accessor.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/kind.hpp"
#include "texpr/registry/kernel.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

template <class N, class T, std::size_t R, class B> void evaluate_into(const view<T, R, B>& dest, const N& n, context<B>& ctx);

/// The read-only view type of node N's value on backend B.
template <class N, class B> using value_view_t = view<const typename N::value_type, N::rank, B>;

/// A temporary for a node's value on B, kept alive by ctx.
template <class T, std::size_t R, class B> tensor<T, R, B>& temporary(const shape_t<R>& shape, context<B>& ctx) {
  auto t = std::make_shared<tensor<T, R, B>>();
  t->allocate_uninitialized(shape, ctx.stream);
  ctx.keep.push_back(t);
  return *t;
}

/// p + offset, except that an empty value's null memory stays null: no element of it is ever read, and offsetting
/// a null pointer is undefined.
template <class T> T* offset_data(T* p, index_t offset) noexcept { return p == nullptr ? p : p + offset; }

/// The node's value as memory: leaves as they are, layouts as the view they describe, anything else evaluated
/// into a temporary kept by ctx.
template <class N, class B> value_view_t<N, B> materialize(const N& n, context<B>& ctx) {
  using T = typename N::value_type;
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (k == op::kind::memory) {
    return n.storage(ctx);
  } else if constexpr (k == op::kind::layout) {
    return kernel<typename N::op_type, T, B>::view_of(n, ctx);
  } else {
    auto& t = temporary<T, N::rank, B>(n.shape(), ctx);
    evaluate_into(t.view(), n, ctx);
    return std::as_const(t).view();
  }
}

/// Like materialize, and row-major contiguous (strided memory is copied), as kernels reading raw rows need.
template <class N, class B> value_view_t<N, B> materialize_contiguous(const N& n, context<B>& ctx) {
  auto v = materialize(n, ctx);
  if (v.is_contiguous()) return v;
  auto& t = temporary<typename N::value_type, N::rank, B>(v.shape(), ctx);
  evaluate_into(t.view(), v, ctx);
  return std::as_const(t).view();
}

/// The memory layout node n describes: its operand's memory (materialised first when the operand is not memory)
/// with the layout's extents and strides; an operand the strides cannot express (a reshape of strided memory)
/// is copied to contiguous memory first.
template <class N, class B> value_view_t<N, B> layout_storage(const N& n, context<B>& ctx) {
  constexpr std::size_t R = N::rank;
  shape_t<R> shape{}, strides{};
  index_t offset = 0;
  const auto v = materialize(n.child(), ctx);
  if (n.params().map(v.shape(), v.strides(), shape, strides, offset))
    return value_view_t<N, B>(unchecked_t{}, offset_data(v.data(), offset), shape, strides, v.stream());
  const auto c = materialize_contiguous(v, ctx);
  offset = 0;
  n.params().map(c.shape(), c.strides(), shape, strides, offset);
  return value_view_t<N, B>(unchecked_t{}, offset_data(c.data(), offset), shape, strides, c.stream());
}

/// The writable memory a layout of a named tensor or mutable view selects (assignment through a layout).
template <class N> auto layout_writable_storage(const N& n) {
  using T = typename N::value_type;
  using B = typename N::backend;
  constexpr std::size_t R = N::rank;
  const auto v = [&] {
    if constexpr (kind_of_v<decltype(n.child())> == op::kind::layout) return layout_writable_storage(n.child());
    else return n.child().writable_storage();
  }();
  shape_t<R> shape{}, strides{};
  index_t offset = 0;
  if (!n.params().map(v.shape(), v.strides(), shape, strides, offset))
    throw shape_error("texpr: cannot assign through " + std::string(N::op_type::name) + " of a non-contiguous operand of shape " +
                      to_string(v.shape()) + ": its elements have no single stride pattern");
  return view<T, R, B>(unchecked_t{}, offset_data(v.data(), offset), shape, strides, v.stream());
}

/// dest = concat node n: each operand evaluated into its slice of dest along n.axis() (what both backends'
/// copy_slices rows run).
template <class N, class T, std::size_t R, class B, std::size_t... I>
void concat_into(const N& n, const view<T, R, B>& dest, context<B>& ctx, std::index_sequence<I...>) {
  const std::size_t a = n.axis();
  const auto part = [&](std::size_t i, const auto& operand) {
    const auto s = n.slice_shape(i);
    if (s[a] == 0) return;  // (tx::placement: "an empty slice")
    evaluate_into(view<T, R, B>(unchecked_t{}, dest.data() + n.offset(i) * dest.strides()[a], s, dest.strides(), dest.stream()), operand, ctx);
  };
  (part(I, get<I>(n.operands())), ...);
}

/// The hook a composite's expansion is given: keep(e) evaluates an intermediate e into a temporary and returns its
/// memory; keep.result(e) evaluates e (of the result's shape) into the destination and returns that memory, for an
/// expansion whose last pass reads a partial result in place (softmax: exp(x - max), then divided by its sums).
template <class T, std::size_t R, class B> struct composite_keep {
  const view<T, R, B>& dest;
  context<B>& ctx;
  template <class E> auto operator()(const E& e) const { return materialize(capture(e), ctx); }
  template <class E> view<const T, R, B> result(const E& e) const {
    evaluate_into(dest, capture(e), ctx);
    return dest;
  }
};

/// dest = composite node n: its operands evaluated once into memory, then its expansion over that memory (what
/// both backends' composed rows run). dest is contiguous and overlaps no operand (evaluate_checked sees to it).
/// An empty result has nothing to compute: softmax along an axis of length 0 is empty, as in PyTorch, and its
/// expansion's max over that axis has no identity.
template <class N, class T, std::size_t R, class B, std::size_t... I>
void compose_into(const N& n, const view<T, R, B>& dest, context<B>& ctx, std::index_sequence<I...>) {
  if (dest.size() == 0) return;
  composite_keep<T, R, B> keep{dest, ctx};
  // Braced, so the operands are evaluated in order (what tx::placement lists), not in the compiler's argument order.
  const std::tuple<value_view_t<std::remove_cvref_t<decltype(get<I>(n.operands()))>, B>...> operands{
      materialize(get<I>(n.operands()), ctx)...};
  evaluate_into(dest, capture(n.expand(keep, std::get<I>(operands)...)), ctx);
}

template <std::size_t RO, class N, class B> auto read(const N& n, const shape_t<RO>& out, context<B>& ctx);

/// The map accessor of an elementwise node: its op (through its registry row) over its operands' accessors.
template <std::size_t RO, class N, class B, std::size_t... I>
auto read_map(const N& n, const shape_t<RO>& out, context<B>& ctx, std::index_sequence<I...>) {
  using K = kernel<typename N::op_type, typename N::kernel_dtype, B>;
  using M = map_accessor<K, typename N::op_type, typename N::value_type, decltype(read(get<I>(n.operands()), out, ctx))...>;
  return M{{{read(get<I>(n.operands()), out, ctx)}...}};
}

/// The accessor of node n broadcast to `out`, on backend B.
template <std::size_t RO, class N, class B> auto read(const N& n, const shape_t<RO>& out, context<B>& ctx) {
  using T = typename N::value_type;
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (k == op::kind::constant) {
    check_broadcastable(n.shape(), out, "operand");
    return constant_accessor<T>{n.value()};
  } else if constexpr (k == op::kind::generator) {
    return make_strided_accessor(n.source(), n.shape(), contiguous_strides(n.shape()), out);
  } else if constexpr (k == op::kind::elementwise) {
    return read_map(n, out, ctx, std::make_index_sequence<N::children::size>{});
  } else {
    const auto v = materialize(n, ctx);
    return make_strided_accessor(memory_source<T>{v.data()}, v.shape(), v.strides(), out);
  }
}

/// The accessor a scan kernel folds over node n: its operand's, or for a linear recurrence the pair of its two
/// operands' (coefficient, term), both read fused.
template <class N, class B> auto scan_operand(const N& n, context<B>& ctx) {
  if constexpr (N::children::size == 1) {
    return read(get<0>(n.operands()), n.shape(), ctx);
  } else {
    auto a = read(get<0>(n.operands()), n.shape(), ctx);
    auto b = read(get<1>(n.operands()), n.shape(), ctx);
    using A = decltype(a);
    using Bacc = decltype(b);
    return pair_accessor<typename A::value_type, typename Bacc::value_type, A, Bacc>{a, b};
  }
}

} // namespace texpr::detail
