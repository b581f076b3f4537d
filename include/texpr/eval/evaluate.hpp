// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Evaluating a node into a destination: the compile-time placement check, the shape check, buffering when the
// destination aliases what the node reads, and the call of the registry row's implementation.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "texpr/core/context.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/eval/epilogue.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/epilogue.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/expr/saved.hpp"
#include "texpr/op/kind.hpp"
#include "texpr/placement/dispatch.hpp"
#include "texpr/placement/report.hpp"
#include "texpr/placement/runs_on.hpp"
#include "texpr/registry/kernel.hpp"

namespace texpr::detail {

/// What aliasing checks need to know about one operand's memory.
struct leaf_memory {
  const void* lo;    // first byte the leaf may read (nullptr when it reads nothing)
  const void* hi;    // one past the last byte
  const void* data;  // element (0, ..., 0)
  index_t size;      // element count
  bool contiguous;   // row-major contiguous
};

/// Memory description of a (pointer, shape, strides) view.
template <class T, std::size_t R>
leaf_memory describe_memory(const T* p, const shape_t<R>& shape, const shape_t<R>& strides) {
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

// Calls f(memory, direct) for each user-memory operand of n; `direct` is false below any node that reads its
// operand at other positions than it writes (layouts, reductions, matmul). Saved values are texpr's own memory.
template <class N, class B, class F> void for_each_memory(const N& n, context<B>& ctx, bool direct, F& f);
template <class N, class B, class F, std::size_t... I>
void for_each_memory_below(const N& n, context<B>& ctx, bool direct, F& f, std::index_sequence<I...>) {
  (for_each_memory(get<I>(n.operands()), ctx, direct, f), ...);
}
template <class N, class B, class F> void for_each_memory(const N& n, context<B>& ctx, bool direct, F& f) {
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (k == op::kind::memory) {
    if constexpr (!is_saved_v<N>) {
      const auto v = n.storage(ctx);
      f(describe_memory(v.data(), v.shape(), v.strides()), direct);
    }
  } else if constexpr (N::children::size > 0) {
    for_each_memory_below(n, ctx, direct && k == op::kind::elementwise, f, std::make_index_sequence<N::children::size>{});
  }
}

// Records whether an operand's memory overlaps the destination's in a way a fused pass could not read safely. A
// plain struct rather than a lambda, so that all graphs share its one instantiation.
struct overlap_check {
  leaf_memory d;
  bool unsafe = false;
  void operator()(const leaf_memory& m, bool direct) {
    if (!m.lo || !(m.lo < d.hi && d.lo < m.hi)) return;
    // Reading each element exactly where it is written, in a fused pass, is safe (a = a + b).
    const bool same_layout = direct && m.data == d.data && m.contiguous && d.contiguous && m.size == d.size;
    if (!same_layout) unsafe = true;
  }
};

// Records whether any operand's memory overlaps the destination at all: a fused GEMM epilogue writes partial
// products into the destination before it reads the other operands, so reading an element where it is written
// is not safe there.
struct any_overlap_check {
  leaf_memory d;
  bool found = false;
  void operator()(const leaf_memory& m, bool) {
    if (m.lo && m.lo < d.hi && d.lo < m.hi) found = true;
  }
};

/// The destination as dispatch_of sees it (placement/dispatch.hpp), from the real memory: the overlap walks run
/// only when the decision asks.
template <class N, class T, std::size_t R, class B> struct evaluation_destination {
  const view<T, R, B>& dest;
  const N& n;
  context<B>& ctx;
  bool is_contiguous() const { return dest.is_contiguous(); }
  // Whether writing dest while reading n could read an element after it was overwritten.
  bool unsafe_overlap() const {
    const leaf_memory d = describe_memory(dest.data(), dest.shape(), dest.strides());
    if (!d.lo) return false;
    overlap_check check{d};
    for_each_memory(n, ctx, true, check);
    return check.unsafe;
  }
  bool any_overlap() const {
    const leaf_memory d = describe_memory(dest.data(), dest.shape(), dest.strides());
    if (!d.lo) return false;
    any_overlap_check check{d};
    for_each_memory(n, ctx, true, check);
    return check.found;
  }
};

/// Copies (or fills) dest from a fused accessor through the backend's copy kernel.
template <class N, class T, std::size_t R, class B> TEXPR_NOINLINE void evaluate_checked(const view<T, R, B>& dest, const N& n, context<B>& ctx);

/// log_kernel_run's work, once for every kernel: `label` makes the op's label.
TEXPR_NOINLINE inline void log_kernel_record(std::string_view impl, std::string (*label)(), std::string_view dtype,
                                             std::string_view backend) {
  kernel_log::record_kernel(impl, label(), dtype, backend);
}

/// Records in the live tx::kernel_log (if any) that implementation Impl ran a node of op Op, dtype T, on B.
template <class Impl, class Op, class T, class B> void log_kernel_run() {
  if (kernel_log::active()) log_kernel_record(Impl::name, &op_label<Op>, dtype_name_v<T>, B::name);
}

template <class T, std::size_t R, class B, class Acc> void assign_accessor(const view<T, R, B>& dest, const Acc& acc, context<B>& ctx) {
  log_kernel_run<kernel<op::copy, T, B>, op::copy, T, B>();
  kernel<op::copy, T, B>::assign(dest, acc, ctx);
}

/// Copies a buffered evaluation's temporary tmp into dest with implementation K of op Op on dtype KT, or the copy
/// kernel when K is void: one body per (K, dest), not per node.
template <class K, class Op, class KT, class T, std::size_t R, class B>
TEXPR_NOINLINE void copy_back(const view<T, R, B>& dest, const tensor<T, R, B>& tmp, context<B>& ctx) {
  const auto tv = tmp.view();
  const auto acc = make_strided_accessor(memory_source<T>{tv.data()}, tv.shape(), tv.strides(), dest.shape());
  if constexpr (std::is_void_v<K>) {
    assign_accessor(dest, acc, ctx);
  } else {
    log_kernel_run<K, Op, KT, B>();
    K::assign(dest, acc, ctx);
  }
}

/// Evaluates node n into dest (same rank, dtype and shape; dest on n's backend). Placement is checked at compile
/// time; the shapes at run time (shape_error names both); reads that alias dest go through a temporary.
template <class N, class T, std::size_t R, class B> void evaluate_into(const view<T, R, B>& dest, const N& n, context<B>& ctx) {
  static_assert(R == N::rank, "texpr: destination rank differs from the expression's rank");
  check_same_dtype<T, typename N::value_type>();
  if constexpr (std::is_same_v<T, typename N::value_type>) {
    check_same_backend<B, typename N::backend>();
    if constexpr (std::is_same_v<B, typename N::backend> || std::is_same_v<typename N::backend, any_backend>) {
      check_placement<N, B>();
      if constexpr (graph_check<N, B>::ok) evaluate_checked(dest, n, ctx);  // (else: one diagnostic, no cascade)
    }
  }
}

/// Throws the shape_error of assigning an expression of shape `from` to a destination of shape `to`: one body per
/// rank, out of line, rather than a message built in every node's evaluation.
template <std::size_t R> [[noreturn]] TEXPR_NOINLINE void throw_assign_shape_mismatch(const shape_t<R>& from, const shape_t<R>& to) {
  throw shape_error("texpr: cannot assign an expression of shape " + to_string(from) + " to a destination of shape " +
                    to_string(to));
}

/// evaluate_into once the compile-time checks passed.
template <class N, class T, std::size_t R, class B> TEXPR_NOINLINE void evaluate_checked(const view<T, R, B>& dest, const N& n, context<B>& ctx) {
  if (n.shape() != dest.shape()) throw_assign_shape_mismatch(n.shape(), dest.shape());
  using Op = typename N::op_type;
  using K = kernel<Op, typename N::kernel_dtype, B>;
  constexpr op::kind k = kind_of_v<N>;
  // The decision tx::placement reports (placement/dispatch.hpp); each branch logs what it runs, post-order.
  const dispatch how = dispatch_of<B>(n, evaluation_destination<N, T, R, B>{dest, n, ctx});
  if constexpr (can_pass_through<N>()) {
    if (how == dispatch::pass_through) {  // nothing to reduce: the operand is the result
      evaluate_into(dest, n.child(), ctx);
      return;
    }
  }
  if (how == dispatch::buffered) {
    auto& tmp = temporary<T, R, B>(dest.shape(), ctx);
    evaluate_into(tmp.view(), n, ctx);
    // An elementwise node copies back with its own implementation, so a user op on a user dtype needs no copy row.
    if constexpr (k == op::kind::elementwise) copy_back<K, Op, typename N::kernel_dtype>(dest, tmp, ctx);
    else copy_back<void, void, void>(dest, tmp, ctx);
    return;
  }
  if constexpr (k == op::kind::elementwise && has_gemm_epilogue_v<N, B>) {
    if (how == dispatch::epilogue) {
      fused_epilogue<B>::impl::run(n, dest, ctx);
      log_kernel_run<typename fused_epilogue<B>::impl, Op, typename N::kernel_dtype, B>();
      return;
    }
  }
  if constexpr (k == op::kind::elementwise || k == op::kind::generator) {
    auto acc = read(n, dest.shape(), ctx);  // materialises computed operands first: they are logged before this node
    log_kernel_run<K, Op, typename N::kernel_dtype, B>();
    K::assign(dest, acc, ctx);
  } else if constexpr (k == op::kind::computed) {
    K::run(n, dest, ctx);
    log_kernel_run<K, Op, typename N::kernel_dtype, B>();  // after the operands it materialised: post-order
  } else {
    assign_accessor(dest, read(n, dest.shape(), ctx), ctx);  // memory, constants, layouts: a copy
  }
}

/// evaluate_into for a fresh contiguous dest where fuses_column_sums<B>(n, cols) holds: n's implementation writes
/// dest and, in the same launch, sums[c] = the sum of dest viewed as [size / cols, cols] over its rows.
template <class N, class T, std::size_t R, class B>
TEXPR_NOINLINE void evaluate_with_column_sums(const view<T, R, B>& dest, const N& n, T* sums, index_t cols, context<B>& ctx) {
  using Op = typename N::op_type;
  using K = kernel<Op, typename N::kernel_dtype, B>;
  if (n.shape() != dest.shape() || !dest.is_contiguous())
    throw shape_error("texpr: column sums need a contiguous destination of the expression's shape " + to_string(n.shape()));
  if constexpr (kind_of_v<N> == op::kind::elementwise) {
    auto acc = read(n, dest.shape(), ctx);  // computed operands first, logged before this node
    if (kernel_log::active()) log_kernel_record(K::column_sums_name, &op_label<Op>, dtype_name_v<typename N::kernel_dtype>, B::name);
    K::assign_with_column_sums(dest, acc, sums, cols, ctx);
  } else {
    K::run_with_column_sums(n, dest, sums, cols, ctx);
    if (kernel_log::active()) log_kernel_record(K::column_sums_name, &op_label<Op>, dtype_name_v<typename N::kernel_dtype>, B::name);
  }
}

} // namespace texpr::detail
