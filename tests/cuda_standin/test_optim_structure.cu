// tx::optim on cuda tensors, counted on the CUDA stand-in (no GPU): an optimiser step over the MLP's six parameters
// launches one fused elementwise kernel per tensor it writes, and allocates nothing after the first step.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <cstddef>
#include <cstdio>
#include <string>
#include <tuple>

#include "cuda_standin/standin.hpp"

namespace tx = texpr;
namespace sd = texpr_standin;

namespace {

template <std::size_t R> using ctensor = tx::tensor<float, R, tx::cuda>;

/// The MLP's parameters (784-256-256-10) and a gradient of each shape.
struct six {
  ctensor<2> w1 = tx::zeros<float, tx::cuda>({784, 256}), w2 = tx::zeros<float, tx::cuda>({256, 256}),
             w3 = tx::zeros<float, tx::cuda>({256, 10});
  ctensor<1> b1 = tx::zeros<float, tx::cuda>({256}), b2 = tx::zeros<float, tx::cuda>({256}),
             b3 = tx::zeros<float, tx::cuda>({10});
  auto all() { return std::tie(w1, b1, w2, b2, w3, b3); }
};

std::size_t launches_named(const sd::record& r, const std::string& part) {
  std::size_t n = 0;
  for (const auto& [family, count] : r.launches_by_family())
    if (family.find(part) != std::string::npos) n += count;
  return n;
}

/// Three steps of `opt`; checks each step after the first launches `passes` elementwise kernels per parameter,
/// allocates nothing, runs no GEMM and never waits for the device.
template <class Opt> void check_steps(Opt& opt, six& grads, std::size_t passes, const char* name) {
  INFO(name);
  for (int step = 0; step < 3; ++step) {
    const sd::scope s;
    opt.step(grads.all());
    const auto r = s.taken();
    if (step == 0) std::printf("---- %s, first step ----\n%s", name, sd::describe(r).c_str());
    INFO("step " << step);
    if (step > 0) {
      CHECK(r.allocations.empty());
      CHECK(r.launches.size() == 6 * passes);
      CHECK(launches_named(r, "cuda_impl::assign_") == 6 * passes);
    }
    CHECK(r.gemms.empty());
    CHECK(r.syncs.empty());
    for (const auto& l : r.launches) CHECK(l.kernel != "<unregistered>");
  }
}

}  // namespace

TEST_CASE("optimiser steps over six cuda parameters: one launch per tensor written, no allocation after the first") {
  six params, grads;
  tx::optim::sgd sgd(params.all(), {.lr = 0.1});
  check_steps(sgd, grads, 1, "sgd");
  tx::optim::sgd momentum(params.all(), {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-4});
  check_steps(momentum, grads, 2, "sgd with momentum");
  tx::optim::adam adam(params.all(), {.weight_decay = 1e-4});
  check_steps(adam, grads, 3, "adam");
  tx::optim::adamw adamw(params.all(), {.lr = 1e-3, .weight_decay = 0.01});
  check_steps(adamw, grads, 3, "adamw");
}

TEST_CASE("clip_grad_norm on cuda: a reduction per gradient, one sync for the norm, no allocation once warm") {
  six grads;
  (void)tx::optim::clip_grad_norm(grads.all(), 1.0);  // warm the device cache
  const sd::scope s;
  (void)tx::optim::clip_grad_norm(grads.all(), 1.0);
  const auto r = s.taken();
  std::printf("---- clip_grad_norm ----\n%s%s", sd::describe(r).c_str(), sd::describe_launches(r).c_str());
  CHECK(r.syncs.size() == 1);
  CHECK(r.allocations.empty());
  CHECK(launches_named(r, "reduce") >= 6);
}
