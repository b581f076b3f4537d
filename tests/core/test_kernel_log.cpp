// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::kernel_log: what it records (implementation, op, dtype, backend of each kernel run; fresh allocations;
// syncs), nesting, and that it records nothing when no log is alive.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <cstdint>
#include <string>

namespace tx = texpr;

namespace {
tx::tensor<float, 2> filled(tx::index_t r, tx::index_t c, float base) {
  tx::tensor<float, 2> t({r, c});
  for (tx::index_t i = 0; i < r; ++i)
    for (tx::index_t j = 0; j < c; ++j) t(i, j) = base + 0.25f * static_cast<float>((i * 7 + j * 3) % 11) - 1.0f;
  return t;
}
bool cache_enabled() { return tx::detail::host_block_cache::instance().enabled(); }
}  // namespace

TEST_CASE("kernel_log records each kernel run with its implementation, op, dtype and backend") {
  auto a = filled(8, 5, 0.5f), b = filled(8, 5, -1.5f);
  tx::kernel_log log;
  tx::tensor<float, 2> c = tx::exp(a) + b;  // one fused pass: the root's row
  REQUIRE(log.entries().size() == 1);
  CHECK(log.entries()[0].implementation == "fused_elementwise");
  CHECK(log.entries()[0].op == "add");
  CHECK(log.entries()[0].dtype == "float32");
  CHECK(log.entries()[0].backend == "host");
  CHECK(c(3, 4) == doctest::Approx(std::exp(a(3, 4)) + b(3, 4)));

  log.clear();
  tx::tensor<float, 1> m = tx::mean(a * b, 0);  // the product is fused into the reduction
  REQUIRE(log.entries().size() == 1);
  CHECK(log.str().rfind("host pairwise_reduce mean float32\n1 kernels, ", 0) == 0);
  (void)m;

  log.clear();
  auto w = filled(5, 3, 0.0f);
  tx::tensor<float, 2> y = tx::matmul(a, w);
  CHECK(log.count("blocked_gemm") == 1);
  CHECK(log.count("blocked_gemm", "matmul") == 1);
  (void)y;

  log.clear();
  tx::tensor<double, 1> s = tx::sum(tx::cast<double>(a), 1);
  REQUIRE(log.entries().size() == 1);
  CHECK(log.entries()[0].dtype == "float64");  // the reduction reads the cast fused: the node's dtype is double
  (void)s;
}

TEST_CASE("kernel_log: computed operands are logged before the node that reads them (post-order)") {
  auto a = filled(6, 4, 0.25f), w = filled(4, 4, -0.5f);
  tx::kernel_log log;
  tx::tensor<float, 1> r = tx::sum(tx::matmul(a, w), 1);
  REQUIRE(log.entries().size() == 2);
  CHECK(log.entries()[0].implementation == "blocked_gemm");
  CHECK(log.entries()[1].implementation == "pairwise_reduce");
  CHECK(log.entries()[1].op == "sum");
  (void)r;
}

TEST_CASE("kernel_log: logs nest, records reach every live log, and nothing is recorded without one") {
  auto a = filled(4, 4, 1.0f);
  tx::tensor<float, 2> out({4, 4});
  out = a * 2.0f;  // no log alive: nothing to observe, nothing must break
  tx::kernel_log outer;
  out = a * 3.0f;
  {
    tx::kernel_log inner;
    out = tx::sqrt(tx::abs(a));
    CHECK(inner.entries().size() == 1);
    CHECK(inner.entries()[0].op == "sqrt");
  }
  out = a - 1.0f;
  REQUIRE(outer.entries().size() == 3);
  CHECK(outer.entries()[0].op == "multiply");
  CHECK(outer.entries()[1].op == "sqrt");
  CHECK(outer.entries()[2].op == "subtract");
  CHECK(tx::kernel_log::active());
}

TEST_CASE("kernel_log counts fresh host blocks, not blocks reused from texpr's cache") {
  const tx::index_t n = 3 * 1024 * 1024 + 17;
  tx::detail::host_block_cache::instance().trim(0);  // nothing cached: the first block is fresh
  tx::kernel_log log;
  {
    tx::tensor<float, 1> t({n});
    CHECK(log.allocations() == 1);
    CHECK(log.allocated_bytes() >= static_cast<std::size_t>(n) * sizeof(float));
  }
  {
    tx::tensor<float, 1> t({n});  // the released block is reused (unless the cache is off, as under ASan)
    CHECK(log.allocations() == (cache_enabled() ? 1u : 2u));
  }
  CHECK(log.syncs() == 0);  // the host never waits on a device
}

TEST_CASE("a sum_to that sums nothing runs no kernel, and placement says so") {
  auto a = filled(3, 4, 0.0f);
  auto e = tx::sum_to(a * 2.0f, tx::shape_t<2>{3, 4});
  tx::kernel_log log;
  tx::tensor<float, 2> r = e;
  REQUIRE(log.entries().size() == 1);
  CHECK(log.entries()[0].op == "multiply");  // only the operand ran, straight into the result
  CHECK(r(2, 3) == doctest::Approx(2.0f * a(2, 3)));
  const std::string p = tx::placement(e);
  CHECK(p.find("none: reduces no axis, its operand is the result") != std::string::npos);
  // A sum_to that does sum runs its reduction.
  log.clear();
  tx::tensor<float, 1> col = tx::sum_to(a * 2.0f, tx::shape_t<1>{4});
  CHECK(log.count("pairwise_reduce", "sum_to") == 1);
  CHECK(col(1) == doctest::Approx(2.0f * (a(0, 1) + a(1, 1) + a(2, 1))));
}

TEST_CASE("placement and the kernel log agree on where a GEMM epilogue runs") {
  auto x = filled(6, 5, 0.5f), w = filled(5, 4, -0.25f);
  tx::tensor<float, 1> b({4});
  for (tx::index_t j = 0; j < 4; ++j) b(j) = 0.1f * static_cast<float>(j) - 0.2f;
  SUBCASE("under a reduction the tree is fused into the reduction, the matmul runs alone") {
    auto e = tx::mean(tx::elu(tx::matmul(x, w) + b), 0);
    const std::string p = tx::placement(e);
    CHECK(p.find("blocked_gemm_epilogue") == std::string::npos);
    CHECK(p.find("runs the epilogue") == std::string::npos);
    tx::kernel_log log;
    tx::tensor<float, 1> m = e;
    CHECK(log.str().rfind("host blocked_gemm matmul float32\nhost pairwise_reduce mean float32\n2 kernels, ", 0) == 0);
    (void)m;
  }
  SUBCASE("at the root the tree is the GEMM's epilogue") {
    auto e = tx::elu(tx::matmul(x, w) + b);
    const std::string p = tx::placement(e);
    CHECK(p.find("blocked_gemm_epilogue") != std::string::npos);
    tx::kernel_log log;
    tx::tensor<float, 2> h = e;
    REQUIRE(log.entries().size() == 1);
    CHECK(log.entries()[0].implementation == "blocked_gemm_epilogue");
    CHECK(log.entries()[0].op == "elu");
    (void)h;
  }
  SUBCASE("a broadcast product is not an epilogue, and placement says so") {
    tx::tensor<float, 2> col({6, 1});
    for (tx::index_t i = 0; i < 6; ++i) col(i, 0) = static_cast<float>(i);
    tx::tensor<float, 2> wcol({5, 1});
    for (tx::index_t i = 0; i < 5; ++i) wcol(i, 0) = 0.5f;
    auto e = tx::matmul(x, wcol) + filled(6, 3, 1.0f);  // (6, 1) product broadcast to (6, 3)
    const std::string p = tx::placement(e);
    CHECK(p.find("blocked_gemm_epilogue") == std::string::npos);
    tx::kernel_log log;
    tx::tensor<float, 2> r = e;
    CHECK(log.count("blocked_gemm") == 1);
    CHECK(log.count("fused_elementwise", "add") == 1);
    (void)r;
  }
}

TEST_CASE("kernel_log's peak_bytes: the most memory texpr's tensors and temporaries held at once") {
  const tx::tensor<float, 2> a = tx::random::normal<float>({256, 128}, 1), b = tx::random::normal<float>({128, 512}, 2);
  const std::size_t product = sizeof(float) * 256 * 512;  // the matmul's temporary: 512 KiB
  tx::tensor<float, 0> r(tx::shape_t<0>{});
  {
    tx::kernel_log log;
    r = tx::sum(tx::exp(tx::matmul(a, b) * 0.01f));  // the product is materialised, then reduced fused
    CHECK(log.peak_bytes() >= product);
    CHECK(log.peak_bytes() < 2 * product);  // (a size class, a header, the reduction's small partials)
    CHECK(log.held_bytes() == 0);           // the temporary is given back when the evaluation ends
    CHECK(log.peak_bytes(true) == 0);       // nothing on a device
  }
  {
    tx::kernel_log log;
    r = tx::sum(a * 2.0f);  // fused: no temporary of a's size
    CHECK(log.peak_bytes() < sizeof(float) * 256 * 128);
  }
  {
    tx::kernel_log log;
    tx::tensor<float, 2> kept = tx::matmul(a, b);  // a result the caller keeps: held when the log ends
    CHECK(log.held_bytes() >= static_cast<long long>(product));
    CHECK(log.peak_bytes() >= product);
    (void)kept;
  }
}
