// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dense linear algebra op tags (the family texpr/linalg.hpp adds): factorisations and solves of the square matrices
// in the last two axes, batched over the leading ones, computed by a library (LAPACK on the host). Each reads its
// operands from memory (evaluated first when they are expressions): the libraries take matrices, not accessors.
#pragma once

#include <string_view>

#include "texpr/core/dtype_set.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of the linear algebra ops: computed by a library call per matrix, on float and double (the libraries have
/// no integer or 16-bit factorisations).
struct linalg_op {
  static constexpr kind category = kind::computed;                  ///< Evaluated by a library call.
  static constexpr auto dtypes = floating;                          ///< float and double.
  static constexpr std::string_view header = "texpr/linalg.hpp";  ///< The opt-in header that brings the op.
};

/// The lower Cholesky factor L of each symmetric positive definite matrix (A = L Lᵀ; numpy.linalg.cholesky). Only
/// A's lower triangle is read; a matrix that is not positive definite is a tx::linalg_error.
struct cholesky : linalg_op {
  static constexpr std::string_view name = "cholesky";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "lower Cholesky factor L of each symmetric positive definite matrix, A = L Lᵀ (numpy.linalg.cholesky); reads "
      "A's lower triangle";
};
/// X with A X = B for each triangular A (lower or upper; scipy.linalg.solve_triangular, torch.linalg.
/// solve_triangular): only A's triangle is read; a zero on its diagonal is a tx::linalg_error.
struct solve_triangular : linalg_op {
  static constexpr std::string_view name = "solve_triangular";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "X with A X = B for triangular A (lower or upper triangle read), by substitution (torch.linalg.solve_triangular)";
};
/// X with A X = B for each square A, by LU factorisation with partial pivoting (numpy.linalg.solve); an exactly
/// singular A is a tx::linalg_error.
struct solve : linalg_op {
  static constexpr std::string_view name = "solve";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "X with A X = B for square A, LU with partial pivoting (numpy.linalg.solve); singular A is an error";
};

/// The sign and the log of the absolute value of each square matrix's determinant (numpy.linalg.slogdet), packed in a
/// last axis of 2 ([sign, log|det|]), by LU with partial pivoting; a singular matrix gives sign 0 and log|det| -inf
/// (not an error, as NumPy).
struct slogdet : linalg_op {
  static constexpr std::string_view name = "slogdet";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "sign and log|det| of each square matrix, packed as a last axis of 2 (numpy.linalg.slogdet; tx::linalg::slogdet "
      "and det read it); singular: sign 0, log|det| -inf";
};

/// The eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix, reading its lower triangle
/// (numpy.linalg.eigh's default UPLO='L'), packed as (..., n, 1 + n): row r holds eigenvalue r, then eigenvector r.
struct eigh : linalg_op {
  static constexpr std::string_view name = "eigh";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix, lower triangle read "
      "(numpy.linalg.eigh), packed (..., n, 1 + n): row r = [w_r, v_r] (tx::linalg::eigh reads it)";
};
/// The eigenvalues (ascending) of each symmetric matrix, reading its lower triangle (numpy.linalg.eigvalsh): no
/// eigenvectors are computed.
struct eigvalsh : linalg_op {
  static constexpr std::string_view name = "eigvalsh";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "eigenvalues (ascending) of each symmetric matrix, lower triangle read (numpy.linalg.eigvalsh)";
};

/// The singular value decomposition A = U diag(s) Vᴴ of each m x n matrix (numpy.linalg.svd), packed as
/// (..., rows, m + 1 + n) with rows = min(m, n), or max(m, n) for full matrices: row r holds column r of U, s_r,
/// then row r of Vᴴ (zero past each one's extent).
struct svd : linalg_op {
  static constexpr std::string_view name = "svd";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "singular value decomposition A = U diag(s) Vh of each matrix (numpy.linalg.svd), packed (..., rows, m + 1 + n): "
      "row r = [U's column r, s_r, Vh's row r] (tx::linalg::svd reads it)";
};
/// The singular values (descending) of each matrix (numpy.linalg.svd with compute_uv=False): no singular vectors.
struct svdvals : linalg_op {
  static constexpr std::string_view name = "svdvals";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "singular values (descending) of each matrix (torch.linalg.svdvals)";
};

/// The reduced QR factorisation A = Q R of each m x n matrix (numpy.linalg.qr, mode 'reduced'), by Householder
/// reflections, packed as (..., k, m + n), k = min(m, n): row r holds column r of Q, then row r of R.
struct qr : linalg_op {
  static constexpr std::string_view name = "qr";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "reduced QR factorisation A = Q R of each matrix (numpy.linalg.qr), Householder, packed (..., k, m + n): row r = "
      "[Q's column r, R's row r] (tx::linalg::qr reads it)";
};

/// The least-squares solution X minimising |A X - B| for each m x n A (the minimum-norm one where A is rank
/// deficient; numpy.linalg.lstsq with rcond=None: singular values below eps max(m, n) s_max count as zero), by
/// LAPACK's SVD-based gelsd, as NumPy.
struct lstsq : linalg_op {
  static constexpr std::string_view name = "lstsq";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "least-squares (minimum-norm) X with A X ≈ B for each m x n A, B (..., m, k) (numpy.linalg.lstsq's solution, "
      "rcond eps max(m, n)); SVD-based";
};

/// The LU factorisation with partial pivoting P A = L U of each square matrix (torch.linalg.lu_factor,
/// scipy.linalg.lu_factor), packed as (..., n, n + 1): L (unit diagonal, not stored) and U in the first n columns,
/// LAPACK's 1-based row swaps in the last.
struct lu_factor : linalg_op {
  static constexpr std::string_view name = "lu_factor";  ///< Shown by tx::placement.
  static constexpr std::string_view summary =
      "LU with partial pivoting of each square matrix (torch.linalg.lu_factor), packed (..., n, n + 1): L and U, then the "
      "1-based pivots (tx::linalg::lu_factor reads them)";
};
/// X with A X = B from lu_factor's LU and pivots of A (torch.linalg.lu_solve, scipy.linalg.lu_solve).
struct lu_solve : linalg_op {
  static constexpr std::string_view name = "lu_solve";  ///< Shown by tx::placement.
  static constexpr std::string_view summary = "X with A X = B from A's LU and pivots (torch.linalg.lu_solve)";
};

} // namespace texpr::op
