// Gradients of the ops models are built from: var, stddev, logsumexp, softmax, log_softmax, cross_entropy,
// concat and the layout views, against finite differences.
#include <cstdint>

#include "grad_check.hpp"

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

TEST_CASE("var and stddev, over everything and along an axis, with ddof and keepdims") {
  auto g = grad_check::rng(31);
  auto x = random(tx::shape_t<2>{4, 5}, g);
  auto w4 = random(tx::shape_t<1>{4}, g);
  auto w5 = random(tx::shape_t<1>{5}, g);
  check("var", [&](auto p) { return tx::var(p * p); }, x);
  check("stddev", [&](auto p) { return tx::stddev(p); }, x);
  check("var axis 1", [&](auto p) { return tx::sum(tx::var(p, 1) * w4); }, x);
  check("var axis 0 ddof 1", [&](auto p) { return tx::sum(tx::var(p, 0, 1) * w5); }, x);
  check("stddev axis -1 ddof 1", [&](auto p) { return tx::sum(tx::stddev(tx::exp(p), -1, 1) * w4); }, x);
  check("layer norm (keepdims)", [&](auto p) {
    auto m = tx::mean(p, 1, tx::keepdims);
    auto s = tx::sqrt(tx::var(p, 1, tx::keepdims) + 1e-5);
    return tx::sum(((p - m) / s) * w5);
  }, x);
}

TEST_CASE("logsumexp, softmax and log_softmax along either axis") {
  auto g = grad_check::rng(32);
  auto x = random(tx::shape_t<2>{3, 6}, g, -3, 3);
  auto w = random(tx::shape_t<2>{3, 6}, g);
  auto w3 = random(tx::shape_t<1>{3}, g);
  check("logsumexp over everything", [&](auto p) { return tx::logsumexp(p * 2.0); }, x);
  check("logsumexp axis 1", [&](auto p) { return tx::sum(tx::logsumexp(p, 1) * w3); }, x);
  check("softmax axis -1", [&](auto p) { return tx::sum(tx::softmax(p, -1) * w); }, x);
  check("softmax axis 0", [&](auto p) { return tx::sum(tx::softmax(p, 0) * w); }, x);
  check("log_softmax axis 1", [&](auto p) { return tx::sum(tx::log_softmax(p, 1) * w); }, x);
  // Large logits: the gradient stays finite and correct (exp(1000) would overflow a naive softmax).
  auto big = random(tx::shape_t<2>{3, 6}, g, 995, 1000);
  check("softmax of logits near 1000", [&](auto p) { return tx::sum(tx::softmax(p, 1) * w); }, big);
}

TEST_CASE("cross_entropy against integer labels: gradient (softmax - one_hot) / batch") {
  auto g = grad_check::rng(33);
  auto z = random(tx::shape_t<2>{5, 4}, g, -3, 3);
  tx::tensor<std::int64_t, 1> labels({5}, {3, 0, 2, 2, 1});
  tx::tensor<std::int32_t, 1> labels32({5}, {1, 1, 0, 3, 2});
  check("cross_entropy int64", [&](auto p) { return tx::cross_entropy(p, labels); }, z);
  check("cross_entropy int32 of a product", [&](auto p) { return tx::cross_entropy(p * p, labels32); }, z);
  // The closed form, elementwise.
  auto p = tx::param<struct ce_closed>(z);
  auto [gz] = tx::eval_all(tx::grad(tx::cross_entropy(p, labels), p));
  tx::tensor<double, 2> want = (tx::softmax(z, 1) - tx::one_hot<double>(labels, 4)) / 5.0;
  for (tx::index_t i = 0; i < z.size(); ++i) CHECK(std::abs(gz.data()[i] - want.data()[i]) <= 1e-14);
}

TEST_CASE("concat passes each operand its slice of the gradient") {
  auto g = grad_check::rng(34);
  auto a = random(tx::shape_t<2>{3, 2}, g);
  auto b = random(tx::shape_t<2>{3, 4}, g);
  auto c = random(tx::shape_t<2>{2, 6}, g);
  auto w = random(tx::shape_t<2>{5, 6}, g);
  check("concat axis 1 then axis 0", [&](auto pa, auto pb, auto pc) {
    return tx::sum(tx::concat(0, tx::concat(-1, tx::tanh(pa), pb * pb), pc) * w);
  }, a, b, c);
}

TEST_CASE("layout views pass the gradient back through the inverse layout") {
  auto g = grad_check::rng(35);
  auto x = random(tx::shape_t<3>{2, 3, 4}, g);
  auto w = random(tx::shape_t<3>{4, 3, 2}, g);
  auto m = random(tx::shape_t<2>{4, 6}, g);
  check("transpose", [&](auto p) { return tx::sum(tx::transpose(p) * tx::permute(w, {2, 0, 1})); }, x);
  check("permute", [&](auto p) { return tx::sum(tx::permute(p, {2, 1, 0}) * w); }, x);
  check("reshape", [&](auto p) { return tx::sum(tx::reshape(p * p, {4, 6}) * m); }, x);
  check("unsqueeze / squeeze", [&](auto p) { return tx::sum(tx::squeeze(tx::unsqueeze(p, 1), 1) * tx::permute(w, {2, 1, 0})); }, x);
}
