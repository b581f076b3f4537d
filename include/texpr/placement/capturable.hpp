// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compile-time capture check: tx::capturable and tx::require_capturable, the promise tx::capture_step relies on.
#pragma once

#include <type_traits>
#include <utility>

#include "texpr/core/backend.hpp"
#include "texpr/detail/type_list.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/placement/runs_on.hpp"
#include "texpr/registry/kernel.hpp"

namespace texpr {

namespace detail {

// Whether node N alone enqueues only capture-safe work on cuda (its children are checked by the walk).
template <class N> constexpr bool node_capture_safe() {
  using Op = typename N::op_type;
  if constexpr (op::category_v<Op> == op::kind::memory || op::category_v<Op> == op::kind::constant) return true;
  else if constexpr (requires { requires Op::reads_indices_on_host; }) return false;  // a copy to the host and a wait
  else return kernel<Op, typename N::kernel_dtype, cuda>::capture_safe;
}

template <class N> struct capture_walk;
template <class... C> constexpr bool all_capture_safe(type_list<C...>) { return (capture_walk<C>::value && ...); }
template <class N> struct capture_walk {
  using children = typename N::children;
  static constexpr bool value = all_capture_safe(children{}) && node_capture_safe<N>();
};

// Whether some leaf of N lives in host memory (on cuda it would need a pageable host to device copy).
template <class N> struct has_host_leaf;
template <class... C> constexpr bool any_host_leaf(type_list<C...>) { return (has_host_leaf<C>::value || ...); }
template <class N> struct has_host_leaf {
  using children = typename N::children;
  static constexpr bool value = any_host_leaf(children{}) || (op::category_v<typename N::op_type> == op::kind::memory &&
                                                              std::is_same_v<typename N::backend, host>);
};

} // namespace detail

/// Holds when evaluating E on cuda can be captured into a CUDA graph: every leaf lives in device memory (no host
/// to device copy), every node has a cuda kernel, and every kernel only enqueues stream-ordered work: no host wait,
/// no host read of device data (item(), to_host are calls, not nodes, and cannot be part of E), no allocation
/// outside texpr's device cache. tx::capture_step static_asserts it for each graph it captures.
template <class E>
concept capturable = operand<E> && runs_on<E, cuda> && detail::capture_walk<detail::captured_t<E>>::value;

/// Returns e unchanged; fails to compile, saying why, unless E is capturable. A value that is not an expression
/// (what item() or to_host returned: device data already read on the host) is rejected too.
template <class E> decltype(auto) require_capturable(E&& e) {
  if constexpr (!operand<E>) {
    static_assert(operand<E>,
                  "texpr: tx::capture_step records device work, and this is not an expression but a value already on the "
                  "host (item() and to_host wait for the device and read its memory, which a CUDA graph cannot do); "
                  "capture the expression and read its result tensor after replay");
  } else if constexpr (detail::has_host_leaf<detail::captured_t<E>>::value) {
    static_assert(!detail::has_host_leaf<detail::captured_t<E>>::value,
                  "texpr: tx::capture_step needs every leaf in device memory; a host tensor in the graph would need a "
                  "pageable host to device copy, which a CUDA graph cannot hold: copy the data into a device staging "
                  "tensor before capture and build the graph on views of it");
  } else if constexpr (!runs_on<E, cuda>) {
    detail::check_placement<detail::captured_t<E>, cuda>();  // names the first node without a cuda kernel
  } else {
    static_assert(detail::capture_walk<detail::captured_t<E>>::value,
                  "texpr: a kernel of this graph waits for the device or allocates outside texpr's cache; it cannot "
                  "run inside a CUDA graph capture");
  }
  if constexpr (std::is_lvalue_reference_v<E>) return (e);
  else return std::remove_cvref_t<E>(std::forward<E>(e));
}

} // namespace texpr
