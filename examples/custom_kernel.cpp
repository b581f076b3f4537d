// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Extending the registry from user code: a new op with a host kernel, and a policy that forbids
// double-precision work on cuda (FP64 can be 32x slower on consumer GPUs).
#include <texpr/texpr.hpp>

#include <cmath>
#include <cstdio>

namespace tx = texpr;

/// softsign(x) = x / (1 + |x|): one functor, written once for every backend.
struct softsign {
  static constexpr std::string_view name = "softsign";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return x / (C(1) + (x < C(0) ? -x : x)); }
};

// One registry line: softsign on float32 runs on the host, by the host's fused elementwise loop (the specialisation
// is the implementation that runs; here it also gets its own name in placement reports).
template <> struct texpr::kernel<softsign, float, texpr::host> : texpr::host_kernels::fused_elementwise {
  static constexpr std::string_view name = "user_softsign";
};

// Policy: no double work on cuda anywhere in this program. Such graphs become compile errors.
template <class Op> struct texpr::forbidden<Op, double, texpr::cuda> : std::true_type {};

template <class T> T& make();

static_assert(!tx::runs_on<decltype(make<tx::tensor<double, 2, tx::cuda>>() * 2.0), tx::cuda>,
              "double on cuda is forbidden by the policy above");
static_assert(tx::runs_on<decltype(make<tx::tensor<float, 2, tx::cuda>>() * 2.0f), tx::cuda>);

int main() {
  tx::tensor<float, 1> x({3}, {-1, 0, 1});
  auto e = tx::map<softsign>(x) * 2.0f;
  static_assert(tx::runs_on<decltype(e), tx::host>);
  std::fputs(tx::placement(e).c_str(), stdout);
  tx::tensor<float, 1> y = e;
  for (int i = 0; i < 3; ++i) {
    const double v = static_cast<double>(x(i));
    const double want = 2 * v / (1 + std::fabs(v));
    std::printf("softsign(%g) * 2 = %.6f\n", static_cast<double>(x(i)), static_cast<double>(y(i)));
    if (std::fabs(static_cast<double>(y(i)) - want) > 1e-5) return 1;
  }
  return 0;
}
