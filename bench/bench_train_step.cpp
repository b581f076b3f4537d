// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One SGD training step of the 784-256-256-10 ELU network (batch 128, MSE against one-hot), on the host:
// texpr's tx::value_and_grad + tx::eval_all + fused updates, against the same step written by hand with
// Eigen Tensor (forward activations kept, backward contractions written out). Both run in this process at
// 1 thread and at the machine's thread count; the summary prints Eigen time / texpr time per thread count.
#include <benchmark/benchmark.h>

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <texpr/texpr.hpp>

namespace tx = texpr;

namespace {

constexpr long batch = 128, in = 784, hidden = 256, out = 10;
constexpr float lr = 0.05f;

float noise(std::mt19937& g) { return std::normal_distribution<float>(0.0f, 1.0f)(g); }

// ---- texpr -------------------------------------------------------------------------------------------

struct texpr_net {
  tx::tensor<float, 2> x{{batch, in}}, y{{batch, out}}, w1{{in, hidden}}, w2{{hidden, hidden}}, w3{{hidden, out}};
  tx::tensor<float, 1> b1{{hidden}}, b2{{hidden}}, b3{{out}};
  texpr_net() {
    std::mt19937 g(1);
    for (auto* t : {&x, &w1, &w2, &w3})
      for (tx::index_t i = 0; i < t->size(); ++i) t->data()[i] = 0.05f * noise(g);
    for (long i = 0; i < batch; ++i) y(i, i % out) = 1.0f;
  }
  float step() {
    auto W1 = tx::param<struct w1_tag>(w1);
    auto B1 = tx::param<struct b1_tag>(b1);
    auto W2 = tx::param<struct w2_tag>(w2);
    auto B2 = tx::param<struct b2_tag>(b2);
    auto W3 = tx::param<struct w3_tag>(w3);
    auto B3 = tx::param<struct b3_tag>(b3);
    auto h1 = tx::elu(tx::matmul(x, W1) + B1);
    auto h2 = tx::elu(tx::matmul(h1, W2) + B2);
    auto loss = tx::mean(tx::pow(tx::matmul(h2, W3) + B3 - y, 2));
    auto [l, gw1, gb1, gw2, gb2, gw3, gb3] = tx::eval_all(tx::value_and_grad(loss, W1, B1, W2, B2, W3, B3));
    w1 = w1 - lr * gw1;
    b1 = b1 - lr * gb1;
    w2 = w2 - lr * gw2;
    b2 = b2 - lr * gb2;
    w3 = w3 - lr * gw3;
    b3 = b3 - lr * gb3;
    return l.item();
  }
};

// ---- Eigen Tensor, by hand ---------------------------------------------------------------------------

using mat = Eigen::Tensor<float, 2, Eigen::RowMajor>;
using vec = Eigen::Tensor<float, 1, Eigen::RowMajor>;
using pair = Eigen::IndexPair<int>;

struct eigen_net {
  mat x{batch, in}, y{batch, out}, w1{in, hidden}, w2{hidden, hidden}, w3{hidden, out};
  vec b1{hidden}, b2{hidden}, b3{out};
  // Activations and gradients, kept between steps as a hand-written trainer would.
  mat z1{batch, hidden}, h1{batch, hidden}, z2{batch, hidden}, h2{batch, hidden}, o{batch, out}, go{batch, out};
  mat gh2{batch, hidden}, gz2{batch, hidden}, gh1{batch, hidden}, gz1{batch, hidden};
  mat gw1{in, hidden}, gw2{hidden, hidden}, gw3{hidden, out};
  Eigen::Tensor<float, 0, Eigen::RowMajor> loss;
  eigen_net() {
    std::mt19937 g(1);
    for (auto* t : {&x, &w1, &w2, &w3})
      for (long i = 0; i < t->size(); ++i) t->data()[i] = 0.05f * noise(g);
    y.setZero();
    for (long i = 0; i < batch; ++i) y(i, i % out) = 1.0f;
    b1.setZero();
    b2.setZero();
    b3.setZero();
  }
  template <class Device> float step(const Device& d) {
    const Eigen::array<pair, 1> ab{pair(1, 0)};   // A B
    const Eigen::array<pair, 1> atb{pair(0, 0)};  // A^T B
    const Eigen::array<pair, 1> abt{pair(1, 1)};  // A B^T
    const Eigen::array<long, 2> row{1, 0}, bias_h{1, hidden}, bias_o{1, out}, rep{batch, 1};
    const Eigen::array<long, 1> rows{0};
    (void)row;
    z1.device(d) = x.contract(w1, ab) + b1.reshape(bias_h).broadcast(rep);
    h1.device(d) = (z1 > 0.0f).select(z1, z1.exp() - 1.0f);
    z2.device(d) = h1.contract(w2, ab) + b2.reshape(bias_h).broadcast(rep);
    h2.device(d) = (z2 > 0.0f).select(z2, z2.exp() - 1.0f);
    o.device(d) = h2.contract(w3, ab) + b3.reshape(bias_o).broadcast(rep);
    go.device(d) = o - y;
    loss.device(d) = go.square().mean();
    go.device(d) = go * (2.0f / static_cast<float>(batch * out));
    gw3.device(d) = h2.contract(go, atb);
    gh2.device(d) = go.contract(w3, abt);
    gz2.device(d) = (z2 > 0.0f).select(gh2, gh2 * z2.exp());
    gw2.device(d) = h1.contract(gz2, atb);
    gh1.device(d) = gz2.contract(w2, abt);
    gz1.device(d) = (z1 > 0.0f).select(gh1, gh1 * z1.exp());
    gw1.device(d) = x.contract(gz1, atb);
    w1.device(d) -= lr * gw1;
    b1.device(d) -= lr * gz1.sum(rows);
    w2.device(d) -= lr * gw2;
    b2.device(d) -= lr * gz2.sum(rows);
    w3.device(d) -= lr * gw3;
    b3.device(d) -= lr * go.sum(rows);
    return loss();
  }
};

int max_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void bm_texpr(benchmark::State& state) {
  tx::set_num_threads(static_cast<int>(state.range(0)));
  texpr_net net;
  for (auto _ : state) benchmark::DoNotOptimize(net.step());
  state.counters["loss"] = net.step();
}

void bm_eigen(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  eigen_net net;
  if (threads == 1) {
    Eigen::DefaultDevice d;
    for (auto _ : state) benchmark::DoNotOptimize(net.step(d));
    state.counters["loss"] = net.step(d);
  } else {
    Eigen::ThreadPool pool(threads);
    Eigen::ThreadPoolDevice d(&pool, threads);
    for (auto _ : state) benchmark::DoNotOptimize(net.step(d));
    state.counters["loss"] = net.step(d);
  }
}

// Keeps each run's time per iteration, for the ratio summary.
class collector : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ms;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Iteration) ms[r.benchmark_name()] = r.GetAdjustedRealTime();  // in the unit set below: ms
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> threads{1};
  if (max_threads() > 1) threads.push_back(max_threads());
  for (long t : threads) {
    benchmark::RegisterBenchmark("train_step/texpr", bm_texpr)->Arg(t)->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark("train_step/eigen", bm_eigen)->Arg(t)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  collector c;
  benchmark::RunSpecifiedBenchmarks(&c);
  std::printf("\nOne training step, batch %ld, %ld-%ld-%ld-%ld ELU, MSE, SGD (ms; ratio = Eigen / texpr, above 1: texpr faster)\n",
              batch, in, hidden, hidden, out);
  std::printf("| threads | texpr | Eigen Tensor by hand | ratio |\n|---|---|---|---|\n");
  for (long t : threads) {
    const std::string suffix = "/" + std::to_string(t) + "/real_time";
    const double a = c.ms["train_step/texpr" + suffix], b = c.ms["train_step/eigen" + suffix];
    if (a > 0 && b > 0) std::printf("| %ld | %.3f | %.3f | %.2f |\n", t, a, b, b / a);
  }
  benchmark::Shutdown();
}
