// tx::placement: a human-readable report, one line per graph node, of where and how each node runs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
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

template <class Backend, class N> void report_node(const N& n, std::size_t depth, std::string& out) {
  using Op = typename N::op_type;
  using T = typename N::kernel_dtype;
  std::string line(2 * depth, ' ');
  line += op_label<Op>();
  pad_to(line, 30);
  line += dtype_name_v<T>;
  pad_to(line, 39);
  line += to_string(n.shape());
  pad_to(line, 56);
  std::string where, how;
  if constexpr (std::is_same_v<Op, op::leaf>) {
    where = std::string(N::backend::name);
    how = std::is_same_v<typename N::backend, Backend> ? "memory"
                                                       : "ERROR: lives on " + std::string(N::backend::name) +
                                                             "; copy with tx::to_device/tx::to_host";
  } else if constexpr (std::is_same_v<Op, op::scalar>) {
    where = "any";
    how = "constant";
  } else {
    where = std::string(Backend::name);
    if constexpr (has_kernel<Op, T, Backend>) how = std::string(kernel<Op, T, Backend>::name);
    else if constexpr (registered_kernel<Op, T, Backend>) how = "ERROR: forbidden by tx::forbidden";
    else how = "ERROR: no kernel (evaluation would not compile)";
  }
  line += where;
  pad_to(line, 64);
  line += how;
  out += line;
  out += '\n';
  n.for_each_child([&](const auto& c) { report_node<Backend>(c, depth + 1, out); });
}

} // namespace detail

/// Placement report of e's graph on Backend (default: the graph's own backend): one line per node with
/// op, dtype, shape, backend and kernel, children indented under their parent. Works for graphs that
/// would not compile for Backend too: offending nodes read "ERROR: ...".
template <class Backend = void, operand E> std::string placement(const E& e) {
  using N = detail::captured_t<const E&>;
  using B = std::conditional_t<std::is_void_v<Backend>, typename N::backend, Backend>;
  static_assert(backend_tag<B>, "texpr: placement of a graph with no tensor operand needs an explicit backend");
  std::string head = "node";
  detail::pad_to(head, 30);
  head += "dtype";
  detail::pad_to(head, 39);
  head += "shape";
  detail::pad_to(head, 56);
  head += "backend";
  detail::pad_to(head, 64);
  head += "kernel\n";
  std::string out = "texpr placement on " + std::string(B::name) + (runs_on<const E&, B> ? "" : " (DOES NOT RUN)") + "\n" + head;
  detail::report_node<B>(detail::capture(e), 0, out);
  return out;
}

} // namespace texpr
