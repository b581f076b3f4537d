// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs the fuzz target without libFuzzer: every file of the given corpus directories (or files), then a
// fixed number of inputs from a seeded generator. Any invariant violation aborts (see fuzz_shapes.cpp).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::size_t run_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  std::size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files += run_file(e.path());
    } else {
      files += run_file(p);
    }
  }
  if (argc > 1 && files == 0) {
    std::fprintf(stderr, "fuzz replay: no corpus files found\n");
    return 1;
  }
  // Seeded random inputs on top of the corpus: every case kind, many shapes.
  std::mt19937_64 g(6);
  constexpr int generated = 20000;
  std::vector<std::uint8_t> buf;
  for (int i = 0; i < generated; ++i) {
    buf.resize(std::uniform_int_distribution<std::size_t>(1, 96)(g));
    for (auto& b : buf) b = static_cast<std::uint8_t>(g());
    buf[0] = static_cast<std::uint8_t>(i);  // cycle through the case kinds
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
  }
  std::printf("fuzz replay: %zu corpus files and %d generated inputs passed\n", files, generated);
  return 0;
}
