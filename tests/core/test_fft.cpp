// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::fft (texpr/fft.hpp) on the host against NumPy's np.fft (committed fixture tests/core/fixtures/fft_api.npz from
// numpy_fft_api.py): every op, each norm mode, n padding and truncation, axes other than the last, transposed and
// sliced operands, batches, empty batches, lengths 1, odd and prime, shifts, frequencies, dtypes, errors, placement.
//
// Errors are relative L2 over the whole result, ||got - want|| / ||want||, against NumPy's float64 values. The
// inputs are exact in float, so the error is the transform's own: bounded by tolerance<T> = 64 eps(T) (1.4e-14 in
// double, 7.6e-6 in float; the engine's bound for these lengths, 4 (1 + log2 n) eps, is at most 20 eps per axis,
// and fftn chains three axes). The worst measured is 0.87 eps (the test prints it).
#include <doctest/doctest.h>
#include <texpr/fft.hpp>
#include <texpr/interop/npz.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

namespace tx = texpr;

namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

const tx::npz_archive& fixture() {
  static const tx::npz_archive f = [] {
    const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
    REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
    return tx::load_npz(std::string(dir) + "/fft_api.npz");
  }();
  return f;
}

template <class T>
constexpr double tolerance = 64 * static_cast<double>(std::numeric_limits<T>::epsilon());
double worst_eps = 0;  // the worst error seen, in units of eps of its precision

template <class T>
c128 widen(T v) {
  if constexpr (tx::is_complex_v<T>)
    return {static_cast<double>(v.real()), static_cast<double>(v.imag())};
  else
    return {static_cast<double>(v), 0.0};
}

/// Checks got against NumPy's `key` (same shape, relative L2 within tolerance<precision of G>).
template <class W, class G, std::size_t R>
void expect_numpy(const tx::tensor<G, R>& got, const std::string& key) {
  using real = typename tx::detail::real_of<G>::type;
  const auto want = fixture().get<W, R>(key);
  INFO(key << " (" << tx::dtype_name_v<G> << ")");
  REQUIRE(got.shape() == want.shape());
  double err = 0, mag = 0;
  for (tx::index_t i = 0; i < want.size(); ++i) {
    err += std::norm(widen(got.data()[i]) - widen(want.data()[i]));
    mag += std::norm(widen(want.data()[i]));
  }
  const double e = mag == 0 ? std::sqrt(err) : std::sqrt(err / mag);
  CHECK(e <= tolerance<real>);
  worst_eps = std::max(worst_eps, e / static_cast<double>(std::numeric_limits<real>::epsilon()));
}

/// The fixture's input `name` in dtype T (exact: multiples of 2^-12).
template <class T, std::size_t R>
tx::tensor<T, R> input(const std::string& name) {
  using W = std::conditional_t<tx::is_complex_v<T>, c128, double>;
  return tx::tensor<T, R>(tx::cast<T>(fixture().get<W, R>("in_" + name)));
}

std::string message_of(const auto& f) {
  try {
    f();
  } catch (const tx::shape_error& e) {
    return e.what();
  }
  return "(no shape_error)";
}

const tx::fft::norm modes[] = {tx::fft::norm::backward, tx::fft::norm::ortho, tx::fft::norm::forward};
const char* const mode_names[] = {"backward", "ortho", "forward"};

/// The ops in every norm mode, their n and axis options, in real precision T (complex64/float or complex128/double).
template <class T>
void check_precision() {
  using C = std::complex<T>;
  const auto z = input<C, 2>("z");
  const auto r = input<T, 2>("r");
  const auto h = input<C, 2>("h");
  const auto c2 = input<C, 3>("c2");
  const auto c3 = input<C, 3>("c3");
  for (int k = 0; k < 3; ++k) {
    const std::string mode = mode_names[k];
    expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(z, -1, -1, modes[k])), "fft_z_" + mode);
    expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::ifft(z, -1, -1, modes[k])), "ifft_z_" + mode);
    expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::rfft(r, -1, -1, modes[k])), "rfft_r_" + mode);
    expect_numpy<double>(tx::tensor<T, 2>(tx::fft::irfft(h, -1, -1, modes[k])), "irfft_h_" + mode);
    expect_numpy<c128>(tx::tensor<C, 3>(tx::fft::fft2(c2, modes[k])), "fft2_c2_" + mode);
    expect_numpy<c128>(tx::tensor<C, 3>(tx::fft::ifft2(c2, modes[k])), "ifft2_c2_" + mode);
    expect_numpy<c128>(tx::tensor<C, 3>(tx::fft::fftn(c3, modes[k])), "fftn_c3_" + mode);
  }
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(z, 16)), "fft_z_n16");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(z, 5)), "fft_z_n5");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::ifft(z, 9)), "ifft_z_n9");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(z, -1, 0)), "fft_z_axis0");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(input<C, 2>("z7"))), "fft_z7");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::ifft(input<C, 2>("z7"))), "ifft_z7");
  expect_numpy<c128>(tx::tensor<C, 1>(tx::fft::fft(input<C, 1>("z13"))), "fft_z13");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(input<C, 2>("z1"))), "fft_z1");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::ifft(input<C, 2>("z1"))), "ifft_z1");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::rfft(r, 9)), "rfft_r_n9");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::rfft(r, 7)), "rfft_r_n7");
  expect_numpy<c128>(tx::tensor<C, 1>(tx::fft::rfft(input<T, 1>("r13"))), "rfft_r13");
  expect_numpy<double>(tx::tensor<T, 2>(tx::fft::irfft(h, 13)), "irfft_h_n13");
  expect_numpy<double>(tx::tensor<T, 2>(tx::fft::irfft(h, 5)), "irfft_h_n5");
  expect_numpy<double>(tx::tensor<T, 2>(tx::fft::irfft(h, 20)), "irfft_h_n20");
  expect_numpy<double>(tx::tensor<T, 2>(tx::fft::irfft(h, -1, 0)), "irfft_h_axis0");
  const auto m = input<T, 2>("m");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(m)), "fft_m");  // real input: float gives complex64
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(m, -1, 0)), "fft_m_axis0");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::rfft(m, -1, 0)), "rfft_m_axis0");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::rfft(m, 8, -2)), "rfft_m_axis0_n8");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::fft(tx::transpose(m))), "fft_mT");
  expect_numpy<c128>(tx::tensor<C, 2>(tx::fft::rfft(tx::slice(m, 1, 1, 10, 3))), "rfft_m_sliced");
  // odd lengths round trip through irfft with n
  const tx::tensor<T, 2> back = tx::fft::irfft(tx::fft::rfft(r, 9), 9);
  double err = 0;
  for (tx::index_t i = 0; i < 5; ++i)
    for (tx::index_t j = 0; j < 9; ++j) err = std::max(err, std::abs(double(back(i, j)) - double(r(i, j))));
  CHECK(err <= 16 * double(std::numeric_limits<T>::epsilon()));
}

}  // namespace

TEST_CASE("tx::fft: every op and norm mode against NumPy, complex128 and complex64 (float32 input)") {
  worst_eps = 0;
  check_precision<double>();
  check_precision<float>();
  MESSAGE("worst relative L2 error: " << worst_eps << " eps");
}

TEST_CASE("tx::fft: result dtypes (float32 stays float32, as PyTorch) and placement names the rows") {
  const tx::tensor<float, 1> xf({8});
  const tx::tensor<double, 1> xd({8});
  static_assert(std::is_same_v<decltype(tx::fft::fft(xf))::value_type, c64>);
  static_assert(std::is_same_v<decltype(tx::fft::fft(xd))::value_type, c128>);
  static_assert(std::is_same_v<decltype(tx::fft::rfft(xf))::value_type, c64>);
  static_assert(std::is_same_v<decltype(tx::fft::irfft(tx::fft::rfft(xd)))::value_type, double>);
  static_assert(tx::runs_on<decltype(tx::fft::fft(xf)), tx::host>);
  std::ostringstream s;
  s << tx::placement(tx::fft::irfft(tx::fft::fft(tx::fft::rfft(xf))));
  const std::string p = s.str();
  CHECK(p.find("fft_r2c") != std::string::npos);
  CHECK(p.find("fft_c2c") != std::string::npos);
  CHECK(p.find("fft_c2r") != std::string::npos);
  CHECK(p.find("irfft") != std::string::npos);
}

TEST_CASE("tx::fft: frequencies and shifts against NumPy") {
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::fftfreq(8, 0.1)), "fftfreq_8_0.1");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::fftfreq(7)), "fftfreq_7");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::fftfreq(1)), "fftfreq_1");
  expect_numpy<double>(tx::tensor<float, 1>(tx::fft::fftfreq<float>(8, 0.1)), "fftfreq_8_0.1");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::rfftfreq(8)), "rfftfreq_8");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::rfftfreq(7, 2.5)), "rfftfreq_7_2.5");
  const auto s7 = fixture().get<double, 1>("in_s7");
  const auto s8 = fixture().get<double, 1>("in_s8");
  const auto s34 = fixture().get<double, 2>("in_s34");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::fftshift(s7)), "fftshift_s7");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::fftshift(s8)), "fftshift_s8");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::ifftshift(s7)), "ifftshift_s7");
  expect_numpy<double>(tx::tensor<double, 1>(tx::fft::ifftshift(s8)), "ifftshift_s8");
  expect_numpy<double>(tx::tensor<double, 2>(tx::fft::fftshift(s34)), "fftshift_s34");
  expect_numpy<double>(tx::tensor<double, 2>(tx::fft::fftshift(s34, -1)), "fftshift_s34_axis1");
  expect_numpy<double>(tx::tensor<double, 2>(tx::fft::ifftshift(s34)), "ifftshift_s34");
  const tx::tensor<double, 1> round = tx::fft::ifftshift(tx::fft::fftshift(s7));
  CHECK(std::equal(round.data(), round.data() + 7, s7.data()));
}

TEST_CASE(
    "tx::fft: empty batches give empty results; bad n, axis and empty extents are shape_errors naming op and shape") {
  const tx::tensor<c128, 2> none({0, 8});
  const tx::tensor<c128, 2> a = tx::fft::fft(none);
  CHECK(a.shape() == tx::shape_t<2>{0, 8});
  const tx::tensor<c128, 2> b = tx::fft::fft(none, 16, 1);
  CHECK(b.shape() == tx::shape_t<2>{0, 16});
  const tx::tensor<double, 2> reals({3, 0});
  const tx::tensor<c128, 2> c = tx::fft::rfft(reals, -1, 0);  // the batch (axis 1) is empty
  CHECK(c.shape() == tx::shape_t<2>{2, 0});
  const tx::tensor<c128, 2> padded = tx::fft::fft(tx::tensor<c128, 2>({2, 0}), 4);  // an empty line padded: zeros
  CHECK(padded.shape() == tx::shape_t<2>{2, 4});
  CHECK(std::all_of(padded.data(), padded.data() + 8, [](c128 v) { return v == c128(0); }));

  const tx::tensor<c128, 2> x({3, 4});
  const std::string n0 = message_of([&] { (void)tx::fft::fft(x, 0); });
  CHECK(n0.find("fft::fft needs a transform length n >= 1; got 0") != std::string::npos);
  CHECK(n0.find("(3, 4)") != std::string::npos);
  const std::string axis = message_of([&] { (void)tx::fft::ifft(x, -1, 2); });
  CHECK(axis.find("fft::ifft axis 2 is out of range for shape (3, 4)") != std::string::npos);
  CHECK(message_of([&] {
          (void)tx::fft::rfft(reals, -1, -3);
        }).find("fft::rfft axis -3 is out of range for shape (3, 0)") != std::string::npos);
  const std::string empty = message_of([&] { (void)tx::fft::rfft(reals); });
  CHECK(empty.find("fft::rfft needs a transform length n >= 1; got 0 from axis 1 of shape (3, 0)") !=
        std::string::npos);
  const std::string one = message_of([&] { (void)tx::fft::irfft(tx::tensor<c128, 1>({1})); });
  CHECK(one.find("fft::irfft needs a transform length n >= 1; got 0 from axis 0 of shape (1,)") != std::string::npos);
  CHECK(message_of([] { (void)tx::fft::fftfreq(0); }).find("fft::fftfreq needs n >= 1") != std::string::npos);
  CHECK(message_of([&] {
          (void)tx::fft::fftshift(x, 5);
        }).find("fft::fftshift axis 5 is out of range for shape (3, 4)") != std::string::npos);
}

TEST_CASE("tx::fft: a batch spread over the pool gives one thread's bits, along every axis") {
  tx::tensor<c128, 3> z({3, 64, 700});
  tx::tensor<double, 3> x({3, 64, 700});
  for (tx::index_t i = 0; i < z.size(); ++i) {
    z.data()[i] = c128(std::sin(0.37 * double(i)), std::cos(0.11 * double(i)));
    x.data()[i] = std::sin(0.23 * double(i));
  }
  const auto same = [](const auto& a, const auto& b) {
    return a.shape() == b.shape() && std::equal(a.data(), a.data() + a.size(), b.data());
  };
  tx::set_num_threads(1);
  const tx::tensor<c128, 3> a2 = tx::fft::fft(z, -1, 2), a1 = tx::fft::ifft(z, -1, 1), a0 = tx::fft::fft(z, -1, 0);
  const tx::tensor<c128, 3> r1 = tx::fft::rfft(x, -1, 1);
  const tx::tensor<double, 3> c2 = tx::fft::irfft(z, 1398, 2);
  tx::set_num_threads(4);
  CHECK(same(a2, tx::tensor<c128, 3>(tx::fft::fft(z, -1, 2))));
  CHECK(same(a1, tx::tensor<c128, 3>(tx::fft::ifft(z, -1, 1))));
  CHECK(same(a0, tx::tensor<c128, 3>(tx::fft::fft(z, -1, 0))));
  CHECK(same(r1, tx::tensor<c128, 3>(tx::fft::rfft(x, -1, 1))));
  CHECK(same(c2, tx::tensor<double, 3>(tx::fft::irfft(z, 1398, 2))));
  tx::set_num_threads(0);
}
