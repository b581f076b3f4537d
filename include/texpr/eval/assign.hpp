// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The entry points of evaluation: assignment into tensors and views, tx::eval, item(), and the stream rule
// (an evaluation runs on the stream given, else the destination's, else that of the expression's first tensor).
#pragma once

#include <cstddef>
#include "texpr/core/source_location.hpp"
#include <string>
#include <type_traits>
#include <utility>

#include "texpr/core/config.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/diagnostics.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/detail/memory.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/saved.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

template <class N, std::size_t... I> stream_t preferred_stream_below(const N& n, std::index_sequence<I...>);

/// The stream of the first tensor or view (in operand order) that has one; nullptr (the default stream) if none.
template <class N> stream_t preferred_stream(const N& n) {
  if constexpr (kind_of_v<N> == op::kind::memory) {
    if constexpr (requires { n.get().stream(); }) return n.get().stream();
    else if constexpr (requires { n.stream(); }) return n.stream();
    else return nullptr;
  } else {
    return preferred_stream_below(n, std::make_index_sequence<N::children::size>{});
  }
}
template <class N, std::size_t... I> stream_t preferred_stream_below(const N& n, std::index_sequence<I...>) {
  stream_t s = nullptr;
  ((s = s ? s : preferred_stream(get<I>(n.operands()))), ...);
  return s;
}

// A rank mismatch is one diagnostic naming both ranks (and the entry points then stop: no cascade).
template <std::size_t RE, std::size_t RD> constexpr void diagnose_rank() {
  (void)sizeof(diagnostic::rank_mismatch<diagnostic::expression_rank<RE>, diagnostic::destination_rank<RD>>);
}

// Runs f(); a shape_error it throws gains the caller's file:line when known.
template <class F> void located(const texpr::source_location* loc, F&& f) {
  if (!loc) {
    f();
    return;
  }
  try {
    f();
  } catch (const shape_error& e) {
    const std::string prefix = at(*loc);
    const std::string what = e.what();
    if (what.rfind(prefix, 0) == 0) throw;
    throw shape_error(prefix + what);
  }
}

template <class B> constexpr void require_backend_compiler() { require_memory_compiler<B>(); }

// The evaluation entry points tensors, views and writable layouts call (expr/node.hpp, evaluation_entry): found
// by argument-dependent lookup where those templates are instantiated.

/// Evaluates e into t's storage; a tensor without storage (empty) takes e's shape.
template <class T, std::size_t R, class B, class E>
void evaluate_to(evaluation_entry, tensor<T, R, B>& t, E&& e, stream_t stream, const texpr::source_location* loc) {
  require_backend_compiler<B>();
  auto n = capture(std::forward<E>(e));
  constexpr std::size_t RE = decltype(n)::rank;
  if constexpr (RE != R) {
    diagnose_rank<RE, R>();
  } else {
    located(loc, [&] {
      context<B> ctx{memory<B>::resolve(stream ? stream : preferred_stream(n)), {}, {}};
      count_saved_readers(n, ctx);
      if (t.data() == nullptr) {  // no storage yet (default, moved-from or size 0): take e's shape
        tensor<T, R, B> out;
        out.allocate_uninitialized(n.shape(), ctx.stream);
        evaluate_into(out.view(), n, ctx);
        t = std::move(out);
        return;
      }
      evaluate_into(t.view(), n, ctx);
    });
  }
}
/// Evaluates e through a view into memory texpr does not own.
template <class T, std::size_t R, class B, class E>
void evaluate_to_view(evaluation_entry, const view<T, R, B>& v, E&& e, const texpr::source_location* loc) {
  require_backend_compiler<B>();
  auto n = capture(std::forward<E>(e));
  constexpr std::size_t RE = decltype(n)::rank;
  if constexpr (RE != R) {
    diagnose_rank<RE, R>();
  } else {
    located(loc, [&] {
      context<B> ctx{memory<B>::resolve(v.stream() ? v.stream() : preferred_stream(n)), {}, {}};
      count_saved_readers(n, ctx);
      if (v.size() > 0)
        for (std::size_t k = 0; k != R; ++k)
          if (v.shape()[k] > 1 && v.strides()[k] == 0)
            throw shape_error("texpr: cannot write through a view of shape " + to_string(v.shape()) +
                              " whose axis " + std::to_string(k) + " has stride 0 (its elements overlap)");
      evaluate_into(v, n, ctx);
    });
  }
}
/// Evaluates e into the memory a writable layout node selects.
template <class L, class E> void evaluate_through(evaluation_entry, const L& layout, E&& e) {
  evaluate_to_view(evaluation_entry{}, layout_writable_storage(layout), std::forward<E>(e), nullptr);
}

/// Copies one element from Backend memory to the host, on `stream` (waits for it on cuda).
template <class B, class T> T read_element(const T* p, stream_t stream) {
  T v{};
  memory<B>::copy_to_host(&v, p, sizeof(T), stream);
  return v;
}

} // namespace texpr::detail

namespace texpr {

/// Evaluates e into a new tensor on e's backend (the graph must run there; checked at compile time), on `stream`
/// for cuda (default: the stream of e's first tensor operand).
template <operand E>
auto eval(E&& e, stream_t stream = nullptr, texpr::source_location loc = texpr::source_location::current()) {
  using N = detail::captured_t<E>;
  using B = typename N::backend;
  static_assert(backend_tag<B>, "texpr: cannot evaluate a graph with no tensor operand");
  using R = tensor<typename N::value_type, N::rank, B>;
  if constexpr (is_tensor_v<E> && std::is_lvalue_reference_v<E>) return R(std::as_const(e).view(), stream, loc);  // deep copy
  else if constexpr (is_tensor_v<E>) return R(std::move(e));  // a temporary tensor is its own value
  else return R(std::forward<E>(e), stream, loc);
}

template <class Derived> auto expr_base<Derived>::item(texpr::source_location loc) const {
  const auto& self = static_cast<const Derived&>(*this);
  using N = detail::captured_t<const Derived&>;
  using B = typename N::backend;
  static_assert(N::rank == 0, "texpr: item() needs a rank-0 expression (e.g. tx::sum(x)); use tx::eval for others");
  static_assert(backend_tag<B>, "texpr: item() of a graph with no tensor operand: it has no backend to run on");
  detail::require_backend_compiler<B>();
  auto n = detail::capture(self);
  typename N::value_type result{};
  detail::located(&loc, [&] {
    context<B> ctx{detail::memory<B>::resolve(detail::preferred_stream(n)), {}, {}};
    auto v = detail::materialize(n, ctx);
    if (v.data() == nullptr) throw shape_error("texpr: item() of an empty rank-0 tensor");
    result = detail::read_element<B>(v.data(), ctx.stream);
  });
  return result;
}

} // namespace texpr
