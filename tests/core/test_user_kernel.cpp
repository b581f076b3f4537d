// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// User extensions: a new op with a host kernel, a new kernel for an existing op, and a forbidden kernel.
#include "support.hpp"

namespace {

/// softplus(x) = log(1 + e^x), a user-defined elementwise op.
struct softplus {
  static constexpr std::string_view name = "softplus";
  template <class C> static C apply(C x) { return x > C(20) ? x : std::log1p(std::exp(x)); }
};

} // namespace

// Registered for float on host only: the specialisation is the implementation that runs (the host's fused loop),
// here under its own name in placement reports.
template <> struct texpr::kernel<softplus, float, texpr::host> : texpr::host_kernels::fused_elementwise {
  static constexpr std::string_view name = "user_softplus";
};
// A user kernel for an existing op and a new dtype: exp on long double is not built in.
template <> struct texpr::kernel<texpr::op::exp, long double, texpr::host> : texpr::host_kernels::fused_elementwise {
  static constexpr std::string_view name = "user_exp_long_double";
};
// Forbid all double work on cuda, as a user with a consumer GPU (slow FP64) would.
template <class Op> struct texpr::forbidden<Op, double, texpr::cuda> : std::true_type {};

namespace {
template <class T> T& make();
using cd = tx::tensor<double, 2, tx::cuda>;
using cf = tx::tensor<float, 2, tx::cuda>;
static_assert(tx::registered_kernel<tx::op::matmul, double, tx::cuda>);
static_assert(!tx::has_kernel<tx::op::matmul, double, tx::cuda>);
static_assert(!tx::runs_on<decltype(tx::matmul(make<cd>(), make<cd>())), tx::cuda>);
static_assert(std::is_same_v<tx::first_offender_t<decltype(make<cd>() + make<cd>()), tx::cuda>,
                             tx::diagnostic::kernel_forbidden<tx::op::add, tx::dtype::float64, tx::cuda>>);
static_assert(tx::runs_on<decltype(tx::matmul(make<cf>(), make<cf>())), tx::cuda>);  // float unaffected
static_assert(tx::runs_on<decltype(tx::map<softplus>(make<tx::tensor<float, 1>>())), tx::host>);
static_assert(!tx::runs_on<decltype(tx::map<softplus>(make<tx::tensor<double, 1>>())), tx::host>);
} // namespace

TEST_CASE("a user op runs through the fused host loop and shows in placement") {
  tx::tensor<float, 1> x({4}, {-30, 0, 1, 30});
  tx::tensor<float, 1> y = tx::map<softplus>(x * 1.0f);
  for (tx::index_t i = 0; i < 4; ++i) {
    const long double v = x(i);
    CHECK(static_cast<long double>(y(i)) == doctest::Approx(static_cast<double>(std::log1p(std::exp(v)))).epsilon(1e-6));
  }
  const auto report = tx::placement(tx::map<softplus>(x));
  CHECK(report.find("softplus") != std::string::npos);
  CHECK(report.find("user_softplus") != std::string::npos);
}

TEST_CASE("a user kernel for a new dtype of a built-in op") {
  tx::tensor<long double, 1> x({2}, {0.0L, 1.0L});
  tx::tensor<long double, 1> y = tx::exp(x);
  CHECK(y(0) == 1.0L);
  CHECK(std::fabs(y(1) - std::exp(1.0L)) < 1e-18L);
  CHECK(tx::placement(tx::exp(x)).find("user_exp_long_double") != std::string::npos);
}

TEST_CASE("a forbidden kernel reads as an error in the placement report") {
  tx::tensor<double, 2> a({2, 2});
  const auto report = tx::placement<tx::cuda>(tx::matmul(a, a));
  CHECK(report.find("ERROR: forbidden by tx::forbidden") != std::string::npos);
  CHECK(tx::placement(tx::matmul(a, a)).find("ERROR") == std::string::npos);  // host double is fine
}
