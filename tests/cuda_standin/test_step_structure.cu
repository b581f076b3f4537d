// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What texpr's cuda backend asks of the GPU, counted on a machine without one: the program links the CUDA stand-in
// (tests/cuda_standin/standin.cpp) instead of libcudart and libcublas, so kernels and GEMMs are recorded, never run.
// Values are garbage; only the structure (launches, GEMMs, allocations, syncs) is checked.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>

#include "cuda_standin/standin.hpp"

namespace tx = texpr;
namespace sd = texpr_standin;

namespace {

template <std::size_t R>
using ctensor = tx::tensor<float, R, tx::cuda>;

/// Launches whose kernel family contains `part`.
std::size_t launches_named(const sd::record& r, const std::string& part) {
  std::size_t n = 0;
  for (const auto& [family, count] : r.launches_by_family())
    if (family.find(part) != std::string::npos) n += count;
  return n;
}

}  // namespace

TEST_CASE("the stand-in reports one H200-like device") {
  REQUIRE(tx::cuda_device_available());
  const auto info = tx::cuda_device_info();
  CHECK(info.major == 9);
  CHECK(info.minor == 0);
  CHECK(info.multiprocessors == 132);
  CHECK(info.fp64_full_rate);
}

TEST_CASE("single operations: one launch, one GEMM, one sync") {
  const ctensor<1> a = tx::zeros<float, tx::cuda>({1000});
  const ctensor<1> b = tx::zeros<float, tx::cuda>({1000});

  SUBCASE("c = a + b is one fused elementwise launch and one allocation") {
    const sd::scope s;
    const ctensor<1> c = a + b;
    const auto r = s.taken();
    MESSAGE(sd::describe(r));
    CHECK(r.launches.size() == 1);
    CHECK(launches_named(r, "cuda_impl::assign_") == 1);
    CHECK(r.gemms.empty());
    // At most one fresh block, of its size class (512-byte multiples), unless texpr's device cache had one.
    CHECK(r.allocations.size() <= 1);
    CHECK(r.allocated_bytes() <= 4096);
    CHECK(r.syncs.empty());
  }

  SUBCASE("a released block is reused by the next allocation of its class on the same stream") {
    { const ctensor<1> c = a + b; }  // allocated (fresh or cached), then released into texpr's cache
    const sd::scope s;
    const ctensor<1> c = a * b;
    const auto r = s.taken();
    MESSAGE(sd::describe(r));
    CHECK(r.launches.size() == 1);
    CHECK(r.allocations.empty());
    CHECK(r.frees == 0);
  }

  SUBCASE("a full sum is launched without a sync or a memset; item() syncs once") {
    (void)tx::eval(tx::sum(a));  // the stream's ticket is zeroed at its first use only
    const sd::scope s;
    const auto total = tx::eval(tx::sum(a));
    const auto evaluated = s.taken();
    MESSAGE(sd::describe(evaluated));
    CHECK(evaluated.launches.size() == 1);  // one launch: the last block combines the blocks' partials
    CHECK(launches_named(evaluated, "reduce_all_once") == 1);
    CHECK(evaluated.memsets == 0);  // the stream's ticket is zero: the last block of every launch resets it
    CHECK(evaluated.allocations.size() <= 2);  // the result and the scratch (none once the device cache is warm)
    CHECK(evaluated.syncs.empty());
    const sd::scope read;
    (void)total.item();
    const auto r = read.taken();
    CHECK(r.syncs.size() == 1);
    CHECK(r.copies_of(sd::copy_kind::device_to_host) == 1);
    CHECK(r.launches.empty());
  }

  SUBCASE("a matmul is one cuBLAS GEMM with texpr's m, n, k swapped into cuBLAS's column-major terms") {
    const ctensor<2> x = tx::zeros<float, tx::cuda>({128, 784});
    const ctensor<2> w = tx::zeros<float, tx::cuda>({784, 256});
    const sd::scope s;
    const ctensor<2> y = tx::matmul(x, w);
    const auto r = s.taken();
    MESSAGE(sd::describe(r));
    REQUIRE(r.gemms.size() == 1);
    CHECK(r.gemms[0].m == 256);  // cuBLAS computes y^T = w^T x^T
    CHECK(r.gemms[0].n == 128);
    CHECK(r.gemms[0].k == 784);
    CHECK(r.gemms[0].batch == 1);
    CHECK(r.gemms[0].a_type == CUDA_R_32F);
    CHECK(r.launches.empty());
    CHECK(r.syncs.empty());
  }
}

TEST_CASE("a complex matmul is one cuBLAS GEMM on CUDA_C_32F / CUDA_C_64F, batched, transposed operands in place") {
  const tx::tensor<std::complex<float>, 3, tx::cuda> a = tx::zeros<std::complex<float>, tx::cuda>({3, 4, 5});
  const tx::tensor<std::complex<float>, 3, tx::cuda> b = tx::zeros<std::complex<float>, tx::cuda>({3, 2, 5});
  {
    const sd::scope s;
    const tx::tensor<std::complex<float>, 3, tx::cuda> c = tx::matmul(a, tx::transpose(b));  // (3, 4, 5) x (3, 5, 2)
    const auto r = s.taken();
    MESSAGE(sd::describe(r));
    REQUIRE(r.gemms.size() == 1);
    CHECK(r.gemms[0].m == 2);  // cuBLAS computes c^T = b^T a^T
    CHECK(r.gemms[0].n == 4);
    CHECK(r.gemms[0].k == 5);
    CHECK(r.gemms[0].batch == 3);
    CHECK(r.gemms[0].transa == CUBLAS_OP_T);  // the transposed b read in place, not copied
    CHECK(r.gemms[0].a_type == CUDA_C_32F);
    CHECK(r.gemms[0].c_type == CUDA_C_32F);
    CHECK(r.gemms[0].compute_type == CUBLAS_COMPUTE_32F);
    CHECK(r.launches.empty());
  }
  const tx::tensor<std::complex<double>, 2, tx::cuda> x = tx::zeros<std::complex<double>, tx::cuda>({6, 7});
  const tx::tensor<std::complex<double>, 2, tx::cuda> w = tx::zeros<std::complex<double>, tx::cuda>({7, 8});
  const sd::scope s;
  const tx::tensor<std::complex<double>, 2, tx::cuda> y = tx::matmul(x, w);
  const auto r = s.taken();
  REQUIRE(r.gemms.size() == 1);
  CHECK(r.gemms[0].a_type == CUDA_C_64F);
  CHECK(r.gemms[0].compute_type == CUBLAS_COMPUTE_64F);
  CHECK(tx::placement(tx::matmul(x, w)).find("cublas_gemm") != std::string::npos);
}

// ---- the MLP training step of examples/mlp/mlp.cpp: 784-256-256-10 ELU network, batch 128, SGD ----

namespace {

constexpr tx::index_t features = 784, hidden = 256, classes = 10, batch = 128;

/// The network's parameters.
struct model {
  ctensor<2> w1, w2, w3;
  ctensor<1> b1, b2, b3;
};

template <class X, class W1, class B1, class W2, class B2, class W3, class B3>
auto logits(const X& x, const W1& w1, const B1& b1, const W2& w2, const B2& b2, const W3& w3, const B3& b3) {
  auto h1 = tx::elu(tx::matmul(x, w1) + b1);
  auto h2 = tx::elu(tx::matmul(h1, w2) + b2);
  return tx::matmul(h2, w3) + b3;
}

template <class X, class Y>
auto train_step(const X& x, const Y& labels, const model& m) {
  auto w1 = tx::param<struct w1_tag>(m.w1);
  auto b1 = tx::param<struct b1_tag>(m.b1);
  auto w2 = tx::param<struct w2_tag>(m.w2);
  auto b2 = tx::param<struct b2_tag>(m.b2);
  auto w3 = tx::param<struct w3_tag>(m.w3);
  auto b3 = tx::param<struct b3_tag>(m.b3);
  auto loss = tx::cross_entropy(logits(x, w1, b1, w2, b2, w3, b3), labels);
  return tx::value_and_grad(loss, w1, b1, w2, b2, w3, b3);
}

/// Per-step records of `steps` SGD steps (graphs built, evaluated together, tx::optim::sgd's update, the loss read), printed
/// when `print` is set.
std::vector<sd::record> run_steps(int steps, bool print) {
  model m{tx::random::normal<float, tx::cuda>({features, hidden}, 1, 0.0f, 0.03f),
          tx::random::normal<float, tx::cuda>({hidden, hidden}, 2, 0.0f, 0.06f),
          tx::random::normal<float, tx::cuda>({hidden, classes}, 3, 0.0f, 0.06f),
          tx::zeros<float, tx::cuda>({hidden}),
          tx::zeros<float, tx::cuda>({hidden}),
          tx::zeros<float, tx::cuda>({classes})};
  const ctensor<2> x = tx::zeros<float, tx::cuda>({batch, features});
  const tx::tensor<std::int64_t, 1, tx::cuda> labels = tx::zeros<std::int64_t, tx::cuda>({batch});
  tx::optim::sgd opt(std::tie(m.w1, m.b1, m.w2, m.b2, m.w3, m.b3), {.lr = 0.1});
  std::vector<sd::record> out;
  for (int step = 0; step < steps; ++step) {
    const sd::scope s;
    const tx::view<const float, 2, tx::cuda> xb(x.data(), {batch, features});
    const tx::view<const std::int64_t, 1, tx::cuda> yb(labels.data(), {batch});
    {
      const auto graphs = train_step(xb, yb, m);
      const auto result = tx::eval_all(graphs);
      opt.step(result);  // the six updates: one multi-tensor launch
      (void)std::get<0>(result).item();
    }  // the step's temporaries are freed inside the step
    out.push_back(s.taken());
    if (print) std::printf("---- mlp step %d ----\n%s", step, sd::describe(out.back()).c_str());
    if (print && step == 0) std::printf("in order:\n%s", sd::describe_launches(out.back()).c_str());
  }
  return out;
}

/// The syncs of a step other than the loss read (item() waits once, by design).
std::size_t syncs_besides_loss(const sd::record& r) { return r.syncs.empty() ? 0 : r.syncs.size() - 1; }

}  // namespace

TEST_CASE("elementwise kernel choice: 16 bytes per thread for 16-bit values, the rows kernel for aligned broadcasts") {
  // the one launch of `run`: its kernel family and grid
  const auto only_launch = [](const auto& run) {
    const sd::scope s;
    run();
    const auto r = s.taken();
    REQUIRE(r.launches.size() == 1);
    return std::make_pair(sd::kernel_family(r.launches[0].kernel), r.launches[0].grid.x);
  };
  SUBCASE("dense half and bfloat16: 8 values per thread (a grid of 8192 / (256 * 8) blocks)") {
    const tx::tensor<tx::half, 1, tx::cuda> a = tx::zeros<tx::half, tx::cuda>({8192});
    const tx::tensor<tx::bfloat16, 1, tx::cuda> b = tx::zeros<tx::bfloat16, tx::cuda>({8192});
    CHECK(only_launch([&] { const tx::tensor<tx::half, 1, tx::cuda> c = a * a + a; }) ==
          std::make_pair(std::string("cuda_impl::assign_vectorized"), 4u));
    CHECK(only_launch([&] { const tx::tensor<tx::bfloat16, 1, tx::cuda> c = b - b; }) ==
          std::make_pair(std::string("cuda_impl::assign_vectorized"), 4u));
  }
  SUBCASE("broadcast: rows of 4k aligned floats take the rows kernel; other rows, unaligned operands the strided one") {
    const ctensor<2> x = tx::zeros<float, tx::cuda>({64, 129});
    const ctensor<1> b = tx::zeros<float, tx::cuda>({129});
    const ctensor<2> col = tx::zeros<float, tx::cuda>({64, 1});
    const auto xv = [&](tx::index_t first, tx::index_t len) {
      return tx::view<const float, 2, tx::cuda>(x.data() + first, {64, len});
    };
    const auto bv = [&](tx::index_t first, tx::index_t len) {
      return tx::view<const float, 1, tx::cuda>(b.data() + first, {len});
    };
    const std::string rows = "cuda_impl::assign_rows", strided = "cuda_impl::assign_strided";
    CHECK(only_launch([&] { const ctensor<2> c = xv(0, 128) + bv(0, 128); }).first == rows);
    CHECK(only_launch([&] { const ctensor<2> c = xv(0, 128) - col; }).first == rows);        // the softmax shift
    CHECK(only_launch([&] { const ctensor<2> c = xv(0, 128) + bv(0, 128); }).second == 8u);  // 64 * 128 / (256 * 4)
    CHECK(only_launch([&] { const ctensor<2> c = xv(0, 129) + bv(0, 129); }).first == strided);
    CHECK(only_launch([&] { const ctensor<2> c = xv(1, 128) + bv(0, 128); }).first == strided);
    CHECK(only_launch([&] { const ctensor<2> c = xv(0, 128) + bv(1, 128); }).first == strided);
    CHECK(only_launch([&] { const ctensor<2> c = xv(0, 64) + tx::transpose(xv(0, 64)); }).first == strided);
  }
}

// Launches are texpr's own: cuBLAS's kernels inside each GEMM are not seen here (a profiler counts them too).
TEST_CASE("the mlp training step as one unit: at most 16 launches, GEMMs included; no allocation or sync after the first") {
  const auto steps = run_steps(3, true);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& r = steps[i];
    INFO("step " << i);
    // The seed's step made 29 launches, 10 GEMMs and 33 allocations. Now each value is computed once (8 GEMMs) and
    // there are 8 launches: the forward bias + ELU epilogues (3), the loss (row_cross_entropy), dlogits with b3's
    // gradient (row_cross_entropy_grad with column sums), the two deltas with b2's and b1's gradients
    // (assign_rows_column_sums) and the six updates (one multi-tensor launch).
    CHECK(r.launches.size() + r.gemms.size() <= 16);
    CHECK(r.launches.size() <= 8);
    CHECK(launches_named(r, "cross_entropy_rows") == 1);
    CHECK(launches_named(r, "cross_entropy_grad_rows") == 1);
    CHECK(launches_named(r, "assign_rows_column_sums") == 2);
    CHECK(launches_named(r, "reduce_columns") == 0);  // no bias gradient has a launch of its own
    CHECK(launches_named(r, "multi_tensor_apply") == 1);
    CHECK(r.gemms.size() == 8);
    if (i > 0) CHECK(r.allocations.empty());  // texpr's device cache serves every block after the first step
    if (i > 0) CHECK(r.memsets == 0);  // the seed's step made 4, one per ticketed launch (stream_tickets)
    CHECK(r.allocations.size() <= 21);
    CHECK(r.syncs.size() <= 1);  // the loss's item()
    CHECK(syncs_besides_loss(r) == 0);
    // Every launch is attributed to a registered kernel (the stand-in's own check).
    for (const auto& l : r.launches) CHECK(l.kernel != "<unregistered>");
  }
}

// tx::planned_kernels (the walk tx::placement prints) lists the cuda kernels the step runs, as tx::kernel_log sees
// them: one dispatch decision for both (tests/core/test_placement_log.cpp checks random host graphs).
TEST_CASE("the mlp training step: the kernel log equals the placement plan on cuda") {
  model m{tx::random::normal<float, tx::cuda>({features, hidden}, 1, 0.0f, 0.03f),
          tx::random::normal<float, tx::cuda>({hidden, hidden}, 2, 0.0f, 0.06f),
          tx::random::normal<float, tx::cuda>({hidden, classes}, 3, 0.0f, 0.06f),
          tx::zeros<float, tx::cuda>({hidden}),
          tx::zeros<float, tx::cuda>({hidden}),
          tx::zeros<float, tx::cuda>({classes})};
  const ctensor<2> x = tx::zeros<float, tx::cuda>({batch, features});
  const tx::tensor<std::int64_t, 1, tx::cuda> labels = tx::zeros<std::int64_t, tx::cuda>({batch});
  const auto graphs = train_step(x, labels, m);
  const auto planned = tx::planned_kernels(graphs);
  tx::kernel_log log;
  (void)tx::eval_all(graphs);
  std::string listing;
  for (const auto& k : planned) listing += k.implementation + " " + k.op + " " + k.dtype + "\n";
  INFO("planned:\n" << listing << "ran:\n" << log.str());
  CHECK(log.entries() == planned);
  CHECK(planned.size() >= 8);
}

namespace {
/// Checks that evaluating e on cuda runs exactly the kernels tx::planned_kernels lists.
template <class E> std::size_t check_plan(const char* name, const E& e) {
  const auto planned = tx::planned_kernels(e);
  tx::kernel_log log;
  (void)tx::eval_all(e);
  std::string listing;
  for (const auto& k : planned) listing += k.implementation + " " + k.op + " " + k.dtype + "\n";
  INFO(name << "\nplanned:\n" << listing << "ran:\n" << log.str() << tx::placement(e));
  CHECK(log.entries() == planned);
  return log.count("fused_elementwise", "copy");
}
}  // namespace

// cuBLAS reads only some layouts in place (cublas_gemm::reads_in_place): the others are copied first, once, and
// the plan lists the copy.
TEST_CASE("cuda graphs: the kernel log equals the placement plan") {
  const ctensor<2> x = tx::random::normal<float, tx::cuda>({6, 8}, 1), w = tx::random::normal<float, tx::cuda>({8, 3}, 2);
  const ctensor<2> w4 = tx::random::normal<float, tx::cuda>({4, 3}, 3), a = tx::random::normal<float, tx::cuda>({6, 3}, 4);
  const ctensor<1> v = tx::random::normal<float, tx::cuda>({8}, 5);
  CHECK(check_plan("matmul(slice(x, 1, 0, 8, 2), w4): a copied operand", tx::matmul(tx::slice(x, 1, 0, 8, 2), w4)) == 1);
  CHECK(check_plan("matmul(broadcast_to(v), w): a copied operand", tx::matmul(tx::broadcast_to(v, tx::shape_t<2>{6, 8}), w)) == 1);
  CHECK(check_plan("matmul(slice(exp(x), 1, 0, 8, 2), w4): copied, evaluated once",
                   tx::matmul(tx::slice(tx::exp(x), 1, 0, 8, 2), w4)) == 1);
  CHECK(check_plan("matmul(transpose(matmul(w, transpose(a))), w)", tx::matmul(tx::transpose(tx::matmul(w, tx::transpose(a))), w)) == 0);
  check_plan("elu(matmul(x, w) + a)", tx::elu(tx::matmul(x, w) + a));
  check_plan("mean(elu(matmul(x, w) + a), 0)", tx::mean(tx::elu(tx::matmul(x, w) + a), 0));
  check_plan("softmax(matmul(x, w), 1)", tx::softmax(tx::matmul(x, w), 1));
  check_plan("concat(1, matmul(x, w), a)", tx::concat(1, tx::matmul(x, w), a));
}

// ---- the same step captured once into a CUDA graph (tx::capture_step) and replayed ----

namespace {

/// The seed's step on fixed buffers: the batch lives in staging tensors (a new batch is copied into them), the six
/// updates are in place.
struct captured_setup {
  model m{tx::random::normal<float, tx::cuda>({features, hidden}, 1, 0.0f, 0.03f),
          tx::random::normal<float, tx::cuda>({hidden, hidden}, 2, 0.0f, 0.06f),
          tx::random::normal<float, tx::cuda>({hidden, classes}, 3, 0.0f, 0.06f),
          tx::zeros<float, tx::cuda>({hidden}),
          tx::zeros<float, tx::cuda>({hidden}),
          tx::zeros<float, tx::cuda>({classes})};
  ctensor<2> x = tx::zeros<float, tx::cuda>({batch, features});
  tx::tensor<std::int64_t, 1, tx::cuda> labels = tx::zeros<std::int64_t, tx::cuda>({batch});
  tx::optim::sgd<ctensor<2>, ctensor<1>, ctensor<2>, ctensor<1>, ctensor<2>, ctensor<1>> opt{
      std::tie(m.w1, m.b1, m.w2, m.b2, m.w3, m.b3), {.lr = 0.1}};

  auto graphs() const { return train_step(x.view(), labels.view(), m); }
  void update(const auto& r) { opt.step(r); }
};

}  // namespace

TEST_CASE("the mlp step captured into a CUDA graph: replay is one graph launch, no allocation, no sync") {
  captured_setup s;
  const auto graphs = s.graphs();
  static_assert(tx::capturable<std::tuple_element_t<0, decltype(graphs)>>);
  // Warm-up, eagerly: fills texpr's device cache and sets up cuBLAS's workspace on this stream.
  sd::record eager, cold;
  tx::detail::device_block_cache::instance().release_all();  // so that the first step below allocates every block
  for (int step = 0; step < 2; ++step) {
    const sd::scope rec;
    s.update(tx::eval_all(graphs));
    eager = rec.taken();
    if (step == 0) cold = eager;
  }
  const sd::scope rec_capture;
  const auto step = tx::capture_step(graphs, [&](const auto& r) { s.update(r); });
  const auto captured = rec_capture.taken();
  MESSAGE("capture:\n" << sd::describe(captured));
  REQUIRE(captured.captures.size() == 1);
  CHECK_FALSE(captured.captures[0].invalidated);
  CHECK(captured.captures[0].mode == cudaStreamCaptureModeThreadLocal);
  // The capture records what the eager step enqueues, no more, and allocates nothing.
  CHECK(captured.launches.size() == eager.launches.size());
  CHECK(captured.gemms.size() == eager.gemms.size());
  CHECK(captured.allocations.empty());
  CHECK(captured.syncs.empty());
  CHECK(captured.memsets == 0);  // no memset node: the tickets are zero before each launch and reset by it
  CHECK(step.graph().nodes() == captured.launches.size() + captured.gemms.size() + captured.memsets + captured.copies.size());
  for (const auto& l : captured.launches) CHECK(l.stream == step.graph().stream());
  for (const auto& g : captured.gemms) {
    CHECK(g.stream == step.graph().stream());
    CHECK(g.workspace > 0);  // cuBLAS was given texpr's workspace: it does not allocate inside the capture
  }

  // Each step: the next batch is copied into the staging tensors (same addresses), then one replay.
  const tx::tensor<float, 2> host_x({batch, features});
  const tx::tensor<std::int64_t, 1> host_y({batch});
  const void* const staged = s.x.data();
  const sd::scope rec_replay;
  constexpr int replays = 5;
  for (int i = 0; i < replays; ++i) {
    tx::copy_into(s.x, host_x);
    tx::copy_into(s.labels, host_y);
    step.replay();
  }
  const auto replayed = rec_replay.taken();
  CHECK(s.x.data() == staged);
  MESSAGE("replays:\n" << sd::describe(replayed));
  CHECK(replayed.graph_launches.size() == replays);
  CHECK(replayed.launches.empty());
  CHECK(replayed.gemms.empty());
  CHECK(replayed.allocations.empty());
  CHECK(replayed.syncs.empty());
  CHECK(replayed.copies_of(sd::copy_kind::host_to_device) == 2 * replays);
  CHECK(replayed.copies.size() == 2 * replays);
  for (const auto& g : replayed.graph_launches) CHECK(g.nodes == step.graph().nodes());

  // The graph's blocks stay reserved for it: an eager step now cannot take any of them from the cache (it allocates
  // every block afresh, as the first step did) and its results live elsewhere.
  {
    const auto from_pool = [](const sd::record& r) {
      return std::count_if(r.allocations.begin(), r.allocations.end(), [](const auto& a) { return a.stream_ordered; });
    };
    const sd::scope rec_eager;
    const auto r = tx::eval_all(graphs);
    CHECK(from_pool(rec_eager.taken()) == from_pool(cold));
    CHECK(std::get<0>(r).data() != std::get<0>(step.results()).data());
    CHECK(std::get<1>(r).data() != std::get<1>(step.results()).data());
  }

  // The loss is read after a replay, outside the graph: one sync.
  const sd::scope rec_read;
  (void)std::get<0>(step.results()).item();
  CHECK(rec_read.taken().syncs.size() == 1);
}

TEST_CASE("texpr's work never runs on the legacy default stream") {
  captured_setup s;
  const sd::scope rec;
  s.update(tx::eval_all(s.graphs()));
  const ctensor<1> c = tx::zeros<float, tx::cuda>({10}) + 1.0f;
  const auto r = rec.taken();
  REQUIRE_FALSE(r.launches.empty());
  for (const auto& l : r.launches) CHECK(l.stream != nullptr);
  for (const auto& g : r.gemms) CHECK(g.stream != nullptr);
  CHECK(c.stream() == tx::cuda_stream());
  CHECK(s.m.w1.stream() == tx::cuda_stream());
}

TEST_CASE("a capture that waits for the device or finds no cached block throws cuda_error naming the call") {
  captured_setup s;
  const auto graphs = s.graphs();
  s.update(tx::eval_all(graphs));  // warm-up
  SUBCASE("item() inside the capture: the copy to pageable host memory (and the wait) is refused") {
    try {
      (void)tx::capture_step(graphs, [&](const auto& r) { (void)std::get<0>(r).item(); });
      FAIL("the capture did not throw");
    } catch (const tx::cuda_error& e) {
      MESSAGE(std::string(e.what()));
      const std::string call = e.call();
      CHECK((call.find("cudaMemcpyAsync") != std::string::npos || call.find("cudaStreamSynchronize") != std::string::npos));
      CHECK(e.code() == cudaErrorStreamCaptureUnsupported);
    }
  }
  SUBCASE("an allocation the warm-up did not leave in the cache") {
    try {
      (void)tx::capture_step(graphs, [&](const auto&) { const ctensor<1> big = tx::zeros<float, tx::cuda>({12345679}); });
      FAIL("the capture did not throw");
    } catch (const tx::cuda_error& e) {
      MESSAGE(std::string(e.what()));
      CHECK(std::string(e.call()).find("tx::capture_step: allocate") != std::string::npos);
    }
  }
  // After a failed capture, eager work and a new capture still work.
  s.update(tx::eval_all(graphs));
  const auto step = tx::capture_step(graphs, [&](const auto& r) { s.update(r); });
  CHECK(step.graph().nodes() > 0);
}

TEST_CASE("stream tickets: one counter per stream, zeroed by one memset at its first use, never again") {
  cudaStream_t s1 = nullptr, s2 = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess);
  auto& tickets = tx::detail::stream_tickets::instance();
  const sd::scope first;
  unsigned* t1 = tickets.get(s1);
  unsigned* t2 = tickets.get(s2);
  const auto r = first.taken();
  CHECK(r.memsets == 2);
  CHECK(t1 != t2);
  CHECK(*t1 == 0u);  // the stand-in's device memory is host memory: the memset really zeroed it
  CHECK(*t2 == 0u);
  const sd::scope again;
  CHECK(tickets.get(s1) == t1);
  CHECK(tickets.get(s2) == t2);
  const auto later = again.taken();
  CHECK(later.memsets == 0);
  CHECK(later.allocations.empty());
  // A stream whose first ticketed launch would be inside a capture: refused, naming what to do.
  cudaStream_t s3 = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(cudaStreamBeginCapture(s3, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
  try {
    (void)tickets.get(s3);
    FAIL("a ticket was zeroed inside a capture");
  } catch (const tx::cuda_error& e) {
    CHECK(std::string(e.what()).find("run the step once on the same stream before capturing it") != std::string::npos);
  }
  cudaGraph_t g = nullptr;
  (void)cudaStreamEndCapture(s3, &g);
  if (g) (void)cudaGraphDestroy(g);
  for (cudaStream_t s : {s1, s2, s3}) (void)cudaStreamDestroy(s);
}

TEST_CASE("host evaluation in an nvcc unit: ops read element by element (a cast to int32) compile and run") {
  // The host kernel's per-element apply is called from the host-device accessors: host-only, it was nvcc's error
  // 20014 under -Werror=all-warnings in any .cu file that cast a host float tensor to an integer.
  tx::tensor<float, 2> x({2, 3}, {-2.75f, -1.5f, -0.25f, 0.5f, 1.75f, 3.0f});
  const tx::tensor<std::int32_t, 2> i = tx::cast<std::int32_t>(tx::transpose(x));
  const std::int32_t expect[] = {-2, 0, -1, 1, 0, 3};  // float -> int32 truncates toward zero, as static_cast
  for (int e = 0; e < 6; ++e) CHECK(i.data()[e] == expect[e]);
}
