// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sorting on the host beyond the registry's row checks (tests/core/registry_checks.hpp): NumPy's stable orders
// (committed fixture tests/core/fixtures/sort.npz from numpy_sort.py: NaN, -0, +-inf, integer extremes, many
// ties), top-k against them, the API's errors, empty extents, a fused operand read once, a strided destination,
// tx::placement and the kernel log, and the long-line path (radix passes split across the pool) at 1 and 2 threads
// against std::stable_sort.
#include "core/support.hpp"

#include <texpr/interop/npz.hpp>
#include <texpr/sort.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

struct thread_count {
  int old = tx::num_threads();
  explicit thread_count(int n) { tx::set_num_threads(n); }
  ~thread_count() { tx::set_num_threads(old); }
};

std::string fixture() {
  const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
  REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
  return std::string(dir) + "/sort.npz";
}

/// Bitwise equality of two tensors (NaN payloads and the sign of zero included).
template <class T, std::size_t R> bool same_bits(const tx::tensor<T, R>& a, const tx::tensor<T, R>& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), sizeof(T) * static_cast<std::size_t>(a.size())) == 0;
}

template <class T> void check_against_numpy(const tx::npz_archive& f, const std::string& dtype) {
  const auto x = f.get<T, 2>("x_" + dtype);
  for (int axis = 0; axis < 2; ++axis) {
    INFO(dtype << " axis " << axis);
    const std::string a = std::to_string(axis);
    CHECK(same_bits(tx::eval(tx::sort(x, axis)), f.get<T, 2>("sort_" + dtype + "_" + a)));
    CHECK(same_bits(tx::eval(tx::argsort(x, axis)), f.get<std::int64_t, 2>("argsort_" + dtype + "_" + a)));
    CHECK(same_bits(tx::eval(tx::sort(x, axis - 2, true)), f.get<T, 2>("sortdesc_" + dtype + "_" + a)));
    CHECK(same_bits(tx::eval(tx::argsort(x, axis, true)), f.get<std::int64_t, 2>("argsortdesc_" + dtype + "_" + a)));
    // top-k: the first k of the descending (largest) and ascending (smallest) orders
    const auto desc = f.get<std::int64_t, 2>("argsortdesc_" + dtype + "_" + a);
    const auto asc = f.get<std::int64_t, 2>("argsort_" + dtype + "_" + a);
    for (const tx::index_t k : {tx::index_t{0}, tx::index_t{1}, tx::index_t{3}, x.shape()[static_cast<std::size_t>(axis)]}) {
      for (const bool largest : {true, false}) {
        INFO("k " << k << (largest ? " largest" : " smallest"));
        auto [v, i] = tx::topk(x, k, axis, largest);
        const auto [values, positions] = tx::eval_all(v, i);
        const auto& order = largest ? desc : asc;
        tx::shape_t<2> s = x.shape();
        s[static_cast<std::size_t>(axis)] = k;
        REQUIRE(positions.shape() == s);
        REQUIRE(values.shape() == s);
        bool ok = true;
        for (tx::index_t r = 0; r < s[0]; ++r)
          for (tx::index_t c = 0; c < s[1]; ++c) {
            const std::int64_t want = order(r, c);
            const std::int64_t got = positions(r, c);
            const T got_value = values(r, c);
            const T want_value = axis == 0 ? x(want, c) : x(r, want);
            ok = ok && got == want && std::memcmp(&got_value, &want_value, sizeof(T)) == 0;
          }
        CHECK(ok);
      }
    }
  }
}

}  // namespace

TEST_CASE("sort, argsort and topk: NumPy's stable orders, NaN, -0, infinities and integer extremes") {
  const auto f = tx::load_npz(fixture());
  check_against_numpy<float>(f, "float32");
  check_against_numpy<double>(f, "float64");
  check_against_numpy<std::int32_t>(f, "int32");
  check_against_numpy<std::int64_t>(f, "int64");
}

TEST_CASE("sort: errors name the op, the axis, k and the extent") {
  const tx::tensor<float, 2> x({3, 4});
  CHECK_THROWS_WITH_AS(tx::sort(x, 2), doctest::Contains("axis 2 is out of range for sort"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::argsort(x, -3), doctest::Contains("axis -3 is out of range for argsort"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::topk(x, 5, 1), doctest::Contains("topk of k = 5 along axis 1 of extent 4"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::topk(x, -1), doctest::Contains("k must be in [0, extent]"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::topk(x, 4, 0), doctest::Contains("test_sort.cpp"), tx::shape_error);  // the caller's line
}

TEST_CASE("sort: empty extents, one element, and every line shorter than the insertion limit") {
  const tx::tensor<float, 2> empty_lines({0, 5}), empty_axis({3, 0});
  CHECK(tx::eval(tx::sort(empty_lines, 1)).shape() == tx::shape_t<2>{0, 5});
  CHECK(tx::eval(tx::argsort(empty_axis, 1)).shape() == tx::shape_t<2>{3, 0});
  auto [v, i] = tx::topk(empty_axis, 0, 1);
  CHECK(tx::eval(v).shape() == tx::shape_t<2>{3, 0});
  CHECK(tx::eval(i).shape() == tx::shape_t<2>{3, 0});
  const tx::tensor<std::int64_t, 1> one({1}, {7});
  CHECK(tx::eval(tx::sort(one)).data()[0] == 7);
  CHECK(tx::eval(tx::argsort(one)).data()[0] == 0);
}

TEST_CASE("sort reads an elementwise operand fused (one kernel, no temporary) and writes a strided destination") {
  const tx::tensor<float, 2> x = tx::random::normal<float>({6, 50}, 11);
  tx::kernel_log log;
  const tx::tensor<float, 2> s = tx::sort(x * 2.0f - 1.0f, 1, true);
  CHECK(log.count("radix_sort") == 1);
  CHECK(log.entries().size() == 1);
  const std::string plan = tx::placement(tx::sort(x * 2.0f - 1.0f, 1, true));
  CHECK(plan.find("sort") != std::string::npos);
  CHECK(plan.find("radix_sort") != std::string::npos);
  CHECK(plan.find("(in the pass above)") != std::string::npos);
  for (tx::index_t r = 0; r < 6; ++r)
    for (tx::index_t c = 1; c < 50; ++c) CHECK(s(r, c - 1) >= s(r, c));
  // into a transposed view: the computed result is copied through a temporary
  tx::tensor<float, 2> t({50, 6});
  tx::transpose(t) = tx::sort(x, 1);
  for (tx::index_t r = 0; r < 6; ++r)
    for (tx::index_t c = 1; c < 50; ++c) CHECK(t(c - 1, r) <= t(c, r));
}

TEST_CASE("topk: one selection for both results; the operand is shared, not computed twice") {
  const tx::tensor<float, 2> x = tx::random::normal<float>({4, 1000}, 12);
  auto [v, i] = tx::topk(tx::exp(x), 8);
  tx::kernel_log log;
  const auto [values, positions] = tx::eval_all(v, i);
  CHECK(log.count("top_k_select") == 1);
  CHECK(log.count("fused_elementwise") == 2);  // exp(x) once, then the values read at the positions
  const tx::tensor<float, 2> e = tx::exp(x);  // (texpr's exp, which may differ from std::exp in the last bit)
  for (tx::index_t r = 0; r < 4; ++r)
    for (tx::index_t j = 0; j < 8; ++j) {
      CHECK(values(r, j) == e(r, positions(r, j)));
      if (j > 0) CHECK(values(r, j - 1) >= values(r, j));
    }
}

TEST_CASE("sort: the long-line path (passes split across the pool) against std::stable_sort, at 1 and 2 threads") {
  const tx::index_t n = (1 << 18) + 77;
  tx::tensor<double, 1> x = tx::random::normal<double>({n}, 13, 0.0, 100.0);
  for (tx::index_t i = 0; i < n; i += 7) x(i) = std::round(x(i));  // ties
  std::vector<std::int64_t> want(static_cast<std::size_t>(n));
  for (tx::index_t i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = i;
  std::stable_sort(want.begin(), want.end(), [&](std::int64_t a, std::int64_t b) { return x(a) > x(b); });
  for (const int threads : {1, 2}) {
    const thread_count tc(threads);
    INFO(threads << " threads");
    const tx::tensor<std::int64_t, 1> got = tx::argsort(x, 0, true);
    CHECK(std::equal(want.begin(), want.end(), got.data()));
    const tx::tensor<double, 1> sorted = tx::sort(x, 0, true);
    bool ok = true;
    for (tx::index_t i = 0; i < n; ++i) ok = ok && sorted(i) == x(want[static_cast<std::size_t>(i)]);
    CHECK(ok);
  }
}
