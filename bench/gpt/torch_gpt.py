# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPT of examples/gpt/gpt.cpp in PyTorch (the same shapes, initialisation scheme, data and optimiser), for
bench/gpt/run.sh: trains STEPS steps on CPU and prints the median step time after the first 10, as gpt.cpp does.

    python torch_gpt.py TEXT STEPS THREADS [LAYERS WIDTH CONTEXT BATCH]
"""
import math
import sys
import time

import torch


def main():
    path, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    layers, width, context, batch = (int(a) for a in (sys.argv[4:8] if len(sys.argv) > 7 else (2, 64, 32, 8)))
    heads, hidden = 4 if width <= 64 else 6, 4 * width
    torch.set_num_threads(threads)
    torch.manual_seed(7)
    text = open(path, "rb").read()
    chars = sorted(set(text))
    code = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([code[c] for c in text], dtype=torch.long)
    vocab = len(chars)

    def normal(*shape, sd=0.02):
        return (torch.randn(*shape) * sd).requires_grad_()

    residual_sd = 0.02 / math.sqrt(2 * layers)
    tokens, positions = normal(vocab, width), normal(context, width, sd=0.01)
    lnf_w, lnf_b = torch.ones(width, requires_grad=True), torch.zeros(width, requires_grad=True)
    blocks = []
    for _ in range(layers):
        blocks.append(dict(
            ln1_w=torch.ones(width, requires_grad=True), ln1_b=torch.zeros(width, requires_grad=True),
            attn_w=normal(width, 3 * width), attn_b=torch.zeros(3 * width, requires_grad=True),
            proj_w=normal(width, width, sd=residual_sd), proj_b=torch.zeros(width, requires_grad=True),
            ln2_w=torch.ones(width, requires_grad=True), ln2_b=torch.zeros(width, requires_grad=True),
            fc_w=normal(width, hidden), fc_b=torch.zeros(hidden, requires_grad=True),
            out_w=normal(hidden, width, sd=residual_sd), out_b=torch.zeros(width, requires_grad=True)))
    params = [tokens, positions, lnf_w, lnf_b] + [t for b in blocks for t in b.values()]
    opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=0.1)
    mask = torch.triu(torch.full((context, context), -1e9), diagonal=1)
    ln = torch.nn.functional.layer_norm

    def split(x):
        return x.reshape(batch, context, heads, width // heads).permute(0, 2, 1, 3)

    def loss_of(ids, targets):
        x = tokens[ids] + positions
        for b in blocks:
            qkv = ln(x, (width,), b["ln1_w"], b["ln1_b"]) @ b["attn_w"] + b["attn_b"]
            q, k, v = (split(qkv[..., i * width:(i + 1) * width]) for i in range(3))
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(width // heads) + mask, dim=-1)
            merged = (att @ v).permute(0, 2, 1, 3).reshape(batch, context, width)
            h = x + merged @ b["proj_w"] + b["proj_b"]
            mlp = torch.nn.functional.gelu(ln(h, (width,), b["ln2_w"], b["ln2_b"]) @ b["fc_w"] + b["fc_b"])
            x = h + mlp @ b["out_w"] + b["out_b"]
        logits = ln(x, (width,), lnf_w, lnf_b) @ tokens.t()
        return torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1))

    g = torch.Generator().manual_seed(7)
    times, first, last = [], None, None
    for step in range(steps):
        begin = time.perf_counter()
        starts = torch.randint(0, len(data) - context - 1, (batch,), generator=g)
        ids = torch.stack([data[s:s + context] for s in starts])
        targets = torch.stack([data[s + 1:s + context + 1] for s in starts])
        opt.zero_grad(set_to_none=True)
        loss = loss_of(ids, targets)
        loss.backward()
        opt.step()
        value = loss.item()
        times.append((time.perf_counter() - begin) * 1000)
        first = value if first is None else first
        last = value
    warm = sorted(times[min(10, len(times) - 1):])
    print(f"loss {first:.4f} -> {last:.4f}")
    print(f"median step {warm[len(warm) // 2]:.3f} ms")
    # Peak memory of one more step's forward and backward (what gpt.cpp's kernel_log measures: the loss and every
    # gradient, with the temporaries between): PyTorch's profiler records each CPU allocation and free; their
    # running sum from the step's start, at its highest.
    opt.zero_grad(set_to_none=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        loss = loss_of(ids, targets)
        loss.backward()
    # (each allocation and free is a "[memory]" record of the profiler's raw results, with its signed byte count)
    events = sorted((e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events() if e.name() == "[memory]")
    held = peak = 0
    for _, nbytes in events:
        held += nbytes
        peak = max(peak, held)
    print(f"step memory: peak {peak / 2 ** 20:.2f} MiB allocated (torch.profiler, profile_memory)")


if __name__ == "__main__":
    main()
