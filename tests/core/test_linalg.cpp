// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Linear algebra (cholesky, solves, inv, slogdet, det) on the host beyond the registry's row checks (tests/core/registry_checks.hpp): NumPy's results
// (committed fixture tests/core/fixtures/linalg.npz from numpy_linalg.py: batches, an ill-conditioned matrix,
// noise in the triangle an op must not read), strided and expression operands, errors that name the op, the batch
// index and LAPACK's info, empty batches, order 0 and 1, threads, placement and the kernel log.
#include <doctest/doctest.h>
#include <texpr/interop/npz.hpp>
#include <texpr/linalg.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tx = texpr;

namespace {

std::string fixture() {
  const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
  REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
  return std::string(dir) + "/linalg.npz";
}

/// max |got - want| / (1 + max |want|), over the first `batches` matrices.
template <class T> double relative_error(const tx::tensor<T, 3>& got, const tx::tensor<double, 3>& want, tx::index_t batches) {
  REQUIRE(got.shape()[1] == want.shape()[1]);
  REQUIRE(got.shape()[2] == want.shape()[2]);
  double err = 0, mag = 0;
  for (tx::index_t q = 0; q < batches; ++q)
    for (tx::index_t i = 0; i < want.shape()[1]; ++i)
      for (tx::index_t j = 0; j < want.shape()[2]; ++j) {
        err = std::max(err, std::abs(static_cast<double>(got(q, i, j)) - want(q, i, j)));
        mag = std::max(mag, std::abs(want(q, i, j)));
      }
  return err / (1 + mag);
}

/// The fixture's first `batches` matrices of `key`, in T.
template <class T> tx::tensor<T, 3> input(const tx::npz_archive& f, const std::string& key, tx::index_t batches) {
  const auto all = f.get<double, 3>(key);
  return tx::eval(tx::cast<T>(tx::slice(all, 0, 0, batches)));
}

/// Every op against NumPy: double on all 4 matrices (the ill-conditioned one at cond 1e7 within 1e-8), float on the
/// 3 well-conditioned ones within 2e-5 (float32's eps times the conditioning of these matrices, about 80).
template <class T> void check_against_numpy(const tx::npz_archive& f) {
  const bool is_double = std::is_same_v<T, double>;
  const tx::index_t batches = is_double ? 4 : 3;
  const double tol = is_double ? 1e-11 : 2e-5;
  INFO(tx::dtype_name_v<T>);
  const auto spd = input<T>(f, "spd_upper_noise", batches);
  const auto l = tx::eval(tx::linalg::cholesky(spd));
  CHECK(relative_error(l, f.get<double, 3>("cholesky"), std::min<tx::index_t>(batches, 3)) <= tol);
  if (is_double) CHECK(relative_error(tx::eval(tx::slice(l, 0, 3, 4)), tx::eval(tx::slice(f.get<double, 3>("cholesky"), 0, 3, 4)), 1) <= 1e-8);
  const auto a = input<T>(f, "a", batches), b = input<T>(f, "b", batches);
  CHECK(relative_error(tx::eval(tx::linalg::solve(a, b)), f.get<double, 3>("solve"), batches) <= tol);
  CHECK(relative_error(tx::eval(tx::linalg::inv(a)), f.get<double, 3>("inv"), batches) <= tol);
  CHECK(relative_error(tx::eval(tx::linalg::solve_triangular(input<T>(f, "lower_noisy", batches), b, tx::linalg::triangle::lower)),
                       f.get<double, 3>("solve_lower"), batches) <= tol);
  CHECK(relative_error(tx::eval(tx::linalg::solve_triangular(input<T>(f, "upper_noisy", batches), b, tx::linalg::triangle::upper)),
                       f.get<double, 3>("solve_upper"), batches) <= tol);
}

} // namespace

TEST_CASE("linalg: cholesky, solve, inv and solve_triangular against NumPy, float and double") {
  const auto f = tx::load_npz(fixture());
  check_against_numpy<double>(f);
  check_against_numpy<float>(f);
}

TEST_CASE("linalg: slogdet and det against NumPy; slogdet where det overflows float; singular matrices") {
  const auto f = tx::load_npz(fixture());
  const auto a = f.get<double, 3>("a");
  const auto sign = f.get<double, 1>("sign"), logabsdet = f.get<double, 1>("logabsdet"), det = f.get<double, 1>("det");
  auto [s, l] = tx::linalg::slogdet(a);
  const auto [gs, gl, gd] = tx::eval_all(s, l, tx::linalg::det(a));
  auto [sf, lf] = tx::linalg::slogdet(tx::cast<float>(a));
  const auto [gsf, glf] = tx::eval_all(sf, lf);
  for (tx::index_t q = 0; q < 4; ++q) {
    INFO("matrix " << q);
    CHECK(gs(q) == sign(q));
    CHECK(gsf(q) == static_cast<float>(sign(q)));
    CHECK(std::abs(gl(q) - logabsdet(q)) <= 1e-12 * (1 + std::abs(logabsdet(q))));
    CHECK(std::abs(glf(q) - logabsdet(q)) <= 1e-5 * (1 + std::abs(logabsdet(q))));
    CHECK(std::abs(gd(q) - det(q)) <= 1e-12 * std::abs(det(q)));
  }
  // |det| near 1e61: beyond float's range, so only slogdet has it in float
  const auto big = f.get<double, 3>("big");
  auto [bs, bl] = tx::linalg::slogdet(tx::cast<float>(big));
  const auto [gbs, gbl] = tx::eval_all(bs, bl);
  for (tx::index_t q = 0; q < 2; ++q) {
    CHECK(gbs(q) == static_cast<float>(f.get<double, 1>("big_sign")(q)));
    CHECK(std::abs(gbl(q) - f.get<double, 1>("big_logabsdet")(q)) <= 1e-4 * f.get<double, 1>("big_logabsdet")(q));
  }
  CHECK(std::isinf(tx::eval(tx::linalg::det(tx::cast<float>(big)))(0)));  // det itself overflows float: inf
  // a singular matrix: sign 0 and -inf, as NumPy; det 0; the other matrices unaffected
  tx::tensor<double, 3> singular = a.clone();
  for (tx::index_t j = 0; j < 7; ++j) singular(2, j, 5) = 0;
  auto [ss, sl] = tx::linalg::slogdet(singular);
  const auto [gss, gsl, gsd] = tx::eval_all(ss, sl, tx::linalg::det(singular));
  CHECK(gss(2) == 0.0);
  CHECK((std::isinf(gsl(2)) && gsl(2) < 0));
  CHECK(gsd(2) == 0.0);
  CHECK(gss(1) == sign(1));
  // one LU per matrix serves sign and log|det|: one lapack_getrf_det in the log
  tx::kernel_log log;
  (void)tx::eval_all(s, l);
  std::size_t runs = 0;
  for (const auto& e : log.entries()) runs += e.implementation == "lapack_getrf_det";
  CHECK_MESSAGE(runs == 1, log.str());
  // order 0: det 1
  CHECK(tx::eval(tx::linalg::det(tx::tensor<double, 3>({2, 0, 0})))(1) == 1.0);
}

TEST_CASE("linalg: strided views and expressions as operands give the same results as contiguous memory") {
  const auto f = tx::load_npz(fixture());
  const auto a = f.get<double, 3>("a"), b = f.get<double, 3>("b");
  const tx::tensor<double, 3> at = tx::eval(tx::transpose(a));  // a's transpose in memory: transpose(at) is a strided a
  const auto want = f.get<double, 3>("solve");
  CHECK(relative_error(tx::eval(tx::linalg::solve(tx::transpose(at), b)), want, 4) <= 1e-11);
  CHECK(relative_error(tx::eval(tx::linalg::solve(a * 2.0, b * 2.0)), want, 4) <= 1e-11);  // operands are expressions
  const tx::tensor<double, 3> wide = tx::eval(tx::concat(2, b, b));                          // (4, 7, 6): a strided slice of it
  CHECK(relative_error(tx::eval(tx::linalg::solve(a, tx::slice(wide, 2, 3, 6))), want, 4) <= 1e-11);
  // the result written into a strided destination
  tx::tensor<double, 3> xt({4, 3, 7});
  tx::transpose(xt) = tx::linalg::solve(a, b);
  CHECK(relative_error(tx::eval(tx::transpose(xt)), want, 4) <= 1e-11);
}

TEST_CASE("linalg: failures name the op, the batch index and LAPACK's info; the other matrices are not the issue") {
  const auto f = tx::load_npz(fixture());
  tx::tensor<double, 3> spd = f.get<double, 3>("spd");
  for (tx::index_t j = 0; j < 7; ++j) spd(2, 4, j) = spd(2, j, 4) = 0;  // matrix 2: row and column 4 zero
  try {
    (void)tx::eval(tx::linalg::cholesky(spd));
    FAIL("cholesky of a singular matrix did not throw");
  } catch (const tx::linalg_error& e) {
    CHECK(e.op_name == "cholesky");
    CHECK(e.batch_index == 2);
    CHECK(e.library_info == 5);  // the leading minor of order 5 is the first that is not positive definite
    CHECK(std::string(e.what()).find("cholesky failed for matrix 2 of the batch (info 5)") != std::string::npos);
    CHECK(std::string(e.what()).find("not positive definite") != std::string::npos);
  }
  tx::tensor<double, 3> a = f.get<double, 3>("a");
  for (tx::index_t j = 0; j < 7; ++j) a(1, 3, j) = 0;  // matrix 1 singular
  CHECK_THROWS_WITH_AS((void)tx::eval(tx::linalg::solve(a, f.get<double, 3>("b"))),
                       doctest::Contains("solve failed for matrix 1 of the batch"), tx::linalg_error);
  CHECK_THROWS_WITH_AS((void)tx::eval(tx::linalg::inv(a)), doctest::Contains("singular"), tx::linalg_error);
  tx::tensor<float, 3> lower = tx::eval(tx::cast<float>(f.get<double, 3>("lower_noisy")));
  lower(3, 6, 6) = 0;
  try {
    (void)tx::eval(tx::linalg::solve_triangular(lower, tx::cast<float>(f.get<double, 3>("b")), tx::linalg::triangle::lower));
    FAIL("a zero on the diagonal did not throw");
  } catch (const tx::linalg_error& e) {
    CHECK(e.batch_index == 3);
    CHECK(e.library_info == 7);
    CHECK(std::string(e.what()).find("zero on its diagonal") != std::string::npos);
  }
}

TEST_CASE("linalg: shape errors name the op and both shapes, at the caller's line") {
  const tx::tensor<double, 3> a({2, 3, 4}), sq({2, 3, 3}), b({2, 4, 1}), other_batch({3, 3, 1});
  CHECK_THROWS_WITH_AS(tx::linalg::cholesky(a), doctest::Contains("linalg::cholesky needs square matrices in the last two axes; got shape (2, 3, 4)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::linalg::inv(a), doctest::Contains("test_linalg.cpp"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::linalg::solve(sq, b), doctest::Contains("linalg::solve of A of shape (2, 3, 3) and B of shape (2, 4, 1)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::linalg::solve_triangular(sq, other_batch, tx::linalg::triangle::lower),
                       doctest::Contains("B of shape (3, 3, 1)"), tx::shape_error);
}

TEST_CASE("linalg: empty batches, order 0 and order 1") {
  const tx::tensor<double, 3> none({0, 3, 3}), rhs({0, 3, 2});
  CHECK(tx::eval(tx::linalg::cholesky(none)).shape() == tx::shape_t<3>{0, 3, 3});
  CHECK(tx::eval(tx::linalg::solve(none, rhs)).shape() == tx::shape_t<3>{0, 3, 2});
  const tx::tensor<float, 3> zero_order({2, 0, 0}), zero_rhs({2, 0, 5});
  CHECK(tx::eval(tx::linalg::solve_triangular(zero_order, zero_rhs, tx::linalg::triangle::upper)).shape() == tx::shape_t<3>{2, 0, 5});
  const tx::tensor<double, 2> four({1, 1}, {4.0}), six({1, 1}, {-6.0});
  CHECK(tx::eval(tx::linalg::cholesky(four))(0, 0) == 2.0);
  CHECK(tx::eval(tx::linalg::solve(four, six))(0, 0) == -1.5);
  CHECK(tx::eval(tx::linalg::inv(four))(0, 0) == 0.25);
}

TEST_CASE("linalg: a batch of small solves gives the same bits on 1 and 2 threads") {
  tx::tensor<double, 3> a = tx::random::normal<double>({64, 8, 8}, 3);
  const tx::tensor<double, 3> b = tx::random::normal<double>({64, 8, 4}, 4);
  a = a + tx::detail::identity_like<double, tx::host>(a.shape()) * 3.0;
  const int old = tx::num_threads();
  tx::set_num_threads(1);
  const auto one = tx::eval(tx::linalg::solve(a, b));
  tx::set_num_threads(2);
  const auto two = tx::eval(tx::linalg::solve(a, b));
  tx::set_num_threads(old);
  CHECK(std::equal(one.data(), one.data() + one.size(), two.data()));
  // and each is a solution: A X = B
  CHECK(tx::eval(tx::max(tx::abs(tx::matmul(a, one) - b))).item() < 1e-12);
}

TEST_CASE("linalg: placement names the LAPACK routine; the kernel log shows one call per node") {
  const tx::tensor<double, 2> a = tx::eval(tx::random::normal<double>({5, 5}, 5) + tx::detail::identity_like<double, tx::host>(tx::shape_t<2>{5, 5}) * 4.0);
  const tx::tensor<double, 2> b = tx::random::normal<double>({5, 2}, 6);
  const std::string p = tx::placement(tx::linalg::solve_triangular(tx::linalg::cholesky(a), b, tx::linalg::triangle::lower));
  CHECK(p.find("solve_triangular") != std::string::npos);
  CHECK(p.find("lapack_trtrs") != std::string::npos);
  CHECK(p.find("lapack_potrf") != std::string::npos);
  tx::kernel_log log;
  (void)tx::eval(tx::linalg::inv(a));
  std::size_t gesv = 0;
  for (const auto& e : log.entries()) gesv += e.implementation == "lapack_gesv";
  CHECK_MESSAGE(gesv == 1, log.str());
}

namespace {
/// Worst over the first `batches` matrices of: |w - NumPy's w| / (1 + max |w|), 1 - |v_r . NumPy's v_r| (the sign of
/// an eigenvector is LAPACK's choice), and |S v_r - w_r v_r| / (1 + max |S_ij|) for S the symmetric matrix of a's lower
/// triangle.
template <class T>
double eigh_error(const tx::tensor<T, 2>& w, const tx::tensor<T, 3>& v, const tx::npz_archive& f, tx::index_t batches) {
  const auto a = f.get<double, 3>("sym_upper_noise");
  const auto want_w = f.get<double, 2>("eigh_w");
  const auto want_v = f.get<double, 3>("eigh_v");
  const tx::index_t n = a.shape()[1];
  REQUIRE(v.shape() == tx::shape_t<3>{batches, n, n});
  double err = 0;
  for (tx::index_t q = 0; q < batches; ++q) {
    double scale = 0;
    for (tx::index_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(want_w(q, i)));
    for (tx::index_t r = 0; r < n; ++r) {
      err = std::max(err, std::abs(w(q, r) - want_w(q, r)) / (1 + scale));
      double dot = 0;
      for (tx::index_t i = 0; i < n; ++i) dot += v(q, i, r) * want_v(q, i, r);
      err = std::max(err, 1 - std::abs(dot));
      for (tx::index_t i = 0; i < n; ++i) {
        double sv = 0;
        for (tx::index_t j = 0; j < n; ++j) sv += (i >= j ? a(q, i, j) : a(q, j, i)) * v(q, j, r);
        err = std::max(err, std::abs(sv - w(q, r) * v(q, i, r)) / (1 + scale));
      }
    }
  }
  return err;
}
} // namespace

TEST_CASE("linalg: eigh and eigvalsh against NumPy (lower triangle read), float and double, strided operands") {
  const auto f = tx::load_npz(fixture());
  const auto a = f.get<double, 3>("sym_upper_noise");
  // double within 1e-12, float within 2e-5: eigenvalues are backward stable (error ~ eps |S|), and these eigenvalues
  // are at least 1e-2 apart, so the eigenvectors are too
  auto [w, v] = tx::linalg::eigh(a);
  const auto [gw, gv] = tx::eval_all(w, v);
  CHECK(eigh_error(gw, gv, f, 4) <= 1e-12);
  auto [wf, vf] = tx::linalg::eigh(tx::cast<float>(a));
  const auto [gwf, gvf] = tx::eval_all(wf, vf);
  CHECK(eigh_error(gwf, gvf, f, 4) <= 2e-5);
  const auto want = f.get<double, 2>("eigvalsh");
  const auto values = tx::eval(tx::linalg::eigvalsh(a));
  const auto values_f = tx::eval(tx::linalg::eigvalsh(tx::cast<float>(a)));
  for (tx::index_t q = 0; q < 4; ++q)
    for (tx::index_t i = 0; i < 7; ++i) {
      CHECK(std::abs(values(q, i) - want(q, i)) <= 1e-12 * (1 + std::abs(want(q, 6)) + std::abs(want(q, 0))));
      CHECK(std::abs(values_f(q, i) - want(q, i)) <= 2e-5 * (1 + std::abs(want(q, 6)) + std::abs(want(q, 0))));
    }
  // a strided operand (the transpose of a's transpose in memory) and an expression give the same values
  const tx::tensor<double, 3> at = tx::eval(tx::transpose(a));
  auto [ws, vs] = tx::linalg::eigh(tx::transpose(at));
  const auto [gws, gvs] = tx::eval_all(ws, vs);
  CHECK(eigh_error(gws, gvs, f, 4) <= 1e-12);
  CHECK(tx::eval(tx::max(tx::abs(tx::linalg::eigvalsh(a * 2.0) - values * 2.0))).item() <= 1e-12 * 20);
  // one syevd per matrix serves both results
  tx::kernel_log log;
  (void)tx::eval_all(w, v);
  std::size_t runs = 0;
  for (const auto& e : log.entries()) runs += e.implementation == "lapack_syevd";
  CHECK_MESSAGE(runs == 1, log.str());
  CHECK(tx::placement(tx::linalg::eigvalsh(a)).find("lapack_syevd_values") != std::string::npos);
}

TEST_CASE("linalg: eigh and eigvalsh: empty batches, order 1, shape errors and non-convergence") {
  const tx::tensor<double, 3> none({0, 3, 3});
  auto [w0, v0] = tx::linalg::eigh(none);
  CHECK(tx::eval(w0).shape() == tx::shape_t<2>{0, 3});
  CHECK(tx::eval(v0).shape() == tx::shape_t<3>{0, 3, 3});
  CHECK(tx::eval(tx::linalg::eigvalsh(none)).shape() == tx::shape_t<2>{0, 3});
  const tx::tensor<float, 2> one({1, 1}, {-3.0f});
  auto [w1, v1] = tx::linalg::eigh(one);
  const auto [gw1, gv1] = tx::eval_all(w1, v1);
  CHECK(gw1(0) == -3.0f);
  CHECK(std::abs(gv1(0, 0)) == 1.0f);
  CHECK_THROWS_WITH_AS(tx::linalg::eigh(tx::tensor<double, 3>({2, 3, 4})),
                       doctest::Contains("linalg::eigh needs square matrices in the last two axes; got shape (2, 3, 4)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::linalg::eigvalsh(tx::tensor<double, 2>({3, 2})), doctest::Contains("linalg::eigvalsh needs square"), tx::shape_error);
  // a NaN in matrix 1: LAPACK's iteration cannot converge (NumPy: "Eigenvalues did not converge")
  tx::tensor<double, 3> nan = tx::load_npz(fixture()).get<double, 3>("sym_upper_noise");
  nan(1, 2, 1) = std::nan("");
  try {
    auto [wn, vn] = tx::linalg::eigh(nan);
    (void)tx::eval_all(wn, vn);
    FAIL("eigh of a matrix with a NaN did not throw");
  } catch (const tx::linalg_error& e) {
    CHECK(e.op_name == "eigh");
    CHECK(e.batch_index == 1);
    CHECK(e.library_info > 0);
    CHECK(std::string(e.what()).find("did not converge") != std::string::npos);
  }
}

namespace {
/// Worst over NumPy's svd of fixture `name` (tall or wide) of: |s - s_np| / (1 + s_max), 1 - |u_r . u_np_r|,
/// 1 - |vh_r . vh_np_r|, and 1 where u_r and vh_r are not flipped together (a singular pair's sign is LAPACK's
/// choice, but U diag(s) Vᴴ is not).
template <class T>
double svd_error(const tx::tensor<T, 3>& u, const tx::tensor<T, 2>& s, const tx::tensor<T, 3>& vh, const tx::npz_archive& f, const std::string& name) {
  const auto wu = f.get<double, 3>("svd_" + name + "_u"), wvh = f.get<double, 3>("svd_" + name + "_vh");
  const auto ws = f.get<double, 2>("svd_" + name + "_s");
  const tx::index_t batches = ws.shape()[0], k = ws.shape()[1], m = wu.shape()[1], n = wvh.shape()[2];
  REQUIRE(s.shape() == ws.shape());
  double err = 0;
  for (tx::index_t q = 0; q < batches; ++q)
    for (tx::index_t r = 0; r < k; ++r) {
      err = std::max(err, std::abs(s(q, r) - ws(q, r)) / (1 + ws(q, 0)));
      double du = 0, dv = 0;
      for (tx::index_t i = 0; i < m; ++i) du += u(q, i, r) * wu(q, i, r);
      for (tx::index_t j = 0; j < n; ++j) dv += vh(q, r, j) * wvh(q, r, j);
      err = std::max({err, 1 - std::abs(du), 1 - std::abs(dv), (du < 0) != (dv < 0) ? 1.0 : 0.0});
    }
  return err;
}
} // namespace

TEST_CASE("linalg: svd and svdvals against NumPy, tall and wide, reduced and full, float and double") {
  const auto f = tx::load_npz(fixture());
  for (const std::string name : {"tall", "wide"}) {
    INFO(name);
    const auto a = f.get<double, 3>(name);
    // double within 1e-12, float within 2e-5: singular values are perfectly conditioned (error ~ eps |A|); these
    // are at least 0.03 apart, so their vectors are well defined too
    auto [u, s, vh] = tx::linalg::svd(a);
    const auto [gu, gs, gvh] = tx::eval_all(u, s, vh);
    CHECK(svd_error(gu, gs, gvh, f, name) <= 1e-12);
    auto [uf, sf, vhf] = tx::linalg::svd(tx::cast<float>(a));
    const auto [guf, gsf, gvhf] = tx::eval_all(uf, sf, vhf);
    CHECK(svd_error(guf, gsf, gvhf, f, name) <= 2e-5);
    const auto values = tx::eval(tx::linalg::svdvals(a));
    CHECK(tx::eval(tx::max(tx::abs(values - f.get<double, 2>("svd_" + name + "_s")))).item() <= 1e-12 * 10);
    const auto values_f = tx::eval(tx::linalg::svdvals(tx::cast<float>(a)));
    CHECK(tx::eval(tx::max(tx::abs(tx::cast<double>(values_f) - f.get<double, 2>("svd_" + name + "_s")))).item() <= 2e-5 * 10);
    // a strided operand: the transpose of a's transpose in memory
    const tx::tensor<double, 3> at = tx::eval(tx::transpose(a));
    auto [us, ss, vhs] = tx::linalg::svd(tx::transpose(at));
    const auto [gus, gss, gvhs] = tx::eval_all(us, ss, vhs);
    CHECK(svd_error(gus, gss, gvhs, f, name) <= 1e-12);
    // full matrices: the same reduced part, then an orthonormal completion (NumPy's completion is LAPACK's too, but
    // any is right: checked by UᵀU = I and Vᴴ Vᴴᵀ = I, and the reconstruction)
    auto [uu, su, vu] = tx::linalg::svd(a, true);
    const auto [guu, gsu, gvu] = tx::eval_all(uu, su, vu);
    const tx::index_t m = a.shape()[1], n = a.shape()[2], k = std::min(m, n);
    CHECK(guu.shape() == tx::shape_t<3>{4, m, m});
    CHECK(gvu.shape() == tx::shape_t<3>{4, n, n});
    const tx::tensor<double, 3> ured = tx::eval(tx::slice(guu, 2, 0, k)), vred = tx::eval(tx::slice(gvu, 1, 0, k));
    CHECK(svd_error(ured, gsu, vred, f, name) <= 1e-12);
    const auto eye_m = tx::detail::identity_like<double, tx::host>(tx::shape_t<3>{4, m, m});
    const auto eye_n = tx::detail::identity_like<double, tx::host>(tx::shape_t<3>{4, n, n});
    CHECK(tx::eval(tx::max(tx::abs(tx::matmul(tx::transpose(guu), guu) - eye_m))).item() <= 1e-12 * 10);
    CHECK(tx::eval(tx::max(tx::abs(tx::matmul(gvu, tx::transpose(gvu)) - eye_n))).item() <= 1e-12 * 10);
    CHECK(tx::eval(tx::max(tx::abs(tx::matmul(ured * tx::unsqueeze(gsu, 1), vred) - a))).item() <= 1e-12 * 10);
  }
  // the full completions of NumPy: the same spans (|Uᵀ U_np| has orthonormal rows: its squares sum to 1 per row)
  auto [uu, su, vu] = tx::linalg::svd(f.get<double, 3>("tall"), true);
  const auto overlap = tx::eval(tx::sum(tx::square(tx::matmul(tx::transpose(uu), f.get<double, 3>("svd_tall_full_u"))), 2));
  CHECK(tx::eval(tx::max(tx::abs(overlap - 1.0))).item() <= 1e-12 * 10);
  // one gesdd per matrix serves u, s and vh
  const auto a = f.get<double, 3>("tall");
  auto [u, s, vh] = tx::linalg::svd(a);
  tx::kernel_log log;
  (void)tx::eval_all(u, s, vh);
  std::size_t runs = 0;
  for (const auto& e : log.entries()) runs += e.implementation == "lapack_gesdd";
  CHECK_MESSAGE(runs == 1, log.str());
  CHECK(tx::placement(tx::linalg::svdvals(a)).find("lapack_gesdd_values") != std::string::npos);
}

TEST_CASE("linalg: svd and svdvals: empty batches, order 1, empty matrices and non-convergence") {
  auto [u0, s0, vh0] = tx::linalg::svd(tx::tensor<double, 3>({0, 3, 2}));
  const auto [gu0, gs0, gvh0] = tx::eval_all(u0, s0, vh0);
  CHECK(gu0.shape() == tx::shape_t<3>{0, 3, 2});
  CHECK(gs0.shape() == tx::shape_t<2>{0, 2});
  CHECK(gvh0.shape() == tx::shape_t<3>{0, 2, 2});
  CHECK(tx::eval(tx::linalg::svdvals(tx::tensor<float, 3>({0, 2, 5}))).shape() == tx::shape_t<2>{0, 2});
  const tx::tensor<float, 2> one({1, 1}, {-3.0f});
  auto [u1, s1, vh1] = tx::linalg::svd(one);
  const auto [gu1, gs1, gvh1] = tx::eval_all(u1, s1, vh1);
  CHECK(gs1(0) == 3.0f);
  CHECK(gu1(0, 0) * gvh1(0, 0) == -1.0f);
  // a 0 x 3 matrix: no singular values; the full Vᴴ is the identity (as NumPy's)
  auto [ue, se, vhe] = tx::linalg::svd(tx::tensor<double, 2>({0, 3}), true);
  const auto [gue, gse, gvhe] = tx::eval_all(ue, se, vhe);
  CHECK(gse.shape() == tx::shape_t<1>{0});
  CHECK(gvhe.shape() == tx::shape_t<2>{3, 3});
  CHECK(tx::eval(tx::max(tx::abs(gvhe - tx::detail::identity_like<double, tx::host>(tx::shape_t<2>{3, 3})))).item() == 0.0);
  // a NaN in matrix 2 (NumPy: "SVD did not converge"): LAPACK's gesdd rejects it up front (info -4, argument A)
  tx::tensor<double, 3> nan = tx::load_npz(fixture()).get<double, 3>("tall");
  nan(2, 1, 1) = std::nan("");
  for (const bool vectors : {false, true}) {
    try {
      if (vectors) {
        auto [u, s, vh] = tx::linalg::svd(nan);
        (void)tx::eval_all(u, s, vh);
      } else {
        (void)tx::eval(tx::linalg::svdvals(nan));
      }
      FAIL("svd of a matrix with a NaN did not throw");
    } catch (const tx::linalg_error& e) {
      CHECK(e.op_name == (vectors ? "svd" : "svdvals"));
      CHECK(e.batch_index == 2);
      CHECK(e.library_info == -4);
      CHECK(std::string(e.what()).find("failed for matrix 2 of the batch (info -4): the matrix holds a NaN") != std::string::npos);
    }
  }
}

TEST_CASE("linalg: qr against NumPy (reduced), tall and wide, float and double; Q R = A, QᵀQ = I, R upper") {
  const auto f = tx::load_npz(fixture());
  for (const std::string name : {"tall", "wide"}) {
    INFO(name);
    const auto a = f.get<double, 3>(name);
    const auto want_q = f.get<double, 3>("qr_" + name + "_q"), want_r = f.get<double, 3>("qr_" + name + "_r");
    // NumPy runs the same Householder algorithm (geqrf, orgqr), whose signs are fixed by the data: Q and R compare
    // directly. double within 1e-12, float 2e-5 (these matrices' condition numbers are below 10)
    auto [q, r] = tx::linalg::qr(a);
    const auto [gq, gr] = tx::eval_all(q, r);
    CHECK(relative_error(gq, want_q, 4) <= 1e-12);
    CHECK(relative_error(gr, want_r, 4) <= 1e-12);
    auto [qf, rf] = tx::linalg::qr(tx::cast<float>(a));
    const auto [gqf, grf] = tx::eval_all(qf, rf);
    CHECK(relative_error(gqf, want_q, 4) <= 2e-5);
    CHECK(relative_error(grf, want_r, 4) <= 2e-5);
    // a strided operand
    const tx::tensor<double, 3> at = tx::eval(tx::transpose(a));
    auto [qs, rs] = tx::linalg::qr(tx::transpose(at));
    CHECK(relative_error(tx::eval(qs), want_q, 4) <= 1e-12);
    CHECK(relative_error(tx::eval(rs), want_r, 4) <= 1e-12);
    // the identities, independent of NumPy
    const tx::index_t m = a.shape()[1], n = a.shape()[2], k = std::min(m, n);
    CHECK(tx::eval(tx::max(tx::abs(tx::matmul(gq, gr) - a))).item() <= 1e-12 * 10);
    CHECK(tx::eval(tx::max(tx::abs(tx::matmul(tx::transpose(gq), gq) - tx::detail::identity_like<double, tx::host>(tx::shape_t<3>{4, k, k})))).item() <= 1e-12 * 10);
    for (tx::index_t b = 0; b < 4; ++b)
      for (tx::index_t i = 0; i < k; ++i)
        for (tx::index_t j = 0; j < std::min(i, n); ++j) CHECK(gr(b, i, j) == 0.0);
  }
  // one geqrf and orgqr per matrix serves q and r
  const auto a = f.get<double, 3>("tall");
  auto [q, r] = tx::linalg::qr(a);
  tx::kernel_log log;
  (void)tx::eval_all(q, r);
  std::size_t runs = 0;
  for (const auto& e : log.entries()) runs += e.implementation == "lapack_geqrf_orgqr";
  CHECK_MESSAGE(runs == 1, log.str());
  // empty batches, 1 x 1, an empty matrix
  auto [q0, r0] = tx::linalg::qr(tx::tensor<double, 3>({0, 3, 2}));
  CHECK(tx::eval(q0).shape() == tx::shape_t<3>{0, 3, 2});
  CHECK(tx::eval(r0).shape() == tx::shape_t<3>{0, 2, 2});
  auto [q1, r1] = tx::linalg::qr(tx::tensor<float, 2>({1, 1}, {-3.0f}));
  const auto [gq1, gr1] = tx::eval_all(q1, r1);
  CHECK(gq1(0, 0) * gr1(0, 0) == -3.0f);
  CHECK(std::abs(gq1(0, 0)) == 1.0f);
  auto [qe, re] = tx::linalg::qr(tx::tensor<double, 2>({3, 0}));
  CHECK(tx::eval(qe).shape() == tx::shape_t<2>{3, 0});
  CHECK(tx::eval(re).shape() == tx::shape_t<2>{0, 0});
}

TEST_CASE("linalg: matrix_norm fro, nuc and 2 against NumPy, float and double; placement of each") {
  const auto f = tx::load_npz(fixture());
  const auto a = f.get<double, 3>("tall");
  const auto fro = tx::eval(tx::linalg::matrix_norm(a)), nuc = tx::eval(tx::linalg::matrix_norm(a, tx::linalg::nuc)),
             two = tx::eval(tx::linalg::matrix_norm(a, tx::linalg::two));
  const auto fro_f = tx::eval(tx::linalg::matrix_norm(tx::cast<float>(a), tx::linalg::fro));
  const auto two_f = tx::eval(tx::linalg::matrix_norm(tx::cast<float>(a), tx::linalg::two));
  for (tx::index_t q = 0; q < 4; ++q) {
    // relative 1e-13 (double), 1e-6 (float): sums of at most 28 terms, and singular values to eps |A|
    CHECK(std::abs(fro(q) - f.get<double, 1>("norm_fro")(q)) <= 1e-13 * f.get<double, 1>("norm_fro")(q));
    CHECK(std::abs(nuc(q) - f.get<double, 1>("norm_nuc")(q)) <= 1e-13 * f.get<double, 1>("norm_nuc")(q));
    CHECK(std::abs(two(q) - f.get<double, 1>("norm_2")(q)) <= 1e-13 * f.get<double, 1>("norm_2")(q));
    CHECK(std::abs(fro_f(q) - f.get<double, 1>("norm_fro")(q)) <= 1e-6 * f.get<double, 1>("norm_fro")(q));
    CHECK(std::abs(two_f(q) - f.get<double, 1>("norm_2")(q)) <= 1e-6 * f.get<double, 1>("norm_2")(q));
  }
  // fro is fused elementwise and reductions (no library call); nuc and 2 read svdvals
  CHECK(tx::placement(tx::linalg::matrix_norm(a)).find("lapack") == std::string::npos);
  CHECK(tx::placement(tx::linalg::matrix_norm(a, tx::linalg::nuc)).find("lapack_gesdd_values") != std::string::npos);
  // a 1 x 1 matrix: |a| in every order; an empty batch
  const tx::tensor<double, 2> one({1, 1}, {-3.0});
  CHECK(tx::eval(tx::linalg::matrix_norm(one)).item() == 3.0);
  CHECK(tx::eval(tx::linalg::matrix_norm(one, tx::linalg::nuc)).item() == 3.0);
  CHECK(tx::eval(tx::linalg::matrix_norm(one, tx::linalg::two)).item() == 3.0);
  CHECK(tx::eval(tx::linalg::matrix_norm(tx::tensor<double, 3>({0, 2, 3}), tx::linalg::two)).shape() == tx::shape_t<1>{0});
}

TEST_CASE("linalg: lstsq against NumPy (tall: least squares; wide: minimum norm), float and double; errors") {
  const auto f = tx::load_npz(fixture());
  // double within 1e-12, float within 1e-4 (these matrices' condition numbers are below 10; the float solution's
  // error is about cond² eps for the tall least-squares problem with a nonzero residual)
  const auto tall = f.get<double, 3>("tall"), wide = f.get<double, 3>("wide");
  const auto b = f.get<double, 3>("lstsq_b"), bw = f.get<double, 3>("lstsq_wide_b");
  CHECK(relative_error(tx::eval(tx::linalg::lstsq(tall, b)), f.get<double, 3>("lstsq_tall"), 4) <= 1e-12);
  CHECK(relative_error(tx::eval(tx::linalg::lstsq(wide, bw)), f.get<double, 3>("lstsq_wide"), 4) <= 1e-12);
  CHECK(relative_error(tx::eval(tx::linalg::lstsq(tx::cast<float>(tall), tx::cast<float>(b))), f.get<double, 3>("lstsq_tall"), 4) <= 1e-4);
  CHECK(relative_error(tx::eval(tx::linalg::lstsq(tx::cast<float>(wide), tx::cast<float>(bw))), f.get<double, 3>("lstsq_wide"), 4) <= 1e-4);
  // strided operands (transposes of transposes in memory), an expression
  const tx::tensor<double, 3> tt = tx::eval(tx::transpose(tall)), bt = tx::eval(tx::transpose(b));
  CHECK(relative_error(tx::eval(tx::linalg::lstsq(tx::transpose(tt), tx::transpose(bt) * 1.0)), f.get<double, 3>("lstsq_tall"), 4) <= 1e-12);
  // square and invertible: solve's answer
  const auto a = f.get<double, 3>("a");
  CHECK(relative_error(tx::eval(tx::linalg::lstsq(a, f.get<double, 3>("b"))), f.get<double, 3>("solve"), 4) <= 1e-10);
  // rank deficient (a repeated column): the minimum-norm solution, which splits the weight equally between the two
  tx::tensor<double, 2> twice({3, 2}, {1, 1, 2, 2, 3, 3});
  const tx::tensor<double, 2> rhs({3, 1}, {2, 4, 6});
  const auto x = tx::eval(tx::linalg::lstsq(twice, rhs));
  CHECK(std::abs(x(0, 0) - 1.0) <= 1e-12);
  CHECK(std::abs(x(1, 0) - 1.0) <= 1e-12);
  CHECK(tx::placement(tx::linalg::lstsq(tall, b)).find("lapack_gelsd") != std::string::npos);
  // shapes: B needs A's rows; empty batch; 1 x 1
  CHECK_THROWS_WITH_AS(tx::linalg::lstsq(tall, bw), doctest::Contains("linalg::lstsq of A of shape (4, 7, 4) and B of shape (4, 4, 2)"), tx::shape_error);
  CHECK(tx::eval(tx::linalg::lstsq(tx::tensor<double, 3>({0, 3, 2}), tx::tensor<double, 3>({0, 3, 5}))).shape() == tx::shape_t<3>{0, 2, 5});
  CHECK(tx::eval(tx::linalg::lstsq(tx::tensor<float, 2>({1, 1}, {4.0f}), tx::tensor<float, 2>({1, 1}, {-6.0f})))(0, 0) == -1.5f);
  // a NaN in matrix 3 (NumPy: "SVD did not converge in Linear Least Squares")
  tx::tensor<double, 3> nan = tall.clone();
  nan(3, 0, 0) = std::nan("");
  try {
    (void)tx::eval(tx::linalg::lstsq(nan, b));
    FAIL("lstsq of a matrix with a NaN did not throw");
  } catch (const tx::linalg_error& e) {
    CHECK(e.op_name == "lstsq");
    CHECK(e.batch_index == 3);
    CHECK(e.library_info > 0);
    CHECK(std::string(e.what()).find("did not converge") != std::string::npos);
  }
}

TEST_CASE("linalg: lu_factor against a NumPy partial-pivoting LU, lu_solve against numpy.linalg.solve; errors") {
  const auto f = tx::load_npz(fixture());
  const auto a = f.get<double, 3>("a"), b = f.get<double, 3>("b");
  const auto want_lu = f.get<double, 3>("lu_factor_lu");
  const auto want_pivots = f.get<double, 2>("lu_factor_pivots");
  // the same elimination order (largest |pivot|): the same pivots exactly; LU within 1e-12 (double), 2e-5 (float)
  auto [lu, pivots] = tx::linalg::lu_factor(a);
  const auto [glu, gp] = tx::eval_all(lu, pivots);
  static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(gp)>::value_type, std::int32_t>);
  CHECK(relative_error(glu, want_lu, 4) <= 1e-12);
  auto [luf, pivotsf] = tx::linalg::lu_factor(tx::cast<float>(a));
  const auto [gluf, gpf] = tx::eval_all(luf, pivotsf);
  CHECK(relative_error(gluf, want_lu, 4) <= 2e-5);
  for (tx::index_t q = 0; q < 4; ++q)
    for (tx::index_t i = 0; i < 7; ++i) {
      CHECK(gp(q, i) == static_cast<std::int32_t>(want_pivots(q, i)));
      CHECK(gpf(q, i) == static_cast<std::int32_t>(want_pivots(q, i)));
    }
  // lu_solve with them: numpy.linalg.solve's answer; the factors computed once for two right-hand sides
  CHECK(relative_error(tx::eval(tx::linalg::lu_solve(lu, pivots, b)), f.get<double, 3>("solve"), 4) <= 1e-11);
  CHECK(relative_error(tx::eval(tx::linalg::lu_solve(glu, gp, b * 2.0) * 0.5), f.get<double, 3>("solve"), 4) <= 1e-11);
  CHECK(relative_error(tx::eval(tx::linalg::lu_solve(luf, pivotsf, tx::cast<float>(b))), f.get<double, 3>("solve"), 4) <= 2e-4);
  // a strided operand
  const tx::tensor<double, 3> at = tx::eval(tx::transpose(a));
  auto [lus, pivots_s] = tx::linalg::lu_factor(tx::transpose(at));
  CHECK(relative_error(tx::eval(lus), want_lu, 4) <= 1e-12);
  const std::string p = tx::placement(tx::linalg::lu_solve(lu, pivots, b));
  CHECK(p.find("lapack_getrs") != std::string::npos);
  CHECK(p.find("lapack_getrf") != std::string::npos);
  // singular: the op, the batch and the zero pivot's order; pivots out of range: named, before LAPACK reads them
  tx::tensor<double, 3> singular = a.clone();
  for (tx::index_t j = 0; j < 7; ++j) singular(1, j, 2) = 0;
  CHECK_THROWS_WITH_AS((void)tx::eval(tx::linalg::lu_factor(singular).lu), doctest::Contains("lu_factor failed for matrix 1 of the batch (info 3)"),
                       tx::linalg_error);
  tx::tensor<std::int32_t, 2> bad = gp.clone();
  bad(2, 4) = 9;
  CHECK_THROWS_WITH_AS((void)tx::eval(tx::linalg::lu_solve(glu, bad, b)), doctest::Contains("pivot 4 is 9, not a row of 1..7"), tx::linalg_error);
  CHECK_THROWS_WITH_AS(tx::linalg::lu_solve(glu, tx::tensor<std::int32_t, 2>({4, 6}), b),
                       doctest::Contains("lu_solve of lu of shape (4, 7, 7) and pivots of shape (4, 6)"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::linalg::lu_factor(f.get<double, 3>("tall")), doctest::Contains("linalg::lu_factor needs square"), tx::shape_error);
  // empty batch, 1 x 1
  auto [lu0, p0] = tx::linalg::lu_factor(tx::tensor<double, 3>({0, 3, 3}));
  CHECK(tx::eval(p0).shape() == tx::shape_t<2>{0, 3});
  auto [lu1, p1] = tx::linalg::lu_factor(tx::tensor<float, 2>({1, 1}, {4.0f}));
  CHECK(tx::eval(p1)(0) == 1);
  CHECK(tx::eval(tx::linalg::lu_solve(lu1, p1, tx::tensor<float, 2>({1, 1}, {-6.0f})))(0, 0) == -1.5f);
}
