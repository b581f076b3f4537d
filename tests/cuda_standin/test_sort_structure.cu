// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Scans, sorts and top-k on cuda, counted on the stand-in: what each launches (texpr's key and result kernels around
// CUB's radix sort; one kernel per scan), no allocation after the first evaluation (keys, payloads and CUB's
// storage come from texpr's device cache), never a host wait, the kernel log equal to the placement plan, and a
// sort captured into a CUDA graph with nothing refused.
#include <doctest/doctest.h>

#include <texpr/sort.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuda_standin/standin.hpp"

namespace tx = texpr;
namespace sd = texpr_standin;

namespace {

/// Runs make() three times: the first may allocate, the others must not; none may wait; the log follows the plan.
/// Returns the launches of the last run.
template <class Make> sd::record steady(Make make) {
  sd::record last;
  for (int i = 0; i < 3; ++i) {
    INFO("evaluation " << i);
    const auto graph = make();
    const auto planned = tx::planned_kernels(graph);
    tx::kernel_log log;
    const sd::scope s;
    const auto result = tx::eval_all(graph);
    last = s.taken();
    (void)result;
    CHECK(last.syncs.empty());
    if (i > 0) CHECK(last.allocations.empty());
    REQUIRE(planned.size() == log.entries().size());
    for (std::size_t k = 0; k != planned.size(); ++k) CHECK(planned[k].implementation == log.entries()[k].implementation);
  }
  return last;
}

/// The sorted parameter's tag (at namespace scope: nvcc's stub cannot name a tag declared in a lambda).
struct sorted_w {};

std::size_t launches_named(const sd::record& r, const std::string& part) {
  std::size_t n = 0;
  for (const auto& l : r.launches) n += l.kernel.find(part) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("cuda scans: one kernel each, nothing allocated, no wait") {
  const tx::tensor<float, 2, tx::cuda> x = tx::random::normal<float, tx::cuda>({64, 300}, 1);
  const auto r = steady([&] { return tx::cumsum(x * 2.0f, 1); });
  MESSAGE(sd::describe_launches(r));
  CHECK(r.launches.size() == 1);
  CHECK(launches_named(r, "scan_by_block") == 1);
  const auto c = steady([&] { return tx::logcumsumexp(x, 0, tx::reversed); });
  CHECK(c.launches.size() == 1);
}

TEST_CASE("cuda sorts: keys, CUB's segmented radix sort and the result, no allocation after the first, no wait") {
  const tx::tensor<float, 2, tx::cuda> x = tx::random::normal<float, tx::cuda>({64, 300}, 2);
  const auto r = steady([&] { return tx::sort(x + 1.0f, 1); });
  MESSAGE(sd::describe_launches(r));
  CHECK(launches_named(r, "order_keys") == 1);
  CHECK(launches_named(r, "write_first") == 1);
  CHECK(launches_named(r, "DeviceSegmentedRadixSortKernel") >= 1);
  CHECK(r.memsets == 0);
  // One line: CUB's device-wide radix sort instead.
  const tx::tensor<double, 1, tx::cuda> y = tx::random::normal<double, tx::cuda>({5000}, 3);
  const auto one = steady([&] { return tx::argsort(y, 0, true); });
  MESSAGE(sd::describe_launches(one));
  CHECK(launches_named(one, "order_keys") == 1);
  CHECK(launches_named(one, "DeviceSegmentedRadixSortKernel") == 0);
  CHECK(one.launches.size() >= 3);
}

TEST_CASE("cuda topk: one selection serves the values and the indices") {
  const tx::tensor<float, 2, tx::cuda> x = tx::random::normal<float, tx::cuda>({32, 1000}, 4);
  const auto r = steady([&] {
    auto [values, indices] = tx::topk(x * 3.0f, 8);
    return std::make_tuple(values, indices);
  });
  MESSAGE(sd::describe_launches(r));
  CHECK(launches_named(r, "order_keys") == 1);   // one sort for both results
  CHECK(launches_named(r, "write_first") == 1);
}

TEST_CASE("cuda sort's gradient: one argsort and one scatter, nothing allocated after the first step, no wait") {
  tx::tensor<float, 2, tx::cuda> w = tx::random::normal<float, tx::cuda>({16, 50}, 5);
  const auto r = steady([&] {
    auto p = tx::param<sorted_w>(w);
    auto s = tx::share(tx::sort(p, 1));
    return tx::value_and_grad(tx::sum(s * s), p);
  });
  MESSAGE(sd::describe_launches(r));
  CHECK(launches_named(r, "order_keys") == 2);  // the forward sort, the backward's argsort
  CHECK(launches_named(r, "scatter_positions") == 1);
}

TEST_CASE("a sort captured into a CUDA graph: nothing refused, no allocation, no wait") {
  const tx::tensor<float, 2, tx::cuda> x = tx::random::normal<float, tx::cuda>({64, 300}, 6);
  const auto graph = tx::sort(x, 1, true);
  static_assert(tx::capturable<decltype(graph)>);
  for (int i = 0; i < 2; ++i) (void)tx::eval(graph);  // warm texpr's cache on the capture's stream
  const sd::scope rec;
  const auto step = tx::capture_step(graph);
  const auto captured = rec.taken();
  MESSAGE(sd::describe(captured));
  REQUIRE(captured.captures.size() == 1);
  CHECK_FALSE(captured.captures[0].invalidated);
  CHECK(captured.allocations.empty());
  CHECK(captured.syncs.empty());
  CHECK(launches_named(captured, "order_keys") == 1);
  step.replay();
}
