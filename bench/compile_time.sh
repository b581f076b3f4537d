#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compile time, side by side in one run: CPU seconds (user + system) and peak memory of one translation unit each,
#   forward          bench/compile/mlp_texpr.cpp  the MLP forward pass (784-256-256-10 ELU)
#   step             bench/compile/mlp_step.cpp   examples/mlp's training step: value_and_grad + eval_all + SGD
#   step, compiled   the same with TEXPR_COMPILED_KERNELS (the GEMM family compiled once elsewhere)
#   Eigen forward    bench/compile/mlp_eigen.cpp  the forward pass with Eigen Tensor
# with g++ and clang++ at -O2, and with nvcc (when present) examples/mlp/mlp.cu, the CUDA example (step and loop).
# Best of N runs (default 1). Prints a Markdown table and the ratios the compile-time targets are stated in.
# Usage: bench/compile_time.sh [runs]
set -euo pipefail
runs="${1:-1}"
[[ "$runs" =~ ^[0-9]+$ ]] || { echo "usage: bench/compile_time.sh [runs]" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
eigen_dir="$(dirname "$(find /usr/include /usr/local/include -maxdepth 2 -name Eigen -path '*eigen3*' -print -quit 2>/dev/null)")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

measure() {  # compiler source flags... -> "cpu_seconds peak_mb" (best of $runs)
  local cxx="$1" src="$2"
  shift 2
  local best="" mem=""
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -f '%U %S %M' -o "$out/t" "$cxx" "$@" -c "$src" -o "$out/x.o"
    local s m
    s=$(awk '{print $1 + $2}' "$out/t")
    m=$(awk '{printf "%.0f", $3 / 1024}' "$out/t")
    if [[ -z "$best" ]] || awk -v a="$s" -v b="$best" 'BEGIN {exit !(a < b)}'; then best="$s"; mem="$m"; fi
  done
  echo "$best $mem"
}

echo "## Compile time (CPU seconds and peak MB per translation unit, -O2, best of $runs)"
echo
echo "| compiler | forward | step | step, compiled mode | Eigen Tensor forward | forward / Eigen | step / forward |"
echo "|---|---|---|---|---|---|---|"
for cxx in g++ clang++; do
  command -v "$cxx" >/dev/null || continue
  common=(-std=c++20 -O2 -I"$root/include")
  read -r f fm <<<"$(measure "$cxx" "$root/bench/compile/mlp_texpr.cpp" "${common[@]}")"
  read -r s sm <<<"$(measure "$cxx" "$root/bench/compile/mlp_step.cpp" "${common[@]}")"
  read -r c cm <<<"$(measure "$cxx" "$root/bench/compile/mlp_step.cpp" "${common[@]}" -DTEXPR_COMPILED_KERNELS)"
  if [[ -n "$eigen_dir" ]]; then
    read -r e em <<<"$(measure "$cxx" "$root/bench/compile/mlp_eigen.cpp" -std=c++20 -O2 -isystem "$eigen_dir")"
    ratio=$(awk -v a="$f" -v b="$e" 'BEGIN {printf "%.2f", a / b}')
    eigen="$e s, $em MB"
  else
    ratio="—"
    eigen="no Eigen"
  fi
  printf '| %s | %s s, %s MB | %s s, %s MB | %s s, %s MB | %s | %s | %.2f |\n' "$cxx" "$f" "$fm" "$s" "$sm" "$c" "$cm" "$eigen" "$ratio" \
    "$(awk -v a="$s" -v b="$f" 'BEGIN {print a / b}')"
done
if command -v nvcc >/dev/null; then
  read -r n nm <<<"$(measure nvcc "$root/examples/mlp/mlp.cu" -std=c++20 -O2 --expt-relaxed-constexpr -arch=sm_90 -I"$root/include")"
  echo
  echo "nvcc, examples/mlp/mlp.cu (the CUDA example: step and loop, sm_90): $n s, $nm MB"
fi
echo
echo "Targets: the step TU at most 6 s on g++ and 20 s under nvcc; the forward TU at most 0.5x Eigen Tensor's."
