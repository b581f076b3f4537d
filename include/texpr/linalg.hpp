// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dense linear algebra, opt-in (texpr/texpr.hpp does not include it): tx::linalg::cholesky, solve_triangular,
// solve, inv, slogdet, det, eigh, eigvalsh, svd, svdvals, qr, lstsq, matrix_norm, lu_factor and lu_solve, batched
// over leading axes, with gradients (not lu_factor's and lu_solve's yet). The host rows call LAPACK: link
// texpr::linalg (CMake), which links the LAPACK CMake finds (Debian: liblapack-dev, or OpenBLAS's). The rows are in
// the host registry table as usual. On cuda cholesky, solve_triangular, solve (inv), slogdet (det), eigh, eigvalsh,
// lu_factor, lu_solve, qr, svd and svdvals have rows (float, double: cuSOLVER's potrf, getrf/getrs, syevd,
// geqrf/orgqr, gesvd, and cuBLAS's trsm; texpr::linalg links CUDA::cusolver there); any other op, or a 16-bit
// dtype, on cuda is the usual compile error naming op, dtype, cuda.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "texpr/texpr.hpp"
#include "texpr/expr/linalg.hpp"
#include "texpr/backend/host/linalg.hpp"
#include "texpr/backend/cuda/linalg.hpp"

namespace texpr {
namespace detail {

/// Row and column positions of an n x n matrix on backend B, as [n, 1] and [1, n] (int64): masks of triangles.
template <class B> auto matrix_rows(index_t n) { return unsqueeze(arange<std::int64_t, B>(n), -1); }
template <class B> auto matrix_columns(index_t n) { return unsqueeze(arange<std::int64_t, B>(n), 0); }

/// m's triangle (lower: i >= j; upper: i <= j), the rest zero; m's matrices are n x n.
template <class B, class T, class M> auto triangle_of(M&& m, index_t n, bool upper) {
  return where((matrix_columns<B>(n) - matrix_rows<B>(n)) * std::int64_t(upper ? 1 : -1) >= std::int64_t(0), std::forward<M>(m), T(0));
}

/// The identity matrices of shape s (the last two axes n x n), dtype T, on backend B.
template <class T, class B, std::size_t R> auto identity_like(const shape_t<R>& s) {
  const index_t n = s[R - 1];
  return broadcast_to(cast<T>(matrix_rows<B>(n) == matrix_columns<B>(n)), s);
}

} // namespace detail

namespace linalg {

/// Lazy inverse of each square matrix in a's last two axes (numpy.linalg.inv): solve(a, I), LU with partial
/// pivoting; an exactly singular matrix throws tx::linalg_error at evaluation. Prefer solve(a, b) to inv(a) b.
template <operand A> auto inv(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  auto ca = detail::square_matrices(std::forward<A>(a), "inv", loc);
  using CA = decltype(ca);
  auto eye = detail::identity_like<typename CA::value_type, typename CA::backend>(ca.shape());
  return solve(std::move(ca), std::move(eye), loc);
}

/// What tx::linalg::slogdet returns: each matrix's determinant's sign and the log of its absolute value.
template <class Sign, class Log> struct slogdet_result {
  Sign sign;      ///< -1, 0 (singular) or 1: a lazy expression.
  Log logabsdet;  ///< log |det| (-inf when singular): a lazy expression.
};

/// The sign and log|det| of each square matrix in a's last two axes (numpy.linalg.slogdet), as
/// `auto [sign, logabsdet] =`: one LU factorisation per matrix (LAPACK's getrf) serves both (a shared value of
/// op slogdet, packed [sign, log|det|] in a last axis of 2). A singular matrix gives sign 0 and log|det| -inf, as
/// NumPy: not an error. Gradient through log|det|: A⁻ᵀ (an error where A is singular).
template <operand A> auto slogdet(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  auto ca = detail::square_matrices(std::forward<A>(a), "slogdet", loc);
  using CA = decltype(ca);
  auto packed = share(linalg_expr<op::slogdet, CA>(false, std::move(ca)));
  constexpr index_t last = static_cast<index_t>(CA::rank) - 2;  // the packed axis
  auto sign = squeeze(slice(packed, last, 0, 1), last);
  auto logabsdet = squeeze(slice(packed, last, 1, 2), last);
  return slogdet_result<decltype(sign), decltype(logabsdet)>{std::move(sign), std::move(logabsdet)};
}

/// Lazy determinant of each square matrix in a's last two axes (numpy.linalg.det): sign * exp(log|det|) of slogdet,
/// so it neither overflows nor underflows before the last step.
template <operand A> auto det(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  auto [sign, logabsdet] = slogdet(std::forward<A>(a), loc);
  return sign * exp(logabsdet);
}

/// What tx::linalg::eigh returns: each symmetric matrix's eigenvalues, ascending, and its eigenvectors as columns.
template <class Values, class Vectors> struct eigh_result {
  Values eigenvalues;    ///< (..., n), ascending: a lazy expression.
  Vectors eigenvectors;  ///< (..., n, n), column r the unit eigenvector of eigenvalue r: a lazy expression.
};

/// The eigenvalues (ascending) and eigenvectors (columns, orthonormal) of each symmetric matrix in a's last two axes
/// (numpy.linalg.eigh), as `auto [w, v] =`: only the lower triangle is read (NumPy's default UPLO='L'). One
/// LAPACK syevd per matrix serves both (a shared value of op eigh, packed (..., n, 1 + n)). Each eigenvector's sign
/// is LAPACK's choice (as NumPy's). Non-convergence is a tx::linalg_error at evaluation.
template <operand A> auto eigh(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  auto ca = detail::square_matrices(std::forward<A>(a), "eigh", loc);
  using CA = decltype(ca);
  const index_t n = ca.shape()[CA::rank - 1];
  auto packed = share(linalg_expr<op::eigh, CA>(false, std::move(ca)));
  constexpr index_t last = static_cast<index_t>(CA::rank) - 1;
  auto values = squeeze(slice(packed, last, 0, 1), last);
  auto vectors = transpose(slice(packed, last, 1, n + 1));
  return eigh_result<decltype(values), decltype(vectors)>{std::move(values), std::move(vectors)};
}

/// Lazy eigenvalues (ascending) of each symmetric matrix in a's last two axes (numpy.linalg.eigvalsh), lower
/// triangle read: LAPACK's syevd without eigenvectors, cheaper than eigh's.
template <operand A> auto eigvalsh(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  auto ca = detail::square_matrices(std::forward<A>(a), "eigvalsh", loc);
  return linalg_expr<op::eigvalsh, decltype(ca)>(false, std::move(ca));
}

/// What tx::linalg::svd returns: A = U diag(s) Vᴴ.
template <class U, class S, class Vh> struct svd_result {
  U u;    ///< (..., m, k), or (..., m, m) with full matrices: orthonormal columns; a lazy expression.
  S s;    ///< (..., k), k = min(m, n), descending and non-negative: a lazy expression.
  Vh vh;  ///< (..., k, n), or (..., n, n) with full matrices: orthonormal rows; a lazy expression.
};

/// The singular value decomposition A = U diag(s) Vᴴ of each m x n matrix in a's last two axes (numpy.linalg.svd),
/// as `auto [u, s, vh] =`: one LAPACK gesdd (divide and conquer, as NumPy) per matrix serves the three (a shared value of
/// op svd). Reduced by default (u (..., m, k), vh (..., k, n), k = min(m, n)); full_matrices: u (..., m, m) and vh
/// (..., n, n), their extra columns/rows an orthonormal completion. Signs of the singular vector pairs are LAPACK's
/// choice. Non-convergence is a tx::linalg_error at evaluation.
template <operand A> auto svd(A&& a, bool full_matrices = false) {
  auto ca = detail::matrices(std::forward<A>(a));
  using CA = decltype(ca);
  constexpr std::size_t R = CA::rank;
  const index_t m = ca.shape()[R - 2], n = ca.shape()[R - 1], k = std::min(m, n);
  auto packed = share(linalg_expr<op::svd, CA>(full_matrices, std::move(ca)));
  constexpr index_t rows = static_cast<index_t>(R) - 2, last = static_cast<index_t>(R) - 1;
  auto u = transpose(slice(slice(packed, last, 0, m), rows, 0, full_matrices ? m : k));
  auto s = squeeze(slice(slice(packed, last, m, m + 1), rows, 0, k), last);
  auto vh = slice(slice(packed, last, m + 1, m + 1 + n), rows, 0, full_matrices ? n : k);
  return svd_result<decltype(u), decltype(s), decltype(vh)>{std::move(u), std::move(s), std::move(vh)};
}

/// Lazy singular values (descending) of each matrix in a's last two axes (torch.linalg.svdvals; numpy.linalg.svd with
/// compute_uv=False): LAPACK's gesdd without vectors.
template <operand A> auto svdvals(A&& a) {
  auto ca = detail::matrices(std::forward<A>(a));
  return linalg_expr<op::svdvals, decltype(ca)>(false, std::move(ca));
}

/// What tx::linalg::qr returns: A = Q R.
template <class Q, class R> struct qr_result {
  Q q;  ///< (..., m, k), k = min(m, n), orthonormal columns: a lazy expression.
  R r;  ///< (..., k, n), upper triangular (zero below the diagonal): a lazy expression.
};

/// The reduced QR factorisation A = Q R of each m x n matrix in a's last two axes (numpy.linalg.qr, mode 'reduced';
/// torch.linalg.qr), as `auto [q, r] =`: Householder reflections, LAPACK's geqrf then orgqr per matrix (a shared value
/// of op qr). R's diagonal may be negative (LAPACK's and NumPy's convention: no sign normalisation).
template <operand A> auto qr(A&& a) {
  auto ca = detail::matrices(std::forward<A>(a));
  using CA = decltype(ca);
  constexpr index_t last = static_cast<index_t>(CA::rank) - 1;
  const index_t m = ca.shape()[CA::rank - 2], n = ca.shape()[CA::rank - 1];
  auto packed = share(linalg_expr<op::qr, CA>(false, std::move(ca)));
  auto q = transpose(slice(packed, last, 0, m));
  auto r = slice(packed, last, m, m + n);
  return qr_result<decltype(q), decltype(r)>{std::move(q), std::move(r)};
}

/// What tx::linalg::lu_factor returns: P A = L U as one matrix and LAPACK's row swaps.
template <class LU, class Pivots> struct lu_factor_result {
  LU lu;          ///< (..., n, n): U on and above the diagonal, L's multipliers below (unit diagonal not stored).
  Pivots pivots;  ///< (..., n) int32, 1-based: row i was swapped with row pivots[i] (LAPACK's ipiv, as torch's).
};

/// The LU factorisation with partial pivoting of each square matrix in a's last two axes (torch.linalg.lu_factor,
/// scipy.linalg.lu_factor), as `auto [lu, pivots] =`: LAPACK's getrf per matrix (a shared value of op lu_factor,
/// the pivots held in the dtype: exact below order 2^24, read back as int32). An exactly singular matrix throws
/// tx::linalg_error at evaluation (torch returns it with info; solve with it would divide by zero). No gradient.
template <operand A> auto lu_factor(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  auto ca = detail::square_matrices(std::forward<A>(a), "lu_factor", loc);
  using CA = decltype(ca);
  constexpr index_t last = static_cast<index_t>(CA::rank) - 1;
  const index_t n = ca.shape()[CA::rank - 1];
  auto packed = share(linalg_expr<op::lu_factor, CA>(false, std::move(ca)));
  auto lu = slice(packed, last, 0, n);
  auto pivots = cast<std::int32_t>(squeeze(slice(packed, last, n, n + 1), last));
  return lu_factor_result<decltype(lu), decltype(pivots)>{std::move(lu), std::move(pivots)};
}

/// Lazy X with A X = B from lu_factor(A)'s lu (..., n, n) and pivots (..., n) int32, B (..., n, k) (torch.linalg.
/// lu_solve): LAPACK's getrs. Pivots outside 1..n throw tx::linalg_error at evaluation. No gradient.
template <operand LU, operand P, operand B>
auto lu_solve(LU&& lu, P&& pivots, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  using CL = detail::captured_t<LU>;
  using CP = detail::captured_t<P>;
  using CB = detail::captured_t<B>;
  static_assert(CL::rank >= 2 && CB::rank == CL::rank && CP::rank + 1 == CL::rank,
                "texpr: linalg::lu_solve takes lu (..., n, n), pivots (..., n) and B (..., n, k)");
  static_assert(std::is_same_v<typename CP::value_type, std::int32_t>, "texpr: linalg::lu_solve's pivots are int32 (lu_factor's)");
  static_assert(std::is_same_v<typename CL::value_type, typename CB::value_type>, "texpr: linalg::lu_solve needs lu and B of one dtype");
  auto cl = detail::capture(std::forward<LU>(lu));
  auto cp = detail::capture(std::forward<P>(pivots));
  auto cb = detail::capture(std::forward<B>(b));
  detail::check_square(cl.shape(), "lu_solve", loc);
  detail::check_right_hand_side(cl.shape(), cb.shape(), "lu_solve", loc);
  bool ok = cp.shape()[CP::rank - 1] == cl.shape()[CL::rank - 1];
  for (std::size_t d = 0; d + 2 < CL::rank; ++d) ok = ok && cp.shape()[d] == cl.shape()[d];
  if (!ok)
    throw shape_error(detail::at(loc) + "texpr: linalg::lu_solve of lu of shape " + to_string(cl.shape()) + " and pivots of shape " +
                      to_string(cp.shape()) + ": the pivots need lu's leading axes and its order");
  return linalg_expr<op::lu_solve, CL, CP, CB>(false, std::move(cl), std::move(cp), std::move(cb));
}

/// matrix_norm's orders (numpy.linalg.norm's ord for matrices): tag types, so that each order's expression has its own type.
struct frobenius_norm {};
/// The nuclear norm: the sum of the singular values.
struct nuclear_norm {};
/// The spectral norm (ord 2): the largest singular value.
struct spectral_norm {};
inline constexpr frobenius_norm fro{};  ///< ord 'fro': sqrt of the sum of squares.
inline constexpr nuclear_norm nuc{};    ///< ord 'nuc': the sum of the singular values.
inline constexpr spectral_norm two{};   ///< ord 2: the largest singular value.

/// Lazy norm of each matrix in a's last two axes (numpy.linalg.norm(a, ord, axis=(-2, -1)), torch.linalg.
/// matrix_norm): `fro` (the default) sqrt(sum a²), fused, no library call; `nuc` the sum and `two` the largest of
/// svdvals(a) (LAPACK's gesdd). Gradients through these expressions (fro's is infinite at a = 0, as sqrt's; two's
/// picks one singular pair where the largest two are equal).
template <operand A, class Ord = frobenius_norm> auto matrix_norm(A&& a, Ord = {}) {
  auto ca = detail::matrices(std::forward<A>(a));
  constexpr index_t R = static_cast<index_t>(decltype(ca)::rank);
  static_assert(std::is_same_v<Ord, frobenius_norm> || std::is_same_v<Ord, nuclear_norm> || std::is_same_v<Ord, spectral_norm>,
                "texpr: matrix_norm's order is tx::linalg::fro, nuc or two");
  if constexpr (std::is_same_v<Ord, frobenius_norm>) {
    auto shared = share(std::move(ca));
    return sqrt(sum(sum(shared * shared, R - 1), R - 2));
  } else if constexpr (std::is_same_v<Ord, nuclear_norm>) {
    return sum(svdvals(std::move(ca)), R - 2);
  } else {
    return max(svdvals(std::move(ca)), R - 2);
  }
}

} // namespace linalg

namespace detail {
/// The coupling of eigen (or singular) pairs: F_ij = 1 / (w_j - w_i), 0 on the diagonal and wherever w_i = w_j
/// exactly (a repeated value: the vectors are not unique there, and the terms that would be infinite are dropped).
template <class T, class W> auto inverse_gaps(const W& w) {
  auto gap = share(unsqueeze(w, -2) - unsqueeze(w, -1));
  return where(gap == T(0), T(0), T(1) / gap);
}
} // namespace detail

/// eigh (packed [w_r, v_r] rows): dA = sym(V (diag(g_w) + F ∘ (Vᵀ g_V)) Vᵀ), F_ij = 1 / (w_j - w_i) off the diagonal.
template <> struct gradient_rule<op::eigh> {
  static constexpr std::string_view derivative =
      "dA = sym(V (diag(g_w) + F ∘ (Vᵀ g_V)) Vᵀ), F_ij = 1 / (w_j - w_i) (i ≠ j, w_i ≠ w_j; else 0), sym(X) = (X + Xᵀ) / 2 "
      "(symmetric perturbations of A, as PyTorch); distinct eigenvalues (repeated ones: the eigenvectors' part is not "
      "defined, its infinite terms are dropped)";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out;
  template <std::size_t I, class N, class G, class Out, class A> static auto partial(const N& n, const G& g, const Out& out, const A&) {
    using T = typename N::value_type;
    using B = typename N::backend;
    constexpr index_t last = static_cast<index_t>(N::rank) - 1;
    const index_t m = n.shape()[N::rank - 2];
    auto v = share(transpose(slice(out, last, 1, m + 1)));
    auto w = squeeze(slice(out, last, 0, 1), last);
    auto g_w = slice(g, last, 0, 1);  // (..., n, 1): g_w as a column, times I is diag(g_w)
    auto g_v = transpose(slice(g, last, 1, m + 1));
    auto inner = detail::inverse_gaps<T>(std::move(w)) * matmul(transpose(v), std::move(g_v)) +
                 g_w * cast<T>(detail::matrix_rows<B>(m) == detail::matrix_columns<B>(m));
    auto x = share(matmul(matmul(v, std::move(inner)), transpose(v)));
    return (x + transpose(x)) * T(0.5);
  }
};

/// eigvalsh: dA = V diag(g) Vᵀ, V from eigh of A (recomputed: eigvalsh kept no eigenvectors).
template <> struct gradient_rule<op::eigvalsh> {
  static constexpr std::string_view derivative =
      "dA = V diag(g) Vᵀ with V the eigenvectors (one eigh of A in the backward pass); defined for repeated eigenvalues too";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class A> static auto partial(const N&, const G& g, const Out&, const A& a) {
    auto v = share(linalg::eigh(a).eigenvectors);
    return matmul(v * unsqueeze(g, -2), transpose(v));
  }
};

/// svd (packed [U's column r, s_r, Vᴴ's row r] rows), the reduced factors' rule (Townsend's, as PyTorch's): with
/// F_ij = 1 / (s_j² - s_i²), J = F ∘ (Uᵀ g_U - g_Uᵀ U), K = F ∘ (Vᵀ g_V - g_Vᵀ V),
/// dA = U (J S + S K + diag(g_s)) Vᵀ + (I - U Uᵀ) g_U S⁻¹ Vᵀ + U S⁻¹ g_Vᵀ (I - V Vᵀ).
template <> struct gradient_rule<op::svd> {
  static constexpr std::string_view derivative =
      "dA = U (J S + S K + diag(g_s)) Vᵀ + (I - U Uᵀ) g_U S⁻¹ Vᵀ + U S⁻¹ g_Vᵀ (I - V Vᵀ), J = F ∘ (Uᵀ g_U - g_Uᵀ U), "
      "K = F ∘ (Vᵀ g_V - g_Vᵀ V), F_ij = 1 / (s_j² - s_i²) (0 where s_i = s_j); the vectors' part needs distinct, "
      "nonzero singular values; full matrices: g on the completion's columns is not used";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out;
  template <std::size_t I, class N, class G, class Out, class A> static auto partial(const N& n, const G& g, const Out& out, const A&) {
    using T = typename N::value_type;
    using B = typename N::backend;
    constexpr index_t rows = static_cast<index_t>(N::rank) - 2, last = static_cast<index_t>(N::rank) - 1;
    const auto a_shape = detail::get<0>(n.operands()).shape();
    const index_t m = a_shape[N::rank - 2], cols = a_shape[N::rank - 1], k = std::min(m, cols);
    auto factor = [&](const auto& x, index_t from, index_t to) { return slice(slice(x, last, from, to), rows, 0, k); };
    auto u = share(transpose(factor(out, 0, m)));                   // (..., m, k)
    auto s = share(squeeze(factor(out, m, m + 1), last));           // (..., k)
    auto v = share(transpose(factor(out, m + 1, m + 1 + cols)));    // (..., n, k)
    auto g_u = share(transpose(factor(g, 0, m)));
    auto g_s = factor(g, m, m + 1);                                // (..., k, 1): times I, diag(g_s)
    auto g_v = share(transpose(factor(g, m + 1, m + 1 + cols)));
    auto f = share(detail::inverse_gaps<T>(s * s));
    auto x = share(matmul(transpose(u), g_u));
    auto y = share(matmul(transpose(v), g_v));
    auto s_row = unsqueeze(s, -2), s_column = unsqueeze(s, -1);
    auto inner = f * (x - transpose(x)) * s_row + s_column * (f * (y - transpose(y))) +
                 g_s * cast<T>(detail::matrix_rows<B>(k) == detail::matrix_columns<B>(k));
    auto core = matmul(matmul(u, std::move(inner)), transpose(v));
    auto from_u = matmul((g_u - matmul(u, x)) / s_row, transpose(v));           // (I - U Uᵀ) g_U S⁻¹ Vᵀ
    auto from_v = matmul(u / s_row, transpose(g_v - matmul(v, y)));             // U S⁻¹ g_Vᵀ (I - V Vᵀ)
    return std::move(core) + std::move(from_u) + std::move(from_v);
  }
};

/// svdvals: dA = U diag(g) Vᵀ, U and V from an svd of A (recomputed: svdvals kept no vectors).
template <> struct gradient_rule<op::svdvals> {
  static constexpr std::string_view derivative =
      "dA = U diag(g) Vᵀ with U, V the reduced singular vectors (one svd of A in the backward pass); defined for "
      "repeated singular values too";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class A> static auto partial(const N&, const G& g, const Out&, const A& a) {
    auto [u, s, vh] = linalg::svd(a);
    (void)s;
    return matmul(std::move(u) * unsqueeze(g, -2), std::move(vh));
  }
};

/// qr (packed [Q's column r, R's row r] rows), for m >= n (PyTorch's case of the same rule): with
/// M = g_R Rᵀ - Qᵀ g_Q and Z the symmetric matrix of M's upper triangle, dA = (Q Z + g_Q) R⁻ᵀ.
template <> struct gradient_rule<op::qr> {
  static constexpr std::string_view derivative =
      "dA = (Q Z + g_Q) R⁻ᵀ, Z = triu(M) + triu(M, 1)ᵀ, M = g_R Rᵀ - Qᵀ g_Q (a triangular solve with R); A (..., m, n) "
      "with m >= n and R invertible; a wide A is a tx::shape_error";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out;
  template <std::size_t I, class N, class G, class Out, class A> static auto partial(const N& n, const G& g, const Out& out, const A&) {
    using T = typename N::value_type;
    using B = typename N::backend;
    constexpr index_t last = static_cast<index_t>(N::rank) - 1;
    const auto a_shape = detail::get<0>(n.operands()).shape();
    const index_t m = a_shape[N::rank - 2], cols = a_shape[N::rank - 1];
    if (m < cols)
      throw shape_error("texpr: the gradient of linalg::qr needs A (..., m, n) with m >= n; got shape " + to_string(a_shape) +
                        " (differentiate the qr of its transpose instead)");
    auto q = share(transpose(slice(out, last, 0, m)));      // (..., m, n)
    auto r = share(slice(out, last, m, m + cols));          // (..., n, n)
    auto g_q = share(transpose(slice(g, last, 0, m)));
    auto g_r = slice(g, last, m, m + cols);
    auto mm = share(matmul(std::move(g_r), transpose(r)) - matmul(transpose(q), g_q));
    const auto rows = detail::matrix_rows<B>(cols), columns = detail::matrix_columns<B>(cols);
    auto z = mm * cast<T>(columns >= rows) + transpose(mm * cast<T>(columns > rows));
    auto x = matmul(q, std::move(z)) + g_q;                                     // (..., m, n)
    return transpose(linalg::solve_triangular(r, transpose(std::move(x)), linalg::triangle::upper));  // x R⁻ᵀ
  }
};

/// lstsq (operands A, B; result X = A⁺ B): the pseudo-inverse's derivative, valid where A's rank does not change
/// (full rank: always, near a full-rank A). With Y = A⁺ᵀ g (lstsq(Aᵀ, g)), dB = Y and
/// dA = -Y Xᵀ + (B - A X)(A⁺ Y)ᵀ + A⁺ᵀ X (g - Aᵀ Y)ᵀ (the last two terms vanish for square invertible A).
template <> struct gradient_rule<op::lstsq> {
  static constexpr std::string_view derivative =
      "dB = Y = lstsq(Aᵀ, g) (A⁺ᵀ g), dA = -Y Xᵀ + (B - A X) lstsq(A, Y)ᵀ + lstsq(Aᵀ, X) (g - Aᵀ Y)ᵀ (the pseudo-inverse's "
      "derivative; A of constant rank, e.g. full rank)";
  template <std::size_t I> static constexpr unsigned uses =
      I == 0 ? (detail::uses_operand(0) | detail::uses_operand(1) | detail::uses_out) : detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class A, class Bm>
  static auto partial(const N&, const G& g, const Out& x, const A& a, const Bm& b) {
    auto y = share(linalg::lstsq(transpose(a), g));
    if constexpr (I == 1) {
      return y;
    } else {
      auto residual = b - matmul(a, x);
      auto from_residual = matmul(std::move(residual), transpose(linalg::lstsq(a, y)));
      auto from_null_space = matmul(linalg::lstsq(transpose(a), x), transpose(g - matmul(transpose(a), y)));
      return -matmul(y, transpose(x)) + std::move(from_residual) + std::move(from_null_space);
    }
  }
};

/// slogdet (packed [sign, log|det|]): d log|det| / dA = A⁻ᵀ; the sign is piecewise constant (no gradient).
template <> struct gradient_rule<op::slogdet> {
  static constexpr std::string_view derivative =
      "dA = g_log|det| A⁻ᵀ (the sign is piecewise constant: none); A singular: the inverse's tx::linalg_error";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class A> static auto partial(const N&, const G& g, const Out&, const A& a) {
    constexpr index_t last = static_cast<index_t>(N::rank) - 1;
    return unsqueeze(slice(g, last, 1, 2), -1) * linalg::inv(transpose(a));
  }
};

/// cholesky: the symmetric gradient (PyTorch's): A's lower triangle is what is read, so a perturbation of A is taken
/// to be symmetric.
template <> struct gradient_rule<op::cholesky> {
  static constexpr std::string_view derivative =
      "dA = sym(L⁻ᵀ Φ(Lᵀ g) L⁻¹): Φ keeps the lower triangle and halves the diagonal, sym(X) = (X + Xᵀ) / 2 "
      "(symmetric perturbations of A, as PyTorch); two triangular solves with L";
  template <std::size_t I> static constexpr unsigned uses = detail::uses_out;
  template <std::size_t I, class N, class G, class Out, class A> static auto partial(const N& n, const G& g, const Out& l, const A&) {
    using T = typename N::value_type;
    using B = typename N::backend;
    const index_t m = n.shape()[N::rank - 1];
    const auto lower = detail::matrix_columns<B>(m) <= detail::matrix_rows<B>(m);
    const auto diagonal = detail::matrix_columns<B>(m) == detail::matrix_rows<B>(m);
    auto p = matmul(transpose(l), g) * (cast<T>(lower) - cast<T>(diagonal) * T(0.5));
    auto y = linalg::solve_triangular(transpose(l), std::move(p), linalg::triangle::upper);  // L⁻ᵀ Φ
    auto z = share(transpose(linalg::solve_triangular(transpose(l), transpose(std::move(y)), linalg::triangle::upper)));  // (L⁻ᵀ Φ) L⁻¹
    return (z + transpose(z)) * T(0.5);
  }
};

/// solve_triangular (operands A, B; result X): dB = A⁻ᵀ g (the other triangle's solve), dA = -(dB Xᵀ) on A's triangle.
template <> struct gradient_rule<op::solve_triangular> {
  static constexpr std::string_view derivative =
      "dB = solve_triangular(Aᵀ, g) (the other triangle), dA = -dB Xᵀ kept on A's triangle (the rest of A is not read)";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? (detail::uses_operand(0) | detail::uses_out) : detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class A, class Bm>
  static auto partial(const N& n, const G& g, const Out& x, const A& a, const Bm&) {
    using T = typename N::value_type;
    const auto other = n.upper() ? linalg::triangle::lower : linalg::triangle::upper;
    auto db = linalg::solve_triangular(transpose(a), g, other);
    if constexpr (I == 1) {
      return db;
    } else {
      const index_t m = n.shape()[N::rank - 2];
      return -detail::triangle_of<typename N::backend, T>(matmul(std::move(db), transpose(x)), m, n.upper());
    }
  }
};

/// solve (operands A, B; result X): dB = A⁻ᵀ g, dA = -dB Xᵀ.
template <> struct gradient_rule<op::solve> {
  static constexpr std::string_view derivative = "dB = solve(Aᵀ, g), dA = -dB Xᵀ";
  template <std::size_t I> static constexpr unsigned uses = I == 0 ? (detail::uses_operand(0) | detail::uses_out) : detail::uses_operand(0);
  template <std::size_t I, class N, class G, class Out, class A, class Bm>
  static auto partial(const N&, const G& g, const Out& x, const A& a, const Bm&) {
    auto db = linalg::solve(transpose(a), g);
    if constexpr (I == 1) return db;
    else return -matmul(std::move(db), transpose(x));
  }
};

} // namespace texpr
