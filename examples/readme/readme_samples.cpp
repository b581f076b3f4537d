// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The README's code samples, cut from here by tools/update_readme.py (regions between `// [readme:NAME]` and
// `// [readme:end]`; regions with one name join with a blank line). `readme_samples NAME` prints what the README
// shows as NAME's output; without arguments every sample runs and checks itself (CTest: example.readme_samples).
// clang-format stays off in the regions: the README shows them as written.
// clang-format off
// [readme:quickstart]
#include <texpr/texpr.hpp>
#include <iostream>
namespace tx = texpr;
// [readme:end]
// clang-format on

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <tuple>

// clang-format off
// [readme:extending]
struct softsign {                               // a new op: one functor for every backend
  static constexpr std::string_view name = "softsign";
  template <class C> TEXPR_HOST_DEVICE static C apply(C x) { return x / (C(1) + (x < C(0) ? -x : x)); }
};
// One registry line: softsign on float32 runs on the host by the host's fused elementwise loop.
template <> struct texpr::kernel<softsign, float, texpr::host> : texpr::host_kernels::fused_elementwise {
  static constexpr std::string_view name = "user_softsign";   // its name in placement reports
};
// Forbid all double work on cuda (FP64 is up to 32x slower on consumer GPUs):
template <class Op> struct texpr::forbidden<Op, double, texpr::cuda> : std::true_type {};
// Or only where it is slow: float64 GEMMs when the build targets a consumer GPU (sm_86, sm_89, sm_120).
template <int Arch> requires(Arch == 86 || Arch == 89 || Arch == 120)
struct texpr::forbidden_on_arch<texpr::op::matmul, double, Arch> : std::true_type {};
// [readme:end]
// clang-format on

namespace {

bool near(double got, double want, const char* what) {
  if (std::fabs(got - want) <= 1e-5 * (1 + std::fabs(want))) return true;
  std::fprintf(stderr, "readme_samples: %s is %.7g, expected %.7g\n", what, got, want);
  return false;
}

// Prints the graph's placement (the README shows this output), then checks the value against plain loops.
bool quickstart() {
  // clang-format off
  // [readme:quickstart]
  tx::tensor<float, 2> x = tx::random::normal<float>({4, 3}, 1), w = tx::random::normal<float>({3, 2}, 2);
  tx::tensor<float, 1> b({2}, {0.1f, -0.2f});
  auto graph = tx::mean(tx::elu(tx::matmul(x, w) + b), 0);   // lazy
  static_assert(tx::runs_on<decltype(graph), tx::host>);
  std::cout << tx::placement(graph);
  tx::tensor<float, 1> m = graph;                              // runs here
  // [readme:end]
  // clang-format on
  bool ok = true;
  for (int j = 0; j < 2; ++j) {
    double expect = 0;
    for (int i = 0; i < 4; ++i) {
      double z = static_cast<double>(b(j));
      for (int k = 0; k < 3; ++k) z += static_cast<double>(x(i, k)) * static_cast<double>(w(k, j));
      expect += z > 0 ? z : std::expm1(z);
    }
    ok &= near(static_cast<double>(m(j)), expect / 4, "quickstart mean");
  }
  return ok;
}

bool making_tensors() {
  // clang-format off
  // [readme:making-tensors]
  tx::tensor<float, 2> a({2, 3});                        // zero-filled, shape (2, 3)
  tx::tensor<float, 2> b({2, 3}, {1, 2, 3, 4, 5, 6});    // from values (row-major); a count mismatch throws
  tx::tensor<float, 2> z = tx::zeros<float>({2, 3});     // also tx::ones<float>(shape)
  tx::tensor<float, 2> f = tx::full({2, 3}, 1.5f);       // dtype from the value; tx::full<tx::cuda>(...) on the GPU
  tx::tensor<float, 1> r = tx::arange<float>(0, 10, 2);  // 0 2 4 6 8 (a lazy generator, fused into what reads it)
  tx::tensor<float, 2> n = tx::random::normal<float>({2, 3}, 42);  // also random::uniform: Philox, same numbers on host and cuda
  auto c = b.clone();                                    // tensors are move-only; clone() is the deep copy
  // [readme:end]
  // clang-format on
  bool ok = near(static_cast<double>(a(1, 2)), 0, "a(1, 2)") && near(static_cast<double>(z(1, 2)), 0, "z(1, 2)") &&
            near(static_cast<double>(f(1, 2)), 1.5, "f(1, 2)") && near(static_cast<double>(r(4)), 8, "r(4)") &&
            near(static_cast<double>(c(1, 2)), 6, "c(1, 2)") && r.shape()[0] == 5;
  double spread = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) spread += std::fabs(static_cast<double>(n(i, j)));
  if (!(spread > 0)) {
    std::fprintf(stderr, "readme_samples: random::normal gave all zeros\n");
    ok = false;
  }
  return ok;
}

bool extending() {
  // clang-format off
  // [readme:extending]
  tx::tensor<float, 1> x({3}, {-1, 0, 1});
  auto y = tx::map<softsign>(x);
  // [readme:end]
  // clang-format on
  static_assert(tx::runs_on<decltype(y), tx::host>);
  tx::tensor<float, 1> v = y;
  return near(static_cast<double>(v(0)), -0.5, "softsign(-1)") && near(static_cast<double>(v(2)), 0.5, "softsign(1)");
}

// Fits a linear model with AdamW under a warm-up + cosine schedule; checks it recovers the true coefficients.
bool training() {
  // clang-format off
  // [readme:training]
  tx::tensor<float, 2> x = tx::random::normal<float>({256, 3}, 7), w({3, 1});  // data and a linear model
  tx::tensor<float, 1> b({1});
  tx::tensor<float, 2> y = tx::matmul(x, tx::tensor<float, 2>({3, 1}, {1.5f, -2.0f, 0.5f})) + 0.25f;

  tx::optim::adamw opt(std::tie(w, b), {.weight_decay = 1e-4});
  const tx::optim::warmup_cosine schedule{.lr = 0.1, .warmup_steps = 20, .total_steps = 300};
  for (int step = 0; step < 300; ++step) {
    auto pw = tx::param<struct w_tag>(w);
    auto pb = tx::param<struct b_tag>(b);
    auto loss = tx::mean(tx::square(tx::matmul(x, pw) + pb - y));
    opt.step(tx::eval_all(tx::value_and_grad(loss, pw, pb)), schedule(step));  // (loss, dw, db): loss skipped
  }
  // [readme:end]
  // clang-format on
  const double want[] = {1.5, -2.0, 0.5};
  bool ok = std::fabs(static_cast<double>(b(0)) - 0.25) <= 1e-2;
  for (int i = 0; i < 3; ++i) ok &= std::fabs(static_cast<double>(w(i, 0)) - want[i]) <= 1e-2;
  if (!ok)
    std::fprintf(stderr, "readme_samples: training gave w = (%g, %g, %g), b = %g; expected (1.5, -2, 0.5), 0.25\n",
                 static_cast<double>(w(0, 0)), static_cast<double>(w(1, 0)), static_cast<double>(w(2, 0)),
                 static_cast<double>(b(0)));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  struct sample {
    const char* name;
    bool (*run)();
  };
  const sample samples[] = {{"quickstart", quickstart}, {"making-tensors", making_tensors}, {"extending", extending},
                            {"training", training}};
  if (argc > 2) {
    std::fprintf(stderr, "usage: readme_samples [NAME]\n");
    return 2;
  }
  bool ok = true, found = argc == 1;
  for (const sample& s : samples) {
    if (argc == 2 && std::strcmp(argv[1], s.name) != 0) continue;
    found = true;
    // Only the named sample's output goes to stdout: that is the text the README shows.
    if (argc == 1) std::cout.setstate(std::ios::failbit);
    ok &= s.run();
    std::cout.clear();
  }
  if (!found) {
    std::fprintf(stderr, "readme_samples: no sample named %s\n", argv[1]);
    return 2;
  }
  if (argc == 1) std::printf(ok ? "ok\n" : "FAILED\n");
  return ok ? 0 : 1;
}
