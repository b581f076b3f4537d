#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# texpr against NumPy, PyTorch (CPU) and JAX (XLA:CPU, jit) on the same inputs, interleaved: for each round, case
# and thread count, texpr and the three peers run back to back, each in a fresh process (median of its
# repetitions). Prints the table of ratios (texpr time / peer time: below 1, texpr is faster) and checks that all
# compute the same numbers. Optional in CI: the venv is about 1.5 GB.
#
#   bench/peers/run.sh [ROUNDS]         (default 3; venv in build/peers-venv or $PEER_VENV, inputs in build/peers;
#                                        PEER_CASES="matmul sgd_step" for a subset of the cases)
#
# PyTorch's PyPI wheel is a CUDA build: it is installed with --no-deps plus only the libraries its .so files load
# (cuSPARSELt, NVSHMEM, cuFile, NCCL wheels); the CUDA runtime and cuBLAS come from the CUDA toolkit
# (/usr/local/cuda/lib), as on this machine. Nothing runs on a GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds=${1:-3}
venv="${PEER_VENV:-$root/build/peers-venv}"  # PEER_VENV: an existing venv to reuse
data="$root/build/peers"
py="$venv/bin/python"
mkdir -p "$data"

if [[ ! -x "$py" ]] || ! "$py" -c "import numpy, jax" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy jax jaxlib
  "$venv/bin/pip" install -q --no-deps torch nvidia-cusparselt-cu13 nvidia-nvshmem-cu13 nvidia-cufile nvidia-nccl-cu13
  "$venv/bin/pip" install -q filelock typing_extensions sympy networkx jinja2 fsspec
fi
sp=$("$py" -c "import site; print(site.getsitepackages()[0])")
export LD_LIBRARY_PATH="$sp/nvidia/cu13/lib:$sp/nvidia/nvshmem/lib:$sp/nvidia/nccl/lib:/usr/local/cuda/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
versions=$("$py" -c "import numpy, torch, jax; print(f'NumPy {numpy.__version__}, PyTorch {torch.__version__}, JAX {jax.__version__}')")

exe="$root/build/peers/texpr_peer"
g++ -std=c++20 -O3 -march=native -DNDEBUG -I"$root/include" "$root/bench/peers/texpr_peer.cpp" -o "$exe" -pthread -llapack
[[ -f "$data/gw1.npy" ]] || "$py" "$root/bench/peers/peers.py" make "$data"
[[ -f "$data/tk.npy" ]] || "$py" "$root/bench/peers/peers.py" make_family "$data"
[[ -f "$data/ba.npy" ]] || "$py" "$root/bench/peers/peers.py" make_linalg "$data"
[[ -f "$data/cg1.npy" ]] || "$py" "$root/bench/peers/peers.py" make_conv "$data"

# PEER_CASES="matmul sgd_step" bench/peers/run.sh 3 runs a subset; PEER_CASES=family the scans, sorts, top-k and einsum.
family="copy_flat cumsum_flat cumsum_axis0 cumsum_axis1 sort_flat argsort_flat sort_rows argsort_rows topk einsum_bmm bmm"
selected=${PEER_CASES:-fused_sum mean_axis1 elu_chain matmul mlp_forward sgd_step adam_step softmax cross_entropy}
[[ $selected == family ]] && selected=$family
[[ $selected == linalg ]] && selected="cholesky_256 cholesky_1024 solve_256 solve_1024 solve_batched"
# PEER_CASES=conv: ResNet-style convolutions, forward and forward + both gradients (NumPy has none: its column is -).
[[ $selected == conv ]] && selected="conv3x3_64_56 conv3x3_64_56_train conv3x3_128_28 conv3x3_128_28_train conv1x1_256_56 conv1x1_256_56_train"
read -r -a cases <<<"$selected"
libs=(texpr numpy torch jax)
declare -A times
# On 1 thread every process is also pinned to one CPU: thread-count settings are requests, and XLA's CPU runtime
# ran its "1 thread" matmul at 205 GFLOP/s here, above one Zen 4 core's peak, so it used more than one core.
pin=()
if command -v taskset >/dev/null; then pin=(taskset -c 0); fi
time_one() {  # lib case threads -> median ms
  local lib=$1 case=$2 t=$3
  local p=()
  [[ $t == 1 ]] && p=("${pin[@]}")
  if [[ $lib == texpr ]]; then
    OPENBLAS_NUM_THREADS=$t "${p[@]}" "$exe" "$case" "$t" "$data"  # (texpr's LAPACK is Debian's OpenBLAS)
  elif [[ $lib == jax ]]; then
    local flags="--xla_force_host_platform_device_count=1"
    [[ $t == 1 ]] && flags="$flags --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    XLA_FLAGS="$flags" OMP_NUM_THREADS=$t "${p[@]}" "$py" "$root/bench/peers/peers.py" run jax "$case" "$t" "$data"
  else
    OPENBLAS_NUM_THREADS=$t OMP_NUM_THREADS=$t MKL_NUM_THREADS=$t "${p[@]}" "$py" "$root/bench/peers/peers.py" run "$lib" "$case" "$t" "$data"
  fi | awk '/^median_ms/ {print $2}'
}
for ((r = 0; r < rounds; r++)); do
  for c in "${cases[@]}"; do
    for t in 1 2; do
      for lib in "${libs[@]}"; do
        [[ $lib == numpy && $c == conv* ]] && continue  # NumPy has no convolution
        times[$c,$t,$lib]+="$(time_one "$lib" "$c" "$t") "
      done
    done
  done
  echo "round $((r + 1)) of $rounds done" >&2
done

median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; $(date +%F). $versions."
echo "Medians over $rounds interleaved rounds (each the median of its own repetitions), ms. Ratio = texpr / peer (below 1: texpr faster)."
echo
echo "| case | threads | texpr | NumPy | PyTorch | JAX jit | vs NumPy | vs PyTorch | vs JAX |"
echo "|---|---|---|---|---|---|---|---|---|"
for c in "${cases[@]}"; do
  for t in 1 2; do
    declare -A m
    for lib in "${libs[@]}"; do m[$lib]=$(echo "${times[$c,$t,$lib]:-}" | median); done
    awk -v c="$c" -v t="$t" -v a="${m[texpr]}" -v n="${m[numpy]}" -v p="${m[torch]}" -v j="${m[jax]}" \
      'BEGIN {
         if (n == "") printf "| %s | %s | %.3f | - | %.3f | %.3f | - | %.2f | %.2f |\n", c, t, a, p, j, a/p, a/j
         else printf "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |\n", c, t, a, n, p, j, a/n, a/p, a/j
       }'
  done
done
echo
"$py" "$root/bench/peers/peers.py" check "$data" "${cases[@]}"
