// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// texpr's own elementary functions (detail/vmath.hpp, what host fused loops call) against reference results.
// Float (exp, expm1, log, log1p, tanh, sigmoid): in ulp of the float result against the C library's double result
// (sqrt: bit for bit against std::sqrt),
// over a sweep of every float bit pattern: every 61st pattern by default (70 million inputs, both signs,
// subnormals, infinities and NaNs included), all 2^32 with TEXPR_FULL_SWEEP=1 (a few minutes: run it by hand after
// changing vmath.hpp). Double (exp, expm1, log, log1p, tanh): random inputs over every binade of each function's
// range, both signs, against long double. Bounds as in docs/semantics.md; special values exactly.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "reliability/common.hpp"
#include <texpr/texpr.hpp>

namespace {

namespace vm = texpr::detail::vmath;
using ld = long double;

// |got - ref| in units of the last place of ref rounded to float (subnormal spacing below the normal range).
// Results that overflow or are NaN must match exactly.
double ulp_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  const float rf = static_cast<float>(ref);
  if (std::isinf(rf)) return std::isinf(got) && (got > 0) == (rf > 0) ? 0 : std::numeric_limits<double>::infinity();
  // 2^(e - 150) for rf's biased exponent e (1 for zero and the subnormals), built from bits: this runs 10^8 times.
  const std::uint32_t e = std::max<std::uint32_t>((std::bit_cast<std::uint32_t>(rf) >> 23) & 0xffu, 1);
  const double spacing = std::bit_cast<double>(static_cast<std::uint64_t>(e - 150 + 1023) << 52);
  return std::fabs(static_cast<double>(got) - ref) / spacing;
}

// The same for a double result against a long double reference.
double ulp_error(double got, ld ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  const double rd = static_cast<double>(ref);
  if (std::isinf(rd)) return std::isinf(got) && (got > 0) == (rd > 0) ? 0 : std::numeric_limits<double>::infinity();
  const ld spacing = std::fabs(rd) >= std::numeric_limits<double>::min() ? std::ldexp(1.0L, std::ilogb(rd) - 52) : std::ldexp(1.0L, -1074);
  return static_cast<double>(std::fabs(static_cast<ld>(got) - ref) / spacing);
}

template <class T> struct worst_case {
  double worst = 0;
  T at = 0;
  std::uint64_t count = 0;
  void add(double e, T x) {
    ++count;
    if (!(e <= worst)) {
      worst = e;
      at = x;
    }
  }
};

template <class F, class R> worst_case<float> sweep(F f, R reference) {
  const bool full = std::getenv("TEXPR_FULL_SWEEP") != nullptr;
  const std::uint64_t step = full ? 1 : (rel::sanitized() ? 4099 : 61);
  constexpr std::uint64_t end = std::uint64_t(1) << 32;
  constexpr std::size_t batch = 4096;
  std::vector<float> xs(batch), ys(batch);
  worst_case<float> s;
  // In batches, so that the function runs in a loop the compiler vectorises, as in texpr's fused loops.
  for (std::uint64_t b = 0; b < end; b += step * batch) {
    std::size_t m = 0;
    for (; m < batch && b + m * step < end; ++m) xs[m] = std::bit_cast<float>(static_cast<std::uint32_t>(b + m * step));
    for (std::size_t i = 0; i < m; ++i) ys[i] = f(xs[i]);
    for (std::size_t i = 0; i < m; ++i) s.add(ulp_error(ys[i], reference(static_cast<double>(xs[i]))), xs[i]);
  }
  return s;
}

// Random doubles m 2^e, m uniform in [1, 2) (52 random bits), e uniform in [emin, emax] (below -1022 the value
// rounds to a subnormal), either sign. Checks that the inputs cover what they claim: every binade of the range
// with both signs (by the actual ilogb of each input).
template <class F, class R> worst_case<double> random_doubles(F f, R reference, int emin, int emax, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  const int span = emax - emin + 1;
  const int n = rel::sanitized() ? 1 << 14 : 1 << 18;
  std::vector<int> hits(2 * static_cast<std::size_t>(span));
  int outside = 0;
  worst_case<double> s;
  for (int i = 0; i < n; ++i) {
    // Binade and sign stratified (every one hit once n >= 2 * span, also at the sanitizers' small n); mantissa random.
    const int e = emin + (i / 2) % span;
    const double m = 1.0 + std::ldexp(static_cast<double>(gen() >> 12), -52);
    const bool negative = (i & 1) != 0;
    const double x = negative ? -std::ldexp(m, e) : std::ldexp(m, e);
    const int b = std::ilogb(x);
    if (b < emin || b > emax) ++outside;  // m near 2 rounding up out of the top binade
    else ++hits[2 * static_cast<std::size_t>(b - emin) + negative];
    s.add(ulp_error(f(x), reference(static_cast<ld>(x))), x);
  }
  int empty = 0;
  for (int h : hits) empty += h == 0;
  CHECK(empty == 0);
  CHECK(outside < n / 1000);
  return s;
}

const float finf = std::numeric_limits<float>::infinity();
const float fnan = std::numeric_limits<float>::quiet_NaN();
const double dinf = std::numeric_limits<double>::infinity();
const double dnan = std::numeric_limits<double>::quiet_NaN();

template <class T> bool same(T a, T b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }

} // namespace

TEST_CASE("float exp is within 1 ulp of the correctly rounded result on a sweep of all floats") {
  const auto s = sweep([](float x) { return vm::exp(x); }, [](double x) { return std::exp(x); });
  MESSAGE("exp: " << s.count << " inputs, worst " << s.worst << " ulp at " << s.at);
  CHECK(s.count > 1000);
  CHECK(s.worst <= 1.0);
}

TEST_CASE("float sqrt is the correctly rounded result, bit for bit the C library's, on a sweep of all floats") {
  const bool full = std::getenv("TEXPR_FULL_SWEEP") != nullptr;
  const std::uint64_t step = full ? 1 : (rel::sanitized() ? 4099 : 61);
  constexpr std::uint64_t end = std::uint64_t(1) << 32;
  constexpr std::size_t batch = 4096;
  std::vector<float> xs(batch), ys(batch);
  std::uint64_t count = 0, wrong = 0;
  float first_wrong = 0;
  for (std::uint64_t b = 0; b < end; b += step * batch) {
    std::size_t m = 0;
    for (; m < batch && b + m * step < end; ++m) xs[m] = std::bit_cast<float>(static_cast<std::uint32_t>(b + m * step));
    for (std::size_t i = 0; i < m; ++i) ys[i] = vm::sqrt(xs[i]);  // a loop, vectorised as in texpr's fused loops
    for (std::size_t i = 0; i < m; ++i, ++count)
      if (!same(ys[i], std::sqrt(xs[i])) && wrong++ == 0) first_wrong = xs[i];
  }
  MESSAGE("sqrt: " << count << " inputs, " << wrong << " differ from std::sqrt (first at " << first_wrong << ")");
  CHECK(count > 1000);
  CHECK(wrong == 0);
  for (float x : {0.0f, -0.0f, finf, -finf, fnan, -1.0f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()})
    CHECK(same(vm::sqrt(x), std::sqrt(x)));
}

TEST_CASE("float expm1 is within 1.5 ulp on a sweep of all floats, relative accuracy kept near 0") {
  const auto s = sweep([](float x) { return vm::expm1(x); }, [](double x) { return std::expm1(x); });
  MESSAGE("expm1: " << s.count << " inputs, worst " << s.worst << " ulp at " << s.at);
  CHECK(s.count > 1000);
  CHECK(s.worst <= 1.5);
  // Tiny arguments: expm1(x) = x to the last bit, where exp(x) - 1 would be 0.
  CHECK(vm::expm1(1e-30f) == 1e-30f);
  CHECK(vm::expm1(-0.0f) == 0.0f);
  CHECK(std::signbit(vm::expm1(-0.0f)));
}

TEST_CASE("float log and log1p are within 1 ulp on a sweep of all floats") {
  const auto l = sweep([](float x) { return vm::log(x); }, [](double x) { return std::log(x); });
  MESSAGE("log: " << l.count << " inputs, worst " << l.worst << " ulp at " << l.at);
  CHECK(l.count > 1000);
  CHECK(l.worst <= 1.0);
  const auto p = sweep([](float x) { return vm::log1p(x); }, [](double x) { return std::log1p(x); });
  MESSAGE("log1p: " << p.count << " inputs, worst " << p.worst << " ulp at " << p.at);
  CHECK(p.worst <= 1.0);
  // log of the subnormals (scaled internally), log1p of tiny arguments to the last bit.
  CHECK(vm::log(std::numeric_limits<float>::denorm_min()) == static_cast<float>(std::log(static_cast<double>(std::numeric_limits<float>::denorm_min()))));
  CHECK(vm::log(1.0f) == 0.0f);
  CHECK(vm::log1p(1e-30f) == 1e-30f);
  CHECK(vm::log1p(-1e-30f) == -1e-30f);
  CHECK(vm::log1p(std::numeric_limits<float>::denorm_min()) == std::numeric_limits<float>::denorm_min());
}

TEST_CASE("float tanh is within 1.5 ulp and sigmoid within 2 ulp on a sweep of all floats") {
  const auto t = sweep([](float x) { return vm::tanh(x); }, [](double x) { return std::tanh(x); });
  MESSAGE("tanh: " << t.count << " inputs, worst " << t.worst << " ulp at " << t.at);
  CHECK(t.count > 1000);
  CHECK(t.worst <= 1.5);
  const auto s = sweep([](float x) { return vm::sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); });
  MESSAGE("sigmoid: " << s.count << " inputs, worst " << s.worst << " ulp at " << s.at);
  CHECK(s.worst <= 2.0);
  CHECK(vm::tanh(1e-30f) == 1e-30f);
  CHECK(vm::sigmoid(0.0f) == 0.5f);
  CHECK(vm::sigmoid(-100.0f) > 0.0f);  // e^-100 is a float subnormal: kept, not flushed
}

TEST_CASE("special values: NaN, infinities, zeros, overflow and underflow thresholds (float)") {
  CHECK(std::isnan(vm::exp(fnan)));
  CHECK(std::isnan(vm::expm1(fnan)));
  CHECK(vm::exp(finf) == finf);
  CHECK(vm::exp(-finf) == 0.0f);
  CHECK(vm::expm1(finf) == finf);
  CHECK(vm::expm1(-finf) == -1.0f);
  CHECK(vm::exp(88.72283f) < finf);  // the largest float below the overflow threshold
  CHECK(vm::exp(88.7229f) == finf);
  CHECK(vm::exp(-103.0f) > 0.0f);  // a subnormal result
  CHECK(vm::exp(-104.0f) == 0.0f);
  CHECK(vm::expm1(-20.0f) == -1.0f);

  CHECK(std::isnan(vm::log(fnan)));
  CHECK(std::isnan(vm::log(-1.0f)));
  CHECK(std::isnan(vm::log(-finf)));
  CHECK(std::isnan(vm::log(-std::numeric_limits<float>::denorm_min())));
  CHECK(same(vm::log(0.0f), -finf));
  CHECK(same(vm::log(-0.0f), -finf));
  CHECK(same(vm::log(finf), finf));
  CHECK(same(vm::log(std::numeric_limits<float>::max()), std::log(std::numeric_limits<float>::max())));

  CHECK(std::isnan(vm::log1p(fnan)));
  CHECK(std::isnan(vm::log1p(-1.5f)));
  CHECK(std::isnan(vm::log1p(-finf)));
  CHECK(same(vm::log1p(-1.0f), -finf));
  CHECK(same(vm::log1p(0.0f), 0.0f));
  CHECK(same(vm::log1p(-0.0f), -0.0f));
  CHECK(same(vm::log1p(finf), finf));
  CHECK(same(vm::log1p(std::numeric_limits<float>::max()), std::log1p(std::numeric_limits<float>::max())));

  CHECK(std::isnan(vm::tanh(fnan)));
  CHECK(same(vm::tanh(finf), 1.0f));
  CHECK(same(vm::tanh(-finf), -1.0f));
  CHECK(same(vm::tanh(0.0f), 0.0f));
  CHECK(same(vm::tanh(-0.0f), -0.0f));
  CHECK(same(vm::tanh(20.0f), 1.0f));
  CHECK(same(vm::tanh(-std::numeric_limits<float>::denorm_min()), -std::numeric_limits<float>::denorm_min()));

  CHECK(std::isnan(vm::sigmoid(fnan)));
  CHECK(same(vm::sigmoid(finf), 1.0f));
  CHECK(same(vm::sigmoid(-finf), 0.0f));
  CHECK(same(vm::sigmoid(-0.0f), 0.5f));
  CHECK(same(vm::sigmoid(-200.0f), 0.0f));
  CHECK(same(vm::sigmoid(200.0f), 1.0f));
}

TEST_CASE("double exp and expm1 are within 1 and 1.5 ulp on random inputs over every binade up to overflow") {
  const auto e = random_doubles([](double x) { return vm::exp(x); }, [](ld x) { return std::exp(x); }, -60, 9, 1);
  MESSAGE("double exp: " << e.count << " inputs, worst " << e.worst << " ulp at " << e.at);
  CHECK(e.worst <= 1.0);
  const auto m = random_doubles([](double x) { return vm::expm1(x); }, [](ld x) { return std::expm1(x); }, -60, 9, 2);
  MESSAGE("double expm1: " << m.count << " inputs, worst " << m.worst << " ulp at " << m.at);
  CHECK(m.worst <= 1.5);
  // Uniform over the whole finite range, where the subnormal results and both reductions' edges lie.
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> u(-746.0, 710.0);
  worst_case<double> eu, mu;
  for (int i = 0; i < (rel::sanitized() ? 1 << 12 : 1 << 17); ++i) {
    const double x = u(gen);
    eu.add(ulp_error(vm::exp(x), std::exp(static_cast<ld>(x))), x);
    mu.add(ulp_error(vm::expm1(x), std::expm1(static_cast<ld>(x))), x);
  }
  MESSAGE("double exp on U(-746, 710): worst " << eu.worst << " ulp at " << eu.at << "; expm1 " << mu.worst << " at " << mu.at);
  CHECK(eu.worst <= 1.0);
  CHECK(mu.worst <= 1.5);
}

TEST_CASE("double log and log1p are within 1 ulp on random inputs over every binade, subnormals included") {
  const auto l = random_doubles([](double x) { return vm::log(x); }, [](ld x) { return std::log(x); }, -1074, 1023, 4);
  MESSAGE("double log: " << l.count << " inputs, worst " << l.worst << " ulp at " << l.at);
  CHECK(l.worst <= 1.0);
  // Near 1, where log's result is small: 1 + x for x over the binades below 1.
  const auto l1 = random_doubles([](double x) { return vm::log(1.0 + x); }, [](ld x) { return std::log(static_cast<ld>(1.0 + static_cast<double>(x))); }, -60, -1, 5);
  MESSAGE("double log near 1: worst " << l1.worst << " ulp at 1 + " << l1.at);
  CHECK(l1.worst <= 1.0);
  const auto p = random_doubles([](double x) { return vm::log1p(x); }, [](ld x) { return std::log1p(x); }, -60, 1023, 6);
  MESSAGE("double log1p: " << p.count << " inputs, worst " << p.worst << " ulp at " << p.at);
  CHECK(p.worst <= 1.0);
}

TEST_CASE("double tanh is within 1.5 ulp on random inputs over every binade") {
  const auto t = random_doubles([](double x) { return vm::tanh(x); }, [](ld x) { return std::tanh(x); }, -60, 6, 7);
  MESSAGE("double tanh: " << t.count << " inputs, worst " << t.worst << " ulp at " << t.at);
  CHECK(t.worst <= 1.5);
  // Dense where the two methods meet (|x| = 0.625) and the error peaks.
  std::mt19937_64 gen(8);
  std::uniform_real_distribution<double> u(0.5, 1.0);
  worst_case<double> tu;
  for (int i = 0; i < (rel::sanitized() ? 1 << 12 : 1 << 17); ++i) {
    const double x = u(gen);
    tu.add(ulp_error(vm::tanh(x), std::tanh(static_cast<ld>(x))), x);
  }
  MESSAGE("double tanh on U(0.5, 1): worst " << tu.worst << " ulp at " << tu.at);
  CHECK(tu.worst <= 1.5);
}

TEST_CASE("special values: NaN, infinities, zeros, overflow and underflow thresholds (double)") {
  const double dmin = std::numeric_limits<double>::denorm_min(), dmax = std::numeric_limits<double>::max();
  CHECK(std::isnan(vm::exp(dnan)));
  CHECK(same(vm::exp(dinf), dinf));
  CHECK(same(vm::exp(-dinf), 0.0));
  CHECK(same(vm::exp(0.0), 1.0));
  CHECK(same(vm::exp(-0.0), 1.0));
  CHECK(vm::exp(709.782712893384) < dinf);  // the largest double below the overflow threshold
  CHECK(vm::exp(709.7827128933841) == dinf);
  CHECK(same(vm::exp(1000.0), dinf));
  CHECK(vm::exp(-745.13) > 0.0);  // the smallest subnormal
  CHECK(same(vm::exp(-745.2), 0.0));
  CHECK(same(vm::exp(-1000.0), 0.0));

  CHECK(std::isnan(vm::expm1(dnan)));
  CHECK(same(vm::expm1(dinf), dinf));
  CHECK(same(vm::expm1(-dinf), -1.0));
  CHECK(same(vm::expm1(0.0), 0.0));
  CHECK(same(vm::expm1(-0.0), -0.0));
  CHECK(same(vm::expm1(1e-300), 1e-300));
  CHECK(same(vm::expm1(-dmin), -dmin));
  CHECK(same(vm::expm1(-40.0), -1.0));
  CHECK(vm::expm1(709.782712893384) < dinf);
  CHECK(vm::expm1(709.7827128933841) == dinf);

  CHECK(std::isnan(vm::log(dnan)));
  CHECK(std::isnan(vm::log(-1.0)));
  CHECK(std::isnan(vm::log(-dinf)));
  CHECK(std::isnan(vm::log(-dmin)));
  CHECK(same(vm::log(0.0), -dinf));
  CHECK(same(vm::log(-0.0), -dinf));
  CHECK(same(vm::log(dinf), dinf));
  CHECK(same(vm::log(1.0), 0.0));
  CHECK(ulp_error(vm::log(dmin), std::log(static_cast<ld>(dmin))) <= 0.5);  // -744.44
  CHECK(ulp_error(vm::log(dmax), std::log(static_cast<ld>(dmax))) <= 0.5);

  CHECK(std::isnan(vm::log1p(dnan)));
  CHECK(std::isnan(vm::log1p(-1.5)));
  CHECK(std::isnan(vm::log1p(-dinf)));
  CHECK(same(vm::log1p(-1.0), -dinf));
  CHECK(same(vm::log1p(0.0), 0.0));
  CHECK(same(vm::log1p(-0.0), -0.0));
  CHECK(same(vm::log1p(dinf), dinf));
  CHECK(same(vm::log1p(1e-300), 1e-300));
  CHECK(same(vm::log1p(-dmin), -dmin));
  CHECK(ulp_error(vm::log1p(dmax), std::log1p(static_cast<ld>(dmax))) <= 0.5);

  CHECK(std::isnan(vm::tanh(dnan)));
  CHECK(same(vm::tanh(dinf), 1.0));
  CHECK(same(vm::tanh(-dinf), -1.0));
  CHECK(same(vm::tanh(0.0), 0.0));
  CHECK(same(vm::tanh(-0.0), -0.0));
  CHECK(same(vm::tanh(30.0), 1.0));
  CHECK(same(vm::tanh(-dmin), -dmin));
  CHECK(same(vm::tanh(1e-200), 1e-200));
}

TEST_CASE("fused host loops use them: tx::exp, expm1, elu, log, log1p, tanh and sigmoid equal the scalar functions") {
  namespace tx = texpr;
  SUBCASE("float") {
    tx::tensor<float, 1> x = tx::random::uniform<float>({4099}, 7, -90.0f, 90.0f);
    tx::tensor<float, 1> p = tx::random::uniform<float>({4099}, 8, 0.0f, 1000.0f);
    tx::tensor<float, 1> e = tx::exp(x), m = tx::expm1(x), u = tx::elu(x), t = tx::tanh(x), s = tx::sigmoid(x);
    tx::tensor<float, 1> l = tx::log(p), l1 = tx::log1p(p - 1.0f);
    int differ = 0;
    for (tx::index_t i = 0; i < x.size(); ++i) {
      differ += e(i) != vm::exp(x(i));
      differ += m(i) != vm::expm1(x(i));
      differ += u(i) != (x(i) > 0 ? x(i) : vm::expm1(x(i)));
      differ += t(i) != vm::tanh(x(i));
      differ += s(i) != vm::sigmoid(x(i));
      differ += l(i) != vm::log(p(i));
      differ += l1(i) != vm::log1p(p(i) - 1.0f);
    }
    CHECK(differ == 0);
  }
  SUBCASE("double") {
    // Where double loops vectorise (TEXPR_VMATH_DOUBLE: x86-64 from SSE4.2, AArch64) texpr's; else the C library's.
    const auto want_exp = [](double v) { return TEXPR_VMATH_DOUBLE ? vm::exp(v) : std::exp(v); };
    const auto want_expm1 = [](double v) { return TEXPR_VMATH_DOUBLE ? vm::expm1(v) : std::expm1(v); };
    const auto want_tanh = [](double v) { return TEXPR_VMATH_DOUBLE ? vm::tanh(v) : std::tanh(v); };
    const auto want_log = [](double v) { return TEXPR_VMATH_DOUBLE ? vm::log(v) : std::log(v); };
    const auto want_log1p = [](double v) { return TEXPR_VMATH_DOUBLE ? vm::log1p(v) : std::log1p(v); };
    tx::tensor<double, 1> x = tx::random::uniform<double>({4099}, 9, -700.0, 700.0);
    tx::tensor<double, 1> p = tx::random::uniform<double>({4099}, 10, 0.0, 1000.0);
    tx::tensor<double, 1> e = tx::exp(x), m = tx::expm1(x), t = tx::tanh(x / 100.0);
    tx::tensor<double, 1> l = tx::log(p), l1 = tx::log1p(p - 1.0);
    int differ = 0;
    for (tx::index_t i = 0; i < x.size(); ++i) {
      differ += e(i) != want_exp(x(i));
      differ += m(i) != want_expm1(x(i));
      differ += t(i) != want_tanh(x(i) / 100.0);
      differ += l(i) != want_log(p(i));
      differ += l1(i) != want_log1p(p(i) - 1.0);
    }
    CHECK(differ == 0);
  }
}
