// matmul: rank 2, batched rank 3, shared rank-2 operands, strided inputs, shape errors.
#include <cstdlib>

#include "reference.hpp"

namespace {

template <class T, std::size_t RA, std::size_t RB>
void check(const tx::tensor<T, RA>& a, const tx::tensor<T, RB>& b) {
  auto c = tx::eval(tx::matmul(a, b));
  const tx::index_t m = a.shape()[RA - 2], k = a.shape()[RA - 1], n = b.shape()[RB - 1];
  const tx::index_t batch = c.rank == 3 ? c.shape()[0] : 1;
  for (tx::index_t q = 0; q < batch; ++q)
    for (tx::index_t i = 0; i < m; ++i)
      for (tx::index_t j = 0; j < n; ++j) {
        test::ld s = 0, mag = 0;
        for (tx::index_t p = 0; p < k; ++p) {
          const test::ld x = a.data()[(RA == 3 ? q * m * k : 0) + i * k + p];
          const test::ld y = b.data()[(RB == 3 ? q * k * n : 0) + p * n + j];
          s += x * y;
          mag += std::fabs(x * y);
        }
        REQUIRE(test::close(c.data()[q * m * n + i * n + j], s, mag));
      }
}

} // namespace

TEST_CASE_TEMPLATE("matmul shapes against a long double reference", T, float, double, std::int32_t, std::int64_t) {
  const double r = test::is_int<T> ? 20 : 1;
  check(test::random<T, 2>({1, 1}, -r, r), test::random<T, 2>({1, 1}, -r, r));
  check(test::random<T, 2>({17, 33}, -r, r), test::random<T, 2>({33, 9}, -r, r));
  check(test::random<T, 2>({70, 300}, -r, r), test::random<T, 2>({300, 600}, -r, r));  // crosses block edges
  check(test::random<T, 3>({3, 5, 4}, -r, r), test::random<T, 3>({3, 4, 6}, -r, r));
  check(test::random<T, 3>({3, 5, 4}, -r, r), test::random<T, 2>({4, 6}, -r, r));
  check(test::random<T, 2>({5, 4}, -r, r), test::random<T, 3>({2, 4, 6}, -r, r));
  check(test::random<T, 2>({0, 4}, -r, r), test::random<T, 2>({4, 3}, -r, r));
  check(test::random<T, 2>({2, 0}, -r, r), test::random<T, 2>({0, 3}, -r, r));  // k = 0 gives zeros
}

#if defined(TEXPR_GEMM_X86)
// CTest runs these cases again with TEXPR_GEMM_LEVEL=0 and =1 (tests/CMakeLists.txt): check they took that path.
TEST_CASE("matmul uses the kernel TEXPR_GEMM_LEVEL asks for when the CPU has it") {
  const int level = tx::detail::host_impl::gemm_detail::cpu_level();
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
