// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// File helpers of the archive tests (test_npz.cpp, test_safetensors.cpp): fixtures, scratch files, raw bytes.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace texpr_test {

/// A committed fixture: $TEXPR_FIXTURES/name, or fixtures/name beside this file.
inline std::filesystem::path fixture(const std::string& name) {
  const char* dir = std::getenv("TEXPR_FIXTURES");
  return (dir && *dir ? std::filesystem::path(dir) : std::filesystem::path(__FILE__).parent_path() / "fixtures") / name;
}

/// `name` in the scratch directory `dir` under the working directory the program started in (created on first use;
/// a test that changes directory does not move it).
inline std::filesystem::path scratch_in(const std::string& dir, const std::string& name) {
  static const std::filesystem::path start = std::filesystem::current_path();
  const std::filesystem::path d = start / dir;
  std::filesystem::create_directories(d);
  return d / name;
}

/// A whole file's bytes.
inline std::string bytes_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes exactly `bytes` to p.
inline void write_bytes(const std::filesystem::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

/// doctest's substring matcher for CHECK_THROWS_WITH_AS.
inline doctest::Contains contains(const std::string& text) { return doctest::Contains(doctest::String(text.c_str())); }

}  // namespace texpr_test
