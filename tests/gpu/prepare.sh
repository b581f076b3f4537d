#!/usr/bin/env bash
# Run on the development machine before tests/gpu/run.sh goes to a GPU machine: the GPU machine has no
# doctest package, so its header travels in the git-ignored .gpu-carry/ (pass carry [".gpu-carry"]).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${DOCTEST_HEADER:-/usr/include/doctest/doctest.h}
mkdir -p "$root/.gpu-carry/doctest"
cp "$src" "$root/.gpu-carry/doctest/doctest.h"
echo "copied $src to $root/.gpu-carry/doctest/doctest.h"
# DLPack's header too, when installed here: the interop program's kDLCUDA cases are built only with it.
dlpack=${DLPACK_HEADER:-/usr/include/dlpack/dlpack.h}
if [ -f "$dlpack" ]; then
  mkdir -p "$root/.gpu-carry/dlpack"
  cp "$dlpack" "$root/.gpu-carry/dlpack/dlpack.h"
  echo "copied $dlpack to $root/.gpu-carry/dlpack/dlpack.h"
fi
