// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A GPT-2-style character model trained on a public-domain text (examples/gpt/genesis.txt): token and position
// embeddings, pre-norm blocks of causal multi-head attention and a GELU MLP with residual adds, a final layer norm and
// a head tied to the token embedding, AdamW on a warm-up + cosine schedule. Written as a user writes it, with
// tx::share on every value read more than once (each block's input, its normalised input that q, k and v slice out
// of one product, the residual between attention and MLP), so the step computes and differentiates each value once.
// Exit code 0 only if the loss falls below 0.7 of its first value, and, with --check, if the step's GEMMs are the
// model's (one per product and per needed gradient: nothing is computed twice).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <texpr/texpr.hpp>

namespace tx = texpr;

namespace {

// The small configuration by default; bench/gpt/run.sh also builds a larger one (-DTEXPR_GPT_LAYERS=6 ...).
#ifndef TEXPR_GPT_LAYERS
#define TEXPR_GPT_LAYERS 2
#define TEXPR_GPT_HEADS 4
#define TEXPR_GPT_WIDTH 64
#define TEXPR_GPT_CONTEXT 32
#endif
constexpr std::size_t layers = TEXPR_GPT_LAYERS;
constexpr tx::index_t heads = TEXPR_GPT_HEADS, width = TEXPR_GPT_WIDTH, context = TEXPR_GPT_CONTEXT, hidden = 4 * width;

/// One block's parameters.
template <class B> struct block_weights {
  tx::tensor<float, 1, B> ln1_w, ln1_b;   // (width)
  tx::tensor<float, 2, B> attn_w;         // (width, 3 width): q, k, v side by side
  tx::tensor<float, 1, B> attn_b;         // (3 width)
  tx::tensor<float, 2, B> proj_w;         // (width, width)
  tx::tensor<float, 1, B> proj_b;         // (width)
  tx::tensor<float, 1, B> ln2_w, ln2_b;   // (width)
  tx::tensor<float, 2, B> fc_w;           // (width, hidden)
  tx::tensor<float, 1, B> fc_b;           // (hidden)
  tx::tensor<float, 2, B> out_w;          // (hidden, width)
  tx::tensor<float, 1, B> out_b;          // (width)
  auto all() { return std::tie(ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, out_w, out_b); }
};
constexpr std::size_t per_block = 12;

/// The model's parameters: embeddings (the token embedding is also the head), blocks, final norm.
template <class B> struct model {
  tx::tensor<float, 2, B> tokens, positions;  // (vocab, width), (context, width)
  tx::tensor<float, 1, B> lnf_w, lnf_b;       // (width)
  block_weights<B> blocks[layers];
  /// Every parameter in one order (tx::params, the optimiser).
  auto all() {
    return [&]<std::size_t... L>(std::index_sequence<L...>) {
      return std::tuple_cat(std::tie(tokens, positions, lnf_w, lnf_b), blocks[L].all()...);
    }(std::make_index_sequence<layers>{});
  }
};

/// (batch, context, width) -> (batch, heads, context, width / heads).
template <class X> auto split_heads(const X& x, tx::index_t batch) {
  return tx::permute(tx::reshape(x, {batch, context, heads, width / heads}), {0, 2, 1, 3});
}

/// Block L over x (batch, context, width): x + attention(ln1(x)), then + mlp(ln2(.)). P holds every parameter.
template <std::size_t L, class X, class M, class P> auto block(const X& x, const M& mask, const P& p, tx::index_t batch) {
  constexpr std::size_t o = 4 + per_block * L;
  const auto& [ln1_w, ln1_b, attn_w, attn_b, proj_w, proj_b, ln2_w, ln2_b, fc_w, fc_b, out_w, out_b] =
      std::forward_as_tuple(std::get<o + 0>(p), std::get<o + 1>(p), std::get<o + 2>(p), std::get<o + 3>(p), std::get<o + 4>(p),
                            std::get<o + 5>(p), std::get<o + 6>(p), std::get<o + 7>(p), std::get<o + 8>(p), std::get<o + 9>(p),
                            std::get<o + 10>(p), std::get<o + 11>(p));
  auto qkv = tx::share(tx::matmul(tx::layer_norm(x, ln1_w, ln1_b), attn_w) + attn_b);  // read by q, k and v
  auto q = split_heads(tx::slice(qkv, 2, 0, width), batch);
  auto k = split_heads(tx::slice(qkv, 2, width, 2 * width), batch);
  auto v = split_heads(tx::slice(qkv, 2, 2 * width, 3 * width), batch);
  const float scale = 1.0f / std::sqrt(static_cast<float>(width / heads));
  auto attention = tx::softmax(tx::matmul(q, tx::transpose(k)) * scale + mask, -1);
  auto merged = tx::reshape(tx::permute(tx::matmul(attention, v), {0, 2, 1, 3}), {batch, context, width});
  auto h = tx::share(x + tx::matmul(merged, proj_w) + proj_b);  // read by the norm and the residual
  auto mlp = tx::matmul(tx::gelu(tx::matmul(tx::layer_norm(h, ln2_w, ln2_b), fc_w) + fc_b), out_w) + out_b;
  return tx::share(h + mlp);  // the next block reads it twice
}

/// Blocks L, L + 1, ..., layers - 1 over x.
template <std::size_t L, class X, class M, class P> auto blocks_from(const X& x, const M& mask, const P& p, tx::index_t batch) {
  if constexpr (L == layers) return x;
  else return blocks_from<L + 1>(block<L>(x, mask, p, batch), mask, p, batch);
}

/// The mean cross-entropy of next-character prediction over ids (batch, context) against targets (batch, context).
template <class I, class M, class P> auto loss_of(const I& ids, const I& targets, const M& mask, const P& p) {
  const tx::index_t batch = ids.shape()[0];
  const auto& tokens = std::get<0>(p);
  auto x0 = tx::share(tx::embedding(ids, tokens) + std::get<1>(p));
  auto top = blocks_from<0>(x0, mask, p, batch);
  auto logits = tx::matmul(tx::layer_norm(top, std::get<2>(p), std::get<3>(p)), tx::transpose(tokens));  // tied head
  const tx::index_t vocab = tokens.shape()[0];
  return tx::cross_entropy(tx::reshape(logits, {batch * context, vocab}), tx::reshape(targets, {batch * context}));
}

/// One training step as graphs: (loss, a gradient per parameter, in model::all's order).
template <class B>
auto train_step(const tx::tensor<std::int32_t, 2, B>& ids, const tx::tensor<std::int32_t, 2, B>& targets,
                const tx::tensor<float, 2, B>& mask, model<B>& m) {
  const auto p = std::apply([](auto&... t) { return tx::params(t...); }, m.all());
  return tx::value_and_grad(loss_of(ids, targets, mask, p), p);
}

template <class B>
using step_t = decltype(train_step(std::declval<const tx::tensor<std::int32_t, 2, B>&>(), std::declval<const tx::tensor<std::int32_t, 2, B>&>(),
                                   std::declval<const tx::tensor<float, 2, B>&>(), std::declval<model<B>&>()));
// The whole step, forward and every gradient, runs on the host, and (checked by any compiler) on cuda.
static_assert(tx::all_run_on<step_t<tx::host>, tx::host>);
static_assert(tx::all_run_on<step_t<tx::cuda>, tx::cuda>, "every graph of the GPT step must run on cuda");

/// N(0, 0.02^2) weights (GPT-2's initialisation), from texpr's counter-based generator.
tx::tensor<float, 2> normal(tx::index_t rows, tx::index_t cols, std::uint64_t seed, float sd = 0.02f) {
  return tx::random::normal<float>({rows, cols}, seed, 0.0f, sd);
}

model<tx::host> initial_model(tx::index_t vocab) {
  model<tx::host> m{normal(vocab, width, 1), normal(context, width, 2, 0.01f), tx::ones<float>({width}), tx::zeros<float>({width}), {}};
  std::uint64_t seed = 10;
  const float residual_sd = 0.02f / std::sqrt(2.0f * layers);  // GPT-2 scales the residual projections
  for (auto& b : m.blocks) {
    b.ln1_w = tx::ones<float>({width});
    b.ln1_b = tx::zeros<float>({width});
    b.attn_w = normal(width, 3 * width, seed++);
    b.attn_b = tx::zeros<float>({3 * width});
    b.proj_w = normal(width, width, seed++, residual_sd);
    b.proj_b = tx::zeros<float>({width});
    b.ln2_w = tx::ones<float>({width});
    b.ln2_b = tx::zeros<float>({width});
    b.fc_w = normal(width, hidden, seed++);
    b.fc_b = tx::zeros<float>({hidden});
    b.out_w = normal(hidden, width, seed++, residual_sd);
    b.out_b = tx::zeros<float>({width});
  }
  return m;
}

long arg(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}
const char* text_arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}
bool flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = text_arg(argc, argv, "--text", TEXPR_GPT_TEXT);
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() < static_cast<std::size_t>(context) + 2) {
    std::fprintf(stderr, "gpt: cannot read a text of more than %lld characters from %s\n", static_cast<long long>(context + 1), path);
    return 2;
  }
  int code[256];
  std::fill(std::begin(code), std::end(code), -1);
  tx::index_t vocab = 0;
  for (unsigned char c : text)
    if (code[c] < 0) code[c] = static_cast<int>(vocab++);

  const tx::index_t batch = arg(argc, argv, "--batch", 8);
  const long steps = arg(argc, argv, "--steps", 300);
  const long every = arg(argc, argv, "--print-every", 25);
  const tx::optim::warmup_cosine schedule{.lr = 3e-3, .warmup_steps = steps / 10, .total_steps = steps, .min_lr = 3e-4};

  model<tx::host> m = initial_model(vocab);
  tx::tensor<float, 2> mask({context, context});
  for (tx::index_t i = 0; i < context; ++i)
    for (tx::index_t j = 0; j < context; ++j) mask(i, j) = j <= i ? 0.0f : -1e9f;
  tx::tensor<std::int32_t, 2> ids({batch, context}), targets({batch, context});
  tx::optim::adamw opt(m.all(), {.weight_decay = 0.1});

  std::printf("texpr GPT on host: %zu layers, %lld heads, width %lld, context %lld, vocab %lld (%zu characters of %s), "
              "batch %lld, AdamW\n",
              layers, static_cast<long long>(heads), static_cast<long long>(width), static_cast<long long>(context),
              static_cast<long long>(vocab), text.size(), path, static_cast<long long>(batch));
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> start(0, text.size() - static_cast<std::size_t>(context) - 1);
  double first = 0, tail = 0;
  long tail_count = 0;
  bool structure_ok = true;
  std::vector<double> step_ms;
  const auto begin = std::chrono::steady_clock::now();
  for (long step = 0; step < steps; ++step) {
    const auto step_begin = std::chrono::steady_clock::now();
    for (tx::index_t b = 0; b < batch; ++b) {
      const std::size_t s = start(rng);
      for (tx::index_t t = 0; t < context; ++t) {
        ids(b, t) = code[static_cast<unsigned char>(text[s + static_cast<std::size_t>(t)])];
        targets(b, t) = code[static_cast<unsigned char>(text[s + static_cast<std::size_t>(t) + 1])];
      }
    }
    const bool check = step == 1 && flag(argc, argv, "--check");
    std::optional<tx::kernel_log> log;  // recording the second step only (the first fills texpr's caches)
    if (step == 1) log.emplace();
    const auto result = tx::eval_all(train_step(ids, targets, mask, m));
    if (step == 1)
      std::printf("step memory: peak %.2f MiB held by tensors and temporaries (tx::kernel_log::peak_bytes)\n",
                  static_cast<double>(log->peak_bytes()) / (1 << 20));
    if (check) {
      // Forward per block: qkv, q k^T, attention v, the projection, fc, out (6); the head (1). Backward per block:
      // both operands of each of those 6; the head's 2 (its input and the tied embedding); the embedding's lookup
      // is no GEMM. So 6L + 1 forward and 12L + 2 backward: each product and each gradient once.
      const std::size_t expected = (6 * layers + 1) + (12 * layers + 2);
      const std::size_t gemms = log->count("blocked_gemm") + log->count("blocked_gemm_epilogue");
      std::printf("step structure: %zu GEMMs (expected %zu), %zu kernels in all\n", gemms, expected, log->entries().size());
      structure_ok = gemms == expected;
    }
    opt.step(result, schedule(opt.steps()));
    const double loss = std::get<0>(result).item();
    step_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - step_begin).count());
    if (step == 0) first = loss;
    if (step >= steps - 10) tail += loss, ++tail_count;
    if (step % every == 0 || step + 1 == steps) std::printf("step %4ld  lr %.5f  loss %.4f\n", step, schedule(step), loss);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const double last = tail / static_cast<double>(tail_count > 0 ? tail_count : 1);
  std::printf("\n%ld steps in %.2f s (%.2f ms per step); loss %.4f -> %.4f (mean of the last 10; uniform: %.4f)\n", steps,
              seconds, 1000 * seconds / static_cast<double>(steps), first, last, std::log(static_cast<double>(vocab)));
  // The median step after the first 10 (bench/gpt/run.sh compares it with PyTorch's, measured alike).
  std::vector<double> warm(step_ms.begin() + std::min<std::ptrdiff_t>(10, static_cast<std::ptrdiff_t>(step_ms.size()) - 1), step_ms.end());
  std::nth_element(warm.begin(), warm.begin() + static_cast<std::ptrdiff_t>(warm.size() / 2), warm.end());
  std::printf("median step %.3f ms\n", warm[warm.size() / 2]);
  const bool ok = std::isfinite(last) && last <= 0.7 * first && structure_ok;
  std::printf("%s\n", ok ? "OK: the loss fell below 0.7 of its first value" : "FAILED");
  return ok ? 0 : 1;
}
