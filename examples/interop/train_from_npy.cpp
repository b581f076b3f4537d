// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Interop example: a dataset in .npy files (as NumPy writes them) trains a small softmax-cross-entropy MLP, and
// the trained weights are saved as .npy files NumPy can load. Usage:
//   train_from_npy [x.npy y.npy [out_dir]]
// x.npy: float32 (n, features); y.npy: int64 (n) class labels. Without arguments it first writes a synthetic
// dataset with tx::save_npy (what `np.save` would write), so the example runs on its own. It checks itself: the
// weights reloaded from disk give the same predictions, training accuracy reaches 90%; exit code 0 only then.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include <texpr/interop/npy.hpp>
#include <texpr/texpr.hpp>

namespace tx = texpr;

namespace {

/// Four Gaussian clouds in 16 dimensions, labels 0..3, written as x.npy and y.npy in dir.
void write_synthetic(const std::string& dir) {
  constexpr tx::index_t n = 512, features = 16, classes = 4;
  tx::tensor<std::int64_t, 1> y({n});
  for (tx::index_t i = 0; i < n; ++i) y(i) = i % classes;
  tx::tensor<float, 2> centres = tx::random::normal<float>({classes, features}, 1, 0.0f, 2.0f);
  tx::tensor<float, 2> x = tx::random::normal<float>({n, features}, 2);  // unit noise ...
  for (tx::index_t i = 0; i < n; ++i)                                     // ... around each label's centre
    for (tx::index_t j = 0; j < features; ++j) x(i, j) += centres(y(i), j);
  tx::save_npy(dir + "/x.npy", x);
  tx::save_npy(dir + "/y.npy", y);
}

template <class X, class W1, class B1, class W2, class B2>
auto logits(const X& x, const W1& w1, const B1& b1, const W2& w2, const B2& b2) {
  return tx::matmul(tx::elu(tx::matmul(x, w1) + b1), w2) + b2;
}

} // namespace

int main(int argc, char** argv) {
  std::string xs = "x.npy", ys = "y.npy", out = ".";
  if (argc >= 3) {
    xs = argv[1];
    ys = argv[2];
    if (argc >= 4) out = argv[3];
  } else {
    write_synthetic(".");
  }
  const auto x = tx::load_npy<float, 2>(xs);
  const auto y = tx::load_npy<std::int64_t, 1>(ys);
  const tx::index_t n = x.shape()[0], features = x.shape()[1], hidden = 32;
  const std::int64_t classes = tx::max(y).item() + 1;
  std::printf("loaded %s: %lld samples x %lld features, %s: %lld classes\n", xs.c_str(), static_cast<long long>(n),
              static_cast<long long>(features), ys.c_str(), static_cast<long long>(classes));

  tx::tensor<float, 2> w1 = tx::random::normal<float>({features, hidden}, 10, 0.0f, 1.0f / std::sqrt(static_cast<float>(features)));
  tx::tensor<float, 2> w2 = tx::random::normal<float>({hidden, classes}, 11, 0.0f, 1.0f / std::sqrt(static_cast<float>(hidden)));
  tx::tensor<float, 1> b1 = tx::zeros<float>({hidden});
  tx::tensor<float, 1> b2 = tx::zeros<float>({classes});
  float first = 0, last = 0;
  for (int step = 0; step < 100; ++step) {
    auto p1 = tx::param<struct w1_tag>(w1);
    auto q1 = tx::param<struct b1_tag>(b1);
    auto p2 = tx::param<struct w2_tag>(w2);
    auto q2 = tx::param<struct b2_tag>(b2);
    auto [loss, g1, h1, g2, h2] = tx::eval_all(tx::value_and_grad(tx::cross_entropy(logits(x, p1, q1, p2, q2), y), p1, q1, p2, q2));
    last = loss.item();
    if (step == 0) first = last;
    w1 = w1 - 0.2f * g1;
    b1 = b1 - 0.2f * h1;
    w2 = w2 - 0.2f * g2;
    b2 = b2 - 0.2f * h2;
  }
  tx::tensor<std::int64_t, 1> predicted = tx::argmax(logits(x, w1, b1, w2, b2), 1);
  const double accuracy = tx::mean(tx::cast<double>(predicted == y)).item();
  std::printf("trained 100 steps: loss %.4f -> %.4f, training accuracy %.1f%%\n", static_cast<double>(first),
              static_cast<double>(last), 100 * accuracy);

  // Save the weights as NumPy would (np.load(out + "/w1.npy") reads them), then reload and predict again.
  tx::save_npy(out + "/w1.npy", w1);
  tx::save_npy(out + "/b1.npy", b1);
  tx::save_npy(out + "/w2.npy", w2);
  tx::save_npy(out + "/b2.npy", b2);
  const auto rw1 = tx::load_npy<float, 2>(out + "/w1.npy");
  const auto rb1 = tx::load_npy<float, 1>(out + "/b1.npy");
  const auto rw2 = tx::load_npy<float, 2>(out + "/w2.npy");
  const auto rb2 = tx::load_npy<float, 1>(out + "/b2.npy");
  tx::tensor<std::int64_t, 1> again = tx::argmax(logits(x, rw1, rb1, rw2, rb2), 1);
  const std::int64_t differ = tx::sum(tx::cast<std::int64_t>(again != predicted)).item();
  std::printf("weights saved to %s/{w1,b1,w2,b2}.npy; reloaded, %lld predictions differ\n", out.c_str(), static_cast<long long>(differ));
  const bool ok = differ == 0 && accuracy >= 0.9 && last < 0.5f * first;
  std::puts(ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
