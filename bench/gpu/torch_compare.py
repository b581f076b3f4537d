# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The cases of bench/gpu/bench.cu in PyTorch (CUDA events, warm-ups, medians), for comparison with texpr's
table: eager mode for every case; for the MLP cases also the same step captured with torch.cuda.CUDAGraph and,
when Triton is importable, torch.compile (mode "max-autotune-no-cudagraphs" and "reduce-overhead"); it prints
which ran. Prints one table, then (given bench.cu's output) texpr's eager and captured times beside PyTorch's.
Exits 0 with a message when PyTorch or a GPU is missing. TEXPR_TORCH_COMPILE=0 skips torch.compile (its
autotuning takes minutes)."""
import os
import statistics
import sys

try:
    import torch
except ImportError:
    print("SKIPPED: PyTorch is not installed")
    sys.exit(0)
if not torch.cuda.is_available():
    print("SKIPPED: no CUDA device for PyTorch")
    sys.exit(0)

WARMUPS, REPS = 3, 15


def time_ms(fn):
    for _ in range(WARMUPS):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(REPS):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


TIMES = {}  # name -> PyTorch's median ms, for the ratio table


def row(name, ms, nbytes=0.0, flops=0.0, extra=""):
    TIMES[name] = ms
    if nbytes:
        extra += f"  {nbytes / ms / 1e6:7.1f} GB/s"
    if flops:
        extra += f"  {flops / ms / 1e9:7.1f} TFLOP/s"
    print(f"{name:34s} {ms:9.3f} ms{extra}")


def pattern(rows, cols, seed, scale):
    """bench.cu's pattern(): 0.5 sin(0.7 i + 1.3 j + seed) * scale, computed in double, stored as float."""
    i = torch.arange(rows, dtype=torch.float64, device="cuda")[:, None]
    j = torch.arange(cols, dtype=torch.float64, device="cuda")[None, :]
    return (0.5 * torch.sin(0.7 * i + 1.3 * j + seed) * scale).float()


def capture_graph(fn, warmups=3):
    """fn captured with torch.cuda.CUDAGraph after warm-ups on a side stream (PyTorch's documented recipe); returns
    the graph (replay() reruns fn's kernels on the same memory)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmups):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def triton_available():
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return os.environ.get("TEXPR_TORCH_COMPILE", "1") != "0"


def bench_mlp():
    """bench.cu's bench_mlp(): 784-256-256-10 ELU + MSE; the forward pass at batch 64 and one SGD step at batch 128
    (all six parameters updated: torch.optim.SGD, foreach), each eager, as a CUDA graph and through torch.compile.
    Scratch memory alike on every side: PyTorch's caching allocator, texpr's device block cache, both warm."""
    f = torch.nn.functional
    w1, w2, w3 = pattern(784, 256, 3, 784 ** -0.5), pattern(256, 256, 5, 1 / 16), pattern(256, 10, 7, 1 / 16)
    b1, b2, b3 = pattern(1, 256, 4, 0.1)[0], pattern(1, 256, 6, 0.1)[0], pattern(1, 10, 8, 0.1)[0]
    x64, y64, x128, y128 = pattern(64, 784, 1, 1), pattern(64, 10, 2, 1), pattern(128, 784, 1, 1), pattern(128, 10, 2, 1)

    def logits(x, w1, b1, w2, b2, w3, b3):
        h1 = f.elu(x @ w1 + b1)
        h2 = f.elu(h1 @ w2 + b2)
        return h2 @ w3 + b3

    def forward_loss(x, y, *params):
        return torch.mean((logits(x, *params) - y) ** 2)

    # Forward pass: eager, CUDA graph, torch.compile.
    with torch.no_grad():
        params = (w1, b1, w2, b2, w3, b3)
        loss = forward_loss(x64, y64, *params)
        row("MLP forward, batch 64", time_ms(lambda: forward_loss(x64, y64, *params)), extra=f"  loss {loss.item():.6f}")
        static = {}

        def fwd():
            static["loss"] = forward_loss(x64, y64, *params)

        graph = capture_graph(fwd)
        row("MLP forward CUDA graph, batch 64", time_ms(graph.replay), extra=f"  loss {static['loss'].item():.6f}")
    if triton_available():
        for mode in ("max-autotune-no-cudagraphs", "reduce-overhead"):
            try:
                compiled = torch.compile(forward_loss, mode=mode)
                with torch.no_grad():
                    for _ in range(3):
                        compiled(x64, y64, *params)
                    ms = time_ms(lambda: compiled(x64, y64, *params))
                    row(f"MLP forward compile {mode}", ms, extra=f"  loss {compiled(x64, y64, *params).item():.6f}")
            except Exception as e:  # a compile failure is a result to print, not a reason to stop
                print(f"torch.compile(mode={mode!r}) of the forward pass failed: {type(e).__name__}: {e}")
    else:
        print("torch.compile: not run (Triton is not importable, or TEXPR_TORCH_COMPILE=0)")

    # SGD step: the six gradients, then all six parameters updated in place, on fresh copies of the parameters for
    # each variant. Eager and compiled variants take 1 + warm-ups + repetitions steps, as bench.cu's do (the same
    # last loss as texpr's); the CUDA graph variant 3 more (its warm-ups before capture).
    def sgd_variant(kind, mode=None):
        ps = [t.clone().requires_grad_(True) for t in (w1, b1, w2, b2, w3, b3)]
        opt = torch.optim.SGD(ps, lr=0.1, foreach=True)
        fl = torch.compile(forward_loss, mode=mode) if kind == "compile" else forward_loss
        out = {}

        def step():
            opt.zero_grad(set_to_none=(kind != "graph"))
            loss = fl(x128, y128, *ps)
            loss.backward()
            opt.step()
            out["loss"] = loss

        if kind == "graph":
            graph = capture_graph(step)  # 3 warm-up steps on a side stream, then the capture
            ms = time_ms(graph.replay)
        else:
            step()
            ms = time_ms(step)
        moved = torch.sum(torch.abs(ps[0].detach() - w1)).item()
        return ms, out["loss"].item(), moved

    ms, last, moved = sgd_variant("eager")
    row("SGD step, batch 128", ms, extra=f"  loss {last:.6f}, sum |w1 - w1 at start| {moved:.6f}")
    ms, last, moved = sgd_variant("graph")
    row("SGD step CUDA graph, batch 128", ms, extra=f"  loss {last:.6f}, sum |w1 - w1 at start| {moved:.6f}")
    if triton_available():
        for mode in ("max-autotune-no-cudagraphs", "reduce-overhead"):
            try:
                ms, last, moved = sgd_variant("compile", mode)
                row(f"SGD step compile {mode}", ms, extra=f"  loss {last:.6f}, sum |w1 - w1 at start| {moved:.6f}")
            except Exception as e:
                print(f"torch.compile(mode={mode!r}) of the SGD step failed: {type(e).__name__}: {e}")


# bench.cu's row names -> this file's, for the ratio table (texpr fuses where eager PyTorch runs one kernel per op).
PAIRS = [("6-op chain (fused)", "6-op chain (eager, unfused)"), ("sum (64 Mi float)", "sum (64 Mi float)"),
         ("sum(a * b) fused", "sum(a * b)"), ("mean axis 0 (8192^2 float)", "mean axis 0 (8192^2 float)"),
         ("mean axis 1 (8192^2 float)", "mean axis 1 (8192^2 float)"),
         ("mean axis 0 (64x1024x1024 float)", "mean axis 0 (64x1024x1024 float)"),
         ("MLP forward, batch 64", "MLP forward, batch 64"), ("SGD step, batch 128", "SGD step, batch 128"),
         ("MLP forward captured, batch 64", "MLP forward CUDA graph, batch 64"),
         ("SGD step captured, batch 128", "SGD step CUDA graph, batch 128"),
         ("matmul float 4096^3", "matmul float 4096^3"), ("matmul double 4096^3", "matmul double 4096^3"),
         ("matmul half 8192^3", "matmul half 8192^3"), ("matmul bfloat16 8192^3", "matmul bfloat16 8192^3"),
         ("cumsum (64 Mi float, one line)", "cumsum (64 Mi float, one line)"),
         ("cumsum axis 1 (8192^2 float)", "cumsum axis 1 (8192^2 float)"),
         ("argsort 4096 x 1024 float", "argsort 4096 x 1024 float"),
         ("topk(8) of 4096 x 32768 float", "topk(8) of 4096 x 32768 float")]


def texpr_times(path):
    """texpr's times by row name, from bench.cu's output in path."""
    texpr = {}
    with open(path) as f:
        for line in f:
            name, rest = line[:34].strip(), line[34:].split()
            if name and len(rest) >= 2 and rest[1] == "ms":
                try:
                    texpr[name] = float(rest[0])
                except ValueError:
                    pass
    return texpr


def ratio_table(path):
    """texpr / PyTorch for each case both programs ran, then the MLP cases in five columns: texpr eager, texpr
    captured, PyTorch eager, PyTorch CUDA graph, torch.compile (the faster mode, named)."""
    texpr = texpr_times(path)
    print(f"\n{'case':34s} {'texpr ms':>9s} {'torch ms':>9s}  texpr/torch")
    for ours, theirs in PAIRS:
        if ours in texpr and theirs in TIMES:
            print(f"{ours:34s} {texpr[ours]:9.3f} {TIMES[theirs]:9.3f}  {texpr[ours] / TIMES[theirs]:5.2f}")

    def cell(v):
        return f"{v:.3f}" if v is not None else "not run"

    print(f"\n{'MLP case (ms)':24s} {'texpr eager':>11s} {'texpr graph':>11s} {'torch eager':>11s} {'torch graph':>11s}"
          "  torch.compile")
    for case, ours, theirs in (("forward, batch 64", "MLP forward", "MLP forward"),
                               ("SGD step, batch 128", "SGD step", "SGD step")):
        batch = "batch 64" if "forward" in case else "batch 128"
        compiled = [(TIMES[k], k.split("compile ")[1]) for k in TIMES if k.startswith(f"{theirs} compile ")]
        best = min(compiled) if compiled else None
        print(f"{case:24s} {cell(texpr.get(f'{ours}, {batch}')):>11s} {cell(texpr.get(f'{ours} captured, {batch}')):>11s}"
              f" {cell(TIMES.get(f'{theirs}, {batch}')):>11s} {cell(TIMES.get(f'{theirs} CUDA graph, {batch}')):>11s}"
              f"  {f'{best[0]:.3f} ({best[1]})' if best else 'not run'}")
        eager_graph = texpr.get(f"{ours} captured, {batch}"), TIMES.get(f"{theirs} CUDA graph, {batch}")
        if None not in eager_graph:
            print(f"{'':24s} texpr captured / PyTorch CUDA graph: {eager_graph[0] / eager_graph[1]:.2f}")


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # texpr's float matmul is exact fp32 unless opted in
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name()}; torch.compile "
          f"{'will run' if triton_available() else 'will not run (no Triton, or TEXPR_TORCH_COMPILE=0)'}\n")
    n = 1 << 26
    a = torch.full((n,), 1.0, device="cuda")
    b = torch.full((n,), 2.0, device="cuda")
    c = torch.full((n,), 3.0, device="cuda")
    y = torch.empty_like(a)
    fb = 4.0 * n
    row("D2D copy (anchor)", time_ms(lambda: y.copy_(a)), 2 * fb)
    row("6-op chain (eager, unfused)", time_ms(lambda: torch.sigmoid(a * b + c) * 0.5 - torch.abs(a)), 4 * fb)
    row("sum (64 Mi float)", time_ms(lambda: torch.sum(a)), fb)
    row("sum(a * b)", time_ms(lambda: torch.sum(a * b)), 2 * fb)
    x = torch.ones((8192, 8192), device="cuda")
    mb = 4.0 * 8192 * 8192
    row("mean axis 0 (8192^2 float)", time_ms(lambda: torch.mean(x, 0)), mb)
    row("mean axis 1 (8192^2 float)", time_ms(lambda: torch.mean(x, 1)), mb)
    x3 = torch.ones((64, 1024, 1024), device="cuda")
    row("mean axis 0 (64x1024x1024 float)", time_ms(lambda: torch.mean(x3, 0)), mb)
    row("cumsum (64 Mi float, one line)", time_ms(lambda: torch.cumsum(a, 0)), 2 * fb)
    row("cumsum axis 1 (8192^2 float)", time_ms(lambda: torch.cumsum(x, 1)), 2 * mb)
    keys = pattern(4096, 1024, 0.3, 10.0)
    row("argsort 4096 x 1024 float", time_ms(lambda: torch.argsort(keys, dim=1, stable=True)))
    wide = pattern(4096, 32768, 0.9, 10.0)
    row("topk(8) of 4096 x 32768 float", time_ms(lambda: torch.topk(wide, 8, 1)))
    print()
    bench_mlp()
    print()
    for name, dtype, size in (("float", torch.float32, 4096), ("double", torch.float64, 4096),
                              ("half", torch.float16, 8192), ("bfloat16", torch.bfloat16, 8192)):
        p = torch.full((size, size), 0.01, device="cuda", dtype=dtype)
        q = torch.full((size, size), 0.02, device="cuda", dtype=dtype)
        row(f"matmul {name} {size}^3", time_ms(lambda: torch.matmul(p, q)), flops=2.0 * size ** 3)
    if len(sys.argv) > 1:
        ratio_table(sys.argv[1])


if __name__ == "__main__":
    main()
