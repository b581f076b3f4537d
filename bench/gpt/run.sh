#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# examples/gpt's training step against the same model in PyTorch and in JAX (CPU; JAX's whole step under jax.jit),
# interleaved: for each round, configuration and thread count, texpr's program and the peers' scripts run back to
# back, each in a fresh process pinned to as many CPUs as threads, and report their median step after the first 10.
# Prints texpr / PyTorch and texpr / JAX per case (below 1: texpr is faster). Uses the venv of bench/peers/run.sh
# (run that once first, or set PEER_VENV); JAX's column is left out when the venv has no jax.
#
#   bench/gpt/run.sh [ROUNDS] [STEPS]      (default 3 rounds of 60 steps; GPT_BENCH_BUILD=0 reuses the programs)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=${1:-3}
steps=${2:-60}
venv="${PEER_VENV:-$root/build/peers-venv}"
py="$venv/bin/python"
if ! "$py" -c "import torch" 2>/dev/null; then
  echo "bench/gpt/run.sh: no PyTorch in $venv; run bench/peers/run.sh once (it makes the venv) or set PEER_VENV" >&2
  exit 2
fi
sp=$("$py" -c "import site; print(site.getsitepackages()[0])")
export LD_LIBRARY_PATH="$sp/nvidia/cu13/lib:$sp/nvidia/nvshmem/lib:$sp/nvidia/nccl/lib:/usr/local/cuda/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out="$root/build/gpt-bench"
mkdir -p "$out"
text="$root/examples/gpt/genesis.txt"
# name: layers heads width context
configs=()
for c in "small:2 4 64 32" "large:6 6 384 256"; do  # GPT_BENCH_CONFIGS="small" runs the small one only
  [[ " ${GPT_BENCH_CONFIGS:-small large} " == *" ${c%%:*} "* ]] && configs+=("$c")
done
for c in "${configs[@]}"; do
  name=${c%%:*}
  read -r l h w ctx <<<"${c#*:}"
  # GPT_BENCH_BUILD=0 reuses the programs of an earlier run (the 6-layer one takes g++ minutes: its graph is one type)
  if [[ ${GPT_BENCH_BUILD:-1} == 0 && -x "$out/gpt_$name" ]]; then continue; fi
  g++ -std=c++20 -O3 -march=native -DNDEBUG -I"$root/include" -DTEXPR_GPT_LAYERS="$l" -DTEXPR_GPT_HEADS="$h" \
    -DTEXPR_GPT_WIDTH="$w" -DTEXPR_GPT_CONTEXT="$ctx" "-DTEXPR_GPT_TEXT=\"$text\"" "$root/examples/gpt/gpt.cpp" \
    -o "$out/gpt_$name" -pthread
done
have_jax=0
if "$py" -c "import jax" 2>/dev/null; then have_jax=1; fi
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A t mem
for ((r = 0; r < rounds; ++r)); do
  for c in "${configs[@]}"; do
    name=${c%%:*}
    read -r l h w ctx <<<"${c#*:}"
    for threads in 1 2; do
      cpus=$((threads - 1))
      ta=$(TEXPR_NUM_THREADS=$threads taskset -c 0-$cpus "$out/gpt_$name" --steps "$steps" --print-every 100000)
      tb=$(OMP_NUM_THREADS=$threads taskset -c 0-$cpus "$py" "$root/bench/gpt/torch_gpt.py" "$text" "$steps" "$threads" "$l" "$w" "$ctx" 8)
      a=$(awk '/median step/ {print $3}' <<<"$ta")
      b=$(awk '/median step/ {print $3}' <<<"$tb")
      mem[$name.texpr]=$(awk '/step memory/ {print $4}' <<<"$ta")  # (MiB; the same every round)
      mem[$name.torch]=$(awk '/step memory/ {print $4}' <<<"$tb")
      t[$name.$threads.texpr]+="$a "
      t[$name.$threads.torch]+="$b "
      if ((have_jax)); then
        j=$(taskset -c 0-$cpus "$py" "$root/bench/gpt/jax_gpt.py" "$text" "$steps" "$threads" "$l" "$w" "$ctx" 8 |
          awk '/median step/ {print $3}')
        t[$name.$threads.jax]+="$j "
      fi
    done
  done
done
peers="$("$py" -c 'import torch; print("PyTorch", torch.__version__)')"
if ((have_jax)); then peers="$peers, $("$py" -c 'import jax; print("JAX", jax.__version__)')"; fi
echo "$peers, $rounds rounds of $steps steps, medians (ms per step)"
printf "%-8s %-8s %10s %10s %10s %12s %10s\n" config threads texpr torch jax texpr/torch texpr/jax
for c in "${configs[@]}"; do
  name=${c%%:*}
  for threads in 1 2; do
    a=$(tr ' ' '\n' <<<"${t[$name.$threads.texpr]}" | grep . | median)
    b=$(tr ' ' '\n' <<<"${t[$name.$threads.torch]}" | grep . | median)
    j=-
    if ((have_jax)); then j=$(tr ' ' '\n' <<<"${t[$name.$threads.jax]}" | grep . | median); fi
    printf "%-8s %-8s %10s %10s %10s %12.2f %10s\n" "$name" "$threads" "$a" "$b" "$j" \
      "$(awk -v a="$a" -v b="$b" 'BEGIN {print a / b}')" \
      "$(if [[ $j == - ]]; then echo -; else awk -v a="$a" -v b="$j" 'BEGIN {printf "%.2f", a / b}'; fi)"
  done
done
echo
echo "Peak memory of a step's forward and backward (MiB): texpr's tx::kernel_log::peak_bytes, PyTorch's allocations"
echo "through torch.profiler (profile_memory), each from the step's start"
for c in "${configs[@]}"; do
  name=${c%%:*}
  echo "$name: texpr ${mem[$name.texpr]:-?}, PyTorch ${mem[$name.torch]:-?}"
done
