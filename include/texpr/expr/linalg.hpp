// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Linear algebra nodes (op/linalg.hpp): linalg_expr, one library call per matrix of the last two axes, batched over
// the leading ones; tx::linalg_error, what a failed factorisation throws; the builders tx::linalg::cholesky,
// solve_triangular and solve. Reached through texpr/linalg.hpp.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/linalg.hpp"

namespace texpr {

/// A factorisation or solve the library could not complete for one matrix of a batch (not positive definite,
/// singular): names the op, the batch index (the matrix's position in the flattened leading axes) and the
/// library's `info` (LAPACK's: the order of the failing minor or pivot, 1-based).
struct linalg_error : std::runtime_error {
  /// The message names op, batch and info; the fields keep them for code that handles the error.
  linalg_error(std::string_view op, index_t batch, long long info, const std::string& why)
      : std::runtime_error("texpr: " + std::string(op) + " failed for matrix " + std::to_string(batch) +
                           " of the batch (info " + std::to_string(info) + "): " + why),
        op_name(op), batch_index(batch), library_info(info) {}
  std::string_view op_name;  ///< The op (cholesky, solve, ...).
  index_t batch_index;       ///< Which matrix: its index in the leading axes flattened row-major.
  long long library_info;    ///< The library's info code (LAPACK: > 0 names the failing row/column, 1-based).
};

namespace linalg {
/// Which triangle of a triangular matrix is read.
enum class triangle { lower, upper };
} // namespace linalg

/// Op of the matrices in the last two axes of its operands (A; or A and B), batched over the leading axes, which
/// are equal for every operand. The result has the last operand's shape, except for the ops that pack several
/// results of one factorisation into one value (see shape()).
template <class Op, class... Cs> class linalg_expr : public expr_base<linalg_expr<Op, Cs...>> {
  using last = detail::tuple_element_t<sizeof...(Cs) - 1, detail::tuple<Cs...>>;
  using first = detail::tuple_element_t<0, detail::tuple<Cs...>>;

 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<Cs...>;
  using value_type = typename first::value_type;
  using kernel_dtype = value_type;
  using backend = typename detail::common_backend<typename Cs::backend...>::type;
  /// slogdet, eigvalsh and svdvals give a vector per matrix (one axis fewer); the others a matrix.
  static constexpr bool vector_result =
      std::is_same_v<Op, op::slogdet> || std::is_same_v<Op, op::eigvalsh> || std::is_same_v<Op, op::svdvals>;
  static constexpr std::size_t rank = vector_result ? last::rank - 1 : last::rank;

  /// Op of the operands (checked by the builders) with the op's one option `flag`: solve_triangular reads the upper
  /// triangle, svd computes full U and Vᴴ; the other ops ignore it.
  explicit linalg_expr(bool flag, Cs... c) : c_{{std::move(c)}...}, flag_(flag) {}
  /// The result shape: the last operand's, or for a matrix A (..., m, n): slogdet (..., 2) ([sign, log|det|]);
  /// eigh (..., n, 1 + n) (row r: eigenvalue r, then eigenvector r); eigvalsh (..., n); svd (..., rows, m + 1 + n)
  /// with rows = min(m, n) (max(m, n) for full matrices); svdvals (..., min(m, n)); qr (..., min(m, n), m + n);
  /// lstsq of A (..., m, n) and B (..., m, k): (..., n, k); lu_factor (..., n, n + 1) (LU, then the pivots).
  shape_t<rank> shape() const {
    const auto s = detail::get<sizeof...(Cs) - 1>(c_).shape();
    constexpr std::size_t R = last::rank;
    if constexpr (std::is_same_v<Op, op::slogdet> || std::is_same_v<Op, op::eigvalsh> || std::is_same_v<Op, op::eigh> ||
                  std::is_same_v<Op, op::svd> || std::is_same_v<Op, op::svdvals> || std::is_same_v<Op, op::qr> ||
                  std::is_same_v<Op, op::lstsq> || std::is_same_v<Op, op::lu_factor>) {
      shape_t<rank> r{};
      for (std::size_t d = 0; d + 2 < R; ++d) r[d] = s[d];
      const index_t m = s[R - 2], n = s[R - 1], k = m < n ? m : n;
      if constexpr (std::is_same_v<Op, op::slogdet>) r[R - 2] = 2;
      if constexpr (std::is_same_v<Op, op::eigvalsh>) r[R - 2] = n;
      if constexpr (std::is_same_v<Op, op::eigh>) r[R - 2] = n, r[R - 1] = n + 1;
      if constexpr (std::is_same_v<Op, op::svd>) r[R - 2] = flag_ ? m + n - k : k, r[R - 1] = m + 1 + n;
      if constexpr (std::is_same_v<Op, op::svdvals>) r[R - 2] = k;
      if constexpr (std::is_same_v<Op, op::qr>) r[R - 2] = k, r[R - 1] = m + n;
      if constexpr (std::is_same_v<Op, op::lu_factor>) r[R - 2] = n, r[R - 1] = n + 1;
      if constexpr (std::is_same_v<Op, op::lstsq>) r[R - 2] = detail::get<0>(c_).shape()[R - 1], r[R - 1] = n;  // (A's n, B's k)
      return r;
    } else {
      return s;
    }
  }
  /// The operands.
  const detail::tuple<Cs...>& operands() const { return c_; }
  /// True when the op reads the upper triangle of A (solve_triangular).
  bool upper() const { return flag_; }
  /// True when svd computes full U (m x m) and Vᴴ (n x n).
  bool full_matrices() const { return flag_; }
  /// The same op over other operands of the same shapes.
  template <class... Ds> linalg_expr<Op, Ds...> with_operands(Ds... d) const { return linalg_expr<Op, Ds...>(flag_, std::move(d)...); }

 private:
  detail::tuple<Cs...> c_;
  bool flag_;
};

namespace detail {

/// Checks that a is a batch of square matrices; throws the shape_error naming op and a's shape otherwise.
template <std::size_t R> void check_square(const shape_t<R>& a, std::string_view op, const texpr::source_location& loc) {
  if (a[R - 2] != a[R - 1])
    throw shape_error(at(loc) + "texpr: linalg::" + std::string(op) + " needs square matrices in the last two axes; got shape " +
                      to_string(a));
}

/// Checks that b holds right-hand sides for a (same leading axes, as many rows as a); throws naming both shapes.
template <std::size_t R> void check_right_hand_side(const shape_t<R>& a, const shape_t<R>& b, std::string_view op, const texpr::source_location& loc) {
  bool ok = b[R - 2] == a[R - 1];
  for (std::size_t d = 0; d + 2 < R; ++d) ok = ok && a[d] == b[d];
  if (!ok)
    throw shape_error(at(loc) + "texpr: linalg::" + std::string(op) + " of A of shape " + to_string(a) + " and B of shape " +
                      to_string(b) + ": B needs A's leading axes and A's order as its rows (A (..., n, n), B (..., n, k))");
}

/// a captured as a batch of matrices (rank 2 or more), any m x n.
template <class A> auto matrices(A&& a) {
  static_assert(captured_t<A>::rank >= 2, "texpr: linalg's ops need matrices (rank 2 or more)");
  return capture(std::forward<A>(a));
}

/// a captured, checked to be a batch of square matrices (rank 2 or more; the shape_error names op and a's shape).
template <class A> auto square_matrices(A&& a, std::string_view op, const texpr::source_location& loc) {
  static_assert(captured_t<A>::rank >= 2, "texpr: linalg's ops need matrices (rank 2 or more)");
  auto ca = capture(std::forward<A>(a));
  check_square(ca.shape(), op, loc);
  return ca;
}

/// Checks that b holds right-hand sides for the m x n matrices a (same leading axes, m rows); throws naming both shapes.
template <std::size_t R> void check_least_squares(const shape_t<R>& a, const shape_t<R>& b, const texpr::source_location& loc) {
  bool ok = b[R - 2] == a[R - 2];
  for (std::size_t d = 0; d + 2 < R; ++d) ok = ok && a[d] == b[d];
  if (!ok)
    throw shape_error(at(loc) + "texpr: linalg::lstsq of A of shape " + to_string(a) + " and B of shape " + to_string(b) +
                      ": B needs A's leading axes and A's rows (A (..., m, n), B (..., m, k))");
}

template <class Op, class A, class B> auto linalg_solve_node(A&& a, B&& b, bool upper, const texpr::source_location& loc) {
  using CA = captured_t<A>;
  using CB = captured_t<B>;
  static_assert(CA::rank >= 2 && CB::rank == CA::rank,
                "texpr: linalg solves take A (..., n, n) and B (..., n, k) of the same rank (a vector b: unsqueeze(b, -1))");
  static_assert(std::is_same_v<typename CA::value_type, typename CB::value_type>, "texpr: linalg solves need A and B of one dtype");
  auto ca = capture(std::forward<A>(a));
  auto cb = capture(std::forward<B>(b));
  check_square(ca.shape(), Op::name, loc);
  check_right_hand_side(ca.shape(), cb.shape(), Op::name, loc);
  return linalg_expr<Op, CA, CB>(upper, std::move(ca), std::move(cb));
}

} // namespace detail

namespace linalg {

/// Lazy lower Cholesky factor L of each symmetric positive definite matrix in a's last two axes (A = L Lᵀ,
/// numpy.linalg.cholesky): only the lower triangle is read; L's strict upper triangle is zero. A matrix that is not
/// positive definite throws tx::linalg_error at evaluation (its batch index and the failing minor's order).
template <operand A> auto cholesky(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  auto ca = detail::square_matrices(std::forward<A>(a), "cholesky", loc);
  return linalg_expr<op::cholesky, decltype(ca)>(false, std::move(ca));
}

/// Lazy X with A X = B for triangular A (the `which` triangle of A is read, the rest ignored; non-unit diagonal):
/// A (..., n, n), B (..., n, k). A zero on the diagonal throws tx::linalg_error at evaluation.
template <operand A, operand B>
auto solve_triangular(A&& a, B&& b, triangle which, texpr::source_location loc = texpr::source_location::current()) {
  return detail::linalg_solve_node<op::solve_triangular>(std::forward<A>(a), std::forward<B>(b), which == triangle::upper, loc);
}

/// Lazy least-squares solution X (..., n, k) minimising |A X - B| for A (..., m, n), B (..., m, k) (numpy.linalg.
/// lstsq's first result, rcond=None): the minimum-norm solution where A is rank deficient, by LAPACK's gelsd (SVD,
/// as NumPy). Non-convergence of the SVD throws tx::linalg_error at evaluation.
template <operand A, operand B> auto lstsq(A&& a, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  using CA = detail::captured_t<A>;
  using CB = detail::captured_t<B>;
  static_assert(CA::rank >= 2 && CB::rank == CA::rank,
                "texpr: linalg::lstsq takes A (..., m, n) and B (..., m, k) of the same rank (a vector b: unsqueeze(b, -1))");
  static_assert(std::is_same_v<typename CA::value_type, typename CB::value_type>, "texpr: linalg::lstsq needs A and B of one dtype");
  auto ca = detail::capture(std::forward<A>(a));
  auto cb = detail::capture(std::forward<B>(b));
  detail::check_least_squares(ca.shape(), cb.shape(), loc);
  return linalg_expr<op::lstsq, CA, CB>(false, std::move(ca), std::move(cb));
}

/// Lazy X with A X = B (numpy.linalg.solve) by LU with partial pivoting: A (..., n, n), B (..., n, k). An exactly
/// singular A throws tx::linalg_error at evaluation.
template <operand A, operand B> auto solve(A&& a, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  return detail::linalg_solve_node<op::solve>(std::forward<A>(a), std::forward<B>(b), false, loc);
}

} // namespace linalg
} // namespace texpr
