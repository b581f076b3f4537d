// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy elementwise expressions: the map node, arithmetic operators, maths functions, comparisons, where and
// cast. A chain of these evaluates in one fused pass.
#pragma once

#include <algorithm>
#include <cstddef>
#include "texpr/core/source_location.hpp"
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/diagnostics.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/elementwise.hpp"

namespace texpr {

namespace detail {

template <class Op, class First> struct kernel_dtype_of { using type = typename First::value_type; };
template <class To, class First> struct kernel_dtype_of<op::cast<To>, First> { using type = To; };

template <class... C> constexpr std::size_t max_rank() {
  std::size_t r = 0;
  ((r = std::max(r, C::rank)), ...);  // std::max: no nvcc warning when a rank is 0
  return r;
}

template <std::size_t RA> shape_t<RA> broadcast_all(const char*, const shape_t<RA>& a) { return a; }
template <std::size_t RA, std::size_t RB, class... Rest>
auto broadcast_all(const char* what, const shape_t<RA>& a, const shape_t<RB>& b, const Rest&... rest) {
  return broadcast_all(what, broadcast_shapes(a, b, what), rest...);
}

} // namespace detail

/// Lazy elementwise node: Op applied to broadcast operands. The result shape follows NumPy broadcasting.
template <class Op, class... C> class map_expr : public expr_base<map_expr<Op, C...>> {
  using first = std::tuple_element_t<0, std::tuple<C...>>;
  using last = std::tuple_element_t<sizeof...(C) - 1, std::tuple<C...>>;

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C...>;
  /// dtype the kernel is registered under: the operands' (for where: the branches'; for cast: the target).
  using kernel_dtype = std::conditional_t<detail::selecting_op<Op>, typename last::value_type,
                                          typename detail::kernel_dtype_of<Op, first>::type>;
  /// Result dtype: bool for comparisons and logical ops, the op's `result` where it has one (abs of a complex is
  /// real), kernel_dtype otherwise.
  using value_type = std::conditional_t<detail::predicate_op<Op>, bool, typename detail::elementwise_result<Op, kernel_dtype>::type>;
  using backend = typename detail::common_backend<typename C::backend...>::type;
  static constexpr std::size_t rank = detail::max_rank<C...>();

  /// Builds the node; throws shape_error (prefixed with *loc's file:line when given) when the operands' shapes
  /// do not broadcast.
  explicit map_expr(C... c, const texpr::source_location* loc = nullptr) : c_{{std::move(c)}...} {
    try {
      shape_ = broadcast_operands(std::index_sequence_for<C...>{});
    } catch (const shape_error& e) {
      if (!loc) throw;
      throw shape_error(detail::at(*loc) + e.what());
    }
  }

  /// Broadcast result shape.
  const shape_t<rank>& shape() const { return shape_; }
  /// The operands' shapes broadcast together (a shape_error names the op and the shapes when they do not).
  template <std::size_t... I> shape_t<rank> broadcast_operands(std::index_sequence<I...>) const {
    return detail::broadcast_all(Op::name.data(), detail::get<I>(c_).shape()...);
  }
  /// The operands, in order.
  const detail::tuple<C...>& operands() const { return c_; }
  /// The same op over other operands (autograd rebuilds forward nodes over saved values).
  template <class... D> map_expr<Op, D...> with_operands(D... d) const { return map_expr<Op, D...>(std::move(d)...); }

 private:
  detail::tuple<C...> c_;
  shape_t<rank> shape_{};
};

namespace detail {

/// After a complex_has_no_order diagnostic: the operand's real part, so that the stand-in node compiles and the
/// diagnostic is the only error.
template <class E> auto real_stand_in(E&& e) {
  if constexpr (is_complex_v<typename captured_t<E>::value_type>) return map_expr<op::real, captured_t<E>>(capture(std::forward<E>(e)));
  else return capture(std::forward<E>(e));
}

template <class Op, class... E> auto make_map_at(const texpr::source_location* loc, E&&... e) {
  if constexpr (op::orders_values<Op> && (is_complex_v<typename captured_t<E>::value_type> || ...)) {
    check_ordered<Op, typename captured_t<E>::value_type...>();
    return make_map_at<Op>(loc, real_stand_in(std::forward<E>(e))...);
  } else {
    using node_t = map_expr<Op, captured_t<E>...>;
    return node_t(capture(std::forward<E>(e))..., loc);
  }
}
template <class Op, class... E> auto make_map(E&&... e) { return make_map_at<Op>(nullptr, std::forward<E>(e)...); }

template <class Op, class A, class B> auto make_binary(const texpr::source_location* loc, A&& a, B&& b) {
  using CA = captured_t<A>;
  using CB = captured_t<B>;
  check_same_dtype<typename CA::value_type, typename CB::value_type>();
  check_same_backend<typename CA::backend, typename CB::backend>();
  if constexpr (std::is_same_v<typename CA::value_type, typename CB::value_type> &&
                compatible_backends_v<typename CA::backend, typename CB::backend>)
    return make_map_at<Op>(loc, std::forward<A>(a), std::forward<B>(b));
  else
    return capture(std::forward<A>(a));  // after the diagnostic: a stand-in, so that it is the only error
}

/// Converts a scalar to the dtype of the tensor it meets; a floating scalar with an integer tensor is an error.
template <class T, class S> auto make_scalar(S s) {
  if constexpr (is_integer_v<T> && std::is_floating_point_v<S>)
    (void)sizeof(diagnostic::floating_scalar_with_integer_tensor<dtype_tag_t<T>, S>);
  if constexpr (is_float16_v<T>) return scalar_expr<T>(T(static_cast<float>(s)));
  else return scalar_expr<T>(static_cast<T>(s));
}

/// Arithmetic scalars (not texpr operands).
template <class S> concept arithmetic = std::is_arithmetic_v<S>;
/// A named tensor operand (an lvalue): the expression refers to it, so its overloads carry TEXPR_LIFETIMEBOUND.
/// Temporaries are moved into the expression and must not carry it (clang would warn about them).
template <class A> concept named_tensor = std::is_lvalue_reference_v<A> && is_tensor_v<A>;

} // namespace detail

/// Applies a (user-defined) elementwise op tag to operands; the op needs a kernel on the graph's backend.
template <class Op, operand... E>
  requires(sizeof...(E) >= 1)
auto map(E&&... e) {
  return detail::make_map<Op>(std::forward<E>(e)...);
}

// Operators cannot take a source location (C++ forbids default arguments on them); their shape errors name the
// op and both shapes. The named functions below prefix errors with the caller's file:line.
#define TEXPR_BINARY_OPERATOR(SYM, OP)                                                              \
  /** Lazy elementwise OP with broadcasting. */                                                      \
  template <operand A, operand B>                                                                    \
    requires(!detail::named_tensor<A> && !detail::named_tensor<B>)                                   \
  auto operator SYM(A&& a, B&& b) {                                                                  \
    return detail::make_binary<op::OP>(nullptr, std::forward<A>(a), std::forward<B>(b));              \
  }                                                                                                  \
  /** Lazy elementwise OP with broadcasting; the result refers to the named tensor a. */              \
  template <operand A, operand B>                                                                    \
    requires(detail::named_tensor<A> && !detail::named_tensor<B>)                                    \
  auto operator SYM(A&& a TEXPR_LIFETIMEBOUND, B&& b) {                                              \
    return detail::make_binary<op::OP>(nullptr, std::forward<A>(a), std::forward<B>(b));              \
  }                                                                                                  \
  /** Lazy elementwise OP with broadcasting; the result refers to the named tensor b. */              \
  template <operand A, operand B>                                                                    \
    requires(!detail::named_tensor<A> && detail::named_tensor<B>)                                    \
  auto operator SYM(A&& a, B&& b TEXPR_LIFETIMEBOUND) {                                              \
    return detail::make_binary<op::OP>(nullptr, std::forward<A>(a), std::forward<B>(b));              \
  }                                                                                                  \
  /** Lazy elementwise OP with broadcasting; the result refers to the named tensors a and b. */       \
  template <operand A, operand B>                                                                    \
    requires(detail::named_tensor<A> && detail::named_tensor<B>)                                     \
  auto operator SYM(A&& a TEXPR_LIFETIMEBOUND, B&& b TEXPR_LIFETIMEBOUND) {                          \
    return detail::make_binary<op::OP>(nullptr, std::forward<A>(a), std::forward<B>(b));              \
  }                                                                                                  \
  /** Lazy elementwise OP with a scalar converted to the tensor's dtype. */                          \
  template <operand A, detail::arithmetic S>                                                         \
    requires(!detail::named_tensor<A>)                                                               \
  auto operator SYM(A&& a, S s) {                                                                    \
    using T = typename detail::captured_t<A>::value_type;                                             \
    return detail::make_map<op::OP>(std::forward<A>(a), detail::make_scalar<T>(s));                   \
  }                                                                                                  \
  /** Lazy elementwise OP with a scalar; the result refers to the named tensor a. */                 \
  template <operand A, detail::arithmetic S>                                                         \
    requires(detail::named_tensor<A>)                                                                \
  auto operator SYM(A&& a TEXPR_LIFETIMEBOUND, S s) {                                                \
    using T = typename detail::captured_t<A>::value_type;                                             \
    return detail::make_map<op::OP>(std::forward<A>(a), detail::make_scalar<T>(s));                   \
  }                                                                                                  \
  /** Lazy elementwise OP with a scalar converted to the tensor's dtype. */                          \
  template <detail::arithmetic S, operand B>                                                         \
    requires(!detail::named_tensor<B>)                                                               \
  auto operator SYM(S s, B&& b) {                                                                    \
    using T = typename detail::captured_t<B>::value_type;                                             \
    return detail::make_map<op::OP>(detail::make_scalar<T>(s), std::forward<B>(b));                   \
  }                                                                                                  \
  /** Lazy elementwise OP with a scalar; the result refers to the named tensor b. */                 \
  template <detail::arithmetic S, operand B>                                                         \
    requires(detail::named_tensor<B>)                                                                \
  auto operator SYM(S s, B&& b TEXPR_LIFETIMEBOUND) {                                                \
    using T = typename detail::captured_t<B>::value_type;                                             \
    return detail::make_map<op::OP>(detail::make_scalar<T>(s), std::forward<B>(b));                   \
  }
TEXPR_BINARY_OPERATOR(+, add)
TEXPR_BINARY_OPERATOR(-, subtract)
TEXPR_BINARY_OPERATOR(*, multiply)
TEXPR_BINARY_OPERATOR(/, divide)
TEXPR_BINARY_OPERATOR(==, equal)
TEXPR_BINARY_OPERATOR(!=, not_equal)
TEXPR_BINARY_OPERATOR(<, less)
TEXPR_BINARY_OPERATOR(<=, less_equal)
TEXPR_BINARY_OPERATOR(>, greater)
TEXPR_BINARY_OPERATOR(>=, greater_equal)
TEXPR_BINARY_OPERATOR(&&, logical_and)
TEXPR_BINARY_OPERATOR(||, logical_or)
#undef TEXPR_BINARY_OPERATOR

#define TEXPR_BINARY_FUNCTION(NAME)                                                                 \
  /** Lazy elementwise NAME with broadcasting. */                                                    \
  template <operand A, operand B>                                                                    \
  auto NAME(A&& a, B&& b, texpr::source_location loc = texpr::source_location::current()) {              \
    return detail::make_binary<op::NAME>(&loc, std::forward<A>(a), std::forward<B>(b));               \
  }                                                                                                  \
  /** Lazy elementwise NAME with a scalar converted to the tensor's dtype. */                        \
  template <operand A, detail::arithmetic S> auto NAME(A&& a, S s) {                                  \
    using T = typename detail::captured_t<A>::value_type;                                             \
    return detail::make_map<op::NAME>(std::forward<A>(a), detail::make_scalar<T>(s));                 \
  }                                                                                                  \
  /** Lazy elementwise NAME with a scalar converted to the tensor's dtype. */                        \
  template <detail::arithmetic S, operand B> auto NAME(S s, B&& b) {                                  \
    using T = typename detail::captured_t<B>::value_type;                                             \
    return detail::make_map<op::NAME>(detail::make_scalar<T>(s), std::forward<B>(b));                 \
  }
TEXPR_BINARY_FUNCTION(add)
TEXPR_BINARY_FUNCTION(subtract)
TEXPR_BINARY_FUNCTION(multiply)
TEXPR_BINARY_FUNCTION(divide)
TEXPR_BINARY_FUNCTION(maximum)
TEXPR_BINARY_FUNCTION(minimum)
TEXPR_BINARY_FUNCTION(pow)
TEXPR_BINARY_FUNCTION(make_complex)
#undef TEXPR_BINARY_FUNCTION

#define TEXPR_UNARY_FUNCTION(NAME)                                   \
  /** Lazy elementwise NAME. */                                       \
  template <operand A>                                                \
    requires(!detail::named_tensor<A>)                                \
  auto NAME(A&& a) {                                                  \
    return detail::make_map<op::NAME>(std::forward<A>(a));             \
  }                                                                   \
  /** Lazy elementwise NAME; the result refers to the named tensor a. */ \
  template <operand A>                                                \
    requires(detail::named_tensor<A>)                                 \
  auto NAME(A&& a TEXPR_LIFETIMEBOUND) {                              \
    return detail::make_map<op::NAME>(std::forward<A>(a));             \
  }
TEXPR_UNARY_FUNCTIONS(TEXPR_UNARY_FUNCTION)
#undef TEXPR_UNARY_FUNCTION

/// Lazy elementwise negation.
template <operand A> auto operator-(A&& a) { return detail::make_map<op::negate>(std::forward<A>(a)); }
/// Lazy elementwise logical not (bool).
template <operand A> auto operator!(A&& a) { return detail::make_map<op::logical_not>(std::forward<A>(a)); }

/// ELU: x for x > 0, alpha * (exp(x) - 1) otherwise; alpha takes the tensor's dtype.
template <operand A, detail::arithmetic S> auto elu(A&& a, S alpha) {
  using T = typename detail::captured_t<A>::value_type;
  return detail::make_map<op::elu>(std::forward<A>(a), detail::make_scalar<T>(alpha));
}
/// ELU with alpha = 1: x for x > 0, exp(x) - 1 otherwise.
template <operand A> auto elu(A&& a) { return elu(std::forward<A>(a), 1); }

namespace detail {
template <class Cond, class A, class B> auto make_where(const texpr::source_location* loc, Cond&& c, A&& a, B&& b) {
  using CC = captured_t<Cond>;
  static_assert(std::is_same_v<typename CC::value_type, bool>,
                "texpr: tx::where needs a bool condition; compare first (e.g. x > 0)");
  check_same_dtype<typename captured_t<A>::value_type, typename captured_t<B>::value_type>();
  check_same_backend<typename CC::backend, typename captured_t<A>::backend>();
  check_same_backend<typename CC::backend, typename captured_t<B>::backend>();
  if constexpr (std::is_same_v<typename CC::value_type, bool> &&
                std::is_same_v<typename captured_t<A>::value_type, typename captured_t<B>::value_type> &&
                compatible_backends_v<typename CC::backend, typename captured_t<A>::backend> &&
                compatible_backends_v<typename CC::backend, typename captured_t<B>::backend>)
    return make_map_at<op::where>(loc, std::forward<Cond>(c), std::forward<A>(a), std::forward<B>(b));
  else
    return capture(std::forward<A>(a));  // after the diagnostic: a stand-in, so that it is the only error
}
} // namespace detail

/// Elementwise select: cond ? a : b, broadcasting all three; cond must be bool, a and b one dtype.
template <operand Cond, operand A, operand B>
auto where(Cond&& c, A&& a, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  return detail::make_where(&loc, std::forward<Cond>(c), std::forward<A>(a), std::forward<B>(b));
}
/// where with a scalar for b.
template <operand Cond, operand A, detail::arithmetic S>
auto where(Cond&& c, A&& a, S b, texpr::source_location loc = texpr::source_location::current()) {
  using T = typename detail::captured_t<A>::value_type;
  return detail::make_where(&loc, std::forward<Cond>(c), std::forward<A>(a), detail::make_scalar<T>(b));
}
/// where with a scalar for a.
template <operand Cond, detail::arithmetic S, operand B>
auto where(Cond&& c, S a, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  using T = typename detail::captured_t<B>::value_type;
  return detail::make_where(&loc, std::forward<Cond>(c), detail::make_scalar<T>(a), std::forward<B>(b));
}

/// x limited to [lo, hi] elementwise: min(max(x, lo), hi) with lo and hi in x's dtype (hi wins when lo > hi, as PyTorch).
template <operand A, detail::arithmetic L, detail::arithmetic H> auto clamp(A&& x, L lo, H hi) {
  using T = typename detail::captured_t<A>::value_type;
  return detail::make_map<op::clamp>(std::forward<A>(x), detail::make_scalar<T>(lo), detail::make_scalar<T>(hi));
}
/// clamp with tensor bounds, broadcasting all three (one dtype).
template <operand A, operand L, operand H>
auto clamp(A&& x, L&& lo, H&& hi, texpr::source_location loc = texpr::source_location::current()) {
  detail::check_same_dtype<typename detail::captured_t<A>::value_type, typename detail::captured_t<L>::value_type>();
  detail::check_same_dtype<typename detail::captured_t<A>::value_type, typename detail::captured_t<H>::value_type>();
  return detail::make_map_at<op::clamp>(&loc, std::forward<A>(x), std::forward<L>(lo), std::forward<H>(hi));
}

/// Explicit dtype conversion; the only way to change dtype (texpr never promotes implicitly). A real converts to a
/// complex (imaginary part 0) and a complex to the other complex; complex to real does not compile (NumPy warns that
/// it discards the imaginary part): say which real you mean with tx::real, tx::imag or tx::abs.
template <class To, operand A> auto cast(A&& a) {
  constexpr bool complex_to_real = !is_complex_v<To> && is_complex_v<typename detail::captured_t<A>::value_type>;
  static_assert(!complex_to_real, "texpr: complex to real is not a cast (it would discard the imaginary part); take "
                                  "tx::real(z), tx::imag(z) or tx::abs(z)");
  if constexpr (complex_to_real) return detail::make_map<op::cast<To>>(detail::real_stand_in(std::forward<A>(a)));  // one error
  else return detail::make_map<op::cast<To>>(std::forward<A>(a));
}

} // namespace texpr
