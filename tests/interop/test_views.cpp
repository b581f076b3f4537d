// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::as_view over contiguous host ranges (include/texpr/interop/ranges.hpp): std::span, std::vector, std::array and
// C arrays, rank 1 or shaped, const ranges giving const views, size errors, expressions through the views.
#include "core/support.hpp"

#include <texpr/interop/ranges.hpp>

#include <array>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

template <class R> using view_of = decltype(tx::as_view(std::declval<R>()));

// What as_view accepts, and the view types it gives: const access gives const elements.
static_assert(std::is_same_v<view_of<std::vector<float>&>, tx::view<float, 1, tx::host>>);
static_assert(std::is_same_v<view_of<const std::vector<float>&>, tx::view<const float, 1, tx::host>>);
static_assert(std::is_same_v<view_of<std::span<const double>>, tx::view<const double, 1, tx::host>>);
static_assert(std::is_same_v<view_of<const std::span<int>&>, tx::view<int, 1, tx::host>>);  // span constness is shallow
static_assert(std::is_same_v<view_of<std::array<std::int64_t, 4>&>, tx::view<std::int64_t, 1, tx::host>>);
static_assert(std::is_same_v<view_of<const std::array<std::int64_t, 4>&>, tx::view<const std::int64_t, 1, tx::host>>);
static_assert(std::is_same_v<view_of<float (&)[3]>, tx::view<float, 1, tx::host>>);
static_assert(std::is_same_v<decltype(tx::as_view(std::declval<const std::vector<float>&>(), {2, 3})),
                             tx::view<const float, 2, tx::host>>);
static_assert(!tx::contiguous_sized_range<std::vector<bool>>);  // packed bits: no element memory to view

template <class R>
concept viewable = requires(R&& r) { tx::as_view(std::forward<R>(r)); };
static_assert(viewable<std::vector<float>&> && !viewable<int> && !viewable<std::vector<bool>&>);

} // namespace

TEST_CASE("as_view of a std::vector: writes through the view show in the vector") {
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  auto a = tx::as_view(v);
  CHECK(a.shape() == tx::shape_t<1>{6});
  CHECK(a.data() == v.data());
  CHECK(a.strides() == tx::shape_t<1>{1});
  a(2) = 30.0f;
  CHECK(v[2] == 30.0f);
  auto m = tx::as_view(v, {2, 3});
  CHECK(m.shape() == tx::shape_t<2>{2, 3});
  CHECK(m(1, 0) == 4.0f);
  m(0, 1) = -2.0f;
  CHECK(v[1] == -2.0f);
  auto m3 = tx::as_view(v, tx::shape_t<3>{1, 3, 2});
  CHECK(m3(0, 2, 1) == 6.0f);
}

TEST_CASE("as_view of spans, std::array and C arrays") {
  std::array<double, 4> arr = {1, 2, 3, 4};
  tx::as_view(arr)(3) = 40;
  CHECK(arr[3] == 40);
  std::span<double> s(arr.data() + 1, 2);
  auto sv = tx::as_view(s);
  CHECK(sv.shape() == tx::shape_t<1>{2});
  CHECK(sv.data() == arr.data() + 1);
  CHECK(sv(0) == 2);
  std::int32_t c[6] = {0, 1, 2, 3, 4, 5};
  auto cv = tx::as_view(c, {3, 2});
  CHECK(cv(2, 1) == 5);
  cv(0, 0) = 7;
  CHECK(c[0] == 7);
  std::vector<float> empty;
  auto ev = tx::as_view(empty);
  CHECK(ev.size() == 0);
  CHECK(tx::as_view(empty, {0, 3}).shape() == tx::shape_t<2>{0, 3});
}

TEST_CASE("as_view of a const range is read-only") {
  const std::vector<float> v = {1, 2, 3, 4};
  auto a = tx::as_view(v);
  static_assert(std::is_same_v<decltype(a), tx::view<const float, 1, tx::host>>);
  static_assert(!decltype(a)::writable);
  CHECK(a(3) == 4.0f);
  std::span<const float> s(v);
  static_assert(std::is_same_v<decltype(tx::as_view(s, {2, 2})), tx::view<const float, 2, tx::host>>);
  tx::tensor<float, 2> t = tx::as_view(s, {2, 2}) * 2.0f;
  CHECK(t(1, 1) == 8.0f);
}

TEST_CASE("as_view with a shape whose size differs from the range's: shape_error naming both") {
  std::vector<float> v(5);
  CHECK_THROWS_WITH_AS(tx::as_view(v, {2, 3}),
                       doctest::Contains("a range of 5 elements cannot be viewed with shape (2, 3) (6 elements)"),
                       tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::as_view(v, {2, 3}), doctest::Contains("test_views.cpp:"), tx::shape_error);  // caller's line
  CHECK_THROWS_WITH_AS(tx::as_view(v, {-1, -5}), doctest::Contains("negative extent in shape (-1, -5)"),
                       tx::shape_error);
  std::array<int, 4> arr{};
  CHECK_THROWS_AS(tx::as_view(arr, tx::shape_t<1>{5}), tx::shape_error);
}

TEST_CASE("views of ranges in expressions, and expressions assigned into ranges") {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> y = {10, 20, 30, 40, 50, 60};
  std::vector<float> out(6);
  tx::as_view(out, {2, 3}) = tx::as_view(x, {2, 3}) * 2.0f + tx::as_view(y, {2, 3});
  for (std::size_t i = 0; i != out.size(); ++i) CHECK(out[i] == 2 * x[i] + y[i]);

  // A reduction over a span-viewed matrix, and a matmul with a tensor.
  tx::tensor<float, 1> col_sums = tx::sum(tx::as_view(x, {2, 3}), 0);
  CHECK(col_sums(0) == 5.0f);
  CHECK(col_sums(2) == 9.0f);
  tx::tensor<float, 2> w({3, 1}, {1, 1, 1});
  tx::tensor<float, 2> row_sums = tx::matmul(tx::as_view(std::as_const(x), {2, 3}), w);
  CHECK(row_sums(0, 0) == 6.0f);
  CHECK(row_sums(1, 0) == 15.0f);

  // In place through the view (the destination aliases an operand).
  auto xv = tx::as_view(x);
  xv = xv + 1.0f;
  CHECK(x[0] == 2.0f);
  CHECK(x[5] == 7.0f);

  // A view-to-view assignment copies elements.
  std::array<float, 6> copy{};
  tx::as_view(copy) = tx::as_view(std::as_const(x));
  CHECK(copy[4] == 6.0f);

  // Shape mismatches between views still say both shapes.
  std::vector<float> small(4);
  CHECK_THROWS_WITH_AS(tx::as_view(small) = tx::as_view(x), doctest::Contains("(6,)"), tx::shape_error);
}
