#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds (sm_90) and runs every CUDA test (tests/cuda and the interop program), the CUDA examples (placement, MLP
# training), compute-sanitizer (memcheck over the whole test program; racecheck and synccheck over the kernels with
# shared memory or a last-block ticket; initcheck over the step and capture tests), the GPU benchmarks (texpr eager and captured
# into a CUDA graph) and the PyTorch comparison (eager, CUDA graph, torch.compile when Triton is there: its
# autotuning is most of that step's time; TEXPR_TORCH_COMPILE=0 skips it), in under 9 minutes on one H200 with no
# network.
#
# Prepare here:    bash tests/gpu/prepare.sh --build  (copies doctest.h, and dlpack.h if installed, into the
#                                                     git-ignored .gpu-carry/, and builds the programs there;
#                                                     without --build, they are built on the GPU machine)
# Device-tool call: run with carry [".gpu-carry"] and command `bash tests/gpu/run.sh` (timeout_s 540)
#
# The log goes to $OUT/gpu.log when $OUT is set (the device tool returns it), else build/gpu/gpu.log.
# Exit status: 0 when every step passed, else the number of failed steps.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/gpu"
logdir="${OUT:-$build}"
mkdir -p "$build" "$logdir"
log="$logdir/gpu.log"
exec > >(tee "$log") 2>&1
jobs=$(nproc 2>/dev/null || echo 8)
failed=0
start=$(date +%s)

step() {  # step NAME TIMEOUT_S COMMAND...: runs one step, logs its status and time, counts failures
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  echo "=== $name"
  timeout "$limit" "$@"
  local rc=$?
  echo "=== $name: rc=$rc ($(( $(date +%s) - t0 )) s)"
  if [ "$rc" -ne 0 ]; then failed=$((failed + 1)); fi
  return 0
}

echo "texpr GPU run: $(date -u) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
nvcc --version | tail -1
if [ ! -f "$root/.gpu-carry/doctest/doctest.h" ]; then
  echo "missing .gpu-carry/doctest/doctest.h: run tests/gpu/prepare.sh and pass carry [\".gpu-carry\"]"
  exit 1
fi

# Lazy module loading (CUDA 12+'s default) loads a kernel's module at its first launch, which can wait behind
# a kernel already running: the "user streams" test enqueues work behind a spinning kernel and times the
# enqueueing, so every module is loaded when the program starts instead.
export CUDA_MODULE_LOADING=EAGER

# DLPack's header, when prepare.sh found one to carry (the interop program's kDLCUDA cases need it).
dlpack_dir=""
if [ -f "$root/.gpu-carry/dlpack/dlpack.h" ]; then dlpack_dir="$root/.gpu-carry"; fi

# Programs built ahead on the development machine (tests/gpu/prepare.sh --build) travel in .gpu-carry/bin and save
# the device minutes of building here; when they cannot start on this machine's libraries, everything is built here.
bin="$build"
pre="$root/.gpu-carry/bin"
# The toolkit's libraries (cudart, cuBLAS) under either name the toolkit's lib folder goes by.
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -x "$pre/tests/cuda/texpr_cuda_tests" ] && "$pre/tests/cuda/texpr_cuda_tests" --list-test-cases >/dev/null 2>&1; then
  echo "=== using the programs built ahead in .gpu-carry/bin ($(cat "$pre/BUILT" 2>/dev/null))"
  bin="$pre"
else
  if [ -d "$pre" ]; then
    echo "=== the programs in .gpu-carry/bin do not start here; building them"
    ldd "$pre/tests/cuda/texpr_cuda_tests" 2>&1 | grep "not found" || true
  fi
  step configure 120 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTEXPR_DOCTEST_INCLUDE_DIR="$root/.gpu-carry" -DTEXPR_BUILD_EXAMPLES=ON -DTEXPR_BUILD_GPU_BENCH=ON \
    ${dlpack_dir:+-DTEXPR_DLPACK_INCLUDE="$dlpack_dir"}
  # The NCCL program exists when nccl.h and libnccl were found (tests/dist/CMakeLists.txt).
  nccl_target=""
  if ninja -C "$build" -t targets all 2>/dev/null | grep -q "^texpr_dist_nccl_tests:"; then nccl_target=texpr_dist_nccl_tests; fi
  step build 330 cmake --build "$build" -j"$jobs" --target texpr_cuda_tests texpr_interop_cuda_tests $nccl_target cuda_placement mlp_cuda texpr_gpu_bench
fi
step tests 240 "$bin/tests/cuda/texpr_cuda_tests" --duration=true
step interop 60 "$bin/tests/interop/texpr_interop_cuda_tests"
if [ -x "$bin/tests/dist/texpr_dist_nccl_tests" ]; then
  step nccl 60 "$bin/tests/dist/texpr_dist_nccl_tests"
else
  echo "=== nccl: no NCCL program (nccl.h or libnccl not found when it was configured), skipped"
fi
step example 60 "$bin/examples/cuda/cuda_placement"
step mlp 90 "$bin/examples/mlp/mlp_cuda" --steps 150 --print-every 50
step mlp-captured 90 "$bin/examples/mlp/mlp_cuda" --steps 150 --print-every 50 --capture 1
step bench 120 bash -c "set -o pipefail; '$bin/bench/gpu/texpr_gpu_bench' | tee '$logdir/bench.txt'"
step torch-compare 240 python3 "$root/bench/gpu/torch_compare.py" "$logdir/bench.txt"

# Last: the sanitizers, the slowest steps and the ones a short device lease can best do without
# (TEXPR_GPU_SANITIZERS=0 skips them).
if [ "${TEXPR_GPU_SANITIZERS:-1}" = 0 ]; then
  echo "=== sanitizers: skipped (TEXPR_GPU_SANITIZERS=0)"
elif command -v compute-sanitizer >/dev/null 2>&1; then
  cs="compute-sanitizer --error-exitcode 1"
  # Block reductions, column tiles, column sums finished by the last block, row cross-entropy and its gradient,
  # the multi-tensor optimiser step, and the ticket test (300 reductions in a row, 40 replays).
  shared="last-axis reductions*,non-last-axis reductions*,cross_entropy*,bias gradients*,optimisers on the device*"
  shared="$shared,last-block tickets*,a captured step*"
  step racecheck 120 $cs --tool racecheck --racecheck-report hazard "$bin/tests/cuda/texpr_cuda_tests" --test-case="$shared"
  step synccheck 90 $cs --tool synccheck "$bin/tests/cuda/texpr_cuda_tests" --test-case="$shared"
  step initcheck 90 $cs --tool initcheck "$bin/tests/cuda/texpr_cuda_tests" \
    --test-case="a captured step*,optimisers on the device*,last-block tickets*,user streams*"
  step memcheck 240 $cs --tool memcheck "$bin/tests/cuda/texpr_cuda_tests"
else
  echo "=== sanitizers: compute-sanitizer not found, skipped"
fi
echo "=== done in $(( $(date +%s) - start )) s, $failed failed step(s)"
exit "$failed"
