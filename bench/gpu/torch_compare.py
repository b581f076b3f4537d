"""The cases of bench/gpu/bench.cu in PyTorch eager mode (CUDA events, warm-ups, medians), for comparison
with texpr's table. Prints one table; exits 0 with a message when PyTorch or a GPU is missing."""
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


def bench_mlp():
    """bench.cu's bench_mlp(): 784-256-256-10 ELU + MSE; forward at batch 64, one SGD step at batch 128."""
    f = torch.nn.functional
    w1, w2, w3 = pattern(784, 256, 3, 784 ** -0.5), pattern(256, 256, 5, 1 / 16), pattern(256, 10, 7, 1 / 16)
    b1, b2, b3 = pattern(1, 256, 4, 0.1)[0], pattern(1, 256, 6, 0.1)[0], pattern(1, 10, 8, 0.1)[0]
    x64, y64, x128, y128 = pattern(64, 784, 1, 1), pattern(64, 10, 2, 1), pattern(128, 784, 1, 1), pattern(128, 10, 2, 1)

    def logits(x, w1, b1, w2, b2, w3, b3):
        h1 = f.elu(x @ w1 + b1)
        h2 = f.elu(h1 @ w2 + b2)
        return h2 @ w3 + b3

    with torch.no_grad():
        loss = torch.mean((logits(x64, w1, b1, w2, b2, w3, b3) - y64) ** 2)
        fwd = time_ms(lambda: torch.mean((logits(x64, w1, b1, w2, b2, w3, b3) - y64) ** 2))
    row("MLP forward, batch 64", fwd, extra=f"  loss {loss.item():.6f}")
    ps = [t.clone().requires_grad_(True) for t in (w1, b1, w2, b2, w3, b3)]
    out = {}

    def step():
        loss = torch.mean((logits(x128, *ps) - y128) ** 2)
        grads = torch.autograd.grad(loss, ps)
        out["w1"] = ps[0].detach() - 0.1 * grads[0]
        out["loss"] = loss

    ms = time_ms(step)
    moved = torch.sum(torch.abs(out["w1"] - w1)).item()
    row("SGD step, batch 128", ms, extra=f"  loss {out['loss'].item():.6f}, sum |w1 update| {moved:.6f}")


# bench.cu's row names -> this file's, for the ratio table (texpr fuses where eager PyTorch runs one kernel per op).
PAIRS = [("6-op chain (fused)", "6-op chain (eager, unfused)"), ("sum (64 Mi float)", "sum (64 Mi float)"),
         ("sum(a * b) fused", "sum(a * b)"), ("mean axis 0 (8192^2 float)", "mean axis 0 (8192^2 float)"),
         ("mean axis 1 (8192^2 float)", "mean axis 1 (8192^2 float)"),
         ("mean axis 0 (64x1024x1024 float)", "mean axis 0 (64x1024x1024 float)"),
         ("MLP forward, batch 64", "MLP forward, batch 64"), ("SGD step, batch 128", "SGD step, batch 128"),
         ("matmul float 4096^3", "matmul float 4096^3"), ("matmul double 4096^3", "matmul double 4096^3"),
         ("matmul half 8192^3", "matmul half 8192^3"), ("matmul bfloat16 8192^3", "matmul bfloat16 8192^3")]


def ratio_table(path):
    """texpr / PyTorch for each case both programs ran; texpr's times come from bench.cu's output in path."""
    texpr = {}
    with open(path) as f:
        for line in f:
            name, rest = line[:34].strip(), line[34:].split()
            if name and len(rest) >= 2 and rest[1] == "ms":
                try:
                    texpr[name] = float(rest[0])
                except ValueError:
                    pass
    print(f"\n{'case':34s} {'texpr ms':>9s} {'torch ms':>9s}  texpr/torch")
    for ours, theirs in PAIRS:
        if ours in texpr and theirs in TIMES:
            print(f"{ours:34s} {texpr[ours]:9.3f} {TIMES[theirs]:9.3f}  {texpr[ours] / TIMES[theirs]:5.2f}")


def main():
    torch.backends.cuda.matmul.allow_tf32 = False  # texpr's float matmul is exact fp32 unless opted in
    print(f"PyTorch {torch.__version__} eager on {torch.cuda.get_device_name()}\n")
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
