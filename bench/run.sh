#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds texpr's host benchmark suite (build/bench: Release, -march=native, no tests/examples/CUDA), runs
# it and prints the table, then the compile-time comparison. Extra arguments go to bench_host (Google
# Benchmark flags, e.g. --benchmark_filter=matmul). Takes about 5 minutes on a 2-core machine after a
# ~2 minute build. JOBS sets the build parallelism (default 2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cmake -S "$root" -B "$root/build/bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTEXPR_BUILD_BENCH=ON \
  -DTEXPR_BUILD_TESTS=OFF -DTEXPR_BUILD_EXAMPLES=OFF -DTEXPR_ENABLE_CUDA=OFF > /dev/null
cmake --build "$root/build/bench" -j "${JOBS:-2}"
build="$root/build/bench/bench"
"$build/bench_host" "$@" 2>&1 | tee "$root/build/bench/bench_host.txt"
for exe in "$build"/bench_*; do
  [[ -x "$exe" && "$(basename "$exe")" != bench_host ]] && "$exe"
done
echo
"$root/bench/compile_time.sh" 3
