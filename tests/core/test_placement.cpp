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
// The rows say the same as the kernels (matmul is the cuda table's last row).
template <class L> struct last_row;
template <class... R> struct last_row<tx::detail::type_list<R...>> {
  using type = typename decltype((std::type_identity<R>{}, ...))::type;
};
using cuda_matmul_row = last_row<tx::cuda_rows>::type;
static_assert(std::is_same_v<cuda_matmul_row::op_for<float>, tx::op::matmul>);
static_assert(cuda_matmul_row::min_arch<tx::bfloat16> == 80 && cuda_matmul_row::min_arch<float> == 0);

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
