// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A user's program: builds a host graph, checks its placement at compile time, evaluates it.
#include <texpr/texpr.hpp>

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
  std::printf("consumer: texpr %d.%d.%d OK\n", TEXPR_VERSION_MAJOR, TEXPR_VERSION_MINOR, TEXPR_VERSION_PATCH);
  return 0;
}
