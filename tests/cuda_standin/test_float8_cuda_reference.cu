// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// texpr's 8-bit float conversions against CUDA's own (cuda_fp8.h's host-callable __nv_cvt_* and the __nv_fp8_*
// constructors, which nvcc compiles for the host too): the semantics texpr promises are CUDA's. Runs on the host.
#include <doctest/doctest.h>

#include <texpr/core/dtype.hpp>

#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace tx = texpr;

namespace {

template <class T> constexpr __nv_fp8_interpretation_t interpretation = std::is_same_v<T, tx::float8_e4m3> ? __NV_E4M3 : __NV_E5M2;

bool is_nan_half(unsigned short h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

// Every 8-bit code widens to the half CUDA gives (NaN to a NaN), and texpr's float of it is that half's value.
template <class T> void check_decode() {
  for (int c = 0; c < 256; ++c) {
    T x;
    x.bits = static_cast<std::uint8_t>(c);
    const __half_raw want = __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), interpretation<T>);
    const tx::half got(static_cast<float>(x));
    CAPTURE(c);
    if (is_nan_half(want.x)) {
      REQUIRE(std::isnan(static_cast<float>(x)));
    } else {
      REQUIRE(got.bits == want.x);
    }
  }
}

// Floats that matter for rounding: every 8-bit value, the midpoints between neighbours and a float ulp either side,
// values past the largest and below the smallest subnormal, specials; then a sweep of float bit patterns.
template <class T> std::vector<float> probes() {
  std::vector<float> p;
  for (int c = 0; c < 128; ++c) {
    T a, b;
    a.bits = static_cast<std::uint8_t>(c);
    b.bits = static_cast<std::uint8_t>(c + 1);
    const float lo = static_cast<float>(a), hi = static_cast<float>(b);
    if (std::isnan(lo) || std::isinf(lo)) continue;
    const float mid = std::isfinite(hi) && !std::isnan(hi) ? lo + (hi - lo) / 2 : lo * 1.0625f;
    for (float v : {lo, mid}) {
      p.push_back(v);
      p.push_back(std::nextafter(v, 0.0f));
      p.push_back(std::nextafter(v, 1e30f));
    }
  }
  for (float v : {464.0f, 480.0f, 61440.0f, 65536.0f, 1e30f, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 0.0f})
    p.push_back(v);
  const std::size_t n = p.size();
  for (std::size_t i = 0; i < n; ++i) p.push_back(-p[i]);
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFu; b += 65521) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    p.push_back(f);
  }
  return p;
}

template <class Cuda, class T> void check_encode() {
  int checked = 0;
  for (float f : probes<T>()) {
    CAPTURE(f);
    const auto want = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, interpretation<T>);
    REQUIRE(T(f).bits == want);
    REQUIRE(T(f).bits == Cuda(f).__x);  // the constructor CUDA users write
    if (!std::isnan(f)) {
      // From double, directly: the double a hair off f rounds as CUDA's double conversion does.
      const double d = std::nextafter(static_cast<double>(f), f < 0 ? -1e300 : 1e300);
      REQUIRE(T(d).bits == __nv_cvt_double_to_fp8(d, __NV_SATFINITE, interpretation<T>));
    }
    ++checked;
  }
  CHECK(checked > 60000);
}

} // namespace

TEST_CASE("float8 against cuda_fp8.h: decoding every code") {
  check_decode<tx::float8_e4m3>();
  check_decode<tx::float8_e5m2>();
}

TEST_CASE("float8 against cuda_fp8.h: rounding and saturation from float and double") {
  check_encode<__nv_fp8_e4m3, tx::float8_e4m3>();
  check_encode<__nv_fp8_e5m2, tx::float8_e5m2>();
}
