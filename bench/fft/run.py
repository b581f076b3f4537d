#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""texpr's host FFT engine against NumPy's np.fft (PocketFFT), side by side in one interleaved run.

  /usr/bin/python3 bench/fft/run.py                 # build bench_fft.cpp (clang++ -O3), 5 rounds, print the table
  /usr/bin/python3 bench/fft/run.py --rounds 9 --cxx g++ --native --libraries

Each round times every case once with NumPy and once with bench_fft (a texpr program kept running as a
subprocess), each the best of the case's repetitions after one untimed call; the table shows the median over
rounds and the ratio texpr / NumPy (below 1: texpr is faster). Both sides run one thread and return a new
output (np.fft allocates its result; bench_fft writes a preallocated one, its scratch reused between calls).
--libraries adds FFTW3 (GPL, FFTW_MEASURE plans), Eigen's FFT module (its kissfft backend) and KissFFT (float) as
extra columns when installed (Debian: libfftw3-dev, libeigen3-dev, libkissfft-dev): a measurement only, never a
texpr dependency. Run it with another Python (e.g. one with NumPy 2, whose np.fft is PocketFFT's C++ version) to
compare against that NumPy.
"""
import argparse
import os
import statistics
import subprocess
import sys
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# (label, bench_fft case, numpy function of a prepared input, input maker, repetitions)
CASES = [
    ("fft c128 2^10", "c2c double 1024", np.fft.fft, lambda: cplx(1 << 10), 2000),
    ("fft c128 2^16", "c2c double 65536", np.fft.fft, lambda: cplx(1 << 16), 50),
    ("fft c128 2^20", "c2c double 1048576", np.fft.fft, lambda: cplx(1 << 20), 5),
    ("fft c128 65537 (prime)", "c2c double 65537", np.fft.fft, lambda: cplx(65537), 20),
    ("fft c128 100003 (prime)", "c2c double 100003", np.fft.fft, lambda: cplx(100003), 10),
    ("fft c128 1000 (2^3 5^3)", "c2c double 1000", np.fft.fft, lambda: cplx(1000), 2000),
    ("rfft f64 2^20", "r2c double 1048576", np.fft.rfft, lambda: real(1 << 20), 5),
    ("irfft f64 2^20", "c2r double 1048576", lambda y: np.fft.irfft(y, 1 << 20), lambda: cplx((1 << 19) + 1), 5),
    ("fft2 c128 1024x1024", "fft2 double 1024 1024", np.fft.fft2, lambda: cplx(1 << 20).reshape(1024, 1024), 3),
]
EXTRA = [  # texpr's other column strategy, and texpr's float transforms (NumPy 1.x computes float32 in double)
    ("fft2 c128 1024x1024, columns as one interleaved batch", "fft2_inplace_columns double 1024 1024", np.fft.fft2,
     lambda: cplx(1 << 20).reshape(1024, 1024), 3),
    ("fft c64 2^20 (NumPy 1.x: in double)", "c2c float 1048576", np.fft.fft, lambda: cplx(1 << 20).astype(np.complex64), 5),
    ("fft c64 65537 (NumPy 1.x: in double)", "c2c float 65537", np.fft.fft, lambda: cplx(65537).astype(np.complex64), 5),
]


def cplx(n):
    rng = np.random.default_rng(n)
    return rng.standard_normal(n) + 1j * rng.standard_normal(n)


def real(n):
    return np.random.default_rng(n).standard_normal(n)


def build(args):
    out_dir = args.build_dir
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, "bench_fft")
    cmd = [args.cxx, "-std=c++20", "-O3", "-DNDEBUG", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
           f"-I{ROOT}/include", os.path.join(HERE, "bench_fft.cpp"), "-o", exe]
    if args.native:
        cmd.insert(1, "-march=native")
    libraries = []
    if args.libraries:
        if os.path.exists("/usr/include/fftw3.h"):
            cmd += ["-DTEXPR_BENCH_FFTW", "-lfftw3"]
            libraries.append("fftw")
        if os.path.exists("/usr/include/eigen3/unsupported/Eigen/FFT"):
            cmd += ["-DTEXPR_BENCH_EIGEN", "-isystem", "/usr/include/eigen3"]
            libraries.append("eigen")
        if os.path.exists("/usr/include/kissfft/kiss_fft.h"):
            cmd += ["-DTEXPR_BENCH_KISSFFT", "-lkissfft-float"]
            libraries.append("kissfft")
    print("build:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    return exe, libraries


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cxx", default="clang++")
    parser.add_argument("--native", action="store_true", help="compile texpr's side with -march=native")
    parser.add_argument("--libraries", action="store_true", help="add FFTW3 and Eigen columns where installed")
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench-fft"))
    args = parser.parse_args()
    exe, libraries = build(args)
    proc = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def texpr_time(case, reps):
        proc.stdin.write(f"{case} {reps}\n")
        proc.stdin.flush()
        return float(proc.stdout.readline())

    cases = CASES + EXTRA
    inputs = {label: make() for label, _, _, make, _ in cases}
    times = {label: {"numpy": [], "texpr": [], **{lib: [] for lib in libraries}} for label, *_ in cases}
    for _ in range(args.rounds):
        for label, case, fn, _, reps in cases:
            x = inputs[label]
            fn(x)  # NumPy builds and caches its plan on the first call, as bench_fft does
            times[label]["numpy"].append(min(timeit.repeat(lambda: fn(x), number=1, repeat=reps)))
            times[label]["texpr"].append(texpr_time(case, reps))
            name, dtype, *sizes = case.split()
            for lib in libraries:
                # FFTW and Eigen: complex double; KissFFT: complex float (Debian packages its float build only);
                # Eigen and KissFFT only at powers of two (their generic radix is O(n^2): minutes at 100003)
                pow2 = (int(sizes[0]) & (int(sizes[0]) - 1)) == 0 if name == "c2c" else False
                wanted = {"fftw": name == "c2c" and dtype == "double", "eigen": pow2 and dtype == "double",
                          "kissfft": pow2 and dtype == "float"}[lib]
                if wanted:
                    times[label][lib].append(texpr_time(f"{lib}_c2c {dtype} {sizes[0]}", max(1, reps // 2)))
    proc.stdin.close()
    proc.wait()

    header = "| case | NumPy ms | texpr ms | texpr / NumPy |" + "".join(f" {lib} ms |" for lib in libraries)
    print(f"NumPy {np.__version__}, {args.cxx}{' -march=native' if args.native else ''} -O3, median of "
          f"{args.rounds} rounds (each the best of the case's repetitions)\n")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for label, *_ in cases:
        t = times[label]
        numpy_ms, texpr_ms = statistics.median(t["numpy"]) * 1e3, statistics.median(t["texpr"]) * 1e3
        row = f"| {label} | {numpy_ms:.3f} | {texpr_ms:.3f} | {texpr_ms / numpy_ms:.2f}x |"
        for lib in libraries:
            row += f" {statistics.median(t[lib]) * 1e3:.3f} |" if t[lib] else " - |"
        print(row)


if __name__ == "__main__":
    main()
