// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How evaluation reads a node: every op tag names its kind, and the evaluation layer dispatches on the kind,
// never on a concrete node type.
#pragma once

#include <string_view>

#include "texpr/core/dtype_set.hpp"

namespace texpr::op {

/// The ways a node is read or computed.
enum class kind {
  memory,       ///< a leaf over memory (tensor, view, parameter, saved value): read in place
  constant,     ///< a value broadcast to a shape (scalars, tx::zeros): no memory, no kernel
  generator,    ///< values computed from the element index (arange, random): fused into the reading kernel
  elementwise,  ///< a function of its operands' elements: fused into one pass with its neighbours
  layout,       ///< the operand's memory seen with other extents and strides (transpose, broadcast_to): no copy
  computed      ///< evaluated by its own kernel into memory (reductions, matmul, softmax)
};

/// The kind of op tag Op: its `category`, or elementwise for a user op that names none (ops used with tx::map).
template <class Op> constexpr kind category_of() {
  if constexpr (requires { Op::category; }) return Op::category;
  else return kind::elementwise;
}
/// See category_of.
template <class Op> inline constexpr kind category_v = category_of<Op>();

/// Holds for ops that order their operands' values (comparisons, maximum/minimum, max/min/argmax/argmin): they
/// declare `orders = true`, and building one over a complex dtype is diagnostic::complex_has_no_order.
template <class Op> concept orders_values = requires { requires Op::orders; };

/// Base of elementwise op tags.
struct elementwise_op {
  static constexpr kind category = kind::elementwise;  ///< Fused into the reading pass.
};

/// Leaf reading a tensor or view from memory (not a kernel; placement shows where the memory lives).
struct leaf {
  static constexpr std::string_view name = "leaf";  ///< Shown by tx::placement.
  static constexpr kind category = kind::memory;    ///< Read in place.
  static constexpr auto dtypes = all_dtypes + complex_dtypes;  ///< Any stored dtype.
};

/// Leaf reading a value that autograd computes once per evaluation context and shares (tx::value_and_grad).
struct saved {
  static constexpr std::string_view name = "saved";  ///< Shown by tx::placement.
  static constexpr kind category = kind::memory;     ///< Read in place once computed.
  static constexpr auto dtypes = all_dtypes + complex_dtypes;  ///< Any stored dtype.
};

/// A constant broadcast to a shape: scalars in expressions, tx::zeros / ones / full.
struct constant {
  static constexpr std::string_view name = "constant";  ///< Shown by tx::placement.
  static constexpr kind category = kind::constant;      ///< Needs no kernel.
  static constexpr auto dtypes = all_dtypes + complex_dtypes;  ///< Any stored dtype.
};

/// Element-for-element copy of memory into memory: what runs when the graph is a leaf or a view of one.
struct copy {
  static constexpr std::string_view name = "copy";    ///< Shown by tx::placement.
  static constexpr kind category = kind::elementwise;  ///< A fused pass with nothing to fuse.
  static constexpr auto dtypes = all_dtypes + complex_dtypes;  ///< Any stored dtype.
};

} // namespace texpr::op
