// Tensors and views: construction, shapes, ownership, moves, copies, element access, assignment, aliasing.
#include "support.hpp"

#include <stdexcept>
#include <utility>

TEST_CASE("construction: zero fill, initial values, shapes and sizes") {
  tx::tensor<float, 2> a({3, 4});
  CHECK(a.shape() == tx::shape_t<2>{3, 4});
  CHECK(a.size() == 12);
  for (tx::index_t i = 0; i < a.size(); ++i) CHECK(a.data()[i] == 0.0f);
  tx::tensor<float, 2> b({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(b(1, 2) == 6.0f);
  CHECK(b(0, 1) == 2.0f);
  CHECK_THROWS_WITH_AS((tx::tensor<float, 2>({2, 3}, {1, 2, 3})), doctest::Contains("(2, 3)"), tx::shape_error);
  CHECK_THROWS_AS((tx::tensor<float, 1>({-1})), tx::shape_error);
  tx::tensor<double, 0> s(tx::shape_t<0>{});
  CHECK(s.size() == 1);
  CHECK(s.item() == 0.0);
}

TEST_CASE("element access is bounds checked in every build") {
  tx::tensor<int, 2> a({2, 2}, {1, 2, 3, 4});
  CHECK_THROWS_WITH_AS(a(2, 0), doctest::Contains("(2, 2)"), std::out_of_range);
  CHECK_THROWS_AS(a(0, -1), std::out_of_range);
}

TEST_CASE("moves leave an empty valid tensor; copies are explicit and deep") {
  tx::tensor<float, 1> a({3}, {1, 2, 3});
  const float* p = a.data();
  tx::tensor<float, 1> b = std::move(a);
  CHECK(b.data() == p);
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is specified as empty
  CHECK(a.data() == nullptr);
  CHECK(a.size() == 0);
  static_assert(!std::is_copy_constructible_v<tx::tensor<float, 1>>);
  auto c = b.clone();
  c(0) = 42;
  CHECK(b(0) == 1.0f);
  CHECK(c.data() != b.data());
  a = b;  // copy-assignment into an empty tensor allocates
  CHECK(a(2) == 3.0f);
  tx::tensor<float, 1> wrong({5});
  CHECK_THROWS_AS(wrong = b, tx::shape_error);
  CHECK(wrong.size() == 5);  // a failed assignment leaves the destination as it was
}

TEST_CASE("views wrap user memory, never free it, and may be strided") {
  std::vector<float> mem = {1, 2, 3, 4, 5, 6};
  {
    tx::view<float, 2> v(mem.data(), {2, 3});
    CHECK(v(1, 0) == 4.0f);
    tx::tensor<float, 2> t = v * 2.0f;
    CHECK(t(1, 2) == 12.0f);
    v = v + 1.0f;  // writes through
  }
  CHECK(mem[0] == 2.0f);  // still valid: the view freed nothing
  tx::view<const float, 2> transposed(mem.data(), {3, 2}, {1, 3});
  CHECK(transposed(2, 1) == mem[5]);
  tx::tensor<float, 2> tt = transposed + 0.0f;
  CHECK(tt(0, 1) == mem[3]);
  CHECK_FALSE(transposed.is_contiguous());
  CHECK_THROWS_AS((tx::view<float, 1>(nullptr, {3})), std::invalid_argument);
  tx::view<float, 1> empty(nullptr, {0});
  CHECK(empty.size() == 0);
}

TEST_CASE("assignment into existing storage checks shapes and keeps the buffer") {
  tx::tensor<float, 2> a({2, 3}, {1, 2, 3, 4, 5, 6});
  tx::tensor<float, 2> c({2, 3});
  const float* p = c.data();
  c = a * 2.0f;
  CHECK(c.data() == p);
  CHECK(c(1, 1) == 10.0f);
  tx::tensor<float, 2> bad({3, 2});
  CHECK_THROWS_WITH_AS(bad = a + 1.0f, doctest::Contains("(2, 3)"), tx::shape_error);
  tx::tensor<float, 2> empty;
  empty = a - 1.0f;  // no storage yet: takes the expression's shape
  CHECK(empty.shape() == tx::shape_t<2>{2, 3});
}

TEST_CASE("auto expressions never dangle: temporaries are moved in") {
  auto make = [] { return tx::tensor<float, 1>({4}, {1, 2, 3, 4}); };
  auto e = make() * 3.0f + make();  // both leaves were temporaries
  tx::tensor<float, 1> r = e;
  CHECK(r(3) == 16.0f);
  auto e2 = e;  // copies share the owned temporaries
  CHECK(tx::sum(e2).item() == doctest::Approx(40.0));
}

TEST_CASE("aliasing: reads of the destination are safe") {
  tx::tensor<float, 2> a({2, 2}, {1, 2, 3, 4});
  tx::tensor<float, 2> b({2, 2}, {1, 0, 0, 1});
  a = a + b;  // elementwise in place
  CHECK(a(0, 0) == 2.0f);
  CHECK(a(1, 1) == 5.0f);
  a = tx::matmul(a, b * 2.0f);  // reads a while writing a: goes through a temporary
  CHECK(a(0, 1) == 4.0f);
  CHECK(a(1, 0) == 6.0f);
  // A broadcast read of the destination's first row while writing all rows.
  tx::tensor<float, 2> m({3, 2}, {1, 2, 3, 4, 5, 6});
  tx::view<float, 1> row0(m.data(), {2});
  m = m + row0;
  CHECK(m(0, 0) == 2.0f);
  CHECK(m(2, 1) == 8.0f);  // row0 was read before row 0 changed
  // A transposed read of the destination.
  tx::tensor<float, 2> sq({2, 2}, {1, 2, 3, 4});
  tx::view<float, 2> t(sq.data(), {2, 2}, {1, 2});
  sq = t + 0.0f;
  CHECK(sq(0, 1) == 3.0f);
  CHECK(sq(1, 0) == 2.0f);
}

TEST_CASE("eval, item and rank-0 results") {
  tx::tensor<std::int64_t, 1> a({4}, {1, 2, 3, 4});
  auto r = tx::eval(tx::sum(a));
  static_assert(decltype(r)::rank == 0);
  CHECK(r.item() == 10);
  CHECK(tx::prod(a).item() == 24);
  tx::tensor<std::int64_t, 0> empty;
  CHECK_THROWS_AS(empty.item(), tx::shape_error);
}

TEST_CASE("compound assignment updates in place with broadcasting") {
  tx::tensor<float, 2> w({2, 3}, {1, 2, 3, 4, 5, 6});
  tx::tensor<float, 1> g({3}, {1, 1, 2});
  const float* p = w.data();
  w -= 0.5f * g;
  w *= 2;
  CHECK(w.data() == p);
  CHECK(w(0, 0) == 1.0f);
  CHECK(w(1, 2) == 10.0f);
  tx::tensor<float, 2> col({2, 1}, {1, 2});
  tx::tensor<float, 2> row({1, 3});
  CHECK_THROWS_AS(row += col, tx::shape_error);  // (1, 3) + (2, 1) is (2, 3): not row's shape
  CHECK(row.shape() == tx::shape_t<2>{1, 3});
}
