// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Learning-rate schedules: small value types mapping a step index (steps already taken, from 0) to a learning rate.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <numbers>

namespace texpr::optim {

/// Anything that maps a step index to a learning rate: `double lr = s(step)`.
template <class S>
concept schedule = std::copy_constructible<S> && requires(const S& s, std::int64_t step) {
  { s(step) } -> std::convertible_to<double>;
};

/// lr * gamma^floor(step / step_size) (PyTorch's StepLR).
struct step_decay {
  double lr = 1e-3;             ///< The rate before the first decay.
  std::int64_t step_size = 1;   ///< Steps between decays (> 0).
  double gamma = 0.1;           ///< Factor applied at each decay.
  /// The rate at `step`.
  double operator()(std::int64_t step) const {
    return lr * std::pow(gamma, static_cast<double>(std::max<std::int64_t>(step, 0) / std::max<std::int64_t>(step_size, 1)));
  }
};

/// min_lr + (lr - min_lr) (1 + cos(pi step / total_steps)) / 2 for step <= total_steps, then min_lr (PyTorch's
/// CosineAnnealingLR closed form with T_max = total_steps and eta_min = min_lr, held at its minimum afterwards).
struct cosine_annealing {
  double lr = 1e-3;              ///< The rate at step 0.
  std::int64_t total_steps = 1;  ///< Steps from lr down to min_lr (> 0).
  double min_lr = 0;             ///< The rate at and after total_steps.
  /// The rate at `step`.
  double operator()(std::int64_t step) const {
    const std::int64_t total = std::max<std::int64_t>(total_steps, 1);
    const double t = static_cast<double>(std::clamp<std::int64_t>(step, 0, total)) / static_cast<double>(total);
    return min_lr + (lr - min_lr) * (1 + std::cos(std::numbers::pi * t)) / 2;
  }
};

/// lr (start_factor + (1 - start_factor) min(step, warmup_steps) / warmup_steps): a linear ramp to lr, then lr
/// (PyTorch's LinearLR with end_factor 1). With start_factor 0 the first step's rate is 0, as in Hugging Face's
/// warm-up schedules.
struct linear_warmup {
  double lr = 1e-3;               ///< The rate reached at warmup_steps.
  std::int64_t warmup_steps = 0;  ///< Length of the ramp (0: no ramp).
  double start_factor = 0;        ///< The fraction of lr at step 0.
  /// The rate at `step`.
  double operator()(std::int64_t step) const {
    if (warmup_steps <= 0 || step >= warmup_steps) return lr;
    const double t = static_cast<double>(std::max<std::int64_t>(step, 0)) / static_cast<double>(warmup_steps);
    return lr * (start_factor + (1 - start_factor) * t);
  }
};

/// `first` before `milestone`, then `then` counted from the milestone: then(step - milestone) (PyTorch's
/// SequentialLR with one milestone).
template <schedule First, schedule Then> struct sequential {
  First first;             ///< The schedule of steps [0, milestone).
  std::int64_t milestone;  ///< The step at which `then` starts, at its own step 0.
  Then then;               ///< The schedule from the milestone on.
  /// The rate at `step`.
  double operator()(std::int64_t step) const {
    return step < milestone ? static_cast<double>(first(step)) : static_cast<double>(then(step - milestone));
  }
};

/// Linear warm-up from 0 to lr over warmup_steps, then cosine annealing to min_lr at total_steps: the
/// sequential composition of linear_warmup and cosine_annealing.
struct warmup_cosine {
  double lr = 1e-3;               ///< The peak rate, reached at warmup_steps.
  std::int64_t warmup_steps = 0;  ///< Length of the linear ramp.
  std::int64_t total_steps = 1;   ///< The step at which the rate reaches min_lr (warm-up included).
  double min_lr = 0;              ///< The final rate.
  /// The composition this schedule is.
  sequential<linear_warmup, cosine_annealing> composition() const {
    return {linear_warmup{lr, warmup_steps, 0.0}, warmup_steps,
            cosine_annealing{lr, std::max<std::int64_t>(total_steps - warmup_steps, 1), min_lr}};
  }
  /// The rate at `step`.
  double operator()(std::int64_t step) const { return composition()(step); }
};

} // namespace texpr::optim
