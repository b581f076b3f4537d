// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host FFT engine (texpr/backend/host/fft_engine.hpp) against NumPy's np.fft (committed fixture
// tests/core/fixtures/fft.npz from numpy_fft.py): complex forward and inverse, r2c and c2r of odd and even lengths
// (radix 2, 3, 4, 5, generic odd radices and Bluestein's lengths), float and double, strided batches, round trips,
// and the plan cache under threads.
//
// Errors are relative L2: ||got - want|| / ||want|| over the compared bins. The bound is
// eps(T) * 4 * (1 + log2 n): a transform's rounding error grows like eps * sqrt(log n) for random inputs and like
// eps * log n at worst, Bluestein's lengths included (three transforms of about 2n). The worst measured, in units
// of eps * (1 + log2 n), is 0.30 in double and 0.21 in float (the test prints it), a margin above 10.
#include <doctest/doctest.h>

#include <texpr/backend/host/fft_engine.hpp>
#include <texpr/interop/npz.hpp>

#include <atomic>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace tx = texpr;
namespace d = texpr::detail;

std::string fixture() {
  const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
  REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
  return std::string(dir) + "/fft.npz";
}

/// numpy_fft.py's hash u(i, seed): a multiple of 2^-23 in [-1, 1), exact in float and double.
double fft_input(std::uint64_t i, std::uint64_t seed) {
  std::uint32_t x = static_cast<std::uint32_t>(i * 0x9E3779B1u + seed * 0x7F4A7C15u);
  x ^= x >> 15;
  x *= 0x85EBCA77u;
  x ^= x >> 13;
  x *= 0xC2B2AE3Du;
  x ^= x >> 16;
  return static_cast<double>(x >> 8) / static_cast<double>(1u << 23) - 1.0;
}

template <class T>
std::vector<std::complex<T>> complex_input(std::size_t n, std::uint64_t seed) {
  std::vector<std::complex<T>> z(n);
  for (std::size_t i = 0; i < n; ++i)
    z[i] = {static_cast<T>(fft_input(2 * i, seed)), static_cast<T>(fft_input(2 * i + 1, seed))};
  return z;
}
template <class T>
std::vector<T> real_input(std::size_t n, std::uint64_t seed) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<T>(fft_input(i, seed));
  return x;
}

/// The error bound of a length-n transform in precision T (see the file comment).
template <class T>
double bound(std::size_t n) {
  return static_cast<double>(std::numeric_limits<T>::epsilon()) * 4.0 * (1.0 + std::log2(static_cast<double>(n)));
}

/// ||got - want|| / ||want|| over the bins compared: `want` is (bins, 2) (re, im) or (bins) real; `bins` maps
/// row b of want to the index of got (empty: all).
template <class T, class V>
double rel_l2(const std::vector<V>& got, const std::vector<double>& want, const std::vector<std::int64_t>& bins) {
  constexpr bool is_complex = !std::is_same_v<V, T>;
  const std::size_t per = is_complex ? 2 : 1;
  const std::size_t rows = want.size() / per;
  double num = 0, den = 0;
  for (std::size_t b = 0; b < rows; ++b) {
    const std::size_t i = bins.empty() ? b : static_cast<std::size_t>(bins[b]);
    if constexpr (is_complex) {
      const double dr = static_cast<double>(got[i].real()) - want[2 * b],
                   di = static_cast<double>(got[i].imag()) - want[2 * b + 1];
      num += dr * dr + di * di;
      den += want[2 * b] * want[2 * b] + want[2 * b + 1] * want[2 * b + 1];
    } else {
      const double dr = static_cast<double>(got[i]) - want[b];
      num += dr * dr;
      den += want[b] * want[b];
    }
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

template <class T, std::size_t R>
std::vector<double> values(const tx::tensor<double, R>& t) {
  return std::vector<double>(t.data(), t.data() + t.size());
}

constexpr std::size_t lengths[] = {1,   2,   3,   4,   5,   7,   8,   12,   16,   17,   30,    64,   97,
                                   100, 127, 128, 210, 243, 256, 509, 1000, 1024, 4096, 65536, 65537};

template <class T>
void check_against_numpy(const tx::npz_archive& f) {
  double worst = 0;  // in units of eps * (1 + log2 n)
  for (const std::size_t n : lengths) {
    INFO("n = " << n << std::string(std::is_same_v<T, float> ? " float" : " double"));
    const std::string key = std::to_string(n);
    std::vector<std::int64_t> bins, rbins;
    if (f.contains("bins_" + key)) {
      const auto b = f.get<std::int64_t, 1>("bins_" + key), rb = f.get<std::int64_t, 1>("rbins_" + key);
      bins.assign(b.data(), b.data() + b.size());
      rbins.assign(rb.data(), rb.data() + rb.size());
    }
    const std::size_t h = n / 2 + 1;
    const T inv_n = T(1) / static_cast<T>(n);
    const auto z = complex_input<T>(n, 1);
    const auto x = real_input<T>(n, 2);
    const auto y = complex_input<T>(h, 3);
    std::vector<std::complex<T>> c(n), r(h);
    std::vector<T> back(n);
    const auto note = [&](const char* what, double e) {
      INFO(std::string(what) << ": relative L2 error " << e << ", bound " << bound<T>(n));
      CHECK(e <= bound<T>(n));
      worst =
          std::max(worst, e / (static_cast<double>(std::numeric_limits<T>::epsilon()) * (1 + std::log2(double(n)))));
    };
    d::fft_c2c<T>(n, z.data(), {1, 0}, c.data(), {1, 0}, 1, true, T(1));
    note("fft", rel_l2<T>(c, values<T>(f.get<double, 2>("fft_" + key)), bins));
    d::fft_c2c<T>(n, z.data(), {1, 0}, c.data(), {1, 0}, 1, false, inv_n);
    note("ifft", rel_l2<T>(c, values<T>(f.get<double, 2>("ifft_" + key)), bins));
    d::fft_r2c<T>(n, x.data(), {1, 0}, r.data(), {1, 0}, 1, T(1));
    note("rfft", rel_l2<T>(r, values<T>(f.get<double, 2>("rfft_" + key)), rbins));
    d::fft_c2r<T>(n, y.data(), {1, 0}, back.data(), {1, 0}, 1, inv_n);
    note("irfft", rel_l2<T>(back, values<T>(f.get<double, 1>("irfft_" + key)), bins));
  }
  MESSAGE(std::string(std::is_same_v<T, float> ? "float" : "double")
          << ": worst error " << worst << " eps (1 + log2 n)");
}

}  // namespace

TEST_CASE("fft engine: fft, ifft, rfft and irfft against NumPy, float and double") {
  const auto f = tx::load_npz(fixture());
  check_against_numpy<double>(f);
  check_against_numpy<float>(f);
}

TEST_CASE("fft engine: strided batches (fft2 of 16 x 30, rfft along axis 0 of 17 x 12) against NumPy") {
  const auto f = tx::load_npz(fixture());
  {
    // rows (unit stride, distance 30), then columns in place (stride 30, distance 1: gathered blocks)
    std::vector<std::complex<double>> z = complex_input<double>(480, 1);
    d::fft_c2c<double>(30, z.data(), {1, 30}, z.data(), {1, 30}, 16, true, 1.0);
    d::fft_c2c<double>(16, z.data(), {30, 1}, z.data(), {30, 1}, 30, true, 1.0);
    CHECK(rel_l2<double>(z, values<double>(f.get<double, 3>("fft2_16x30")), {}) <= bound<double>(480));
    std::vector<std::complex<float>> zf = complex_input<float>(480, 1), out(480);
    d::fft_c2c<float>(30, zf.data(), {1, 30}, out.data(), {1, 30}, 16, true, 1.0f);
    d::fft_c2c<float>(16, out.data(), {30, 1}, zf.data(), {30, 1}, 30, true, 1.0f);
    CHECK(rel_l2<float>(zf, values<float>(f.get<double, 3>("fft2_16x30")), {}) <= bound<float>(480));
  }
  {
    const std::vector<double> x = real_input<double>(204, 2);
    std::vector<std::complex<double>> r(9 * 12);
    d::fft_r2c<double>(17, x.data(), {12, 1}, r.data(), {12, 1}, 12, 1.0);
    CHECK(rel_l2<double>(r, values<double>(f.get<double, 3>("rfft0_17x12")), {}) <= bound<double>(17));
    // and back: irfft along axis 0 (c2r of strided spectra to strided lines)
    std::vector<double> back(204);
    d::fft_c2r<double>(17, r.data(), {12, 1}, back.data(), {12, 1}, 12, 1.0 / 17);
    CHECK(rel_l2<double>(back, x, {}) <= bound<double>(17));
  }
}

TEST_CASE("fft engine: round trips over many lengths, layouts and batch sizes") {
  // lengths of every pass kind: radix 4 and 2, 3, 5, generic 7 / 11 / 13, and Bluestein's large primes
  for (const std::size_t n :
       {6u, 9u, 11u, 13u, 14u, 22u, 25u, 26u, 49u, 60u, 77u, 120u, 143u, 360u, 1009u, 2310u, 4099u}) {
    for (const std::size_t count : {1u, 3u, 20u}) {
      INFO("n = " << n << ", " << count << " lines");
      // lines strided by `count` and adjacent (distance 1): the gathered-block path; then unit-stride lines
      const auto z = complex_input<double>(n * count, 7);
      std::vector<std::complex<double>> c(n * count), back(n * count);
      d::fft_c2c<double>(n, z.data(), {static_cast<std::ptrdiff_t>(count), 1}, c.data(),
                         {1, static_cast<std::ptrdiff_t>(n)}, count, true, 1.0);
      // each line agrees with its transform on its own
      for (std::size_t l = 0; l < count; ++l) {
        std::vector<std::complex<double>> line(n), alone(n);
        for (std::size_t i = 0; i < n; ++i) line[i] = z[l + count * i];
        d::fft_c2c<double>(n, line.data(), {1, 0}, alone.data(), {1, 0}, 1, true, 1.0);
        double num = 0, den = 0;
        for (std::size_t k = 0; k < n; ++k) {
          num += std::norm(alone[k] - c[l * n + k]);
          den += std::norm(alone[k]);
        }
        CHECK(std::sqrt(num / den) <= bound<double>(n));
      }
      d::fft_c2c<double>(n, c.data(), {1, static_cast<std::ptrdiff_t>(n)}, back.data(),
                         {static_cast<std::ptrdiff_t>(count), 1}, count, false, 1.0 / static_cast<double>(n));
      double num = 0, den = 0;
      for (std::size_t i = 0; i < n * count; ++i) {
        num += std::norm(back[i] - z[i]);
        den += std::norm(z[i]);
      }
      CHECK(std::sqrt(num / den) <= 2 * bound<double>(n));
      // real: r2c of the strided lines, c2r back
      const auto x = real_input<float>(n * count, 8);
      const std::size_t h = n / 2 + 1;
      std::vector<std::complex<float>> r(h * count);
      std::vector<float> xb(n * count);
      d::fft_r2c<float>(n, x.data(), {static_cast<std::ptrdiff_t>(count), 1}, r.data(),
                        {1, static_cast<std::ptrdiff_t>(h)}, count, 1.0f);
      d::fft_c2r<float>(n, r.data(), {1, static_cast<std::ptrdiff_t>(h)}, xb.data(),
                        {1, static_cast<std::ptrdiff_t>(n)}, count, 1.0f / static_cast<float>(n));
      double rn = 0, rd = 0;
      for (std::size_t l = 0; l < count; ++l)
        for (std::size_t i = 0; i < n; ++i) {
          const double e = double(xb[l * n + i]) - double(x[l + count * i]);
          rn += e * e;
          rd += double(x[l + count * i]) * double(x[l + count * i]);
        }
      CHECK(std::sqrt(rn / rd) <= 2 * bound<float>(n));
    }
  }
}

TEST_CASE("fft engine: plans (Bluestein for large prime factors) and the thread-safe plan cache") {
  CHECK(!d::fft_complex_plan<double>(1024).uses_bluestein());
  CHECK(!d::fft_complex_plan<double>(1000).uses_bluestein());
  CHECK(!d::fft_complex_plan<double>(17).uses_bluestein());
  CHECK(d::fft_complex_plan<double>(509).uses_bluestein());
  CHECK(d::fft_complex_plan<float>(65537).uses_bluestein());
  CHECK(d::fft_factors(720) == std::vector<std::size_t>{4, 4, 3, 3, 5});
  CHECK(d::fft_smooth_size(1017) == 1024);
  CHECK(d::fft_smooth_size(131073) == 131220);  // 2^2 3^8 5, not 2^18
  // in place (one pass, an odd and an even pass count, Bluestein's) equals out of place
  for (const std::size_t n : {2u, 3u, 4u, 5u, 7u, 16u, 64u, 509u}) {
    const auto z = complex_input<double>(n, 5);
    std::vector<std::complex<double>> out(n), in_place = z;
    d::fft_c2c<double>(n, z.data(), {1, 0}, out.data(), {1, 0}, 1, true, 1.0);
    d::fft_c2c<double>(n, in_place.data(), {1, 0}, in_place.data(), {1, 0}, 1, true, 1.0);
    CHECK_MESSAGE(in_place == out, "n = " << n);
  }
  // one plan per (kind, length), shared
  CHECK(d::fft_cached_plan<d::fft_complex_plan<double>>(96) == d::fft_cached_plan<d::fft_complex_plan<double>>(96));
  CHECK(d::fft_cached_plan<d::fft_real_plan<double>>(96) != nullptr);
  // threads transforming more lengths than the cache keeps, at once: every result right
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &wrong] {
      for (int round = 0; round < 3; ++round)
        for (std::size_t n = 20 + static_cast<std::size_t>(t); n < 60; n += 2) {
          const auto z = complex_input<double>(n, 11);
          std::vector<std::complex<double>> c(n);
          d::fft_c2c<double>(n, z.data(), {1, 0}, c.data(), {1, 0}, 1, true, 1.0);
          d::fft_c2c<double>(n, c.data(), {1, 0}, c.data(), {1, 0}, 1, false, 1.0 / static_cast<double>(n));
          for (std::size_t i = 0; i < n; ++i)
            if (std::abs(c[i] - z[i]) > 1e-13) ++wrong;
        }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
}
