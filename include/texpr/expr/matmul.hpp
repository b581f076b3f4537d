// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Lazy matrix product with NumPy's rules: (..., m, k) x (..., k, n) with broadcast batch dimensions; a rank-1
// operand is a vector (matrix-vector, vector-matrix, dot product).
#pragma once

#include <cstddef>
#include "texpr/core/source_location.hpp"
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/detail/checks.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/matmul.hpp"

namespace texpr {

namespace detail {

/// One operand of a matmul as a matrix: its extents and strides (a vector A is one row, a vector B one column).
struct matrix_layout {
  index_t rows, columns, row_stride, column_stride;
};
/// Operand I (0: A, 1: B) of a matmul, with `shape` and `strides` in memory, as a matrix: what every backend's
/// GEMM reads (eval/matmul_plan.hpp) and what tx::placement asks a backend that copies some layouts (cuBLAS).
template <std::size_t I, std::size_t R> matrix_layout matrix_of(const shape_t<R>& shape, const shape_t<R>& strides) {
  if constexpr (R == 1) {
    if constexpr (I == 0) return {1, shape[0], 0, strides[0]};
    else return {shape[0], 1, strides[0], 0};
  } else {
    return {shape[R - 2], shape[R - 1], strides[R - 2], strides[R - 1]};
  }
}

/// The result dtype of Op on T operands: T for matmul, Op::result_t<T> for scaled_matmul.
template <class Op, class T> struct matmul_result { using type = typename Op::template result_t<T>; };
template <class T> struct matmul_result<op::matmul, T> { using type = T; };

/// The result rank of matmul on operands of ranks RA and RB.
constexpr std::size_t matmul_rank(std::size_t ra, std::size_t rb) {
  if (ra == 1 && rb == 1) return 0;
  if (ra == 1) return rb - 1;
  if (rb == 1) return ra - 1;
  return ra > rb ? ra : rb;
}

/// Throws the shape_error of a binary node `op` whose operand shapes a and b do not fit (`what` says how), naming
/// both and the caller's file:line when given: out of line, one body per pair of ranks, rather than a message
/// built in every node type's constructor.
template <std::size_t RA, std::size_t RB>
[[noreturn]] TEXPR_NOINLINE void throw_operand_shapes(const texpr::source_location* loc, std::string_view op, const char* what,
                                                      const shape_t<RA>& a, const shape_t<RB>& b) {
  throw shape_error((loc ? at(*loc) : std::string()) + "texpr: " + std::string(op) + " " + what + ": LHS shape = " +
                    to_string(a) + " RHS shape = " + to_string(b));
}
} // namespace detail

/// Matrix product node (Op: op::matmul, or op::scaled_matmul of 8-bit operands into a wider result). Operands of
/// rank 1 are vectors; of rank 2 or more, stacks of matrices whose leading (batch) dimensions broadcast.
template <class A, class B, class Op = op::matmul> class matmul_expr : public expr_base<matmul_expr<A, B, Op>> {
  static_assert(A::rank >= 1 && B::rank >= 1, "texpr: matmul takes operands of rank 1 or more (vectors, matrices, stacks)");

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<A, B>;
  using kernel_dtype = typename A::value_type;
  using value_type = typename detail::matmul_result<Op, typename A::value_type>::type;
  using backend = typename detail::common_backend<typename A::backend, typename B::backend>::type;
  static constexpr std::size_t rank = detail::matmul_rank(A::rank, B::rank);
  /// Rank of the broadcast batch shape.
  static constexpr std::size_t batch_rank = (A::rank > B::rank ? A::rank : B::rank) > 2 ? (A::rank > B::rank ? A::rank : B::rank) - 2 : 0;

  /// Builds the node; mismatched inner or batch dimensions, and a result whose element count overflows int64,
  /// throw shape_error naming both shapes (and the caller's file:line when given).
  matmul_expr(A a, B b, const texpr::source_location* loc = nullptr, float scale = 1.0f)
      : c_{{std::move(a)}, {std::move(b)}}, scale_(scale) {
    const auto as = detail::get<0>(c_).shape();
    const auto bs = detail::get<1>(c_).shape();
    auto fail = [&](const char* what) { detail::throw_operand_shapes(loc, Op::name, what, as, bs); };
    const index_t ka = as[A::rank - 1];
    const index_t kb = B::rank == 1 ? bs[0] : bs[B::rank - 2];
    if (ka != kb) fail("inner dimensions differ");
    // Batch dimensions (all but the last two of each operand of rank >= 2) broadcast from the right.
    shape_t<batch_rank> batch{};
    const auto batch_extent = [](const auto& s, std::size_t r, std::size_t from_end) -> index_t {
      return r >= 2 && r - 2 >= from_end ? s[r - 2 - from_end] : 1;  // 1 where the operand has no such dimension
    };
    for (std::size_t i = 0; i != batch_rank; ++i) {
      const std::size_t from_end = batch_rank - i;  // 1 = the batch dimension next to the matrix
      const index_t ea = batch_extent(as, A::rank, from_end);
      const index_t eb = batch_extent(bs, B::rank, from_end);
      if (ea != eb && ea != 1 && eb != 1) fail("batch dimensions do not broadcast");
      batch[i] = ea == 1 ? eb : ea;
    }
    std::size_t o = 0;
    for (std::size_t i = 0; i != batch_rank; ++i) shape_[o++] = batch[i];
    if constexpr (A::rank >= 2) shape_[o++] = as[A::rank - 2];
    if constexpr (B::rank >= 2) shape_[o++] = bs[B::rank - 1];
    // (m, k) @ (k, n) of two valid shapes can still hold more than int64 elements: (2^40, 1) @ (1, 2^40).
    if (!detail::shape_problem(shape_, 1).empty()) fail(("result shape " + to_string(shape_) + " is too large").c_str());
  }

  /// (..., m, n), without m for a vector on the left and without n for a vector on the right.
  const shape_t<rank>& shape() const { return shape_; }
  /// The operands (left, right).
  const detail::tuple<A, B>& operands() const { return c_; }
  /// The product of other operands of the same shapes.
  template <class D, class E> matmul_expr<D, E, Op> with_operands(D d, E e) const {
    return matmul_expr<D, E, Op>(std::move(d), std::move(e), nullptr, scale_);
  }
  /// The factor the product is multiplied by (scaled_matmul of 8-bit floats: scale_a * scale_b; else 1).
  float scale() const { return scale_; }

 private:
  detail::tuple<A, B> c_;
  shape_t<rank> shape_{};
  float scale_ = 1.0f;
};

/// Lazy matrix product of two operands of one dtype and backend (NumPy's matmul rules).
template <operand A, operand B>
auto matmul(A&& a, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  using CA = detail::captured_t<A>;
  using CB = detail::captured_t<B>;
  detail::check_same_dtype<typename CA::value_type, typename CB::value_type>();
  detail::check_same_backend<typename CA::backend, typename CB::backend>();
  return matmul_expr<CA, CB>(detail::capture(std::forward<A>(a)), detail::capture(std::forward<B>(b)), &loc);
}

/// Lazy product of 8-bit operands into a wider result (NumPy's matmul rules): int8 operands give int32, accumulated
/// exactly (wrapping past 2^31); 8-bit float operands give float32, accumulated in float. Evaluating it is a
/// registry lookup like any node: on cuda it needs sm_89 for the 8-bit floats (FP8 tensor cores).
template <operand A, operand B>
auto scaled_matmul(A&& a, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  using CA = detail::captured_t<A>;
  using CB = detail::captured_t<B>;
  detail::check_same_dtype<typename CA::value_type, typename CB::value_type>();
  detail::check_same_backend<typename CA::backend, typename CB::backend>();
  static_assert(in_dtype_set_v<std::remove_cvref_t<decltype(eight_bit)>, typename CA::value_type>,
                "texpr: scaled_matmul takes 8-bit operands (int8, float8_e4m3, float8_e5m2); use tx::matmul otherwise");
  return matmul_expr<CA, CB, op::scaled_matmul>(detail::capture(std::forward<A>(a)), detail::capture(std::forward<B>(b)), &loc);
}

/// Lazy scale_a * scale_b * (a b) of 8-bit float operands (per-tensor scales, as FP8 training stores them), in
/// float32: the product accumulates in float and is scaled once.
template <operand A, operand B>
auto scaled_matmul(A&& a, B&& b, float scale_a, float scale_b, texpr::source_location loc = texpr::source_location::current()) {
  using CA = detail::captured_t<A>;
  using CB = detail::captured_t<B>;
  detail::check_same_dtype<typename CA::value_type, typename CB::value_type>();
  detail::check_same_backend<typename CA::backend, typename CB::backend>();
  static_assert(is_float8_v<typename CA::value_type>,
                "texpr: scales apply to 8-bit float operands; an int8 product is exact in int32 (no scales)");
  return matmul_expr<CA, CB, op::scaled_matmul>(detail::capture(std::forward<A>(a)), detail::capture(std::forward<B>(b)), &loc,
                                                scale_a * scale_b);
}

} // namespace texpr
