// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Placement: compile-time promises (static_assert) and the runtime report.
#include "support.hpp"

namespace {

using hf = tx::tensor<float, 2, tx::host>;
using cf = tx::tensor<float, 2, tx::cuda>;
using ci64 = tx::tensor<std::int64_t, 2, tx::cuda>;
using hi32 = tx::tensor<std::int32_t, 2, tx::host>;
using ch = tx::tensor<tx::half, 2, tx::cuda>;
using cd = tx::tensor<double, 2, tx::cuda>;

// Graph types built from declval: the cuda types and registry are visible to any compiler.
template <class T> T& make();

using float_graph_host = decltype(tx::mean(tx::elu(tx::matmul(make<hf>(), make<hf>()) + make<hf>()), 0));
using float_graph_cuda = decltype(tx::mean(tx::elu(tx::matmul(make<cf>(), make<cf>()) + make<cf>()), 0));
using int_matmul_cuda = decltype(tx::matmul(make<ci64>(), make<ci64>()));
using int_mean_host = decltype(tx::mean(make<hi32>()));
using half_graph_cuda = decltype(tx::sum(tx::matmul(make<ch>(), make<ch>()) * 2.0f, 1));
using double_graph_cuda = decltype(tx::matmul(make<cd>(), make<cd>()));

static_assert(tx::runs_on<float_graph_host, tx::host>);
static_assert(!tx::runs_on<float_graph_host, tx::cuda>);  // host leaves are not readable by cuda
static_assert(tx::runs_on<float_graph_cuda, tx::cuda>);
static_assert(!tx::runs_on<float_graph_cuda, tx::host>);
static_assert(!tx::runs_on<int_matmul_cuda, tx::cuda>);
static_assert(std::is_same_v<tx::first_offender_t<int_matmul_cuda, tx::cuda>,
                             tx::diagnostic::no_kernel<tx::op::matmul, tx::dtype::int64, tx::cuda>>);
static_assert(!tx::runs_on<int_mean_host, tx::host>);  // integer mean is not registered: cast first
static_assert(tx::runs_on<decltype(tx::mean(tx::cast<double>(make<hi32>()))), tx::host>);
static_assert(tx::runs_on<half_graph_cuda, tx::cuda>);
static_assert(!tx::runs_on<decltype(tx::matmul(make<ch>(), make<ch>())), tx::host>);
static_assert(tx::runs_on<double_graph_cuda, tx::cuda>);  // unless a user forbids it (see test_user_kernel)

static_assert(tx::has_kernel<tx::op::matmul, float, tx::cuda>);
static_assert(!tx::has_kernel<tx::op::matmul, std::int32_t, tx::cuda>);
static_assert(tx::has_kernel<tx::op::matmul, std::int32_t, tx::host>);
static_assert(!tx::has_kernel<tx::op::exp, std::int32_t, tx::host>);
static_assert(tx::has_kernel<tx::op::mean, tx::bfloat16, tx::cuda>);

// The first offender is the first node evaluation reaches (post-order), so a deeper node is named first.
using two_bad = decltype(tx::mean(tx::matmul(make<ci64>(), make<ci64>())));
static_assert(std::is_same_v<tx::first_offender_t<two_bad, tx::cuda>,
                             tx::diagnostic::no_kernel<tx::op::matmul, tx::dtype::int64, tx::cuda>>);
using leaf_bad = decltype(make<cf>() + make<cf>());
static_assert(std::is_same_v<tx::first_offender_t<leaf_bad, tx::host>,
                             tx::diagnostic::operand_on_other_backend<tx::cuda, tx::host>>);

// GPU architectures. This unit is compiled by a host compiler without TEXPR_CUDA_ARCHS, so cuda graphs are checked
// for sm_75, nvcc's default target.
using cb = tx::tensor<tx::bfloat16, 2, tx::cuda>;
using bf16_matmul_cuda = decltype(tx::matmul(make<cb>(), make<cb>()));
static_assert(std::is_same_v<tx::build_cuda_targets, tx::cuda_targets<75>>);
static_assert(tx::kernel_min_arch_v<tx::op::matmul, tx::bfloat16, tx::cuda> == 80);
static_assert(tx::kernel_min_arch_v<tx::op::matmul, tx::half, tx::cuda> == 0);
static_assert(tx::kernel_min_arch_v<tx::op::matmul, tx::bfloat16, tx::host> == 0);
static_assert(tx::kernel_min_arch_v<tx::op::add, tx::bfloat16, tx::cuda> == 0);
static_assert(tx::has_kernel<tx::op::matmul, tx::bfloat16, tx::cuda>);  // registered: only the targets differ
static_assert(!tx::has_kernel_for<tx::op::matmul, tx::bfloat16, tx::cuda>);
static_assert(tx::has_kernel_for<tx::op::matmul, tx::bfloat16, tx::cuda, tx::cuda_targets<80, 90>>);
static_assert(!tx::runs_on<bf16_matmul_cuda, tx::cuda>);
static_assert(std::is_same_v<tx::first_offender_t<bf16_matmul_cuda, tx::cuda>,
                             tx::diagnostic::kernel_needs_newer_arch<tx::op::matmul, tx::dtype::bfloat16, tx::cuda,
                                                                     tx::sm<75>, tx::sm<80>>>);
static_assert(tx::runs_on_arch<bf16_matmul_cuda, 80>);
static_assert(tx::runs_on_arch<bf16_matmul_cuda, 90>);
static_assert(!tx::runs_on_arch<bf16_matmul_cuda, 90, 75>);  // every listed architecture must run it
static_assert(std::is_same_v<tx::first_offender_t<bf16_matmul_cuda, tx::cuda, tx::cuda_targets<90, 75, 86>>,
                             tx::diagnostic::kernel_needs_newer_arch<tx::op::matmul, tx::dtype::bfloat16, tx::cuda,
                                                                     tx::sm<75>, tx::sm<80>>>);
static_assert(tx::runs_on_arch<half_graph_cuda, 75>);
// bfloat16 elsewhere in a graph is fine on sm_75; only its GEMM needs sm_80.
static_assert(tx::runs_on<decltype(tx::matmul(tx::cast<float>(make<cb>()), tx::cast<float>(make<cb>()))), tx::cuda>);
// The rows say the same as the kernels (the real row of an op that also has a complex one: matmul).
template <class Op> struct row_for {
  template <class Row>
  using is = std::bool_constant<std::is_same_v<typename Row::template op_for<float>, Op> &&
                                !tx::detail::contains_v<typename tx::detail::set_list<typename Row::dtypes>::type, std::complex<float>>>;
};
template <class L> struct only;
template <class R> struct only<tx::detail::type_list<R>> { using type = R; };
template <class Op> using cuda_row = typename only<tx::detail::filter_t<row_for<Op>::template is, tx::cuda_rows>>::type;
using cuda_matmul_row = cuda_row<tx::op::matmul>;
using cuda_scaled_row = cuda_row<tx::op::scaled_matmul>;
static_assert(cuda_scaled_row::min_arch<tx::float8_e4m3> == 89 && cuda_scaled_row::min_arch<std::int8_t> == 75);
static_assert(cuda_matmul_row::min_arch<tx::bfloat16> == 80 && cuda_matmul_row::min_arch<float> == 0);

// 8-bit products: int8 from sm_75, float8_e4m3 from sm_89; cuda has no float8_e5m2 pair (cuBLASLt has none).
using c8 = tx::tensor<std::int8_t, 2, tx::cuda>;
using ce4 = tx::tensor<tx::float8_e4m3, 2, tx::cuda>;
using ce5 = tx::tensor<tx::float8_e5m2, 2, tx::cuda>;
using int8_product = decltype(tx::scaled_matmul(make<c8>(), make<c8>()));
using fp8_product = decltype(tx::scaled_matmul(make<ce4>(), make<ce4>(), 1.0f, 2.0f));
static_assert(std::is_same_v<int8_product::value_type, std::int32_t> && std::is_same_v<fp8_product::value_type, float>);
static_assert(std::is_same_v<fp8_product::kernel_dtype, tx::float8_e4m3>);
static_assert(tx::runs_on<int8_product, tx::cuda>);
static_assert(!tx::runs_on<fp8_product, tx::cuda>);  // sm_75
static_assert(!tx::runs_on_arch<fp8_product, 80>);
static_assert(tx::runs_on_arch<fp8_product, 89, 90>);
static_assert(std::is_same_v<tx::first_offender_t<decltype(tx::scaled_matmul(make<ce5>(), make<ce5>())), tx::cuda>,
                             tx::diagnostic::no_kernel<tx::op::scaled_matmul, tx::dtype::float8_e5m2, tx::cuda>>);
static_assert(tx::runs_on<decltype(tx::scaled_matmul(make<tx::tensor<tx::float8_e5m2, 2>>(), make<tx::tensor<tx::float8_e5m2, 2>>())), tx::host>);

// A user policy for slow rows: int64 products forbidden on sm_86 and sm_89 (a stand-in for float64 GEMMs on
// consumer GPUs, which README shows; this unit's other checks use those).
using prod_i64_cuda = decltype(tx::prod(make<ci64>()));
} // namespace
template <int A>
  requires(A == 86 || A == 89)
struct texpr::forbidden_on_arch<texpr::op::prod, std::int64_t, A> : std::true_type {};
namespace {
static_assert(tx::runs_on<prod_i64_cuda, tx::cuda>);  // sm_75: allowed
static_assert(tx::runs_on_arch<prod_i64_cuda, 80, 90>);
static_assert(!tx::runs_on_arch<prod_i64_cuda, 80, 89>);
static_assert(std::is_same_v<tx::first_offender_t<prod_i64_cuda, tx::cuda, tx::cuda_targets<80, 86, 89>>,
                             tx::diagnostic::kernel_forbidden_on_arch<tx::op::prod, tx::dtype::int64, tx::sm<86>>>);
static_assert(tx::has_kernel_for<tx::op::prod, std::int64_t, tx::cuda>);
static_assert(!tx::has_kernel_for<tx::op::prod, std::int64_t, tx::cuda, tx::cuda_targets<89>>);

} // namespace

TEST_CASE("placement on cuda names the architectures and the rows that need a newer one") {
  tx::tensor<tx::bfloat16, 2> a({4, 8}), b({8, 2});
  const std::string built = tx::placement<tx::cuda>(tx::matmul(a, b));
  INFO(built);
  CHECK(built.find("texpr placement on cuda for sm_75 (DOES NOT RUN)\n") == 0);
  CHECK(built.find("ERROR: cublas_gemm needs sm_80, built for sm_75") != std::string::npos);
  const std::string ampere = tx::placement<tx::cuda, tx::cuda_targets<80, 90>>(tx::matmul(a, b));
  INFO(ampere);
  CHECK(ampere.find("texpr placement on cuda for sm_80, sm_90 (DOES NOT RUN)\n") == 0);  // (host leaves)
  CHECK(ampere.find("cublas_gemm (sm_80+)") != std::string::npos);
  CHECK(ampere.find("needs sm_") == std::string::npos);
  tx::tensor<std::int64_t, 1> n({3});
  const std::string policy = tx::placement<tx::cuda, tx::cuda_targets<80, 89>>(tx::prod(n));
  INFO(policy);
  CHECK(policy.find("ERROR: forbidden on sm_89 by tx::forbidden_on_arch") != std::string::npos);
  CHECK(tx::placement(tx::cast<float>(a)).find("texpr placement on host\n") == 0);  // no architectures on the host
  tx::tensor<tx::float8_e4m3, 2> x({16, 32}), y({32, 16});
  const std::string fp8_host = tx::placement(tx::scaled_matmul(x, y, 0.5f, 2.0f));
  INFO(fp8_host);
  CHECK(fp8_host.find("scaled_matmul                  float8_e4m3 (16, 16)") != std::string::npos);  // the operands' dtype
  CHECK(fp8_host.find("widening_gemm") != std::string::npos);
  CHECK(fp8_host.find("ERROR") == std::string::npos);
  const std::string fp8_ampere = tx::placement<tx::cuda, tx::cuda_targets<80>>(tx::scaled_matmul(x, y));
  CHECK(fp8_ampere.find("ERROR: cublaslt_gemm needs sm_89, built for sm_80") != std::string::npos);
  const std::string fp8_hopper = tx::placement<tx::cuda, tx::cuda_targets<90>>(tx::scaled_matmul(x, y));
  CHECK(fp8_hopper.find("cublaslt_gemm (sm_89+)") != std::string::npos);
}

TEST_CASE("scaled_matmul on the host: int8 exact in int32 (wrapping), FP8 scaled in float") {
  // Hand-checked values: [[1, -2], [127, -128]] x [[3], [4]] = [[-5], [-131]].
  tx::tensor<std::int8_t, 2> a({2, 2}, {1, -2, 127, -128}), b({2, 1}, {3, 4});
  const tx::tensor<std::int32_t, 2> c = tx::scaled_matmul(a, b);
  CHECK(c(0, 0) == -5);
  CHECK(c(1, 0) == 127 * 3 - 128 * 4);
  // 2^31 / (127 * 127) terms of 127 * 127 pass 2^31 and wrap, as texpr's int32 arithmetic does.
  const tx::index_t k = 133160;
  tx::tensor<std::int8_t, 1> v({k});
  for (tx::index_t i = 0; i < k; ++i) v(i) = 127;
  const tx::tensor<std::int32_t, 0> dot = tx::scaled_matmul(v, v);
  const std::int64_t exact = std::int64_t{127 * 127} * k;
  CHECK(dot.item() == static_cast<std::int32_t>(static_cast<std::uint32_t>(exact)));
  CHECK(exact > std::numeric_limits<std::int32_t>::max());
  // FP8: 1.5 * 448 + (-2) * 0.25 = 671.5, times 0.5 * 4.
  tx::tensor<tx::float8_e4m3, 2> x({1, 2}), y({2, 1});
  x(0, 0) = tx::float8_e4m3(1.5f);
  x(0, 1) = tx::float8_e4m3(-2.0f);
  y(0, 0) = tx::float8_e4m3(448.0f);
  y(1, 0) = tx::float8_e4m3(0.25f);
  const tx::tensor<float, 2> z = tx::scaled_matmul(x, y, 0.5f, 4.0f);
  CHECK(z(0, 0) == 1343.0f);
}

TEST_CASE("require_on returns its argument unchanged") {
  hf a({2, 2}, {1, 2, 3, 4});
  auto e = tx::require_on<tx::host>(a * 2.0f);
  tx::tensor<float, 2> r = e;
  CHECK(r(1, 1) == 8.0f);
  const hf& same = tx::require_on<tx::host>(a);
  CHECK(&same == &a);
}

TEST_CASE("placement prints one line per node with op, dtype, shape, backend and kernel") {
  hf x({64, 784}), w({784, 256}), b({1, 256});
  auto g = tx::mean(tx::elu(tx::matmul(x, w) + b), 0);
  const std::string report = tx::placement(g);
  INFO(report);
  CHECK(report.find("texpr placement on host") == 0);
  CHECK(report.find("mean") != std::string::npos);
  CHECK(report.find("pairwise_reduce") != std::string::npos);
  CHECK(report.find("elu") != std::string::npos);
  CHECK(report.find("matmul                   float32  (64, 256)") != std::string::npos);
  CHECK(report.find("blocked_gemm") != std::string::npos);
  CHECK(report.find("(784, 256)") != std::string::npos);
  CHECK(report.find("ERROR") == std::string::npos);
  // 1 header line + 1 column line + 8 nodes: mean, elu, add, matmul, x, w, b, scalar alpha.
  CHECK(std::count(report.begin(), report.end(), '\n') == 10);
  // Asked about cuda, the same graph reports the host leaves it cannot read.
  const std::string on_cuda = tx::placement<tx::cuda>(g);
  CHECK(on_cuda.find("DOES NOT RUN") != std::string::npos);
  CHECK(on_cuda.find("ERROR: lives on host") != std::string::npos);
  const std::string int_mm = tx::placement<tx::cuda>(tx::matmul(tx::cast<std::int64_t>(x), tx::cast<std::int64_t>(w)));
  CHECK(int_mm.find("ERROR: no kernel") != std::string::npos);
  CHECK(int_mm.find("cast<int64>") != std::string::npos);
}
