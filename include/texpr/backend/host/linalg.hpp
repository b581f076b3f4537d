// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host's linear algebra kernels (texpr/linalg.hpp includes this): LAPACK through its Fortran ABI (link
// texpr::linalg: Debian's liblapack-dev or OpenBLAS's LAPACK). LAPACK is column-major and texpr row-major: a
// row-major matrix is its transpose to LAPACK, so a lower factor is LAPACK's upper one, and solves ask LAPACK for
// the transposed system. Small matrices of a batch go to the pool a batch per task; large ones run one at a time
// (the LAPACK library may thread them itself).
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/linalg.hpp"
#include "texpr/tensor/view.hpp"

// LAPACK's Fortran entry points, declared as LAPACKE's lapack.h declares them (32-bit integers; the hidden length
// of each character argument last, as gfortran passes it), so a program that includes lapack.h as well still compiles.
extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, std::size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void strtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const float* a,
             const int* lda, float* b, const int* ldb, int* info, std::size_t, std::size_t, std::size_t);
void dtrtrs_(const char* uplo, const char* trans, const char* diag, const int* n, const int* nrhs, const double* a,
             const int* lda, double* b, const int* ldb, int* info, std::size_t, std::size_t, std::size_t);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda, const int* ipiv,
             float* b, const int* ldb, int* info, std::size_t);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info, std::size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w, float* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, std::size_t, std::size_t);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s, float* u, const int* ldu,
             float* vt, const int* ldvt, float* work, const int* lwork, int* iwork, int* info, std::size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info, std::size_t);
void sgelsd_(const int* m, const int* n, const int* nrhs, float* a, const int* lda, float* b, const int* ldb, float* s,
             const float* rcond, int* rank, float* work, const int* lwork, int* iwork, int* info);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb, double* s,
             const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work, const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau, float* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
}

namespace texpr::detail::host_impl {

/// Matrices up to this order are spread a batch per task; larger ones run one at a time.
inline constexpr index_t linalg_parallel_order = 96;

inline int lapack_potrf(float* a, int n) {
  int info = 0;
  const int lda = std::max(n, 1);
  spotrf_("U", &n, a, &lda, &info, 1);
  return info;
}
inline int lapack_potrf(double* a, int n) {
  int info = 0;
  const int lda = std::max(n, 1);
  dpotrf_("U", &n, a, &lda, &info, 1);
  return info;
}
inline int lapack_trtrs(const char* uplo, const float* a, int n, float* b, int k) {
  int info = 0;
  const int ld = std::max(n, 1);
  strtrs_(uplo, "T", "N", &n, &k, a, &ld, b, &ld, &info, 1, 1, 1);
  return info;
}
inline int lapack_trtrs(const char* uplo, const double* a, int n, double* b, int k) {
  int info = 0;
  const int ld = std::max(n, 1);
  dtrtrs_(uplo, "T", "N", &n, &k, a, &ld, b, &ld, &info, 1, 1, 1);
  return info;
}
inline int lapack_getrf(float* a, int n, int* pivots) {
  int info = 0;
  const int ld = std::max(n, 1);
  sgetrf_(&n, &n, a, &ld, pivots, &info);
  return info;
}
inline int lapack_getrf(double* a, int n, int* pivots) {
  int info = 0;
  const int ld = std::max(n, 1);
  dgetrf_(&n, &n, a, &ld, pivots, &info);
  return info;
}
inline int lapack_getrs(const float* lu, int n, const int* pivots, float* b, int k) {
  int info = 0;
  const int ld = std::max(n, 1);
  sgetrs_("N", &n, &k, lu, &ld, pivots, b, &ld, &info, 1);
  return info;
}
inline int lapack_getrs(const double* lu, int n, const int* pivots, double* b, int k) {
  int info = 0;
  const int ld = std::max(n, 1);
  dgetrs_("N", &n, &k, lu, &ld, pivots, b, &ld, &info, 1);
  return info;
}
inline int lapack_gesv_transposed(float* a, int n, int* pivots, float* b, int k) {
  int info = lapack_getrf(a, n, pivots);
  const int ld = std::max(n, 1);
  if (info == 0) sgetrs_("T", &n, &k, a, &ld, pivots, b, &ld, &info, 1);
  return info;
}
inline int lapack_gesv_transposed(double* a, int n, int* pivots, double* b, int k) {
  int info = lapack_getrf(a, n, pivots);
  const int ld = std::max(n, 1);
  if (info == 0) dgetrs_("T", &n, &k, a, &ld, pivots, b, &ld, &info, 1);
  return info;
}

inline void lapack_syevd_call(const char* jobz, int n, float* a, float* w, float* work, int lwork, int* iwork, int liwork, int& info) {
  const int ld = std::max(n, 1);
  ssyevd_(jobz, "U", &n, a, &ld, w, work, &lwork, iwork, &liwork, &info, 1, 1);
}
inline void lapack_syevd_call(const char* jobz, int n, double* a, double* w, double* work, int lwork, int* iwork, int liwork, int& info) {
  const int ld = std::max(n, 1);
  dsyevd_(jobz, "U", &n, a, &ld, w, work, &lwork, iwork, &liwork, &info, 1, 1);
}

/// The eigenvalues (ascending, into w) and, when `vectors`, the eigenvectors (over a's columns, column-major) of the
/// symmetric n x n matrix whose upper triangle a holds column-major (a row-major lower triangle); the workspace is
/// LAPACK's own query's answer. Returns info (> 0: the divide and conquer did not converge).
template <class T> int lapack_syevd(T* a, int n, T* w, bool vectors) {
  const char* jobz = vectors ? "V" : "N";
  int info = 0, liwork = -1;
  T lwork_query = 0;
  lapack_syevd_call(jobz, n, a, w, &lwork_query, -1, &liwork, -1, info);
  if (info != 0) return info;
  std::vector<T> work(static_cast<std::size_t>(std::max<T>(lwork_query, T(1))));
  std::vector<int> iwork(static_cast<std::size_t>(std::max(liwork, 1)));
  lapack_syevd_call(jobz, n, a, w, work.data(), static_cast<int>(work.size()), iwork.data(), static_cast<int>(iwork.size()), info);
  return info;
}

inline void lapack_gesdd_call(const char* jobz, int m, int n, float* a, float* s, float* u, int ldu, float* vt, int ldvt,
                              float* work, int lwork, int* iwork, int& info) {
  const int lda = std::max(m, 1);
  sgesdd_(jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
}
inline void lapack_gesdd_call(const char* jobz, int m, int n, double* a, double* s, double* u, int ldu, double* vt, int ldvt,
                              double* work, int lwork, int* iwork, int& info) {
  const int lda = std::max(m, 1);
  dgesdd_(jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
}

/// The SVD of the column-major m x n matrix a (destroyed) by divide and conquer: s (min(m, n), descending) and, for
/// jobz "S" (reduced) or "A" (full), u (m x ucols, leading dimension m) and vt (vrows x n, leading dimension vrows).
/// Returns info (> 0: the iteration did not converge).
template <class T> int lapack_gesdd(const char* jobz, T* a, int m, int n, T* s, T* u, T* vt, int vrows) {
  const int k = std::min(m, n);
  std::vector<int> iwork(static_cast<std::size_t>(std::max(8 * k, 1)));
  const int ldu = std::max(m, 1), ldvt = std::max(vrows, 1);
  int info = 0;
  T lwork_query = 0;
  lapack_gesdd_call(jobz, m, n, a, s, u, ldu, vt, ldvt, &lwork_query, -1, iwork.data(), info);
  if (info != 0) return info;
  std::vector<T> work(static_cast<std::size_t>(std::max<T>(lwork_query, T(1))));
  lapack_gesdd_call(jobz, m, n, a, s, u, ldu, vt, ldvt, work.data(), static_cast<int>(work.size()), iwork.data(), info);
  return info;
}

inline void lapack_geqrf_call(int m, int n, float* a, float* tau, float* work, int lwork, int& info) {
  const int lda = std::max(m, 1);
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
}
inline void lapack_geqrf_call(int m, int n, double* a, double* tau, double* work, int lwork, int& info) {
  const int lda = std::max(m, 1);
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
}
inline void lapack_orgqr_call(int m, int n, int k, float* a, const float* tau, float* work, int lwork, int& info) {
  const int lda = std::max(m, 1);
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
}
inline void lapack_orgqr_call(int m, int n, int k, double* a, const double* tau, double* work, int lwork, int& info) {
  const int lda = std::max(m, 1);
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
}

/// The reduced QR of the column-major m x n matrix a: r_rows(r, j) = R's entry (k x n, row-major), then a's first k
/// columns become Q (column-major, m x k). Workspaces from LAPACK's own queries. Returns info (< 0 only).
template <class T> int lapack_geqrf_orgqr(T* a, int m, int n, T* r_rows) {
  const int k = std::min(m, n);
  std::vector<T> tau(static_cast<std::size_t>(std::max(k, 1)));
  int info = 0;
  T query = 0;
  lapack_geqrf_call(m, n, a, tau.data(), &query, -1, info);
  if (info != 0) return info;
  std::vector<T> work(static_cast<std::size_t>(std::max<T>(query, T(1))));
  lapack_geqrf_call(m, n, a, tau.data(), work.data(), static_cast<int>(work.size()), info);
  if (info != 0) return info;
  for (int r = 0; r < k; ++r)  // R: the upper triangle geqrf left, read before orgqr overwrites it
    for (int j = 0; j < n; ++j) r_rows[static_cast<std::ptrdiff_t>(r) * n + j] = j >= r ? a[static_cast<std::ptrdiff_t>(j) * m + r] : T(0);
  if (k == 0) return 0;
  lapack_orgqr_call(m, k, k, a, tau.data(), &query, -1, info);
  if (info != 0) return info;
  work.resize(static_cast<std::size_t>(std::max<T>(query, T(1))));
  lapack_orgqr_call(m, k, k, a, tau.data(), work.data(), static_cast<int>(work.size()), info);
  return info;
}

inline void lapack_gelsd_call(int m, int n, int k, float* a, float* b, int ldb, float* s, float rcond, float* work, int lwork, int* iwork, int& info) {
  const int lda = std::max(m, 1);
  int rank = 0;
  sgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, &rank, work, &lwork, iwork, &info);
}
inline void lapack_gelsd_call(int m, int n, int k, double* a, double* b, int ldb, double* s, double rcond, double* work, int lwork, int* iwork, int& info) {
  const int lda = std::max(m, 1);
  int rank = 0;
  dgelsd_(&m, &n, &k, a, &lda, b, &ldb, s, &rcond, &rank, work, &lwork, iwork, &info);
}

/// The minimum-norm least-squares solution of the column-major m x n a (destroyed) for the k columns of b (leading
/// dimension ldb >= max(m, n); the solution in its first n rows), singular values below eps max(m, n) s_max taken
/// as zero (NumPy's rcond=None). Returns info (> 0: the SVD did not converge).
template <class T> int lapack_gelsd(T* a, int m, int n, T* b, int ldb, int k) {
  std::vector<T> s(static_cast<std::size_t>(std::max(std::min(m, n), 1)));
  const T rcond = std::numeric_limits<T>::epsilon() * static_cast<T>(std::max(m, n));
  int info = 0, iwork_query = 0;
  T query = 0;
  lapack_gelsd_call(m, n, k, a, b, ldb, s.data(), rcond, &query, -1, &iwork_query, info);
  if (info != 0) return info;
  std::vector<T> work(static_cast<std::size_t>(std::max<T>(query, T(1))));
  std::vector<int> iwork(static_cast<std::size_t>(std::max(iwork_query, 1)));
  lapack_gelsd_call(m, n, k, a, b, ldb, s.data(), rcond, work.data(), static_cast<int>(work.size()), iwork.data(), info);
  return info;
}

/// LU of the n x n matrix a (in place) and its determinant's sign and log|det|: sign 0 and -inf when a pivot is
/// exactly zero (singular, LAPACK's info > 0); returns info < 0 only (a bad argument).
template <class T> int lapack_slogdet(T* a, int n, int* pivots, T& sign, T& logabsdet) {
  const int info = lapack_getrf(a, n, pivots);
  const int ld = std::max(n, 1);
  if (info < 0) return info;
  if (info > 0) {
    sign = T(0);
    logabsdet = -std::numeric_limits<T>::infinity();
    return 0;
  }
  // det = prod(U's diagonal) * (-1)^(row swaps); summed as logs in double, so no product overflows
  double log_sum = 0;
  bool negative = false;
  for (int i = 0; i < n; ++i) {
    const T u = a[static_cast<std::ptrdiff_t>(i) * ld + i];
    negative = negative != (u < T(0));
    negative = negative != (pivots[i] != i + 1);
    log_sum += std::log(std::fabs(static_cast<double>(u)));
  }
  sign = negative ? T(-1) : T(1);
  logabsdet = static_cast<T>(log_sum);
  return 0;
}

/// The order n, the right-hand sides k and the batch count of a linalg node's result shape (k = n for cholesky);
/// throws when an extent exceeds LAPACK's 32-bit integers.
template <std::size_t R> void linalg_extents(const shape_t<R>& s, std::string_view op, index_t& rows, index_t& cols, index_t& batches) {
  rows = s[R - 2];
  cols = s[R - 1];
  batches = 1;
  for (std::size_t d = 0; d + 2 < R; ++d) batches *= s[d];
  if (rows > INT_MAX || cols > INT_MAX || rows * std::max<index_t>(rows, cols) > INT_MAX)
    throw shape_error("texpr: linalg::" + std::string(op) + " of shape " + to_string(s) +
                      ": LAPACK's 32-bit integers cannot address matrices that large");
}

/// Runs f(q) for every batch q (the pool for small orders), then throws the linalg_error of the lowest batch whose
/// f returned a nonzero info. `nan_argument`: the argument whose rejection (info = -nan_argument) means a NaN in the
/// matrix (gesdd checks its input for NaN), not a texpr bug.
template <class F> void for_each_matrix(std::string_view op, index_t batches, index_t order, F&& f, const char* why, int nan_argument = 0) {
  std::vector<int> info(static_cast<std::size_t>(batches), 0);
  auto run = [&](index_t q0, index_t q1) {
    for (index_t q = q0; q < q1; ++q) info[static_cast<std::size_t>(q)] = f(q);
  };
  if (order <= linalg_parallel_order && batches > 1) for_ranges(batches, std::max<index_t>(1, 4096 / (order * order + 1)), run);
  else run(0, batches);
  for (index_t q = 0; q < batches; ++q)
    if (const int i = info[static_cast<std::size_t>(q)]; i != 0)
      throw linalg_error(op, q, i, i < 0 && i == -nan_argument ? std::string("the matrix holds a NaN")
                                   : i < 0 ? "LAPACK rejected argument " + std::to_string(-i) + " (a texpr bug: please report it)"
                                           : std::string(why) + " (at order " + std::to_string(i) + ")");
}

/// b (n x k, row-major) into col (n x k, column-major), and back.
template <class T> void to_columns(const T* b, index_t n, index_t k, T* col) {
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < k; ++j) col[j * n + i] = b[i * k + j];
}
template <class T> void from_columns(const T* col, index_t n, index_t k, T* b) {
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < k; ++j) b[i * k + j] = col[j * n + i];
}

} // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R> void lapack_potrf::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(n.shape(), "cholesky", m, cols, batches);
  T* out = dest.data();
  if (out != a.data()) std::copy(a.data(), a.data() + batches * m * m, out);
  hi::for_each_matrix("cholesky", batches, m, [&](index_t q) {
    T* l = out + q * m * m;
    const int info = hi::lapack_potrf(l, static_cast<int>(m));  // row-major lower = LAPACK's upper
    for (index_t i = 0; i < m; ++i) std::fill(l + i * m + i + 1, l + (i + 1) * m, T(0));
    return info;
  }, "the matrix is not positive definite");
}

template <class N, class T, std::size_t R> void lapack_trtrs::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  index_t m = 0, k = 0, batches = 0;
  hi::linalg_extents(n.shape(), "solve_triangular", m, k, batches);
  T* out = dest.data();
  const char* uplo = n.upper() ? "L" : "U";  // the transpose of a row-major lower (upper) matrix
  hi::for_each_matrix("solve_triangular", batches, m, [&](index_t q) {
    std::vector<T> col(static_cast<std::size_t>(m * k));
    hi::to_columns(b.data() + q * m * k, m, k, col.data());
    const int info = hi::lapack_trtrs(uplo, a.data() + q * m * m, static_cast<int>(m), col.data(), static_cast<int>(k));
    hi::from_columns(col.data(), m, k, out + q * m * k);
    return info;
  }, "the triangular matrix has a zero on its diagonal");
}

template <class N, class T, std::size_t R> void lapack_gesv::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  index_t m = 0, k = 0, batches = 0;
  hi::linalg_extents(n.shape(), "solve", m, k, batches);
  T* out = dest.data();
  hi::for_each_matrix("solve", batches, m, [&](index_t q) {
    std::vector<T> lu(a.data() + q * m * m, a.data() + (q + 1) * m * m), col(static_cast<std::size_t>(m * k));
    std::vector<int> pivots(static_cast<std::size_t>(std::max<index_t>(m, 1)));
    hi::to_columns(b.data() + q * m * k, m, k, col.data());
    const int info = hi::lapack_gesv_transposed(lu.data(), static_cast<int>(m), pivots.data(), col.data(), static_cast<int>(k));
    hi::from_columns(col.data(), m, k, out + q * m * k);
    return info;
  }, "the matrix is singular (an exactly zero pivot)");
}

template <class N, class T, std::size_t R> void lapack_getrf_det::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(a.shape(), "slogdet", m, cols, batches);
  T* out = dest.data();  // [sign, log|det|] per matrix
  hi::for_each_matrix("slogdet", batches, m, [&](index_t q) {
    std::vector<T> lu(a.data() + q * m * m, a.data() + (q + 1) * m * m);  // Aᵀ to LAPACK: the same determinant
    std::vector<int> pivots(static_cast<std::size_t>(std::max<index_t>(m, 1)));
    return hi::lapack_slogdet(lu.data(), static_cast<int>(m), pivots.data(), out[2 * q], out[2 * q + 1]);
  }, "unreachable: a singular matrix is a result here");
}

template <class N, class T, std::size_t R> void lapack_syevd::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(a.shape(), "eigh", m, cols, batches);
  T* out = dest.data();  // per matrix m rows of [w_r, v_r]
  hi::for_each_matrix("eigh", batches, m, [&](index_t q) {
    // row-major A is column-major Aᵀ: its upper triangle is A's lower one; the eigenvectors come back as columns,
    // each contiguous, which is the packed row's layout
    std::vector<T> v(a.data() + q * m * m, a.data() + (q + 1) * m * m), w(static_cast<std::size_t>(m));
    const int info = hi::lapack_syevd(v.data(), static_cast<int>(m), w.data(), true);
    T* o = out + q * m * (m + 1);
    for (index_t r = 0; r < m; ++r) {
      o[r * (m + 1)] = w[static_cast<std::size_t>(r)];
      std::copy(v.data() + r * m, v.data() + (r + 1) * m, o + r * (m + 1) + 1);
    }
    return info;
  }, "the eigenvalue algorithm did not converge");
}

template <class N, class T, std::size_t R> void lapack_syevd_values::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(a.shape(), "eigvalsh", m, cols, batches);
  T* out = dest.data();
  hi::for_each_matrix("eigvalsh", batches, m, [&](index_t q) {
    std::vector<T> v(a.data() + q * m * m, a.data() + (q + 1) * m * m);
    return hi::lapack_syevd(v.data(), static_cast<int>(m), out + q * m, false);
  }, "the eigenvalue algorithm did not converge");
}

template <class N, class T, std::size_t R> void lapack_gesdd::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(a.shape(), "svd", m, cols, batches);
  const index_t k = std::min(m, cols), rows = n.full_matrices() ? std::max(m, cols) : k, width = m + 1 + cols;
  const index_t ucols = n.full_matrices() ? m : k, vrows = n.full_matrices() ? cols : k;
  T* out = dest.data();  // per matrix `rows` rows of [U's column r, s_r, Vᴴ's row r]
  std::fill(out, out + batches * rows * width, T(0));
  hi::for_each_matrix("svd", batches, std::max(m, cols), [&](index_t q) {
    // row-major A (m x n) is column-major Aᵀ (n x m) = U' S V'ᵀ to LAPACK, so A = V' S U'ᵀ: texpr's U is V' (LAPACK's
    // vt transposed: U's column r is vt's row r) and texpr's Vᴴ is U'ᵀ (Vᴴ's row r is LAPACK's column r of u)
    std::vector<T> at(a.data() + q * m * cols, a.data() + (q + 1) * m * cols), s(static_cast<std::size_t>(k));
    std::vector<T> lu(static_cast<std::size_t>(cols * vrows)), lvt(static_cast<std::size_t>(ucols * m));
    const int info = hi::lapack_gesdd(n.full_matrices() ? "A" : "S", at.data(), static_cast<int>(cols), static_cast<int>(m),
                                      s.data(), lu.data(), lvt.data(), static_cast<int>(ucols));
    T* o = out + q * rows * width;
    if (k == 0)  // an empty matrix: LAPACK returns at once, and the full U and Vᴴ are identities (as NumPy's)
      for (index_t r = 0; r < rows; ++r) o[r * width + (r < m ? r : m + 1 + r)] = T(1);
    if (k == 0) return info;
    for (index_t r = 0; r < rows; ++r) {
      T* row = o + r * width;
      if (r < ucols)
        for (index_t i = 0; i < m; ++i) row[i] = lvt[static_cast<std::size_t>(i * ucols + r)];
      if (r < k) row[m] = s[static_cast<std::size_t>(r)];
      if (r < vrows) std::copy(lu.data() + r * cols, lu.data() + (r + 1) * cols, row + m + 1);
    }
    return info;
  }, "the singular value iteration did not converge", 4);
}

template <class N, class T, std::size_t R> void lapack_gesdd_values::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(a.shape(), "svdvals", m, cols, batches);
  const index_t k = std::min(m, cols);
  T* out = dest.data();
  hi::for_each_matrix("svdvals", batches, std::max(m, cols), [&](index_t q) {
    std::vector<T> at(a.data() + q * m * cols, a.data() + (q + 1) * m * cols);  // Aᵀ to LAPACK: the same values
    T none = 0;
    return hi::lapack_gesdd("N", at.data(), static_cast<int>(cols), static_cast<int>(m), out + q * k, &none, &none, 1);
  }, "the singular value iteration did not converge", 4);
}

template <class N, class T, std::size_t R> void lapack_geqrf_orgqr::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(a.shape(), "qr", m, cols, batches);
  const index_t k = std::min(m, cols), width = m + cols;
  T* out = dest.data();  // per matrix k rows of [Q's column r, R's row r]
  hi::for_each_matrix("qr", batches, std::max(m, cols), [&](index_t q) {
    // QR of A itself (not of the transpose LAPACK would see in row-major memory): A to columns first
    std::vector<T> col(static_cast<std::size_t>(m * cols)), r_rows(static_cast<std::size_t>(k * cols));
    hi::to_columns(a.data() + q * m * cols, m, cols, col.data());
    const int info = hi::lapack_geqrf_orgqr(col.data(), static_cast<int>(m), static_cast<int>(cols), r_rows.data());
    T* o = out + q * k * width;
    for (index_t r = 0; r < k; ++r) {
      std::copy(col.data() + r * m, col.data() + (r + 1) * m, o + r * width);  // Q's column r, contiguous
      std::copy(r_rows.data() + r * cols, r_rows.data() + (r + 1) * cols, o + r * width + m);
    }
    return info;
  }, "unreachable: Householder QR does not fail");
}

template <class N, class T, std::size_t R> void lapack_gelsd::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0, k = 0, rows_b = 0;
  hi::linalg_extents(a.shape(), "lstsq", m, cols, batches);
  hi::linalg_extents(b.shape(), "lstsq", rows_b, k, batches);
  const index_t ld = std::max<index_t>({m, cols, 1});
  T* out = dest.data();
  hi::for_each_matrix("lstsq", batches, std::max(m, cols), [&](index_t q) {
    // A itself to LAPACK (to columns), B to columns in a buffer tall enough for the solution (n rows)
    std::vector<T> col(static_cast<std::size_t>(m * cols)), rhs(static_cast<std::size_t>(ld * k), T(0));
    hi::to_columns(a.data() + q * m * cols, m, cols, col.data());
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < k; ++j) rhs[static_cast<std::size_t>(j * ld + i)] = b.data()[q * m * k + i * k + j];
    const int info = hi::lapack_gelsd(col.data(), static_cast<int>(m), static_cast<int>(cols), rhs.data(), static_cast<int>(ld),
                                      static_cast<int>(k));
    for (index_t i = 0; i < cols; ++i)
      for (index_t j = 0; j < k; ++j) out[q * cols * k + i * k + j] = rhs[static_cast<std::size_t>(j * ld + i)];
    return info;
  }, "the singular value iteration did not converge");
}

template <class N, class T, std::size_t R> void lapack_getrf::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  hi::linalg_extents(a.shape(), "lu_factor", m, cols, batches);
  T* out = dest.data();  // per matrix m rows of [LU's row, pivot]
  hi::for_each_matrix("lu_factor", batches, m, [&](index_t q) {
    // the LU of A itself (its row swaps are A's), so A goes to columns and back
    std::vector<T> col(static_cast<std::size_t>(m * m));
    std::vector<int> pivots(static_cast<std::size_t>(std::max<index_t>(m, 1)));
    hi::to_columns(a.data() + q * m * m, m, m, col.data());
    const int info = hi::lapack_getrf(col.data(), static_cast<int>(m), pivots.data());
    T* o = out + q * m * (m + 1);
    for (index_t i = 0; i < m; ++i) {
      for (index_t j = 0; j < m; ++j) o[i * (m + 1) + j] = col[static_cast<std::size_t>(j * m + i)];
      o[i * (m + 1) + m] = static_cast<T>(pivots[static_cast<std::size_t>(i)]);  // exact: orders below 2^24
    }
    return info;
  }, "the matrix is singular (an exactly zero pivot)");
}

template <class N, class T, std::size_t R> void lapack_getrs::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  namespace hi = detail::host_impl;
  const auto lu = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto pivots = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<2>(n.operands()), ctx);
  index_t m = 0, k = 0, batches = 0;
  hi::linalg_extents(n.shape(), "lu_solve", m, k, batches);
  T* out = dest.data();
  for (index_t q = 0; q < batches; ++q)  // pivots not from a lu_factor of this order: LAPACK would read out of bounds
    for (index_t i = 0; i < m; ++i)
      if (const auto v = pivots.data()[q * m + i]; v < 1 || v > m)
        throw linalg_error("lu_solve", q, -3, "pivot " + std::to_string(i) + " is " + std::to_string(v) + ", not a row of 1.." + std::to_string(m));
  hi::for_each_matrix("lu_solve", batches, m, [&](index_t q) {
    // row-major LU is column-major LUᵀ: getrs's transposed solve with it would need Aᵀ's factors, so LU goes to
    // columns (O(n²), as B's O(n k))
    std::vector<T> col(static_cast<std::size_t>(m * m)), rhs(static_cast<std::size_t>(m * k));
    std::vector<int> p(static_cast<std::size_t>(std::max<index_t>(m, 1)));
    hi::to_columns(lu.data() + q * m * m, m, m, col.data());
    for (index_t i = 0; i < m; ++i) p[static_cast<std::size_t>(i)] = static_cast<int>(pivots.data()[q * m + i]);
    hi::to_columns(b.data() + q * m * k, m, k, rhs.data());
    const int info = hi::lapack_getrs(col.data(), static_cast<int>(m), p.data(), rhs.data(), static_cast<int>(k));
    hi::from_columns(rhs.data(), m, k, out + q * m * k);
    return info;
  }, "unreachable: getrs does not fail");
}

} // namespace texpr::host_kernels
