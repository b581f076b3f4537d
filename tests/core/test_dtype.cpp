// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// 16-bit float conversions (exhaustive where feasible), rounding arithmetic through float, and dtype names.
#include "reference.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

// Exact value of a binary16 bit pattern from the IEEE formula (independent of texpr's bit twiddling).
long double half_value(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  long double v;
  if (e == 0) v = std::ldexp(static_cast<long double>(m), -24);
  else if (e == 31) v = m ? std::numeric_limits<long double>::quiet_NaN() : std::numeric_limits<long double>::infinity();
  else v = std::ldexp(1.0L + m / 1024.0L, e - 15);
  return s ? -v : v;
}

} // namespace

TEST_CASE("half: every bit pattern widens exactly and rounds back to itself") {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    tx::half h;
    h.bits = static_cast<std::uint16_t>(b);
    const float f = static_cast<float>(h);
    const long double want = half_value(h.bits);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(f));
      continue;
    }
    REQUIRE(static_cast<long double>(f) == want);
    REQUIRE(tx::half(f).bits == h.bits);
  }
}

TEST_CASE("half and bfloat16: float rounding matches round-to-nearest-even") {
  test::rng(7);
  for (int i = 0; i < 200000; ++i) {
    // Random magnitudes across the whole half range, subnormals and overflow included.
    const float f = std::ldexp(test::uniform<float>(-1, 1), static_cast<int>(test::uniform<std::int32_t>(-26, 17)));
    REQUIRE(static_cast<long double>(static_cast<float>(tx::half(f))) == test::convert_ref<tx::half>(f));
    REQUIRE(static_cast<long double>(static_cast<float>(tx::bfloat16(f))) == test::convert_ref<tx::bfloat16>(f));
  }
  // Ties go to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  CHECK(static_cast<float>(tx::half(1.0f + std::ldexp(1.0f, -11))) == 1.0f);
  CHECK(static_cast<float>(tx::half(1.0f + 3 * std::ldexp(1.0f, -11))) == 1.0f + std::ldexp(1.0f, -9));
  CHECK(std::isinf(static_cast<float>(tx::half(65520.0f))));
  CHECK(static_cast<float>(tx::half(65519.0f)) == 65504.0f);
  CHECK(std::isnan(static_cast<float>(tx::half(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(static_cast<float>(tx::bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::signbit(static_cast<float>(tx::half(-0.0f))));
}

TEST_CASE_TEMPLATE("16-bit add, subtract and multiply: rounding through float equals rounding the exact result once", T,
                   tx::half, tx::bfloat16) {
  // Why cuda may compute these with half2 / bfloat162 instructions (one correct rounding) and still match the
  // documented rule (compute in float, round to 16 bits): float has at least 2p + 2 bits. Random bit patterns
  // (every magnitude, subnormals, infinities) and pairs that cancel to a few ulps.
  auto& gen = test::rng(11);
  int checked = 0;
  for (int i = 0; i < 300000; ++i) {
    T a, b;
    a.bits = static_cast<std::uint16_t>(gen());
    b.bits = static_cast<std::uint16_t>(i % 2 ? gen() : (a.bits ^ 0x8000u) ^ (gen() & 7u));
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (std::isnan(fa) || std::isnan(fb)) continue;
    const long double x = fa, y = fb;  // exact; the sum and product below are exact or round at 64 bits (>= 2p + 2)
    const long double once[3] = {test::convert_ref<T>(x + y), test::convert_ref<T>(x - y), test::convert_ref<T>(x * y)};
    const long double twice[3] = {test::convert_ref<T>(fa + fb), test::convert_ref<T>(fa - fb),
                                  test::convert_ref<T>(fa * fb)};
    for (int k = 0; k < 3; ++k) {
      if (std::isnan(once[k])) {
        REQUIRE(std::isnan(twice[k]));
      } else {
        REQUIRE(once[k] == twice[k]);
        REQUIRE(std::signbit(once[k]) == std::signbit(twice[k]));
      }
    }
    ++checked;
  }
  CHECK(checked > 250000);
}

TEST_CASE("dtype names and tags") {
  CHECK(tx::dtype_name_v<float> == "float32");
  CHECK(tx::dtype_name_v<double> == "float64");
  CHECK(tx::dtype_name_v<std::int32_t> == "int32");
  CHECK(tx::dtype_name_v<std::int64_t> == "int64");
  CHECK(tx::dtype_name_v<bool> == "bool");
  CHECK(tx::dtype_name_v<tx::half> == "float16");
  CHECK(tx::dtype_name_v<tx::bfloat16> == "bfloat16");
  static_assert(std::is_same_v<tx::dtype_tag_t<std::int64_t>, tx::dtype::int64>);
  static_assert(sizeof(tx::half) == 2 && sizeof(tx::bfloat16) == 2);
}

TEST_CASE_TEMPLATE("test data: full-range integer inputs vary, cover both signs and reach the extremes' magnitude", T,
                   std::int32_t, std::int64_t) {
  // The registry tests draw wrap-around inputs from the dtype's full range; a generator that collapses (as one
  // drawing int64 through double once did, to INT64_MIN only) would make those tests compare constants.
  using L = std::numeric_limits<T>;
  const auto dom = test::ref<tx::op::add>::dom<T>();
  auto x = test::random<T, 1>({2000}, dom.lo, dom.hi);
  std::vector<T> v(x.data(), x.data() + x.size());
  std::sort(v.begin(), v.end());
  const auto distinct = std::unique(v.begin(), v.end()) - v.begin();
  CHECK(distinct > 1990);
  CHECK(v.front() < 0);
  CHECK(v[static_cast<std::size_t>(distinct) - 1] > 0);
  // Uniform over the full range: some values lie in the outer quarters on both sides.
  CHECK(v.front() < L::min() / 2);
  CHECK(v[static_cast<std::size_t>(distinct) - 1] > L::max() / 2);
  CHECK(test::integer_bound<T>(1e300) == L::max());
  CHECK(test::integer_bound<T>(-1e300) == L::min());
}

TEST_CASE_TEMPLATE("test data: product factors are never zero and make non-trivial wrapping products", T, std::int32_t,
                   std::int64_t) {
  auto f = test::product_factors<T, 1>({3000});
  int ones = 0, threes = 0, twos = 0, negative = 0;
  test::u128 p = 1;
  for (tx::index_t i = 0; i < f.size(); ++i) {
    const T x = f.data()[i];
    REQUIRE(x != 0);
    ones += x == 1 || x == -1;
    threes += x == 3 || x == -3;
    twos += x == 2 || x == -2;
    negative += x < 0;
    p *= static_cast<test::u128>(static_cast<test::i128>(x));
  }
  CHECK(ones > 1800);
  CHECK(threes > 500);
  CHECK(twos >= 1);
  CHECK(twos <= 8);
  CHECK(negative > 1000);
  const T product = test::wrap<T>(static_cast<test::i128>(p));
  CHECK(product != 0);
  CHECK(product != 1);
  CHECK(product != -1);
}
