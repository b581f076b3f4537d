// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Gradient rules of every elementwise op against central finite differences (double, random inputs).
#include "grad_check.hpp"

namespace tx = texpr;
using grad_check::check;
using grad_check::random;

namespace {
// The losses weight every element differently, so a gradient landing on the wrong element shows.
const tx::shape_t<2> shape{3, 4};
}  // namespace

TEST_CASE("binary arithmetic") {
  auto g = grad_check::rng(1);
  auto a = random(shape, g), b = random(shape, g, 0.5, 2), w = random(shape, g);
  check("add", [&](auto x, auto y) { return tx::sum((x + y) * w); }, a, b);
  check("subtract", [&](auto x, auto y) { return tx::sum((x - y) * w); }, a, b);
  check("multiply", [&](auto x, auto y) { return tx::sum(x * y * w); }, a, b);
  check("divide", [&](auto x, auto y) { return tx::sum(x / y * w); }, a, b);
  check("divide by negatives", [&](auto x, auto y) { return tx::sum(y / (-y - 1) * x * w); }, a, b);
  check("scalar operands", [&](auto x) { return tx::sum((2.5 * x - 1) / 3.0 * w + 4.0 / (x * x + 1)); }, a);
}

TEST_CASE("unary functions") {
  auto g = grad_check::rng(2);
  auto x = random(shape, g, -2, 2, 0.05), pos = random(shape, g, 0.2, 3), w = random(shape, g);
  check("negate", [&](auto p) { return tx::sum(-p * w); }, x);
  check("exp", [&](auto p) { return tx::sum(tx::exp(p) * w); }, x);
  check("log", [&](auto p) { return tx::sum(tx::log(p) * w); }, pos);
  check("sqrt", [&](auto p) { return tx::sum(tx::sqrt(p) * w); }, pos);
  check("abs", [&](auto p) { return tx::sum(tx::abs(p) * w); }, x);
  check("tanh", [&](auto p) { return tx::sum(tx::tanh(p) * w); }, x);
  check("sigmoid", [&](auto p) { return tx::sum(tx::sigmoid(p) * w); }, x);
  check("relu", [&](auto p) { return tx::sum(tx::relu(p) * w); }, x);
  check("elu", [&](auto p) { return tx::sum(tx::elu(p) * w); }, x);
  check("elu alpha 0.3", [&](auto p) { return tx::sum(tx::elu(p, 0.3) * w); }, x);
}

TEST_CASE("the model-building unary functions: log1p, expm1, softplus, gelu, silu, square, rsqrt, sin, cos") {
  auto g = grad_check::rng(12);
  auto x = random(shape, g, -2, 2, 0.05), pos = random(shape, g, 0.2, 3), w = random(shape, g);
  check("log1p", [&](auto p) { return tx::sum(tx::log1p(p) * w); }, pos);
  check("expm1", [&](auto p) { return tx::sum(tx::expm1(p) * w); }, x);
  check("softplus", [&](auto p) { return tx::sum(tx::softplus(p) * w); }, x);
  check("gelu", [&](auto p) { return tx::sum(tx::gelu(p) * w); }, x);
  check("silu", [&](auto p) { return tx::sum(tx::silu(p) * w); }, x);
  check("square", [&](auto p) { return tx::sum(tx::square(p) * w); }, x);
  check("rsqrt", [&](auto p) { return tx::sum(tx::rsqrt(p) * w); }, pos);
  check("sin", [&](auto p) { return tx::sum(tx::sin(p) * w); }, x);
  check("cos", [&](auto p) { return tx::sum(tx::cos(p) * w); }, x);
}

TEST_CASE("clamp passes the gradient to x inside the bounds and to the bound that is the result") {
  auto g = grad_check::rng(13);
  auto x = random(shape, g, -2, 2, 0.05), w = random(shape, g);
  auto lo = random(shape, g, -1.5, -0.2), hi = random(shape, g, 0.2, 1.5);
  for (tx::index_t i = 0; i < x.size(); ++i) {  // keep x away from the bounds by more than the step
    if (std::abs(x.data()[i] - lo.data()[i]) < 0.01) x.data()[i] += 0.05;
    if (std::abs(x.data()[i] - hi.data()[i]) < 0.01) x.data()[i] -= 0.05;
  }
  check("clamp scalar bounds", [&](auto p) { return tx::sum(tx::clamp(p, -0.5, 0.75) * w); }, x);
  check("clamp tensor bounds", [&](auto p, auto l, auto h) { return tx::sum(tx::clamp(p, l, h) * w); }, x, lo, hi);
}

TEST_CASE("elu with a tensor alpha (tx::map), gradient with respect to alpha too") {
  auto g = grad_check::rng(3);
  auto x = random(shape, g, -2, 2, 0.05), alpha = random(shape, g, 0.1, 2), w = random(shape, g);
  check("elu alpha", [&](auto p, auto a) { return tx::sum(tx::map<tx::op::elu>(p, a) * w); }, x, alpha);
}

TEST_CASE("maximum and minimum follow the selected operand") {
  auto g = grad_check::rng(4);
  auto a = random(shape, g), b = random(shape, g), w = random(shape, g);
  for (tx::index_t i = 0; i < a.size(); ++i)  // keep the operands apart by more than the step
    if (std::abs(a.data()[i] - b.data()[i]) < 0.01) b.data()[i] += 0.1;
  check("maximum", [&](auto x, auto y) { return tx::sum(tx::maximum(x, y) * w); }, a, b);
  check("minimum", [&](auto x, auto y) { return tx::sum(tx::minimum(x, y) * w); }, a, b);
  check("maximum with a scalar", [&](auto x) { return tx::sum(tx::maximum(x, 0.25) * w); }, a);
  check("minimum with a scalar", [&](auto x) { return tx::sum(tx::minimum(-0.25, x) * w); }, a);
}

TEST_CASE("pow in base and exponent") {
  auto g = grad_check::rng(5);
  auto base = random(shape, g, 0.3, 2), e = random(shape, g, -1.5, 2.5), w = random(shape, g);
  check("pow", [&](auto x, auto y) { return tx::sum(tx::pow(x, y) * w); }, base, e);
  check("pow scalar exponent", [&](auto x) { return tx::sum(tx::pow(x, 3) * w); }, base);
  check("pow scalar base", [&](auto y) { return tx::sum(tx::pow(1.7, y) * w); }, e);
}

TEST_CASE("where sends the gradient to the selected branch, none to the condition") {
  auto g = grad_check::rng(6);
  auto a = random(shape, g), b = random(shape, g), c = random(shape, g, -1, 1, 0.05), w = random(shape, g);
  check("where", [&](auto x, auto y) { return tx::sum(tx::where(c > 0, x, y) * w); }, a, b);
  check("where on a parameter's own sign", [&](auto x) { return tx::sum(tx::where(x > 0, x * x, -x) * w); }, c);
  check("where with scalars", [&](auto x) { return tx::sum((tx::where(x > 0, x, 0.5) + tx::where(x < 0, 2.0, x)) * w); }, c);
}

TEST_CASE("cast passes the gradient back in the source dtype") {
  auto g = grad_check::rng(7);
  auto x = random(shape, g), w = random(shape, g);
  check("cast to double", [&](auto p) { return tx::sum(tx::cast<double>(p) * w); }, x);
  // Through float the loss is rounded to float, too coarse for a difference quotient; the gradient is
  // the double one rounded through float instead: d/dp = exp(p) w to float precision.
  auto px = tx::param<struct cast_p>(x);
  auto [gx] = tx::eval_all(tx::grad(tx::sum(tx::cast<double>(tx::exp(tx::cast<float>(px))) * w), px));
  for (tx::index_t i = 0; i < x.size(); ++i) {
    const double expect = std::exp(x.data()[i]) * w.data()[i];
    CHECK(std::abs(gx.data()[i] - expect) <= 1e-6 * (1 + std::abs(expect)));
  }
  // A linear loss: the gradient is w cast to float and back, exactly.
  auto [gl] = tx::eval_all(tx::grad(tx::sum(tx::cast<double>(tx::cast<float>(px)) * w), px));
  for (tx::index_t i = 0; i < x.size(); ++i)
    CHECK(gl.data()[i] == static_cast<double>(static_cast<float>(w.data()[i])));
}

TEST_CASE("comparisons are piecewise constant") {
  auto g = grad_check::rng(8);
  auto x = random(shape, g, -2, 2, 0.05), w = random(shape, g);
  check("comparison mask", [&](auto p) { return tx::sum(tx::cast<double>(p > 0.0) * p * w); }, x);
}

TEST_CASE("a parameter used several times sums its contributions") {
  auto g = grad_check::rng(9);
  auto x = random(shape, g, 0.2, 2), w = random(shape, g);
  check("reuse", [&](auto p) { return tx::sum((p * p + tx::exp(p) * tx::sqrt(p)) * w); }, x);
}

TEST_CASE("every host unary op that defines its gradient: tx::grad against finite differences of its reference") {
  // Registry-driven: an op added with a gradient in its definition (op/definition.hpp) is checked here with no
  // test code of its own. The finite differences are of the op's long double reference, not of texpr's apply,
  // so a gradient that matches a wrong apply still fails.
  int checked = 0;
  tx::detail::for_each_type(tx::host_rows{}, [&]<class Row>() {
    using Op = typename Row::template op_for<double>;
    if constexpr (tx::op::unary_gradient_definition<Op>) {
      if constexpr (tx::op::unary_reference_definition<Op>) {
        auto g = grad_check::rng(31 + checked);
        // Inputs over the interior of the reference's domain (5% margin: sqrt's gradient is infinite at 0).
        const double lo = Op::domain.lo, hi = Op::domain.hi, margin = (hi - lo) * 0.05;
        auto x = random(shape, g, lo + margin, hi - margin), w = random(shape, g);
        auto p = tx::param<struct unary_input>(x);
        auto grad = std::get<0>(tx::eval_all(tx::grad(tx::sum(tx::map<Op>(p) * w), p)));
        for (tx::index_t i = 0; i < x.size(); ++i) {
          const long double v = x.data()[i], h = 1e-6L * (1 + std::abs(v));
          const long double fd = (Op::reference(v + h) - Op::reference(v - h)) / (2 * h) * w.data()[i];
          INFO(Op::name << " at " << static_cast<double>(v) << ": tx::grad " << grad.data()[i] << ", finite difference "
                        << static_cast<double>(fd));
          CHECK(std::abs(grad.data()[i] - static_cast<double>(fd)) <= 1e-6 * (1 + std::abs(static_cast<double>(fd))));
        }
        ++checked;
      }  // the others (negate, abs, relu, square: integer results wrap) have explicit cases above
    }
  });
  MESSAGE(checked << " unary ops checked against their references");
  CHECK(checked >= 13);
}
