// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one reader of texpr's TEXPR_* environment variables: whole decimal numbers only, range-checked, with a
// one-line warning for anything else.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace texpr::detail {

/// `text` as a whole non-negative decimal number: digits only (no sign, space, exponent or suffix), at least one
/// and no overflow of 64 bits; nullopt otherwise. atoi and strtoull accept "4x" as 4 and "-1" as 2^64 - 1.
inline std::optional<std::uint64_t> parse_decimal(std::string_view text) noexcept {
  if (text.empty()) return std::nullopt;
  std::uint64_t n = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (n > (UINT64_MAX - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  return n;
}

/// What env_number does with a well-formed value above its range.
enum class env_above { cap, ignore };

/// The environment variable `name` as a whole decimal number in [lo, hi]; nullopt when it is unset, so the caller's
/// default applies. A value that is not a whole decimal number, or is below lo, is ignored; one above hi is capped
/// at hi or ignored, as `above` says. Either way one line on `warn` (stderr unless a test passes a file) names the
/// variable, its value and the accepted range, so a typo never silently changes what runs.
inline std::optional<std::uint64_t> env_number(const char* name, std::uint64_t lo, std::uint64_t hi, env_above above = env_above::cap,
                                               std::FILE* warn = nullptr) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  std::FILE* out = warn != nullptr ? warn : stderr;
  const auto n = parse_decimal(text);
  const auto llo = static_cast<unsigned long long>(lo), lhi = static_cast<unsigned long long>(hi);
  if (!n || *n < lo || (*n > hi && above == env_above::ignore)) {
    std::fprintf(out, "texpr: %s=\"%s\" ignored: expected a whole decimal number from %llu to %llu; using the default\n", name, text,
                 llo, lhi);
    return std::nullopt;
  }
  if (*n > hi) {
    std::fprintf(out, "texpr: %s=%s is above its limit %llu; using %llu\n", name, text, lhi, lhi);
    return hi;
  }
  return n;
}

} // namespace texpr::detail
