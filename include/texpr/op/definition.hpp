// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What an elementwise op's definition may carry besides its name, dtypes and scalar function, so that one struct
// holds everything about the op: its gradient, the reference its tests compare with, and its doc line.
// docs/adding_an_op.md walks through it.
#pragma once

#include <concepts>
#include <cstddef>
#include <string_view>

namespace texpr::op {

/// Gradient `reads` bit: the op's result (tx::grad saves it once per evaluation).
inline constexpr unsigned reads_result = 1;
/// Gradient `reads` bit: operand j.
constexpr unsigned reads_operand(std::size_t j) { return 2u << j; }

/// Inputs over which an op's test reference is compared with the op, and its gradient with finite differences
/// of the reference: keep it where the op is smooth and its float result is well conditioned.
struct reference_domain {
  double lo;  ///< Smallest input.
  double hi;  ///< Largest input.
};

/// Holds when unary op Op carries its gradient: `derivative` (the rule in words, for docs/gradients.md), `reads`
/// (what the rule reads of the forward pass: reads_result, reads_operand(0)) and `gradient(e, g, out, x)`, which
/// builds the contribution from the incoming gradient g, the result out and the operand x with texpr's operators
/// and e.template map<OtherOp>(...) / e.where(c, a, b) (e comes from tx::grad).
template <class Op>
concept unary_gradient_definition = requires {
  { Op::derivative } -> std::convertible_to<std::string_view>;
  { Op::reads } -> std::convertible_to<unsigned>;
};

/// Holds when elementwise op Op of two or more operands carries its gradient: `derivative`, `reads<I>` and
/// `gradient<I>(e, g, out, a, b, ...)` for each operand I, as for unary ops.
template <class Op>
concept operandwise_gradient_definition = requires {
  { Op::derivative } -> std::convertible_to<std::string_view>;
  { Op::template reads<0> } -> std::convertible_to<unsigned>;
};

/// Holds when op Op's definition carries its gradient, in either form.
template <class Op>
concept gradient_definition = unary_gradient_definition<Op> || operandwise_gradient_definition<Op>;

/// What Op's gradient for operand I reads (reads_result, reads_operand(j) bits).
template <class Op, std::size_t I> constexpr unsigned gradient_reads() {
  if constexpr (unary_gradient_definition<Op>) return Op::reads;
  else return Op::template reads<I>;
}

/// Holds when unary op Op carries its test reference: `domain` and `reference(long double)`, the function computed
/// in long double from its mathematical definition (not from `apply`).
template <class Op>
concept unary_reference_definition = requires(long double x) {
  { Op::domain } -> std::convertible_to<reference_domain>;
  { Op::reference(x) } -> std::convertible_to<long double>;
};

/// The op's one-line description for the generated docs: its `summary`, or empty.
template <class Op> constexpr std::string_view summary_of() {
  if constexpr (requires { { Op::summary } -> std::convertible_to<std::string_view>; }) return Op::summary;
  else return {};
}

} // namespace texpr::op
