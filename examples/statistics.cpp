// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Column statistics of a data matrix with large means: standardisation with tx::mean and tx::stddev (one pass,
// keepdims so they broadcast back), the sample covariance with tx::transpose and tx::matmul, and tx::var with
// ddof 1 against the covariance's diagonal. Checks itself against two-pass long double loops; exit code 0 only
// if every result agrees within the stated tolerance.
#include <cmath>
#include <cstdio>
#include <random>

#include <texpr/texpr.hpp>

namespace tx = texpr;

int main() {
  constexpr tx::index_t n = 2000, p = 6;
  // Columns around means of 1e4 .. 6e4 with unit-ish spread, correlated through a shared factor.
  std::mt19937 rng(11);
  std::normal_distribution<double> unit(0.0, 1.0);
  tx::tensor<float, 2> x({n, p});
  for (tx::index_t i = 0; i < n; ++i) {
    const double shared = unit(rng);
    for (tx::index_t j = 0; j < p; ++j) x(i, j) = static_cast<float>(1e4 * static_cast<double>(j + 1) + (0.5 + 0.25 * static_cast<double>(j)) * unit(rng) + 0.8 * shared);
  }

  auto mu = tx::mean(x, 0, tx::keepdims);             // (1, p)
  auto sd = tx::stddev(x, 0, 1, tx::keepdims);        // (1, p), ddof 1
  tx::tensor<float, 2> z = (x - mu) / sd;             // standardised columns
  tx::tensor<float, 2> xc = x - mu;                   // centred
  tx::tensor<float, 2> cov = tx::matmul(tx::transpose(xc), xc) / static_cast<float>(n - 1);
  tx::tensor<float, 1> var1 = tx::var(x, 0, 1);
  tx::tensor<float, 1> zmean = tx::mean(z, 0);
  tx::tensor<float, 1> zvar = tx::var(z, 0, 1);

  std::printf("statistics of a %lld x %lld matrix with column means 1e4 .. 6e4\n", static_cast<long long>(n), static_cast<long long>(p));
  std::printf("sample variances (ddof 1):");
  for (tx::index_t j = 0; j < p; ++j) std::printf(" %.4f", static_cast<double>(var1(j)));
  std::printf("\n");

  // Two-pass long double references.
  double worst = 0;
  const auto rel = [&](double got, long double want, long double scale) {
    const double e = static_cast<double>(std::fabs(got - want) / scale);
    if (!(e <= worst)) worst = e;  // NaN makes worst NaN
  };
  long double m[p] = {};
  for (tx::index_t j = 0; j < p; ++j) {
    for (tx::index_t i = 0; i < n; ++i) m[j] += x(i, j);
    m[j] /= n;
  }
  for (tx::index_t a = 0; a < p; ++a)
    for (tx::index_t b = 0; b < p; ++b) {
      long double c = 0;
      for (tx::index_t i = 0; i < n; ++i) c += (x(i, a) - m[a]) * (x(i, b) - m[b]);
      c /= n - 1;
      long double caa = 0, cbb = 0;
      for (tx::index_t i = 0; i < n; ++i) caa += (x(i, a) - m[a]) * (x(i, a) - m[a]), cbb += (x(i, b) - m[b]) * (x(i, b) - m[b]);
      // Covariance relative to sqrt(var_a var_b): the centred values are exact in float only to ulp(6e4) = 0.004.
      rel(static_cast<double>(cov(a, b)), c, std::sqrt(caa * cbb) / (n - 1));
      if (a == b) rel(static_cast<double>(var1(a)), c, c);
    }
  const double cov_error = worst;
  worst = 0;
  for (tx::index_t j = 0; j < p; ++j) rel(static_cast<double>(zmean(j)), 0, 1);
  const double mean_error = worst;
  worst = 0;
  for (tx::index_t j = 0; j < p; ++j) rel(static_cast<double>(zvar(j)), 1, 1);
  std::printf("max relative error of the covariance and variances: %.2g; standardised columns: |mean - 0| %.2g, "
              "|variance - 1| %.2g\n", cov_error, mean_error, worst);
  // Tolerances: 1e-2 for the covariance (float centring rounds at ulp(6e4) = 0.004 against spreads of 0.9 to 1.9);
  // 4e-3 for the standardised means (the float column mean itself is only exact to half an ulp of 6e4, 0.002,
  // over a spread of 0.9); 1e-4 for the standardised variances. A naive E[x^2] - E[x]^2 in float misses the
  // variances by more than 100%.
  const bool ok = cov_error <= 1e-2 && mean_error <= 4e-3 && worst <= 1e-4;
  std::puts(ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
