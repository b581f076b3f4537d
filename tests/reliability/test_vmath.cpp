// texpr's own float exp and expm1 (detail/vmath.hpp, what host fused loops call) against the C library's double
// results, in ulp of the float result, over a sweep of every float bit pattern: every 61st pattern by default
// (70 million inputs, both signs, subnormals, infinities and NaNs included), all 2^32 with TEXPR_FULL_SWEEP=1
// (a minute or two: run it by hand after changing vmath.hpp). Bounds: exp 1 ulp, expm1 1.5 ulp (docs/semantics.md).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include <doctest/doctest.h>

#include "reliability/common.hpp"
#include <texpr/texpr.hpp>

namespace {

// |got - ref| in units of the last place of ref rounded to float (subnormal spacing below the normal range).
// Results that overflow or are NaN must match exactly.
double ulp_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  const float rf = static_cast<float>(ref);
  if (std::isinf(rf)) return std::isinf(got) && (got > 0) == (rf > 0) ? 0 : std::numeric_limits<double>::infinity();
  const double spacing = std::fabs(rf) >= std::numeric_limits<float>::min() ? std::ldexp(1.0, std::ilogb(rf) - 23) : std::ldexp(1.0, -149);
  return std::fabs(static_cast<double>(got) - ref) / spacing;
}

struct sweep_result {
  double worst = 0;
  float at = 0;
  std::uint64_t count = 0;
};

template <class F, class R> sweep_result sweep(F f, R reference) {
  const bool full = std::getenv("TEXPR_FULL_SWEEP") != nullptr;
  const std::uint64_t step = full ? 1 : (rel::sanitized() ? 4099 : 61);
  sweep_result s;
  for (std::uint64_t b = 0; b < (std::uint64_t(1) << 32); b += step) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(b));
    const double e = ulp_error(f(x), reference(static_cast<double>(x)));
    ++s.count;
    if (!(e <= s.worst)) {
      s.worst = e;
      s.at = x;
    }
  }
  return s;
}

} // namespace

TEST_CASE("float exp is within 1 ulp of the correctly rounded result on a sweep of all floats") {
  const auto s = sweep([](float x) { return texpr::detail::vmath::exp(x); }, [](double x) { return std::exp(x); });
  MESSAGE("exp: " << s.count << " inputs, worst " << s.worst << " ulp at " << s.at);
  CHECK(s.count > 1000);
  CHECK(s.worst <= 1.0);
}

TEST_CASE("float expm1 is within 1.5 ulp on a sweep of all floats, relative accuracy kept near 0") {
  const auto s = sweep([](float x) { return texpr::detail::vmath::expm1(x); }, [](double x) { return std::expm1(x); });
  MESSAGE("expm1: " << s.count << " inputs, worst " << s.worst << " ulp at " << s.at);
  CHECK(s.count > 1000);
  CHECK(s.worst <= 1.5);
  // Tiny arguments: expm1(x) = x to the last bit, where exp(x) - 1 would be 0.
  CHECK(texpr::detail::vmath::expm1(1e-30f) == 1e-30f);
  CHECK(texpr::detail::vmath::expm1(-0.0f) == 0.0f);
  CHECK(std::signbit(texpr::detail::vmath::expm1(-0.0f)));
}

TEST_CASE("special values: NaN, infinities, overflow and underflow thresholds") {
  namespace vm = texpr::detail::vmath;
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(std::isnan(vm::exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(vm::expm1(std::numeric_limits<float>::quiet_NaN())));
  CHECK(vm::exp(inf) == inf);
  CHECK(vm::exp(-inf) == 0.0f);
  CHECK(vm::expm1(inf) == inf);
  CHECK(vm::expm1(-inf) == -1.0f);
  CHECK(vm::exp(88.72283f) < inf);  // the largest float below the overflow threshold
  CHECK(vm::exp(88.7229f) == inf);
  CHECK(vm::exp(-103.0f) > 0.0f);  // a subnormal result
  CHECK(vm::exp(-104.0f) == 0.0f);
  CHECK(vm::expm1(-20.0f) == -1.0f);
}

TEST_CASE("fused host loops use them: tx::exp, tx::expm1 and tx::elu of a float tensor equal the scalar functions") {
  namespace tx = texpr;
  tx::tensor<float, 1> x = tx::random::uniform<float>({4099}, 7, -90.0f, 90.0f);
  tx::tensor<float, 1> e = tx::exp(x), m = tx::expm1(x), u = tx::elu(x);
  int differ = 0;
  for (tx::index_t i = 0; i < x.size(); ++i) {
    differ += e(i) != tx::detail::vmath::exp(x(i));
    differ += m(i) != tx::detail::vmath::expm1(x(i));
    differ += u(i) != (x(i) > 0 ? x(i) : tx::detail::vmath::expm1(x(i)));
  }
  CHECK(differ == 0);
}
