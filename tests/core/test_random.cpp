// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::random: Philox4x32-10's known-answer vectors, the documented mapping from (seed, index) to values, errors,
// placement and gradients. Every registry row of uniform and normal is checked per dtype and backend in
// registry_checks.hpp (values against a long double reference, ranges, moments, host/cuda equality, fusion).
#include "core/support.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool same_words(const tx::detail::philox_block& b, std::uint32_t w0, std::uint32_t w1, std::uint32_t w2,
                std::uint32_t w3) {
  return b.w[0] == w0 && b.w[1] == w1 && b.w[2] == w2 && b.w[3] == w3;
}

template <class T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

} // namespace

TEST_CASE("philox4x32_10 reproduces the known-answer vectors of Salmon et al. (Random123's kat_vectors)") {
  using tx::detail::philox4x32_10;
  CHECK(same_words(philox4x32_10({{0, 0, 0, 0}}, {{0, 0}}), 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  CHECK(same_words(philox4x32_10({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, {{0xffffffffu, 0xffffffffu}}),
                   0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  CHECK(same_words(philox4x32_10({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, {{0xa4093822u, 0x299f31d0u}}),
                   0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));
  // constexpr: usable in constant expressions (and so the same function in host and device code)
  static_assert(philox4x32_10({{0, 0, 0, 0}}, {{0, 0}}).w[0] == 0x6627e8d5u);
}

TEST_CASE("random::uniform<float> is, element by element, the documented function of (seed, index)") {
  // Element i: Philox4x32-10 of counter (i low, i high, 0, 0) under key (seed low, seed high); the top 24 bits of
  // word 0 as a fraction u; lo + (hi - lo) u in double, rounded to float.
  const std::uint64_t seed = 0x0123456789abcdefu;
  const tx::tensor<float, 2> got = tx::random::uniform<float>({3, 5}, seed);
  const tx::tensor<float, 2> scaled = tx::random::uniform<float>({3, 5}, seed, -1.0f, 3.0f);
  for (std::uint32_t i = 0; i < 15; ++i) {
    const auto b = tx::detail::philox4x32_10({{i, 0, 0, 0}}, {{0x89abcdefu, 0x01234567u}});
    const double u = static_cast<double>(b.w[0] >> 8) / 16777216.0;
    CHECK(same_bits(got.data()[i], static_cast<float>(u)));
    CHECK(same_bits(scaled.data()[i], static_cast<float>(-1.0 + 4.0 * u)));
  }
  // double: 53 bits, word 1's 32 over word 0's top 21.
  const tx::tensor<double, 1> d = tx::random::uniform<double>({4}, seed);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const auto b = tx::detail::philox4x32_10({{i, 0, 0, 0}}, {{0x89abcdefu, 0x01234567u}});
    const std::uint64_t k = (static_cast<std::uint64_t>(b.w[1]) << 21) | (b.w[0] >> 11);
    CHECK(same_bits(d(i), static_cast<double>(k) / 9007199254740992.0));
  }
  // normal: counter word 2 is 1; u1 = (k1 + 1) 2^-53 from words 0-1, u2 = k2 2^-53 from words 2-3.
  const tx::tensor<double, 1> z = tx::random::normal<double>({4}, seed, 1.0, 2.0);
  for (std::uint32_t i = 0; i < 4; ++i) {
    const auto b = tx::detail::philox4x32_10({{i, 0, 1, 0}}, {{0x89abcdefu, 0x01234567u}});
    const std::uint64_t k1 = (static_cast<std::uint64_t>(b.w[1]) << 21) | (b.w[0] >> 11);
    const std::uint64_t k2 = (static_cast<std::uint64_t>(b.w[3]) << 21) | (b.w[2] >> 11);
    const double u1 = static_cast<double>(k1 + 1) / 9007199254740992.0;
    const double u2 = static_cast<double>(k2) / 9007199254740992.0;
    const double r = std::sqrt(-2.0 * std::log(u1)), c = std::cos(6.283185307179586477 * u2);
    volatile double product = 2.0 * (r * c);  // no fma: the generator rounds the product, then the sum
    CHECK(same_bits(z(i), 1.0 + product));
  }
}

TEST_CASE("random values depend on the element index only: not on the shape, the threads or how they are read") {
  const std::uint64_t seed = 99;
  const tx::tensor<float, 1> flat = tx::random::uniform<float>({6}, seed);
  const tx::tensor<float, 2> square = tx::random::uniform<float>({2, 3}, seed);
  for (tx::index_t i = 0; i < 6; ++i) CHECK(same_bits(flat(i), square.data()[i]));
  // Large enough for the host's threaded loop: every element equals the one computed alone.
  const tx::index_t n = 1 << 18;
  const tx::tensor<float, 1> big = tx::random::normal<float>({n}, seed);
  const auto source = tx::random::normal<float>({n}, seed).source();
  tx::index_t mismatches = 0;
  for (tx::index_t i = 0; i < n; ++i) mismatches += !same_bits(big(i), source(i));
  CHECK(mismatches == 0);
  // Written through a strided destination: the same values as a contiguous one.
  tx::tensor<double, 2> wide({4, 6});
  tx::slice(wide, 1, 0, 6, 2) = tx::random::uniform<double>({4, 3}, seed);
  const tx::tensor<double, 2> dense = tx::random::uniform<double>({4, 3}, seed);
  for (tx::index_t i = 0; i < 4; ++i)
    for (tx::index_t j = 0; j < 3; ++j) CHECK(same_bits(wide(i, 2 * j), dense(i, j)));
  // uniform and normal with one seed draw from different Philox streams (counter word 2).
  const tx::tensor<double, 1> u = tx::random::uniform<double>({64}, seed);
  const tx::tensor<double, 1> g = tx::random::normal<double>({64}, seed);
  const tx::tensor<double, 1> u2 = tx::random::uniform<double>({64}, seed + 1);
  int equal = 0;
  for (tx::index_t i = 0; i < 64; ++i) equal += u(i) == u2(i);
  CHECK(equal == 0);
  CHECK(g(0) != tx::eval(tx::random::normal<double>({1}, seed + 1))(0));
}

TEST_CASE("random: bad shapes and parameters throw with the caller's file:line; empty shapes are fine") {
  CHECK_THROWS_WITH_AS(tx::random::uniform<float>({2, -1}, 1), doctest::Contains("test_random.cpp"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::random::normal<double>({-3}, 1), doctest::Contains("negative extent"), tx::shape_error);
  CHECK_THROWS_WITH_AS(tx::random::uniform<float>({2}, 1, 1.0f, 1.0f), doctest::Contains("needs lo < hi"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(tx::random::uniform<double>({2}, 1, 0.0, -1.0), doctest::Contains("test_random.cpp"),
                       std::invalid_argument);
  CHECK_THROWS_AS(tx::random::uniform<double>({2}, 1, -1e308, 1e308), std::invalid_argument);  // hi - lo overflows
  CHECK_THROWS_WITH_AS(tx::random::normal<float>({2}, 1, 0.0f, -1.0f), doctest::Contains("stddev >= 0"),
                       std::invalid_argument);
  CHECK_THROWS_AS(tx::random::normal<double>({2}, 1, 0.0, std::nan("")), std::invalid_argument);
  const tx::tensor<float, 2> empty = tx::random::normal<float>({0, 3}, 1);
  CHECK(empty.size() == 0);
  const tx::tensor<double, 1> degenerate = tx::random::normal<double>({3}, 1, 2.5, 0.0);  // stddev 0: the mean
  for (tx::index_t i = 0; i < 3; ++i) CHECK(degenerate(i) == 2.5);
}

TEST_CASE("random: placement names the generator; 16-bit floats only on cuda; a constant for tx::grad") {
  CHECK(tx::placement(tx::random::uniform<float>({3}, 1) * 2.0f).find("uniform") != std::string::npos);
  CHECK(tx::placement(tx::random::normal<double>({3}, 1)).find("normal") != std::string::npos);
  static_assert(tx::runs_on<decltype(tx::random::normal<float, tx::cuda>({2, 3}, 1)), tx::cuda>);
  static_assert(tx::runs_on<decltype(tx::random::uniform<tx::bfloat16, tx::cuda>({2, 3}, 1)), tx::cuda>);
  static_assert(!tx::runs_on<decltype(tx::random::uniform<tx::half>({2, 3}, 1)), tx::host>);
  // d/dx sum(x * noise) = noise: the generator is a constant of the graph (no gradient rule needed).
  tx::tensor<float, 1> x({5}, {1, 2, 3, 4, 5});
  auto px = tx::param<struct noise_p>(x);
  auto [gx] = tx::eval_all(tx::grad(tx::sum(px * tx::random::normal<float>({5}, 11)), px));
  const tx::tensor<float, 1> noise = tx::random::normal<float>({5}, 11);
  for (tx::index_t i = 0; i < 5; ++i) CHECK(same_bits(gx(i), noise(i)));
}
