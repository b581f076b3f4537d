// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The complex dtypes (complex64, complex128) on the host: names and layout, every complex op against NumPy's values
// (committed fixture tests/core/fixtures/complex.npz from numpy_complex.py; NumPy's results computed in complex128
// from the dtype's values), scalars, broadcasting, strided operands, casts, empty reductions, placement.
// Tolerances: relative to the operands' scale (|x| + |y| for add and subtract, |x||y| for multiply, |x|/|y| for
// divide, |e^z| (1 + |im z|) for exp, sum of |x| for sum and mean), 4 ulp of the real type for the elementwise ops
// (5e-7 complex64, 1e-15 complex128) and 16 for the reductions (2e-6, 4e-15); real, imag, negate, conj exactly.
#include "core/support.hpp"

#include <texpr/interop/npy.hpp>
#include <texpr/interop/npz.hpp>
#if __has_include(<dlpack/dlpack.h>)
#include <texpr/interop/dlpack.hpp>
#define TEXPR_COMPLEX_TEST_DLPACK 1
#endif

#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using lc = std::complex<long double>;

// ---- names, classification, layout --------------------------------------------------------------------------
static_assert(tx::dtype_name_v<c64> == "complex64" && tx::dtype_name_v<c128> == "complex128");
static_assert(std::is_same_v<tx::dtype_tag_t<c64>, tx::dtype::complex64> && std::is_same_v<tx::dtype_tag_t<c128>, tx::dtype::complex128>);
static_assert(tx::is_complex_v<c64> && tx::is_complex_v<c128> && !tx::is_complex_v<float> && !tx::is_floating_v<c64>);
static_assert(std::is_same_v<tx::real_of_t<c64>, float> && std::is_same_v<tx::real_of_t<c128>, double> && std::is_same_v<tx::real_of_t<float>, float>);
// cuComplex is a float2 and cuDoubleComplex a double2: two parts, real first, no padding (std::complex guarantees the
// array-of-two layout). Their alignment is 8 and 16 against std::complex's 4 and 8: texpr's device loads do not
// assume more than alignof(T).
static_assert(sizeof(c64) == 2 * sizeof(float) && sizeof(c128) == 2 * sizeof(double));
static_assert(std::is_trivially_copyable_v<c64> && std::is_trivially_copyable_v<c128>);
// the ops' result dtypes
static_assert(std::is_same_v<decltype(tx::abs(std::declval<tx::tensor<c64, 1>&>()))::value_type, float>);
static_assert(std::is_same_v<decltype(tx::angle(std::declval<tx::tensor<c128, 1>&>()))::value_type, double>);
static_assert(std::is_same_v<decltype(tx::make_complex(std::declval<tx::tensor<double, 1>&>(), 1.0))::value_type, c128>);
// no ordering on complex (as PyTorch): not registered, and building the node is a compile error
// (tests/compile_fail/complex_comparison.cpp)
static_assert(!tx::has_kernel<tx::op::less, c64, tx::host> && !tx::has_kernel<tx::op::max, c128, tx::host> &&
              !tx::has_kernel<tx::op::argmax, c64, tx::host> && !tx::has_kernel<tx::op::maximum, c64, tx::host>);
static_assert(tx::has_kernel<tx::op::cast<c64>, c64, tx::host> && tx::has_kernel<tx::op::mean, c128, tx::host>);

std::string fixture() {
  const char* dir = std::getenv("TEXPR_CORE_FIXTURES");
  REQUIRE_MESSAGE(dir != nullptr, "TEXPR_CORE_FIXTURES names tests/core/fixtures (CTest sets it)");
  return std::string(dir) + "/complex.npz";
}

template <class T> constexpr long double elementwise_tol = std::is_same_v<T, c64> ? 5e-7L : 1e-15L;
template <class T> constexpr long double reduction_tol = std::is_same_v<T, c64> ? 2e-6L : 4e-15L;

/// The complex tensor of dtype T stored as NAME_re / NAME_im (float64) in the fixture.
template <class T, std::size_t R> tx::tensor<T, R> parts(const tx::npz_archive& f, const std::string& name) {
  const auto re = f.get<double, R>(name + "_re");
  const auto im = f.get<double, R>(name + "_im");
  tx::tensor<T, R> z(re.shape());
  using P = tx::real_of_t<T>;
  for (tx::index_t k = 0; k < re.size(); ++k) z.data()[k] = T(static_cast<P>(re.data()[k]), static_cast<P>(im.data()[k]));
  return z;
}

template <class T> lc wide(T z) { return {static_cast<long double>(z.real()), static_cast<long double>(z.imag())}; }

/// Every element of got within tol * scale(k) of want (both complex; a real result is passed with a zero imaginary part).
template <class G, class W, class S> void check_close(const G& got, const W& want, S scale, long double tol, const char* what) {
  REQUIRE(got.size() == want.size());
  int failures = 0;
  for (tx::index_t k = 0; k < got.size(); ++k) {
    const lc g = wide(std::complex<long double>(got.data()[k]));
    const lc w = wide(std::complex<long double>(want.data()[k]));
    const long double err = std::abs(g - w);
    if (!(err <= tol * scale(k)) && failures++ < 10)
      FAIL_CHECK(std::string(what) << " element " << k << ": got " << static_cast<double>(g.real()) << " + " << static_cast<double>(g.imag())
                      << "i, NumPy " << static_cast<double>(w.real()) << " + " << static_cast<double>(w.imag()) << "i");
  }
}

template <class T> void check_ops_against_numpy(const std::string& dtype) {
  const auto f = tx::load_npz(fixture());
  const auto x = parts<T, 2>(f, "x_" + dtype);
  const auto y = parts<T, 2>(f, "y_" + dtype);
  const auto ez = parts<T, 2>(f, "ez_" + dtype);
  const auto at = [](const auto& t) { return [&t](tx::index_t k) { return std::abs(wide(t.data()[k])); }; };
  const auto ax = at(x), ay = at(y);
  const long double tol = elementwise_tol<T>;
  const auto sum_scale = [&](tx::index_t k) { return ax(k) + ay(k); };
  check_close(tx::eval(x + y), parts<T, 2>(f, "add_" + dtype), sum_scale, tol, "add");
  check_close(tx::eval(x - y), parts<T, 2>(f, "subtract_" + dtype), sum_scale, tol, "subtract");
  check_close(tx::eval(x * y), parts<T, 2>(f, "multiply_" + dtype), [&](tx::index_t k) { return ax(k) * ay(k); }, tol, "multiply");
  check_close(tx::eval(x / y), parts<T, 2>(f, "divide_" + dtype), [&](tx::index_t k) { return ax(k) / ay(k); }, tol, "divide");
  check_close(tx::eval(-x), parts<T, 2>(f, "negate_" + dtype), ax, 0, "negate");
  check_close(tx::eval(tx::conj(x)), parts<T, 2>(f, "conj_" + dtype), ax, 0, "conj");
  const auto want_exp = parts<T, 2>(f, "exp_" + dtype);
  check_close(tx::eval(tx::exp(ez)), want_exp,
              [&](tx::index_t k) { return std::abs(wide(want_exp.data()[k])) * (1 + std::abs(wide(ez.data()[k]).imag())); }, tol, "exp");
  using P = tx::real_of_t<T>;
  const auto real_want = [&](const char* name) { return tx::eval(tx::cast<P>(f.get<double, 2>(name + std::string("_") + dtype))); };
  check_close(tx::eval(tx::real(x)), real_want("real"), ax, 0, "real");
  check_close(tx::eval(tx::imag(x)), real_want("imag"), ax, 0, "imag");
  const auto want_abs = f.get<double, 2>("abs_" + dtype);
  check_close(tx::eval(tx::abs(x)), want_abs, [&](tx::index_t k) { return static_cast<long double>(want_abs.data()[k]); }, tol, "abs");
  check_close(tx::eval(tx::angle(x)), f.get<double, 2>("angle_" + dtype), [](tx::index_t) { return 1.0L; }, 8 * tol, "angle");
  // make_complex of the parts gives x back exactly
  check_close(tx::eval(tx::make_complex(tx::real(x), tx::imag(x))), x, ax, 0, "make_complex");

  // sum and mean: all, along axis 0 and along axis 1 (17 lanes' worth of rows, 50 columns)
  const long double rt = reduction_tol<T>;
  const auto line_scale = [&](int axis, bool mean) {
    return [&x, axis, mean](tx::index_t k) {
      long double s = 0;
      const tx::index_t rows = x.shape()[0], cols = x.shape()[1];
      for (tx::index_t i = 0; i < rows; ++i)
        for (tx::index_t j = 0; j < cols; ++j)
          if (axis < 0 || (axis == 0 ? j : i) == k) s += std::abs(wide(x(i, j)));
      const tx::index_t n = axis < 0 ? rows * cols : axis == 0 ? rows : cols;
      return mean ? s / static_cast<long double>(n) : s;
    };
  };
  check_close(tx::eval(tx::sum(x)), parts<T, 0>(f, "sum_" + dtype), line_scale(-1, false), rt, "sum");
  check_close(tx::eval(tx::sum(x, 0)), parts<T, 1>(f, "sum0_" + dtype), line_scale(0, false), rt, "sum axis 0");
  check_close(tx::eval(tx::sum(x, 1)), parts<T, 1>(f, "sum1_" + dtype), line_scale(1, false), rt, "sum axis 1");
  check_close(tx::eval(tx::mean(x)), parts<T, 0>(f, "mean_" + dtype), line_scale(-1, true), rt, "mean");
  check_close(tx::eval(tx::mean(x, 0)), parts<T, 1>(f, "mean0_" + dtype), line_scale(0, true), rt, "mean axis 0");
  check_close(tx::eval(tx::mean(x, -1)), parts<T, 1>(f, "mean1_" + dtype), line_scale(1, true), rt, "mean axis 1");
}

} // namespace

TEST_CASE("complex64 and complex128 ops against NumPy") {
  SUBCASE("complex64") { check_ops_against_numpy<c64>("complex64"); }
  SUBCASE("complex128") { check_ops_against_numpy<c128>("complex128"); }
}

TEST_CASE("complex: scalars, broadcasting, strided operands, one fused pass") {
  tx::tensor<c64, 2> a({2, 3}, {c64(1, 2), c64(-3, 0.5f), c64(0, -1), c64(2.5f, 0), c64(-0.25f, -4), c64(8, 8)});
  tx::tensor<c64, 1> row({3}, {c64(1, -1), c64(0, 2), c64(-2, 0)});
  // a real scalar takes the tensor's dtype (imaginary part 0), on either side
  const auto s = tx::eval(2.0f * a - 1);
  const auto q = tx::eval(1 / a);
  const auto b = tx::eval(a * row);  // row broadcast over the rows
  // a column of the transposed a (a strided view) times a
  const tx::view<const c64, 2> at(a.data(), {3, 2}, {1, 3});
  const auto t = tx::eval(tx::conj(at) * at);  // |a|^2, real-valued
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 3; ++j) {
      const c64 z = a(i, j);
      CHECK(s(i, j) == c64(2 * z.real() - 1, 2 * z.imag()));
      CHECK(std::abs(wide(q(i, j)) - lc(1) / wide(z)) <= 4e-7L / std::abs(wide(z)));
      CHECK(std::abs(wide(b(i, j)) - wide(z) * wide(row(j))) <= 4e-7L * std::abs(wide(z)) * std::abs(wide(row(j))));
      CHECK(t(j, i).imag() == 0);
      CHECK(std::abs(t(j, i).real() - std::norm(z)) <= 4e-7f * std::norm(z));
    }
  // the whole elementwise tree, real results included, is one fused pass
  const std::string report = tx::placement(tx::abs(a * row + 1));
  CHECK(report.find("\nabs                            complex64 (2, 3)          host    fused_elementwise\n") != std::string::npos);
  CHECK(report.find("\n    multiply                   complex64 (2, 3)          host    fused_elementwise (in the pass above)\n") != std::string::npos);
}

TEST_CASE("complex: casts from real dtypes and between complex dtypes") {
  tx::tensor<double, 1> r({4}, {-1.5, 0.0, 1e300, 3.0});
  tx::tensor<std::int64_t, 1> n({3}, {-7, 0, std::int64_t(1) << 40});
  tx::tensor<bool, 1> flags({2}, {true, false});
  const auto from_double = tx::eval(tx::cast<c64>(r));  // rounds to float: 1e300 is +inf, as NumPy
  CHECK(from_double(0) == c64(-1.5f, 0));
  CHECK(std::isinf(from_double(2).real()));
  CHECK(from_double(2).imag() == 0);
  const auto from_int = tx::eval(tx::cast<c128>(n));
  CHECK(from_int(2) == c128(1099511627776.0, 0));
  CHECK(from_int(0) == c128(-7, 0));
  CHECK(tx::eval(tx::cast<c64>(flags))(0) == c64(1, 0));
  tx::tensor<c128, 1> w({2}, {c128(0.1, -1e-300), c128(-3, 1e40)});
  const auto narrowed = tx::eval(tx::cast<c64>(w));  // each part rounded to float (1e40 overflows, -1e-300 to -0)
  CHECK(narrowed(0).real() == 0.1f);
  CHECK((narrowed(0).imag() == 0 && std::signbit(narrowed(0).imag())));
  CHECK(std::isinf(narrowed(1).imag()));
  CHECK(tx::eval(tx::cast<c128>(narrowed))(0) == c128(static_cast<double>(0.1f), -0.0));
}

TEST_CASE("complex: empty reductions, division by zero, exp on the real axis (NumPy's values)") {
  tx::tensor<c64, 1> empty({0});
  const c64 s = tx::eval(tx::sum(empty))();
  CHECK((s == c64(0, 0) && !std::signbit(s.real())));
  const c64 m = tx::eval(tx::mean(empty))();  // numpy.mean of an empty complex array: nan+nanj
  CHECK((std::isnan(m.real()) && std::isnan(m.imag())));
  tx::tensor<c128, 1> z({2}, {c128(1, 2), c128(0, 0)});
  tx::tensor<c128, 1> zero({2}, {c128(0, 0), c128(0, 0)});
  const auto d = tx::eval(z / zero);  // numpy: (1+2j)/0 = inf+infj, 0/0 = nan+nanj (with a RuntimeWarning)
  CHECK((std::isinf(d(0).real()) && std::isinf(d(0).imag())));
  CHECK((std::isnan(d(1).real()) && std::isnan(d(1).imag())));
  tx::tensor<c128, 1> edge({2}, {c128(800, 0), c128(-800, 0)});
  const auto e = tx::eval(tx::exp(edge));  // numpy: inf+0j and 0+0j (not inf * sin(0) = nan)
  CHECK(e(0) == c128(std::numeric_limits<double>::infinity(), 0));
  CHECK(e(1) == c128(0, 0));
}

TEST_CASE("complex: .npy/.npz as NumPy writes them (<c8, <c16), round trips, DLPack kDLComplex") {
  const auto f = tx::load_npz(fixture());
  // NumPy's own complex64/complex128 arrays equal the parts stored beside them
  const auto same = [](const auto& a, const auto& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), sizeof(*a.data()) * static_cast<std::size_t>(a.size())) == 0;
  };
  CHECK(same(f.get<c64, 2>("x_complex64"), parts<c64, 2>(f, "x_complex64")));
  CHECK(same(f.get<c128, 2>("y_complex128"), parts<c128, 2>(f, "y_complex128")));
  CHECK_THROWS_WITH_AS((f.get<c128, 2>("x_complex64")), doctest::Contains("expected dtype complex128 (<c16), file has <c8"), tx::io_error);
  // texpr's writes read back bit for bit, a transposed view included
  const auto path = std::filesystem::temp_directory_path() / "texpr_test_complex.npy";
  tx::tensor<c128, 2> z({2, 3}, {c128(1, -2), c128(-0.0, 3e300), c128(4, 5), c128(6, 7), c128(-8, 9), c128(1e-310, 0)});
  tx::save_npy(path, tx::view<const c128, 2>(z.data(), {3, 2}, {1, 3}));
  const auto back = tx::load_npy<c128, 2>(path);
  REQUIRE(back.shape() == tx::shape_t<2>{3, 2});
  for (tx::index_t i = 0; i < 3; ++i)
    for (tx::index_t j = 0; j < 2; ++j) CHECK(std::memcmp(&back(i, j), &z(j, i), sizeof(c128)) == 0);
  std::filesystem::remove(path);
#if TEXPR_COMPLEX_TEST_DLPACK
  tx::tensor<c64, 1> w({3}, {c64(1, 2), c64(-3, 4), c64(5, -6)});
  DLManagedTensor* m = tx::to_dlpack(w.view());
  CHECK(m->dl_tensor.dtype.code == kDLComplex);
  CHECK(m->dl_tensor.dtype.bits == 64);  // DLPack counts the bits of the whole number
  const auto v = tx::from_dlpack<c64, 1>(m);
  CHECK(v(1) == c64(-3, 4));
  CHECK_THROWS_WITH_AS((tx::from_dlpack<c128, 1>(m)), doctest::Contains("complex64"), tx::interop_error);
  m->deleter(m);
#endif
}
