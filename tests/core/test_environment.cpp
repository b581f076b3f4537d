// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The TEXPR_* environment variables: one strict reader, the thread cap, the host cache's bound and its release.
// CTest runs the "environment:" cases again under malformed and oversized settings (tests/CMakeLists.txt).
#include "support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

namespace {

/// What env_number wrote to its warning file.
std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  return text;
}

/// env_number's result for `value`, and its warning.
std::pair<std::optional<std::uint64_t>, std::string> read_knob(const char* value, std::uint64_t lo, std::uint64_t hi,
                                                               tx::detail::env_above above = tx::detail::env_above::cap) {
  ::setenv("TEXPR_TEST_KNOB", value, 1);
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  const auto n = tx::detail::env_number("TEXPR_TEST_KNOB", lo, hi, above, f);
  std::string text = read_all(f);
  std::fclose(f);
  ::unsetenv("TEXPR_TEST_KNOB");
  return {n, text};
}

/// A field of /proc/self/status (Linux), -1 elsewhere.
long proc_status(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  return -1;
}

/// The thread count the host backend takes when nothing is set: the hardware concurrency.
int hardware_threads() {
  const unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? static_cast<int>(hc) : 1;
}

bool env_is(const char* name, const char* value) {
  const char* env = std::getenv(name);
  return env != nullptr && std::string(env) == value;
}

} // namespace

TEST_CASE("environment numbers are whole decimal numbers: no sign, suffix, exponent, space or overflow") {
  using tx::detail::parse_decimal;
  CHECK(parse_decimal("0") == 0u);
  CHECK(parse_decimal("4") == 4u);
  CHECK(parse_decimal("007") == 7u);
  CHECK(parse_decimal("18446744073709551615") == UINT64_MAX);
  for (const char* bad : {"", "4x", "1e3", "-1", "+4", " 4", "4 ", "0x10", "3.5", "18446744073709551616", "99999999999999999999999"})
    CHECK_MESSAGE(!parse_decimal(bad), bad);
}

TEST_CASE("env_number: unset is the default, malformed is ignored, too large is capped, each with one line naming it") {
  ::unsetenv("TEXPR_TEST_KNOB");
  CHECK(!tx::detail::env_number("TEXPR_TEST_KNOB", 1, 8));
  {
    const auto [n, text] = read_knob("6", 1, 8);
    CHECK(n == 6u);
    CHECK(text.empty());
  }
  for (const char* bad : {"4x", "1e3", "-1", "", "0"}) {
    const auto [n, text] = read_knob(bad, 1, 8);
    CAPTURE(bad);
    CHECK(!n);
    CHECK(text == "texpr: TEXPR_TEST_KNOB=\"" + std::string(bad) +
                      "\" ignored: expected a whole decimal number from 1 to 8; using the default\n");
  }
  for (const char* big : {"100000", "99999999999", "99999999999999999999"}) {
    const auto [n, text] = read_knob(big, 1, 8);
    CAPTURE(big);
    if (std::string(big).size() > 19) {  // beyond 64 bits: not a number we can read, so ignored
      CHECK(!n);
      CHECK(text.find("ignored") != std::string::npos);
    } else {
      CHECK(n == 8u);
      CHECK(text == "texpr: TEXPR_TEST_KNOB=" + std::string(big) + " is above its limit 8; using 8\n");
    }
  }
  const auto [n, text] = read_knob("2", 0, 1, tx::detail::env_above::ignore);
  CHECK(!n);
  CHECK(text.find("TEXPR_TEST_KNOB=\"2\" ignored") != std::string::npos);
}

TEST_CASE("set_num_threads is capped at max_threads, a small multiple of the hardware concurrency") {
  const int before = tx::num_threads();
  CHECK(tx::max_threads() == 4 * hardware_threads());
  tx::set_num_threads(100000);
  CHECK(tx::num_threads() == tx::max_threads());
  tx::set_num_threads(3);
  CHECK(tx::num_threads() == std::min(3, tx::max_threads()));
  tx::set_num_threads(before);
}

TEST_CASE("environment: TEXPR_NUM_THREADS is capped, a malformed value is ignored, and a big loop starts no more threads") {
  const int before = tx::num_threads();
  tx::set_num_threads(0);  // the default: TEXPR_NUM_THREADS, else the hardware concurrency
  if (env_is("TEXPR_NUM_THREADS", "100000") || env_is("TEXPR_NUM_THREADS", "99999999999"))
    CHECK(tx::num_threads() == 4 * hardware_threads());  // the cap, max_threads()
  else if (!std::getenv("TEXPR_NUM_THREADS") || env_is("TEXPR_NUM_THREADS", "4x"))
    CHECK(tx::num_threads() == hardware_threads());
  CHECK(tx::num_threads() >= 1);
  CHECK(tx::num_threads() <= 4 * hardware_threads());
  // One op over 2^24 elements: the pool grows to the thread count at most (the caller is one of them).
  tx::tensor<float, 1> x(tx::shape_t<1>{tx::index_t(1) << 24});
  tx::tensor<float, 1> y = x * 2.0f + 1.0f;
  CHECK(y(0) == 1.0f);
  const long threads = proc_status("Threads");
  if (threads >= 0) CHECK(threads <= 4 * hardware_threads() + 1);
  tx::set_num_threads(before);
}

TEST_CASE("environment: TEXPR_HOST_CACHE_MB is bounded; a malformed value leaves the default") {
  auto& cache = tx::detail::host_block_cache::instance();
  const std::size_t mib = std::size_t(1) << 20;
  CHECK(cache.limit() <= std::size_t(TEXPR_HOST_CACHE_MAX_MB) * mib);
  if (env_is("TEXPR_HOST_CACHE_MB", "-1") || env_is("TEXPR_HOST_CACHE_MB", "1e3") || !std::getenv("TEXPR_HOST_CACHE_MB"))
    CHECK(cache.limit() == std::size_t(TEXPR_HOST_CACHE_DEFAULT_MB) * mib);
  if (env_is("TEXPR_HOST_CACHE_MB", "99999999")) CHECK(cache.limit() == std::size_t(TEXPR_HOST_CACHE_MAX_MB) * mib);
  // Five 64 MiB blocks (never touched: no memory is used) freed at once: the cache keeps at most its limit.
  tx::release_host_cache();
  {
    std::vector<tx::tensor<float, 1>> blocks(5);
    for (auto& b : blocks) b.allocate_uninitialized(tx::shape_t<1>{tx::index_t(16) << 20}, nullptr);
  }
  CHECK(tx::host_cache_bytes() <= cache.limit());
  tx::release_host_cache();
}

TEST_CASE("environment: TEXPR_HOST_HUGE_PAGES takes 0 or 1; anything else keeps the default (on)") {
  const bool huge = tx::detail::host_pages::use_huge(tx::detail::host_pages::huge);
#if defined(TEXPR_DETAIL_HUGE_PAGES)
  CHECK(huge == !env_is("TEXPR_HOST_HUGE_PAGES", "0"));
#else
  CHECK_FALSE(huge);
#endif
}

TEST_CASE("release_host_cache returns the cached blocks to the system: cached bytes and resident memory drop") {
  const std::size_t mib = std::size_t(1) << 20;
  tx::release_host_cache();
  CHECK(tx::host_cache_bytes() == 0);
  if (tx::detail::host_block_cache::instance().limit() < 64 * mib) return;  // sanitizers, TEXPR_HOST_CACHE_MB: no room
  {
    tx::tensor<float, 1> t(tx::shape_t<1>{tx::index_t(8) << 20});  // 32 MiB, zero-filled: resident
  }
  const std::size_t cached = tx::host_cache_bytes();
  CHECK(cached >= 32 * mib);
  const long resident = proc_status("VmRSS");  // KiB
  CHECK(tx::release_host_cache() == cached);
  CHECK(tx::host_cache_bytes() == 0);
  if (resident >= 0) CHECK(resident - proc_status("VmRSS") >= 24 * 1024);
}
