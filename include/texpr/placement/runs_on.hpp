// Compile-time placement: runs_on, require_on and the search for the first offending node.
#pragma once

#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/placement/diagnostics.hpp"
#include "texpr/registry/kernel.hpp"

namespace texpr {

namespace detail {

// Whether node N alone (not its children) can run on Backend.
template <class N, class Backend> constexpr bool node_runs_on() {
  using Op = typename N::op_type;
  if constexpr (std::is_same_v<Op, op::leaf>) return std::is_same_v<typename N::backend, Backend>;
  else if constexpr (std::is_same_v<Op, op::scalar>) return true;
  else return has_kernel<Op, typename N::kernel_dtype, Backend>;
}

template <class N, class Backend> struct graph_check;
template <class N, class Backend, class Children> struct children_check;
template <class N, class Backend> struct children_check<N, Backend, type_list<>> {
  static constexpr bool ok = true;
  using offender = void;
};
template <class N, class Backend, class C, class... Cs> struct children_check<N, Backend, type_list<C, Cs...>> {
  using head = graph_check<C, Backend>;
  using tail = children_check<N, Backend, type_list<Cs...>>;
  static constexpr bool ok = head::ok && tail::ok;
  using offender = std::conditional_t<!head::ok, typename head::offender, typename tail::offender>;
};

// The diagnostic type naming node N on Backend.
template <class N, class Backend> auto diagnose() {
  using Op = typename N::op_type;
  if constexpr (std::is_same_v<Op, op::leaf>)
    return std::type_identity<diagnostic::operand_on_other_backend<typename N::backend, Backend>>{};
  else if constexpr (registered_kernel<Op, typename N::kernel_dtype, Backend>)
    return std::type_identity<diagnostic::kernel_forbidden<Op, dtype_tag_t<typename N::kernel_dtype>, Backend>>{};
  else
    return std::type_identity<diagnostic::no_kernel<Op, dtype_tag_t<typename N::kernel_dtype>, Backend>>{};
}

// Post-order walk: the first offender is the first node that evaluation would reach.
template <class N, class Backend> struct graph_check {
  using kids = children_check<N, Backend, typename N::children>;
  static constexpr bool self_ok = node_runs_on<N, Backend>();
  static constexpr bool ok = kids::ok && self_ok;
  using offender = std::conditional_t<!kids::ok, typename kids::offender,
                                      std::conditional_t<self_ok, void, typename decltype(diagnose<N, Backend>())::type>>;
};

/// Fails to compile, naming the first offending node, unless graph N runs entirely on Backend.
template <class N, class Backend> constexpr void check_placement() {
  if constexpr (!graph_check<N, Backend>::ok) (void)sizeof(typename graph_check<N, Backend>::offender);
}

} // namespace detail

/// Holds when every node of E's graph has a kernel for its dtype on Backend and every leaf lives there.
template <class E, class Backend>
concept runs_on = operand<E> && backend_tag<Backend> && detail::graph_check<detail::captured_t<E>, Backend>::ok;

/// The diagnostic type of the first node of E that cannot run on Backend (void when none).
template <class E, class Backend>
using first_offender_t = typename detail::graph_check<detail::captured_t<E>, Backend>::offender;

/// Returns e unchanged; fails to compile, naming the first offending node's op, dtype and the backend,
/// unless the whole graph runs on Backend.
template <class Backend, operand E> decltype(auto) require_on(E&& e) {
  static_assert(backend_tag<Backend>, "texpr: require_on<Backend> needs tx::host or tx::cuda");
  detail::check_placement<detail::captured_t<E>, Backend>();
  if constexpr (std::is_lvalue_reference_v<E>) return (e);
  else return std::remove_cvref_t<E>(std::move(e));
}

} // namespace texpr
