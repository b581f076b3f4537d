// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program in compiled mode (TEXPR_COMPILED_KERNELS): this TU declares the GEMM family extern (the symbols test
// checks its object), kernels.cpp compiles it, and products through every GEMM path match a long double reference.
#include <doctest/doctest.h>
#include <texpr/texpr.hpp>

#include <cmath>
#include <random>

namespace tx = texpr;

namespace {

template <class T> tx::tensor<T, 2> random_matrix(tx::index_t r, tx::index_t c, std::mt19937& g) {
  tx::tensor<T, 2> t({r, c});
  std::uniform_real_distribution<double> u(-2, 2);
  for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(u(g));
  return t;
}

// elu(a b + bias) in long double, row-major.
template <class T> long double reference(const tx::tensor<T, 2>& a, const tx::tensor<T, 2>& b, const tx::tensor<T, 1>& bias,
                                         tx::index_t i, tx::index_t j) {
  long double s = bias(j);
  for (tx::index_t p = 0; p < a.shape()[1]; ++p) s += static_cast<long double>(a(i, p)) * b(p, j);
  return s > 0 ? s : std::expm1(s);
}

template <class T> void check_products(double tolerance) {
  std::mt19937 g(7);
  // (m, k, n): the blocked path with edges, the skinny path (n <= 12, k >= 32), k = 0, one row.
  const tx::index_t cases[][3] = {{37, 53, 29}, {128, 256, 10}, {5, 0, 7}, {1, 300, 65}};
  for (const auto& c : cases) {
    const auto a = random_matrix<T>(c[0], c[1], g), b = random_matrix<T>(c[1], c[2], g);
    auto bias = tx::tensor<T, 1>({c[2]});
    for (tx::index_t j = 0; j < c[2]; ++j) bias(j) = static_cast<T>(0.1 * static_cast<double>(j % 7) - 0.3);
    const tx::tensor<T, 2> plain = tx::matmul(a, b);               // blocked_gemm
    const tx::tensor<T, 2> fused = tx::elu(tx::matmul(a, b) + bias);  // blocked_gemm_epilogue
    for (tx::index_t i = 0; i < c[0]; ++i)
      for (tx::index_t j = 0; j < c[2]; ++j) {
        const long double want = reference(a, b, bias, i, j);
        long double dot = 0;
        for (tx::index_t p = 0; p < c[1]; ++p) dot += static_cast<long double>(a(i, p)) * b(p, j);
        INFO("m " << c[0] << " k " << c[1] << " n " << c[2] << " at (" << i << ", " << j << ")");
        CHECK(std::abs(static_cast<long double>(plain(i, j)) - dot) <= tolerance * (1 + std::abs(dot)) * std::sqrt(c[1] + 1.0));
        CHECK(std::abs(static_cast<long double>(fused(i, j)) - want) <= tolerance * (1 + std::abs(want)) * std::sqrt(c[1] + 1.0));
      }
  }
}

} // namespace

TEST_CASE("compiled mode: float and double products, plain and with an epilogue, match a long double reference") {
  check_products<float>(4e-6);   // a few float ulps per sqrt(k) terms
  check_products<double>(1e-14);
}
