#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Reliability jobs that do not belong in ctest (issue 6): the libFuzzer targets over texpr's shape logic and over
# the safetensors header check, built with clang++ under ASan/UBSan and fuzzed for a bounded time, each starting
# from its committed corpus. (The corpora are also replayed by ctest as reliability.fuzz_replay and
# reliability.fuzz_safetensors_replay in every build.) Runs on 2 cores.
#   FUZZ_SECONDS   total fuzzing time (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
out=build/rel-fuzz
mkdir -p "$out/corpus"
cxx=$(command -v clang++ || command -v clang++-14 || true)
if [[ -z "$cxx" ]]; then
  echo "reliability.sh: clang++ not found (.ci/run installs the clang package)" >&2
  exit 1
fi

# -O0: CI's fuzzing is a bounded smoke run over the committed corpus, and -O1 took about 6 times as long to build
# (fuzz_shapes: about 150 s against 25 s on 2 cores) as the run it would speed up.
flags=(-std=c++20 -O0 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -Wall -Wextra -Wpedantic -Werror -Iinclude)

# libFuzzer's runtime ships in libclang-rt-<version>-dev on Debian; install it if a trivial target fails to link.
probe() {
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
    "$cxx" -x c++ - -fsanitize=fuzzer -o "$out/probe" >/dev/null 2>&1
}
if ! probe; then
  version=$("$cxx" --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  echo "reliability.sh: installing libclang-rt-${version}-dev for libFuzzer"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq "libclang-rt-${version}-dev" >/dev/null
  probe
fi

# Two targets share the time: the shape logic (two thirds) and the safetensors header check (one third).
fuzz() {  # name, seconds, max_len, corpus
  local name=$1 secs=$2 max_len=$3 corpus=$4 start status=0
  start=$(date +%s)
  mkdir -p "$out/corpus-$name"
  echo "reliability.sh: building tests/fuzz/$name.cpp with $cxx (libFuzzer, ASan, UBSan)"
  nice "$cxx" "${flags[@]}" "tests/fuzz/$name.cpp" -o "$out/$name"
  echo "reliability.sh: built in $(( $(date +%s) - start )) s; fuzzing for ${secs} s"
  # New inputs go to $out/corpus-NAME (not the committed corpus); a crash leaves its input in $out.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$out/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$out/$name-" "$out/corpus-$name" "$corpus" >"$out/$name.log" 2>&1 || status=$?
  if ((status)); then cat "$out/$name.log"; else grep -E '^(Done|stat::)' "$out/$name.log"; fi
  echo "reliability.sh: $name finished with status $status after $(( $(date +%s) - start )) s in all"
  return "$status"
}
# The two fuzzers build and run side by side (CI has 2 cores; each fuzzes one process for its own budget), their
# reports printed in turn.
fuzz fuzz_shapes $(( seconds * 2 / 3 )) 256 tests/fuzz/corpus >"$out/fuzz_shapes.report" 2>&1 &
shapes=$!
fuzz fuzz_safetensors $(( seconds - seconds * 2 / 3 )) 4096 tests/fuzz/corpus_safetensors \
  >"$out/fuzz_safetensors.report" 2>&1 &
safetensors=$!
status=0
wait "$shapes" || status=$?
cat "$out/fuzz_shapes.report"
wait "$safetensors" || status=$?
cat "$out/fuzz_safetensors.report"
exit "$status"
