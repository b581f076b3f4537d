// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::linalg::cholesky on cuda, counted on the stand-in (no factorisation runs: structure only): a size query and one
// cusolverDnXpotrf per matrix (upper, as a row-major lower factor is column-major upper) and one kernel zeroing the
// strict upper triangles; the handle made once; no allocation and no host wait after the first evaluation; `info`
// read at the next copy to the host, where a failing matrix becomes tx::linalg_error naming op, batch index and info.
#include <doctest/doctest.h>

#include <texpr/linalg.hpp>

#include <cstddef>
#include <string>

#include "cuda_standin/standin.hpp"

namespace tx = texpr;
namespace sd = texpr_standin;

namespace {

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

}  // namespace

TEST_CASE("cuda cholesky: cuSOLVER potrf per matrix, handle and workspace made once, no wait") {
  const auto f = steady_cholesky<float>(0);   // CUDA_R_32F
  const auto d = steady_cholesky<double>(1);  // CUDA_R_64F
  CHECK(f.solver_calls.size() == d.solver_calls.size());
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
}

TEST_CASE("cuda cholesky of an empty batch: no cuSOLVER call") {
  const tx::tensor<float, 3, tx::cuda> a = tx::random::normal<float, tx::cuda>({0, 3, 3}, 4);
  const sd::scope s;
  tx::tensor<float, 3, tx::cuda> l = tx::linalg::cholesky(a);
  CHECK(s.taken().solver_calls.empty());
  CHECK(l.size() == 0);
}
