// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target over the safetensors header check (texpr/interop/safetensors.hpp): any input either is
// rejected with io_error or yields entries whose dtype, shape and byte ranges are consistent (each range inside
// the input, the ranges tiling the data section, byte counts equal to extent products in 128-bit arithmetic, no
// repeated name), and every byte they name is read. Anything else (another exception, a sanitizer report) aborts.
// Built with clang++ -fsanitize=fuzzer by .ci/reliability.sh, and with replay_main.cpp as a ctest.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include <texpr/interop/safetensors.hpp>

namespace tx = texpr;

namespace {

[[noreturn]] void fail(const char* what, const std::string& name) {
  std::fprintf(stderr, "fuzz_safetensors: invariant violated: %s (entry %s)\n", what, name.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tx::detail::safetensors_header h;
  try {
    h = tx::detail::safetensors_parse("fuzz.safetensors", data, size);
  } catch (const tx::io_error&) {
    return 0;
  }
  if (h.data_start < 8 || h.data_start > size) fail("data section outside the input", "");
  __extension__ typedef unsigned __int128 u128;
  std::uint64_t covered = 0;
  std::set<std::string> names;
  unsigned checksum = 0;
  for (const tx::safetensors_info& e : h.entries) {
    if (!names.insert(e.name).second) fail("repeated name", e.name);
    if (e.begin != covered || e.end < e.begin) fail("ranges do not tile the data section", e.name);
    covered = e.end;
    if (e.file_offset != h.data_start + e.begin || e.file_offset + (e.end - e.begin) > size)
      fail("range outside the input", e.name);
    u128 bits = tx::detail::safetensors_dtype_bits(e.dtype);
    if (bits == 0) fail("unknown dtype accepted", e.name);
    for (const tx::index_t extent : e.shape) {
      if (extent < 0) fail("negative extent", e.name);
      bits *= static_cast<u128>(extent);
      if (bits > (u128{1} << 100)) fail("extent product past 64 bits accepted", e.name);
    }
    if (bits % 8 != 0 || bits / 8 != e.end - e.begin) fail("byte count differs from the shape", e.name);
    for (std::uint64_t i = e.begin; i != e.end; ++i) checksum += data[h.data_start + i];  // ASan checks each read
  }
  if (covered != size - h.data_start) fail("bytes after the last entry accepted", "");
  for (const auto& [k, v] : h.metadata) checksum += static_cast<unsigned>(k.size() + v.size());
  volatile unsigned sink = checksum;
  (void)sink;
  return 0;
}
