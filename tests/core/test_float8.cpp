// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 8-bit floats: every code decoded against the OCP formula, and rounding against a reference that picks the
// nearest of the 256 decoded values (ties to the even code), over every boundary, midpoint and special value.
#include "reference.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

// The format facts, restated from the OCP FP8 spec (not read from texpr's format structs).
template <class T> struct spec;
template <> struct spec<tx::float8_e4m3> {
  static constexpr int mantissa_bits = 3, bias = 7;  // 4 exponent bits
  static constexpr std::uint8_t max_code = 0x7E;  // 448; 0x7F is NaN
  static constexpr long double max_value = 448.0L;
  static bool is_nan(std::uint8_t c) { return (c & 0x7F) == 0x7F; }
  static bool is_inf(std::uint8_t) { return false; }
};
template <> struct spec<tx::float8_e5m2> {
  static constexpr int mantissa_bits = 2, bias = 15;  // 5 exponent bits
  static constexpr std::uint8_t max_code = 0x7B;  // 57344; 0x7C is infinity
  static constexpr long double max_value = 57344.0L;
  static bool is_nan(std::uint8_t c) { return (c & 0x7F) > 0x7C; }
  static bool is_inf(std::uint8_t c) { return (c & 0x7F) == 0x7C; }
};

// The value of code c from the formula (-1)^s 2^(e - bias) (1 + m / 2^M), subnormal 2^(1 - bias) (m / 2^M).
template <class T> long double code_value(std::uint8_t c) {
  using S = spec<T>;
  if (S::is_nan(c)) return std::numeric_limits<long double>::quiet_NaN();
  const long double sign = (c & 0x80) ? -1.0L : 1.0L;
  if (S::is_inf(c)) return sign * std::numeric_limits<long double>::infinity();
  const int e = (c & 0x7F) >> S::mantissa_bits;
  const int m = c & ((1 << S::mantissa_bits) - 1);
  const long double fraction = std::ldexp(static_cast<long double>(m), -S::mantissa_bits);
  return sign * (e == 0 ? std::ldexp(fraction, 1 - S::bias) : std::ldexp(1.0L + fraction, e - S::bias));
}

// The expected code for x: the finite code nearest to |x| (ties to the even code), x's sign; |x| at or past the
// largest value saturates to it (infinity too); NaN gives 0x7F.
template <class T> std::uint8_t nearest_code(long double x) {
  using S = spec<T>;
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const long double ax = std::fabs(x);
  if (ax >= S::max_value) return sign | S::max_code;
  static const std::vector<long double> values = [] {
    std::vector<long double> v;
    for (int c = 0; c <= S::max_code; ++c) v.push_back(code_value<T>(static_cast<std::uint8_t>(c)));
    return v;
  }();
  const auto above = std::lower_bound(values.begin(), values.end(), ax);  // first value >= ax
  const int hi = static_cast<int>(above - values.begin());
  if (values[hi] == ax || hi == 0) return static_cast<std::uint8_t>(sign | hi);
  const int lo = hi - 1;
  const long double dlo = ax - values[lo], dhi = values[hi] - ax;
  const int pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<std::uint8_t>(sign | pick);
}

template <class T> std::uint8_t code_of(T x) { return x.bits; }

// Floats and doubles around every code: the code, the midpoints to its neighbours and a float or double ulp off
// each, a quarter of the way, beyond the largest value, below the smallest subnormal, specials.
template <class T> std::vector<double> probes() {
  using S = spec<T>;
  std::vector<double> p;
  for (int c = 0; c <= S::max_code; ++c) {
    const double lo = static_cast<double>(code_value<T>(static_cast<std::uint8_t>(c)));
    // past the largest code: the next value the format would have, if it had one
    const double hi = c < S::max_code ? static_cast<double>(code_value<T>(static_cast<std::uint8_t>(c + 1)))
                                      : lo + (lo - static_cast<double>(code_value<T>(static_cast<std::uint8_t>(c - 1))));
    const double mid = (lo + hi) / 2;
    for (double v : {lo, mid, lo + (hi - lo) / 4, lo + 3 * (hi - lo) / 4}) {
      p.push_back(v);
      p.push_back(std::nextafter(v, 0.0));
      p.push_back(std::nextafter(v, 1e300));
      p.push_back(static_cast<double>(std::nextafter(static_cast<float>(v), 0.0f)));
      p.push_back(static_cast<double>(std::nextafter(static_cast<float>(v), 1e30f)));
    }
  }
  const double tiny = std::ldexp(1.0, 1 - S::bias - S::mantissa_bits);  // the smallest subnormal
  for (double v : {tiny / 2, tiny / 4, tiny * 1.5, tiny * 2.5, 1e-30, 1e-40, 1e-300, 1e-320, 1e30, 1e300, 3.4e38, 3.5e38,
                   65504.0, 65520.0, 57344.0, 61440.0, 448.0, 464.0, 480.0, 0.0,
                   static_cast<double>(std::numeric_limits<float>::denorm_min()),
                   std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    p.push_back(v);
    p.push_back(std::nextafter(v, 0.0));
    p.push_back(std::nextafter(v, 1e300));
  }
  const std::size_t n = p.size();
  for (std::size_t i = 0; i < n; ++i) p.push_back(-p[i]);
  return p;
}

template <class T> void check_every_code() {
  for (int c = 0; c < 256; ++c) {
    T x;
    x.bits = static_cast<std::uint8_t>(c);
    const long double want = code_value<T>(x.bits);
    const float f = static_cast<float>(x);
    CAPTURE(c);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(f));
      REQUIRE(T(f).bits == 0x7F);  // NaN converts to the one NaN texpr (and CUDA) writes
      continue;
    }
    REQUIRE(static_cast<long double>(f) == want);
    REQUIRE(std::signbit(f) == ((c & 0x80) != 0));
    // Round trip from float and from double; an infinity saturates to the largest value.
    const std::uint8_t back = spec<T>::is_inf(x.bits) ? static_cast<std::uint8_t>((c & 0x80) | spec<T>::max_code) : x.bits;
    REQUIRE(T(f).bits == back);
    REQUIRE(T(static_cast<double>(f)).bits == back);
    REQUIRE(nearest_code<T>(want) == back);  // the reference agrees with the formula too
  }
}

template <class T> void check_rounding() {
  int checked = 0;
  for (double d : probes<T>()) {
    CAPTURE(d);
    REQUIRE(code_of(T(d)) == nearest_code<T>(d));  // one rounding from double
    const float f = static_cast<float>(d);
    REQUIRE(code_of(T(f)) == nearest_code<T>(f));
    checked += 2;
  }
  // Every 4099th float bit pattern (about a million, all exponents and both signs).
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFu; b += 4099) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (code_of(T(f)) != nearest_code<T>(f)) {
      CAPTURE(f);
      REQUIRE(code_of(T(f)) == nearest_code<T>(f));
    }
    ++checked;
  }
  CHECK(checked > 1000000);
}

} // namespace

TEST_CASE("float8: every code decodes to the OCP formula's value and rounds back to itself") {
  check_every_code<tx::float8_e4m3>();
  check_every_code<tx::float8_e5m2>();
}

TEST_CASE("float8: rounding to nearest even with saturation, from float and from double") {
  check_rounding<tx::float8_e4m3>();
  check_rounding<tx::float8_e5m2>();
  // Landmarks, stated directly.
  CHECK(tx::float8_e4m3(448.0f).bits == 0x7E);
  CHECK(tx::float8_e4m3(464.0f).bits == 0x7E);      // halfway to 480 (which is NaN's pattern): even, 448
  CHECK(tx::float8_e4m3(1e9f).bits == 0x7E);        // saturates
  CHECK(tx::float8_e4m3(-std::numeric_limits<float>::infinity()).bits == 0xFE);
  CHECK(tx::float8_e5m2(std::numeric_limits<float>::infinity()).bits == 0x7B);  // CUDA's satfinite: 57344
  CHECK(tx::float8_e5m2(61440.0f).bits == 0x7B);
  CHECK(tx::float8_e4m3(std::ldexp(1.0f, -10)).bits == 0x00);  // half the smallest subnormal: ties to 0
  CHECK(tx::float8_e4m3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)).bits == 0x01);
  CHECK(tx::float8_e4m3(-0.0f).bits == 0x80);
  CHECK(tx::float8_e5m2(1.125f).bits == 0x3C);  // halfway between 1 (0x3C) and 1.25 (0x3D): even
  CHECK(tx::float8_e5m2(1.375f).bits == 0x3E);  // halfway between 1.25 and 1.5: even, 1.5
  // A double a hair above a midpoint rounds up; through float it would land on the midpoint and go to even.
  const double above_mid = 1.0625 + std::ldexp(1.0, -40);  // 1 + 2^-4 is halfway between E4M3's 1 and 1.125
  CHECK(tx::float8_e4m3(static_cast<float>(above_mid)).bits == 0x38);
  CHECK(tx::float8_e4m3(above_mid).bits == 0x39);
  CHECK(static_cast<float>(tx::float8_e4m3(std::numeric_limits<float>::quiet_NaN())) != 0.0f);  // NaN
  tx::float8_e5m2 inf;
  inf.bits = 0x7C;
  CHECK(std::isinf(static_cast<float>(inf)));
}

template <class T> void check_casts_through_texpr() {
  // Every half and every bfloat16 bit pattern, converted by the cast kernel (exact through float, then one rounding).
  tx::tensor<tx::half, 1> h({65536});
  tx::tensor<tx::bfloat16, 1> b({65536});
  for (std::uint32_t i = 0; i < 65536; ++i) {
    h.data()[i].bits = static_cast<std::uint16_t>(i);
    b.data()[i].bits = static_cast<std::uint16_t>(i);
  }
  const tx::tensor<T, 1> from_half = tx::cast<T>(h);
  const tx::tensor<T, 1> from_bfloat16 = tx::cast<T>(b);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    CAPTURE(i);
    REQUIRE(from_half.data()[i].bits == nearest_code<T>(static_cast<float>(h.data()[i])));
    REQUIRE(from_bfloat16.data()[i].bits == nearest_code<T>(static_cast<float>(b.data()[i])));
  }
  // doubles round once; int32 and int64 sources (saturating); back to every wider dtype exactly.
  const auto p = probes<T>();
  tx::tensor<double, 1> d({static_cast<tx::index_t>(p.size())});
  std::copy(p.begin(), p.end(), d.data());
  const tx::tensor<T, 1> from_double = tx::cast<T>(d);
  for (std::size_t i = 0; i < p.size(); ++i) REQUIRE(from_double.data()[i].bits == nearest_code<T>(p[i]));
  tx::tensor<std::int64_t, 1> n({7});
  const std::int64_t ns[] = {0, -3, 17, 449, -100000, std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  std::copy(std::begin(ns), std::end(ns), n.data());
  const tx::tensor<T, 1> from_int64 = tx::cast<T>(n);
  const tx::tensor<std::int32_t, 1> n32 = tx::cast<std::int32_t>(n);
  const tx::tensor<T, 1> from_int32 = tx::cast<T>(n32);
  for (int i = 0; i < 7; ++i) {
    REQUIRE(from_int64.data()[i].bits == nearest_code<T>(static_cast<long double>(ns[i])));
    REQUIRE(from_int32.data()[i].bits == nearest_code<T>(static_cast<long double>(n32.data()[i])));
  }
  tx::tensor<T, 1> all({256});
  for (int c = 0; c < 256; ++c) all.data()[c].bits = static_cast<std::uint8_t>(c);
  const tx::tensor<double, 1> wide = tx::cast<double>(all);
  const tx::tensor<tx::half, 1> as_half = tx::cast<tx::half>(all);
  const tx::view<const T, 2, tx::host> transposed(all.data(), {16, 16}, {1, 16});
  const tx::tensor<T, 2> copied = transposed;  // the copy kernel, from a strided source
  for (int c = 0; c < 256; ++c) {
    const long double want = code_value<T>(static_cast<std::uint8_t>(c));
    if (std::isnan(want)) {
      REQUIRE(std::isnan(wide.data()[c]));
      continue;
    }
    REQUIRE(static_cast<long double>(wide.data()[c]) == want);
    REQUIRE(static_cast<long double>(static_cast<float>(as_half.data()[c])) == want);  // every FP8 value is a half
    REQUIRE(copied(c % 16, c / 16).bits == c);
  }
}

TEST_CASE("float8: tx::cast to and from every dtype, on the host") {
  check_casts_through_texpr<tx::float8_e4m3>();
  check_casts_through_texpr<tx::float8_e5m2>();
}

TEST_CASE("float8: dtype names, tags and rows (storage and conversion only)") {
  CHECK(tx::dtype_name_v<tx::float8_e4m3> == "float8_e4m3");
  CHECK(tx::dtype_name_v<tx::float8_e5m2> == "float8_e5m2");
  static_assert(std::is_same_v<tx::dtype_tag_t<tx::float8_e5m2>, tx::dtype::float8_e5m2>);
  static_assert(sizeof(tx::float8_e4m3) == 1 && sizeof(tx::float8_e5m2) == 1);
  static_assert(tx::has_kernel<tx::op::cast<tx::float8_e4m3>, tx::float8_e4m3, tx::host>);
  static_assert(tx::has_kernel<tx::op::cast<tx::float8_e5m2>, tx::float8_e5m2, tx::cuda>);
  static_assert(tx::has_kernel<tx::op::copy, tx::float8_e4m3, tx::cuda>);
  static_assert(!tx::has_kernel<tx::op::add, tx::float8_e4m3, tx::host>);
  static_assert(!tx::has_kernel<tx::op::add, tx::float8_e5m2, tx::cuda>);
}
