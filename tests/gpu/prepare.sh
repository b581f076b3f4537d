#!/usr/bin/env bash
# Run on the development machine before tests/gpu/run.sh goes to a GPU machine: the GPU machine has no
# doctest package, so its header travels in the git-ignored .gpu-carry/ (pass carry [".gpu-carry"]).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${DOCTEST_HEADER:-/usr/include/doctest/doctest.h}
mkdir -p "$root/.gpu-carry/doctest"
cp "$src" "$root/.gpu-carry/doctest/doctest.h"
echo "copied $src to $root/.gpu-carry/doctest/doctest.h"
