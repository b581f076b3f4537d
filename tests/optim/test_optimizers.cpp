// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::optim::sgd, adam and adamw: 100 steps against an independent long double implementation of PyTorch's
// formulas (plain loops), with gradients that change every step (texpr autograd of a quadratic loss whose
// curvature and linear term vary per step); the passes each step runs and the allocations it makes.
#include <doctest/doctest.h>

#include <texpr/texpr.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tx = texpr;
using ld = long double;

namespace {

constexpr int steps = 100;

// ---- the problem: a 2-D weight (3 x 4) and a 1-D bias (4) ----
// loss_t = sum(a_t / 2 (w - tw)^2 + nw_t w) + sum(a_t / 2 (b - tb)^2 + nb_t b), so d loss / d w = a_t (w - tw) + nw_t.

constexpr tx::index_t rows = 3, cols = 4;

/// Everything random the run needs, drawn once in double: initial parameters, targets, per-step linear terms.
struct problem {
  std::vector<double> w0, b0, tw, tb;
  std::vector<std::vector<double>> nw, nb;  // per step
  static double curvature(int t) { return 1.0 + 0.5 * std::sin(0.3 * t); }
  problem() {
    std::mt19937_64 rng(2027);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    auto draw = [&](std::size_t n) {
      std::vector<double> v(n);
      for (auto& x : v) x = u(rng);
      return v;
    };
    w0 = draw(rows * cols), b0 = draw(cols), tw = draw(rows * cols), tb = draw(cols);
    for (int t = 0; t < steps; ++t) nw.push_back(draw(rows * cols)), nb.push_back(draw(cols));
  }
};
const problem& the_problem() {
  static const problem p;
  return p;
}

template <class T, std::size_t R> tx::tensor<T, R> host_tensor(const tx::shape_t<R>& shape, const std::vector<double>& v) {
  tx::tensor<T, R> t(shape);
  for (std::size_t i = 0; i < v.size(); ++i) t.data()[i] = static_cast<T>(v[i]);
  return t;
}

/// The model under test, in dtype T.
template <class T> struct model {
  tx::tensor<T, 2> w;
  tx::tensor<T, 1> b;
  tx::tensor<T, 2> tw;
  tx::tensor<T, 1> tb;
  model()
      : w(host_tensor<T, 2>({rows, cols}, the_problem().w0)), b(host_tensor<T, 1>({cols}, the_problem().b0)),
        tw(host_tensor<T, 2>({rows, cols}, the_problem().tw)), tb(host_tensor<T, 1>({cols}, the_problem().tb)) {}
  /// value_and_grad's evaluated (loss, d w, d b) at step t.
  auto loss_and_gradients(int t) const {
    const auto nw = host_tensor<T, 2>({rows, cols}, the_problem().nw[static_cast<std::size_t>(t)]);
    const auto nb = host_tensor<T, 1>({cols}, the_problem().nb[static_cast<std::size_t>(t)]);
    const double half_a = problem::curvature(t) / 2;
    auto pw = tx::param<struct w_tag>(w);
    auto pb = tx::param<struct b_tag>(b);
    auto loss = tx::sum(half_a * (pw - tw) * (pw - tw) + nw * pw) + tx::sum(half_a * (pb - tb) * (pb - tb) + nb * pb);
    return tx::eval_all(tx::value_and_grad(loss, pw, pb));
  }
};

// ---- the reference: PyTorch's torch.optim formulas, long double, plain loops ----

struct reference_options {
  enum kind { sgd, adam, adamw } kind = sgd;
  ld momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  ld beta1 = 0.9L, beta2 = 0.999L, eps = 1e-8L;
};

/// One parameter tensor's reference state.
struct reference_tensor {
  std::vector<ld> p, target, buf, m, v;
  explicit reference_tensor(const std::vector<double>& init, const std::vector<double>& t)
      : p(init.begin(), init.end()), target(t.begin(), t.end()), buf(init.size()), m(init.size()), v(init.size()) {}

  void step(const reference_options& o, int t /* from 0 */, ld lr, const std::vector<double>& linear) {
    const ld a = static_cast<ld>(problem::curvature(t));
    const ld k = t + 1;  // PyTorch's step count after its increment
    for (std::size_t i = 0; i < p.size(); ++i) {
      ld g = a * (p[i] - target[i]) + static_cast<ld>(linear[i]);
      if (o.kind == reference_options::sgd) {
        // torch.optim.SGD (_single_tensor_sgd)
        if (o.weight_decay != 0) g = g + o.weight_decay * p[i];
        if (o.momentum != 0) {
          if (t == 0) buf[i] = g;
          else buf[i] = buf[i] * o.momentum + (1 - o.dampening) * g;
          if (o.nesterov) g = g + o.momentum * buf[i];
          else g = buf[i];
        }
        p[i] = p[i] - lr * g;
      } else {
        // torch.optim.Adam / AdamW (_single_tensor_adam)
        if (o.kind == reference_options::adamw) p[i] = p[i] * (1 - lr * o.weight_decay);
        else if (o.weight_decay != 0) g = g + o.weight_decay * p[i];
        m[i] = m[i] * o.beta1 + (1 - o.beta1) * g;
        v[i] = v[i] * o.beta2 + (1 - o.beta2) * g * g;
        const ld bias_correction1 = 1 - std::pow(o.beta1, k);
        const ld bias_correction2 = 1 - std::pow(o.beta2, k);
        const ld step_size = lr / bias_correction1;
        const ld denom = std::sqrt(v[i]) / std::sqrt(bias_correction2) + o.eps;
        p[i] = p[i] - step_size * m[i] / denom;
      }
    }
  }
};

/// Largest |x - ref| / max(|ref|, floor) over the elements.
template <class T> ld max_relative_error(const T* x, const std::vector<ld>& ref, ld floor) {
  ld worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    worst = std::max(worst, std::fabs(static_cast<ld>(x[i]) - ref[i]) / std::max(std::fabs(ref[i]), floor));
  return worst;
}

/// Runs `steps` steps of `opt` (built over the model's w and b) and of the reference side by side; the
/// learning rate comes from `lr_of(step)`. Returns the largest relative error of w and b after the last step.
template <class T, class Opt, class Lr> ld run(model<T>& mdl, Opt& opt, const reference_options& ro, Lr lr_of) {
  reference_tensor rw(the_problem().w0, the_problem().tw), rb(the_problem().b0, the_problem().tb);
  for (int t = 0; t < steps; ++t) {
    const double lr = lr_of(t);
    auto result = mdl.loss_and_gradients(t);
    if (t % 2 == 0) {
      opt.step(result, lr);  // value_and_grad's (loss, gradients...): the loss is skipped
    } else {
      auto& [loss, gw, gb] = result;
      (void)loss;
      opt.step(std::tie(gw, gb), lr);
    }
    rw.step(ro, t, static_cast<ld>(lr), the_problem().nw[static_cast<std::size_t>(t)]);
    rb.step(ro, t, static_cast<ld>(lr), the_problem().nb[static_cast<std::size_t>(t)]);
  }
  CHECK(opt.steps() == steps);
  // Floor: elements that pass near zero are compared relative to 1e-2 (the parameters are O(1)).
  return std::max(max_relative_error(mdl.w.data(), rw.p, 1e-2L), max_relative_error(mdl.b.data(), rb.p, 1e-2L));
}

auto constant_lr(double lr) {
  return [lr](int) { return lr; };
}

// double parameters: the updates' own rounding (about 1e-16 a step) stays near 1e-13 after 100 steps, so 1e-6
// leaves a wide margin while any formula error (a misplaced eps, a wrong bias correction, a missing decay) is
// orders of magnitude larger.
constexpr ld double_tolerance = 1e-6L;
// float parameters: each step rounds the ~5 operations of a pass to float32 (2^-24 = 6e-8 relative each), and
// errors accumulate over the 100 steps (and feed back through the gradients): at most about 100 * 5 * 6e-8 = 3e-5
// relative. 1e-4 bounds that with margin.
constexpr ld float_tolerance = 1e-4L;

template <class T> constexpr ld tolerance = std::is_same_v<T, double> ? double_tolerance : float_tolerance;

}  // namespace

TEST_CASE_TEMPLATE("sgd: 100 steps against PyTorch's formulas in long double", T, double, float) {
  struct config {
    const char* name;
    tx::optim::sgd_options options;
  };
  const config configs[] = {
      {"plain", {.lr = 0.05}},
      {"weight decay", {.lr = 0.05, .weight_decay = 0.1}},
      {"momentum", {.lr = 0.05, .momentum = 0.9}},
      {"momentum, dampening, weight decay", {.lr = 0.05, .momentum = 0.8, .dampening = 0.3, .weight_decay = 0.05}},
      {"nesterov, weight decay", {.lr = 0.05, .momentum = 0.9, .weight_decay = 0.02, .nesterov = true}},
  };
  for (const auto& c : configs) {
    INFO(c.name);
    model<T> mdl;
    tx::optim::sgd opt(std::tie(mdl.w, mdl.b), c.options);
    const reference_options ro{.kind = reference_options::sgd, .momentum = c.options.momentum,
                               .dampening = c.options.dampening, .weight_decay = c.options.weight_decay,
                               .nesterov = c.options.nesterov};
    const ld err = run(mdl, opt, ro, constant_lr(c.options.lr));
    MESSAGE(std::string(c.name) << ": largest relative error " << static_cast<double>(err));
    CHECK(err <= tolerance<T>);
  }
}

TEST_CASE_TEMPLATE("adam and adamw: 100 steps against PyTorch's formulas in long double", T, double, float) {
  SUBCASE("adam") {
    model<T> mdl;
    tx::optim::adam opt(std::tie(mdl.w, mdl.b), {.lr = 0.02});
    const ld err = run(mdl, opt, {.kind = reference_options::adam}, constant_lr(0.02));
    MESSAGE("adam: largest relative error " << static_cast<double>(err));
    CHECK(err <= tolerance<T>);
  }
  SUBCASE("adam with L2 weight decay, other betas, a large eps") {
    model<T> mdl;
    tx::optim::adam opt(std::tie(mdl.w, mdl.b), {.lr = 0.02, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-3, .weight_decay = 0.1});
    const ld err = run(mdl, opt, {.kind = reference_options::adam, .weight_decay = 0.1L, .beta1 = 0.8L, .beta2 = 0.99L, .eps = 1e-3L},
                       constant_lr(0.02));
    MESSAGE("adam, weight decay: largest relative error " << static_cast<double>(err));
    CHECK(err <= tolerance<T>);
  }
  SUBCASE("adamw with decoupled decay, eps 1e-4, under a warm-up + cosine schedule") {
    model<T> mdl;
    tx::optim::adamw opt(std::tie(mdl.w, mdl.b), {.eps = 1e-4, .weight_decay = 0.05});
    const tx::optim::warmup_cosine schedule{.lr = 0.05, .warmup_steps = 10, .total_steps = steps, .min_lr = 1e-3};
    const ld err = run(mdl, opt, {.kind = reference_options::adamw, .weight_decay = 0.05L, .eps = 1e-4L}, schedule);
    MESSAGE("adamw: largest relative error " << static_cast<double>(err));
    CHECK(err <= tolerance<T>);
  }
}

TEST_CASE("the moments are the optimiser's state: exp_avg after one adam step is (1 - beta1) g") {
  model<double> mdl;
  tx::optim::adam opt(std::tie(mdl.w, mdl.b));
  CHECK(opt.exp_avg<0>().empty());  // nothing allocated before the first step
  auto result = mdl.loss_and_gradients(0);
  opt.step(result);
  const auto& gb = std::get<2>(result);
  REQUIRE(opt.exp_avg<1>().shape() == mdl.b.shape());
  for (tx::index_t i = 0; i < cols; ++i) {
    CHECK(opt.exp_avg<1>()(i) == doctest::Approx(0.1 * gb(i)).epsilon(1e-14));
    CHECK(opt.exp_avg_sq<1>()(i) == doctest::Approx(0.001 * gb(i) * gb(i)).epsilon(1e-12));
  }
}

// Passes per parameter per step: sgd 1 (2 with momentum), adam and adamw 3. State is allocated at the first step.
TEST_CASE("each step is fused in-place passes, one per tensor written, and allocates nothing after the first") {
  model<float> mdl;
  auto gradients = mdl.loss_and_gradients(0);
  auto& gw = std::get<1>(gradients);  // not a structured binding: clang before 16 cannot capture one
  auto& gb = std::get<2>(gradients);
  const auto check_steps = [&](auto& opt, std::size_t passes_per_parameter, const char* name) {
    INFO(name);
    {
      tx::kernel_log first;
      opt.step(std::tie(gw, gb));
      CHECK(first.count("fused_elementwise") == 2 * passes_per_parameter);
    }
    for (int t = 0; t < 3; ++t) {
      tx::kernel_log log;
      opt.step(std::tie(gw, gb));
      INFO(log.str());
      CHECK(log.allocations() == 0);
      CHECK(log.entries().size() == 2 * passes_per_parameter);  // no copies, no temporaries
      CHECK(log.count("fused_elementwise") == 2 * passes_per_parameter);
      CHECK(log.syncs() == 0);
    }
  };
  tx::optim::sgd plain(std::tie(mdl.w, mdl.b), {.lr = 0.01, .weight_decay = 0.01});
  check_steps(plain, 1, "sgd");
  tx::optim::sgd momentum(std::tie(mdl.w, mdl.b), {.lr = 0.01, .momentum = 0.9, .nesterov = true});
  check_steps(momentum, 2, "sgd, nesterov momentum");
  tx::optim::adam adam(std::tie(mdl.w, mdl.b), {.weight_decay = 0.01});
  check_steps(adam, 3, "adam, L2 decay");
  tx::optim::adamw adamw(std::tie(mdl.w, mdl.b));
  check_steps(adamw, 3, "adamw");
}

TEST_CASE("gradients as views; wrong shapes and settings are errors") {
  model<double> mdl;
  auto [loss, gw, gb] = mdl.loss_and_gradients(0);
  (void)loss;
  tx::optim::sgd opt(std::tie(mdl.w, mdl.b), {.lr = 0.5});
  const double w00 = mdl.w(0, 0), g00 = gw(0, 0);
  opt.step(std::tuple{gw.view(), std::as_const(gb).view()});
  CHECK(mdl.w(0, 0) == doctest::Approx(w00 - 0.5 * g00).epsilon(1e-15));

  tx::tensor<double, 1> wrong({cols + 1});
  CHECK_THROWS_WITH_AS(opt.step(std::tie(gw, wrong)),
                       "texpr: optimiser step: gradient 1 has shape (5,) but its parameter has shape (4,)", tx::shape_error);
  CHECK_THROWS_AS(tx::optim::sgd(std::tie(mdl.w), {.nesterov = true}), std::invalid_argument);
  CHECK_THROWS_AS(tx::optim::adamw(std::tie(mdl.w), {.beta2 = 1.0}), std::invalid_argument);
}

// The passes read each tensor as one rank-1 range; a strided gradient is copied first. The copy must keep the
// gradient's element order: a transposed gradient updates as its contiguous equal does, and as the formula says.
TEST_CASE("a strided gradient: one copy, then the passes, as with its contiguous equal") {
  const auto values = [](double scale, double shift) {
    std::vector<double> v(15);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.7 * static_cast<double>(i) + shift);
    return v;
  };
  const auto w0 = values(1.5, 0.2), g0 = values(2.0, 1.1);
  const auto make = [](const std::vector<double>& v) {
    tx::tensor<double, 2> t({3, 5});
    for (tx::index_t i = 0; i < 3; ++i)
      for (tx::index_t j = 0; j < 5; ++j) t(i, j) = v[static_cast<std::size_t>(i * 5 + j)];
    return t;
  };
  tx::tensor<double, 2> stored({5, 3});  // the gradient's memory, transposed
  for (tx::index_t i = 0; i < 3; ++i)
    for (tx::index_t j = 0; j < 5; ++j) stored(j, i) = g0[static_cast<std::size_t>(i * 5 + j)];
  const tx::view<const double, 2> strided(stored.data(), {3, 5}, {1, 3});
  const tx::tensor<double, 2> contiguous = make(g0);

  SUBCASE("sgd with momentum and weight decay") {
    tx::tensor<double, 2> w1 = make(w0), w2 = make(w0);
    const tx::optim::sgd_options o{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
    tx::optim::sgd s1(std::tie(w1), o), s2(std::tie(w2), o);
    for (int t = 0; t < 3; ++t) {
      tx::kernel_log log;
      s1.step(std::make_tuple(strided));
      CHECK(log.count("fused_elementwise", "copy") == 1);
      s2.step(std::tie(contiguous));
      if (t == 0)  // b = g + wd w; w -= lr b
        for (tx::index_t i = 0; i < 3; ++i)
          for (tx::index_t j = 0; j < 5; ++j) {
            const auto k = static_cast<std::size_t>(i * 5 + j);
            CHECK(w1(i, j) == doctest::Approx(w0[k] - 0.1 * (g0[k] + 0.01 * w0[k])).epsilon(1e-15));
          }
    }
    for (tx::index_t i = 0; i < 3; ++i)
      for (tx::index_t j = 0; j < 5; ++j) CHECK(w1(i, j) == w2(i, j));
  }
  SUBCASE("adam") {
    tx::tensor<double, 2> w1 = make(w0), w2 = make(w0);
    tx::optim::adam a1(std::tie(w1), {.lr = 0.01}), a2(std::tie(w2), {.lr = 0.01});
    for (int t = 0; t < 3; ++t) {
      a1.step(std::make_tuple(strided));
      a2.step(std::tie(contiguous));
    }
    for (tx::index_t i = 0; i < 3; ++i)
      for (tx::index_t j = 0; j < 5; ++j) {
        CHECK(w1(i, j) == w2(i, j));
        CHECK(a1.exp_avg<0>()(i, j) == a2.exp_avg<0>()(i, j));
      }
    // The first moment after three steps of one gradient: (1 - 0.9^3) g.
    CHECK(a1.exp_avg<0>()(1, 2) == doctest::Approx((1 - 0.729) * g0[7]).epsilon(1e-14));
  }
}

// The update graphs run on cuda for the dtypes the cuda table covers (checked by the host compiler).
using cuda_w = tx::tensor<float, 2, tx::cuda>;
using cuda_b = tx::tensor<float, 1, tx::cuda>;
static_assert(tx::all_run_on<tx::optim::sgd<cuda_w, cuda_b>::graphs, tx::cuda>);
static_assert(tx::all_run_on<tx::optim::adam<cuda_w, cuda_b>::graphs, tx::cuda>);
static_assert(tx::all_run_on<tx::optim::adamw<cuda_w, cuda_b, tx::tensor<double, 3, tx::cuda>>::graphs, tx::cuda>);
static_assert(tx::all_run_on<tx::optim::adamw<tx::tensor<float, 2>, tx::tensor<float, 1>>::graphs, tx::host>);
