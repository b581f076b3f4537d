#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# examples/cnn's training step against the same network in PyTorch (CPU, oneDNN's convolutions), interleaved: for
# each round and thread count, texpr's program and PyTorch's script run back to back, each in a fresh process pinned
# to as many CPUs as threads, and report their median step after the first 10. Prints texpr / PyTorch per thread
# count (below 1: texpr is faster). Uses the venv of bench/peers/run.sh (or PEER_VENV).
#
#   bench/cnn/run.sh [ROUNDS] [EPOCHS]      (default 3 rounds of 3 epochs, 44 steps each)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=${1:-3}
epochs=${2:-3}
venv="${PEER_VENV:-$root/build/peers-venv}"
py="$venv/bin/python"
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "bench/cnn/run.sh: no PyTorch in $venv; run bench/peers/run.sh once (it makes the venv) or set PEER_VENV" >&2
  exit 2
fi
sp=$("$py" -c "import site; print(site.getsitepackages()[0])")
export LD_LIBRARY_PATH="$sp/nvidia/cu13/lib:$sp/nvidia/nvshmem/lib:$sp/nvidia/nccl/lib:/usr/local/cuda/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out="$root/build/cnn-bench"
mkdir -p "$out"
npz="$root/examples/cnn/digits.npz"
g++ -std=c++20 -O3 -march=native -DNDEBUG -I"$root/include" "-DTEXPR_DIGITS_NPZ=\"$npz\"" "$root/examples/cnn/cnn.cpp" \
  -o "$out/cnn" -pthread
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A t
for ((r = 0; r < rounds; ++r)); do
  for threads in 1 2; do
    cpus=$((threads - 1))
    ta=$(TEXPR_NUM_THREADS=$threads taskset -c 0-$cpus "$out/cnn" --epochs "$epochs" --target-percent 0 | awk '/^median step/ {print $3}')
    tb=$(OMP_NUM_THREADS=$threads taskset -c 0-$cpus "$py" "$root/bench/cnn/torch_cnn.py" "$npz" "$epochs" "$threads" |
         awk '/^median step/ {print $3}')
    t[$threads,texpr]+="$ta "
    t[$threads,torch]+="$tb "
  done
  echo "round $((r + 1)) of $rounds done" >&2
done
echo "examples/cnn's step (batch 32), medians of $rounds interleaved rounds of $epochs epochs, ms; $(date +%F)"
echo
echo "| threads | texpr | PyTorch | texpr / PyTorch |"
echo "|---|---|---|---|"
for threads in 1 2; do
  a=$(echo "${t[$threads,texpr]}" | tr ' ' '\n' | grep -v '^$' | median)
  b=$(echo "${t[$threads,torch]}" | tr ' ' '\n' | grep -v '^$' | median)
  awk -v n="$threads" -v a="$a" -v b="$b" 'BEGIN {printf "| %s | %.3f | %.3f | %.2f |\n", n, a, b, a / b}'
done
