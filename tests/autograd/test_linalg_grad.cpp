// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients through texpr/linalg.hpp's ops against central differences in float64, batched (2 matrices of order 4):
// cholesky (through a symmetric positive definite p pᵀ + I, so each perturbation stays symmetric), solve and inv
// (both operands), solve_triangular in each triangle (the unread triangle's derivative is 0, which the check also
// asserts), slogdet and det, eigh and eigvalsh (through (p + pᵀ) / 2, sign-invariant losses of the eigenvectors; a
// repeated eigenvalue), svd (tall, wide, square; u and vh through sign-invariant losses) and svdvals, qr (tall and
// square), lstsq (tall, wide, square), matrix_norm's three orders, and a chain of them.
#include "grad_check.hpp"

#include <texpr/linalg.hpp>

#include <algorithm>
#include <cmath>

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

namespace {
/// n I + p: diagonally dominant enough for these orders to be well conditioned.
template <class P> auto shifted(P&& p, double by) {
  return std::forward<P>(p) + tx::detail::identity_like<double, tx::host>(tx::shape_t<3>{2, 4, 4}) * by;
}
} // namespace

TEST_CASE("cholesky: the symmetric gradient, through A = p pᵀ + I") {
  auto g = grad_check::rng(51);
  auto x = random(tx::shape_t<3>{2, 4, 4}, g);
  auto w = random(tx::shape_t<3>{2, 4, 4}, g);
  check("cholesky", [&](auto p) { return tx::sum(tx::linalg::cholesky(shifted(tx::matmul(p, tx::transpose(p)), 1.0)) * w); }, x);
  // A read through its lower triangle only: a symmetric parametrisation (p + pᵀ) / 2 + 6 I
  check("cholesky of a symmetric sum", [&](auto p) {
    return tx::sum(tx::linalg::cholesky(shifted((p + tx::transpose(p)) * 0.5, 6.0)) * w);
  }, x);
}

TEST_CASE("solve and inv: both operands") {
  auto g = grad_check::rng(52);
  auto a = random(tx::shape_t<3>{2, 4, 4}, g);
  auto b = random(tx::shape_t<3>{2, 4, 3}, g);
  auto w = random(tx::shape_t<3>{2, 4, 3}, g);
  auto wi = random(tx::shape_t<3>{2, 4, 4}, g);
  check("solve", [&](auto pa, auto pb) { return tx::sum(tx::linalg::solve(shifted(pa, 3.0), tx::tanh(pb)) * w); }, a, b);
  check("inv", [&](auto pa) { return tx::sum(tx::linalg::inv(shifted(pa, 3.0)) * wi); }, a);
}

TEST_CASE("solve_triangular: each triangle; the triangle not read gets no gradient") {
  auto g = grad_check::rng(53);
  auto a = random(tx::shape_t<3>{2, 4, 4}, g);
  auto b = random(tx::shape_t<3>{2, 4, 2}, g);
  auto w = random(tx::shape_t<3>{2, 4, 2}, g);
  for (const auto which : {tx::linalg::triangle::lower, tx::linalg::triangle::upper}) {
    check(which == tx::linalg::triangle::lower ? "solve_triangular lower" : "solve_triangular upper",
          [&](auto pa, auto pb) { return tx::sum(tx::linalg::solve_triangular(shifted(pa, 4.0), pb, which) * w); }, a, b);
  }
  // and the zeros are exact: the strict upper triangle of dA for a lower solve
  auto pa = tx::param<grad_check::tag<0>>(a);
  const auto [da] = tx::eval_all(tx::grad(tx::sum(tx::linalg::solve_triangular(shifted(pa, 4.0), b, tx::linalg::triangle::lower) * w), pa));
  bool upper_zero = true, lower_nonzero = true;
  for (tx::index_t q = 0; q < 2; ++q)
    for (tx::index_t i = 0; i < 4; ++i)
      for (tx::index_t j = 0; j < 4; ++j) {
        if (j > i) upper_zero = upper_zero && da(q, i, j) == 0.0;
        else lower_nonzero = lower_nonzero && da(q, i, j) != 0.0;
      }
  CHECK(upper_zero);
  CHECK(lower_nonzero);
}

TEST_CASE("slogdet and det: A⁻ᵀ times g, both signs of det") {
  auto g = grad_check::rng(55);
  auto a = random(tx::shape_t<3>{2, 4, 4}, g);
  auto w = random(tx::shape_t<1>{2}, g);
  check("slogdet's log|det|", [&](auto p) {
    auto [sign, logabsdet] = tx::linalg::slogdet(shifted(p, 1.0));
    return tx::sum((logabsdet + sign * 0.0) * w);
  }, a);
  // matrix 1's first row negated: its determinant's sign flips, so both signs are differentiated
  tx::tensor<double, 3> rows({2, 4, 1}, {1, 1, 1, 1, -1, 1, 1, 1});
  auto [sign, logabsdet] = tx::linalg::slogdet(shifted(a, 1.0) * rows);
  const auto [signs, logs] = tx::eval_all(sign, logabsdet);
  REQUIRE(signs(0) * signs(1) < 0);
  check("det", [&](auto p) { return tx::sum(tx::linalg::det(shifted(p, 1.0) * rows) * w); }, a);
}

TEST_CASE("eigh and eigvalsh: eigenvalues and eigenvectors through a symmetric parametrisation") {
  auto g = grad_check::rng(56);
  auto x = random(tx::shape_t<3>{2, 4, 4}, g);
  auto cw = random(tx::shape_t<2>{2, 4}, g);
  auto cv = random(tx::shape_t<3>{2, 4, 4}, g);
  auto sym = [](auto p) { return (p + tx::transpose(p)) * 0.5; };
  // the losses are invariant to each eigenvector's sign (v * v, vᵀ M v): LAPACK's sign choice is no derivative
  check("eigh's eigenvalues", [&](auto p) { return tx::sum(tx::linalg::eigh(sym(p)).eigenvalues * cw); }, x);
  check("eigh's eigenvectors", [&](auto p) {
    auto [w, v] = tx::linalg::eigh(sym(p));
    auto vs = tx::share(v);
    return tx::sum(vs * vs * cv) + tx::sum(tx::matmul(tx::transpose(vs), tx::matmul(cv, vs)) * cv) + tx::sum(w * w * cw);
  }, x);
  check("eigvalsh", [&](auto p) { return tx::sum(tx::linalg::eigvalsh(sym(p)) * cw); }, x);
  // a repeated eigenvalue (A = 2 I + a rank-one term: eigenvalue 2 three times): eigvalsh's gradient is defined and
  // eigh's eigenvalue gradient stays finite (the coupling of equal eigenvalues dropped), equal to eigvalsh's
  tx::tensor<double, 3> u({1, 4, 1}, {1, 2, -1, 0.5});
  auto degenerate = tx::eval(tx::matmul(u, tx::transpose(u)) + tx::detail::identity_like<double, tx::host>(tx::shape_t<3>{1, 4, 4}) * 2.0);
  tx::tensor<double, 2> c({1, 4}, {1, 2, 3, 4});
  auto pd = tx::param<grad_check::tag<0>>(degenerate);
  const auto [d_values] = tx::eval_all(tx::grad(tx::sum(tx::linalg::eigvalsh(pd) * c), pd));
  const auto [d_eigh] = tx::eval_all(tx::grad(tx::sum(tx::linalg::eigh(pd).eigenvalues * c), pd));
  for (tx::index_t i = 0; i < d_eigh.size(); ++i) CHECK(std::isfinite(d_eigh.data()[i]));
  CHECK(tx::eval(tx::max(tx::abs(d_values - d_eigh))).item() <= 1e-12);
  check("eigvalsh at a repeated eigenvalue (a symmetric loss of the repeated ones)",
        [&](auto p) { return tx::sum(tx::linalg::eigvalsh(sym(p)) * tx::tensor<double, 2>({1, 4}, {1, 1, 1, 4})); }, degenerate);
}

TEST_CASE("svd and svdvals: tall, wide and square; u and vh through sign-invariant losses") {
  auto g = grad_check::rng(57);
  for (const auto shape : {tx::shape_t<3>{2, 4, 3}, tx::shape_t<3>{2, 3, 4}, tx::shape_t<3>{2, 3, 3}}) {
    const tx::index_t m = shape[1], n = shape[2], k = std::min(m, n);
    INFO("A " << m << " x " << n);
    auto x = random(shape, g);
    auto cs = random(tx::shape_t<2>{2, k}, g);
    auto cu = random(tx::shape_t<3>{2, m, k}, g);
    auto cv = random(tx::shape_t<3>{2, k, n}, g);
    auto ca = random(shape, g);
    check("svd's s", [&](auto p) { return tx::sum(tx::linalg::svd(p).s * cs); }, x);
    // u * u, vh * vh and u vh (each singular pair flips together) do not depend on LAPACK's signs
    check("svd's u and vh", [&](auto p) {
      auto [u, s, vh] = tx::linalg::svd(p);
      auto us = tx::share(u);
      auto vs = tx::share(vh);
      return tx::sum(us * us * cu) + tx::sum(vs * vs * cv) + tx::sum(tx::matmul(us, vs) * ca) + tx::sum(s * cs);
    }, x);
    check("svdvals", [&](auto p) { return tx::sum(tx::linalg::svdvals(p) * cs); }, x);
    // full matrices: the gradient through s and the reduced part equals the reduced svd's
    check("svd full_matrices's s", [&](auto p) { return tx::sum(tx::linalg::svd(p, true).s * cs); }, x);
  }
}

TEST_CASE("qr: tall and square, q and r; a wide A's gradient is a shape_error naming its shape") {
  auto g = grad_check::rng(58);
  for (const auto shape : {tx::shape_t<3>{2, 5, 3}, tx::shape_t<3>{2, 3, 3}}) {
    const tx::index_t m = shape[1], n = shape[2];
    INFO("A " << m << " x " << n);
    auto x = random(shape, g);
    auto cq = random(tx::shape_t<3>{2, m, n}, g);
    auto cr = random(tx::shape_t<3>{2, n, n}, g);
    // Householder QR's signs are a continuous function of A near these (random) matrices: q and r themselves
    check("qr", [&](auto p) {
      auto [q, r] = tx::linalg::qr(p);
      return tx::sum(q * cq) + tx::sum(r * cr);
    }, x);
    check("qr's r only", [&](auto p) { return tx::sum(tx::linalg::qr(p).r * cr); }, x);
  }
  auto wide_x = random(tx::shape_t<2>{2, 3}, g);
  auto wide = tx::param<grad_check::tag<0>>(wide_x);
  CHECK_THROWS_WITH_AS((void)tx::grad(tx::sum(tx::linalg::qr(wide).q), wide),
                       doctest::Contains("the gradient of linalg::qr needs A (..., m, n) with m >= n; got shape (2, 3)"), tx::shape_error);
}

TEST_CASE("matrix_norm: fro, nuc and 2 (compositions: their gradients come from sqrt, sum, max and svdvals)") {
  auto g = grad_check::rng(59);
  auto x = random(tx::shape_t<3>{2, 4, 3}, g);
  auto c = random(tx::shape_t<1>{2}, g);
  check("matrix_norm fro", [&](auto p) { return tx::sum(tx::linalg::matrix_norm(p) * c); }, x);
  check("matrix_norm nuc", [&](auto p) { return tx::sum(tx::linalg::matrix_norm(p, tx::linalg::nuc) * c); }, x);
  check("matrix_norm 2", [&](auto p) { return tx::sum(tx::linalg::matrix_norm(p, tx::linalg::two) * c); }, x);
}

TEST_CASE("lstsq: tall (a nonzero residual), wide (minimum norm) and square, both operands") {
  auto g = grad_check::rng(60);
  for (const auto shape : {tx::shape_t<3>{2, 5, 3}, tx::shape_t<3>{2, 3, 5}, tx::shape_t<3>{2, 3, 3}}) {
    const tx::index_t m = shape[1], n = shape[2];
    INFO("A " << m << " x " << n);
    auto a = random(shape, g);
    auto b = random(tx::shape_t<3>{2, m, 2}, g);
    auto w = random(tx::shape_t<3>{2, n, 2}, g);
    check("lstsq", [&](auto pa, auto pb) { return tx::sum(tx::linalg::lstsq(pa, pb) * w); }, a, b);
  }
}

TEST_CASE("a chain: the solve of a Cholesky factor by a triangular solve, read twice") {
  auto g = grad_check::rng(54);
  auto x = random(tx::shape_t<3>{2, 4, 4}, g);
  auto b = random(tx::shape_t<3>{2, 4, 3}, g);
  check("cholesky then two triangular solves", [&](auto p, auto pb) {
    auto l = tx::share(tx::linalg::cholesky(shifted(tx::matmul(p, tx::transpose(p)), 2.0)));
    auto y = tx::linalg::solve_triangular(l, pb, tx::linalg::triangle::lower);
    auto z = tx::linalg::solve_triangular(tx::transpose(l), y, tx::linalg::triangle::upper);  // (p pᵀ + 2I)⁻¹ b
    return tx::sum(z * z);
  }, x, b);
}
