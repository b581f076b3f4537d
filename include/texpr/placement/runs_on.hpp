// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time placement: runs_on, runs_on_arch, require_on and the search for the first offending node.
#pragma once

#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/core/diagnostics.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/saved.hpp"
#include "texpr/registry/kernel.hpp"

namespace texpr {

namespace detail {

// The diagnostic naming node N alone (not its children) on Backend for every architecture of Targets
// (cuda_targets<...>), or void when it can run there.
template <class N, class Backend, class Targets> struct node_offender {
  using Op = typename N::op_type;
  static auto pick() {
    if constexpr (op::category_v<Op> == op::kind::memory) {
      if constexpr (!std::is_same_v<typename N::backend, Backend>)
        return std::type_identity<diagnostic::operand_on_other_backend<typename N::backend, Backend>>{};
      else if constexpr (is_saved_v<N>)
        return std::type_identity<typename N::offender>{};
      else
        return std::type_identity<void>{};
    } else if constexpr (op::category_v<Op> == op::kind::constant) {
      if constexpr (std::is_same_v<typename N::backend, any_backend> || std::is_same_v<typename N::backend, Backend>)
        return std::type_identity<void>{};
      else
        return std::type_identity<diagnostic::operand_on_other_backend<typename N::backend, Backend>>{};
    } else if constexpr (has_kernel<Op, typename N::kernel_dtype, Backend>) {
      using K = typename N::kernel_dtype;
      using too_old = target_below_kernel_t<Op, K, Backend, Targets>;
      using forbidden_there = target_forbidden_t<Op, K, Targets>;
      if constexpr (!std::is_void_v<too_old>)
        return std::type_identity<diagnostic::kernel_needs_newer_arch<Op, dtype_tag_t<K>, Backend, too_old,
                                                                      sm<kernel_min_arch_v<Op, K, Backend>>>>{};
      else if constexpr (!std::is_void_v<forbidden_there>)
        return std::type_identity<diagnostic::kernel_forbidden_on_arch<Op, dtype_tag_t<K>, forbidden_there>>{};
      else
        return std::type_identity<void>{};
    } else if constexpr (registered_kernel<Op, typename N::kernel_dtype, Backend>) {
      return std::type_identity<diagnostic::kernel_forbidden<Op, dtype_tag_t<typename N::kernel_dtype>, Backend>>{};
    } else {
      return std::type_identity<diagnostic::no_kernel<Op, dtype_tag_t<typename N::kernel_dtype>, Backend>>{};
    }
  }
  using type = typename decltype(pick())::type;
};

template <class N, class Backend, class Targets> struct graph_check;
template <class List, class Backend, class Targets> struct first_of;
template <class Backend, class Targets> struct first_of<type_list<>, Backend, Targets> { using type = void; };
template <class C, class... Cs, class Backend, class Targets> struct first_of<type_list<C, Cs...>, Backend, Targets> {
  using head = typename graph_check<C, Backend, Targets>::offender;
  using type = std::conditional_t<std::is_void_v<head>, typename first_of<type_list<Cs...>, Backend, Targets>::type, head>;
};

// Post-order: the first offender is the first node evaluation would reach.
template <class N, class Backend, class Targets = targets_of_t<Backend>> struct graph_check {
  using children_offender = typename first_of<typename N::children, Backend, Targets>::type;
  using offender = std::conditional_t<std::is_void_v<children_offender>, typename node_offender<N, Backend, Targets>::type,
                                      children_offender>;
  static constexpr bool ok = std::is_void_v<offender>;
};

/// Fails to compile, naming the first offending node, unless graph N runs entirely on Backend, on every
/// architecture of Targets (default: the build's, on cuda).
template <class N, class Backend, class Targets = targets_of_t<Backend>> constexpr void check_placement() {
  using offender = typename graph_check<N, Backend, Targets>::offender;
  if constexpr (!std::is_void_v<offender>) (void)sizeof(offender);
}

} // namespace detail

/// Holds when every node of E's graph has a kernel for its dtype on Backend and every leaf lives there; on cuda,
/// a kernel that runs on every architecture this translation unit is built for (build_cuda_targets).
template <class E, class Backend>
concept runs_on = operand<E> && backend_tag<Backend> && detail::graph_check<detail::captured_t<E>, Backend>::ok;

/// Holds when E's graph runs on cuda on each of the architectures Archs (`runs_on_arch<G, 80>`: on sm_80, hence on
/// every newer one; rows declare only a minimum), whatever this translation unit is built for.
template <class E, int... Archs>
concept runs_on_arch = operand<E> && (sizeof...(Archs) > 0) &&
                       detail::graph_check<detail::captured_t<E>, cuda, cuda_targets<Archs...>>::ok;

/// The diagnostic type of the first node of E that cannot run on Backend (void when none).
template <class E, class Backend, class Targets = targets_of_t<Backend>>
using first_offender_t = typename detail::graph_check<detail::captured_t<E>, Backend, Targets>::offender;

/// Returns e unchanged; fails to compile, naming the first offending node's op, dtype and the backend (and the
/// architecture, on cuda), unless the whole graph runs on Backend.
template <class Backend, operand E> decltype(auto) require_on(E&& e) {
  static_assert(backend_tag<Backend>, "texpr: require_on<Backend> needs tx::host or tx::cuda");
  detail::check_placement<detail::captured_t<E>, Backend>();
  if constexpr (std::is_lvalue_reference_v<E>) return (e);
  else return std::remove_cvref_t<E>(std::move(e));
}

} // namespace texpr
