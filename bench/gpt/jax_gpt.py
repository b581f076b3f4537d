# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPT of examples/gpt/gpt.cpp in JAX (the same shapes, initialisation scheme, data and AdamW as torch_gpt.py),
for bench/gpt/run.sh: the whole step (loss, gradients, AdamW) is one jax.jit function; trains STEPS steps on CPU and
prints the median step time after the first 10 (the first includes XLA's compilation), as gpt.cpp does.

    python jax_gpt.py TEXT STEPS THREADS [LAYERS WIDTH CONTEXT BATCH]

XLA's CPU client has no thread setting: run.sh pins the process to THREADS CPUs; with 1, XLA_FLAGS also turns off
Eigen's multi-threading.
"""
import math
import os
import sys
import time


def main():
    path, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    layers, width, context, batch = (int(a) for a in (sys.argv[4:8] if len(sys.argv) > 7 else (2, 64, 32, 8)))
    if threads == 1:  # XLA sizes its pools by the CPUs the process may use (run.sh pins them with taskset)
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    import jax.numpy as jnp

    heads, hidden = 4 if width <= 64 else 6, 4 * width
    text = open(path, "rb").read()
    chars = sorted(set(text))
    code = {c: i for i, c in enumerate(chars)}
    data = jnp.array([code[c] for c in text], dtype=jnp.int32)
    vocab = len(chars)
    key = jax.random.PRNGKey(7)

    def normal(shape, sd=0.02):
        nonlocal key
        key, sub = jax.random.split(key)
        return jax.random.normal(sub, shape, jnp.float32) * sd

    residual_sd = 0.02 / math.sqrt(2 * layers)
    params = {"tokens": normal((vocab, width)), "positions": normal((context, width), 0.01),
              "lnf_w": jnp.ones(width), "lnf_b": jnp.zeros(width), "blocks": []}
    for _ in range(layers):
        params["blocks"].append({
            "ln1_w": jnp.ones(width), "ln1_b": jnp.zeros(width),
            "attn_w": normal((width, 3 * width)), "attn_b": jnp.zeros(3 * width),
            "proj_w": normal((width, width), residual_sd), "proj_b": jnp.zeros(width),
            "ln2_w": jnp.ones(width), "ln2_b": jnp.zeros(width),
            "fc_w": normal((width, hidden)), "fc_b": jnp.zeros(hidden),
            "out_w": normal((hidden, width), residual_sd), "out_b": jnp.zeros(width)})
    mask = jnp.triu(jnp.full((context, context), -1e9, jnp.float32), k=1)

    def ln(x, w, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * w + b

    def split(x):
        return x.reshape(batch, context, heads, width // heads).transpose(0, 2, 1, 3)

    def loss_of(p, ids, targets):
        x = p["tokens"][ids] + p["positions"]
        for b in p["blocks"]:
            qkv = ln(x, b["ln1_w"], b["ln1_b"]) @ b["attn_w"] + b["attn_b"]
            q, k, v = (split(qkv[..., i * width:(i + 1) * width]) for i in range(3))
            att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(width // heads) + mask, axis=-1)
            merged = (att @ v).transpose(0, 2, 1, 3).reshape(batch, context, width)
            h = x + merged @ b["proj_w"] + b["proj_b"]
            mlp = jax.nn.gelu(ln(h, b["ln2_w"], b["ln2_b"]) @ b["fc_w"] + b["fc_b"], approximate=False)
            x = h + mlp @ b["out_w"] + b["out_b"]
        logits = ln(x, p["lnf_w"], p["lnf_b"]) @ p["tokens"].T
        logp = jax.nn.log_softmax(logits.reshape(-1, vocab), axis=-1)
        return -jnp.take_along_axis(logp, targets.reshape(-1, 1), axis=1).mean()

    lr, beta1, beta2, eps, decay = 3e-3, 0.9, 0.999, 1e-8, 0.1  # torch.optim.AdamW's defaults and torch_gpt's lr

    @jax.jit
    def step(p, m, v, t, ids, targets):
        loss, g = jax.value_and_grad(loss_of)(p, ids, targets)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: beta1 * m + (1 - beta1) * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: beta2 * v + (1 - beta2) * g * g, v, g)
        c1, c2 = 1 - beta1 ** t, 1 - beta2 ** t
        p = jax.tree_util.tree_map(
            lambda p, m, v: p * (1 - lr * decay) - lr * (m / c1) / (jnp.sqrt(v / c2) + eps), p, m, v)
        return p, m, v, t, loss

    m = jax.tree_util.tree_map(jnp.zeros_like, params)
    v = jax.tree_util.tree_map(jnp.zeros_like, params)
    t = jnp.float32(0)
    rng = jax.random.PRNGKey(11)
    offsets = jnp.arange(context)
    times, first, last = [], None, None
    for _ in range(steps):
        begin = time.perf_counter()
        rng, sub = jax.random.split(rng)
        starts = jax.random.randint(sub, (batch,), 0, data.shape[0] - context - 1)
        ids = data[starts[:, None] + offsets]
        targets = data[starts[:, None] + offsets + 1]
        params, m, v, t, loss = step(params, m, v, t, ids, targets)
        value = float(loss)
        times.append((time.perf_counter() - begin) * 1000)
        first = value if first is None else first
        last = value
    warm = sorted(times[min(10, len(times) - 1):])
    print(f"JAX {jax.__version__}: loss {first:.4f} -> {last:.4f}")
    print(f"median step {warm[len(warm) // 2]:.3f} ms")


if __name__ == "__main__":
    main()
