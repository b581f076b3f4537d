#!/usr/bin/env bash
# Compile-time case (6): the MLP forward pass as one translation unit, texpr vs Eigen Tensor, g++ -O2.
# Prints wall seconds and peak memory (from /usr/bin/time -v), best of N runs (default 3).
# Usage: bench/compile_time.sh [compiler] [runs]   (run from the repository root or anywhere)
set -euo pipefail
cxx="${1:-g++}"
runs="${2:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
eigen_dir="$(dirname "$(find /usr/include /usr/local/include -maxdepth 2 -name Eigen -path '*eigen3*' -print -quit 2>/dev/null)")"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

measure() {  # name source extra-flags...
  local name="$1" src="$2"
  shift 2
  local best_wall="" best_mem=""
  for ((i = 0; i < runs; ++i)); do
    /usr/bin/time -v "$cxx" -std=c++20 -O2 "$@" -c "$src" -o "$out/$name.o" 2> "$out/$name.time"
    local wall mem
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (k = 1; k <= n; ++k) s = s * 60 + t[k]; print s}' "$out/$name.time")
    mem=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$out/$name.time")
    if [[ -z "$best_wall" ]] || awk -v a="$wall" -v b="$best_wall" 'BEGIN {exit !(a < b)}'; then best_wall="$wall"; fi
    if [[ -z "$best_mem" || "$mem" -lt "$best_mem" ]]; then best_mem="$mem"; fi
  done
  printf '| %s | %.2f | %.0f |\n' "$name" "$best_wall" "$(awk -v k="$best_mem" 'BEGIN {print k / 1024}')"
  echo "$best_wall" > "$out/$name.wall"
}

echo "## Compile time of the MLP forward pass (one TU, $("$cxx" --version | head -1), -O2, best of $runs)"
echo
echo "| library | wall seconds | peak memory (MB) |"
echo "|---|---|---|"
measure texpr "$root/bench/compile/mlp_texpr.cpp" -I"$root/include"
measure eigen_tensor "$root/bench/compile/mlp_eigen.cpp" -isystem "$eigen_dir"
ratio=$(awk -v a="$(cat "$out/texpr.wall")" -v b="$(cat "$out/eigen_tensor.wall")" 'BEGIN {printf "%.2f", a / b}')
echo
echo "texpr / Eigen Tensor compile time: ${ratio} (target: at most 0.50)"
