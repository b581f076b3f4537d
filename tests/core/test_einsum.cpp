// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::einsum against np.einsum on 60 subscript strings (20 classic ones and 40 drawn by a seeded generator:
// implicit and explicit outputs, diagonals and traces, '...' with broadcast axes, rank-0 operands; committed
// fixture tests/core/fixtures/einsum.npz and einsum_cases.inc from numpy_einsum.py), the lowered graph that
// tx::placement shows, and the errors.
#include "core/support.hpp"

#include <texpr/interop/npz.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

namespace {

std::string fixture() {
  const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
  REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
  return std::string(dir) + "/einsum.npz";
}

/// Case k: einsum<S> of the operands a_k (and b_k) against np.einsum's out_k, element for element within 1e-12
/// relative to the sum of the magnitudes of the terms each element adds (bounded by the same einsum of |a| and |b|).
template <tx::einsum_subscripts S, int Operands, std::size_t RA, std::size_t RB> void run_case(const tx::npz_archive& f, int k) {
  const std::string n = std::to_string(k);
  INFO("case " << k << ": \"" << S.text << "\"");
  const auto a = f.get<double, RA>("a_" + n);
  auto check = [&](const auto& got, const auto& scale) {
    constexpr std::size_t R = std::remove_cvref_t<decltype(got)>::rank;
    const auto want = f.get<double, R>("out_" + n);
    REQUIRE(got.shape() == want.shape());
    int bad = 0;
    for (tx::index_t i = 0; i < want.size(); ++i) {
      const double g = got.data()[i], w = want.data()[i], s = scale.data()[i];
      if (!(std::fabs(g - w) <= 1e-12 * (1 + s))) ++bad;
    }
    CHECK(bad == 0);
  };
  if constexpr (Operands == 1) {
    const auto got = tx::eval(tx::einsum<S>(a));
    check(got, tx::eval(tx::einsum<S>(tx::abs(a))));
  } else {
    const auto b = f.get<double, RB>("b_" + n);
    const auto got = tx::eval(tx::einsum<S>(a, b));
    check(got, tx::eval(tx::einsum<S>(tx::abs(a), tx::abs(b))));
  }
}

}  // namespace

TEST_CASE("einsum: 60 subscript strings against np.einsum") {
  const auto f = tx::load_npz(fixture());
#define TEXPR_EINSUM_CASE(K, SPEC, OPERANDS, RA, RB) run_case<SPEC, OPERANDS, RA, RB>(f, K);
#include "core/fixtures/einsum_cases.inc"
#undef TEXPR_EINSUM_CASE
}

TEST_CASE("einsum: lowered to one matmul, read in place, with no copy; tx::placement shows it") {
  const tx::tensor<float, 3> a = tx::random::normal<float>({4, 8, 16}, 1), b = tx::random::normal<float>({4, 32, 16}, 2);
  const auto e = tx::einsum<"bij,bkj->bik">(a, b);  // b transposed: a view cuBLAS and the host GEMM read as they are
  const std::string plan = tx::placement(e);
  CHECK(plan.find("matmul") != std::string::npos);
  CHECK(plan.find("permute") != std::string::npos);
  CHECK(plan.find("copied") == std::string::npos);
  tx::kernel_log log;
  const tx::tensor<float, 3> c = e;
  CHECK(log.entries().size() == 1);
  CHECK(log.count("blocked_gemm") == 1);
  const tx::tensor<float, 3> r = tx::matmul(a, tx::transpose(b));
  for (tx::index_t i = 0; i < c.size(); ++i) CHECK(c.data()[i] == r.data()[i]);
  // an output of (right, left): computed as n^T m^T, no permute of the product
  const tx::tensor<float, 2> m = tx::random::normal<float>({8, 16}, 3), n = tx::random::normal<float>({16, 5}, 4);
  tx::kernel_log log2;
  const tx::tensor<float, 2> t = tx::einsum<"ij,jk->ki">(m, n);
  CHECK(log2.entries().size() == 1);  // no copy after the GEMM
  CHECK(t.shape() == tx::shape_t<2>{5, 8});
  // a dot product per row: one fused reduction of the product, no GEMM
  tx::kernel_log log3;
  const tx::tensor<float, 1> d = tx::einsum<"ij,ij->i">(m, m);
  CHECK(log3.entries().size() == 1);
  CHECK(log3.count("pairwise_reduce") == 1);
  (void)d;
}

TEST_CASE("einsum: extents that disagree name the label, both operands and their shapes") {
  const tx::tensor<double, 2> a({2, 3}), b({4, 5});
  CHECK_THROWS_WITH_AS(tx::einsum<"ij,jk->ik">(a, b),
                       doctest::Contains("einsum \"ij,jk->ik\": label 'j' has extent 3 in operand 0 (shape (2, 3)) and 4 in operand 1 (shape (4, 5))"),
                       tx::shape_error);
  const tx::tensor<double, 2> c({2, 3});
  CHECK_THROWS_WITH_AS(tx::einsum<"ii">(c), doctest::Contains("label 'i' has extent 2"), tx::shape_error);
  const tx::tensor<double, 3> d({2, 3, 4}), e({5, 4, 2});
  CHECK_THROWS_WITH_AS(tx::einsum<"...ij,...jk">(d, e), doctest::Contains("an axis of '...' has extent 2"), tx::shape_error);
}
