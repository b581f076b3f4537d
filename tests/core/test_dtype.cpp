// 16-bit float conversions (exhaustive where feasible) and dtype names.
#include "reference.hpp"

#include <cstring>

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
