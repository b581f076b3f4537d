// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Data-parallel training of examples/mlp's 784-256-256-10 ELU network over MPI (tx::dist::mpi_comm): every rank
// holds the whole model, takes its shard of each batch (batch / ranks rows), computes the gradients of its shard's
// mean loss, and one allreduce(mean) per step averages the loss and the six gradients across ranks before the SGD
// update. Rank 0 then retrains the same steps alone on the full batches and compares the weights.
//
// Why they agree: the full batch's mean loss is the mean over ranks of the shards' mean losses (equal shards), so
// the averaged gradient is the full-batch gradient; only the order of the float summations differs. Over 20 steps
// that leaves differences of a few float ulps of the weights' size: the run fails if the largest exceeds 1e-4 times
// the largest weight (about 800 ulps of it).
//
// Run: mpiexec -n 2 ./data_parallel [--steps 20] [--batch 64]. Exit 0 only if the weights agree.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include <texpr/texpr.hpp>
#include <texpr/dist/mpi.hpp>

namespace tx = texpr;

namespace {

constexpr tx::index_t features = 784, hidden = 256, classes = 10;

/// The network's parameters (host).
struct model {
  tx::tensor<float, 2> w1, w2, w3;
  tx::tensor<float, 1> b1, b2, b3;
};

/// Logits of a batch: elu(elu(x W1 + b1) W2 + b2) W3 + b3.
template <class X, class W1, class B1, class W2, class B2, class W3, class B3>
auto logits(const X& x, const W1& w1, const B1& b1, const W2& w2, const B2& b2, const W3& w3, const B3& b3) {
  auto h1 = tx::elu(tx::matmul(x, w1) + b1);
  auto h2 = tx::elu(tx::matmul(h1, w2) + b2);
  return tx::matmul(h2, w3) + b3;
}

using batch_t = tx::view<const float, 2>;
using labels_t = tx::view<const std::int64_t, 1>;

/// (mean cross-entropy of the rows, d loss / d w1, d b1, d w2, d b2, d w3, d b3) as graphs.
auto train_step(const batch_t& x, const labels_t& labels, const model& m) {
  auto w1 = tx::param<struct w1_tag>(m.w1);
  auto b1 = tx::param<struct b1_tag>(m.b1);
  auto w2 = tx::param<struct w2_tag>(m.w2);
  auto b2 = tx::param<struct b2_tag>(m.b2);
  auto w3 = tx::param<struct w3_tag>(m.w3);
  auto b3 = tx::param<struct b3_tag>(m.b3);
  auto loss = tx::cross_entropy(logits(x, w1, b1, w2, b2, w3, b3), labels);
  return tx::value_and_grad(loss, w1, b1, w2, b2, w3, b3);
}

/// The same model on every rank: N(0, 1/in) weights from texpr's counter-based generator, zero biases.
model initial_model() {
  const auto weight = [](tx::index_t in, tx::index_t out, std::uint64_t seed) {
    return tx::tensor<float, 2>(tx::random::normal<float>({in, out}, seed, 0.0f, 1.0f / std::sqrt(static_cast<float>(in))));
  };
  return {weight(features, hidden, 1), weight(hidden, hidden, 2), weight(hidden, classes, 3),
          tx::zeros<float>({hidden}), tx::zeros<float>({hidden}), tx::zeros<float>({classes})};
}

/// MNIST-shaped synthetic data, identical on every rank (one seed): 10 Gaussian clouds around random prototypes.
struct dataset {
  tx::tensor<float, 2> x;
  tx::tensor<std::int64_t, 1> labels;
};
dataset make_data(tx::index_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> unit(0.0f, 1.0f);
  std::vector<float> prototypes(static_cast<std::size_t>(classes * features));
  for (auto& p : prototypes) p = unit(rng);
  dataset d{tx::tensor<float, 2>({n, features}), tx::tensor<std::int64_t, 1>({n})};
  std::uniform_int_distribution<int> pick(0, classes - 1);
  for (tx::index_t i = 0; i < n; ++i) {
    const int c = pick(rng);
    d.labels(i) = c;
    for (tx::index_t j = 0; j < features; ++j) d.x(i, j) = 0.25f * prototypes[static_cast<std::size_t>(c * features + j)] + unit(rng);
  }
  return d;
}

/// `steps` SGD steps; each uses rows [first + offset, first + offset + rows) of batch `step`. With a communicator the
/// loss and gradients are averaged across its ranks first (one allreduce per step). Returns the last mean loss.
float train(model& m, const dataset& d, long steps, tx::index_t batch, tx::index_t offset, tx::index_t rows, const tx::dist::mpi_comm* comm) {
  const float lr = 0.1f;
  float loss_value = 0;
  for (long step = 0; step < steps; ++step) {
    const tx::index_t first = step * batch + offset;
    const batch_t xb(d.x.data() + first * features, {rows, features});
    const labels_t yb(d.labels.data() + first, {rows});
    auto grads = tx::eval_all(train_step(xb, yb, m));
    if (comm) tx::dist::allreduce(*comm, grads, tx::dist::op::mean);  // loss and gradients, one packed call
    auto& [loss, gw1, gb1, gw2, gb2, gw3, gb3] = grads;
    m.w1 -= lr * gw1;
    m.b1 -= lr * gb1;
    m.w2 -= lr * gw2;
    m.b2 -= lr * gb2;
    m.w3 -= lr * gw3;
    m.b3 -= lr * gb3;
    loss_value = loss.item();
  }
  return loss_value;
}

/// max |a - b| over every parameter, and max |a| (the scale the tolerance is relative to).
std::pair<double, double> compare(const model& a, const model& b) {
  double diff = 0, scale = 0;
  const auto one = [&](const auto& x, const auto& y) {
    diff = std::max(diff, static_cast<double>(tx::max(tx::abs(x - y)).item()));
    scale = std::max(scale, static_cast<double>(tx::max(tx::abs(x)).item()));
  };
  one(a.w1, b.w1), one(a.b1, b.b1), one(a.w2, b.w2), one(a.b2, b.b2), one(a.w3, b.w3), one(a.b3, b.b3);
  return {diff, scale};
}

long arg(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

int run(int argc, char** argv) {
  const tx::dist::mpi_comm comm;  // MPI_COMM_WORLD
  const int rank = comm.rank(), ranks = comm.size();
  const long steps = arg(argc, argv, "--steps", 20);
  const tx::index_t batch = arg(argc, argv, "--batch", 64);
  if (batch % ranks != 0) {
    if (rank == 0) std::fprintf(stderr, "data_parallel: the batch (%lld) must divide evenly over %d ranks\n", static_cast<long long>(batch), ranks);
    return 2;
  }
  const tx::index_t shard = batch / ranks;
  const dataset d = make_data(batch * steps);

  model m = initial_model();
  // Every rank built the same weights; broadcasting rank 0's makes that true whatever each rank's generator did.
  tx::dist::broadcast(comm, m.w1), tx::dist::broadcast(comm, m.w2), tx::dist::broadcast(comm, m.w3);
  const float loss = train(m, d, steps, batch, rank * shard, shard, &comm);
  if (rank != 0) return 0;

  std::printf("data_parallel: %d ranks, %ld steps, batch %lld (%lld rows per rank); last mean loss %.5f\n", ranks, steps,
              static_cast<long long>(batch), static_cast<long long>(shard), static_cast<double>(loss));
  model reference = initial_model();
  const float reference_loss = train(reference, d, steps, batch, 0, batch, nullptr);
  const auto [diff, scale] = compare(m, reference);
  const double tolerance = 1e-4 * scale;
  std::printf("single-process reference: last loss %.5f; max |w_parallel - w_single| = %.3g (largest |w| %.3g, "
              "tolerance %.3g)\n",
              static_cast<double>(reference_loss), diff, scale, tolerance);
  const bool ok = diff <= tolerance;
  std::printf("%s\n", ok ? "OK: data-parallel training matches single-process training"
                         : "FAILED: data-parallel weights differ from single-process training");
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "data_parallel: %s\n", e.what());
    status = 1;
  }
  // Every rank exits with rank 0's verdict, so mpiexec's status is the comparison's.
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
