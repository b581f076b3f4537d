// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One self-attention block on a batch of sequences, as a transformer layer computes it: layer norm over the last
// axis (tx::mean and tx::var with keepdims), projections Q, K, V by batched tx::matmul against shared weight
// matrices, causal scores Q K^T / sqrt(d) masked with tx::where, tx::softmax over the last axis, and the
// weighted sum of V. Checks itself against plain long double loops; exit code 0 only if they agree.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include <texpr/texpr.hpp>

namespace tx = texpr;

int main() {
  constexpr tx::index_t batch = 3, seq = 7, d = 16;
  std::mt19937 rng(5);
  std::normal_distribution<float> unit(0.0f, 1.0f);
  const auto random = [&](auto& t, float scale, float shift) {
    for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = shift + scale * unit(rng);
  };
  tx::tensor<float, 3> x({batch, seq, d});
  tx::tensor<float, 2> wq({d, d}), wk({d, d}), wv({d, d});
  tx::tensor<float, 1> gamma({d}), beta({d});
  random(x, 3.0f, 10.0f);  // a large mean and spread: layer norm has something to do
  random(wq, 0.25f, 0.0f);
  random(wk, 0.25f, 0.0f);
  random(wv, 0.25f, 0.0f);
  random(gamma, 0.1f, 1.0f);
  random(beta, 0.1f, 0.0f);

  // Layer norm over the features of each token.
  auto h = (x - tx::mean(x, -1, tx::keepdims)) / tx::sqrt(tx::var(x, -1, tx::keepdims) + 1e-5f) * gamma + beta;
  tx::tensor<float, 3> hn = h;  // (batch, seq, d), evaluated once: Q, K and V all read it
  auto q = tx::matmul(hn, wq);  // (batch, seq, d) x (d, d): the weight broadcasts over the batch
  auto k = tx::matmul(hn, wk);
  auto v = tx::matmul(hn, wv);
  // Token i attends to tokens j <= i: the mask broadcasts (seq, seq) against (batch, seq, seq).
  auto causal = tx::reshape(tx::arange<std::int64_t>(seq), {seq, 1}) >= tx::arange<std::int64_t>(seq);
  auto scores = tx::where(causal, tx::matmul(q, tx::transpose(k)) / std::sqrt(static_cast<float>(d)),
                          -std::numeric_limits<float>::infinity());
  auto out_graph = tx::matmul(tx::softmax(scores, -1), v);
  std::fputs(tx::placement(out_graph).c_str(), stdout);
  tx::tensor<float, 3> out = out_graph;

  // The same block by plain loops in long double.
  double worst = 0;
  for (tx::index_t b = 0; b < batch; ++b) {
    std::vector<long double> hl(static_cast<std::size_t>(seq * d));
    for (tx::index_t t = 0; t < seq; ++t) {
      long double m = 0, s = 0;
      for (tx::index_t f = 0; f < d; ++f) m += x(b, t, f);
      m /= d;
      for (tx::index_t f = 0; f < d; ++f) s += (x(b, t, f) - m) * (x(b, t, f) - m);
      s /= d;
      for (tx::index_t f = 0; f < d; ++f) hl[static_cast<std::size_t>(t * d + f)] = (x(b, t, f) - m) / std::sqrt(s + 1e-5L) * gamma(f) + beta(f);
    }
    const auto project = [&](const tx::tensor<float, 2>& w) {
      std::vector<long double> r(static_cast<std::size_t>(seq * d), 0.0L);
      for (tx::index_t t = 0; t < seq; ++t)
        for (tx::index_t o = 0; o < d; ++o)
          for (tx::index_t f = 0; f < d; ++f) r[static_cast<std::size_t>(t * d + o)] += hl[static_cast<std::size_t>(t * d + f)] * w(f, o);
      return r;
    };
    const auto ql = project(wq), kl = project(wk), vl = project(wv);
    for (tx::index_t i = 0; i < seq; ++i) {
      std::vector<long double> a(static_cast<std::size_t>(i + 1));
      long double m = -INFINITY, s = 0;
      for (tx::index_t j = 0; j <= i; ++j) {
        long double dot = 0;
        for (tx::index_t f = 0; f < d; ++f) dot += ql[static_cast<std::size_t>(i * d + f)] * kl[static_cast<std::size_t>(j * d + f)];
        a[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<long double>(d));
        m = std::max(m, a[static_cast<std::size_t>(j)]);
      }
      for (auto& e : a) s += e = std::exp(e - m);
      for (tx::index_t f = 0; f < d; ++f) {
        long double o = 0;
        for (tx::index_t j = 0; j <= i; ++j) o += a[static_cast<std::size_t>(j)] / s * vl[static_cast<std::size_t>(j * d + f)];
        const double e = static_cast<double>(std::fabs(out(b, i, f) - o));
        if (!(e <= worst)) worst = e;
      }
    }
  }
  std::printf("attention over (%lld, %lld, %lld): max |error| against long double loops %.2g\n", static_cast<long long>(batch),
              static_cast<long long>(seq), static_cast<long long>(d), worst);
  // Tolerance 1e-4 absolute: float arithmetic on layer-normed values of order 1 through three matmuls and a softmax.
  const bool ok = worst <= 1e-4;
  std::puts(ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
