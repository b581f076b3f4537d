// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradient graphs as texpr graphs: compile-time placement on cuda, the placement report, memo sharing
// within one evaluation (and never across), a user-defined gradient rule, and the errors.
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "grad_check.hpp"

namespace tx = texpr;

namespace {

// A float two-hidden-layer ELU network and its training step: forward loss and every gradient.
template <class B>
auto train_step(const tx::tensor<float, 2, B>& x, const tx::tensor<float, 2, B>& y, const tx::tensor<float, 2, B>& w1,
                const tx::tensor<float, 1, B>& b1, const tx::tensor<float, 2, B>& w2, const tx::tensor<float, 1, B>& b2,
                const tx::tensor<float, 2, B>& w3, const tx::tensor<float, 1, B>& b3) {
  auto W1 = tx::param<struct W1>(w1);
  auto B1 = tx::param<struct B1>(b1);
  auto W2 = tx::param<struct W2>(w2);
  auto B2 = tx::param<struct B2>(b2);
  auto W3 = tx::param<struct W3>(w3);
  auto B3 = tx::param<struct B3>(b3);
  auto h1 = tx::elu(tx::matmul(x, W1) + B1);
  auto h2 = tx::elu(tx::matmul(h1, W2) + B2);
  auto loss = tx::mean(tx::pow(tx::matmul(h2, W3) + B3 - y, 2));
  return tx::value_and_grad(loss, W1, B1, W2, B2, W3, B3);
}

template <class B> using f2 = const tx::tensor<float, 2, B>&;
template <class B> using f1 = const tx::tensor<float, 1, B>&;
template <class B>
using step_t = decltype(train_step<B>(std::declval<f2<B>>(), std::declval<f2<B>>(), std::declval<f2<B>>(), std::declval<f1<B>>(),
                                      std::declval<f2<B>>(), std::declval<f1<B>>(), std::declval<f2<B>>(), std::declval<f1<B>>()));

// The forward and the whole backward graph of the float model run on cuda: checked by g++ without CUDA.
static_assert(tx::all_run_on<step_t<tx::cuda>, tx::cuda>);
static_assert(tx::runs_on<std::tuple_element_t<0, step_t<tx::cuda>>, tx::cuda>);  // the loss
static_assert(tx::runs_on<std::tuple_element_t<1, step_t<tx::cuda>>, tx::cuda>);  // d loss / d W1
static_assert(tx::runs_on<std::tuple_element_t<2, step_t<tx::cuda>>, tx::cuda>);  // d loss / d b1
static_assert(tx::all_run_on<step_t<tx::host>, tx::host>);
// ... and a host graph does not run on cuda: its leaves live in host memory.
static_assert(!tx::runs_on<std::tuple_element_t<1, step_t<tx::host>>, tx::cuda>);

// A model with an int64 matmul inside: its gradient graph recomputes it, and cuda has no int64 matmul.
template <class B>
auto int_matmul_grad(const tx::tensor<std::int64_t, 2, B>& a, const tx::tensor<std::int64_t, 2, B>& b,
                     const tx::tensor<float, 2, B>& w) {
  auto W = tx::param<struct W>(w);
  return tx::grad(tx::sum(tx::cast<float>(tx::matmul(a, b)) * W), W);
}
using i2 = const tx::tensor<std::int64_t, 2, tx::cuda>&;
using int_grad_t = std::tuple_element_t<0, decltype(int_matmul_grad<tx::cuda>(std::declval<i2>(), std::declval<i2>(),
                                                                                std::declval<f2<tx::cuda>>()))>;
static_assert(!tx::runs_on<int_grad_t, tx::cuda>);
static_assert(std::is_same_v<tx::first_offender_t<int_grad_t, tx::cuda>,
                             tx::diagnostic::no_kernel<tx::op::matmul, tx::dtype::int64, tx::cuda>>);

template <std::size_t R> tx::tensor<float, R> filled(const tx::shape_t<R>& s, float scale, int seed) {
  tx::tensor<float, R> t(s);
  for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = scale * static_cast<float>(((i * 7919 + seed * 104729) % 201) - 100) / 100.0f;
  return t;
}

// An elementwise identity that counts its evaluations (registered for host, with a gradient rule).
inline long counted_calls = 0;
struct counted {
  static constexpr std::string_view name = "counted";
  template <class C> static C apply(C x) {
    ++counted_calls;
    return x;
  }
};

}  // namespace

namespace texpr {
template <> struct kernel<counted, double, host> : host_kernels::fused_elementwise {
  static constexpr std::string_view name = "counting_identity";
};
template <> struct gradient_rule<counted> {
  static constexpr std::string_view derivative = "dx = g";
  template <std::size_t I> static constexpr unsigned uses = 0;
  template <std::size_t I, class N, class G, class Out, class X> static auto partial(const N&, const G& g, const Out&, const X&) { return g; }
};
}  // namespace texpr

TEST_CASE("the placement report lists every node of a gradient graph with its kernel") {
  auto x = filled(tx::shape_t<2>{8, 6}, 1, 1), y = filled(tx::shape_t<2>{8, 3}, 1, 2);
  auto w1 = filled(tx::shape_t<2>{6, 5}, 0.3f, 3), w2 = filled(tx::shape_t<2>{5, 5}, 0.3f, 4), w3 = filled(tx::shape_t<2>{5, 3}, 0.3f, 5);
  auto b1 = filled(tx::shape_t<1>{5}, 0.1f, 6), b2 = filled(tx::shape_t<1>{5}, 0.1f, 7), b3 = filled(tx::shape_t<1>{3}, 0.1f, 8);
  auto step = train_step<tx::host>(x, y, w1, b1, w2, b2, w3, b3);
  const std::string report = tx::placement(std::get<1>(step));
  INFO(report);
  CHECK(report.find("texpr placement on host\n") == 0);
  CHECK(report.find("ERROR") == std::string::npos);
  CHECK(report.find("blocked_gemm") != std::string::npos);
  // dW1 = x^T delta1 sums nothing: its sum_to runs no kernel, and the report says so; db1 sums delta1's rows.
  CHECK(report.find("none: reduces no axis, its operand is the result") != std::string::npos);
  CHECK(tx::placement(std::get<2>(step)).find("pairwise_reduce") != std::string::npos);
  CHECK(report.find("fused_elementwise") != std::string::npos);
  CHECK(report.find("elu ") != std::string::npos);
  // The report names the cuda kernels the same graph would use, flagging only the host leaves.
  const std::string on_cuda = tx::placement<tx::cuda>(std::get<1>(step));
  CHECK(on_cuda.find("(DOES NOT RUN)") != std::string::npos);
  CHECK(on_cuda.find("cublas_gemm") != std::string::npos);
}

TEST_CASE("evaluating together shares memos and matches separate evaluation") {
  auto x = filled(tx::shape_t<2>{8, 6}, 1, 1), y = filled(tx::shape_t<2>{8, 3}, 1, 2);
  auto w1 = filled(tx::shape_t<2>{6, 5}, 0.3f, 3), w2 = filled(tx::shape_t<2>{5, 5}, 0.3f, 4), w3 = filled(tx::shape_t<2>{5, 3}, 0.3f, 5);
  auto b1 = filled(tx::shape_t<1>{5}, 0.1f, 6), b2 = filled(tx::shape_t<1>{5}, 0.1f, 7), b3 = filled(tx::shape_t<1>{3}, 0.1f, 8);
  auto step = train_step<tx::host>(x, y, w1, b1, w2, b2, w3, b3);
  auto together = tx::eval_all(step);
  auto check_same = [](const auto& a, const auto& b) {
    REQUIRE(a.shape() == b.shape());
    for (tx::index_t i = 0; i < a.size(); ++i) CHECK(a.data()[i] == doctest::Approx(b.data()[i]).epsilon(1e-5));
  };
  check_same(std::get<0>(together), tx::eval(std::get<0>(step)));
  check_same(std::get<1>(together), tx::eval(std::get<1>(step)));
  check_same(std::get<4>(together), tx::eval(std::get<4>(step)));
  check_same(std::get<6>(together), tx::eval(std::get<6>(step)));

  // Memos never outlive their evaluation: after a parameter changes, the same graphs give the new values.
  for (tx::index_t i = 0; i < w1.size(); ++i) w1.data()[i] *= -0.5f;
  auto again = tx::eval_all(step);
  auto fresh = tx::eval_all(train_step<tx::host>(x, y, w1, b1, w2, b2, w3, b3));
  check_same(std::get<0>(again), std::get<0>(fresh));
  check_same(std::get<1>(again), std::get<1>(fresh));
  CHECK(std::get<0>(again).item() != doctest::Approx(std::get<0>(together).item()));
}

TEST_CASE("a shared forward sub-result is evaluated once per eval_all") {
  auto g = grad_check::rng(41);
  auto a = grad_check::random(tx::shape_t<2>{3, 4}, g), b = grad_check::random(tx::shape_t<2>{4, 5}, g);
  auto w = grad_check::random(tx::shape_t<2>{3, 5}, g);
  auto A = tx::param<struct A>(a);
  auto Bp = tx::param<struct Bp>(b);
  auto loss = tx::sum(tx::tanh(tx::matmul(tx::map<counted>(A), Bp)) * w);
  auto step = tx::value_and_grad(loss, A, Bp);
  counted_calls = 0;
  auto r = tx::eval_all(step);
  CHECK(counted_calls == a.size());  // loss, dA (through tanh') and dB (A^T) all read one memo
  counted_calls = 0;
  (void)tx::eval(std::get<2>(step));
  CHECK(counted_calls == a.size());  // a separate evaluation computes it again, once
  // The user-defined rule is right too, and its derivative text is what a generated table would show.
  CHECK(tx::gradient_rule<counted>::derivative == "dx = g");
  grad_check::check("counted", [&](auto p, auto q) { return tx::sum(tx::tanh(tx::matmul(tx::map<counted>(p), q)) * w); }, a, b);
}

TEST_CASE("gradient graphs evaluate on their own, into existing tensors, and item() works") {
  tx::tensor<double, 1> v({3}, {1.0, -2.0, 0.5});
  auto p = tx::param<struct v_tag>(v);
  auto [gv] = tx::grad(tx::sum(p * p), p);
  tx::tensor<double, 1> out({3});
  out = gv;
  CHECK(out(0) == 2.0);
  CHECK(out(1) == -4.0);
  CHECK(out(2) == 1.0);
  auto [gs] = tx::grad(tx::sum(p * p), p);
  CHECK(tx::sum(gs).item() == doctest::Approx(-1.0));
}

TEST_CASE("one tag on two tensors is an error") {
  tx::tensor<double, 1> u({2}, {1.0, 2.0});
  tx::tensor<double, 1> v({2}, {3.0, 4.0});
  auto pu = tx::param<struct same>(u);
  auto pv = tx::param<struct same>(v);
  CHECK_THROWS_AS((void)tx::grad(tx::sum(pu * pv), pu), std::invalid_argument);
}

namespace {
// The report's line for the first node named `op`, or "" (nodes are indented by depth, then named).
std::string node_line(const std::string& report, const std::string& op) {
  std::size_t start = 0;
  while (start < report.size()) {
    std::size_t end = report.find('\n', start);
    if (end == std::string::npos) end = report.size();
    const std::string line = report.substr(start, end - start);
    const std::size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, op.size() + 1, op + " ") == 0) return line;
    start = end + 1;
  }
  return "";
}
}  // namespace

TEST_CASE("gradient graphs name their helper ops in placement: sum_to and broadcast_to, never cast or sum") {
  tx::tensor<float, 2> x({4, 3}), w({4, 3});
  tx::tensor<float, 1> b({3}), v({4});
  auto B = tx::param<struct Bias>(b);
  auto X = tx::param<struct Input>(x);
  // A broadcast bias: its gradient is summed back to (3,) by sum_to, which the host runs by pairwise_reduce.
  auto [db] = tx::grad(tx::sum(tx::tanh(x + B) * w), B);
  const std::string rb = tx::placement(db);
  INFO(rb);
  CHECK(node_line(rb, "sum_to").find("(3,)             host    pairwise_reduce") != std::string::npos);
  CHECK(node_line(rb, "cast").empty());
  // A reduction's gradient is spread back over the reduced axis by broadcast_to (a strided view, no copy).
  auto [dx] = tx::grad(tx::sum(tx::tanh(tx::sum(X, 1)) * v), X);
  const std::string rx = tx::placement(dx);
  INFO(rx);
  CHECK(node_line(rx, "broadcast_to").find("(4, 3)           host    strided_view") != std::string::npos);
  CHECK(node_line(rx, "cast").empty());
  CHECK(node_line(rx, "sum").find("(4,)             host    pairwise_reduce") != std::string::npos);  // the forward sum, saved
}
