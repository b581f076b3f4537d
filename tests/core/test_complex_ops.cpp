// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Complex layouts, concat, ==, !=, where, prod and matmul on the host against NumPy's values (committed fixture
// tests/core/fixtures/complex_ops.npz from numpy_complex_ops.py; NumPy's results in complex128 from the dtype's
// values), with transposed, reversed and broadcast (non-contiguous) operands, and placement.
// Tolerances: layouts, concat, where and the comparisons exactly (a NaN part matches a NaN part); prod within
// n ulp of the real type times the product of the moduli (n factors); matmul within k ulp times (|A| |B|)_ij, the
// bound of a k-term sum of products (2^-23 k for complex64, 2^-52 k for complex128).
#include "core/support.hpp"

#include <texpr/interop/npz.hpp>

#include <complex>
#include <cstdlib>
#include <string>

namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using lc = std::complex<long double>;

static_assert(tx::has_kernel<tx::op::transpose, c64, tx::host> && tx::has_kernel<tx::op::concat, c128, tx::host> &&
              tx::has_kernel<tx::op::where, c64, tx::host> && tx::has_kernel<tx::op::equal, c128, tx::host> &&
              tx::has_kernel<tx::op::prod, c64, tx::host> && tx::has_kernel<tx::op::matmul, c128, tx::host>);
static_assert(tx::has_kernel<tx::op::matmul, c64, tx::cuda> && tx::has_kernel<tx::op::broadcast_to, c128, tx::cuda> &&
              tx::has_kernel<tx::op::not_equal, c64, tx::cuda> && tx::has_kernel<tx::op::prod, c128, tx::cuda>);
static_assert(tx::kernel<tx::op::matmul, c64, tx::host>::name == "complex_gemm" &&
              tx::kernel<tx::op::matmul, c128, tx::cuda>::name == "cublas_gemm");
// still unordered: == and != only
static_assert(!tx::has_kernel<tx::op::less_equal, c64, tx::host> && !tx::has_kernel<tx::op::min, c128, tx::cuda>);

std::string fixture() {
  const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
  REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
  return std::string(dir) + "/complex_ops.npz";
}

/// The complex tensor of dtype T stored as NAME_re / NAME_im (float64) in the fixture.
template <class T, std::size_t R> tx::tensor<T, R> parts(const tx::npz_archive& f, const std::string& name) {
  const auto re = f.get<double, R>(name + "_re");
  const auto im = f.get<double, R>(name + "_im");
  tx::tensor<T, R> z(re.shape());
  using P = tx::real_of_t<T>;
  for (tx::index_t k = 0; k < re.size(); ++k) z.data()[k] = T(static_cast<P>(re.data()[k]), static_cast<P>(im.data()[k]));
  return z;
}

template <class T> lc wide(T z) { return {static_cast<long double>(z.real()), static_cast<long double>(z.imag())}; }

/// got == want element for element, both parts (NaN matches NaN), shapes equal.
template <class T, std::size_t R> void check_exact(const tx::tensor<T, R>& got, const tx::tensor<T, R>& want, const std::string& what) {
  REQUIRE_MESSAGE(got.shape() == want.shape(), what);
  int failures = 0;
  const auto same = [](auto a, auto b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (tx::index_t k = 0; k < got.size(); ++k) {
    const T g = got.data()[k], w = want.data()[k];
    if (!(same(g.real(), w.real()) && same(g.imag(), w.imag())) && failures++ < 10)
      FAIL_CHECK(what << " element " << k << ": got " << g.real() << " + " << g.imag() << "i, NumPy " << w.real() << " + " << w.imag() << "i");
  }
  REQUIRE(failures == 0);
}

/// |got - want| <= tol * scale(k) for every element.
template <class T, std::size_t R, class S>
void check_close(const tx::tensor<T, R>& got, const tx::tensor<T, R>& want, S scale, long double tol, const std::string& what) {
  REQUIRE_MESSAGE(got.shape() == want.shape(), what);
  int failures = 0;
  for (tx::index_t k = 0; k < got.size(); ++k) {
    const long double err = std::abs(wide(got.data()[k]) - wide(want.data()[k]));
    if (!(err <= tol * scale(k)) && failures++ < 10)
      FAIL_CHECK(what << " element " << k << ": got " << got.data()[k].real() << " + " << got.data()[k].imag() << "i, NumPy "
                      << want.data()[k].real() << " + " << want.data()[k].imag() << "i, error " << static_cast<double>(err)
                      << " bound " << static_cast<double>(tol * scale(k)));
  }
  REQUIRE(failures == 0);
}

template <class T> constexpr long double ulp = std::is_same_v<T, c64> ? 0x1p-23L : 0x1p-52L;

template <class T> void check_layouts(const std::string& d) {
  const auto f = tx::load_npz(fixture());
  const auto x = parts<T, 3>(f, "x_" + d);
  const auto w = parts<T, 3>(f, "w_" + d);
  check_exact(tx::eval(tx::transpose(x)), parts<T, 3>(f, "transpose_" + d), "transpose");
  check_exact(tx::eval(tx::permute(x, {2, 0, 1})), parts<T, 3>(f, "permute_" + d), "permute");
  check_exact(tx::eval(tx::reshape(tx::transpose(x), {-1})), parts<T, 1>(f, "reshape_t_" + d), "reshape of a transpose");
  check_exact(tx::eval(tx::slice(tx::slice(x, 1, -1, -100, -2), 2, 1, 4)), parts<T, 3>(f, "slice_" + d), "slice (reversed)");
  check_exact(tx::eval(tx::squeeze(tx::slice(x, 1, 1, 2), 1)), parts<T, 2>(f, "squeeze_" + d), "squeeze of a slice");
  check_exact(tx::eval(tx::broadcast_to(tx::slice(x, 1, 0, 1), {2, 2, 3, 4})), parts<T, 4>(f, "broadcast_" + d), "broadcast_to");
  const auto u = tx::eval(tx::unsqueeze(tx::transpose(x), -1));
  REQUIRE(u.shape() == tx::shape_t<4>{2, 4, 3, 1});
  check_exact(tx::eval(tx::reshape(u, {2, 4, 3})), parts<T, 3>(f, "transpose_" + d), "unsqueeze of a transpose");
  check_exact(tx::eval(tx::concat(-1, x, tx::transpose(w))), parts<T, 3>(f, "concat_" + d), "concat with a transpose");
  // a layout inside an elementwise tree: conj of a permuted operand
  const auto pc = tx::eval(tx::conj(tx::permute(x, {2, 0, 1})));
  const auto pw = parts<T, 3>(f, "permute_" + d);
  tx::tensor<T, 3> want_conj(pw.shape());
  for (tx::index_t k = 0; k < pw.size(); ++k) want_conj.data()[k] = std::conj(pw.data()[k]);
  check_exact(pc, want_conj, "conj of a permute");
}

template <class T> void check_compare_where_prod(const std::string& d) {
  const auto f = tx::load_npz(fixture());
  const auto x = parts<T, 3>(f, "x_" + d);
  const auto y = parts<T, 3>(f, "y_" + d);
  const auto eq = f.get<double, 3>("equal_" + d), ne = f.get<double, 3>("not_equal_" + d);
  const tx::tensor<bool, 3> ge = x == y, gn = x != y;
  // compared through a transpose too (strided operands)
  const tx::tensor<bool, 3> gt = tx::transpose(x) == tx::transpose(y);
  int failures = 0, equal = 0;
  for (tx::index_t k = 0; k < eq.size(); ++k) {
    equal += eq.data()[k] != 0;
    if ((ge.data()[k] != (eq.data()[k] != 0) || gn.data()[k] != (ne.data()[k] != 0)) && failures++ < 10)
      FAIL_CHECK("== / != element " << k << ": got " << ge.data()[k] << ", " << gn.data()[k] << " NumPy " << eq.data()[k] << ", " << ne.data()[k]);
  }
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 4; ++j)
      for (tx::index_t k = 0; k < 3; ++k) failures += gt(i, j, k) != (eq(i, k, j) != 0);
  REQUIRE(failures == 0);
  REQUIRE(equal > 0);
  REQUIRE(equal < eq.size());
  check_exact(tx::eval(tx::where(tx::real(x) > 0, x, y)), parts<T, 3>(f, "where_" + d), "where");
  // where with a real scalar branch (0 + 0j), broadcast
  const auto ws = tx::eval(tx::where(x == y, x, tx::real_of_t<T>(0)));
  for (tx::index_t k = 0; k < x.size(); ++k) failures += !(eq.data()[k] != 0 ? ws.data()[k] == x.data()[k] : ws.data()[k] == T(0));
  REQUIRE(failures == 0);

  const auto p = parts<T, 2>(f, "p_" + d);
  const auto modulus_product = [&](auto element, tx::index_t n) {
    long double s = 1;
    for (tx::index_t j = 0; j < n; ++j) s *= std::abs(wide(element(j)));
    return s;
  };
  const tx::index_t rows = p.shape()[0], cols = p.shape()[1];
  check_close(tx::eval(tx::prod(p)), parts<T, 0>(f, "prod_" + d),
              [&](tx::index_t) { return modulus_product([&](tx::index_t j) { return p.data()[j]; }, rows * cols); },
              static_cast<long double>(rows * cols) * ulp<T>, "prod");
  check_close(tx::eval(tx::prod(p, 0)), parts<T, 1>(f, "prod0_" + d),
              [&](tx::index_t c) { return modulus_product([&](tx::index_t r) { return p(r, c); }, rows); },
              static_cast<long double>(rows) * ulp<T>, "prod along axis 0");
  check_close(tx::eval(tx::prod(tx::transpose(p), 0)), parts<T, 1>(f, "prod1t_" + d),
              [&](tx::index_t r) { return modulus_product([&](tx::index_t c) { return p(r, c); }, cols); },
              static_cast<long double>(cols) * ulp<T>, "prod of a transpose along axis 0");
  // empty: 1 + 0j, as NumPy
  const tx::tensor<T, 1> none({0});
  const tx::tensor<T, 0> one = tx::prod(none);
  REQUIRE(one() == T(1));
}

template <class T> void check_matmul(const std::string& d) {
  const auto f = tx::load_npz(fixture());
  const auto a = parts<T, 3>(f, "a_" + d), at = parts<T, 3>(f, "at_" + d), c = parts<T, 3>(f, "c_" + d);
  const auto b = parts<T, 2>(f, "b_" + d), bt = parts<T, 2>(f, "bt_" + d);
  const auto scale = f.get<double, 3>("abs_mm_" + d), scale_batch = f.get<double, 3>("abs_mm_batch_" + d);
  const long double tol = 5 * ulp<T>;  // k = 5 terms
  const auto s = [&](tx::index_t k) { return static_cast<long double>(scale.data()[k]); };
  check_close(tx::eval(tx::matmul(a, b)), parts<T, 3>(f, "mm_" + d), s, tol, "matmul (batch x broadcast)");
  check_close(tx::eval(tx::matmul(tx::transpose(at), tx::transpose(bt))), parts<T, 3>(f, "mm_t_" + d), s, tol,
              "matmul of transposed operands");
  check_close(tx::eval(tx::matmul(a, c)), parts<T, 3>(f, "mm_batch_" + d),
              [&](tx::index_t k) { return static_cast<long double>(scale_batch.data()[k]); }, tol, "matmul (batch x batch)");
  // a complex expression as an operand, and an empty k: zeros
  check_close(tx::eval(tx::matmul(tx::conj(tx::conj(a)), b)), parts<T, 3>(f, "mm_" + d), s, tol, "matmul of an expression");
  const tx::tensor<T, 2> ek({3, 0}), ekb({0, 2});
  const tx::tensor<T, 2> z = tx::matmul(ek, ekb);
  for (tx::index_t k = 0; k < z.size(); ++k) REQUIRE(z.data()[k] == T(0));
}

} // namespace

TEST_CASE("complex layouts and concat against NumPy (transposed, reversed, broadcast operands)") {
  check_layouts<c64>("complex64");
  check_layouts<c128>("complex128");
}

TEST_CASE("complex ==, != (NaN unequal), where and prod against NumPy") {
  check_compare_where_prod<c64>("complex64");
  check_compare_where_prod<c128>("complex128");
}

TEST_CASE("complex matmul against NumPy: batches, broadcast, transposed operands") {
  check_matmul<c64>("complex64");
  check_matmul<c128>("complex128");
}

TEST_CASE("complex matmul: placement names complex_gemm, and the kernel log agrees") {
  tx::tensor<c64, 2> a({4, 3}), b({3, 2});
  const auto e = tx::matmul(a, b);
  const std::string report = tx::placement(e);
  CHECK_MESSAGE(report.find("complex_gemm") != std::string::npos, report);
  CHECK_MESSAGE(report.find("complex64") != std::string::npos, report);
}
