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


def row(name, ms, nbytes=0.0, flops=0.0):
    extra = ""
    if nbytes:
        extra += f"  {nbytes / ms / 1e6:7.1f} GB/s"
    if flops:
        extra += f"  {flops / ms / 1e9:7.1f} TFLOP/s"
    print(f"{name:34s} {ms:9.3f} ms{extra}")


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
    for name, dtype, size in (("float", torch.float32, 4096), ("double", torch.float64, 4096),
                              ("half", torch.float16, 8192), ("bfloat16", torch.bfloat16, 8192)):
        p = torch.full((size, size), 0.01, device="cuda", dtype=dtype)
        q = torch.full((size, size), 0.02, device="cuda", dtype=dtype)
        row(f"matmul {name} {size}^3", time_ms(lambda: torch.matmul(p, q)), flops=2.0 * size ** 3)


if __name__ == "__main__":
    main()
