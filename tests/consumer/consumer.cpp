// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A user's program: builds a host graph, checks its placement at compile time, evaluates it.
#include <texpr/texpr.hpp>
#if defined(TEXPR_CONSUMER_FAMILIES)
#include <texpr/fft.hpp>
#include <texpr/linalg.hpp>
#endif

#include <cmath>
#include <complex>
#include <cstdio>

namespace tx = texpr;

#if defined(TEXPR_CONSUMER_EXPECT_VERSION_MAJOR)
static_assert(TEXPR_VERSION_MAJOR == TEXPR_CONSUMER_EXPECT_VERSION_MAJOR &&
                  TEXPR_VERSION_MINOR == TEXPR_CONSUMER_EXPECT_VERSION_MINOR &&
                  TEXPR_VERSION_PATCH == TEXPR_CONSUMER_EXPECT_VERSION_PATCH,
              "texprConfigVersion.cmake and texpr/core/config.hpp disagree");
#endif

int main() {
  tx::tensor<float, 2> a({2, 3}, {1, 2, 3, 4, 5, 6});
  tx::tensor<float, 2> b({2, 3}, {6, 5, 4, 3, 2, 1});
  auto e = a * 2.0f + b;
  static_assert(tx::runs_on<decltype(e), tx::host>);
  tx::tensor<float, 2> r = tx::eval(e);
  const float expected[2][3] = {{8, 9, 10}, {11, 12, 13}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      if (r(i, j) != expected[i][j]) {
        std::printf("consumer: r(%d,%d) = %g, expected %g\n", i, j, static_cast<double>(r(i, j)),
                    static_cast<double>(expected[i][j]));
        return 1;
      }
#if defined(TEXPR_CONSUMER_FAMILIES)
  // The opt-in families through the targets that name them: texpr::linalg (LAPACK's gesv) and texpr::fft.
  tx::tensor<double, 2> m({2, 2}, {4, 1, 2, 3});
  tx::tensor<double, 2> rhs({2, 1}, {1, 2});
  const tx::tensor<double, 2> x = tx::linalg::solve(m, rhs);  // 4 x + y = 1, 2 x + 3 y = 2: x = 0.1, y = 0.6
  if (std::fabs(x(0, 0) - 0.1) > 1e-12 || std::fabs(x(1, 0) - 0.6) > 1e-12) {
    std::printf("consumer: linalg::solve gave (%g, %g), expected (0.1, 0.6)\n", x(0, 0), x(1, 0));
    return 1;
  }
  tx::tensor<double, 1> sig({4}, {1, 2, 3, 4});
  const tx::tensor<std::complex<double>, 1> spec = tx::fft::rfft(sig);  // 10, -2 + 2i, -2
  const std::complex<double> want[3] = {{10, 0}, {-2, 2}, {-2, 0}};
  for (int k = 0; k < 3; ++k)
    if (std::abs(spec(k) - want[k]) > 1e-12) {
      std::printf("consumer: fft::rfft bin %d is (%g, %g), expected (%g, %g)\n", k, spec(k).real(), spec(k).imag(),
                  want[k].real(), want[k].imag());
      return 1;
    }
  std::printf("consumer: texpr::linalg and texpr::fft OK\n");
#endif
  std::printf("consumer: texpr %d.%d.%d OK\n", TEXPR_VERSION_MAJOR, TEXPR_VERSION_MINOR, TEXPR_VERSION_PATCH);
  return 0;
}
