// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// matmul: rank 2, batched rank 3, shared rank-2 operands, strided inputs, shape errors.
#include <cstdlib>
#include <string>
#include <vector>

#include "reference.hpp"

namespace {

// The long double product of a (m x k, or batch x m x k) and b (k x n, or batch x k x n; a rank-2 side is shared by
// every batch), and for each element the sum of its terms' magnitudes (the scale of the dot product's rounding):
// computed once for every result read from the same operands.
struct product_ref {
  tx::index_t batch = 1, m = 0, n = 0;
  std::vector<test::ld> sum, mag;
};

template <class T, std::size_t RA, std::size_t RB>
product_ref reference_product(const tx::tensor<T, RA>& a, const tx::tensor<T, RB>& b) {
  product_ref r;
  const tx::index_t k = a.shape()[RA - 1];
  r.batch = RA == 3 ? a.shape()[0] : RB == 3 ? b.shape()[0] : 1, r.m = a.shape()[RA - 2], r.n = b.shape()[RB - 1];
  r.sum.assign(static_cast<std::size_t>(r.batch * r.m * r.n), 0), r.mag = r.sum;
  // Plain pointers and no calls in the inner loop: the test preset runs this unoptimised, under the sanitizers.
  const T* const ap = a.data();
  const T* const bp = b.data();
  for (tx::index_t q = 0; q < r.batch; ++q)
    for (tx::index_t i = 0; i < r.m; ++i)
      for (tx::index_t j = 0; j < r.n; ++j) {
        test::ld s = 0, mag = 0;
        const tx::index_t arow = (RA == 3 ? q * r.m * k : 0) + i * k, bcol = (RB == 3 ? q * k * r.n : 0) + j;
        for (tx::index_t p = 0; p < k; ++p) {
          const test::ld t = test::ld(ap[arow + p]) * test::ld(bp[bcol + p * r.n]);
          s += t;
          mag += t < 0 ? -t : t;
        }
        r.sum[static_cast<std::size_t>((q * r.m + i) * r.n + j)] = s;
        r.mag[static_cast<std::size_t>((q * r.m + i) * r.n + j)] = mag;
      }
  return r;
}

template <class T, std::size_t RA, std::size_t RB>
void check(const tx::tensor<T, RA>& a, const tx::tensor<T, RB>& b) {
  auto c = tx::eval(tx::matmul(a, b));
  const product_ref ref = reference_product(a, b);
  REQUIRE(c.size() == static_cast<tx::index_t>(ref.sum.size()));
  for (tx::index_t e = 0; e < c.size(); ++e) {
    const auto u = static_cast<std::size_t>(e);
    if (!test::close(c.data()[e], ref.sum[u], ref.mag[u])) REQUIRE(test::close(c.data()[e], ref.sum[u], ref.mag[u]));
  }
}

} // namespace

TEST_CASE_TEMPLATE("matmul shapes against a long double reference", T, float, double, std::int32_t, std::int64_t) {
  const double r = test::is_int<T> ? 20 : 1;
  check(test::random<T, 2>({1, 1}, -r, r), test::random<T, 2>({1, 1}, -r, r));
  check(test::random<T, 2>({17, 33}, -r, r), test::random<T, 2>({33, 9}, -r, r));
  check(test::random<T, 2>({70, 300}, -r, r), test::random<T, 2>({300, 600}, -r, r));  // crosses block edges
  check(test::random<T, 2>({64, 784}, -r, r), test::random<T, 2>({784, 10}, -r, r));   // 4 edge rows, narrow n
  check(test::random<T, 2>({128, 40}, -r, r), test::random<T, 2>({40, 70}, -r, r));    // 8 edge rows
  check(test::random<T, 2>({33, 100}, -r, r), test::random<T, 2>({100, 12}, -r, r));   // skinny: dot products, odd m
  check(test::random<T, 2>({40, 37}, -r, r), test::random<T, 2>({37, 16}, -r, r));     // one narrow sliver
  check(test::random<T, 2>({300, 50}, -r, r), test::random<T, 2>({50, 40}, -r, r));    // m > 256: B packed
  check(test::random<T, 2>({20, 300}, -r, r), test::random<T, 2>({300, 1100}, -r, r)); // n over a B column block
  check(test::random<T, 2>({4100, 256}, -r, r), test::random<T, 2>({256, 17}, -r, r)); // A too big to pack at once
  check(test::random<T, 3>({3, 5, 4}, -r, r), test::random<T, 3>({3, 4, 6}, -r, r));
  check(test::random<T, 3>({3, 5, 4}, -r, r), test::random<T, 2>({4, 6}, -r, r));
  check(test::random<T, 2>({5, 4}, -r, r), test::random<T, 3>({2, 4, 6}, -r, r));
  check(test::random<T, 2>({0, 4}, -r, r), test::random<T, 2>({4, 3}, -r, r));
  check(test::random<T, 2>({2, 0}, -r, r), test::random<T, 2>({0, 3}, -r, r));  // k = 0 gives zeros
}

#if defined(TEXPR_GEMM_X86)
// CTest runs these cases again with TEXPR_GEMM_LEVEL=0 and =1 (tests/CMakeLists.txt): check they took that path.
TEST_CASE("matmul uses the kernel TEXPR_GEMM_LEVEL asks for when the CPU has it") {
  const int level = tx::detail::host_impl::cpu_level();
  CHECK(level >= 0);
  CHECK(level <= 2);
  if (const char* env = std::getenv("TEXPR_GEMM_LEVEL")) {
    INFO("TEXPR_GEMM_LEVEL=", env, ", level in use ", level);
    CHECK(level <= env[0] - '0');
  }
}
#endif

TEST_CASE("matmul of expressions and of a transposed view") {
  auto a = test::random<double, 2>({4, 3});
  auto b = test::random<double, 2>({4, 5});
  tx::view<const double, 2> at(a.data(), {3, 4}, {1, 3});
  tx::tensor<double, 2> c = tx::matmul(at, b * 2.0);
  for (tx::index_t i = 0; i < 3; ++i)
    for (tx::index_t j = 0; j < 5; ++j) {
      test::ld s = 0;
      for (tx::index_t p = 0; p < 4; ++p) s += test::ld(a(p, i)) * b(p, j) * 2;
      CHECK(test::close(c(i, j), s, 8));
    }
}

TEST_CASE("matmul shape errors name both shapes") {
  tx::tensor<float, 2> a({3, 4}), b({5, 2});
  CHECK_THROWS_WITH_AS(tx::matmul(a, b), doctest::Contains("LHS shape = (3, 4) RHS shape = (5, 2)"), tx::shape_error);
  tx::tensor<float, 3> x({2, 3, 4}), y({3, 4, 5});
  CHECK_THROWS_WITH_AS(tx::matmul(x, y), doctest::Contains("batch"), tx::shape_error);
}

namespace {

// out (m x n, or batch x m x n) against f(the reference product, bias[j]) (tolerance: twice the terms' magnitudes
// plus the bias's, as the epilogue rounds once more).
template <class T, std::size_t R, class F>
void check_epilogue(const tx::tensor<T, R>& out, const product_ref& ref, const tx::tensor<T, 1>& bias, F f) {
  REQUIRE(out.size() == static_cast<tx::index_t>(ref.sum.size()));
  for (tx::index_t e = 0; e < out.size(); ++e) {
    const tx::index_t j = e % ref.n;
    const auto u = static_cast<std::size_t>(e);
    const test::ld c = bias.data()[j];
    if (!test::close(out.data()[e], f(ref.sum[u], c), 2 * ref.mag[u] + std::fabs(c))) {
      INFO("batch ", e / (ref.m * ref.n), " row ", e / ref.n % ref.m, " column ", j, " of ", tx::to_string(out.shape()));
      REQUIRE(test::close(out.data()[e], f(ref.sum[u], c), 2 * ref.mag[u] + std::fabs(c)));
    }
  }
}

template <class T, std::size_t R, class F>
void check_epilogue(const tx::tensor<T, R>& out, const tx::tensor<T, R>& a, const tx::tensor<T, 2>& b,
                    const tx::tensor<T, 1>& bias, F f) {
  check_epilogue(out, reference_product(a, b), bias, f);
}

test::ld elu_ref(test::ld v) { return v > 0 ? v : std::expm1(v); }

} // namespace

TEST_CASE_TEMPLATE("elementwise trees over a matmul run as the GEMM's epilogue and match a reference", T, float, double) {
  const int threads = tx::num_threads();
  // Edge rows (m = 1, 13, 64, 100), m > 256 (B packed), n over a B column block, k over several depth panels; on
  // 2 threads, row bands (m <= 256 above 2^21 multiply-adds) of m = 64, 100, 250 and 7 (one band empty), with a
  // narrow last B sliver (n = 50, 130, 120).
  const tx::index_t shapes[][3] = {{1, 5, 7},     {13, 1, 33},    {64, 784, 10},   {64, 300, 256}, {100, 37, 65},
                                   {300, 20, 40}, {20, 70, 1100}, {13, 40, 7},     {1, 64, 12},    {100, 600, 50},
                                   {250, 100, 130}, {7, 3000, 120}};
  for (const auto& s : shapes) {
    const tx::index_t m = s[0], k = s[1], n = s[2];
    auto x = test::random<T, 2>({m, k}), w = test::random<T, 2>({k, n});
    auto b = test::random<T, 1>({n});
    const product_ref ref = reference_product(x, w);  // one reference for both threads and both trees
    CAPTURE(m);
    CAPTURE(k);
    CAPTURE(n);
    for (int t : {1, 2}) {
      tx::set_num_threads(t);
      CAPTURE(t);
      tx::tensor<T, 2> h(tx::shape_t<2>{m, n});
      const auto before = tx::detail::memory<tx::host>::allocations.load();
      h = tx::elu(tx::matmul(x, w) + b);  // into existing storage: the product needs no buffer of its own
      CHECK(tx::detail::memory<tx::host>::allocations.load() == before);
      check_epilogue(h, ref, b, [](test::ld d, test::ld c) { return elu_ref(d + c); });
      tx::tensor<T, 2> g = b - tx::matmul(x, w) * 2;  // the product as the second operand, in a fresh tensor
      check_epilogue(g, ref, b, [](test::ld d, test::ld c) { return c - 2 * d; });
    }
  }
  tx::set_num_threads(threads);
}

TEST_CASE("a fused epilogue shows in tx::placement and handles batches, aliasing, strided and broadcast cases") {
  auto x = test::random<float, 2>({64, 30}), w = test::random<float, 2>({30, 20});
  auto b = test::random<float, 1>({20});
  const std::string report = tx::placement(tx::elu(tx::matmul(x, w) + b));
  INFO(report);
  CHECK(report.find("blocked_gemm_epilogue") != std::string::npos);
  CHECK(report.find("blocked_gemm (runs the epilogue above)") != std::string::npos);
  CHECK(tx::placement(tx::elu(x)).find("epilogue") == std::string::npos);  // no matmul: a plain fused pass
  CHECK(tx::placement(tx::sum(tx::matmul(x, w))).find("epilogue") == std::string::npos);  // not elementwise

  SUBCASE("batched: a rank-3 product, one epilogue per batch") {
    auto x3 = test::random<float, 3>({3, 17, 30});
    tx::tensor<float, 3> h = tx::elu(tx::matmul(x3, w) + b);
    check_epilogue(h, x3, w, b, [](test::ld d, test::ld c) { return elu_ref(d + c); });
  }
  SUBCASE("an operand that is the destination is read before the GEMM overwrites it") {
    tx::tensor<float, 2> h = test::random<float, 2>({64, 20});
    const tx::tensor<float, 2> h0 = h.clone();
    h = tx::elu(tx::matmul(x, w) + h);
    for (tx::index_t i = 0; i < 64; ++i)
      for (tx::index_t j = 0; j < 20; ++j) {
        test::ld s = h0(i, j), mag = std::fabs(s);
        for (tx::index_t p = 0; p < 30; ++p) {
          s += test::ld(x(i, p)) * w(p, j);
          mag += 2 * std::fabs(test::ld(x(i, p)) * w(p, j));
        }
        REQUIRE(test::close(h(i, j), elu_ref(s), mag));
      }
  }
  SUBCASE("a strided destination and a broadcast product take separate passes, with the same values") {
    tx::tensor<float, 2> t(tx::shape_t<2>{20, 64});
    tx::transpose(t) = tx::elu(tx::matmul(x, w) + b);  // dest strided
    tx::tensor<float, 2> h = tx::elu(tx::matmul(x, w) + b);
    for (tx::index_t i = 0; i < 64; ++i)
      for (tx::index_t j = 0; j < 20; ++j) REQUIRE(t(j, i) == h(i, j));
    auto row = test::random<float, 2>({1, 30});
    auto y = test::random<float, 2>({64, 20});
    tx::tensor<float, 2> z = tx::matmul(row, w) + y;  // the (1, 20) product broadcast over 64 rows
    for (tx::index_t i = 0; i < 64; ++i)
      for (tx::index_t j = 0; j < 20; ++j) {
        test::ld s = y(i, j), mag = std::fabs(s);
        for (tx::index_t p = 0; p < 30; ++p) {
          s += test::ld(row(0, p)) * w(p, j);
          mag += 2 * std::fabs(test::ld(row(0, p)) * w(p, j));
        }
        REQUIRE(test::close(z(i, j), s, mag));
      }
  }
}
