// tx::placement: a human-readable report, one line per graph node, of where and how each node runs. The kernel
// column is the name of the implementation the registry row derives from: what evaluation calls.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/epilogue.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/expr/saved.hpp"
#include "texpr/op/elementwise.hpp"
#include "texpr/placement/runs_on.hpp"
#include "texpr/registry/kernel.hpp"

namespace texpr {

namespace detail {

inline void pad_to(std::string& s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  s += ' ';
}

template <class Op> std::string op_label() {
  if constexpr (cast_op<Op>) return "cast<" + std::string(dtype_name_v<typename Op::target>) + ">";
  else return std::string(Op::name);
}

/// Saved values met while reporting: numbered in order of first use, each reported once after the graph.
struct report_state {
  std::vector<const slot_base*> seen;
  /// The number of s (from 1); appends it when new.
  int number(const slot_base* s) {
    for (std::size_t i = 0; i != seen.size(); ++i)
      if (seen[i] == s) return static_cast<int>(i) + 1;
    seen.push_back(s);
    return static_cast<int>(seen.size());
  }
};

inline void report_line(std::string& out, std::size_t depth, const std::string& label, std::string_view dtype,
                        const std::string& shape, std::string_view where, const std::string& how) {
  std::string line(2 * depth, ' ');
  line += label;
  pad_to(line, 30);
  line += dtype;
  pad_to(line, 39);
  line += shape;
  pad_to(line, 56);
  line += where;
  pad_to(line, 64);
  line += how;
  out += line;
  out += '\n';
}

template <class Backend, class N>
void report_node(const N& n, std::size_t depth, std::string& out, report_state& st, bool root = true, bool in_epilogue = false);

/// Whether the operands of node n are each evaluated into memory of their own (so an elementwise operand over a
/// matmul can run as that GEMM's epilogue), as evaluation does: the operands of matmuls, composites, sum_to,
/// layouts and concatenations along axis 0 (slices of a contiguous result along another axis are strided). An
/// elementwise node's operands are fused into it, and a reduction reads its operand fused.
template <class N> bool operands_are_roots(const N& n) {
  using Op = typename N::op_type;
  constexpr op::kind k = kind_of_v<N>;
  if constexpr (k == op::kind::layout) {
    return true;
  } else if constexpr (k == op::kind::computed) {
    if constexpr (std::is_same_v<Op, op::sum_to> || is_matmul_node_v<N>) return true;
    else if constexpr (requires { n.axes(); }) return false;  // a reduction: its operand is read fused
    else if constexpr (requires { n.axis(); } && requires { n.offset(std::size_t{0}); }) return n.axis() == 0;  // concat
    else return true;  // composites: operands evaluated once into memory
  } else {
    return false;
  }
}

// root: n is evaluated into a destination of its own (not fused into its parent). in_epilogue: n is below the
// root of a fused GEMM epilogue (it runs inside that root's kernel).
template <class Backend, class N>
void report_node(const N& n, std::size_t depth, std::string& out, report_state& st, bool root, bool in_epilogue) {
  using Op = typename N::op_type;
  using T = typename N::kernel_dtype;
  constexpr op::kind k = op::category_v<Op>;
  if constexpr (is_saved_v<N>) {
    const int id = st.number(&n.get_slot());
    const bool here = std::is_same_v<typename N::backend, Backend>;
    report_line(out, depth, "saved #" + std::to_string(id) + " (" + n.get_slot().what() + ")", dtype_name_v<T>,
                to_string(n.shape()), N::backend::name,
                here ? std::string("memory, computed once per evaluation")
                     : "ERROR: lives on " + std::string(N::backend::name));
    return;
  } else if constexpr (k == op::kind::memory) {
    const bool here = std::is_same_v<typename N::backend, Backend>;
    report_line(out, depth, op_label<Op>(), dtype_name_v<T>, to_string(n.shape()), N::backend::name,
                here ? std::string("memory")
                     : "ERROR: lives on " + std::string(N::backend::name) + "; copy with tx::to_device/tx::to_host");
  } else if constexpr (k == op::kind::constant) {
    report_line(out, depth, op_label<Op>(), dtype_name_v<T>, to_string(n.shape()), N::backend::name, "constant");
  } else {
    std::string how;
    bool epilogue_below = false;
    bool handled = false;
    if constexpr (k == op::kind::elementwise && has_gemm_epilogue_v<N, Backend> && has_kernel<Op, T, Backend>) {
      // The same decision as evaluation's (evaluate_checked): a root whose product is not broadcast.
      if (in_epilogue || (root && epilogue_fits(n))) {
        how = in_epilogue ? std::string("(part of the epilogue above)")
                          : std::string(fused_epilogue<Backend>::impl::name) + ": this tree, in its matmul's output tiles";
        epilogue_below = true;
        handled = true;
      }
    }
    if (handled) {
    } else if constexpr (has_kernel<Op, T, Backend>) {
      how = passes_through(n) ? std::string("none: reduces no axis, its operand is the result")
                              : std::string(kernel<Op, T, Backend>::name);
      if (in_epilogue && is_matmul_node_v<N>) how += " (runs the epilogue above)";
      if constexpr (k == op::kind::layout) {
        using C = tuple_element_t<0, std::remove_cvref_t<decltype(n.operands())>>;
        constexpr op::kind ck = op::category_v<typename C::op_type>;
        if constexpr (ck != op::kind::memory && ck != op::kind::layout) how += " (evaluates its operand first)";
      }
    } else if constexpr (registered_kernel<Op, T, Backend>) {
      how = "ERROR: forbidden by tx::forbidden";
    } else {
      how = "ERROR: no kernel (evaluation would not compile)";
    }
    report_line(out, depth, op_label<Op>(), dtype_name_v<T>, to_string(n.shape()), Backend::name, how);
    const bool roots = operands_are_roots(n) || passes_through(n);
    for_each_operand(n, [&](const auto& c) { report_node<Backend>(c, depth + 1, out, st, roots && !epilogue_below, epilogue_below); });
    return;
  }
  for_each_operand(n, [&](const auto& c) { report_node<Backend>(c, depth + 1, out, st, operands_are_roots(n)); });
}

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

/// The lines of node n and its subtree, then each saved value it reads (directly or through other saved values)
/// once: "saved #k: <what>" and its computation.
template <class Backend, class N> std::string report_graph(const N& n) {
  std::string out;
  report_state st;
  report_node<Backend>(n, 0, out, st);
  for (std::size_t i = 0; i < st.seen.size(); ++i) {  // seen grows while saved values report theirs
    out += "saved #" + std::to_string(i + 1) + " = " + st.seen[i]->what() + ":\n";
    st.seen[i]->report(out, 1, st);
  }
  return out;
}

} // namespace detail

/// Placement report of e's graph on Backend (default: the graph's own backend): one line per node with op,
/// dtype, shape, backend and kernel, children indented under their parent; saved values (autograd) appear as
/// `saved #k` leaves and their computations are listed once after the graph. Works for graphs that would not
/// compile for Backend too: offending nodes read "ERROR: ...".
template <class Backend = void, operand E> std::string placement(const E& e) {
  using N = detail::captured_t<const E&>;
  using B = std::conditional_t<std::is_void_v<Backend>, typename N::backend, Backend>;
  static_assert(backend_tag<B>, "texpr: placement of a graph with no tensor operand needs an explicit backend");
  return "texpr placement on " + std::string(B::name) + (runs_on<const E&, B> ? "" : " (DOES NOT RUN)") + "\n" +
         detail::report_heading() + detail::report_graph<B>(detail::capture(e));
}

} // namespace texpr
