// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Trains one pre-norm transformer encoder block on a synthetic sequence task: predict, at every position, the
// token before it (the first position predicts the start token). Token ids go through tx::embedding, learned
// position vectors are added, and the block is causal multi-head attention (heads by reshape/permute, a mask of
// -1e9 above the diagonal), tx::layer_norm, a GELU MLP and a linear head to the vocabulary, trained with
// tx::optim::adamw on a warm-up + cosine schedule against tx::cross_entropy. Attention must learn to look one
// position back, so the loss only falls once the position vectors and the attention pattern are learnt.
// Built by a host compiler it runs on the CPU; the static_asserts below prove (with any compiler) that the whole
// step, forward and every gradient graph, also has cuda kernels. Exit code 0 only if the loss falls by half.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <tuple>
#include <utility>

#include <texpr/texpr.hpp>

namespace tx = texpr;

namespace {

constexpr tx::index_t vocab = 16, length = 12, width = 32, heads = 2, head_width = width / heads, hidden = 64;
constexpr tx::index_t start_token = vocab - 1;  // position 0's input; the other tokens are drawn from [0, vocab - 1)

/// The block's parameters on backend B.
template <class B> struct model {
  tx::tensor<float, 2, B> tokens, positions;           // (vocab, width), (length, width)
  tx::tensor<float, 1, B> norm1_w, norm1_b;            // (width)
  tx::tensor<float, 2, B> wq, wk, wv, wo;              // (width, width)
  tx::tensor<float, 1, B> norm2_w, norm2_b;            // (width)
  tx::tensor<float, 2, B> w1;                          // (width, hidden)
  tx::tensor<float, 1, B> b1;                          // (hidden)
  tx::tensor<float, 2, B> w2;                          // (hidden, width)
  tx::tensor<float, 1, B> b2;                          // (width)
  tx::tensor<float, 1, B> norm3_w, norm3_b;            // (width)
  tx::tensor<float, 2, B> head;                        // (width, vocab)
  /// Every parameter, for tx::params and the optimiser, in one order.
  auto all() { return std::tie(tokens, positions, norm1_w, norm1_b, wq, wk, wv, wo, norm2_w, norm2_b, w1, b1, w2, b2, norm3_w, norm3_b, head); }
};

/// (batch, length, width) -> (batch, heads, length, head_width).
template <class X> auto split_heads(const X& x, tx::index_t batch) {
  return tx::permute(tx::reshape(x, {batch, length, heads, head_width}), {0, 2, 1, 3});
}

/// The loss of a batch of token ids (batch, length) against targets (batch, length): embedding + positions, then
/// x + attention(norm(x)), x + mlp(norm(x)), and the head on norm(x). mask (length, length) is 0 on and below the
/// diagonal and -1e9 above it.
template <class I, class M, class P>
auto loss_of(const I& ids, const I& targets, const M& mask, const P& p) {
  const auto& [tokens, positions, n1w, n1b, wq, wk, wv, wo, n2w, n2b, w1, b1, w2, b2, n3w, n3b, head] = p;
  const tx::index_t batch = ids.shape()[0];
  // Values read more than once are shared (tx::share): computed once per step and differentiated once.
  auto x = tx::share(tx::embedding(ids, tokens) + positions);
  auto a = tx::share(tx::layer_norm(x, n1w, n1b));
  auto q = split_heads(tx::matmul(a, wq), batch);
  auto k = split_heads(tx::matmul(a, wk), batch);
  auto v = split_heads(tx::matmul(a, wv), batch);
  auto scores = tx::matmul(q, tx::transpose(k)) * (1.0f / std::sqrt(static_cast<float>(head_width))) + mask;
  auto context = tx::reshape(tx::permute(tx::matmul(tx::softmax(scores, -1), v), {0, 2, 1, 3}), {batch, length, width});
  auto h = tx::share(x + tx::matmul(context, wo));
  auto h2 = h + tx::matmul(tx::gelu(tx::matmul(tx::layer_norm(h, n2w, n2b), w1) + b1), w2) + b2;
  auto logits = tx::matmul(tx::layer_norm(h2, n3w, n3b), head);
  return tx::cross_entropy(tx::reshape(logits, {batch * length, vocab}), tx::reshape(targets, {batch * length}));
}

/// One training step as graphs: (loss, a gradient per parameter, in model::all's order).
template <class B> auto train_step(const tx::tensor<std::int32_t, 2, B>& ids, const tx::tensor<std::int32_t, 2, B>& targets,
                                   const tx::tensor<float, 2, B>& mask, model<B>& m) {
  const auto p = std::apply([](auto&... t) { return tx::params(t...); }, m.all());
  return tx::value_and_grad(loss_of(ids, targets, mask, p), p);
}

template <class B>
using step_t = decltype(train_step(std::declval<const tx::tensor<std::int32_t, 2, B>&>(), std::declval<const tx::tensor<std::int32_t, 2, B>&>(),
                                   std::declval<const tx::tensor<float, 2, B>&>(), std::declval<model<B>&>()));
// The whole step, forward and backward, has a kernel for every node on the host...
static_assert(tx::all_run_on<step_t<tx::host>, tx::host>);
// ... and, checked by any compiler, on cuda.
static_assert(tx::all_run_on<step_t<tx::cuda>, tx::cuda>, "every graph of the step must run on cuda");

/// A (in, out) matrix from N(0, scale^2 / in), texpr's counter-based generator.
tx::tensor<float, 2> init(tx::index_t in, tx::index_t out, std::uint64_t seed, float scale = 1) {
  return tx::random::normal<float>({in, out}, seed, 0.0f, scale / std::sqrt(static_cast<float>(in)));
}

/// A batch: ids start with the start token, then uniform tokens; targets are the ids shifted one position right
/// (targets[t] = ids[t - 1], targets[0] = the start token).
void make_batch(tx::tensor<std::int32_t, 2>& ids, tx::tensor<std::int32_t, 2>& targets, std::mt19937& rng) {
  std::uniform_int_distribution<int> token(0, static_cast<int>(vocab) - 2);
  for (tx::index_t b = 0; b < ids.extent(0); ++b) {
    ids(b, 0) = static_cast<std::int32_t>(start_token);
    targets(b, 0) = static_cast<std::int32_t>(start_token);
    for (tx::index_t t = 1; t < length; ++t) {
      ids(b, t) = token(rng);
      targets(b, t) = ids(b, t - 1);
    }
  }
}

long arg(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const tx::index_t batch = arg(argc, argv, "--batch", 16);
  const long steps = arg(argc, argv, "--steps", 150);
  const long every = arg(argc, argv, "--print-every", 10);
  const tx::optim::warmup_cosine schedule{.lr = 1e-2, .warmup_steps = steps / 10, .total_steps = steps, .min_lr = 1e-4};

  model<tx::host> m{tx::random::normal<float>({vocab, width}, 1, 0.0f, 1.0f), tx::random::normal<float>({length, width}, 2, 0.0f, 1.0f),
                    tx::ones<float>({width}), tx::zeros<float>({width}),
                    init(width, width, 3), init(width, width, 4), init(width, width, 5), init(width, width, 6, 0.5f),
                    tx::ones<float>({width}), tx::zeros<float>({width}),
                    init(width, hidden, 7), tx::zeros<float>({hidden}), init(hidden, width, 8, 0.5f), tx::zeros<float>({width}),
                    tx::ones<float>({width}), tx::zeros<float>({width}), init(width, vocab, 9)};
  tx::tensor<float, 2> mask({length, length});
  for (tx::index_t i = 0; i < length; ++i)
    for (tx::index_t j = 0; j < length; ++j) mask(i, j) = j <= i ? 0.0f : -1e9f;
  tx::tensor<std::int32_t, 2> ids({batch, length}), targets({batch, length});

  tx::optim::adamw opt(m.all(), {.weight_decay = 1e-2});
  std::printf("texpr transformer block on host: vocab %lld, length %lld, width %lld, %lld heads, MLP %lld, batch %lld, "
              "AdamW with warm-up + cosine (peak lr %.0e), task: predict the previous token\n",
              static_cast<long long>(vocab), static_cast<long long>(length), static_cast<long long>(width),
              static_cast<long long>(heads), static_cast<long long>(hidden), static_cast<long long>(batch), schedule.lr);
  std::mt19937 rng(11);
  double first_loss = 0, last_loss = 0, tail = 0;
  long tail_count = 0;
  const auto start = std::chrono::steady_clock::now();
  for (long step = 0; step < steps; ++step) {
    make_batch(ids, targets, rng);
    const auto result = tx::eval_all(train_step(ids, targets, mask, m));
    opt.step(result, schedule(opt.steps()));
    last_loss = std::get<0>(result).item();
    if (step == 0) first_loss = last_loss;
    if (step >= steps - 10) tail += last_loss, ++tail_count;
    if (step % every == 0 || step + 1 == steps) std::printf("step %4ld  lr %.5f  loss %.4f\n", step, schedule(step), last_loss);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double final_loss = tail / static_cast<double>(tail_count > 0 ? tail_count : 1);
  std::printf("\n%ld steps in %.2f s (%.1f ms per step); loss %.4f -> %.4f (mean of the last 10 steps; uniform guessing: %.4f)\n",
              steps, seconds, 1000 * seconds / static_cast<double>(steps), first_loss, final_loss, std::log(static_cast<double>(vocab - 1)));
  const bool ok = std::isfinite(final_loss) && final_loss <= 0.5 * first_loss;
  std::printf("%s\n", ok ? "OK: the loss fell by more than half" : "FAILED: the loss did not fall by half");
  return ok ? 0 : 1;
}
