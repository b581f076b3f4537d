// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradients through tx::einsum (what it lowers to: diagonal, sum, permute, reshape, matmul, products) and through
// tx::diagonal itself, against central differences.
#include "grad_check.hpp"

#include <string>

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("diagonal: g on the diagonal of zeros, for each pair of axes") {
  auto g = grad_check::rng(51);
  auto x = random(tx::shape_t<3>{3, 4, 3}, g);
  auto w = random(tx::shape_t<2>{4, 3}, g);
  check("diagonal axes 0, 2", [&](auto p) { return tx::sum(tx::diagonal(p, 0, 2) * w); }, x);
  check("diagonal axes 2, 0", [&](auto p) { return tx::sum(tx::diagonal(tx::tanh(p), 2, 0) * w); }, x);
}

TEST_CASE("einsum: contractions, batches, traces, outer and broadcast products") {
  auto g = grad_check::rng(52);
  auto a = random(tx::shape_t<3>{2, 3, 4}, g);
  auto b = random(tx::shape_t<3>{2, 4, 5}, g);
  auto m = random(tx::shape_t<2>{3, 3}, g);
  auto v = random(tx::shape_t<1>{4}, g);
  auto w3 = random(tx::shape_t<3>{2, 3, 5}, g);
  check("bij,bjk->bik", [&](auto p, auto q) { return tx::sum(tx::einsum<"bij,bjk->bik">(p, q) * w3); }, a, b);
  check("bij,bkj->bik (a transposed operand)", [&](auto p) { return tx::sum(tx::square(tx::einsum<"bij,bkj->bik">(p, p))); }, a);
  check("ii->i and ii", [&](auto p) { return tx::sum(tx::exp(tx::einsum<"ii->i">(p))) + tx::einsum<"ii">(p * p); }, m);
  check("abc,c->ba (a private label summed first)", [&](auto p, auto q) { return tx::sum(tx::sin(tx::einsum<"abc,c->ba">(p, q))); }, a, v);
  check("i,j->ij", [&](auto q) { return tx::sum(tx::square(tx::einsum<"i,j->ij">(q, tx::exp(q)))); }, v);
  check("ij,ij->i", [&](auto p) { return tx::sum(tx::tanh(tx::einsum<"ij,ij->i">(p, tx::sin(p)))); }, m);
  auto c = random(tx::shape_t<4>{2, 1, 3, 4}, g);
  auto d = random(tx::shape_t<3>{3, 4, 2}, g);
  check("...ij,...jk (broadcast batch)", [&](auto p, auto q) { return tx::sum(tx::square(tx::einsum<"...ij,...jk">(p, q))); }, c, d);
}
