// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::placement and tx::planned_kernels: one walk over a graph that follows evaluation's decisions
// (placement/dispatch.hpp and the predicates the kernels read) and yields both the report, one line per node,
// and the kernels evaluation runs, in order, as tx::kernel_log records them.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "texpr/core/context.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/epilogue.hpp"
#include "texpr/expr/matmul.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/expr/saved.hpp"
#include "texpr/op/composite.hpp"
#include "texpr/op/elementwise.hpp"
#include "texpr/placement/dispatch.hpp"
#include "texpr/placement/runs_on.hpp"
#include "texpr/registry/kernel.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

namespace detail {

inline void pad_to(std::string& s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  s += ' ';
}

template <class Op>
std::string op_label() {
  if constexpr (cast_op<Op>)
    return "cast<" + std::string(dtype_name_v<typename Op::target>) + ">";
  else
    return std::string(Op::name);
}

/// One node's line in a placement report.
struct plan_line {
  std::vector<int> path;  // operand indices from the section's root: sorted by path, the lines are the tree
  std::string label, dtype, shape, where, how;
};

/// The state of one placement walk, which visits the nodes in the order evaluation reaches them. Lines are kept
/// with their operand paths and sorted into tree order when printed (a GEMM epilogue evaluates its matmul's
/// operands before the tree's other operands); kernels are appended as evaluation logs them.
struct plan_state : plan_walk {
  static constexpr std::size_t no_line = static_cast<std::size_t>(-1);
  std::vector<kernel_record> records;               ///< the kernels, in the order evaluation runs them
  std::vector<const slot_base*> seen;               ///< saved values, numbered (from 1) in order of first mention
  std::vector<const slot_base*> computed;           ///< saved values the evaluation context has computed
  std::vector<std::vector<plan_line>> sections{1};  ///< [0]: the graphs; [k]: the computation of saved #k
  std::size_t section = 0;                          ///< where lines go now
  std::vector<int> path;                            ///< the current node's operand path
  bool quiet = false;                               ///< lines are dropped (a saved value's operand read again)
  std::vector<int> archs;                           ///< the architectures checked (cuda): every one must run it
  bool column_sums_next = false;                    ///< the next node planned also writes column sums (one launch)
  std::vector<const slot_base*> bound;              ///< saved values eval_all computes straight into results

  /// The number of saved value s (from 1); numbers it when new.
  int number(const slot_base* s) {
    for (std::size_t i = 0; i != seen.size(); ++i)
      if (seen[i] == s) return static_cast<int>(i) + 1;
    seen.push_back(s);
    sections.emplace_back();
    return static_cast<int>(seen.size());
  }
  /// True (once) when saved value s is computed now: the first read in the evaluation context computes it.
  bool first_computation(const slot_base* s) {
    if (std::find(computed.begin(), computed.end(), s) != computed.end()) return false;
    computed.push_back(s);
    return true;
  }
  /// Adds the current node's line; its index, for amend.
  std::size_t line(std::string label, std::string_view dtype, std::string shape, std::string_view where,
                   std::string how) {
    if (quiet) return no_line;
    sections[section].push_back(
        {path, std::move(label), std::string(dtype), std::move(shape), std::string(where), std::move(how)});
    return sections[section].size() - 1;
  }
  /// Appends to the kernel column of line i of the current section.
  void amend(std::size_t i, std::string_view more) {
    if (i != no_line) sections[section][i].how += more;
  }
  /// Runs f for operand i of the current node.
  template <class F>
  decltype(auto) operand(int i, F&& f) {
    path.push_back(i);
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      path.pop_back();
    } else {
      auto r = f();
      path.pop_back();
      return r;
    }
  }
  /// Runs f with its lines in section k (a saved value's computation) or, quiet, nowhere.
  template <class F>
  void elsewhere(std::size_t k, bool q, F&& f) {
    auto saved_path = std::move(path);
    path.clear();
    const std::size_t saved_section = section;
    const bool saved_quiet = quiet;
    section = k;
    quiet = q;
    f();
    section = saved_section;
    quiet = saved_quiet;
    path = std::move(saved_path);
  }
  /// Records a kernel run of implementation Impl for a node of op Op, dtype T on B (what log_kernel_run logs).
  template <class Impl, class Op, class T, class B>
  void record() {
    record_run(Impl::name, &op_label<Op>, dtype_name_v<T>, B::name);
  }
  /// record's work, once for every kernel: `label` makes the op's label.
  TEXPR_NOINLINE TEXPR_REPORT_PATH void record_run(std::string_view impl, std::string (*label)(), std::string_view dtype,
                                 std::string_view backend) {
    records.push_back({std::string(impl), label(), std::string(dtype), std::string(backend)});
  }
};

inline std::string format_line(std::size_t depth, const plan_line& l) {
  std::string line(2 * depth, ' ');
  line += l.label;
  pad_to(line, 30);
  line += l.dtype;
  pad_to(line, 39);
  line += l.shape;
  pad_to(line, 56);
  line += l.where;
  pad_to(line, 64);
  line += l.how;
  line += '\n';
  return line;
}

/// The architectures a tx::forbidden_on_arch policy is looked up for in the report (the compile-time checks look
/// it up for the build's targets, whatever they are).
using reported_cuda_archs = cuda_targets<75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121>;

/// Bit i set when user code forbids (Op, T) on the i-th of the report's architectures A.
template <class Op, class T, int... A>
constexpr std::uint64_t forbidden_arch_mask(cuda_targets<A...>) {
  static_assert(sizeof...(A) <= 64, "texpr: one mask bit per reported architecture");
  std::uint64_t mask = 0, bit = 1;
  ((mask |= forbidden_on_arch<Op, T, A>::value ? bit : 0, bit <<= 1), ...);
  return mask;
}

/// The report's architectures, in the order of forbidden_arch_mask's bits.
template <int... A>
constexpr std::array<int, sizeof...(A)> reported_arch_array(cuda_targets<A...>) {
  return {A...};
}

/// What a kernel column says, from the row's facts: no kernel (not `has`; `registered` when a policy forbids
/// it), one that needs a newer GPU (`needs`) than one of the walk's architectures, one user code forbids on one of
/// them (`forbidden`, forbidden_arch_mask's bits), else the implementation's name; `suffix` is appended. One
/// function for every (op, dtype, backend): the templates only gather the facts.
TEXPR_NOINLINE TEXPR_REPORT_PATH inline std::string kernel_column_text(bool has, std::string_view name, bool registered, int needs,
                                                     std::uint64_t forbidden, const std::vector<int>& archs,
                                                     std::string_view suffix) {
  std::string r;
  if (!has) {
    r = registered ? "ERROR: forbidden by tx::forbidden" : "ERROR: no kernel (evaluation would not compile)";
  } else {
    for (int a : archs)
      if (a < needs) {
        r = "ERROR: " + std::string(name) + " needs sm_" + std::to_string(needs) + ", built for sm_" + std::to_string(a);
        break;
      }
    if (r.empty() && forbidden) {
      static constexpr auto reported = reported_arch_array(reported_cuda_archs{});
      for (int a : archs)
        for (std::size_t i = 0; i != reported.size(); ++i)
          if (r.empty() && a == reported[i] && (forbidden >> i & 1))
            r = "ERROR: forbidden on sm_" + std::to_string(a) + " by tx::forbidden_on_arch";
    }
    if (r.empty()) r = std::string(name) + (needs ? " (sm_" + std::to_string(needs) + "+)" : std::string());
  }
  r += suffix;
  return r;
}

/// The kernel column of a node with op Op on dtype T: its implementation, or why there is none (no kernel, one the
/// user forbids, or one that needs a newer GPU than one of the walk's architectures st.archs), then `suffix`.
template <class Op, class T, class B>
std::string kernel_column(const plan_state& st, std::string_view suffix = {}) {
  if constexpr (has_kernel<Op, T, B>) {
    constexpr std::uint64_t forbidden = forbidden_arch_mask<Op, T>(reported_cuda_archs{});
    return kernel_column_text(true, kernel<Op, T, B>::name, true, kernel_min_arch_v<Op, T, B>, forbidden, st.archs,
                              suffix);
  } else
    return kernel_column_text(false, {}, registered_kernel<Op, T, B>, 0, 0, st.archs, suffix);
}

/// Records a kernel run of node N (its registry row) when it has one.
template <class B, class N>
void record_node(plan_state& st) {
  using Op = typename N::op_type;
  using T = typename N::kernel_dtype;
  if constexpr (has_kernel<Op, T, B>) st.record<kernel<Op, T, B>, Op, T, B>();
}
/// Records the copy kernel writing a value of dtype T (evaluation's assign_accessor).
template <class B, class T>
void record_copy(plan_state& st) {
  if constexpr (has_kernel<op::copy, T, B>) st.record<kernel<op::copy, T, B>, op::copy, T, B>();
}
template <class B, class T>
std::string copy_name() {
  if constexpr (has_kernel<op::copy, T, B>)
    return std::string(kernel<op::copy, T, B>::name);
  else
    return "ERROR: no copy kernel";
}

/// The line of node n with kernel column `how`.
template <class B, class N>
TEXPR_REPORT_PATH std::size_t node_line(const N& n, plan_state& st, std::string how) {
  return st.line(op_label<typename N::op_type>(), dtype_name_v<typename N::kernel_dtype>, to_string(n.shape()), B::name,
                 std::move(how));
}

/// Whether memory with this shape and these strides is row-major contiguous (as view::is_contiguous).
template <std::size_t R>
bool contiguous_layout(const shape_t<R>& shape, const shape_t<R>& strides) {
  const auto cs = contiguous_strides(shape);
  for (std::size_t d = 0; d != R; ++d)
    if (shape[d] > 1 && strides[d] != cs[d]) return false;
  return true;
}

/// What a planned materialisation gives: the line of the node and the strides its memory has.
template <std::size_t R>
struct planned_memory {
  std::size_t line;
  shape_t<R> strides;
};

template <class B, class N>
TEXPR_REPORT_PATH std::size_t plan_evaluate(const N& n, bool contiguous, plan_state& st);
template <class B, class N>
TEXPR_REPORT_PATH planned_memory<N::rank> plan_materialize(const N& n, plan_state& st);
template <class B, class N>
TEXPR_REPORT_PATH std::size_t plan_read(const N& n, plan_state& st, std::string_view fused = " (in the pass above)");

/// eval/read.hpp's read(n): constants and generators are read in the reader's pass, elementwise nodes fused into
/// it (their operands read in turn), anything else materialised.
template <class B, class N>
TEXPR_REPORT_PATH std::size_t plan_read(const N& n, plan_state& st, std::string_view fused) {
  using Op = typename N::op_type;
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (k == op::kind::constant) {
    return st.line(op_label<Op>(), dtype_name_v<typename N::kernel_dtype>, to_string(n.shape()), N::backend::name,
                   "constant");
  } else if constexpr (k == op::kind::generator || k == op::kind::elementwise) {
    const std::size_t i = node_line<B>(n, st, kernel_column<Op, typename N::kernel_dtype, B>(st, fused));
    int j = 0;
    for_each_operand(n, [&](const auto& c) { st.operand(j++, [&] { plan_read<B>(c, st, fused); }); });
    return i;
  } else {
    return plan_materialize<B>(n, st).line;
  }
}

/// eval/read.hpp's materialize(n): memory as it is (a saved value computed at its first read), layouts as the
/// memory of their operand (copied to contiguous memory when the strides cannot express them), anything else
/// evaluated into a contiguous temporary.
template <class B, class N>
TEXPR_REPORT_PATH planned_memory<N::rank> plan_materialize(const N& n, plan_state& st) {
  using T = typename N::value_type;
  using Op = typename N::op_type;
  constexpr std::size_t R = N::rank;
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (is_saved_v<N>) {
    const int id = st.number(&n.get_slot());
    const bool here = std::is_same_v<typename N::backend, B>;
    const std::size_t i = st.line("saved #" + std::to_string(id) + " (" + n.get_slot().what() + ")", dtype_name_v<T>,
                                  to_string(n.shape()), N::backend::name,
                                  here ? std::string("memory, computed once per evaluation")
                                       : "ERROR: lives on " + std::string(N::backend::name));
    return {i, n.get_slot().plan_read(st, static_cast<std::size_t>(id))};
  } else if constexpr (k == op::kind::memory) {
    const bool here = std::is_same_v<typename N::backend, B>;
    const std::size_t i =
        st.line(op_label<Op>(), dtype_name_v<T>, to_string(n.shape()), N::backend::name,
                here ? std::string("memory")
                     : "ERROR: lives on " + std::string(N::backend::name) + "; copy with tx::to_device/tx::to_host");
    context<typename N::backend> ctx{};  // (a leaf's storage needs no context)
    return {i, n.storage(ctx).strides()};
  } else if constexpr (k == op::kind::layout) {
    using C = std::remove_cvref_t<decltype(n.child())>;
    std::string how = kernel_column<Op, typename N::kernel_dtype, B>(st);
    if constexpr (kind_of_v<C> != op::kind::memory && kind_of_v<C> != op::kind::layout)
      how += " (evaluates its operand first)";
    const std::size_t i = node_line<B>(n, st, std::move(how));
    const auto v = st.operand(0, [&] { return plan_materialize<B>(n.child(), st); });
    shape_t<R> shape{}, strides{};
    index_t offset = 0;
    if (n.params().map(n.child().shape(), v.strides, shape, strides, offset)) return {i, strides};
    // (layout_storage: an operand the strides cannot express is copied to contiguous memory first)
    if (!contiguous_layout(n.child().shape(), v.strides)) {
      record_copy<B, typename C::value_type>(st);
      st.amend(i, ", of a contiguous copy of its operand (" + copy_name<B, typename C::value_type>() + " copy)");
    }
    n.params().map(n.child().shape(), contiguous_strides(n.child().shape()), shape, strides, offset);
    return {i, strides};
  } else {
    return {plan_evaluate<B>(n, true, st), contiguous_strides(n.shape())};
  }
}

/// The memory a planned materialisation stands for: a view with n's shape and the planned strides and no data
/// (what a composite's expansion is built over: it builds expressions over views and reads nothing).
template <class B, class N>
auto planned_view(const N& n, const planned_memory<N::rank>& m) {
  return view<const typename N::value_type, N::rank, B>(unchecked_t{}, nullptr, n.shape(), m.strides, nullptr);
}

/// The hook a composite's expansion gets in the walk (eval/read.hpp's composite_keep): each kept intermediate is
/// planned as an operand of the composite after its real operands, and stands for its memory as a view.
template <class T, std::size_t R, class B>
struct plan_keep {
  plan_state& st;
  shape_t<R> shape;
  int next;
  template <class E>
  auto operator()(const E& e) {
    auto c = capture(e);
    const auto m = st.operand(next++, [&] { return plan_materialize<B>(c, st); });
    return planned_view<B>(c, m);
  }
  template <class E>
  view<const T, R, B> result(const E& e) {
    st.operand(next++, [&] { plan_evaluate<B>(capture(e), true, st); });
    return view<const T, R, B>(unchecked_t{}, nullptr, shape, contiguous_strides(shape), nullptr);
  }
};

/// The operands of an epilogue tree's path down to its matmul (evaluation reads the matmul's operands first).
template <class B, class N>
TEXPR_REPORT_PATH void plan_epilogue_path(const N& n, plan_state& st) {
  if constexpr (is_matmul_node_v<N>) {
    node_line<B>(n, st,
                 kernel_column<typename N::op_type, typename N::kernel_dtype, B>(st, " (runs the epilogue above)"));
    st.operand(0, [&] { plan_materialize<B>(get<0>(n.operands()), st); });
    st.operand(1, [&] { plan_materialize<B>(get<1>(n.operands()), st); });
  } else {
    node_line<B>(n, st, "(part of the epilogue above)");
    int j = 0;
    for_each_operand(n, [&](const auto& c) {
      if constexpr (epilogue_matmuls<std::remove_cvref_t<decltype(c)>>() == 1)
        st.operand(j, [&] { plan_epilogue_path<B>(c, st); });
      ++j;
    });
  }
}
/// The other operands of an epilogue tree, read as eval/epilogue.hpp's read_epilogue reads them.
template <class B, class N>
TEXPR_REPORT_PATH void plan_epilogue_rest(const N& n, plan_state& st) {
  int j = 0;
  for_each_operand(n, [&](const auto& c) {
    using C = std::remove_cvref_t<decltype(c)>;
    if constexpr (epilogue_matmuls<C>() != 1)
      st.operand(j, [&] { plan_read<B>(c, st, " (part of the epilogue above)"); });
    else if constexpr (!is_matmul_node_v<C>)
      st.operand(j, [&] { plan_epilogue_rest<B>(c, st); });
    ++j;
  });
}

/// compose_into: the operands materialised in order, then the expansion over their memory (its kept
/// intermediates, then its last expression into the result), listed below the composite after its operands.
template <class B, class N, std::size_t... I>
TEXPR_REPORT_PATH void plan_composite_impl(const N& n, plan_state& st, std::index_sequence<I...>) {
  if (shape_size(n.shape()) == 0) {  // an empty result: nothing runs
    (st.operand(static_cast<int>(I), [&] { node_line<B>(get<I>(n.operands()), st, "none: the result is empty"); }),
     ...);
    return;
  }
  const std::tuple m{st.operand(static_cast<int>(I), [&] { return plan_materialize<B>(get<I>(n.operands()), st); })...};
  plan_keep<typename N::value_type, N::rank, B> keep{st, n.shape(), static_cast<int>(sizeof...(I))};
  auto last = capture(n.expand(keep, planned_view<B>(get<I>(n.operands()), std::get<I>(m))...));
  st.operand(keep.next, [&] { plan_evaluate<B>(last, true, st); });
}

/// A GEMM that reads only some layouts in place (cuBLAS: K::reads_in_place) copies operand I of matmul N, c with
/// planned memory m, to contiguous memory after materialising both operands, when its layout is not one of them.
template <class B, class N, std::size_t I, class C, std::size_t R>
TEXPR_REPORT_PATH void plan_matrix_copy(const C& c, const planned_memory<R>& m, plan_state& st) {
  using K = kernel<typename N::op_type, typename N::kernel_dtype, B>;
  if constexpr (requires { K::reads_in_place(index_t{}, index_t{}, index_t{}, index_t{}); }) {
    const matrix_layout l = matrix_of<I>(c.shape(), m.strides);
    if (!K::reads_in_place(l.rows, l.columns, l.row_stride, l.column_stride) &&
        !contiguous_layout(c.shape(), m.strides)) {
      record_copy<B, typename C::value_type>(st);
      st.amend(m.line, ", copied to contiguous memory for " + std::string(K::name) + " (" +
                           copy_name<B, typename C::value_type>() + " copy)");
    }
  }
}

/// How the kernel of computed node n obtains its operands (what each backend's run does): a matmul and a
/// composite materialise theirs, a reduction reads its operand fused unless operand_in_memory, a scan reads its
/// operand fused, a concatenation evaluates each operand into its slice of the result.
template <class B, class N>
TEXPR_REPORT_PATH void plan_computed_operands(const N& n, plan_state& st) {
  using Op = typename N::op_type;
  if constexpr (is_matmul_node_v<N>) {
    const auto ma = st.operand(0, [&] { return plan_materialize<B>(get<0>(n.operands()), st); });
    const auto mb = st.operand(1, [&] { return plan_materialize<B>(get<1>(n.operands()), st); });
    plan_matrix_copy<B, N, 0>(get<0>(n.operands()), ma, st);
    plan_matrix_copy<B, N, 1>(get<1>(n.operands()), mb, st);
  } else if constexpr (requires { n.axes(); }) {
    if constexpr (N::operand_in_memory)
      st.operand(0, [&] { plan_materialize<B>(n.child(), st); });
    else
      st.operand(0, [&] { plan_read<B>(n.child(), st); });
  } else if constexpr (requires { N::reads_operand_fused; }) {
    int j = 0;
    for_each_operand(n, [&](const auto& c) { st.operand(j++, [&] { plan_read<B>(c, st); }); });
  } else if constexpr (requires { n.slice_shape(std::size_t{0}); }) {
    int j = 0;
    const auto strides = contiguous_strides(n.shape());  // (a computed node's destination is contiguous)
    for_each_operand(n, [&](const auto& c) {
      const auto s = n.slice_shape(static_cast<std::size_t>(j));
      st.operand(j, [&] {
        if (s[n.axis()] == 0)
          node_line<B>(c, st, "none: its slice is empty");
        else
          plan_evaluate<B>(c, contiguous_layout(s, strides), st);
      });
      ++j;
    });
  } else if constexpr (std::derived_from<Op, op::composite_op> &&
                       !requires { kernel<Op, typename N::kernel_dtype, B>::runs_composite; }) {
    plan_composite_impl<B>(n, st, std::make_index_sequence<N::children::size>{});
  } else {
    int j = 0;
    for_each_operand(n, [&](const auto& c) { st.operand(j++, [&] { plan_materialize<B>(c, st); }); });
  }
}

/// evaluate_into(dest, n) for a destination that is fresh (it overlaps nothing) and contiguous or not: n's line
/// and subtree, and the kernels evaluation runs for them, following dispatch_of.
template <class B, class N>
TEXPR_REPORT_PATH std::size_t plan_evaluate(const N& n, bool contiguous, plan_state& st) {
  using Op = typename N::op_type;
  using T = typename N::kernel_dtype;
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (offers_column_sums_v<B, N>) {
    if (std::exchange(st.column_sums_next, false)) {  // evaluate_with_column_sums: one launch writes both
      using K = kernel<Op, T, B>;
      const std::size_t i = node_line<B>(n, st, std::string(K::column_sums_name) + ": also writes its column sums");
      if constexpr (k == op::kind::elementwise) {
        int j = 0;
        for_each_operand(n, [&](const auto& c) { st.operand(j++, [&] { plan_read<B>(c, st); }); });
      } else {
        plan_computed_operands<B>(n, st);
      }
      st.record_run(K::column_sums_name, &op_label<Op>, dtype_name_v<T>, B::name);
      return i;
    }
  }
  const dispatch how = dispatch_of<B>(n, fresh_destination{contiguous});
  if (how == dispatch::pass_through) {
    const std::size_t i = node_line<B>(n, st, "none: reduces no axis, its operand is the result");
    if constexpr (can_pass_through<N>()) st.operand(0, [&] { plan_evaluate<B>(n.child(), contiguous, st); });
    return i;
  }
  if (how == dispatch::buffered) {
    const std::size_t i = plan_evaluate<B>(n, true, st);
    st.amend(i, ", into a temporary, then copied (its destination is strided)");
    if constexpr (k == op::kind::elementwise)
      record_node<B, N>(st);
    else
      record_copy<B, typename N::value_type>(st);
    return i;
  }
  if constexpr (k == op::kind::elementwise && has_gemm_epilogue_v<N, B>) {
    if (how == dispatch::epilogue) {
      const std::size_t i =
          node_line<B>(n, st, std::string(fused_epilogue<B>::impl::name) + ": this tree, in its matmul's output tiles");
      int j = 0;
      for_each_operand(n, [&](const auto& c) {
        if constexpr (epilogue_matmuls<std::remove_cvref_t<decltype(c)>>() == 1)
          st.operand(j, [&] { plan_epilogue_path<B>(c, st); });
        ++j;
      });
      plan_epilogue_rest<B>(n, st);
      st.record<typename fused_epilogue<B>::impl, Op, T, B>();
      return i;
    }
  }
  if constexpr (k == op::kind::elementwise || k == op::kind::generator) {
    const std::size_t i = node_line<B>(n, st, kernel_column<Op, T, B>(st));
    int j = 0;
    for_each_operand(n, [&](const auto& c) { st.operand(j++, [&] { plan_read<B>(c, st); }); });
    record_node<B, N>(st);
    return i;
  } else if constexpr (k == op::kind::computed) {
    const std::size_t i = node_line<B>(n, st, kernel_column<Op, T, B>(st));
    plan_computed_operands<B>(n, st);
    record_node<B, N>(st);
    return i;
  } else {
    const std::size_t i = plan_read<B>(n, st);
    st.amend(i, ", copied into the destination (" + copy_name<B, typename N::value_type>() + " copy)");
    record_copy<B, typename N::value_type>(st);
    return i;
  }
}

/// eval_all binding a graph that is a saved value to its fresh result, before any graph is evaluated (slot::bind):
/// the value is then computed straight into the result, whichever graph's evaluation first reads it.
template <class B, class N>
void plan_bind_result(const N& n, plan_state& st) {
  if constexpr (is_saved_v<N> && std::is_same_v<typename N::backend, B>) {
    const slot_base* s = &n.get_slot();
    if (std::find(st.bound.begin(), st.bound.end(), s) == st.bound.end() && n.get_slot().plan_bind(st, 0))
      st.bound.push_back(s);
  }
}

/// A graph evaluated into a fresh result in the walk's context (eval_all's eval_in): a saved value bound to the
/// result (plan_bind_result) is computed straight into it, here or where an earlier graph read it; otherwise
/// evaluate_into.
template <class B, class N>
TEXPR_REPORT_PATH void plan_result(const N& n, plan_state& st, int index) {
  st.operand(index, [&] {
    if constexpr (is_saved_v<N> && std::is_same_v<typename N::backend, B>) {
      const int id = st.number(&n.get_slot());
      const std::size_t i = st.line("saved #" + std::to_string(id) + " (" + n.get_slot().what() + ")",
                                    dtype_name_v<typename N::value_type>, to_string(n.shape()), N::backend::name, "");
      if (std::find(st.bound.begin(), st.bound.end(), &n.get_slot()) != st.bound.end()) {
        st.amend(i, "computed into the result");
        (void)n.get_slot().plan_read(st, static_cast<std::size_t>(id));  // (nothing more if an earlier graph read it)
        return;
      }
      st.amend(i, "memory, computed once per evaluation");
      (void)n.get_slot().plan_read(st, static_cast<std::size_t>(id));
      st.amend(i, ", copied into the result (" + copy_name<B, typename N::value_type>() + " copy)");
      record_copy<B, typename N::value_type>(st);
    } else {
      plan_evaluate<B>(n, true, st);
    }
  });
}

/// The report of a walk: each section's lines in tree order, saved values' computations after the graphs.
inline std::string render(plan_state& st, bool several) {
  std::string out;
  for (std::size_t s = 0; s != st.sections.size(); ++s) {
    auto& lines = st.sections[s];
    std::stable_sort(lines.begin(), lines.end(),
                     [](const plan_line& a, const plan_line& b) { return a.path < b.path; });
    if (s > 0) out += "saved #" + std::to_string(s) + " = " + st.seen[s - 1]->what() + ":\n";
    for (const auto& l : lines) {
      // (a saved value's computation is indented under its heading; one graph's root has the path {0})
      const std::size_t depth = s > 0 ? l.path.size() + 1 : l.path.size() - (several ? 0 : 1);
      out += format_line(depth, l);
    }
  }
  return out;
}

/// The architectures of a cuda_targets list, for the walk.
template <int... A> std::vector<int> arch_vector(cuda_targets<A...>) { return {A...}; }

/// The report's column headings.
inline std::string report_heading() {
  std::string head = "node";
  pad_to(head, 30);
  head += "dtype";
  pad_to(head, 39);
  head += "shape";
  pad_to(head, 56);
  head += "backend";
  pad_to(head, 64);
  head += "kernel\n";
  return head;
}

}  // namespace detail

/// Placement report of e's graph on Backend (default: the graph's own backend): one line per node with op,
/// dtype, shape, backend and kernel (what runs: tx::planned_kernels lists the same kernels in order), children
/// indented under their parent; a composite's expansion is listed below it after its operands (`leaf` lines there
/// are the memory of its operands and kept intermediates). Saved values (autograd) appear as `saved #k` leaves and
/// their computations are listed once after the graph. Works for graphs that would not compile for Backend too:
/// offending nodes read "ERROR: ...".
/// On cuda, the report is for the architectures Targets (default: those this translation unit is built for,
/// build_cuda_targets), which its first line names; a kernel that needs a newer one reads "ERROR: ... needs sm_80".
template <class Backend = void, class Targets = build_cuda_targets, operand E>
std::string placement(const E& e) {
  using N = detail::captured_t<const E&>;
  using B = std::conditional_t<std::is_void_v<Backend>, typename N::backend, Backend>;
  static_assert(backend_tag<B>, "texpr: placement of a graph with no tensor operand needs an explicit backend");
  using checked = std::conditional_t<std::is_same_v<B, cuda>, Targets, cuda_targets<>>;
  detail::plan_state st;
  st.archs = detail::arch_vector(checked{});
  detail::plan_bind_result<B>(detail::capture(e), st);
  detail::plan_result<B>(detail::capture(e), st, 0);
  const bool runs = detail::graph_check<N, B, checked>::ok;
  return "texpr placement on " + std::string(B::name) + (checked::count ? " for " + checked::names() : std::string()) +
         (runs ? "" : " (DOES NOT RUN)") + "\n" + detail::report_heading() + detail::render(st, false);
}

/// The kernels tx::eval_all(e...) runs, in order, as tx::kernel_log records them: the same walk and decisions as
/// tx::placement, for fresh contiguous results. (`tensor = e` runs the same, except that a graph that is itself a
/// saved value is copied rather than computed into the result; a destination that overlaps an operand, or a
/// strided one, may add a pass through a temporary and a copy.) For graphs that run on their backend.
template <operand... E>
std::vector<kernel_record> planned_kernels(const E&... e) {
  using B = typename detail::common_backend<typename detail::captured_t<const E&>::backend...>::type;
  static_assert(backend_tag<B>, "texpr: planned_kernels needs expressions with tensor operands on one backend");
  detail::plan_state st;
  (detail::plan_bind_result<B>(detail::capture(e), st), ...);
  int i = 0;
  (detail::plan_result<B>(detail::capture(e), st, i++), ...);
  return std::move(st.records);
}
/// planned_kernels of several graphs evaluated in one context, as tx::eval_all evaluates them (saved values they
/// share are computed once, at their first read): what eval_all(graphs) runs, in order.
template <class... E>
std::vector<kernel_record> planned_kernels(const std::tuple<E...>& graphs) {
  return std::apply([](const auto&... e) { return planned_kernels(e...); }, graphs);
}

}  // namespace texpr
