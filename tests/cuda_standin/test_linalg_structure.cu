// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::linalg's cuda rows counted on the stand-in (no factorisation runs: structure only). cholesky: a size query and
// one cusolverDnXpotrf per matrix (upper, as a row-major lower factor is column-major upper) and one kernel zeroing
// the strict upper triangles; solve: getrf and getrs (transposed) per matrix, right-hand sides transposed to columns
// and back; slogdet: getrf per matrix and one kernel; eigh and eigvalsh: syevd per matrix (upper), eigh's packing
// kernel; lu_factor: getrf of A's columns and a packing kernel; lu_solve: getrs (N) with the pivots widened;
// solve_triangular: cuBLAS's trsm per matrix (right side: no transposes) and a kernel finding zeros on the diagonal;
// qr: A to columns, geqrf (64-bit) and orgqr (legacy) per matrix, R's rows packed between them and Q's after;
// svd and svdvals: gesvd per matrix of the tall column-major layout (A's memory, or A to columns when tall), svd's
// packing kernel; lstsq: that gesvd with vectors, then two strided-batched GEMMs (Uᵀ B, V C) around the kernel
// dividing by the singular values above the cutoff. For each, the handle made once; no allocation and no host wait after the first evaluation; `info` read at
// the next copy to the host, where a failing matrix becomes tx::linalg_error naming op, batch index and info
// (slogdet's singular matrix is a result, not an error).
#include <doctest/doctest.h>

#include <texpr/linalg.hpp>

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cuda/support.cuh"
#include "cuda_standin/standin.hpp"

namespace tx = texpr;
namespace sd = texpr_standin;

namespace {

/// Hands texpr's cached device blocks back to the stand-in after a case that injected a failing `info`: the stand-in
/// runs no kernel, so an info or flag a kernel would write (lu_solve's widen_pivots, solve_triangular's
/// first_zero_diagonal) reads its block's old contents, and a reused block could still hold the injected info.
/// Fresh stand-in allocations are zeroed.
void forget_injected_infos() { tx::detail::device_block_cache::instance().release_all(); }

std::size_t calls_named(const sd::record& r, const std::string& function) {
  std::size_t n = 0;
  for (const auto& c : r.solver_calls) n += c.function == function ? 1 : 0;
  return n;
}

/// Evaluates cholesky of a (batch of 4, order 8) three times, each followed by a copy to the host; checks each
/// evaluation's calls, and that only the first makes the handle or allocates. Returns the last evaluation's record.
template <class T>
sd::record steady_cholesky(int type) {
  const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, 8, 8}, 1);
  sd::record last;
  for (int i = 0; i < 3; ++i) {
    INFO("evaluation " << i);
    const auto planned = tx::planned_kernels(tx::linalg::cholesky(a));
    tx::kernel_log log;
    const sd::scope s;
    tx::tensor<T, 3, tx::cuda> l = tx::linalg::cholesky(a);
    last = s.taken();
    INFO(sd::describe(last));
    CHECK(last.syncs.empty());  // info stays on the device: evaluation never waits
    CHECK(calls_named(last, "cusolverDnXpotrf_bufferSize") == 1);
    CHECK(calls_named(last, "cusolverDnXpotrf") == 4);
    for (const auto& c : last.solver_calls) {
      CHECK(c.n == 8);
      CHECK(c.uplo == 1);  // CUBLAS_FILL_MODE_UPPER
      CHECK(c.type == type);
      CHECK(c.handle == last.solver_calls.front().handle);
      if (c.function == "cusolverDnXpotrf") CHECK(c.workspace > 0);
    }
    CHECK(last.launches.size() == 1);  // zero_above_diagonal
    if (i > 0) {
      CHECK(last.solver_handles == 0);
      CHECK(last.allocations.empty());
    }
    REQUIRE(planned.size() == log.entries().size());
    for (std::size_t k = 0; k != planned.size(); ++k)
      CHECK(planned[k].implementation == log.entries()[k].implementation);
    // The next copy to the host waits once for its data and once for the pending info check.
    const sd::scope h;
    const auto host = tx::to_host(l);
    const auto r = h.taken();
    CHECK(r.syncs.size() == 2);
    CHECK(r.copies_of(sd::copy_kind::device_to_host) == 2);
    CHECK(host.shape() == a.shape());
  }
  return last;
}

/// Evaluates make()'s expression three times, each followed by a copy to the host; passes each evaluation's record
/// to check. Checks that no evaluation waits, that every solver call uses one handle, that only the first evaluation
/// makes the handle or allocates (the workspaces come from texpr's device cache), that the kernel log names what
/// tx::planned_kernels planned, and that the copy to the host waits `waits` times (its data, and the pending info
/// check where there is one). Returns the last evaluation's record.
template <class Make, class Check>
sd::record steady(const Make& make, const Check& check, std::size_t waits) {
  using E = decltype(make());
  using Out = tx::tensor<typename E::value_type, E::rank, tx::cuda>;
  sd::record last;
  const void* handle = nullptr;
  for (int i = 0; i < 3; ++i) {
    INFO("evaluation " << i);
    const auto planned = tx::planned_kernels(make());
    tx::kernel_log log;
    const sd::scope s;
    Out out = make();
    last = s.taken();
    INFO(sd::describe(last));
    CHECK(last.syncs.empty());  // info stays on the device: evaluation never waits
    check(last);
    for (const auto& c : last.solver_calls) {
      if (!handle) handle = c.handle;
      CHECK(c.handle == handle);
    }
    if (i > 0) {
      CHECK(last.solver_handles == 0);
      CHECK(last.allocations.empty());
    }
    REQUIRE(planned.size() == log.entries().size());
    for (std::size_t k = 0; k != planned.size(); ++k)
      CHECK(planned[k].implementation == log.entries()[k].implementation);
    const sd::scope h;
    const auto host = tx::to_host(out);
    const auto r = h.taken();
    CHECK(r.syncs.size() == waits);
    CHECK(r.copies_of(sd::copy_kind::device_to_host) == waits);
    CHECK(host.shape() == out.shape());
  }
  return last;
}

std::size_t launches_of(const sd::record& r, const std::string& family) {
  const auto all = r.launches_by_family();
  const auto it = all.find(family);
  return it == all.end() ? 0 : it->second;
}

/// solve of a batch of 4 order-8 matrices with k right-hand sides: per matrix a getrf (pivoting, a workspace) and a
/// transposed getrs; B transposed to columns and back unless k == 1.
template <class T>
void steady_solve(int type, tx::index_t k) {
  const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, 8, 8}, 5);
  const tx::tensor<T, 3, tx::cuda> b = tx::random::normal<T, tx::cuda>({4, 8, k}, 6);
  steady([&] { return tx::linalg::solve(a, b); },
         [&](const sd::record& r) {
           CHECK(calls_named(r, "cusolverDnXgetrf_bufferSize") == 1);
           CHECK(calls_named(r, "cusolverDnXgetrf") == 4);
           CHECK(calls_named(r, "cusolverDnXgetrs") == 4);
           CHECK(r.solver_calls.size() == 9);
           for (const auto& c : r.solver_calls) {
             CHECK(c.n == 8);
             CHECK(c.type == type);
             if (c.function == "cusolverDnXgetrf") CHECK((c.workspace > 0 && c.pivots));
             if (c.function == "cusolverDnXgetrs") {
               CHECK(c.trans == 1);  // CUBLAS_OP_T: the row-major A is cuSOLVER's Aᵀ
               CHECK(c.nrhs == k);
               CHECK(c.pivots);
             }
           }
           CHECK(r.launches.size() == (k == 1 ? 0u : 2u));
           CHECK(launches_of(r, "cuda_impl::transpose_matrices") == (k == 1 ? 0u : 2u));
         },
         2);
}

/// syevd per matrix of a batch of 4 of order 8, upper (the row-major lower triangle), with or without eigenvectors.
void check_syevd_calls(const sd::record& r, int type, int jobz) {
  CHECK(calls_named(r, "cusolverDnXsyevd_bufferSize") == 1);
  CHECK(calls_named(r, "cusolverDnXsyevd") == 4);
  CHECK(r.solver_calls.size() == 5);
  for (const auto& c : r.solver_calls) {
    CHECK(c.n == 8);
    CHECK(c.uplo == 1);  // CUBLAS_FILL_MODE_UPPER
    CHECK(c.type == type);
    CHECK(c.jobz == jobz);
    if (c.function == "cusolverDnXsyevd") CHECK(c.workspace > 0);
  }
}

template <class T>
void steady_slogdet_eigh(int type) {
  const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, 8, 8}, 7);
  steady([&] { return tx::linalg::slogdet(a).sign; },
         [&](const sd::record& r) {
           CHECK(calls_named(r, "cusolverDnXgetrf_bufferSize") == 1);
           CHECK(calls_named(r, "cusolverDnXgetrf") == 4);
           CHECK(r.solver_calls.size() == 5);
           for (const auto& c : r.solver_calls) {
             CHECK(c.n == 8);
             CHECK(c.type == type);
             if (c.function == "cusolverDnXgetrf") CHECK((c.workspace > 0 && c.pivots));
           }
           CHECK(launches_of(r, "cuda_impl::slogdet_from_lu") == 1);
         },
         1);  // a singular matrix is a result: no info check
  steady([&] { return tx::linalg::eigh(a).eigenvalues; },
         [&](const sd::record& r) {
           check_syevd_calls(r, type, 1);  // CUSOLVER_EIG_MODE_VECTOR
           CHECK(launches_of(r, "cuda_impl::pack_eigh") == 1);
         },
         2);
  steady([&] { return tx::linalg::eigvalsh(a); },
         [&](const sd::record& r) {
           check_syevd_calls(r, type, 0);  // CUSOLVER_EIG_MODE_NOVECTOR
           CHECK(r.launches.empty());      // the eigenvalues go straight into the result
         },
         2);
}

}  // namespace

TEST_CASE("cuda cholesky: cuSOLVER potrf per matrix, handle and workspace made once, no wait") {
  const auto f = steady_cholesky<float>(0);   // CUDA_R_32F
  const auto d = steady_cholesky<double>(1);  // CUDA_R_64F
  CHECK(f.solver_calls.size() == d.solver_calls.size());
}

TEST_CASE("cuda solve_triangular: cuBLAS trsm (right side, no transpose) per matrix, handle made once, no wait") {
  auto run = [&]<class T>(int type, const char* function) {
    const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, 8, 8}, 19);
    const tx::tensor<T, 3, tx::cuda> b = tx::random::normal<T, tx::cuda>({4, 8, 3}, 20);
    for (const bool upper : {false, true}) {
      INFO("type " << type << (upper ? " upper" : " lower"));
      const auto which = upper ? tx::linalg::triangle::upper : tx::linalg::triangle::lower;
      steady([&] { return tx::linalg::solve_triangular(a, b, which); },
             [&](const sd::record& r) {
               CHECK(calls_named(r, function) == 4);
               CHECK(r.solver_calls.size() == 4);  // no cuSOLVER call, no size query
               for (const auto& c : r.solver_calls) {
                 CHECK(c.side == 1);   // CUBLAS_SIDE_RIGHT: Xᵀ Aᵀ = Bᵀ, B and X as stored
                 CHECK(c.trans == 0);  // CUBLAS_OP_N: Aᵀ as stored
                 CHECK(c.uplo == (upper ? 0 : 1));  // Aᵀ's triangle is A's other one
                 CHECK((c.n == 8 && c.nrhs == 3 && c.lda == 8 && c.ldb == 3));
                 CHECK(c.type == type);
                 CHECK(c.workspace > 0);  // texpr's cuBLAS workspace is bound to the stream
               }
               CHECK(r.launches.size() == 1);  // first_zero_diagonal, and no transpose
               CHECK(launches_of(r, "cuda_impl::first_zero_diagonal") == 1);
               CHECK(r.copies_of(sd::copy_kind::device_to_device) == 1);  // B into the result, solved there
             },
             2);  // the result, and the pending info check
    }
    CHECK(tx::placement(tx::linalg::solve_triangular(a, b, tx::linalg::triangle::lower)).find("cublas_trsm") !=
          std::string::npos);
    static_assert(tx::runs_on<decltype(tx::linalg::solve_triangular(a, b, tx::linalg::triangle::lower)), tx::cuda>);
  };
  run.template operator()<float>(0, "cublasStrsm_v2_64");
  run.template operator()<double>(1, "cublasDtrsm_v2_64");
  // an empty batch: nothing enqueued; no right-hand sides: the diagonal checked (as trtrs), no trsm
  const tx::tensor<float, 3, tx::cuda> none = tx::random::normal<float, tx::cuda>({0, 3, 3}, 21);
  const tx::tensor<float, 3, tx::cuda> none_b = tx::random::normal<float, tx::cuda>({0, 3, 2}, 22);
  const tx::tensor<float, 3, tx::cuda> a = tx::random::normal<float, tx::cuda>({2, 3, 3}, 23);
  const tx::tensor<float, 3, tx::cuda> no_b = tx::random::normal<float, tx::cuda>({2, 3, 0}, 24);
  const sd::scope s;
  tx::tensor<float, 3, tx::cuda> x = tx::linalg::solve_triangular(none, none_b, tx::linalg::triangle::upper);
  const auto r = s.taken();
  CHECK(r.solver_calls.empty());
  CHECK(r.launches.empty());
  CHECK(x.size() == 0);
  const sd::scope e;
  tx::tensor<float, 3, tx::cuda> y = tx::linalg::solve_triangular(a, no_b, tx::linalg::triangle::lower);
  const auto re = e.taken();
  CHECK(re.solver_calls.empty());
  CHECK(launches_of(re, "cuda_impl::first_zero_diagonal") == 1);
  CHECK(y.size() == 0);
  (void)tx::to_host(y);  // runs the pending info check: a copy of an empty tensor too
}

TEST_CASE("cuda qr: geqrf (64-bit) and orgqr (legacy) per matrix of A's columns, R and Q packed, no wait") {
  auto run = [&]<class T>(int type, const char* orgqr) {
    const std::string orgqr_size = std::string(orgqr) + "_bufferSize";
    for (const auto& shape : {std::pair<tx::index_t, tx::index_t>{9, 5}, {5, 9}}) {  // tall and wide
      const tx::index_t m = shape.first, n = shape.second, k = std::min(m, n);
      INFO("type " << type << ", " << m << " x " << n);
      const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, m, n}, 25);
      steady([&] { return tx::linalg::qr(a).r; },
             [&](const sd::record& r) {
               CHECK(calls_named(r, "cusolverDnXgeqrf_bufferSize") == 1);
               CHECK(calls_named(r, "cusolverDnXgeqrf") == 4);
               CHECK(calls_named(r, orgqr_size) == 1);
               CHECK(calls_named(r, orgqr) == 4);
               CHECK(r.solver_calls.size() == 10);
               for (const auto& c : r.solver_calls) {
                 CHECK(c.type == type);
                 CHECK(c.m == m);
                 if (c.function.find("geqrf") != std::string::npos) CHECK(c.n == n);  // A itself, as columns
                 else CHECK((c.n == k && c.k == k));                                // Q's first k columns
                 if (c.function == "cusolverDnXgeqrf") CHECK(c.workspace > 0);
                 if (c.function == orgqr) CHECK(c.lwork > 0);
                 // geqrf all before the R packing, orgqr all after it
                 if (c.function == "cusolverDnXgeqrf") CHECK(c.order < r.launches[1].order);
                 if (c.function == orgqr) CHECK(c.order > r.launches[1].order);
               }
               REQUIRE(r.launches.size() >= 3);
               CHECK(sd::kernel_family(r.launches[0].kernel) == "cuda_impl::transpose_matrices");
               CHECK(sd::kernel_family(r.launches[1].kernel) == "cuda_impl::pack_qr_r");
               CHECK(sd::kernel_family(r.launches[2].kernel) == "cuda_impl::pack_qr_q");
             },
             2);  // the result, and the pending info check
    }
    const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({2, 6, 4}, 26);
    CHECK(tx::placement(tx::linalg::qr(a).q).find("cusolver_geqrf_orgqr") != std::string::npos);
    static_assert(tx::runs_on<decltype(tx::linalg::qr(a).q), tx::cuda>);
  };
  run.template operator()<float>(0, "cusolverDnSorgqr");
  run.template operator()<double>(1, "cusolverDnDorgqr");
  // an empty batch and empty matrices: no cuSOLVER call
  const tx::tensor<float, 3, tx::cuda> none = tx::random::normal<float, tx::cuda>({0, 4, 3}, 27);
  const tx::tensor<float, 3, tx::cuda> empty = tx::random::normal<float, tx::cuda>({2, 0, 3}, 28);
  const sd::scope s;
  tx::tensor<float, 3, tx::cuda> r0 = tx::linalg::qr(none).r;
  tx::tensor<float, 3, tx::cuda> q1 = tx::linalg::qr(empty).q;
  CHECK(s.taken().solver_calls.empty());
  CHECK(r0.shape() == tx::shape_t<3>{0, 3, 3});
  CHECK(q1.shape() == tx::shape_t<3>{2, 0, 0});
}

TEST_CASE("cuda svd and svdvals: gesvd (64-bit) per matrix of the tall column-major layout, one packing kernel, no wait") {
  auto run = [&]<class T>(int type) {
    for (const auto& shape : {std::pair<tx::index_t, tx::index_t>{9, 5}, {5, 9}, {6, 6}}) {
      const tx::index_t m = shape.first, n = shape.second, k = std::min(m, n), p = std::max(m, n);
      const bool tall = m > n;  // transposed to columns; otherwise A's memory is the tall Aᵀ
      const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, m, n}, 29);
      auto check_calls = [&](const sd::record& r, char jobu, char jobvt, bool vectors) {
        CHECK(calls_named(r, "cusolverDnXgesvd_bufferSize") == 1);
        CHECK(calls_named(r, "cusolverDnXgesvd") == 4);
        CHECK(r.solver_calls.size() == 5);
        for (const auto& c : r.solver_calls) {
          CHECK(c.m == p);  // gesvd takes m >= n only
          CHECK(c.n == k);
          CHECK(c.ldu == p);
          CHECK(c.type == type);
          CHECK((c.jobu == jobu && c.jobvt == jobvt && c.vectors == vectors));
          if (c.function == "cusolverDnXgesvd") CHECK(c.workspace > 0);
        }
        CHECK(launches_of(r, "cuda_impl::transpose_matrices") == (tall ? 1u : 0u));
        CHECK(r.copies_of(sd::copy_kind::device_to_device) == (tall ? 0u : 1u));  // gesvd destroys its input
      };
      for (const bool full : {false, true}) {
        INFO("type " << type << ", " << m << " x " << n << (full ? ", full" : ""));
        steady([&] { return tx::linalg::svd(a, full).s; },
               [&](const sd::record& r) {
                 check_calls(r, full ? 'A' : 'S', 'S', true);
                 CHECK(launches_of(r, "cuda_impl::pack_svd") == 1);
               },
               2);  // the result, and the pending info check
      }
      INFO("svdvals, type " << type << ", " << m << " x " << n);
      steady([&] { return tx::linalg::svdvals(a); },
             [&](const sd::record& r) {
               check_calls(r, 'N', 'N', false);
               CHECK(r.launches.size() == (tall ? 1u : 0u));  // the values straight into the result
             },
             2);
    }
    const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({2, 6, 4}, 30);
    CHECK(tx::placement(tx::linalg::svd(a).u).find("cusolver_gesvd") != std::string::npos);
    CHECK(tx::placement(tx::linalg::svdvals(a)).find("cusolver_gesvd_values") != std::string::npos);
    static_assert(tx::runs_on<decltype(tx::linalg::svd(a).vh), tx::cuda>);
    static_assert(tx::runs_on<decltype(tx::linalg::svdvals(a)), tx::cuda>);
    // matrix_norm's nuc and two are reductions of svdvals: on cuda now too
    static_assert(tx::runs_on<decltype(tx::linalg::matrix_norm(a, tx::linalg::nuc)), tx::cuda>);
    static_assert(tx::runs_on<decltype(tx::linalg::matrix_norm(a, tx::linalg::two)), tx::cuda>);
    CHECK(tx::placement(tx::linalg::matrix_norm(a, tx::linalg::two)).find("cusolver_gesvd_values") != std::string::npos);
  };
  run.template operator()<float>(0);
  run.template operator()<double>(1);
  // an empty batch: nothing; empty matrices with full matrices: no cuSOLVER call, the kernel writes the identities
  const tx::tensor<float, 3, tx::cuda> none = tx::random::normal<float, tx::cuda>({0, 4, 3}, 31);
  const tx::tensor<float, 3, tx::cuda> empty = tx::random::normal<float, tx::cuda>({2, 0, 3}, 32);
  const sd::scope s;
  tx::tensor<float, 2, tx::cuda> v0 = tx::linalg::svdvals(none);
  tx::tensor<float, 2, tx::cuda> v1 = tx::linalg::svdvals(empty);
  tx::tensor<float, 3, tx::cuda> u0 = tx::linalg::svd(none).u;
  const auto r = s.taken();
  CHECK(r.solver_calls.empty());
  CHECK(r.launches.size() <= 1);  // at most u's copy out of the (empty) packed value
  CHECK((v0.size() == 0 && v1.size() == 0 && u0.size() == 0));
  const sd::scope e;
  tx::tensor<float, 3, tx::cuda> vh = tx::linalg::svd(empty, true).vh;
  const auto re = e.taken();
  CHECK(re.solver_calls.empty());
  CHECK(launches_of(re, "cuda_impl::pack_svd") == 1);
  CHECK(vh.shape() == tx::shape_t<3>{2, 3, 3});
}

TEST_CASE("cuda svdvals: a failing matrix is a linalg_error at the next copy to the host") {
  const tx::tensor<double, 3, tx::cuda> a = tx::random::normal<double, tx::cuda>({3, 4, 6}, 33);
  sd::fail_solver_call(1, 2);  // the second gesvd: two superdiagonals did not converge
  tx::tensor<double, 2, tx::cuda> s = tx::linalg::svdvals(a);
  try {
    (void)tx::to_host(s);
    FAIL("no linalg_error");
  } catch (const tx::linalg_error& e) {
    CHECK(e.op_name == "svdvals");
    CHECK(e.batch_index == 1);
    CHECK(e.library_info == 2);
    CHECK(std::string(e.what()).find("did not converge") != std::string::npos);
  }
  CHECK_NOTHROW((void)tx::to_host(s));  // reported once
  forget_injected_infos();
}

TEST_CASE("cuda lstsq: gesvd per matrix, then Uᵀ B, the singular value division and V C on one stream, no wait") {
  auto run = [&]<class T>(int type) {
    const int compute = type == 0 ? 68 : 70;  // CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F
    const tx::index_t k = 3;
    for (const auto& shape : {std::pair<tx::index_t, tx::index_t>{9, 5}, {5, 9}, {6, 6}}) {
      const tx::index_t m = shape.first, n = shape.second, r = std::min(m, n), p = std::max(m, n);
      const bool tall = m > n;  // gesvd's M is A to columns (U = U', V = VT'ᵀ); else A's memory, Aᵀ (U = VT'ᵀ, V = U')
      INFO("type " << type << ", " << m << " x " << n);
      const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, m, n}, 34);
      const tx::tensor<T, 3, tx::cuda> b = tx::random::normal<T, tx::cuda>({4, m, k}, 35);
      const cutest::tf32_scope tf32(true);  // the solver's products stay full precision whatever matmul may use
      steady([&] { return tx::linalg::lstsq(a, b); },
             [&](const sd::record& rec) {
               CHECK(calls_named(rec, "cusolverDnXgesvd_bufferSize") == 1);
               CHECK(calls_named(rec, "cusolverDnXgesvd") == 4);
               CHECK(rec.solver_calls.size() == 5);
               for (const auto& c : rec.solver_calls) {
                 CHECK((c.m == p && c.n == r && c.ldu == p && c.type == type));
                 CHECK((c.jobu == 'S' && c.jobvt == 'S' && c.vectors));
               }
               REQUIRE(rec.gemms.size() == 2);
               const sd::gemm& first = rec.gemms[0];  // Cᵀ = Bᵀ U: k x r, summing m
               CHECK((first.m == k && first.n == r && first.k == m && first.batch == 4));
               CHECK((first.transa == 0 && first.transb == (tall ? 0 : 1)));
               const sd::gemm& second = rec.gemms[1];  // Xᵀ = Cᵀ Vᵀ: k x n, summing r
               CHECK((second.m == k && second.n == n && second.k == r && second.batch == 4));
               CHECK((second.transa == 0 && second.transb == (tall ? 0 : 1)));
               for (const auto& g : rec.gemms) {
                 CHECK((g.a_type == type && g.b_type == type && g.c_type == type && g.compute_type == compute));
                 CHECK(g.stream == rec.solver_calls.front().stream);
               }
               CHECK(launches_of(rec, "cuda_impl::transpose_matrices") == (tall ? 1u : 0u));
               REQUIRE(launches_of(rec, "cuda_impl::divide_by_singular_values") == 1);
               CHECK(rec.launches.size() == (tall ? 2u : 1u));
               // in stream order: every gesvd, Uᵀ B, the division, V C
               const auto& divide = rec.launches.back();
               CHECK(rec.solver_calls.back().order < first.order);
               CHECK(first.order < divide.order);
               CHECK(divide.order < second.order);
               CHECK(divide.stream == first.stream);
             },
             2);  // the result, and the pending info check
    }
    const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({2, 6, 4}, 36);
    const tx::tensor<T, 3, tx::cuda> b = tx::random::normal<T, tx::cuda>({2, 6, 1}, 37);
    CHECK(tx::placement(tx::linalg::lstsq(a, b)).find("cusolver_gesvd_lstsq") != std::string::npos);
    static_assert(tx::runs_on<decltype(tx::linalg::lstsq(a, b)), tx::cuda>);
  };
  run.template operator()<float>(0);
  run.template operator()<double>(1);
}

TEST_CASE("cuda lstsq of empty batches and matrices: no cuSOLVER call; no equations (m == 0) is a zero X") {
  const sd::scope s;
  tx::tensor<float, 3, tx::cuda> x0 =
      tx::linalg::lstsq(tx::tensor<float, 3, tx::cuda>({0, 4, 3}), tx::tensor<float, 3, tx::cuda>({0, 4, 2}));
  tx::tensor<float, 3, tx::cuda> x1 =
      tx::linalg::lstsq(tx::tensor<float, 3, tx::cuda>({2, 4, 0}), tx::tensor<float, 3, tx::cuda>({2, 4, 2}));
  tx::tensor<float, 3, tx::cuda> x2 =
      tx::linalg::lstsq(tx::tensor<float, 3, tx::cuda>({2, 4, 3}), tx::tensor<float, 3, tx::cuda>({2, 4, 0}));
  const auto r = s.taken();
  CHECK(r.solver_calls.empty());
  CHECK(r.gemms.empty());
  CHECK(launches_of(r, "cuda_impl::divide_by_singular_values") == 0);
  CHECK(x0.shape() == tx::shape_t<3>{0, 3, 2});
  CHECK(x1.shape() == tx::shape_t<3>{2, 0, 2});
  CHECK(x2.shape() == tx::shape_t<3>{2, 3, 0});
  // m == 0: min |0 X - B| is any X, the minimum norm one 0 (the host's too); written by one memset, no factorisation
  const tx::tensor<double, 3, tx::cuda> none_a({2, 0, 3});
  const tx::tensor<double, 3, tx::cuda> none_b({2, 0, 2});
  tx::tensor<double, 3, tx::cuda> junk = tx::random::normal<double, tx::cuda>({2, 3, 2}, 38);
  const sd::scope z;
  junk = tx::linalg::lstsq(none_a, none_b);  // into memory that held normals: the memset must write it
  const auto rz = z.taken();
  CHECK(rz.solver_calls.empty());
  CHECK(rz.gemms.empty());
  CHECK(rz.memsets == 1);
  const auto host = tx::to_host(junk);
  REQUIRE(host.shape() == tx::shape_t<3>{2, 3, 2});
  for (tx::index_t i = 0; i < host.size(); ++i) CHECK(host.data()[i] == 0.0);
}

TEST_CASE("cuda lstsq: its gradient, built from three more lstsq, runs on cuda through the same row") {
  const tx::tensor<double, 3, tx::cuda> a = tx::random::normal<double, tx::cuda>({2, 5, 3}, 41);
  const tx::tensor<double, 3, tx::cuda> b = tx::random::normal<double, tx::cuda>({2, 5, 2}, 42);
  const tx::tensor<double, 3, tx::cuda> w = tx::random::normal<double, tx::cuda>({2, 3, 2}, 43);
  const auto pa = tx::param<struct lstsq_a>(a);
  const auto pb = tx::param<struct lstsq_b>(b);
  const auto grads = tx::grad(tx::sum(tx::linalg::lstsq(pa, pb) * w), pa, pb);
  static_assert(tx::runs_on<std::tuple_element_t<0, std::remove_cvref_t<decltype(grads)>>, tx::cuda>);
  static_assert(tx::runs_on<std::tuple_element_t<1, std::remove_cvref_t<decltype(grads)>>, tx::cuda>);
  const sd::scope s;
  auto [ga, gb] = tx::eval_all(grads);
  const auto r = s.taken();
  INFO(sd::describe(r));
  // the forward X, the rule's Y = lstsq(Aᵀ, g) once per partial (dB's and dA's share nothing), lstsq(A, Y) and
  // lstsq(Aᵀ, X): five evaluations of two matrices each, all through this row
  CHECK(calls_named(r, "cusolverDnXgesvd") == 10);
  CHECK(launches_of(r, "cuda_impl::divide_by_singular_values") == 5);
  CHECK(tx::placement(std::get<0>(grads)).find("cusolver_gesvd_lstsq") != std::string::npos);
  CHECK(r.syncs.empty());
  CHECK(ga.shape() == a.shape());
  CHECK(gb.shape() == b.shape());
}

TEST_CASE("cuda lstsq: an SVD that does not converge is a linalg_error naming lstsq at the next copy to the host") {
  const tx::tensor<float, 3, tx::cuda> a = tx::random::normal<float, tx::cuda>({3, 5, 4}, 39);
  const tx::tensor<float, 3, tx::cuda> b = tx::random::normal<float, tx::cuda>({3, 5, 2}, 40);
  sd::fail_solver_call(2, 3);  // the third gesvd: three superdiagonals did not converge
  tx::tensor<float, 3, tx::cuda> x = tx::linalg::lstsq(a, b);  // no throw: info is not read yet
  try {
    (void)tx::to_host(x);
    FAIL("no linalg_error");
  } catch (const tx::linalg_error& e) {
    CHECK(e.op_name == "lstsq");
    CHECK(e.batch_index == 2);
    CHECK(e.library_info == 3);
    CHECK(std::string(e.what()).find("did not converge") != std::string::npos);
  }
  CHECK_NOTHROW((void)tx::to_host(x));  // reported once
  forget_injected_infos();
}

TEST_CASE("cuda cholesky: placement names cusolver_potrf") {
  const tx::tensor<float, 2, tx::cuda> a = tx::random::normal<float, tx::cuda>({5, 5}, 2);
  const std::string report = tx::placement(tx::linalg::cholesky(a));
  INFO(report);
  CHECK(report.find("cusolver_potrf") != std::string::npos);
  static_assert(tx::runs_on<decltype(tx::linalg::cholesky(a)), tx::cuda>);
}

TEST_CASE("cuda cholesky: a failing matrix is a linalg_error at the next copy to the host") {
  const tx::tensor<double, 3, tx::cuda> a = tx::random::normal<double, tx::cuda>({3, 4, 4}, 3);
  sd::fail_solver_call(2, 3);                                   // the third matrix: "not positive definite at order 3"
  tx::tensor<double, 3, tx::cuda> l = tx::linalg::cholesky(a);  // no throw: info is not read yet
  try {
    (void)tx::to_host(l);
    FAIL("no linalg_error");
  } catch (const tx::linalg_error& e) {
    CHECK(e.op_name == "cholesky");
    CHECK(e.batch_index == 2);
    CHECK(e.library_info == 3);
    CHECK(std::string(e.what()).find("not positive definite") != std::string::npos);
  }
  CHECK_NOTHROW((void)tx::to_host(l));  // reported once
  forget_injected_infos();
}

TEST_CASE("cuda: copying an empty tensor to the host reports a pending failure as any copy does") {
  const tx::tensor<double, 3, tx::cuda> a = tx::random::normal<double, tx::cuda>({2, 3, 3}, 5);
  const tx::tensor<double, 2, tx::cuda> empty = tx::random::normal<double, tx::cuda>({0, 3}, 6);
  sd::fail_solver_call(1, 2);  // the second matrix: not positive definite at order 2
  tx::tensor<double, 3, tx::cuda> l = tx::linalg::cholesky(a);
  CHECK_THROWS_AS((void)tx::to_host(empty), tx::linalg_error);
  CHECK_NOTHROW((void)tx::to_host(l));  // reported once
  forget_injected_infos();
}

TEST_CASE("cuda cholesky of an empty batch: no cuSOLVER call") {
  const tx::tensor<float, 3, tx::cuda> a = tx::random::normal<float, tx::cuda>({0, 3, 3}, 4);
  const sd::scope s;
  tx::tensor<float, 3, tx::cuda> l = tx::linalg::cholesky(a);
  CHECK(s.taken().solver_calls.empty());
  CHECK(l.size() == 0);
}

TEST_CASE("cuda solve: cuSOLVER getrf and transposed getrs per matrix, handle and workspace made once, no wait") {
  steady_solve<float>(0, 3);
  steady_solve<double>(1, 3);
  steady_solve<float>(0, 1);  // one right-hand side: solved in the result itself, no transpose
}

TEST_CASE("cuda slogdet, eigh, eigvalsh: cuSOLVER getrf and syevd per matrix, handle and workspace made once, no wait") {
  steady_slogdet_eigh<float>(0);
  steady_slogdet_eigh<double>(1);
}

TEST_CASE("cuda linalg: placement names the cuSOLVER rows") {
  const tx::tensor<double, 3, tx::cuda> a = tx::random::normal<double, tx::cuda>({2, 5, 5}, 8);
  const tx::tensor<double, 3, tx::cuda> b = tx::random::normal<double, tx::cuda>({2, 5, 2}, 9);
  CHECK(tx::placement(tx::linalg::solve(a, b)).find("cusolver_getrf_getrs") != std::string::npos);
  CHECK(tx::placement(tx::linalg::slogdet(a).logabsdet).find("cusolver_getrf_det") != std::string::npos);
  CHECK(tx::placement(tx::linalg::eigh(a).eigenvectors).find("cusolver_syevd") != std::string::npos);
  CHECK(tx::placement(tx::linalg::eigvalsh(a)).find("cusolver_syevd_values") != std::string::npos);
  static_assert(tx::runs_on<decltype(tx::linalg::solve(a, b)), tx::cuda>);
  static_assert(tx::runs_on<decltype(tx::linalg::inv(a)), tx::cuda>);  // solve(a, I)
  static_assert(tx::runs_on<decltype(tx::linalg::det(a)), tx::cuda>);
  static_assert(tx::runs_on<decltype(tx::linalg::eigh(a).eigenvectors), tx::cuda>);
  static_assert(tx::runs_on<decltype(tx::linalg::eigvalsh(a)), tx::cuda>);
  static_assert(tx::runs_on<decltype(tx::linalg::lu_factor(a).lu), tx::cuda>);
  CHECK(tx::placement(tx::linalg::lu_factor(a).lu).find("cusolver_getrf") != std::string::npos);
}

TEST_CASE("cuda solve and eigh: a failing matrix is a linalg_error at the next copy to the host") {
  const tx::tensor<double, 3, tx::cuda> a = tx::random::normal<double, tx::cuda>({3, 4, 4}, 10);
  const tx::tensor<double, 3, tx::cuda> b = tx::random::normal<double, tx::cuda>({3, 4, 2}, 11);
  auto expect_error = [](const auto& result, const char* op, const char* why) {
    try {
      (void)tx::to_host(result);
      FAIL("no linalg_error");
    } catch (const tx::linalg_error& e) {
      CHECK(e.op_name == op);
      CHECK(e.batch_index == 1);
      CHECK(e.library_info == 2);
      CHECK(std::string(e.what()).find(why) != std::string::npos);
    }
    CHECK_NOTHROW((void)tx::to_host(result));  // reported once
  };
  sd::fail_solver_call(1, 2);  // the second getrf: an exactly zero pivot at order 2
  tx::tensor<double, 3, tx::cuda> x = tx::linalg::solve(a, b);
  expect_error(x, "solve", "singular");
  sd::fail_solver_call(1, 2);  // the second syevd did not converge
  tx::tensor<double, 2, tx::cuda> w = tx::linalg::eigvalsh(a);
  expect_error(w, "eigvalsh", "did not converge");
  sd::fail_solver_call(1, 2);
  tx::tensor<double, 2, tx::cuda> we = tx::linalg::eigh(a).eigenvalues;
  expect_error(we, "eigh", "did not converge");
  forget_injected_infos();
}

TEST_CASE("cuda slogdet of a singular matrix: no error (the kernel writes sign 0, -inf)") {
  const tx::tensor<float, 3, tx::cuda> a = tx::random::normal<float, tx::cuda>({3, 4, 4}, 12);
  sd::fail_solver_call(1, 2);
  tx::tensor<float, 1, tx::cuda> sign = tx::linalg::slogdet(a).sign;
  const sd::scope h;
  CHECK_NOTHROW((void)tx::to_host(sign));
  CHECK(h.taken().syncs.size() == 1);  // no info check pending
  forget_injected_infos();
}

TEST_CASE("cuda lu_factor and lu_solve: getrf of A's columns and a packing kernel; getrs (N) with the pivots widened") {
  for (int type : {0, 1}) {
    INFO("type " << type);
    auto run = [&]<class T>() {
      const tx::tensor<T, 3, tx::cuda> a = tx::random::normal<T, tx::cuda>({4, 8, 8}, 17);
      const tx::tensor<T, 3, tx::cuda> b = tx::random::normal<T, tx::cuda>({4, 8, 3}, 18);
      steady([&] { return tx::linalg::lu_factor(a).lu; },
             [&](const sd::record& r) {
               CHECK(calls_named(r, "cusolverDnXgetrf_bufferSize") == 1);
               CHECK(calls_named(r, "cusolverDnXgetrf") == 4);
               CHECK(r.solver_calls.size() == 5);
               for (const auto& c : r.solver_calls) CHECK((c.n == 8 && c.type == type));
               CHECK(launches_of(r, "cuda_impl::transpose_matrices") == 1);
               CHECK(launches_of(r, "cuda_impl::pack_lu") == 1);
             },
             2);
      const tx::tensor<T, 3, tx::cuda> lu = tx::linalg::lu_factor(a).lu;
      const tx::tensor<std::int32_t, 2, tx::cuda> pivots = tx::linalg::lu_factor(a).pivots;
      (void)tx::to_host(pivots);  // lu_factor's info checks
      steady([&] { return tx::linalg::lu_solve(lu, pivots, b); },
             [&](const sd::record& r) {
               CHECK(calls_named(r, "cusolverDnXgetrs") == 4);
               CHECK(r.solver_calls.size() == 4);
               for (const auto& c : r.solver_calls) CHECK((c.n == 8 && c.type == type && c.trans == 0 && c.nrhs == 3 && c.pivots));
               CHECK(launches_of(r, "cuda_impl::transpose_matrices") == 3);  // LU and B to columns, X back
               CHECK(launches_of(r, "cuda_impl::widen_pivots") == 1);
             },
             2);
    };
    if (type == 0) run.template operator()<float>();
    else run.template operator()<double>();
  }
}

TEST_CASE("cuda linalg of empty batches and empty matrices: no cuSOLVER call") {
  const tx::tensor<float, 3, tx::cuda> none = tx::random::normal<float, tx::cuda>({0, 3, 3}, 13);
  const tx::tensor<float, 3, tx::cuda> none_b = tx::random::normal<float, tx::cuda>({0, 3, 2}, 14);
  const tx::tensor<float, 3, tx::cuda> empty = tx::random::normal<float, tx::cuda>({2, 0, 0}, 15);
  const tx::tensor<float, 3, tx::cuda> empty_b = tx::random::normal<float, tx::cuda>({2, 0, 3}, 16);
  const sd::scope s;
  tx::tensor<float, 3, tx::cuda> x = tx::linalg::solve(none, none_b);
  tx::tensor<float, 3, tx::cuda> y = tx::linalg::solve(empty, empty_b);
  tx::tensor<float, 2, tx::cuda> v = tx::linalg::eigh(empty).eigenvalues;
  tx::tensor<float, 2, tx::cuda> w = tx::linalg::eigvalsh(none);
  tx::tensor<float, 1, tx::cuda> d = tx::linalg::slogdet(none).sign;
  const auto r = s.taken();
  CHECK(r.solver_calls.empty());
  CHECK(launches_of(r, "cuda_impl::slogdet_from_lu") == 0);
  CHECK(x.size() == 0);
  CHECK(y.size() == 0);
  CHECK(v.size() == 0);
  CHECK(w.size() == 0);
  CHECK(d.size() == 0);
  // slogdet of empty matrices: no cuSOLVER call, the kernel writes [1, 0] (det of an empty matrix is 1)
  const sd::scope e;
  tx::tensor<float, 1, tx::cuda> sign = tx::linalg::slogdet(empty).sign;
  const auto re = e.taken();
  CHECK(re.solver_calls.empty());
  CHECK(launches_of(re, "cuda_impl::slogdet_from_lu") == 1);
  CHECK(sign.size() == 2);
}
