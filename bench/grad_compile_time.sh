#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compile time of tx::grad (issue 17's measurement): each case of bench/compile/grad_*.cpp compiled forward only
# (-DTEXPR_BENCH_GRAD=0) and as a training step with tx::value_and_grad (=1), with g++ and clang++ at -O2. Prints
# user+system CPU seconds, best of N runs (default 3), and the ratios the targets are stated in.
# Usage: bench/grad_compile_time.sh [runs]
set -euo pipefail
runs="${1:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

cpu() {  # compiler source grad -> best CPU seconds
  local best=""
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -f '%U %S' -o "$out/t" "$1" -std=c++20 -O2 -I"$root/include" -DTEXPR_BENCH_GRAD="$3" -c "$2" -o "$out/x.o"
    local s
    s=$(awk '{print $1 + $2}' "$out/t")
    if [[ -z "$best" ]] || awk -v a="$s" -v b="$best" 'BEGIN {exit !(a < b)}'; then best="$s"; fi
  done
  echo "$best"
}

echo "## Compile time of tx::grad (CPU seconds, -O2, best of $runs)"
echo
echo "| case | compiler | forward only | value_and_grad step | step / forward |"
echo "|---|---|---|---|---|"
for src in "$root"/bench/compile/grad_*.cpp; do
  name=$(basename "$src" .cpp)
  for cxx in g++ clang++; do
    f=$(cpu "$cxx" "$src" 0)
    g=$(cpu "$cxx" "$src" 1)
    echo "$g" > "$out/$name.$cxx"
    printf '| %s | %s | %.2f | %.2f | %.2f |\n' "$name" "$cxx" "$f" "$g" "$(awk -v a="$g" -v b="$f" 'BEGIN {print a / b}')"
  done
  printf '| %s | clang++ / g++ (step) | | | %.2f |\n' "$name" "$(awk -v a="$(cat "$out/$name.clang++")" -v b="$(cat "$out/$name.g++")" 'BEGIN {print a / b}')"
done
echo
echo "Targets: step / forward at most 1.5 on g++; clang++ / g++ at most 1.5."
