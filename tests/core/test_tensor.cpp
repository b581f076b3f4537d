// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensors and views: construction, shapes, ownership, moves, copies, element access, assignment, aliasing.
#include "support.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
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

TEST_CASE("zeros, ones, full, zeros_like, ones_like: lazy constants that cost no memory until assigned") {
  const auto before = tx::detail::memory<tx::host>::allocations.load();
  auto z = tx::zeros<float>({3, 4});
  auto o = tx::ones<double>({5});
  auto f = tx::full(tx::shape_t<2>{2, 3}, std::int32_t(7));
  CHECK(tx::detail::memory<tx::host>::allocations.load() == before);  // nothing allocated yet
  static_assert(tx::runs_on<decltype(z), tx::host>);
  static_assert(!tx::runs_on<decltype(tx::zeros<float, tx::cuda>({1, 1})), tx::host>);  // on cuda by request
  tx::tensor<float, 2> tz = z;
  tx::tensor<double, 1> to = o;
  tx::tensor<std::int32_t, 2> tf = f;
  CHECK(tz.shape() == tx::shape_t<2>{3, 4});
  for (tx::index_t i = 0; i < tz.size(); ++i) CHECK(tz.data()[i] == 0.0f);
  for (tx::index_t i = 0; i < to.size(); ++i) CHECK(to.data()[i] == 1.0);
  for (tx::index_t i = 0; i < tf.size(); ++i) CHECK(tf.data()[i] == 7);
  // As leaves of an expression they are read fused: only the result is allocated.
  tx::tensor<float, 2> x({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const auto mid = tx::detail::memory<tx::host>::allocations.load();
  tx::tensor<float, 2> y = x * tx::ones_like(x) + tx::zeros_like(x) + tx::full(x.shape(), 0.5f);
  CHECK(tx::detail::memory<tx::host>::allocations.load() - mid == 1);
  for (tx::index_t i = 0; i < 12; ++i) CHECK(y.data()[i] == static_cast<float>(i + 1) + 0.5f);
  CHECK(tx::placement(tx::ones_like(x) * x).find("constant") != std::string::npos);
  CHECK_THROWS_AS((tx::zeros<float>({-1})), tx::shape_error);
  tx::tensor<float, 2> braced = tx::full({2, 3}, 1.5f);  // shapes as braced lists
  CHECK(braced.shape() == tx::shape_t<2>{2, 3});
  for (tx::index_t i = 0; i < braced.size(); ++i) CHECK(braced.data()[i] == 1.5f);
}

TEST_CASE("arange: counts, steps, negative steps, float steps, empty ranges, fused with broadcasting") {
  tx::tensor<std::int64_t, 1> a = tx::arange<std::int64_t>(6);
  REQUIRE(a.shape() == tx::shape_t<1>{6});
  for (tx::index_t i = 0; i < 6; ++i) CHECK(a(i) == i);
  tx::tensor<std::int32_t, 1> b = tx::arange(std::int32_t(10), std::int32_t(-3), std::int32_t(-4));  // 10 6 2 -2
  REQUIRE(b.shape() == tx::shape_t<1>{4});
  CHECK(b(3) == -2);
  tx::tensor<double, 1> c = tx::arange(0.0, 1.0, 0.25);  // 0 .25 .5 .75 (end excluded)
  REQUIRE(c.shape() == tx::shape_t<1>{4});
  CHECK(c(3) == 0.75);
  CHECK(tx::eval(tx::arange(5.0f, 1.0f, 1.0f)).size() == 0);
  // An outer sum through broadcasting: (4, 1) + (3,) without materialising either arange.
  tx::tensor<float, 2> t = tx::reshape(tx::arange<float>(4), {4, 1}) * 10.0f + tx::arange<float>(3);
  for (tx::index_t i = 0; i < 4; ++i)
    for (tx::index_t j = 0; j < 3; ++j) CHECK(t(i, j) == static_cast<float>(10 * i + j));
  CHECK(tx::placement(tx::arange<float>(3) * 2.0f).find("arange") != std::string::npos);
  CHECK_THROWS_WITH_AS(tx::arange(0, 5, 0), doctest::Contains("arange step must not be 0"), tx::shape_error);
}

TEST_CASE("errors raised by named functions start with the caller's file:line") {
  tx::tensor<float, 2> a({3, 4}), b({4, 3}), e({0, 2});
  const std::string here = std::string(__FILE__) + ":";
  auto starts_here = [&](const std::string& what, int line) {
    INFO(what);
    return what.rfind(here + std::to_string(line) + ": texpr: ", 0) == 0;
  };
  try {
    (void)tx::matmul(a, a);  // inner dimensions 4 and 3
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
    CHECK(std::string(x.what()).find("LHS shape = (3, 4) RHS shape = (3, 4)") != std::string::npos);
  }
  try {
    (void)tx::sum(a, 2);
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
  }
  try {
    (void)tx::maximum(a, b);
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
  }
  try {
    (void)tx::add(a, b);  // the named twin of a + b
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
    CHECK(std::string(x.what()).find("add") != std::string::npos);
  }
  try {
    tx::tensor<float, 2> few({2, 2}, {1, 2, 3});  // 3 values for 4 elements
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
  }
  try {
    (void)tx::max(e).item();  // raised while evaluating: the location of item()
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
  }
  try {
    tx::tensor<float, 1> m = tx::max(e, 0);  // the location of the constructor
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
  }
  try {
    (void)tx::reshape(a, {5, -1});
    FAIL("no error");
  } catch (const tx::shape_error& x) {
    CHECK(starts_here(x.what(), __LINE__ - 3));
    CHECK(std::string(x.what()).find("(3, 4)") != std::string::npos);
  }
  // Operators cannot know their caller's line (C++ allows no default arguments on operators): their errors name the
  // op and both shapes.
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("incompatible shapes for add: LHS shape = (3, 4) RHS shape = (4, 3)"),
                       tx::shape_error);
}

TEST_CASE("released host blocks are reused by size class, within the cache's limit") {
  auto& cache = tx::detail::host_block_cache::instance();
  using cache_t = tx::detail::host_block_cache;
  // Size classes: 1/8 of a power of two, never smaller than the request.
  for (std::size_t bytes : {std::size_t(65536), std::size_t(65537), std::size_t(100000), std::size_t(1) << 20, (std::size_t(3) << 20) + 5}) {
    const std::size_t c = cache_t::size_class(bytes);
    CHECK(c >= bytes);
    CHECK(c <= bytes + bytes / 8);
  }
  // Below 64 KiB: powers of two, at least 128 bytes (a step's small temporaries are reused too).
  CHECK(cache_t::size_class(1) == 128);
  CHECK(cache_t::size_class(1000) == 1024);
  CHECK(cache_t::size_class(1024) == 1024);
  CHECK(cache_t::size_class(40000) == 65536);
  if (TEXPR_HOST_CACHE_DEFAULT_MB == 0 || std::getenv("TEXPR_HOST_CACHE_MB")) return;  // (sanitizers: no reuse)
  cache.trim(0);
  const float* first = nullptr;
  {
    tx::tensor<float, 1> a(tx::shape_t<1>{1 << 18});  // 1 MiB
    a = tx::full(a.shape(), 3.0f);
    first = a.data();
  }
  CHECK(cache.cached_bytes() >= std::size_t(1) << 20);  // kept, not returned to the system
  tx::tensor<float, 1> b(tx::shape_t<1>{(1 << 18) - 3});  // the same class: the same block
  CHECK(b.data() == first);
  CHECK(cache.cached_bytes() == 0);
  b = tx::full(b.shape(), 1.0f);  // the reused block is fully writable
  for (tx::index_t i = 0; i < b.size(); ++i) REQUIRE(b.data()[i] == 1.0f);
  tx::tensor<float, 1> c(tx::shape_t<1>{1 << 19});  // another class: a fresh block
  CHECK(c.data() != first);
}

TEST_CASE("host blocks of 2 MiB or more start on a 2 MiB boundary and are advised for huge pages") {
  using pages = tx::detail::host_pages;
  const bool huge = pages::use_huge(pages::huge);
#if defined(TEXPR_DETAIL_HUGE_PAGES)
  const char* env = std::getenv("TEXPR_HOST_HUGE_PAGES");
  CHECK(huge == !(env && env[0] == '0'));
#else
  CHECK_FALSE(huge);  // not Linux, or ASan: plain aligned blocks
#endif
  CHECK_FALSE(pages::use_huge(pages::huge - 1));
  tx::detail::host_block_cache::instance().trim(0);  // fresh blocks, not cached ones of another layout
  // Sizes around the boundary and one that is not a multiple of the page size: every byte must be writable, and
  // the block (the data less its 64-byte header) must start on a 2 MiB boundary when huge pages are on.
  for (tx::index_t n : {tx::index_t(1) << 19, (tx::index_t(1) << 19) - 16, (tx::index_t(3) << 19) + 7, tx::index_t(5) << 20}) {
    tx::tensor<float, 1> t(tx::shape_t<1>{n});
    const auto block = reinterpret_cast<std::uintptr_t>(t.data()) - tx::detail::memory<tx::host>::alignment;
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float) + tx::detail::memory<tx::host>::alignment;
    if (huge && bytes >= pages::huge) CHECK(block % pages::huge == 0);
    else CHECK(block % tx::detail::memory<tx::host>::alignment == 0);
    t = tx::full(t.shape(), 2.5f);
    CHECK(t.data()[0] == 2.5f);
    CHECK(t.data()[n - 1] == 2.5f);
    CHECK(tx::sum(t).item() == doctest::Approx(2.5 * static_cast<double>(n)).epsilon(1e-5));
  }
  // Directly: the block is released with the same size, whether or not it was mapped for huge pages.
  void* p = pages::allocate(pages::huge + 12345, 64);
  std::memset(p, 1, pages::huge + 12345);
  if (huge) CHECK(reinterpret_cast<std::uintptr_t>(p) % pages::huge == 0);
  pages::release(p, pages::huge + 12345, 64);
}
