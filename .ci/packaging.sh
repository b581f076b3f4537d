#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Packaging CI (issue 4): proves every route users take texpr, host-only and with nvcc.
#   1. single_include/texpr/texpr.hpp is what tools/amalgamate.py generates from include/ (git diff)
#   2. a configure without nvcc works: TEXPR_ENABLE_CUDA=OFF, a CMAKE_CUDA_COMPILER that does not exist,
#      and no nvcc on PATH
#   3. the quickstart and the README samples (every README snippet) build and pass against the single header alone
#      (the core test suite is built once, in the test preset: against include/, of which the single header is
#      the checked concatenation, step 1)
#   4. tests/consumer/ via install + find_package, add_subdirectory, FetchContent and the single header,
#      with g++ and clang++ (built and run), and a .cu consumer with nvcc (compiled only) when nvcc exists
# Usage: .ci/packaging.sh   (from anywhere; build trees go to build/pkg-*; steps 3-4 are the presets
# single-header and packaging, which use 2 jobs)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v python3 >/dev/null && command -v apt-get >/dev/null; then  # tools/amalgamate.py
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null; }
fi
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
start=$SECONDS
step() { printf '\n=== [%3ds] %s\n' "$((SECONDS - start))" "$*"; }
fail() { echo "packaging.sh: FAIL: $*" >&2; exit 1; }

step "1. single header is up to date"
python3 tools/amalgamate.py
git ls-files --error-unmatch single_include/texpr/texpr.hpp >/dev/null 2>&1 ||
  fail "single_include/texpr/texpr.hpp is not committed"
git diff --exit-code --stat -- single_include/ ||
  fail "single_include/ differs from what tools/amalgamate.py generates; run it and commit the result"

step "2. configure without nvcc"
nocuda_configure() {  # name, expected output regex, cmake args...
  local name=$1 expect=$2; shift 2
  rm -rf "build/pkg-$name"
  local log
  log=$(cmake -S . -B "build/pkg-$name" "${GEN[@]}" "$@" 2>&1) || { echo "$log"; fail "configure $name"; }
  grep -Eq "$expect" <<<"$log" || { echo "$log"; fail "configure $name: no '$expect'"; }
  if compgen -G "build/pkg-$name/CMakeFiles/[0-9]*/CMakeCUDACompiler.cmake" >/dev/null; then
    fail "configure $name enabled CUDA"  # enable_language(CUDA) ran
  fi
  echo "ok: $name"
}
# The three configures are independent (about 11 s each, mostly compiler checks): run side by side.
nocuda_configure enable-cuda-off 'Build files have been written' -DTEXPR_ENABLE_CUDA=OFF &
off=$!
nocuda_configure bad-nvcc 'does not exist; ignoring it' -DCMAKE_CUDA_COMPILER=/nonexistent/nvcc &
bad=$!
nvcc_free_path=$(tr ':' '\n' <<<"$PATH" | while read -r d; do [ -x "$d/nvcc" ] || printf '%s:' "$d"; done)
PATH=${nvcc_free_path%:} CUDACXX= nocuda_configure no-nvcc-on-path 'no CUDA compiler found' &
none=$!
for job in "$off" "$bad" "$none"; do
  wait "$job" || fail "a configure without nvcc (above)"
done

step "3. quickstart and README samples against single_include/ alone (host; preset single-header)"
rm -rf build/pkg-single-header
cmake --workflow --preset single-header

step "4. consumers: install + find_package, add_subdirectory, FetchContent, single header; g++, clang++, nvcc"
rm -rf build/pkg-consumers
cmake --workflow --preset packaging
# (The listing is captured first: grep -q closing the pipe early would SIGPIPE ctest, and pipefail would
# then report a registered case as missing.)
listing=$(ctest --test-dir build/pkg-consumers -N)
if command -v nvcc >/dev/null && ! grep -q 'consumer\..*\.nvcc' <<<"$listing"; then
  fail "nvcc is on PATH but no .cu consumer case was registered"
fi

step "packaging.sh: all routes passed in $((SECONDS - start)) s"
