#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""texpr's complex matmul (host_kernels::complex_gemm) against NumPy's (BLAS cgemm/zgemm), interleaved in one run.

  /usr/bin/python3 bench/complex_matmul/run.py [--rounds 5] [--threads 1] [--cxx clang++]

Builds bench_complex_matmul.cpp (-O3) into build/bench-complex-matmul, keeps it running as a subprocess, and in
each round times every case once with NumPy and once with texpr, each the best of the case's repetitions after one
untimed call. Prints the median over rounds and texpr / NumPy (below 1: texpr is faster). Both sides get the same
thread count (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and TEXPR_NUM_THREADS, set before NumPy is imported).
"""
import argparse
import os
import statistics
import subprocess
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = [("complex64", 256, 30), ("complex128", 256, 30), ("complex64", 512, 5), ("complex128", 512, 5)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--cxx", default="clang++")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench-complex-matmul"))
    args = p.parse_args()
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "TEXPR_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import numpy as np  # after the thread variables

    os.makedirs(args.build_dir, exist_ok=True)
    exe = os.path.join(args.build_dir, "bench_complex_matmul")
    subprocess.run([args.cxx, "-std=c++20", "-O3", "-DNDEBUG", "-I" + os.path.join(ROOT, "include"),
                    os.path.join(HERE, "bench_complex_matmul.cpp"), "-o", exe, "-lpthread"], check=True)
    proc = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def texpr_ms(dtype, n, reps):
        proc.stdin.write(f"{dtype} {n} {reps}\n")
        proc.stdin.flush()
        return float(proc.stdout.readline())

    def numpy_ms(dtype, n, reps):
        i = np.arange(n * n)
        a = (np.sin(0.37 * i) + 1j * np.cos(0.11 * i)).astype(dtype).reshape(n, n)
        b = (np.cos(0.23 * i) - 1j * np.sin(0.07 * i)).astype(dtype).reshape(n, n)
        c = np.empty((n, n), dtype)
        np.matmul(a, b, out=c)
        return min(timeit.repeat(lambda: np.matmul(a, b, out=c), number=1, repeat=reps)) * 1e3

    times = {case: ([], []) for case in CASES}
    for _ in range(args.rounds):
        for case in CASES:
            times[case][0].append(numpy_ms(*case))
            times[case][1].append(texpr_ms(*case))
    proc.stdin.close()
    proc.wait()
    print(f"NumPy {np.__version__} ({sys.executable}), {args.threads} thread(s), median of {args.rounds} rounds")
    print("| case | NumPy ms | texpr ms | texpr / NumPy |")
    print("| --- | ---: | ---: | ---: |")
    for (dtype, n, _), (nt, tt) in times.items():
        a, b = statistics.median(nt), statistics.median(tt)
        print(f"| matmul {dtype} {n}x{n} | {a:.3f} | {b:.3f} | {b / a:.2f}x |")


if __name__ == "__main__":
    main()
