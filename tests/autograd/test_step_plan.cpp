// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A training step as one planned unit, on the host: every shared value computed once (8 GEMMs for the seed's
// three-layer MLP, counted by tx::kernel_log), no fresh allocation after the first step, and the six gradients of
// the single backward walk equal to a hand-written backpropagation in double.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace tx = texpr;

namespace {

struct model {
  tx::tensor<float, 2> w1, w2, w3;
  tx::tensor<float, 1> b1, b2, b3;
};

template <class X, class Y> auto train_step(const X& x, const Y& labels, const model& m) {
  auto w1 = tx::param<struct w1_tag>(m.w1);
  auto b1 = tx::param<struct b1_tag>(m.b1);
  auto w2 = tx::param<struct w2_tag>(m.w2);
  auto b2 = tx::param<struct b2_tag>(m.b2);
  auto w3 = tx::param<struct w3_tag>(m.w3);
  auto b3 = tx::param<struct b3_tag>(m.b3);
  auto h1 = tx::elu(tx::matmul(x, w1) + b1);
  auto h2 = tx::elu(tx::matmul(h1, w2) + b2);
  return tx::value_and_grad(tx::cross_entropy(tx::matmul(h2, w3) + b3, labels), w1, b1, w2, b2, w3, b3);
}

tx::tensor<float, 2> random_matrix(tx::index_t r, tx::index_t c, float scale, std::mt19937& g) {
  std::normal_distribution<float> d(0.0f, scale);
  tx::tensor<float, 2> t({r, c});
  for (tx::index_t i = 0; i < r; ++i)
    for (tx::index_t j = 0; j < c; ++j) t(i, j) = d(g);
  return t;
}
tx::tensor<float, 1> random_vector(tx::index_t n, float scale, std::mt19937& g) {
  std::normal_distribution<float> d(0.0f, scale);
  tx::tensor<float, 1> t({n});
  for (tx::index_t i = 0; i < n; ++i) t(i) = d(g);
  return t;
}
model random_model(tx::index_t in, tx::index_t hidden, tx::index_t classes, std::mt19937& g) {
  return {random_matrix(in, hidden, 1.0f / std::sqrt(float(in)), g), random_matrix(hidden, hidden, 1.0f / std::sqrt(float(hidden)), g),
          random_matrix(hidden, classes, 1.0f / std::sqrt(float(hidden)), g), random_vector(hidden, 0.5f, g),
          random_vector(hidden, 0.5f, g), random_vector(classes, 0.5f, g)};
}

std::size_t gemms(const tx::kernel_log& log) { return log.count("blocked_gemm") + log.count("blocked_gemm_epilogue"); }

// ---- an independent reference: the same network and its backpropagation, written out in double ----------
using matrix = std::vector<std::vector<double>>;
matrix to_matrix(const tx::tensor<float, 2>& t) {
  matrix m(static_cast<std::size_t>(t.extent(0)), std::vector<double>(static_cast<std::size_t>(t.extent(1))));
  for (tx::index_t i = 0; i < t.extent(0); ++i)
    for (tx::index_t j = 0; j < t.extent(1); ++j) m[std::size_t(i)][std::size_t(j)] = t(i, j);
  return m;
}
std::vector<double> to_vector(const tx::tensor<float, 1>& t) {
  std::vector<double> v(static_cast<std::size_t>(t.extent(0)));
  for (tx::index_t i = 0; i < t.extent(0); ++i) v[std::size_t(i)] = t(i);
  return v;
}
matrix affine(const matrix& x, const matrix& w, const std::vector<double>& b) {
  matrix z(x.size(), std::vector<double>(b.size()));
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) {
      double s = b[j];
      for (std::size_t k = 0; k < w.size(); ++k) s += x[i][k] * w[k][j];
      z[i][j] = s;
    }
  return z;
}
double elu(double v) { return v > 0 ? v : std::expm1(v); }
struct reference_grads {
  double loss;
  matrix w1, w2, w3;
  std::vector<double> b1, b2, b3;
};
// dZ -> (dW = A^T dZ, db = column sums of dZ, dA = dZ W^T)
void affine_back(const matrix& a, const matrix& w, const matrix& dz, matrix& dw, std::vector<double>& db, matrix& da) {
  dw.assign(w.size(), std::vector<double>(w[0].size(), 0.0));
  db.assign(w[0].size(), 0.0);
  da.assign(a.size(), std::vector<double>(w.size(), 0.0));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < w[0].size(); ++j) {
      db[j] += dz[i][j];
      for (std::size_t k = 0; k < w.size(); ++k) {
        dw[k][j] += a[i][k] * dz[i][j];
        da[i][k] += dz[i][j] * w[k][j];
      }
    }
}
reference_grads reference(const matrix& x, const std::vector<std::int64_t>& y, const model& m) {
  const matrix w1 = to_matrix(m.w1), w2 = to_matrix(m.w2), w3 = to_matrix(m.w3);
  const auto b1 = to_vector(m.b1), b2 = to_vector(m.b2), b3 = to_vector(m.b3);
  const matrix z1 = affine(x, w1, b1);
  matrix h1 = z1;
  for (auto& r : h1) for (auto& v : r) v = elu(v);
  const matrix z2 = affine(h1, w2, b2);
  matrix h2 = z2;
  for (auto& r : h2) for (auto& v : r) v = elu(v);
  const matrix z3 = affine(h2, w3, b3);
  reference_grads g{};
  const double n = static_cast<double>(x.size());
  matrix dz3 = z3;
  for (std::size_t i = 0; i < z3.size(); ++i) {
    double mx = z3[i][0];
    for (double v : z3[i]) mx = std::max(mx, v);
    double s = 0;
    for (double v : z3[i]) s += std::exp(v - mx);
    const double lse = mx + std::log(s);
    g.loss += (lse - z3[i][std::size_t(y[i])]) / n;
    for (std::size_t j = 0; j < z3[i].size(); ++j)
      dz3[i][j] = (std::exp(z3[i][j] - lse) - (j == std::size_t(y[i]) ? 1.0 : 0.0)) / n;
  }
  matrix dh2, dh1, unused;
  affine_back(h2, w3, dz3, g.w3, g.b3, dh2);
  for (std::size_t i = 0; i < dh2.size(); ++i)
    for (std::size_t j = 0; j < dh2[i].size(); ++j) dh2[i][j] *= z2[i][j] > 0 ? 1.0 : std::exp(z2[i][j]);
  affine_back(h1, w2, dh2, g.w2, g.b2, dh1);
  for (std::size_t i = 0; i < dh1.size(); ++i)
    for (std::size_t j = 0; j < dh1[i].size(); ++j) dh1[i][j] *= z1[i][j] > 0 ? 1.0 : std::exp(z1[i][j]);
  affine_back(x, w1, dh1, g.w1, g.b1, unused);
  return g;
}

void check_close(const tx::tensor<float, 2>& got, const matrix& want, const char* what) {
  double scale = 0;
  for (const auto& r : want) for (double v : r) scale = std::max(scale, std::abs(v));
  for (tx::index_t i = 0; i < got.extent(0); ++i)
    for (tx::index_t j = 0; j < got.extent(1); ++j) {
      const double w = want[std::size_t(i)][std::size_t(j)];
      INFO(what << "(" << i << ", " << j << "): texpr " << got(i, j) << ", reference " << w);
      REQUIRE(std::abs(got(i, j) - w) <= 2e-5 * scale + 1e-4 * std::abs(w));  // float against double
    }
}
void check_close(const tx::tensor<float, 1>& got, const std::vector<double>& want, const char* what) {
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (tx::index_t i = 0; i < got.extent(0); ++i) {
    const double w = want[std::size_t(i)];
    INFO(what << "(" << i << "): texpr " << got(i) << ", reference " << w);
    REQUIRE(std::abs(got(i) - w) <= 2e-5 * scale + 1e-4 * std::abs(w));
  }
}

}  // namespace

TEST_CASE("one backward walk: the six MLP gradients equal a hand-written backpropagation in double") {
  std::mt19937 g(11);
  const tx::index_t batch = 9, in = 13, hidden = 11, classes = 5;
  const model m = random_model(in, hidden, classes, g);
  const auto x = random_matrix(batch, in, 1.5f, g);
  tx::tensor<std::int64_t, 1> y({batch});
  std::vector<std::int64_t> labels(static_cast<std::size_t>(batch));
  for (tx::index_t i = 0; i < batch; ++i) y(i) = labels[std::size_t(i)] = (i * 3 + 1) % classes;
  const auto [loss, gw1, gb1, gw2, gb2, gw3, gb3] = tx::eval_all(train_step(x, y, m));
  const reference_grads want = reference(to_matrix(x), labels, m);
  CHECK(loss.item() == doctest::Approx(want.loss).epsilon(1e-5));
  check_close(gw1, want.w1, "dW1");
  check_close(gb1, want.b1, "db1");
  check_close(gw2, want.w2, "dW2");
  check_close(gb2, want.b2, "db2");
  check_close(gw3, want.w3, "dW3");
  check_close(gb3, want.b3, "db3");
}

TEST_CASE("the seed's MLP step runs 8 GEMMs and allocates nothing after the first step (tx::kernel_log)") {
  std::mt19937 g(5);
  model m = random_model(784, 256, 10, g);
  const auto x = random_matrix(128, 784, 1.0f, g);
  tx::tensor<std::int64_t, 1> y({128});
  for (tx::index_t i = 0; i < 128; ++i) y(i) = i % 10;
  const bool cached = tx::detail::host_block_cache::instance().enabled();
  for (int step = 0; step < 3; ++step) {
    tx::kernel_log log;
    const auto graphs = train_step(x, y, m);
    auto [loss, gw1, gb1, gw2, gb2, gw3, gb3] = tx::eval_all(graphs);
    m.w1 = m.w1 - 0.1f * gw1;  // in place: assignment writes into the tensor's storage
    m.b1 = m.b1 - 0.1f * gb1;
    m.w2 = m.w2 - 0.1f * gw2;
    m.b2 = m.b2 - 0.1f * gb2;
    m.w3 = m.w3 - 0.1f * gw3;
    m.b3 = m.b3 - 0.1f * gb3;
    INFO("step " << step << ":\n" << log.str());
    // Forward: 3, each layer's elu(x w + b) (and the logits' bias add) as the GEMM's epilogue; backward: dW3,
    // dh2, dW2, dh1, dW1, the two deltas g * elu'(out) as the epilogues of dh2 and dh1.
    CHECK(gemms(log) == 8);
    CHECK(log.count("blocked_gemm_epilogue") == 5);
    // The loss (5 kernels in its composite), dlogits (a logsumexp and one pass, logged with their composite
    // cross_entropy_grad), 3 bias gradients, 6 updates.
    CHECK(log.entries().size() <= 26);
    if (step > 0 && cached) CHECK(log.allocations() == 0);
    CHECK(log.syncs() == 0);
    CHECK(std::isfinite(loss.item()));
  }
}

TEST_CASE("elu's gradient reads its result only: a negative constant alpha is refused when the gradient is built") {
  tx::tensor<float, 1> t({4}, {-1.0f, -0.5f, 0.5f, 2.0f});
  auto p = tx::param<struct elu_alpha_tag>(t);
  CHECK_THROWS_AS(tx::grad(tx::sum(tx::elu(p, -0.5)), p), std::domain_error);
  // alpha = 0: elu is relu, out + alpha = 0 where x <= 0; the gradient is that of relu (1 where x > 0).
  const auto [g] = tx::eval_all(tx::grad(tx::sum(tx::elu(p, 0.0)), p));
  CHECK(g(0) == 0.0f);
  CHECK(g(1) == 0.0f);
  CHECK(g(2) == 1.0f);
  CHECK(g(3) == 1.0f);
}

namespace {
// Two blocks of one function template, each marking its parameters: with local tag structs of one name
// (tx::param<struct w_>) clang++ rejects this (two definitions with one mangled name); tx::params declares nothing.
// This file is compiled by g++ (test preset) and clang++ (asan-ubsan preset).
template <class T> T two_blocks(const tx::tensor<T, 1>& a, const tx::tensor<T, 1>& b) {
  T total = 0;
  {
    auto [w] = tx::params(a);
    const auto [g] = tx::eval_all(tx::grad(tx::sum(w * w), w));
    total += g(0);
  }
  {
    auto [w] = tx::params(b);
    const auto [g] = tx::eval_all(tx::grad(tx::sum(w * w * w), w));
    total += g(0);
  }
  return total;
}
}  // namespace

TEST_CASE("tx::params: parameters without tag types, gradients in the group's order") {
  std::mt19937 g(3);
  const model m = random_model(7, 6, 4, g);
  const auto x = random_matrix(5, 7, 1.0f, g);
  tx::tensor<std::int64_t, 1> y({5}, {0, 1, 2, 3, 1});
  const auto group = tx::params(m.w1, m.b1, m.w2, m.b2, m.w3, m.b3);
  const auto& [w1, b1, w2, b2, w3, b3] = group;
  auto h1 = tx::elu(tx::matmul(x, w1) + b1);
  auto h2 = tx::elu(tx::matmul(h1, w2) + b2);
  auto loss = tx::cross_entropy(tx::matmul(h2, w3) + b3, y);
  // The whole group at once, and the same gradients as tag-typed parameters give.
  const auto [l, gw1, gb1, gw2, gb2, gw3, gb3] = tx::eval_all(tx::value_and_grad(loss, group));
  const auto [l2, tw1, tb1, tw2, tb2, tw3, tb3] = tx::eval_all(train_step(x, y, m));
  CHECK(l.item() == l2.item());
  for (tx::index_t i = 0; i < 7; ++i)
    for (tx::index_t j = 0; j < 6; ++j) REQUIRE(gw1(i, j) == tw1(i, j));
  for (tx::index_t j = 0; j < 4; ++j) REQUIRE(gb3(j) == tb3(j));
  const reference_grads want = reference(to_matrix(x), {0, 1, 2, 3, 1}, m);
  check_close(gw2, want.w2, "dW2");
  check_close(gb2, want.b2, "db2");
  // Two groups in one loss: a group type each keeps their tags apart.
  tx::tensor<double, 1> a({2}, {1.5, -2.0}), b({2}, {0.5, 3.0});
  CHECK(two_blocks(a, b) == doctest::Approx(2 * 1.5 + 3 * 0.5 * 0.5));
  const auto enc = tx::params<struct encoder>(a);
  const auto dec = tx::params<struct decoder>(b);
  const auto [ga, gb] = tx::eval_all(tx::grad(tx::sum(std::get<0>(enc) * std::get<0>(dec)), std::get<0>(enc), std::get<0>(dec)));
  CHECK(ga(1) == 3.0);
  CHECK(gb(1) == -2.0);
}
