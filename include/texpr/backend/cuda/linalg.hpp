// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda linear algebra rows (texpr/linalg.hpp includes this): cuSOLVER's dense 64-bit API (link texpr::linalg,
// which links CUDA::cusolver where CUDA is enabled), cuBLAS's trsm for solve_triangular and its GEMMs for lstsq.
// cuSOLVER is column-major and texpr row-major: a row-major matrix is its transpose to cuSOLVER, as to LAPACK on the
// host, so a row-major lower triangle is cuSOLVER's upper one, the LU of Aᵀ solves A X = B by getrs's transposed solve,
// and right-hand sides are transposed to columns and back. `info` is never read by the host during evaluation: it goes
// to a device buffer whose check runs at the next copy to the host (memory.hpp's deferred_checks), or that a kernel
// reads (slogdet), so an evaluation enqueues no host wait.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/gemm.hpp"
#include "texpr/backend/cuda/launch.hpp"
#include "texpr/backend/cuda/memory.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/linalg.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

inline void cuda_check(cusolverStatus_t s, const char* call, const char* file, int line) {
  if (s == CUSOLVER_STATUS_SUCCESS) return;
  throw cuda_error(call, "cusolverStatus_t " + std::to_string(static_cast<int>(s)), file, line, static_cast<int>(s));
}

namespace cuda_impl {

/// One cuSOLVER dense handle per device for the calling thread, made on first use and released at thread exit; its
/// stream is set per call (as cuBLAS's handle in gemm.hpp, whose cache checks cuBLAS's status type only).
inline cusolverDnHandle_t cusolver_handle() {
  struct cache {
    cusolverDnHandle_t h[64] = {};
    ~cache() {
      for (auto& x : h)
        if (x) (void)cusolverDnDestroy(x);  // errors at exit have nobody to report to
    }
  };
  thread_local cache handles;
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64)
    throw cuda_error("cudaGetDevice(&dev)", "device ordinal beyond texpr's 64-device cache", __FILE__, __LINE__, 0);
  if (!handles.h[dev]) TEXPR_CUDA_CHECK(cusolverDnCreate(&handles.h[dev]));
  return handles.h[dev];
}

/// The 64-bit API's options object, default options, one per thread (it holds no device state).
inline cusolverDnParams_t cusolver_params() {
  struct holder {
    cusolverDnParams_t p = nullptr;
    ~holder() {
      if (p) (void)cusolverDnDestroyParams(p);  // errors at exit have nobody to report to
    }
  };
  thread_local holder h;
  if (!h.p) TEXPR_CUDA_CHECK(cusolverDnCreateParams(&h.p));
  return h.p;
}

template <class T>
inline constexpr cudaDataType_t solver_type = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;

/// Zeroes the strict upper triangle of each row-major n x n matrix (potrf leaves A's there).
template <class T>
__global__ void zero_above_diagonal(T* a, index_t n, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t r = (e / n) % n, c = e % n;
    if (c > r) a[e] = T(0);
  }
}

/// The order m of the square matrices in the last two axes of s and their count (a tensor's extents: their product
/// was checked when it was made).
template <std::size_t R> void square_batch(const shape_t<R>& s, index_t& m, index_t& batches) {
  m = s[R - 1];
  batches = 1;
  for (std::size_t d = 0; d + 2 < R; ++d) batches *= s[d];
}

/// The rows m and columns n of the matrices in the last two axes of s and their count (the operand's shape: a result
/// may have another rank, as svdvals').
template <std::size_t R> void matrix_batch(const shape_t<R>& s, index_t& m, index_t& n, index_t& batches) {
  m = s[R - 2];
  n = s[R - 1];
  batches = 1;
  for (std::size_t d = 0; d + 2 < R; ++d) batches *= s[d];
}

/// out[q] = in[q]ᵀ for a batch of row-major rows x cols matrices: a row-major matrix into the column-major layout
/// cuSOLVER reads (out[q] is then cols x rows, row-major), and back with rows and cols swapped.
template <class T>
__global__ void transpose_matrices(const T* in, T* out, index_t rows, index_t cols, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t per = rows * cols, q = e / per, rest = e % per;
    const index_t c = rest / rows, r = rest % rows;  // out[q]'s element (c, r) is in[q]'s (r, c)
    out[e] = in[q * per + r * cols + c];
  }
}

/// Enqueues transpose_matrices over `batches` matrices (nothing when they are empty).
template <class T>
void transpose_batch(const T* in, T* out, index_t rows, index_t cols, index_t batches, stream_t stream) {
  const index_t total = batches * rows * cols;
  if (total == 0) return;
  transpose_matrices<T><<<grid_for(ceil_div(total, block_threads)), block_threads, 0, stream>>>(in, out, rows, cols, total);
  TEXPR_CUDA_CHECK_LAUNCH();
}

/// [sign, log|det|] of each matrix from getrf's LU (n x n; U's diagonal is the same in either layout), its 1-based
/// pivots and its info: det = prod(U's diagonal) (-1)^(row swaps), summed as logs in double so that no product
/// overflows, as on the host; info > 0 (an exactly zero pivot) gives sign 0 and -inf. A thread per matrix.
template <class T>
__global__ void slogdet_from_lu(const T* lu, const std::int64_t* pivots, const int* info, index_t n, index_t batches,
                                T* out) {
  for (index_t q = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; q < batches;
       q += static_cast<index_t>(gridDim.x) * blockDim.x) {
    if (n > 0 && info[q] > 0) {
      out[2 * q] = T(0);
      out[2 * q + 1] = -std::numeric_limits<T>::infinity();
      continue;
    }
    double log_sum = 0;
    bool negative = false;
    for (index_t i = 0; i < n; ++i) {
      const T u = lu[(q * n + i) * n + i];
      negative = negative != (u < T(0));
      negative = negative != (pivots[q * n + i] != i + 1);
      log_sum += ::log(::fabs(static_cast<double>(u)));
    }
    out[2 * q] = negative ? T(-1) : T(1);
    out[2 * q + 1] = static_cast<T>(log_sum);
  }
}

/// eigh's packed result, m rows of [w_r, v_r] per matrix, from syevd's eigenvalues w (m per matrix) and eigenvectors
/// v (the columns of a column-major m x m matrix: eigenvector r is v[q][r m .. r m + m), contiguous).
template <class T>
__global__ void pack_eigh(const T* w, const T* v, T* out, index_t m, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t width = m + 1, per = m * width, q = e / per, rest = e % per, r = rest / width, c = rest % width;
    out[e] = c == 0 ? w[q * m + r] : v[(q * m + r) * m + c - 1];
  }
}

/// lu_factor's packed result, per matrix m rows of [LU's row i, pivot i], from getrf's column-major LU (of A itself)
/// and its 1-based pivots, written as values of the dtype (exact below order 2^24).
template <class T>
__global__ void pack_lu(const T* lu, const std::int64_t* pivots, T* out, index_t m, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t width = m + 1, per = m * width, q = e / per, rest = e % per, i = rest / width, j = rest % width;
    out[e] = j < m ? lu[(q * m + j) * m + i] : static_cast<T>(pivots[q * m + i]);
  }
}

/// getrs's pivots (int64) from lu_solve's int32 ones, a thread per matrix; a pivot outside 1..m becomes the identity
/// swap (getrs never reads out of bounds), and bad[q] the first such pivot's position + 1 (0: all are rows).
template <class P>
__global__ void widen_pivots(const P* in, std::int64_t* out, int* bad, index_t m, index_t batches) {
  for (index_t q = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; q < batches;
       q += static_cast<index_t>(gridDim.x) * blockDim.x) {
    int first = 0;
    for (index_t i = 0; i < m; ++i) {
      const std::int64_t v = in[q * m + i];
      const bool row = v >= 1 && v <= m;
      out[q * m + i] = row ? v : i + 1;
      if (!row && first == 0) first = static_cast<int>(i + 1);
    }
    bad[q] = first;
  }
}

/// solve_triangular's `info`, a thread per matrix: the 1-based position of the first exact zero on the diagonal of
/// each n x n matrix (0: none), what LAPACK's trtrs reports on the host (cuBLAS's trsm checks nothing).
template <class T>
__global__ void first_zero_diagonal(const T* a, index_t n, index_t batches, int* info) {
  for (index_t q = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; q < batches;
       q += static_cast<index_t>(gridDim.x) * blockDim.x) {
    int first = 0;
    for (index_t i = 0; i < n && first == 0; ++i)
      if (a[(q * n + i) * n + i] == T(0)) first = static_cast<int>(i + 1);
    info[q] = first;
  }
}

/// cuBLAS's 64-bit trsm, non-unit diagonal, alpha 1 (host pointer mode), for float and double.
inline cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t op,
                           std::int64_t m, std::int64_t n, const float* a, std::int64_t lda, float* b,
                           std::int64_t ldb) {
  const float one = 1;
  return cublasStrsm_64(h, side, uplo, op, CUBLAS_DIAG_NON_UNIT, m, n, &one, a, lda, b, ldb);
}
inline cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t op,
                           std::int64_t m, std::int64_t n, const double* a, std::int64_t lda, double* b,
                           std::int64_t ldb) {
  const double one = 1;
  return cublasDtrsm_64(h, side, uplo, op, CUBLAS_DIAG_NON_UNIT, m, n, &one, a, lda, b, ldb);
}

/// R's half of qr's packed result (per matrix k rows of [Q's column r, R's row r], m + n wide) from geqrf's
/// column-major m x n factor f: R(r, j) is f's (r, j) on and above the diagonal, zero below it.
template <class T>
__global__ void pack_qr_r(const T* f, T* out, index_t m, index_t n, index_t k, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t per = k * n, q = e / per, rest = e % per, r = rest / n, j = rest % n;
    out[(q * k + r) * (m + n) + m + j] = j >= r ? f[q * m * n + j * m + r] : T(0);
  }
}

/// Q's half of qr's packed result from orgqr's Q, the first k columns of f (column-major: column r is contiguous).
template <class T>
__global__ void pack_qr_q(const T* f, T* out, index_t m, index_t n, index_t k, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t per = k * m, q = e / per, rest = e % per, r = rest / m, i = rest % m;
    out[(q * k + r) * (m + n) + i] = f[q * m * n + r * m + i];
  }
}

/// cuSOLVER's orgqr workspace query (the legacy 32-bit API: the 64-bit one has no orgqr), for float and double.
inline cusolverStatus_t orgqr_buffer(cusolverDnHandle_t h, int m, int n, int k, const float* a, int lda,
                                     const float* tau, int* lwork) {
  return cusolverDnSorgqr_bufferSize(h, m, n, k, a, lda, tau, lwork);
}
inline cusolverStatus_t orgqr_buffer(cusolverDnHandle_t h, int m, int n, int k, const double* a, int lda,
                                     const double* tau, int* lwork) {
  return cusolverDnDorgqr_bufferSize(h, m, n, k, a, lda, tau, lwork);
}

/// cuSOLVER's orgqr (legacy 32-bit API): Q's first n columns from geqrf's k reflectors, in place, for float and double.
inline cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, float* a, int lda, const float* tau,
                              float* work, int lwork, int* info) {
  return cusolverDnSorgqr(h, m, n, k, a, lda, tau, work, lwork, info);
}
inline cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, double* a, int lda, const double* tau,
                              double* work, int lwork, int* info) {
  return cusolverDnDorgqr(h, m, n, k, a, lda, tau, work, lwork, info);
}

/// svd's packed result, per matrix `rows` rows of [U's column r, s_r, Vᴴ's row r] (m + 1 + n wide; zero where U has
/// fewer columns or Vᴴ fewer rows), from gesvd of the tall column-major M (p x k, p = max(m, n), k = min(m, n)):
/// M = A transposed to columns when A is tall (`tall`: U = U', Vᴴ = VT'), else the row-major A's own memory, Aᵀ
/// (A = V' S U'ᵀ: U = VT'ᵀ, Vᴴ = U'ᵀ). u (p x p with full matrices, else p x k; leading dimension p), vt (k x k,
/// leading dimension k), s (k) per matrix. With k == 0 (full matrices of an empty A; u, s, vt null), U and Vᴴ are
/// identities, as the host's and NumPy's.
template <class T>
__global__ void pack_svd(const T* u, const T* s, const T* vt, T* out, index_t m, index_t n, index_t rows, bool tall,
                         bool full, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t k = m < n ? m : n, p = m < n ? n : m, width = m + 1 + n, per = rows * width;
    const index_t q = e / per, rest = e % per, r = rest / width, c = rest % width;
    const index_t ucols = full ? m : k, vrows = full ? n : k, u_per = p * (full ? p : k);
    T v = T(0);
    if (k == 0) {
      v = (c < m && c == r) || (c > m && c - m - 1 == r) ? T(1) : T(0);
    } else if (c < m) {  // U's column r, entry c
      if (r < ucols) v = tall ? u[q * u_per + r * p + c] : vt[q * k * k + r + c * k];
    } else if (c == m) {
      if (r < k) v = s[q * k + r];
    } else if (r < vrows) {  // Vᴴ's row r, entry c - m - 1
      const index_t j = c - m - 1;
      v = tall ? vt[q * k * k + r + j * k] : u[q * u_per + r * p + j];
    }
    out[e] = v;
  }
}

/// Device memory for `count` ints of `info` from texpr's cache (defer_info_check releases it).
inline int* allocate_info(index_t count, stream_t stream) {
  return static_cast<int*>(memory<cuda>::allocate(sizeof(int) * static_cast<std::size_t>(count), stream));
}

/// Adds the check of a batch's `info` (one int per matrix, device memory from texpr's cache, released by the
/// check): the first nonzero becomes tx::linalg_error naming op, the matrix and info, as the host's. op and why have
/// static storage (the error keeps op as a string_view).
inline void defer_info_check(std::string_view op, int* info, index_t batches, stream_t stream, const char* why) {
  deferred_checks::instance().add([op, info, batches, stream, why] {
    std::vector<int> host(static_cast<std::size_t>(batches));
    const cudaError_t copied =
        cudaMemcpyAsync(host.data(), info, sizeof(int) * host.size(), cudaMemcpyDeviceToHost, stream);
    const cudaError_t waited = copied == cudaSuccess ? cudaStreamSynchronize(stream) : copied;
    memory<cuda>::release(info, stream);
    TEXPR_CUDA_CHECK(waited);
    kernel_log::record_sync();
    for (index_t q = 0; q < batches; ++q)
      if (const int i = host[static_cast<std::size_t>(q)]; i != 0)
        throw linalg_error(op, q, i,
                           i < 0
                               ? "cuSOLVER rejected argument " + std::to_string(-i) + " (a texpr bug: please report it)"
                               : std::string(why) + " (at order " + std::to_string(i) + ")");
  });
}

/// The thread's cached cuSOLVER handle and 64-bit params, the handle's stream set to `stream`.
struct solver_session {
  cusolverDnHandle_t h;
  cusolverDnParams_t params;
};
inline solver_session solver_on(stream_t stream) {
  const solver_session s{cusolver_handle(), cusolver_params()};
  TEXPR_CUDA_CHECK(cusolverDnSetStream(s.h, stream));
  return s;
}

/// The device and host workspace sizes a 64-bit API's *_bufferSize reports.
struct workspace_sizes {
  std::size_t device = 0, host = 0;
};

/// A call's workspaces: the device one from texpr's cache, the host one (most calls need none) on the heap.
struct solver_workspace {
  workspace_sizes bytes;
  device_scratch device;
  std::vector<unsigned char> host;
  solver_workspace(workspace_sizes b, stream_t stream) : bytes(b), device(b.device, stream), host(b.host) {}
  void* host_data() { return bytes.host ? host.data() : nullptr; }
};

/// Runs calls(info) with `count` ints of device `info`, then defers the check of its first `batches` (op and why as
/// defer_info_check's); info goes back to the cache if calls throws.
template <class Calls>
void with_info(std::string_view op, index_t count, index_t batches, stream_t stream, const char* why, Calls&& calls) {
  int* info = allocate_info(count, stream);
  try {
    calls(info);
  } catch (...) {
    memory<cuda>::release(info, stream);
    throw;
  }
  defer_info_check(op, info, batches, stream, why);
}

/// syevd over a batch of m x m matrices in v (overwritten by the eigenvectors when `mode` asks for them), the
/// eigenvalues into w, m per matrix; then `after` (enqueued before the info check is deferred).
template <class T, class After>
void syevd_batch(std::string_view op, cusolverEigMode_t mode, T* v, T* w, index_t m, index_t batches, stream_t stream,
                 After&& after) {
  const auto s = solver_on(stream);
  constexpr cudaDataType_t type = solver_type<T>;
  // The row-major A is column-major Aᵀ, whose upper triangle is A's lower one (the triangle eigh reads).
  workspace_sizes sizes;
  TEXPR_CUDA_CHECK(cusolverDnXsyevd_bufferSize(s.h, s.params, mode, CUBLAS_FILL_MODE_UPPER, m, type, v, m, type, w,
                                               type, &sizes.device, &sizes.host));
  solver_workspace ws(sizes, stream);
  with_info(op, batches, batches, stream, "the eigenvalue algorithm did not converge", [&](int* info) {
    for (index_t q = 0; q < batches; ++q)
      TEXPR_CUDA_CHECK(cusolverDnXsyevd(s.h, s.params, mode, CUBLAS_FILL_MODE_UPPER, m, type, v + q * m * m, m, type,
                                        w + q * m, type, ws.device.p, sizes.device, ws.host_data(), sizes.host,
                                        info + q));
    after();
  });
}

/// svd (u and vt non-null) or svdvals (null) of each m x n row-major matrix of a, through gesvd (m >= n only) of the
/// tall column-major M: A transposed to columns when m > n, else A's memory as it is (Aᵀ, n x m); the singular
/// values into s (k per matrix); then `after` (enqueued before the info check is deferred). `full`: U' is p x p.
template <class T, class After>
void gesvd_batch(std::string_view op, const T* a, index_t m, index_t n, index_t batches, bool full, T* s, T* u, T* vt,
                 stream_t stream, After&& after) {
  const index_t k = std::min(m, n), p = std::max(m, n);
  const auto session = solver_on(stream);
  constexpr cudaDataType_t type = solver_type<T>;
  const std::size_t matrix_bytes = sizeof(T) * static_cast<std::size_t>(batches * m * n);
  const device_scratch tall_copy(matrix_bytes, stream);  // gesvd destroys its input
  T* mat = static_cast<T*>(tall_copy.p);
  if (m > n) transpose_batch(a, mat, m, n, batches, stream);
  else memory<cuda>::copy(mat, a, matrix_bytes, stream);
  const bool vectors = u != nullptr;
  const signed char jobu = vectors ? (full ? 'A' : 'S') : 'N', jobvt = vectors ? 'S' : 'N';  // VT' is k x k: 'S' = 'A'
  const index_t ldu = p, ldvt = k, u_per = vectors ? p * (full ? p : k) : 0;  // valid leading dimensions even unused
  workspace_sizes sizes;
  TEXPR_CUDA_CHECK(cusolverDnXgesvd_bufferSize(session.h, session.params, jobu, jobvt, p, k, type, mat, p, type, s,
                                               type, u, ldu, type, vt, ldvt, type, &sizes.device, &sizes.host));
  solver_workspace ws(sizes, stream);
  with_info(op, batches, batches, stream, "the singular value iteration did not converge", [&](int* info) {
    for (index_t q = 0; q < batches; ++q)
      TEXPR_CUDA_CHECK(cusolverDnXgesvd(session.h, session.params, jobu, jobvt, p, k, type, mat + q * m * n, p, type,
                                        s + q * k, type, vectors ? u + q * u_per : nullptr, ldu, type,
                                        vectors ? vt + q * k * k : nullptr, ldvt, type, ws.device.p, sizes.device,
                                        ws.host_data(), sizes.host, info + q));
    after();
  });
}

/// lstsq's C = Uᵀ B (per matrix r rows of k, row-major) times diag(s⁺): row i divided by s_i where s_i exceeds
/// rcond s_0 (gesvd's values descend, so s_0 is s_max), else zeroed, as LAPACK's gelsd does (a direction below the
/// cutoff is dropped, not amplified). The cutoff is read here on the device, so evaluation needs no host wait.
template <class T>
__global__ void divide_by_singular_values(const T* s, T* c, index_t r, index_t k, T rcond, index_t total) {
  for (index_t e = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const index_t q = e / (r * k), i = (e % (r * k)) / k;
    const T si = s[q * r + i];
    c[e] = si > rcond * s[q * r] ? c[e] / si : T(0);
  }
}

/// C = op_a(A) op_b(B) for `batches` column-major matrices at fixed strides (cuBLAS's terms: C is rows x cols with
/// leading dimension ldc, `inner` summed), through cublasGemmStridedBatchedEx. Full float or double precision: a
/// factorisation's products do not take matmul's TF32 opt-in. Extents were checked to fit cuBLAS's int.
template <class T>
void solver_gemm(cublasHandle_t h, cublasOperation_t op_a, cublasOperation_t op_b, index_t rows, index_t cols,
                 index_t inner, const T* a, index_t lda, index_t a_step, const T* b, index_t ldb, index_t b_step, T* c,
                 index_t ldc, index_t c_step, index_t batches, stream_t stream) {
  const T one = 1, zero = 0;
  constexpr cudaDataType_t type = solver_type<T>;
  constexpr cublasComputeType_t compute = std::is_same_v<T, float> ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
  bind_cublas(h, stream);
  for (index_t q = 0; q < batches; q += INT_MAX) {  // cuBLAS counts a batch in an int
    const index_t count = std::min<index_t>(batches - q, INT_MAX);
    TEXPR_CUDA_CHECK(cublasGemmStridedBatchedEx(
        h, op_a, op_b, static_cast<int>(rows), static_cast<int>(cols), static_cast<int>(inner), &one, a + q * a_step,
        type, static_cast<int>(lda), a_step, b + q * b_step, type, static_cast<int>(ldb), b_step, &zero, c + q * c_step,
        type, static_cast<int>(ldc), c_step, static_cast<int>(count), compute, CUBLAS_GEMM_DEFAULT));
  }
}

}  // namespace cuda_impl
}  // namespace texpr::detail

namespace texpr::cuda_kernels {

template <class N, class T, std::size_t R>
void cublas_trsm::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuBLAS's trsm takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(a.shape(), m, batches);
  const index_t k = b.shape()[R - 1];
  if (batches == 0 || m == 0) return;  // an empty result (k == 0 still checks the diagonal, as trtrs does)
  const stream_t stream = detail::resolve_stream(ctx.stream);
  T* out = dest.data();
  if (out != b.data() && k > 0)
    detail::memory<cuda>::copy(out, b.data(), sizeof(T) * static_cast<std::size_t>(batches * m * k), stream);
  // No transposes: the row-major B and X (m x k) are column-major Bᵀ and Xᵀ (k x m), the row-major A is column-major
  // Aᵀ, and A X = B is Xᵀ Aᵀ = Bᵀ, trsm's right-side solve with Aᵀ as stored; Aᵀ's triangle is A's other one.
  const cublasFillMode_t uplo = n.upper() ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  cublasHandle_t h = ci::cublas_handle();
  ci::bind_cublas(h, stream);
  ci::with_info(op::solve_triangular::name, batches, batches, stream, "the triangular matrix has a zero on its diagonal",
                [&](int* info) {
                  ci::first_zero_diagonal<T>
                      <<<ci::grid_for(ci::ceil_div(batches, ci::block_threads)), ci::block_threads, 0, stream>>>(
                          a.data(), m, batches, info);
                  TEXPR_CUDA_CHECK_LAUNCH();
                  if (k == 0) return;
                  for (index_t q = 0; q < batches; ++q)
                    TEXPR_CUDA_CHECK(ci::trsm(h, CUBLAS_SIDE_RIGHT, uplo, CUBLAS_OP_N, k, m, a.data() + q * m * m, m,
                                              out + q * m * k, k));
                });
}

template <class N, class T, std::size_t R>
void cusolver_potrf::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's potrf takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(a.shape(), m, batches);
  const stream_t stream = detail::resolve_stream(ctx.stream);
  T* out = dest.data();
  const std::size_t bytes = sizeof(T) * static_cast<std::size_t>(batches * m * m);
  if (out != a.data()) detail::memory<cuda>::copy(out, a.data(), bytes, stream);
  if (batches == 0 || m == 0) return;
  const auto s = ci::solver_on(stream);
  constexpr cudaDataType_t type = ci::solver_type<T>;
  ci::workspace_sizes sizes;
  TEXPR_CUDA_CHECK(cusolverDnXpotrf_bufferSize(s.h, s.params, CUBLAS_FILL_MODE_UPPER, m, type, out, m, type,
                                               &sizes.device, &sizes.host));
  ci::solver_workspace ws(sizes, stream);
  ci::with_info(op::cholesky::name, batches, batches, stream, "the matrix is not positive definite", [&](int* info) {
    for (index_t q = 0; q < batches; ++q)  // row-major lower = cuSOLVER's upper
      TEXPR_CUDA_CHECK(cusolverDnXpotrf(s.h, s.params, CUBLAS_FILL_MODE_UPPER, m, type, out + q * m * m, m, type,
                                        ws.device.p, sizes.device, ws.host_data(), sizes.host, info + q));
    const index_t total = batches * m * m;
    ci::zero_above_diagonal<T>
        <<<ci::grid_for(ci::ceil_div(total, ci::block_threads)), ci::block_threads, 0, stream>>>(out, m, total);
    TEXPR_CUDA_CHECK_LAUNCH();
  });
}

template <class N, class T, std::size_t R>
void cusolver_geqrf_orgqr::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's geqrf takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const index_t m = a.shape()[R - 2], cols = a.shape()[R - 1], k = std::min(m, cols);
  index_t batches = 1;
  for (std::size_t d = 0; d + 2 < R; ++d) batches *= a.shape()[d];
  if (batches == 0 || k == 0) return;  // an empty result
  if (m > INT_MAX || cols > INT_MAX)  // orgqr has only the legacy API's 32-bit integers
    throw shape_error("texpr: linalg::qr of shape " + to_string(a.shape()) +
                      " on cuda: cuSOLVER's orgqr takes 32-bit extents");
  const stream_t stream = detail::resolve_stream(ctx.stream);
  const auto s = ci::solver_on(stream);
  constexpr cudaDataType_t type = ci::solver_type<T>;
  // The QR of A itself (as on the host): A transposed to columns, geqrf there, R's rows packed before orgqr
  // overwrites the factor with Q's first k columns, then Q's columns packed.
  const detail::device_scratch factors(sizeof(T) * static_cast<std::size_t>(batches * m * cols), stream);
  const detail::device_scratch taus(sizeof(T) * static_cast<std::size_t>(batches * k), stream);
  T* f = static_cast<T*>(factors.p);
  T* tau = static_cast<T*>(taus.p);
  ci::transpose_batch(a.data(), f, m, cols, batches, stream);
  ci::workspace_sizes sizes;
  TEXPR_CUDA_CHECK(cusolverDnXgeqrf_bufferSize(s.h, s.params, m, cols, type, f, m, type, tau, type, &sizes.device,
                                               &sizes.host));
  ci::solver_workspace ws(sizes, stream);
  const int rows = static_cast<int>(m), reflectors = static_cast<int>(k);
  int lwork = 0;
  TEXPR_CUDA_CHECK(ci::orgqr_buffer(s.h, rows, reflectors, reflectors, f, rows, tau, &lwork));
  const detail::device_scratch orgqr_work(sizeof(T) * static_cast<std::size_t>(std::max(lwork, 1)), stream);
  // geqrf's info, then orgqr's: both < 0 only (a bad argument, which the status reports too); geqrf's are checked
  ci::with_info(op::qr::name, 2 * batches, batches, stream, "unreachable: Householder QR does not fail", [&](int* info) {
    for (index_t q = 0; q < batches; ++q)
      TEXPR_CUDA_CHECK(cusolverDnXgeqrf(s.h, s.params, m, cols, type, f + q * m * cols, m, type, tau + q * k, type,
                                        ws.device.p, sizes.device, ws.host_data(), sizes.host, info + q));
    const index_t r_total = batches * k * cols, q_total = batches * k * m;
    ci::pack_qr_r<T><<<ci::grid_for(ci::ceil_div(r_total, ci::block_threads)), ci::block_threads, 0, stream>>>(
        f, dest.data(), m, cols, k, r_total);
    TEXPR_CUDA_CHECK_LAUNCH();
    for (index_t q = 0; q < batches; ++q)
      TEXPR_CUDA_CHECK(ci::orgqr(s.h, rows, reflectors, reflectors, f + q * m * cols, rows, tau + q * k,
                                 static_cast<T*>(orgqr_work.p), lwork, info + batches + q));
    ci::pack_qr_q<T><<<ci::grid_for(ci::ceil_div(q_total, ci::block_threads)), ci::block_threads, 0, stream>>>(
        f, dest.data(), m, cols, k, q_total);
    TEXPR_CUDA_CHECK_LAUNCH();
  });
}

template <class N, class T, std::size_t R>
void cusolver_gesvd::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's gesvd takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  ci::matrix_batch(a.shape(), m, cols, batches);
  const index_t k = std::min(m, cols), p = std::max(m, cols);
  const index_t rows = dest.shape()[R - 2];  // k, or max(m, n) with full matrices
  const index_t total = batches * rows * (m + 1 + cols);
  if (total == 0) return;  // an empty result
  const stream_t stream = detail::resolve_stream(ctx.stream);
  const bool full = n.full_matrices();
  auto pack = [&](const T* u, const T* s, const T* vt) {
    ci::pack_svd<T><<<ci::grid_for(ci::ceil_div(total, ci::block_threads)), ci::block_threads, 0, stream>>>(
        u, s, vt, dest.data(), m, cols, rows, m > cols, full, total);
    TEXPR_CUDA_CHECK_LAUNCH();
  };
  if (k == 0) return pack(nullptr, nullptr, nullptr);  // full identities, no factorisation
  const detail::device_scratch u(sizeof(T) * static_cast<std::size_t>(batches * p * (full ? p : k)), stream);
  const detail::device_scratch vt(sizeof(T) * static_cast<std::size_t>(batches * k * k), stream);
  const detail::device_scratch s(sizeof(T) * static_cast<std::size_t>(batches * k), stream);
  T* u_p = static_cast<T*>(u.p);
  T* vt_p = static_cast<T*>(vt.p);
  T* s_p = static_cast<T*>(s.p);
  ci::gesvd_batch(op::svd::name, a.data(), m, cols, batches, full, s_p, u_p, vt_p, stream, [&] { pack(u_p, s_p, vt_p); });
}

template <class N, class T, std::size_t R>
void cusolver_gesvd_values::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's gesvd takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  ci::matrix_batch(a.shape(), m, cols, batches);  // dest has one axis fewer
  if (batches == 0 || m == 0 || cols == 0) return;  // an empty result
  // the values straight into dest, k per matrix
  ci::gesvd_batch<T>(op::svdvals::name, a.data(), m, cols, batches, false, dest.data(), nullptr, nullptr,
                     detail::resolve_stream(ctx.stream), [] {});
}

template <class N, class T, std::size_t R>
void cusolver_gesvd_lstsq::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's gesvd takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  index_t m = 0, cols = 0, batches = 0;
  ci::matrix_batch(a.shape(), m, cols, batches);
  const index_t k = b.shape()[R - 1];
  if (batches == 0 || cols == 0 || k == 0) return;  // an empty result
  const stream_t stream = detail::resolve_stream(ctx.stream);
  T* out = dest.data();
  // no equations: the minimum-norm solution is 0 (the host's gelsd returns its zeroed right-hand sides)
  if (m == 0) return detail::memory<cuda>::zero(out, sizeof(T) * static_cast<std::size_t>(batches * cols * k), stream);
  if (m > INT_MAX || cols > INT_MAX || k > INT_MAX)
    throw shape_error("texpr: linalg::lstsq of A of shape " + to_string(a.shape()) + " and B of shape " +
                      to_string(b.shape()) + " on cuda: cuBLAS's GEMM takes 32-bit extents");
  const index_t r = std::min(m, cols), p = std::max(m, cols);
  const bool tall = m > cols;
  // gesvd factors the tall column-major M (cusolver_gesvd::run): tall A: M = A, U = U', Vᵀ = VT'; wide or square A:
  // M = Aᵀ, U = VT'ᵀ, V = U'. U' is p x r (leading dimension p), VT' r x r.
  const detail::device_scratch u(sizeof(T) * static_cast<std::size_t>(batches * p * r), stream);
  const detail::device_scratch vt(sizeof(T) * static_cast<std::size_t>(batches * r * r), stream);
  const detail::device_scratch s(sizeof(T) * static_cast<std::size_t>(batches * r), stream);
  const detail::device_scratch c(sizeof(T) * static_cast<std::size_t>(batches * r * k), stream);
  T* u_p = static_cast<T*>(u.p);
  T* vt_p = static_cast<T*>(vt.p);
  T* s_p = static_cast<T*>(s.p);
  T* c_p = static_cast<T*>(c.p);
  const T rcond = std::numeric_limits<T>::epsilon() * static_cast<T>(p);  // NumPy's rcond=None, as the host's
  ci::gesvd_batch(op::lstsq::name, a.data(), m, cols, batches, false, s_p, u_p, vt_p, stream, [&] {
    cublasHandle_t h = ci::cublas_handle();
    // Row-major matrices are cuBLAS's transposes. C = Uᵀ B (r x k) is Cᵀ = Bᵀ U: Bᵀ is B's memory (k x m), U is U'
    // (tall, m x r) or VT'ᵀ.
    ci::solver_gemm(h, CUBLAS_OP_N, tall ? CUBLAS_OP_N : CUBLAS_OP_T, k, r, m, b.data(), k, m * k, tall ? u_p : vt_p,
                    tall ? p : r, tall ? p * r : r * r, c_p, k, r * k, batches, stream);
    const index_t total = batches * r * k;
    ci::divide_by_singular_values<T>
        <<<ci::grid_for(ci::ceil_div(total, ci::block_threads)), ci::block_threads, 0, stream>>>(s_p, c_p, r, k, rcond,
                                                                                                 total);
    TEXPR_CUDA_CHECK_LAUNCH();
    // X = V C (n x k) is Xᵀ = Cᵀ Vᵀ: Vᵀ is VT' (tall, n x n) or U'ᵀ (U' is n x m)
    ci::solver_gemm(h, CUBLAS_OP_N, tall ? CUBLAS_OP_N : CUBLAS_OP_T, k, cols, r, c_p, k, r * k, tall ? vt_p : u_p,
                    tall ? r : p, tall ? r * r : p * r, out, k, cols * k, batches, stream);
  });
}

template <class N, class T, std::size_t R>
void cusolver_getrf_getrs::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's getrf takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(a.shape(), m, batches);
  const index_t k = b.shape()[R - 1];
  if (batches == 0 || m == 0 || k == 0) return;  // an empty result
  const stream_t stream = detail::resolve_stream(ctx.stream);
  T* out = dest.data();
  const auto s = ci::solver_on(stream);
  constexpr cudaDataType_t type = ci::solver_type<T>;
  // The row-major A is column-major Aᵀ: getrf factors Aᵀ = P L U in a copy of A, and getrs with CUBLAS_OP_T solves
  // (Aᵀ)ᵀ X = A X = B, B as columns (k == 1: a column is its own layout, so B is solved in dest itself).
  const std::size_t matrix_bytes = sizeof(T) * static_cast<std::size_t>(batches * m * m);
  const detail::device_scratch lu(matrix_bytes, stream);
  const detail::device_scratch pivots(sizeof(std::int64_t) * static_cast<std::size_t>(batches * m), stream);
  const detail::device_scratch columns(k == 1 ? 0 : sizeof(T) * static_cast<std::size_t>(batches * m * k), stream);
  T* factors = static_cast<T*>(lu.p);
  auto* swaps = static_cast<std::int64_t*>(pivots.p);
  T* rhs = k == 1 ? out : static_cast<T*>(columns.p);
  detail::memory<cuda>::copy(factors, a.data(), matrix_bytes, stream);
  if (k != 1) ci::transpose_batch(b.data(), rhs, m, k, batches, stream);
  else if (out != b.data()) detail::memory<cuda>::copy(out, b.data(), sizeof(T) * static_cast<std::size_t>(batches * m), stream);
  ci::workspace_sizes sizes;
  TEXPR_CUDA_CHECK(
      cusolverDnXgetrf_bufferSize(s.h, s.params, m, m, type, factors, m, type, &sizes.device, &sizes.host));
  ci::solver_workspace ws(sizes, stream);
  // getrf's info (checked: > 0 is a zero pivot), then getrs's (< 0 only, a bad argument, which its status reports too)
  ci::with_info(op::solve::name, 2 * batches, batches, stream, "the matrix is singular (an exactly zero pivot)",
                [&](int* info) {
                  for (index_t q = 0; q < batches; ++q) {
                    T* f = factors + q * m * m;
                    std::int64_t* p = swaps + q * m;
                    TEXPR_CUDA_CHECK(cusolverDnXgetrf(s.h, s.params, m, m, type, f, m, p, type, ws.device.p,
                                                      sizes.device, ws.host_data(), sizes.host, info + q));
                    TEXPR_CUDA_CHECK(cusolverDnXgetrs(s.h, s.params, CUBLAS_OP_T, m, k, type, f, m, p, type,
                                                      rhs + q * m * k, m, info + batches + q));
                  }
                  if (k != 1) ci::transpose_batch(rhs, out, k, m, batches, stream);
                });
}

template <class N, class T, std::size_t R>
void cusolver_getrf_det::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's getrf takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(a.shape(), m, batches);
  if (batches == 0) return;
  const stream_t stream = detail::resolve_stream(ctx.stream);
  // Aᵀ (the row-major A to cuSOLVER) has A's determinant. A singular matrix is a result here, not an error, so
  // `info` stays in scratch memory, read only by the kernel.
  const std::size_t matrix_bytes = sizeof(T) * static_cast<std::size_t>(batches * m * m);
  const detail::device_scratch lu(matrix_bytes, stream);
  const detail::device_scratch pivots(sizeof(std::int64_t) * static_cast<std::size_t>(batches * m), stream);
  const detail::device_scratch info(m == 0 ? 0 : sizeof(int) * static_cast<std::size_t>(batches), stream);
  T* factors = static_cast<T*>(lu.p);
  auto* swaps = static_cast<std::int64_t*>(pivots.p);
  auto* infos = static_cast<int*>(info.p);
  if (m > 0) {  // an empty matrix's determinant is 1: the kernel alone writes [1, 0]
    const auto s = ci::solver_on(stream);
    constexpr cudaDataType_t type = ci::solver_type<T>;
    detail::memory<cuda>::copy(factors, a.data(), matrix_bytes, stream);
    ci::workspace_sizes sizes;
    TEXPR_CUDA_CHECK(
        cusolverDnXgetrf_bufferSize(s.h, s.params, m, m, type, factors, m, type, &sizes.device, &sizes.host));
    ci::solver_workspace ws(sizes, stream);
    for (index_t q = 0; q < batches; ++q)
      TEXPR_CUDA_CHECK(cusolverDnXgetrf(s.h, s.params, m, m, type, factors + q * m * m, m, swaps + q * m, type,
                                        ws.device.p, sizes.device, ws.host_data(), sizes.host, infos + q));
  }
  ci::slogdet_from_lu<T><<<ci::grid_for(ci::ceil_div(batches, ci::block_threads)), ci::block_threads, 0, stream>>>(
      factors, swaps, infos, m, batches, dest.data());
  TEXPR_CUDA_CHECK_LAUNCH();
}

template <class N, class T, std::size_t R>
void cusolver_syevd::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's syevd takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(a.shape(), m, batches);
  if (batches == 0 || m == 0) return;  // an empty result
  const stream_t stream = detail::resolve_stream(ctx.stream);
  // syevd overwrites a copy of A with the eigenvectors as columns, each contiguous, which pack_eigh copies into the
  // packed rows.
  const std::size_t matrix_bytes = sizeof(T) * static_cast<std::size_t>(batches * m * m);
  const detail::device_scratch vectors(matrix_bytes, stream);
  const detail::device_scratch values(sizeof(T) * static_cast<std::size_t>(batches * m), stream);
  T* v = static_cast<T*>(vectors.p);
  T* w = static_cast<T*>(values.p);
  detail::memory<cuda>::copy(v, a.data(), matrix_bytes, stream);
  ci::syevd_batch(op::eigh::name, CUSOLVER_EIG_MODE_VECTOR, v, w, m, batches, stream, [&] {
    const index_t total = batches * m * (m + 1);
    ci::pack_eigh<T><<<ci::grid_for(ci::ceil_div(total, ci::block_threads)), ci::block_threads, 0, stream>>>(
        w, v, dest.data(), m, total);
    TEXPR_CUDA_CHECK_LAUNCH();
  });
}

template <class N, class T, std::size_t R>
void cusolver_syevd_values::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's syevd takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(a.shape(), m, batches);
  if (batches == 0 || m == 0) return;  // an empty result
  const stream_t stream = detail::resolve_stream(ctx.stream);
  // The eigenvalues straight into dest, m per matrix; a copy of A is the scratch syevd overwrites.
  const std::size_t matrix_bytes = sizeof(T) * static_cast<std::size_t>(batches * m * m);
  const detail::device_scratch scratch(matrix_bytes, stream);
  T* v = static_cast<T*>(scratch.p);
  detail::memory<cuda>::copy(v, a.data(), matrix_bytes, stream);
  ci::syevd_batch(op::eigvalsh::name, CUSOLVER_EIG_MODE_NOVECTOR, v, dest.data(), m, batches, stream, [] {});
}

template <class N, class T, std::size_t R>
void cusolver_getrf::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's getrf takes float or double");
  const auto a = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(a.shape(), m, batches);
  if (batches == 0 || m == 0) return;  // an empty result
  const stream_t stream = detail::resolve_stream(ctx.stream);
  const auto s = ci::solver_on(stream);
  constexpr cudaDataType_t type = ci::solver_type<T>;
  // The LU of A itself, whose row swaps are A's rows (as the host's and torch's): the row-major A transposed to
  // columns for getrf, then LU's rows and the pivots packed back into dest.
  const detail::device_scratch columns(sizeof(T) * static_cast<std::size_t>(batches * m * m), stream);
  const detail::device_scratch pivots(sizeof(std::int64_t) * static_cast<std::size_t>(batches * m), stream);
  T* lu = static_cast<T*>(columns.p);
  auto* swaps = static_cast<std::int64_t*>(pivots.p);
  ci::transpose_batch(a.data(), lu, m, m, batches, stream);
  ci::workspace_sizes sizes;
  TEXPR_CUDA_CHECK(cusolverDnXgetrf_bufferSize(s.h, s.params, m, m, type, lu, m, type, &sizes.device, &sizes.host));
  ci::solver_workspace ws(sizes, stream);
  ci::with_info(op::lu_factor::name, batches, batches, stream, "the matrix is singular (an exactly zero pivot)",
                [&](int* info) {
                  for (index_t q = 0; q < batches; ++q)
                    TEXPR_CUDA_CHECK(cusolverDnXgetrf(s.h, s.params, m, m, type, lu + q * m * m, m, swaps + q * m,
                                                      type, ws.device.p, sizes.device, ws.host_data(), sizes.host,
                                                      info + q));
                  const index_t total = batches * m * (m + 1);
                  ci::pack_lu<T>
                      <<<ci::grid_for(ci::ceil_div(total, ci::block_threads)), ci::block_threads, 0, stream>>>(
                          lu, swaps, dest.data(), m, total);
                  TEXPR_CUDA_CHECK_LAUNCH();
                });
}

template <class N, class T, std::size_t R>
void cusolver_getrs::run(const N& n, const view<T, R, cuda>& dest, context<cuda>& ctx) {
  namespace ci = detail::cuda_impl;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: cuSOLVER's getrs takes float or double");
  const auto lu = detail::materialize_contiguous(detail::get<0>(n.operands()), ctx);
  const auto pivots = detail::materialize_contiguous(detail::get<1>(n.operands()), ctx);
  const auto b = detail::materialize_contiguous(detail::get<2>(n.operands()), ctx);
  index_t m = 0, batches = 0;
  ci::square_batch(lu.shape(), m, batches);
  const index_t k = b.shape()[R - 1];
  if (batches == 0 || m == 0 || k == 0) return;  // an empty result
  const stream_t stream = detail::resolve_stream(ctx.stream);
  const auto s = ci::solver_on(stream);
  constexpr cudaDataType_t type = ci::solver_type<T>;
  // lu holds A's factors (of A itself) row-major; getrs (CUBLAS_OP_N) reads them column-major, so LU and B are
  // transposed to columns and X back.
  const detail::device_scratch factors(sizeof(T) * static_cast<std::size_t>(batches * m * m), stream);
  const detail::device_scratch columns(sizeof(T) * static_cast<std::size_t>(batches * m * k), stream);
  const detail::device_scratch wide(sizeof(std::int64_t) * static_cast<std::size_t>(batches * m), stream);
  const detail::device_scratch getrs_info(sizeof(int) * static_cast<std::size_t>(batches), stream);  // < 0 only
  T* f = static_cast<T*>(factors.p);
  T* rhs = static_cast<T*>(columns.p);
  auto* swaps = static_cast<std::int64_t*>(wide.p);
  ci::transpose_batch(lu.data(), f, m, m, batches, stream);
  ci::transpose_batch(b.data(), rhs, m, k, batches, stream);
  // `info` here is widen_pivots' report of a pivot outside 1..m (getrs's own info is < 0 only, as its status)
  ci::with_info(op::lu_solve::name, batches, batches, stream, "a pivot is not a row of 1..n (not lu_factor's)",
                [&](int* bad) {
                  ci::widen_pivots<<<ci::grid_for(ci::ceil_div(batches, ci::block_threads)), ci::block_threads, 0,
                                     stream>>>(pivots.data(), swaps, bad, m, batches);
                  TEXPR_CUDA_CHECK_LAUNCH();
                  for (index_t q = 0; q < batches; ++q)
                    TEXPR_CUDA_CHECK(cusolverDnXgetrs(s.h, s.params, CUBLAS_OP_N, m, k, type, f + q * m * m, m,
                                                      swaps + q * m, type, rhs + q * m * k, m,
                                                      static_cast<int*>(getrs_info.p) + q));
                  ci::transpose_batch(rhs, dest.data(), k, m, batches, stream);
                });
}

}  // namespace texpr::cuda_kernels

#endif  // __CUDACC__
