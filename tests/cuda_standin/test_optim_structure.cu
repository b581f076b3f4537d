// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::optim on cuda tensors, counted on the CUDA stand-in (no GPU): an optimiser step over the MLP's six float
// parameters is one multi-tensor launch once its state exists, and allocates nothing after the first step.
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

/// Three steps of `opt`; checks every step is one multi-tensor launch over the six parameters (the kernel log
/// names it), runs no GEMM and never waits for the device, and that only the first step allocates (the state).
template <class Opt> void check_steps(Opt& opt, six& grads, std::size_t first_allocations, const char* name) {
  INFO(name);
  for (int step = 0; step < 3; ++step) {
    const sd::scope s;
    tx::kernel_log log;
    opt.step(grads.all());
    const auto r = s.taken();
    if (step == 0) std::printf("---- %s, first step ----\n%s", name, sd::describe(r).c_str());
    INFO("step " << step);
    CHECK(r.allocations.size() == (step == 0 ? first_allocations : 0));
    CHECK(r.launches.size() == 1);
    CHECK(launches_named(r, "cuda_impl::multi_tensor_apply") == 1);
    REQUIRE(r.launches.size() == 1);
    CHECK(r.launches[0].grid.y == 6);  // one grid row per parameter
    CHECK(log.count("multi_tensor_update") == 1);
    CHECK(r.gemms.empty());
    CHECK(r.syncs.empty());
    for (const auto& l : r.launches) CHECK(l.kernel != "<unregistered>");
  }
}

}  // namespace

// The first step with state allocates it (momentum: a buffer per parameter; Adam: m and v) and writes it in the
// same launch, without reading it.
TEST_CASE("optimiser steps over six cuda parameters: one multi-tensor launch each, state allocated only at the first") {
  six params, grads;
  tx::optim::sgd sgd(params.all(), {.lr = 0.1});
  check_steps(sgd, grads, 0, "sgd");
  tx::optim::sgd momentum(params.all(), {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-4});
  check_steps(momentum, grads, 6, "sgd with momentum");
  tx::optim::adam adam(params.all(), {.weight_decay = 1e-4});
  check_steps(adam, grads, 12, "adam");
  tx::optim::adamw adamw(params.all(), {.lr = 1e-3, .weight_decay = 0.01});
  check_steps(adamw, grads, 12, "adamw");
}

TEST_CASE("a strided gradient is copied on its parameter's stream, then the multi-tensor launch") {
  six params;
  const ctensor<2> wide = tx::zeros<float, tx::cuda>({256, 784});
  const ctensor<1> b = tx::zeros<float, tx::cuda>({256});
  tx::optim::sgd sgd(std::tie(params.w1, params.b1), {.lr = 0.1});
  const sd::scope s;
  tx::kernel_log log;
  const tx::view<const float, 2, tx::cuda> transposed(wide.data(), {784, 256}, {1, 784}, wide.stream());
  sgd.step(std::make_tuple(transposed, b.view()));
  const auto r = s.taken();
  CHECK(r.launches.size() == 2);
  CHECK(launches_named(r, "multi_tensor") == 1);
  CHECK(log.count("multi_tensor_update") == 1);
  CHECK(log.count("fused_elementwise", "copy") == 1);
  REQUIRE(r.launches.size() == 2);
  CHECK(r.launches[0].stream == r.launches[1].stream);
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
