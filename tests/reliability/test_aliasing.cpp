// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Aliasing (reads of the destination through any layout), views over user memory, moves and deep copies.
#include <memory>
#include <numeric>

#include "common.hpp"

namespace {

std::vector<double> iota(std::size_t n, double start = 1) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

} // namespace

TEST_CASE("elementwise in place: the destination read at its own position, any operand order") {
  tx::tensor<double, 2> a = test::random<double, 2>({33, 70}), b = test::random<double, 2>({33, 70});
  auto a0 = a.clone();
  a = b + a;
  a = a * a;
  a = tx::where(a > 1.0, -a, a);
  for (tx::index_t i = 0; i < a.size(); ++i) {
    const double s = (b.data()[i] + a0.data()[i]) * (b.data()[i] + a0.data()[i]);
    REQUIRE(a.data()[i] == (s > 1.0 ? -s : s));
  }
}

TEST_CASE("matmul reading its destination goes through a temporary: a = a*b, a = b*a, a = a*a, batched") {
  auto a = test::random<double, 2>({6, 6}), b = test::random<double, 2>({6, 6});
  auto ref = [](const tx::tensor<double, 2>& x, const tx::tensor<double, 2>& y) {
    tx::tensor<double, 2> c({6, 6});
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        for (int k = 0; k < 6; ++k) c(i, j) += x(i, k) * y(k, j);
    return c;
  };
  auto check = [](const tx::tensor<double, 2>& got, const tx::tensor<double, 2>& want) {
    for (tx::index_t i = 0; i < got.size(); ++i) REQUIRE(got.data()[i] == doctest::Approx(want.data()[i]).epsilon(1e-12));
  };
  auto w1 = ref(a, b);
  a = tx::matmul(a, b);
  check(a, w1);
  auto w2 = ref(b, a);
  a = tx::matmul(b, a);
  check(a, w2);
  auto w3 = ref(a, a);
  a = tx::matmul(a, a) + 0.0;
  check(a, w3);
  // A matmul whose operand is a transposed view of the destination.
  tx::view<const double, 2> at(a.data(), {6, 6}, {1, 6});
  tx::tensor<double, 2> atc = at + 0.0;
  auto w4 = ref(atc, b);
  a = tx::matmul(at, b);
  check(a, w4);
  // Batched: the destination is one operand; and the result written through a strided view of itself.
  auto x = test::random<double, 3>({3, 4, 4});
  auto xc = x.clone();
  x = tx::matmul(x, b.view().data()[0] * tx::tensor<double, 2>({4, 4}) + tx::eval(tx::sum(xc, 0)));
  tx::tensor<double, 2> s0 = tx::sum(xc, 0);
  for (int n = 0; n < 3; ++n)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        double c = 0;
        for (int k = 0; k < 4; ++k) c += xc(n, i, k) * s0(k, j);
        REQUIRE(x(n, i, j) == doctest::Approx(c).epsilon(1e-12));
      }
}

TEST_CASE("broadcast, transposed, reversed and partially overlapping reads of the destination") {
  const std::size_t n = 3000;
  SUBCASE("shift right: dst = p[1..n), src = p[0..n-1)") {
    auto m = iota(n);
    tx::view<double, 1> dst(m.data() + 1, {tx::index_t(n - 1)});
    tx::view<const double, 1> src(m.data(), {tx::index_t(n - 1)});
    dst = src * 1.0;
    for (std::size_t i = 1; i < n; ++i) REQUIRE(m[i] == double(i));  // each element took its left neighbour
    CHECK(m[0] == 1.0);
  }
  SUBCASE("shift left: dst = p[0..n-1), src = p[1..n)") {
    auto m = iota(n);
    tx::view<double, 1> dst(m.data(), {tx::index_t(n - 1)});
    tx::view<const double, 1> src(m.data() + 1, {tx::index_t(n - 1)});
    dst = src + 0.0;
    for (std::size_t i = 0; i + 1 < n; ++i) REQUIRE(m[i] == double(i + 2));
  }
  SUBCASE("reverse in place through a negative stride") {
    auto m = iota(n);
    tx::view<double, 1> fwd(m.data(), {tx::index_t(n)});
    tx::view<const double, 1> rev(m.data() + n - 1, {tx::index_t(n)}, {-1});
    fwd = rev + 0.0;
    for (std::size_t i = 0; i < n; ++i) REQUIRE(m[i] == double(n - i));
    tx::view<double, 1> rev_dst(m.data() + n - 1, {tx::index_t(n)}, {-1});
    rev_dst = fwd * 1.0;  // reverse back, writing through the negative stride
    for (std::size_t i = 0; i < n; ++i) REQUIRE(m[i] == double(i + 1));
  }
  SUBCASE("transpose in place of a large square, mixed with the destination itself") {
    const tx::index_t s = 67;
    tx::tensor<double, 2> sq({s, s});
    for (tx::index_t i = 0; i < sq.size(); ++i) sq.data()[i] = double(i);
    tx::view<const double, 2> t(sq.data(), {s, s}, {1, s});
    sq = t * 2.0 + sq;
    for (tx::index_t i = 0; i < s; ++i)
      for (tx::index_t j = 0; j < s; ++j) REQUIRE(sq(i, j) == 2.0 * double(j * s + i) + double(i * s + j));
  }
  SUBCASE("broadcast of a column and of the last row of the destination") {
    tx::tensor<double, 2> m({40, 50});
    for (tx::index_t i = 0; i < m.size(); ++i) m.data()[i] = double(i);
    auto m0 = m.clone();
    tx::view<const double, 2> col0(m.data(), {40, 1}, {50, 1});
    tx::view<const double, 1> last(m.data() + 39 * 50, {50});
    m = m * col0 - last;
    for (tx::index_t i = 0; i < 40; ++i)
      for (tx::index_t j = 0; j < 50; ++j) REQUIRE(m(i, j) == m0(i, j) * m0(i, 0) - m0(39, j));
  }
  SUBCASE("a view of the first row read while all rows are written (same memory, other shape)") {
    tx::tensor<double, 2> m({5, 6});
    for (tx::index_t i = 0; i < m.size(); ++i) m.data()[i] = double(i);
    tx::view<const double, 1> flat_row(m.data(), {6});
    m = flat_row + m;
    for (tx::index_t i = 0; i < 5; ++i)
      for (tx::index_t j = 0; j < 6; ++j) REQUIRE(m(i, j) == double(j) + double(i * 6 + j));
  }
  SUBCASE("reductions into memory they read: a row, a strided column, a rank-0 view") {
    tx::tensor<double, 2> m({300, 7});
    for (tx::index_t i = 0; i < m.size(); ++i) m.data()[i] = double(i % 13);
    auto m0 = m.clone();
    tx::view<double, 1> row0(m.data(), {7});
    row0 = tx::sum(m, 0);
    for (tx::index_t j = 0; j < 7; ++j) {
      double s = 0;
      for (tx::index_t i = 0; i < 300; ++i) s += m0(i, j);
      REQUIRE(m(0, j) == s);
    }
    m = m0.clone();
    tx::view<double, 1> col0(m.data(), {7}, {1});
    col0 = tx::max(m, 0) - tx::sum(m, 0) * 0.0;
    tx::view<double, 1> strided(m.data() + 1, {300}, {7});
    strided = tx::sum(m0, 1) + m.view().data()[0] * 0.0;
    for (tx::index_t i = 0; i < 300; ++i) {
      double s = 0;
      for (tx::index_t j = 0; j < 7; ++j) s += m0(i, j);
      REQUIRE(m(i, 1) == s);
    }
    tx::view<double, 0> first(m.data(), {});
    const double total = tx::sum(m).item();
    first = tx::sum(m);
    CHECK(m(0, 0) == total);
  }
}

TEST_CASE("views over user memory are never freed; texpr allocates nothing for in-place view updates") {
  // Memory from new[], malloc-like aligned new and the stack: ASan reports any free by texpr.
  auto heap = std::make_unique<float[]>(12);
  float stack[12] = {};
  auto* aligned = static_cast<float*>(::operator new(12 * sizeof(float), std::align_val_t{64}));
  for (float* p : {heap.get(), &stack[0], aligned}) {
    for (int i = 0; i < 12; ++i) p[i] = float(i);
    {
      tx::view<float, 2> v(p, {3, 4});
      auto e = v * 2.0f + tx::view<const float, 1>(p, {4});  // the expression outlives nothing it copied
      tx::tensor<float, 2> t = e;
      CHECK(t(2, 3) == 11.0f * 2.0f + 3.0f);
      tx::tensor<float, 2> deep(v);  // a tensor built from a view copies
      CHECK(deep.data() != p);
      deep(0, 0) = 100.0f;
      CHECK(p[0] == 0.0f);
      const auto before = tx::detail::memory<tx::host>::allocations.load();
      v = v + 1.0f;  // aligned, same layout: in place, no temporary
      CHECK(tx::detail::memory<tx::host>::allocations.load() == before);
      auto copy_of_view = v;  // copying a view copies the handle, not the data
      CHECK(copy_of_view.data() == p);
      v = deep;  // assigning a tensor to a view copies elements into user memory
    }
    CHECK(p[0] == 100.0f);  // the memory is intact and still ours
    CHECK(p[11] == 11.0f);  // `v = deep` wrote deep's values (the originals, but p[0])
  }
  ::operator delete(aligned, std::align_val_t{64});
}

TEST_CASE("moved-from tensors are valid and empty; self-moves and self-copies are harmless") {
  tx::tensor<float, 2> a({2, 3}, {1, 2, 3, 4, 5, 6});
  tx::tensor<float, 2> b(std::move(a));
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is specified
  CHECK(a.empty());
  CHECK(a.data() == nullptr);
  CHECK(a.shape() == tx::shape_t<2>{0, 0});
  CHECK(tx::sum(a).item() == 0.0f);          // usable as an (empty) operand
  CHECK_THROWS_AS(tx::max(a).item(), tx::shape_error);
  CHECK(a.clone().empty());
  tx::tensor<float, 2> c = std::move(a);     // moving an empty tensor
  CHECK(c.empty());
  a = b * 2.0f;                               // a moved-from tensor takes the expression's shape
  CHECK(a.shape() == tx::shape_t<2>{2, 3});
  CHECK(a(1, 2) == 12.0f);
  a = std::move(b);
  CHECK(b.empty());
  CHECK(a(1, 2) == 6.0f);
  auto& self = a;
  a = std::move(self);
  CHECK(a(1, 2) == 6.0f);
  a = self;  // self copy-assignment: no change
  CHECK(a(0, 0) == 1.0f);
  b = std::move(a);
  b.reset();
  CHECK(b.empty());
  // NOLINTEND(bugprone-use-after-move)
}

TEST_CASE("copies are deep and explicit: clone, copy-assignment, eval, expressions sharing owned leaves") {
  static_assert(!std::is_copy_constructible_v<tx::tensor<double, 1>>);
  auto a = test::random<double, 3>({2, 3, 4});
  auto b = a.clone();
  tx::tensor<double, 3> c({2, 3, 4});
  const double* cp = c.data();
  c = a;  // element copy into c's own storage
  CHECK(c.data() == cp);
  auto d = tx::eval(a);
  for (auto* t : {&b, &c, &d}) {
    CHECK(t->data() != a.data());
    for (tx::index_t i = 0; i < a.size(); ++i) REQUIRE(t->data()[i] == a.data()[i]);
  }
  a(0, 0, 0) = 1e9;
  CHECK(b(0, 0, 0) != 1e9);
  CHECK(c(0, 0, 0) != 1e9);
  CHECK(d(0, 0, 0) != 1e9);
  tx::tensor<double, 0> s0(tx::shape_t<0>{});
  s0() = 4.0;
  CHECK(s0.clone()() == 4.0);
  // An expression owning a temporary keeps it alive across copies; destroying one copy keeps the other valid.
  auto e1 = std::make_unique<decltype(tx::eval(a) + 1.0)>(tx::eval(a) + 1.0);
  auto e2 = *e1;
  e1.reset();
  tx::tensor<double, 3> r = e2;
  CHECK(r(0, 0, 0) == 1e9 + 1.0);
}
