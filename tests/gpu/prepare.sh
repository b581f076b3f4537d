#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Run on the development machine before tests/gpu/run.sh goes to a GPU machine: the GPU machine has no
# doctest package, so its header travels in the git-ignored .gpu-carry/ (pass carry [".gpu-carry"]).
#
#   bash tests/gpu/prepare.sh           copy the headers only; run.sh then builds on the GPU machine (about 5 of
#                                       its 8 minutes on 16 cores)
#   bash tests/gpu/prepare.sh --build   also build every CUDA program here (sm_90, no GPU needed; 15-25 minutes
#                                       on 2 cores) into .gpu-carry/bin, so the device minutes go to running them;
#                                       run.sh falls back to building there when these do not start
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${DOCTEST_HEADER:-/usr/include/doctest/doctest.h}
mkdir -p "$root/.gpu-carry/doctest"
cp "$src" "$root/.gpu-carry/doctest/doctest.h"
echo "copied $src to $root/.gpu-carry/doctest/doctest.h"
# DLPack's header too, when installed here: the interop program's kDLCUDA cases are built only with it.
dlpack=${DLPACK_HEADER:-/usr/include/dlpack/dlpack.h}
dlpack_flag=()
if [ -f "$dlpack" ]; then
  mkdir -p "$root/.gpu-carry/dlpack"
  cp "$dlpack" "$root/.gpu-carry/dlpack/dlpack.h"
  echo "copied $dlpack to $root/.gpu-carry/dlpack/dlpack.h"
  dlpack_flag=(-DTEXPR_DLPACK_INCLUDE="$root/.gpu-carry")
fi
rm -rf "$root/.gpu-carry/bin"
if [ "${1:-}" != "--build" ]; then exit 0; fi

build="$root/build/gpu-pre"
programs=(tests/cuda/texpr_cuda_tests tests/interop/texpr_interop_cuda_tests examples/cuda/cuda_placement
          examples/mlp/mlp_cuda bench/gpu/texpr_gpu_bench)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DTEXPR_DOCTEST_INCLUDE_DIR="$root/.gpu-carry" -DTEXPR_BUILD_EXAMPLES=ON -DTEXPR_BUILD_GPU_BENCH=ON "${dlpack_flag[@]}"
targets=()
for p in "${programs[@]}"; do targets+=("$(basename "$p")"); done
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
for p in "${programs[@]}"; do
  mkdir -p "$root/.gpu-carry/bin/$(dirname "$p")"
  cp "$build/$p" "$root/.gpu-carry/bin/$p"
done
echo "built $(date -u +%Y-%m-%dT%H:%MZ) from $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- include tests bench examples || echo '+changes')" >"$root/.gpu-carry/bin/BUILT"
du -sh "$root/.gpu-carry"
