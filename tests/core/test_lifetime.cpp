// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Expressions that outlive the named tensors they read: a clear std::logic_error before any read of freed memory.
#include "support.hpp"

#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace {

#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wreturn-stack-address"  // the mistake under test; clang's warning is its own test
#endif
/// The mistake: an expression over a local tensor, returned after the tensor is gone.
auto doubled_local() {
  tx::tensor<float, 1> t({3}, {1, 2, 3});
  return t * 2.0f;
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

/// The right pattern: the tensor is moved into the expression, which owns it.
auto doubled_owned() {
  tx::tensor<float, 1> t({3}, {1, 2, 3});
  return std::move(t) * 2.0f;
}

/// The right pattern: evaluated before the tensor is destroyed.
tx::tensor<float, 1> doubled() {
  tx::tensor<float, 1> t({3}, {1, 2, 3});
  return t * 2.0f;
}

constexpr const char* destroyed = "texpr: an expression reads a tensor that no longer exists (destroyed)";
constexpr const char* moved_from = "texpr: an expression reads a tensor that no longer exists (moved from)";

} // namespace

TEST_CASE("an expression returned over a destroyed local tensor throws before it reads") {
  auto e = doubled_local();
  CHECK_THROWS_WITH_AS((tx::tensor<float, 1>(e)), doctest::Contains(destroyed), std::logic_error);
  CHECK_THROWS_WITH_AS((tx::tensor<float, 1>(e)), doctest::Contains("a float32 tensor of rank 1 on host"), std::logic_error);
  CHECK_THROWS_WITH_AS(tx::sum(e).item(), doctest::Contains(destroyed), std::logic_error);
  tx::tensor<float, 1> ok = doubled_owned();
  CHECK(ok(2) == 6.0f);
  CHECK(doubled()(1) == 4.0f);
}

TEST_CASE("a tensor moved from, or moved by a growing vector, is reported; new storage is read again") {
  tx::tensor<float, 1> a({2}, {1, 2});
  auto e = a + 1.0f;
  tx::tensor<float, 1> b = std::move(a);
  CHECK_THROWS_WITH_AS((tx::tensor<float, 1>(e)), doctest::Contains(moved_from), std::logic_error);
  a = b * 10.0f;  // storage again: the expression reads the tensor's current data
  tx::tensor<float, 1> r = e;
  CHECK(r(1) == 21.0f);
  tx::tensor<float, 1> c;
  c = std::move(a);
  CHECK_THROWS_WITH_AS((tx::tensor<float, 1>(e)), doctest::Contains(moved_from), std::logic_error);
  a.swap(c);  // swapping storage in is storage again
  CHECK((tx::tensor<float, 1>(e))(0) == 11.0f);

  tx::tensor<float, 1> m({2}, {1, 2});
  auto built_before = m * 2.0f;
  tx::tensor<float, 1> n = std::move(m);
  CHECK(tx::sum(m).item() == 0.0f);  // NOLINT(bugprone-use-after-move): built after the move, it reads the empty tensor
  CHECK_THROWS_WITH_AS((tx::tensor<float, 1>(built_before)), doctest::Contains(moved_from), std::logic_error);

  std::vector<tx::tensor<float, 1>> layers;
  layers.emplace_back(tx::tensor<float, 1>({1}, {5}));
  auto first = layers[0] * 2.0f;
  for (int i = 0; i < 16; ++i) layers.emplace_back(tx::shape_t<1>{1});  // reallocates: layers[0] is a new object
  CHECK_THROWS_WITH_AS((tx::tensor<float, 1>(first)), doctest::Contains("no longer exists"), std::logic_error);
}

TEST_CASE("parameters, reductions and const tensors check their tensor too") {
  auto w = std::make_unique<tx::tensor<double, 1>>(tx::shape_t<1>{4});
  const tx::tensor<double, 1>& cw = *w;
  auto p = tx::param<struct weight>(cw);
  auto loss = tx::sum(p * p);
  auto read_const = tx::exp(cw);
  CHECK(loss.item() == 0.0);
  w.reset();
  CHECK_THROWS_WITH_AS(loss.item(), doctest::Contains(destroyed), std::logic_error);
  CHECK_THROWS_WITH_AS((tx::tensor<double, 1>(read_const)), doctest::Contains("a float64 tensor of rank 1"), std::logic_error);
}

TEST_CASE("expressions over one tensor built on several threads share one liveness record") {
  const tx::tensor<float, 1> t({4}, {1, 2, 3, 4});
  std::vector<std::thread> threads;
  std::vector<float> got(4, 0.0f);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] { got[static_cast<std::size_t>(i)] = tx::sum(t * static_cast<float>(i)).item(); });
  for (auto& th : threads) th.join();
  for (int i = 0; i < 4; ++i) CHECK(got[static_cast<std::size_t>(i)] == 10.0f * static_cast<float>(i));
}
