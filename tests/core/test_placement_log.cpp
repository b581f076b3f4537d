// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Differential test of placement against evaluation: for hundreds of random graphs, the kernels evaluation runs
// (tx::kernel_log) are exactly the ones tx::planned_kernels lists, in order, by the walk that prints tx::placement.
// Graph types are compile-time, so "random" is a fixed catalogue of graph shapes, each instantiated once, drawn
// with random extents, values, axes and scalars per iteration. TEXPR_PLAN_SEED=<n> replays a run.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "texpr/texpr.hpp"

namespace {

namespace tx = texpr;

std::string listing(const std::vector<tx::kernel_record>& ks) {
  std::string s;
  for (const auto& k : ks) s += "  " + k.backend + " " + k.implementation + " " + k.op + " " + k.dtype + "\n";
  return s;
}

/// One draw: random extents and operands for the catalogue's graphs.
struct draw {
  std::mt19937_64& g;
  tx::index_t m, n, k, e;              // e: 0 to 2, so that some results and slices are empty
  tx::tensor<float, 2> x, y, w, a;     // x, y: (m, n); w: (n, k); a: (m, k)
  tx::tensor<float, 2> we, ae;         // (n, e), (m, e)
  tx::tensor<float, 2> row, col;       // (1, n), (m, 1)
  tx::tensor<float, 1> v;              // (n)
  tx::tensor<std::int32_t, 1> labels;  // (m), in [0, n)
  explicit draw(std::mt19937_64& gen) : g(gen) {
    m = extent();
    n = extent();
    k = extent();
    e = std::uniform_int_distribution<tx::index_t>(0, 2)(g);
    we = fill({n, e});
    ae = fill({m, e});
    x = fill({m, n});
    y = fill({m, n});
    w = fill({n, k});
    a = fill({m, k});
    row = fill({1, n});
    col = fill({m, 1});
    v = tx::tensor<float, 1>(tx::shape_t<1>{n});
    for (tx::index_t i = 0; i < n; ++i) v.data()[i] = value();
    labels = tx::tensor<std::int32_t, 1>(tx::shape_t<1>{m});
    for (tx::index_t i = 0; i < m; ++i)
      labels.data()[i] = static_cast<std::int32_t>(std::uniform_int_distribution<tx::index_t>(0, n - 1)(g));
  }
  tx::index_t extent() { return std::uniform_int_distribution<tx::index_t>(1, 6)(g); }
  float value() { return std::uniform_real_distribution<float>(-1.5f, 1.5f)(g); }
  tx::index_t axis(tx::index_t rank) { return std::uniform_int_distribution<tx::index_t>(0, rank - 1)(g); }
  tx::tensor<float, 2> fill(const tx::shape_t<2>& s) {
    tx::tensor<float, 2> t(s);
    for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = value();
    return t;
  }
};

struct outcome {
  int graphs = 0;
  int failures = 0;
};

/// Evaluates graphs (one context: tx::eval_all) under a kernel log and compares the log with the plan.
template <class... E>
void check(outcome& o, std::uint64_t seed, int iteration, const char* name, const E&... e) {
  const auto planned = tx::planned_kernels(e...);
  std::vector<tx::kernel_record> ran;
  {
    tx::kernel_log log;
    (void)tx::eval_all(e...);
    ran = log.entries();
  }
  ++o.graphs;
  if (ran == planned) return;
  ++o.failures;
  std::string report;
  ((report += tx::placement(e)), ...);
  FAIL_CHECK("kernel log differs from the plan: seed " << seed << " (TEXPR_PLAN_SEED), iteration " << iteration
                                                       << ", graph " << std::string(name) << "\nplanned:\n"
                                                       << listing(planned) << "ran:\n"
                                                       << listing(ran) << report);
}

template <class Tuple>
void check_tuple(outcome& o, std::uint64_t seed, int iteration, const char* name, const Tuple& graphs) {
  std::apply([&](const auto&... e) { check(o, seed, iteration, name, e...); }, graphs);
}

/// The catalogue: each entry builds one graph shape from a draw and checks it.
using entry = std::function<void(draw&, outcome&, std::uint64_t, int)>;

#define TEXPR_GRAPH(NAME, ...)                            \
  entry {                                                 \
    [](draw& d, outcome& o, std::uint64_t seed, int it) { \
      (void)d;                                            \
      check(o, seed, it, NAME, __VA_ARGS__);              \
    }                                                     \
  }

std::vector<entry> catalogue() {
  return {
      // elementwise trees, scalars, broadcast rows and columns
      TEXPR_GRAPH("tanh(x) * y + 2", tx::tanh(d.x) * d.y + 2.0f),
      TEXPR_GRAPH("where(x > row, exp(x), col)", tx::where(d.x > d.row, tx::exp(d.x), d.col)),
      TEXPR_GRAPH("x + v", d.x + d.v),
      // reductions over all or one axis, keepdims
      TEXPR_GRAPH("sum(x)", tx::sum(d.x)),
      TEXPR_GRAPH("mean(x * y, axis)", tx::mean(d.x * d.y, d.axis(2))),
      TEXPR_GRAPH("max(x, axis, keepdims)", tx::max(d.x, d.axis(2), tx::keepdims)),
      TEXPR_GRAPH("argmax(x, axis)", tx::argmax(d.x + d.row, d.axis(2))),
      TEXPR_GRAPH("logsumexp(x, axis)", tx::logsumexp(d.x, d.axis(2))),
      TEXPR_GRAPH("var(exp(x), axis)", tx::var(tx::exp(d.x), d.axis(2))),
      TEXPR_GRAPH("x - mean(x, axis, keepdims)", d.x - tx::mean(d.x, d.axis(2), tx::keepdims)),
      // matmuls at the root, under elementwise (epilogues), under reductions, inside reductions inside elementwise
      TEXPR_GRAPH("matmul(x, w)", tx::matmul(d.x, d.w)),
      TEXPR_GRAPH("elu(matmul(x, w) + a)", tx::elu(tx::matmul(d.x, d.w) + d.a)),
      TEXPR_GRAPH("matmul(x, w) * 2 + sum(a, 1, keepdims)",
                  tx::matmul(d.x, d.w) * 2.0f + tx::sum(d.a, 1, tx::keepdims)),
      TEXPR_GRAPH("matmul(x, v) + 1 (no broadcast: rank 1)", tx::matmul(d.x, d.v) + 1.0f),
      TEXPR_GRAPH("broadcast product: matmul(col, row) + x", tx::matmul(d.col, d.row) + d.x),
      TEXPR_GRAPH("sum(matmul(x, w))", tx::sum(tx::matmul(d.x, d.w))),
      TEXPR_GRAPH("mean(elu(matmul(x, w) + a), axis)", tx::mean(tx::elu(tx::matmul(d.x, d.w) + d.a), d.axis(2))),
      TEXPR_GRAPH("exp(max(matmul(x, w) + a, 1, keepdims)) + a",
                  tx::exp(tx::max(tx::matmul(d.x, d.w) + d.a, 1, tx::keepdims)) + d.a),
      TEXPR_GRAPH("matmul(tanh(x), matmul(transpose(x), a))",
                  tx::matmul(tx::tanh(d.x), tx::matmul(tx::transpose(d.x), d.a))),
      // views of tensors and of expressions
      TEXPR_GRAPH("transpose(x)", tx::transpose(d.x)),
      TEXPR_GRAPH("transpose(x * y) + transpose(y)", tx::transpose(d.x * d.y) + tx::transpose(d.y)),
      TEXPR_GRAPH("slice(x, axis, 0, 1)", tx::slice(d.x, d.axis(2), 0, 1) * 3.0f),
      TEXPR_GRAPH("reshape(transpose(x), -1)", tx::reshape(tx::transpose(d.x), {-1})),
      TEXPR_GRAPH("reshape(matmul(x, w), -1) + 1", tx::reshape(tx::matmul(d.x, d.w), {-1}) + 1.0f),
      TEXPR_GRAPH("sum(broadcast_to(v, (m, n)), axis)",
                  tx::sum(tx::broadcast_to(d.v, tx::shape_t<2>{d.m, d.n}), d.axis(2))),
      TEXPR_GRAPH("transpose(matmul(x, w))", tx::transpose(tx::matmul(d.x, d.w))),
      TEXPR_GRAPH("matmul(transpose(w), transpose(x * 2))", tx::matmul(tx::transpose(d.w), tx::transpose(d.x * 2.0f))),
      // concatenation along either axis: slices along axis 1 are strided
      TEXPR_GRAPH("concat(0, x, matmul(a, transpose(w)))", tx::concat(0, d.x, tx::matmul(d.a, tx::transpose(d.w)))),
      TEXPR_GRAPH("concat(1, matmul(x, w), exp(a), x)", tx::concat(1, tx::matmul(d.x, d.w), tx::exp(d.a), d.x)),
      TEXPR_GRAPH("concat(1, elu(matmul(x, w) + a), a) (epilogue into a strided slice)",
                  tx::concat(1, tx::elu(tx::matmul(d.x, d.w) + d.a), d.a)),
      // the softmax family: the expansion's kernels
      TEXPR_GRAPH("softmax(x, axis)", tx::softmax(d.x, d.axis(2))),
      TEXPR_GRAPH("log_softmax(matmul(x, w), 1)", tx::log_softmax(tx::matmul(d.x, d.w), 1)),
      TEXPR_GRAPH("softmax(x + row, 0) * 2", tx::softmax(d.x + d.row, 0) * 2.0f),
      TEXPR_GRAPH("cross_entropy(x, labels)", tx::cross_entropy(d.x, d.labels)),
      TEXPR_GRAPH("cross_entropy(matmul(a, transpose(w)), labels)",
                  tx::cross_entropy(tx::matmul(d.a, tx::transpose(d.w)), d.labels)),
      // empty products, slices and results
      TEXPR_GRAPH("elu(matmul(x, we) + ae), maybe empty", tx::elu(tx::matmul(d.x, d.we) + d.ae)),
      TEXPR_GRAPH("concat(1, matmul(x, we), x), maybe an empty slice", tx::concat(1, tx::matmul(d.x, d.we), d.x)),
      TEXPR_GRAPH("softmax(matmul(x, we), 0), maybe empty", tx::softmax(tx::matmul(d.x, d.we), 0)),
      TEXPR_GRAPH("sum(matmul(x, we) * 2, 0), maybe empty", tx::sum(tx::matmul(d.x, d.we) * 2.0f, 0)),
      // several graphs in one context
      TEXPR_GRAPH("sum(x), matmul(x, w)", tx::sum(d.x), tx::matmul(d.x, d.w)),
      // one value checked against a reference, as a sanity check of what the log describes
      entry{[](draw& d, outcome& o, std::uint64_t seed, int it) {
        check(o, seed, it, "elu(matmul(x, w) + a), values", tx::elu(tx::matmul(d.x, d.w) + d.a));
        const tx::tensor<float, 2> r = tx::elu(tx::matmul(d.x, d.w) + d.a);
        for (tx::index_t i = 0; i < d.m; ++i)
          for (tx::index_t j = 0; j < d.k; ++j) {
            double s = d.a(i, j);
            for (tx::index_t q = 0; q < d.n; ++q) s += double(d.x(i, q)) * double(d.w(q, j));
            CHECK(r(i, j) == doctest::Approx(s > 0 ? s : std::expm1(s)).epsilon(1e-4));
          }
      }},
      // gradient graphs: saved values computed once across the graphs of one eval_all
      entry{[](draw& d, outcome& o, std::uint64_t seed, int it) {
        auto W = tx::param<struct grad_w>(d.w);
        check_tuple(o, seed, it, "grad sum(elu(matmul(x, W)) * a)",
                    tx::grad(tx::sum(tx::elu(tx::matmul(d.x, W)) * d.a), W));
      }},
      entry{[](draw& d, outcome& o, std::uint64_t seed, int it) {
        auto W = tx::param<struct vg_w>(d.w);
        auto B = tx::param<struct vg_b>(d.v);
        check_tuple(o, seed, it, "value_and_grad mean(tanh(matmul(x + b, W)))",
                    tx::value_and_grad(tx::mean(tx::tanh(tx::matmul(d.x + B, W))), W, B));
      }},
      entry{[](draw& d, outcome& o, std::uint64_t seed, int it) {
        auto W = tx::param<struct ce_w>(d.w);
        auto R = tx::param<struct ce_r>(d.row);
        check_tuple(o, seed, it, "value_and_grad cross_entropy(matmul(x * r, W), labels)",
                    tx::value_and_grad(
                        tx::cross_entropy(tx::matmul(d.x * R, tx::transpose(tx::transpose(W))), d.labels), W, R));
      }},
      entry{[](draw& d, outcome& o, std::uint64_t seed, int it) {
        auto X = tx::param<struct sm_x>(d.x);
        check_tuple(o, seed, it, "grad sum(softmax(x, 1) * y) + var(x)",
                    tx::grad(tx::sum(tx::softmax(X, 1) * d.y) + tx::var(X), X));
      }},
      entry{[](draw& d, outcome& o, std::uint64_t seed, int it) {
        auto X = tx::param<struct lse_x>(d.x);
        auto C = tx::param<struct lse_c>(d.col);
        check_tuple(o, seed, it, "grad sum(logsumexp(x + c, 1)) + mean(max(x, 0))",
                    tx::grad(tx::sum(tx::logsumexp(X + C, 1)) + tx::mean(tx::max(X, 0)), X, C));
      }},
  };
}

std::uint64_t seed_from_environment() {
  if (const char* s = std::getenv("TEXPR_PLAN_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

}  // namespace

TEST_CASE("kernel log equals placement's plan on random graphs") {
  const std::uint64_t seed = seed_from_environment();
  MESSAGE("placement/kernel-log differential test, seed " << seed << " (TEXPR_PLAN_SEED)");
  std::mt19937_64 g(seed);
  const auto graphs = catalogue();
  outcome o;
  constexpr int iterations = 600;
  for (int it = 0; it < iterations && o.failures < 5; ++it) {
    draw d(g);
    const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, graphs.size() - 1)(g);
    graphs[pick](d, o, seed, it);
  }
  CHECK(o.graphs >= 500);
  CHECK(o.failures == 0);
}

TEST_CASE("placement lists a composite's expansion and the plan matches a sample's values") {
  tx::tensor<float, 2> x({2, 3}, {1, 2, 3, -1, 0, 1});
  const std::string p = tx::placement(tx::softmax(x, 1));
  CHECK(p.find("softmax") != std::string::npos);
  CHECK(p.find("composed") != std::string::npos);
  CHECK(p.find("max ") != std::string::npos);  // the expansion's max pass
  const auto planned = tx::planned_kernels(tx::softmax(x, 1));
  tx::kernel_log log;
  tx::tensor<float, 2> s = tx::softmax(x, 1);
  CHECK(log.entries() == planned);
  float total = 0;
  for (int j = 0; j < 3; ++j) total += s(0, j);
  CHECK(total == doctest::Approx(1.0f));
  CHECK(s(0, 2) == doctest::Approx(std::exp(3.0f) / (std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f))));
}
